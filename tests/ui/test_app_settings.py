"""The app follows its settings by key (``EtosApp._follow_settings``): the whole app on a qasync
loop, real settings store, real memory engine, the local server's embeddings endpoint.

Each test changes settings the way the app's parts do, through the ``SettingsStore`` (or the
real Settings dialog), and asserts on what the consumers then did: the tuning the engine
searches with, the embedder in use, the requests the server received, the jobs rescheduled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.providers.config import ProviderConfig
from etos_desktop.core.retrieval.tuning import STRICTNESS_SHIFT, tuning_for, with_strictness
from etos_desktop.core.settings import key_groups
from etos_desktop.ui.settings.dialog import SettingsDialog
from tests.helpers.chat_app import idle, start_app, stop_app
from tests.helpers.fake_openai_server import DEFAULT_MODELS, FakeOpenAIServer
from tests.helpers.qt_async import expect_signal
from tests.helpers.stack import fast_provider_factory
from tests.helpers.ui_driver import click, find_dialog

TIMEOUT = 15
PNPM = "I use pnpm for JavaScript projects"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """The local server, with a second embedding model to switch to."""
    with FakeOpenAIServer(models=[*DEFAULT_MODELS, "fake-embed-2"]) as srv:
        yield srv


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment)
    yield app
    await stop_app(app)


async def settled(app: EtosApp) -> None:
    """Wait until what the app, its chat controller and its jobs started has ended."""
    await asyncio.wait_for(app._tasks.wait_idle(), TIMEOUT)
    await idle(app)


async def embed_with_the_server(app: EtosApp, server: FakeOpenAIServer) -> None:
    """Make the local server's embedding model the memory embedder, as Settings would."""
    app.settings.upsert_provider(
        ProviderConfig(
            id="mine",
            name="Mine",
            preset="custom",
            base_url=server.base_url,
            chat_model="fake-chat",
            embedding_model="fake-embed",
        )
    )
    app.settings.default_provider_id = "mine"
    app.settings.set("memory.embedder", "auto")
    await asyncio.wait_for(app._embedder_task, TIMEOUT)
    await settled(app)


class EmbedderWatch:
    """What choosing the embedder again would leave behind, taken before a change."""

    def __init__(self, app: EtosApp, server: FakeOpenAIServer, monkeypatch: Any) -> None:
        assert app.memory is not None
        self.app, self.server = app, server
        self.engine = app.memory.engine
        self.embedder = self.engine.embedder
        self.task = app._embedder_task
        self.cancel = app._reembed_cancel
        self.requests = len(server.requests)
        self.reembeds: list[object] = []
        real_reembed = app.memory.reembed

        async def reembed(*args: Any, **kwargs: Any) -> int:
            self.reembeds.append((args, kwargs))
            return await real_reembed(*args, **kwargs)

        monkeypatch.setattr(app.memory, "reembed", reembed)

    def assert_untouched(self) -> None:
        assert self.engine.embedder is self.embedder
        # switch_embedder cancels the re-embedding under way and starts a new choice.
        assert self.app._embedder_task is self.task
        assert self.app._reembed_cancel is self.cancel
        assert not self.cancel.is_set()
        assert self.reembeds == []
        # Choosing again probes the endpoint with an embeddings request.
        assert self.server.requests[self.requests :] == []


async def test_relevance_retunes_the_engine_and_never_touches_the_embedder(
    etos: EtosApp, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert etos.memory is not None
    await etos.memory.save(PNPM, "preference")
    await embed_with_the_server(etos, server)
    engine = etos.memory.engine
    assert engine.embedder is not None
    key = engine.embedder.key
    assert key.startswith("openai:")
    assert engine.embedding_status() == (1, 1)
    base = engine.tuning
    assert base == tuning_for(key)
    watch = EmbedderWatch(etos, server, monkeypatch)

    etos.settings.set("memory.strictness", "strict")
    await settled(etos)
    assert engine.tuning == with_strictness(tuning_for(key), "strict")
    assert engine.tuning.floor == pytest.approx(base.floor + STRICTNESS_SHIFT["strict"])
    assert engine.tuning.keyword_floor > base.keyword_floor
    watch.assert_untouched()

    etos.settings.set("memory.strictness", "broad")
    await settled(etos)
    assert engine.tuning == with_strictness(tuning_for(key), "broad")
    assert engine.tuning.floor < base.floor
    watch.assert_untouched()

    # The other retrieval knobs are read on every message: they leave the embedder alone too.
    for name, value in (
        ("memory.retrieval_top_k", 3),
        ("memory.per_message", "auto"),
        ("memory.all_that_fit_tokens", 900),
    ):
        etos.settings.set(name, value)
    await settled(etos)
    assert engine.tuning == with_strictness(tuning_for(key), "broad")
    watch.assert_untouched()


async def test_relevance_saved_in_settings_retunes_without_choosing_the_embedder_again(
    etos: EtosApp, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert etos.memory is not None
    await etos.memory.save(PNPM, "preference")
    await embed_with_the_server(etos, server)
    engine = etos.memory.engine
    assert engine.embedder is not None
    key = engine.embedder.key
    watch = EmbedderWatch(etos, server, monkeypatch)
    etos.window.settings_action.trigger()
    dialog = await find_dialog(SettingsDialog)
    dialog.show_page("memory")
    combo = dialog.page("memory").strictness_combo  # type: ignore[attr-defined]
    assert combo.currentData() == "balanced"
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Up)  # strict, broad: the order of the choices
    assert combo.currentData() == "strict"
    saved = expect_signal(dialog.settings_saved)
    await click(dialog.save_button, settle=False)
    await asyncio.wait_for(saved, TIMEOUT)
    await settled(etos)
    assert etos.settings.get_str("memory.strictness") == "strict"
    assert engine.tuning == with_strictness(tuning_for(key), "strict")
    watch.assert_untouched()
    await click(dialog.close_button)


async def test_a_new_embedding_model_still_switches_the_embedder(
    etos: EtosApp, server: FakeOpenAIServer
) -> None:
    assert etos.memory is not None
    await etos.memory.save(PNPM, "preference")
    await embed_with_the_server(etos, server)
    first = etos._embedder_task
    etos.settings.set("memory.strictness", "strict")
    config = etos.settings.provider("mine")
    assert config is not None
    etos.settings.upsert_provider(replace(config, embedding_model="fake-embed-2"))
    assert etos._embedder_task is not first
    await asyncio.wait_for(etos._embedder_task, TIMEOUT)
    await settled(etos)
    engine = etos.memory.engine
    assert engine.embedder is not None
    assert "fake-embed-2" in engine.embedder.key
    # The memory got a vector from the new model, and the relevance setting still applies.
    assert engine.embedding_status() == (1, 1)
    assert server.embedding_requests()[-1].body["model"] == "fake-embed-2"
    assert engine.tuning == with_strictness(tuning_for(engine.embedder.key), "strict")


async def test_an_endpoint_change_leaves_the_built_in_embedder_alone(
    etos: EtosApp, server: FakeOpenAIServer
) -> None:
    # In keyword (or built-in) matching the provider's embedding model is not used.
    task = etos._embedder_task
    etos.settings.upsert_provider(
        ProviderConfig(
            id="mine",
            name="Mine",
            preset="custom",
            base_url=server.base_url,
            chat_model="fake-chat",
            embedding_model="fake-embed",
        )
    )
    etos.settings.default_provider_id = "mine"
    await settled(etos)
    assert etos._embedder_task is task
    assert server.embedding_requests() == []


async def test_summary_settings_reschedule_the_jobs_once_per_save(
    etos: EtosApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = etos.jobs
    assert jobs is not None
    calls: list[int] = []
    real = jobs.settings_changed

    async def settings_changed() -> None:
        calls.append(1)
        await real()

    monkeypatch.setattr(jobs, "settings_changed", settings_changed)
    # One Save sets its keys one after another, on one turn of the loop.
    etos.settings.set("summaries.min_user_turns", 3)
    etos.settings.set("summaries.min_gap_minutes", 30)
    etos.settings.set("profile.refresh_hour", 6)
    await settled(etos)
    assert calls == [1]
    # Settings the jobs are not scheduled by reschedule nothing.
    etos.settings.set("memory.strictness", "strict")
    etos.settings.set("chat.temperature", 0.3)
    etos.settings.set("summaries.inject_count", 2)
    await settled(etos)
    assert calls == [1]
    etos.settings.set("summaries.enabled", True)
    await settled(etos)
    assert calls == [1, 1]


async def test_settings_read_at_start_up_follow_their_changes(etos: EtosApp) -> None:
    assert etos.memory is not None
    etos.settings.set("memory.max_content_chars", 60)
    etos.settings.set("memory.max_active", 200)
    etos.settings.set("chat.stream_render_interval_ms", 250)
    assert etos.memory.max_content_chars == 60
    assert etos.memory.engine.max_active == 200
    assert etos.window.chat.render_interval_ms == 250


async def test_a_mistyped_key_stops_the_start(
    qapp: QApplication,
    server: FakeOpenAIServer,
    isolated_environment: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if a setting were renamed in the schema and a consumer kept the old name.
    monkeypatch.setattr(key_groups, "RETRIEVAL_TUNING", frozenset({"memory.strictnes"}))
    env = {"ETOS_DATA_DIR": str(isolated_environment), "OPENAI_BASE_URL": server.base_url}
    app = EtosApp(qapp, env, local_candidates=[], provider_factory=fast_provider_factory([]))
    app.settings.set("memory.embedder", "keywords")
    app.window.show()
    try:
        with pytest.raises(KeyError, match=r"memory\.strictnes\b"):
            await app.start()
    finally:
        await stop_app(app)
