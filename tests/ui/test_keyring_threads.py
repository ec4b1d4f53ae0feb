"""The OS keyring is never called on the UI thread (issue 9, defect 5).

A locked keyring shows an unlock prompt and blocks the call until it is answered; on the UI
thread that is a frozen window under the prompt. The whole app runs here against a keyring
backend that records the thread of every call: the start-up read of the saved keys, and the
first send through a provider added after start-up (not among the keys read at start-up).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import keyring
import pytest
from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.providers.config import ProviderConfig
from etos_desktop.core.settings import paths
from etos_desktop.core.settings.store import SettingsStore
from tests.helpers.chat_app import stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.keyrings import ThreadRecordingKeyring
from tests.helpers.qt_async import expect_signal
from tests.helpers.stack import fast_provider_factory

TIMEOUT = 15


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> ThreadRecordingKeyring:
    recorder = ThreadRecordingKeyring()
    monkeypatch.setattr(keyring, "get_keyring", lambda: recorder)
    return recorder


async def _send(app: EtosApp, text: str) -> None:
    assert app.controller is not None
    finished = expect_signal(app.controller.reply_finished)
    app.window.chat.composer.setPlainText(text)
    app.window.chat.send_button.click()
    await asyncio.wait_for(finished, TIMEOUT)
    await asyncio.wait_for(app.controller.wait_idle(), TIMEOUT)


async def test_the_saved_key_is_read_at_start_up_on_another_thread_and_used(
    qapp: QApplication,
    server: FakeOpenAIServer,
    isolated_environment: Path,
    backend: ThreadRecordingKeyring,
) -> None:
    settings = SettingsStore(paths.settings_path(isolated_environment))
    settings.load()
    settings.upsert_provider(
        ProviderConfig(
            id="p1", name="Saved", preset="custom", base_url=server.base_url, chat_model="fake-chat"
        )
    )
    settings.set("memory.embedder", "keywords")
    settings.save()
    backend.entries["p1"] = "sk-saved-key-0001"
    app = EtosApp(
        qapp,
        {"ETOS_DATA_DIR": str(isolated_environment)},
        local_candidates=[],
        provider_factory=fast_provider_factory([]),
    )
    app.window.show()
    try:
        await app.start()
        assert [c.username for c in backend.reads()] == ["p1"]
        await _send(app, "hello")
        assert server.chat_requests()[0].headers["authorization"] == "Bearer sk-saved-key-0001"
        assert [c.username for c in backend.reads()] == ["p1"]  # read once, remembered
    finally:
        await stop_app(app)
    assert backend.on_main_thread() == []


async def test_a_provider_added_after_start_up_reads_its_key_on_another_thread(
    qapp: QApplication,
    server: FakeOpenAIServer,
    isolated_environment: Path,
    backend: ThreadRecordingKeyring,
) -> None:
    app = EtosApp(
        qapp,
        {"ETOS_DATA_DIR": str(isolated_environment)},
        local_candidates=[server.base_url],
        provider_factory=fast_provider_factory([]),
    )
    app.settings.set("memory.embedder", "keywords")
    app.window.show()
    try:
        await app.start()
        dialog = app._settings_dialog
        assert dialog is not None
        page = dialog.providers_page
        if not page.offer_buttons():
            await asyncio.wait_for(expect_signal(page.probe_finished), TIMEOUT)
        saved = expect_signal(dialog.settings_saved)
        page.offer_buttons()[0].click()  # "Use the local server": a provider without a key
        await asyncio.wait_for(saved, TIMEOUT)
        await dialog.wait_idle()
        dialog.close()
        (provider,) = app.settings.providers()
        await _send(app, "hello local model")
        assert server.chat_requests()[0].body["model"] == "fake-chat"
        assert provider.id in [c.username for c in backend.reads()]
    finally:
        if app._settings_dialog is not None:
            app._settings_dialog.close()
        await stop_app(app)
    assert backend.on_main_thread() == []
