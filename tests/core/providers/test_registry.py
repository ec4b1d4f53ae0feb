"""The provider registry: keys never read on the event loop, a model picked when none is set."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from etos_desktop.core.errors import NotConfigured
from etos_desktop.core.providers.base import ChatRequest, Timeouts
from etos_desktop.core.providers.config import ProviderConfig
from etos_desktop.core.providers.openai_provider import OpenAIProvider
from etos_desktop.core.providers.registry import ProviderRegistry, pick_chat_model
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.store import SettingsStore
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.keyrings import ThreadRecordingKeyring

FAST = Timeouts(connect=2.0, first_token=5.0, between_chunks=5.0)


def _factory(config: ProviderConfig, key: str | None) -> OpenAIProvider:
    return OpenAIProvider(config.base_url, key, timeouts=FAST)


def _provider(provider_id: str, base_url: str, model: str = "fake-chat") -> ProviderConfig:
    return ProviderConfig(
        id=provider_id, name=provider_id, preset="custom", base_url=base_url, chat_model=model
    )


async def test_keys_are_read_off_the_event_loop_including_a_provider_added_later(
    tmp_path: Path,
) -> None:
    backend = ThreadRecordingKeyring({"p1": "sk-first-key-0001", "p2": "sk-second-key-0002"})
    with FakeOpenAIServer(api_key="sk-second-key-0002") as server:
        settings = SettingsStore(tmp_path / "settings.json")
        settings.load()
        settings.upsert_provider(_provider("p1", server.base_url))
        secrets = SecretStore(tmp_path, backend=backend)
        # Start-up, as app.py does it: the saved providers' keys, in a worker thread.
        await asyncio.to_thread(secrets.warm, [p.id for p in settings.providers()])
        registry = ProviderRegistry(settings, secrets, {}, _factory)
        try:
            # Added after start-up (the first-run "Use the local server" button): not known yet.
            settings.upsert_provider(_provider("p2", server.base_url))
            resolved = await registry.resolve("p2", None)
            reply = await resolved.provider.complete(
                ChatRequest(model=resolved.model, messages=[{"role": "user", "content": "hi"}])
            )
            assert reply.text == "echo: hi"  # the key that was read is the one sent
            assert await registry.resolve("p2", None) == resolved  # remembered: no second read
            await registry.resolve("p1", None)
        finally:
            await registry.aclose()
    assert [c.username for c in backend.reads()] == ["p1", "p2"]
    assert backend.on_main_thread() == []


async def test_a_deleted_key_is_known_to_be_absent(tmp_path: Path) -> None:
    backend = ThreadRecordingKeyring({"p1": "sk-first-key-0001"})
    secrets = SecretStore(tmp_path, backend=backend)
    await asyncio.to_thread(secrets.delete, "p1")
    assert secrets.cached("p1") == (True, None)
    assert secrets.cached("p2") == (False, None)


@pytest.mark.parametrize(
    ("listed", "suggested", "expected"),
    [
        (["alpha-embed", "bge-m3", "text-embedding-3-small", "zeta-chat"], (), "zeta-chat"),
        (["babbage-002", "gpt-4.1", "gpt-4.1-mini"], ("gpt-4.1-mini", "gpt-4.1"), "gpt-4.1-mini"),
        (["qwen3:8b", "nomic-embed-text"], ("qwen2.5:7b",), "qwen3:8b"),
        ([], ("deepseek-chat",), "deepseek-chat"),  # the server could not be asked
        (["nomic-embed-text"], (), None),
        ([], (), None),
    ],
)
def test_a_chat_model_is_picked_from_the_list_or_the_preset(
    listed: list[str], suggested: tuple[str, ...], expected: str | None
) -> None:
    assert pick_chat_model(listed, suggested) == expected


async def test_environment_provider_without_a_model_picks_one_once(tmp_path: Path) -> None:
    models = ["all-minilm-embed", "bge-m3", "llama3.1:8b", "qwen2.5:7b"]
    with FakeOpenAIServer(api_key="sk-env-key-0003", models=models) as server:
        settings = SettingsStore(tmp_path / "settings.json")
        settings.load()
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-env-key-0003"}
        registry = ProviderRegistry(settings, SecretStore(tmp_path), env, _factory)
        try:
            first, second = await asyncio.gather(
                registry.resolve(None, None), registry.resolve(None, None)
            )
            assert (first.config.id, first.model, second.model) == (
                "env",
                "llama3.1:8b",
                "llama3.1:8b",
            )
            assert (await registry.resolve(None, "qwen2.5:7b")).model == "qwen2.5:7b"
        finally:
            await registry.aclose()
        assert [r.path for r in server.requests] == ["/v1/models"]


async def test_environment_provider_with_only_embedding_models_is_not_configured(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(models=["nomic-embed-text"]) as server:
        settings = SettingsStore(tmp_path / "settings.json")
        settings.load()
        registry = ProviderRegistry(
            settings, SecretStore(tmp_path), {"OPENAI_BASE_URL": server.base_url}, _factory
        )
        try:
            for _ in range(2):
                with pytest.raises(NotConfigured) as info:
                    await registry.resolve(None, None)
                assert info.value.params["what"] == "model"
        finally:
            await registry.aclose()
        # Not remembered: a model loaded meanwhile is found on the next send.
        assert [r.path for r in server.requests] == ["/v1/models", "/v1/models"]
