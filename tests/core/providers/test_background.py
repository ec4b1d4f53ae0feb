"""The detached background completion: what it sends, and which model it names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from etos_desktop.core.providers.background import complete_in_background
from etos_desktop.core.providers.config import ProviderConfig
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text
from tests.helpers.stack import chat_stack

MESSAGES = [
    {"role": "system", "content": "Name it."},
    {"role": "user", "content": "A talk about tea."},
]


def test_the_background_model_falls_back_to_the_model_chosen() -> None:
    cfg = ProviderConfig(id="a", name="a", preset="custom", base_url="", chat_model="chat")
    assert cfg.model_for_background("override") == "override"
    with_background = dataclasses.replace(cfg, background_model="bg")
    assert with_background.model_for_background("override") == "bg"
    assert with_background.background_model_or_chat == "bg"


async def test_a_detached_request_is_not_streamed_and_names_the_conversation_model(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.models.append("fake-other")
    server.script(Text("Tea"))
    async with chat_stack(tmp_path / "data", server.base_url) as stack:
        completion = await complete_in_background(
            stack.registry,
            MESSAGES,
            temperature=0.2,
            max_tokens=32,
            provider_id="p1",
            model="fake-other",
        )
    assert completion.text == "Tea"
    [request] = server.chat_requests()
    assert request.body["stream"] is False
    assert "tools" not in request.body
    assert request.body["model"] == "fake-other"
    assert request.body["messages"] == MESSAGES
    assert (request.body["temperature"], request.body["max_tokens"]) == (0.2, 32)


async def test_a_set_background_model_wins_over_the_chat_model(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.models.append("fake-background")
    server.script(Text("Tea"), Text("Tea"))
    async with chat_stack(tmp_path / "data", server.base_url) as stack:
        config = stack.settings.providers()[0]
        stack.settings.upsert_provider(
            dataclasses.replace(config, background_model="fake-background")
        )
        await complete_in_background(stack.registry, MESSAGES, temperature=0.2, max_tokens=32)
        await complete_in_background(
            stack.registry, MESSAGES, temperature=0.2, max_tokens=32, model="fake-chat"
        )
    assert [r.body["model"] for r in server.chat_requests()] == ["fake-background"] * 2
