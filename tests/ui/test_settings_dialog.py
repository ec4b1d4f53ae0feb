"""The Settings dialog against real stores on a temporary dir and a local OpenAI-compatible server.

Every test is ``async def`` and runs on the qasync loop (tests/ui/conftest.py); signals are
awaited with ``wait_signal``, never with a nested Qt event loop (STYLE recipes 1-3).
"""

from __future__ import annotations

import json
import socket
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QMessageBox, QSpinBox

from etos_desktop.core.context.prompts import DEFAULT_PERSONA_NAME, DEFAULT_PERSONA_PROMPT
from etos_desktop.core.errors import AuthError
from etos_desktop.core.providers.base import ChatRequest
from etos_desktop.core.providers.config import ENVIRONMENT_PROVIDER_ID, ProviderConfig
from etos_desktop.core.providers.presets import LOCAL_CANDIDATES
from etos_desktop.core.providers.registry import ProviderRegistry
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.paths import secrets_path, settings_path
from etos_desktop.core.settings.schema import SETTINGS
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui.error_text import describe
from etos_desktop.ui.settings_dialog import GENERAL_SECTIONS, SettingsDialog
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.keyrings import ThreadRecordingKeyring
from tests.helpers.qt_async import wait_signal


@dataclass
class Env:
    """Real stores on the test's data dir, and how to build a dialog over them."""

    data_dir: Path
    settings: SettingsStore
    secrets: SecretStore
    env: dict[str, str]
    registry: ProviderRegistry

    def reload_settings(self) -> SettingsStore:
        store = SettingsStore(settings_path(self.data_dir))
        store.load()
        return store


def _factory(cfg: ProviderConfig, key: str | None) -> object:
    from etos_desktop.core.providers.base import Timeouts
    from etos_desktop.core.providers.openai_provider import OpenAIProvider

    return OpenAIProvider(
        cfg.base_url, key, timeouts=Timeouts(connect=2, first_token=5, between_chunks=5)
    )


def make_env(data_dir: Path, env: Mapping[str, str] | None = None) -> Env:
    settings = SettingsStore(settings_path(data_dir))
    settings.load()
    secrets = SecretStore(data_dir)
    environ = dict(env or {})
    registry = ProviderRegistry(settings, secrets, environ, _factory)  # type: ignore[arg-type]
    return Env(data_dir, settings, secrets, environ, registry)


@pytest.fixture(autouse=True)
def no_task_errors(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[BaseException]]:
    """Fail the test if a task of the dialog ended with an exception (they go to the hook)."""
    errors: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda _t, exc, _tb: errors.append(exc))
    yield errors
    assert errors == []


@pytest.fixture
def ctx(isolated_environment: Path) -> Env:
    return make_env(isolated_environment)


async def _no_servers(_candidates: Sequence[str]) -> list[str]:
    return []


def open_dialog(qtbot, ctx: Env, *, probe=_no_servers, local_candidates=(), first_run=False):
    dialog = SettingsDialog(
        ctx.settings,
        ctx.secrets,
        ctx.registry,
        probe=probe,
        local_candidates=local_candidates,
        env=ctx.env,
        first_run=first_run,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


async def finish(dialog: SettingsDialog, ctx: Env) -> None:
    await dialog.wait_idle()
    dialog.done(0)
    await ctx.registry.aclose()


def type_into(qtbot, widget, text: str) -> None:
    """Replace the widget's text the way a user does (so ``textEdited`` fires)."""
    widget.selectAll()
    if not text:
        qtbot.keyClick(widget, Qt.Key.Key_Delete)
    elif text.isascii():
        qtbot.keyClicks(widget, text)
    else:
        widget.insert(text)  # QTest cannot type non-ASCII keys; insert() is an edit too


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def add_custom(qtbot, dialog: SettingsDialog, *, name: str, url: str, key: str) -> str:
    page = dialog.providers_page
    page.add_actions["custom"].trigger()
    provider_id = page.current_id
    assert provider_id is not None
    type_into(qtbot, page.name_edit, name)
    type_into(qtbot, page.url_edit, url)
    type_into(qtbot, page.key_edit, key)
    return provider_id


# -- providers --------------------------------------------------------------------------------


async def test_add_fetch_and_save_keeps_the_key_out_of_settings_json(qtbot, ctx: Env) -> None:
    key = "sk-test-0123456789"
    with FakeOpenAIServer(api_key=key) as server:
        dialog = open_dialog(qtbot, ctx)
        page = dialog.providers_page
        provider_id = add_custom(qtbot, dialog, name="My server", url=server.base_url, key=key)

        page.fetch_button.click()
        assert not page.fetch_button.isEnabled()
        assert page.fetch_button.text() == "Fetching…"
        (models,) = await wait_signal(page.models_fetched)

        assert models == sorted(server.models)
        listed = [r for r in server.requests if r.method == "GET" and r.path == "/v1/models"]
        assert len(listed) == 1
        assert listed[0].headers["authorization"] == f"Bearer {key}"
        assert page.fetch_button.isEnabled()
        combo_items = [page.chat_combo.itemText(i) for i in range(page.chat_combo.count())]
        assert combo_items == sorted(server.models)
        assert page.result_label.property("state") == "ok"

        page.chat_combo.setCurrentIndex(page.chat_combo.findText("fake-chat"))
        page.background_combo.setCurrentIndex(page.background_combo.findText("fake-chat-mini"))
        page.context_spin.setValue(65536)
        page.single_system_check.setChecked(True)
        assert dialog.is_modified()

        dialog.save_button.click()
        await wait_signal(dialog.settings_saved)

        raw = settings_path(ctx.data_dir).read_text(encoding="utf-8")
        assert key not in raw
        stored = json.loads(raw)
        assert stored["providers"] == [
            {
                "id": provider_id,
                "name": "My server",
                "preset": "custom",
                "base_url": server.base_url,
                "chat_model": "fake-chat",
                "background_model": "fake-chat-mini",
                "embedding_model": "",
                "single_system_message": True,
                "read_only": False,
            }
        ]
        assert stored["default_provider_id"] == provider_id
        assert stored["model_context"] == {"fake-chat": 65536}
        # A fresh store on the same dir reads the key back: it was really written.
        assert SecretStore(ctx.data_dir).get(provider_id) == key
        key_file = secrets_path(ctx.data_dir)
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert page.key_warning.isVisible()
        assert str(key_file) in page.key_warning.text()
        assert not dialog.is_modified()
        assert dialog.status_label.property("state") == "ok"
        await finish(dialog, ctx)


class MemoryKeyring(KeyringBackend):
    """A usable in-memory keyring backend (priority > 0), standing in for the OS keyring."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


async def test_with_a_keyring_the_key_goes_there_and_no_warning_shows(
    qtbot, isolated_environment: Path
) -> None:
    ctx = make_env(isolated_environment)
    backend = MemoryKeyring()
    ctx.secrets = SecretStore(ctx.data_dir, backend=backend)
    ctx.registry = ProviderRegistry(ctx.settings, ctx.secrets, {}, _factory)  # type: ignore[arg-type]
    dialog = open_dialog(qtbot, ctx)
    page = dialog.providers_page
    provider_id = add_custom(qtbot, dialog, name="K", url="http://127.0.0.1:9/v1", key="sk-kr-1")
    assert page.key_edit.placeholderText() == "Stored in the system keyring"
    assert not page.key_warning.isVisible()

    assert await dialog.save()
    assert backend.passwords == {("ETOS Desktop", provider_id): "sk-kr-1"}
    assert not secrets_path(ctx.data_dir).exists()

    page.add_actions["ollama"].trigger()
    assert page.key_edit.placeholderText() == "Usually not needed for this server"
    await finish(dialog, ctx)


async def test_wrong_key_shows_the_auth_error_in_red(qtbot, ctx: Env) -> None:
    with FakeOpenAIServer(api_key="sk-right-key-000") as server:
        dialog = open_dialog(qtbot, ctx)
        page = dialog.providers_page
        add_custom(qtbot, dialog, name="S", url=server.base_url, key="sk-wrong-key-999")
        type_into(qtbot, page.chat_combo.lineEdit(), "fake-chat")

        page.test_button.click()
        assert page.test_button.text() == "Testing…"
        assert not page.fetch_button.isEnabled()
        ok, text = await wait_signal(page.connection_tested)

        assert not ok
        assert text == describe(AuthError("401")).message
        assert page.result_label.isVisible()
        assert page.result_label.text() == text
        assert page.result_label.property("state") == "error"
        assert "sk-wrong-key-999" not in text
        assert server.chat_requests() == []
        assert page.test_button.text() == "Test connection"
        await finish(dialog, ctx)


async def test_connection_test_sends_a_one_token_request(qtbot, ctx: Env) -> None:
    with FakeOpenAIServer(api_key="sk-right-key-000") as server:
        dialog = open_dialog(qtbot, ctx)
        page = dialog.providers_page
        add_custom(qtbot, dialog, name="S", url=server.base_url, key="sk-right-key-000")
        type_into(qtbot, page.chat_combo.lineEdit(), "fake-chat")

        page.test_button.click()
        ok, text = await wait_signal(page.connection_tested)

        assert ok, text
        assert "Models available: 3;" in text
        assert "fake-chat" in text
        assert page.result_label.property("state") == "ok"
        (request,) = server.chat_requests()
        assert request.body["model"] == "fake-chat"
        assert request.body["max_tokens"] == 1
        assert not request.body.get("stream")
        await finish(dialog, ctx)


async def test_bad_url_is_marked_inline_and_nothing_typed_is_lost(qtbot, ctx: Env) -> None:
    saved: list[tuple[object, ...]] = []
    dialog = open_dialog(qtbot, ctx)
    dialog.settings_saved.connect(lambda *args: saved.append(args))
    page = dialog.providers_page
    add_custom(qtbot, dialog, name="Mine", url="ftp//nowhere", key="sk-abcdef")
    dialog.show_page("general")

    dialog.save_button.click()
    await dialog.wait_idle()

    assert saved == []
    assert dialog.current_page_name() == "providers"
    assert page.url_error.isVisible()
    assert "http://" in page.url_error.text()
    assert page.url_edit.text() == "ftp//nowhere"
    assert page.name_edit.text() == "Mine"
    assert page.key_edit.text() == "sk-abcdef"
    assert dialog.status_label.property("state") == "error"
    assert not settings_path(ctx.data_dir).exists()
    assert not secrets_path(ctx.data_dir).exists()

    # Fetching with the bad URL is refused on the spot, without a request.
    page.fetch_button.click()
    assert page.fetch_button.isEnabled()
    assert page.url_error.isVisible()

    type_into(qtbot, page.url_edit, "http://127.0.0.1:9/v1/")
    dialog.save_button.click()
    await wait_signal(dialog.settings_saved)
    assert not page.url_error.isVisible()
    (provider,) = ctx.reload_settings().providers()
    assert provider.name == "Mine"
    assert provider.base_url == "http://127.0.0.1:9/v1"
    assert page.url_edit.text() == "http://127.0.0.1:9/v1"
    await finish(dialog, ctx)


async def test_empty_name_and_bad_key_are_refused(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    page = dialog.providers_page
    add_custom(qtbot, dialog, name="", url="http://127.0.0.1:9/v1", key="")
    assert not await dialog.save()
    assert page.name_error.isVisible()

    type_into(qtbot, page.name_edit, "Named")
    type_into(qtbot, page.key_edit, "sk-with space")
    assert not await dialog.save()
    assert page.key_error.isVisible()
    assert not page.name_error.isVisible()
    assert not secrets_path(ctx.data_dir).exists()
    await finish(dialog, ctx)


async def test_edits_survive_switching_between_providers(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    page = dialog.providers_page
    first = add_custom(qtbot, dialog, name="First", url="http://a.example/v1", key="sk-first")
    page.add_actions["deepseek"].trigger()
    second = page.current_id
    assert page.url_edit.text() == "https://api.deepseek.com/v1"
    assert page.name_edit.text() == "DeepSeek"
    assert page.chat_combo.currentText() == "deepseek-chat"

    page.select_provider(first)
    assert (page.name_edit.text(), page.url_edit.text(), page.key_edit.text()) == (
        "First",
        "http://a.example/v1",
        "sk-first",
    )
    page.select_provider(second)
    assert page.name_edit.text() == "DeepSeek"
    await finish(dialog, ctx)


async def test_saved_key_is_loaded_off_the_ui_thread_and_used(qtbot, ctx: Env) -> None:
    # The key is in the (recording) keyring from an earlier run and not read yet in this one,
    # so the dialog must read it, and on a thread that is not the UI thread (issue 9).
    backend = ThreadRecordingKeyring({"p1": "sk-stored-key-1"})
    secrets = SecretStore(ctx.data_dir, backend=backend)
    ctx = Env(
        ctx.data_dir,
        ctx.settings,
        secrets,
        ctx.env,
        ProviderRegistry(ctx.settings, secrets, ctx.env, _factory),  # type: ignore[arg-type]
    )
    with FakeOpenAIServer(api_key="sk-stored-key-1") as server:
        ctx.settings.upsert_provider(
            ProviderConfig(id="p1", name="Stored", preset="custom", base_url=server.base_url)
        )
        dialog = open_dialog(qtbot, ctx)
        page = dialog.providers_page
        assert not page.key_edit.isEnabled()
        await wait_signal(page.keys_loaded)
        assert page.key_edit.isEnabled()
        assert page.key_edit.text() == "sk-stored-key-1"
        assert page.key_edit.echoMode() == page.key_edit.EchoMode.Password
        page.show_key_button.click()
        assert page.key_edit.echoMode() == page.key_edit.EchoMode.Normal
        assert not dialog.is_modified()

        page.test_button.click()
        ok, _text = await wait_signal(page.connection_tested)
        assert ok
        await finish(dialog, ctx)
    assert [c.username for c in backend.reads()] == ["p1"]
    assert backend.on_main_thread() == []


async def test_remove_asks_then_deletes_the_provider_and_its_key(qtbot, ctx: Env) -> None:
    for provider_id in ("p1", "p2"):
        ctx.settings.upsert_provider(
            ProviderConfig(
                id=provider_id, name=provider_id, preset="custom", base_url="http://x/v1"
            )
        )
        ctx.secrets.set(provider_id, f"sk-{provider_id}-key")
    ctx.settings.save()
    dialog = open_dialog(qtbot, ctx)
    page = dialog.providers_page
    page.select_provider("p1")

    page.remove_button.click()
    box = page.confirm_box
    assert box is not None
    assert box.isVisible()
    assert "p1" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await dialog.wait_idle()
    assert page.provider_ids() == ["p1", "p2"]

    page.remove_button.click()
    page.confirm_box.button(QMessageBox.StandardButton.Yes).click()
    await wait_signal(dialog.settings_saved)
    await dialog.wait_idle()

    assert page.provider_ids() == ["p2"]
    reloaded = ctx.reload_settings()
    assert [p.id for p in reloaded.providers()] == ["p2"]
    assert reloaded.default_provider_id == "p2"
    assert SecretStore(ctx.data_dir).get("p1") is None
    assert SecretStore(ctx.data_dir).get("p2") == "sk-p2-key"
    await finish(dialog, ctx)


async def test_set_as_default_saves_at_once(qtbot, ctx: Env) -> None:
    for provider_id in ("p1", "p2"):
        ctx.settings.upsert_provider(
            ProviderConfig(
                id=provider_id, name=provider_id, preset="custom", base_url="http://x/v1"
            )
        )
    dialog = open_dialog(qtbot, ctx)
    page = dialog.providers_page
    assert not page.default_button.isEnabled()  # p1, the default, is selected
    page.select_provider("p2")
    assert page.default_button.isEnabled()

    saved: list[tuple[object, ...]] = []
    dialog.settings_saved.connect(lambda *args: saved.append(args))
    page.default_button.click()
    assert saved == [()]
    assert ctx.reload_settings().default_provider_id == "p2"
    assert "default" in page.provider_list.item(1).text()
    assert page.provider_list.item(1).font().bold()
    assert not page.default_button.isEnabled()

    page.add_actions["openai"].trigger()
    assert not page.default_button.isEnabled()  # a provider that is not saved yet
    await finish(dialog, ctx)


async def test_environment_provider_is_read_only_and_never_saved(
    qtbot, isolated_environment: Path
) -> None:
    with FakeOpenAIServer(api_key="sk-env-key-42") as server:
        env = make_env(
            isolated_environment,
            {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-env-key-42"},
        )
        dialog = open_dialog(qtbot, env)
        page = dialog.providers_page

        assert page.provider_ids() == [ENVIRONMENT_PROVIDER_ID]
        assert page.current_id == ENVIRONMENT_PROVIDER_ID
        assert "Environment" in page.provider_list.item(0).text()
        assert "read-only" in page.provider_list.item(0).text()
        assert page.env_note.isVisible()
        assert "never saved" in page.env_note.text()
        assert page.name_edit.isReadOnly()
        assert page.url_edit.isReadOnly()
        assert page.url_edit.text() == server.base_url
        assert page.key_edit.text() == ""  # the environment's key is never shown
        assert not page.preset_combo.isEnabled()
        assert not page.chat_combo.isEnabled()
        assert not page.remove_button.isEnabled()

        page.test_button.click()
        ok, _text = await wait_signal(page.connection_tested)
        assert ok  # the server only accepts the environment's key

        openai_id = page.add_actions["openai"].trigger() or page.current_id
        type_into(qtbot, page.key_edit, "sk-saved-key-7")
        dialog.save_button.click()
        await wait_signal(dialog.settings_saved)
        raw = settings_path(env.data_dir).read_text(encoding="utf-8")
        assert "sk-env-key-42" not in raw
        assert [p["name"] for p in json.loads(raw)["providers"]] == ["OpenAI"]
        key_file = json.loads(secrets_path(env.data_dir).read_text(encoding="utf-8"))
        assert key_file["keys"] == {openai_id: "sk-saved-key-7"}
        await finish(dialog, env)


# -- first run --------------------------------------------------------------------------------


async def test_first_run_offers_the_answering_local_server_and_sets_it_up(qtbot, ctx: Env) -> None:
    from etos_desktop.core.providers.openai_provider import probe_local_servers

    with FakeOpenAIServer() as server:
        dialog = open_dialog(
            qtbot,
            ctx,
            probe=probe_local_servers,
            local_candidates=[server.base_url, closed_port_url()],
            first_run=True,
        )
        page = dialog.providers_page
        assert dialog.current_page_name() == "providers"
        assert page.banner.isVisible()
        assert page.banner_title.text() == "Welcome — connect a model to start"
        (offers,) = await wait_signal(page.probe_finished)

        assert offers == [server.base_url]
        (button,) = page.offer_buttons()
        assert server.base_url in button.text()

        button.click()
        await wait_signal(dialog.settings_saved)

        (provider,) = ctx.reload_settings().providers()
        assert provider.base_url == server.base_url
        assert provider.chat_model == sorted(server.models)[0]
        assert ctx.settings.default_provider_id == provider.id
        assert page.current_id == provider.id
        assert page.offer_buttons() == []
        assert page.banner_text.property("state") == "ok"
        # The provider works: the chat service's resolver reaches the server through it.
        resolved = await ctx.registry.resolve(None, None)
        reply = await resolved.provider.complete(
            ChatRequest(model=resolved.model, messages=[{"role": "user", "content": "hello"}])
        )
        assert reply.text == "echo: hello"
        await finish(dialog, ctx)


async def test_first_run_names_a_known_local_server_after_its_preset(qtbot, ctx: Env) -> None:
    ollama = LOCAL_CANDIDATES[0]

    async def probe(candidates: Sequence[str]) -> list[str]:
        assert list(candidates) == [ollama]
        return [ollama]

    dialog = open_dialog(qtbot, ctx, probe=probe, local_candidates=[ollama], first_run=True)
    (offers,) = await wait_signal(dialog.providers_page.probe_finished)
    assert offers == [ollama]
    (button,) = dialog.providers_page.offer_buttons()
    assert button.text() == f"Use Ollama at {ollama}"
    await finish(dialog, ctx)


async def test_first_run_without_local_server_explains_what_to_do(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx, local_candidates=[closed_port_url()], first_run=True)
    (offers,) = await wait_signal(dialog.providers_page.probe_finished)
    assert offers == []
    assert dialog.providers_page.offer_buttons() == []
    assert "No model server" in dialog.providers_page.banner_text.text()
    await finish(dialog, ctx)


async def test_no_banner_and_no_probe_outside_first_run(qtbot, ctx: Env) -> None:
    calls: list[Sequence[str]] = []

    async def probe(candidates: Sequence[str]) -> list[str]:
        calls.append(candidates)
        return []

    dialog = open_dialog(qtbot, ctx, probe=probe, local_candidates=["http://127.0.0.1:9/v1"])
    await dialog.wait_idle()
    assert calls == []
    assert not dialog.providers_page.banner.isVisible()
    await finish(dialog, ctx)


# -- persona ----------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_persona_defaults_follow_the_ui_language(qtbot, ctx: Env, language: str) -> None:
    ctx.settings.set("ui.language", language)
    dialog = open_dialog(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    assert page.name_edit.placeholderText() == DEFAULT_PERSONA_NAME[language]
    assert page.prompt_edit.placeholderText() == DEFAULT_PERSONA_PROMPT[language]
    assert page.prompt_edit.toPlainText() == ""

    page.reset_prompt_button.click()
    assert page.prompt_edit.toPlainText() == DEFAULT_PERSONA_PROMPT[language]
    await finish(dialog, ctx)


async def test_persona_is_saved_and_language_switch_updates_defaults(qtbot, ctx: Env) -> None:
    ctx.settings.set("ui.language", "zh")
    dialog = open_dialog(qtbot, ctx)
    page = dialog.persona_page
    combo = dialog.general_page.editors["ui.language"]
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData("en"))
    assert page.prompt_edit.placeholderText() == DEFAULT_PERSONA_PROMPT["en"]
    combo.setCurrentIndex(combo.findData("zh"))

    type_into(qtbot, page.name_edit, "小忆同学")
    page.reset_prompt_button.click()
    dialog.save_button.click()
    await wait_signal(dialog.settings_saved)

    reloaded = ctx.reload_settings()
    assert reloaded.get("persona.name") == "小忆同学"
    assert reloaded.get("persona.prompt") == DEFAULT_PERSONA_PROMPT["zh"]
    await finish(dialog, ctx)


async def test_avatar_choose_preview_and_reset(qtbot, ctx: Env, tmp_path: Path) -> None:
    image = tmp_path / "face.png"
    pixmap = QPixmap(20, 10)
    pixmap.fill(QColor("orange"))
    assert pixmap.save(str(image))
    not_an_image = tmp_path / "notes.txt"
    not_an_image.write_text("hello", encoding="utf-8")
    dialog = open_dialog(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    assert page.avatar_preview.pixmap() is not None
    assert not page.avatar_preview.pixmap().isNull()  # the built-in avatar

    assert page.set_avatar_path(str(image))
    preview = page.avatar_preview.pixmap()
    ratio = preview.devicePixelRatio()
    assert round(preview.width() / ratio) == 64
    assert round(preview.height() / ratio) == 32
    assert not page.set_avatar_path(str(not_an_image))
    assert page.avatar_error.isVisible()
    assert page.avatar_path == str(image)

    assert await dialog.save()
    assert ctx.reload_settings().get("persona.avatar") == str(image)
    page.reset_avatar_button.click()
    assert page.avatar_path == ""
    assert await dialog.save()
    assert ctx.reload_settings().get("persona.avatar") == ""
    await finish(dialog, ctx)


async def test_too_long_personality_is_refused_inline(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    page = dialog.persona_page
    page.prompt_edit.setPlainText("x" * 10_001)
    assert not await dialog.save()
    assert dialog.current_page_name() == "persona"
    assert page.prompt_error.isVisible()
    assert len(page.prompt_edit.toPlainText()) == 10_001
    assert not settings_path(ctx.data_dir).exists()
    await finish(dialog, ctx)


# -- general ----------------------------------------------------------------------------------


async def test_general_page_is_generated_from_the_schema(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    page = dialog.general_page
    expected = [s for s in SETTINGS if s.section in GENERAL_SECTIONS]
    assert {s.section for s in expected} == {"ui", "chat"}
    assert set(page.editors) == {s.key for s in expected}
    for spec in expected:
        editor = page.editors[spec.key]
        assert editor.toolTip() == spec.description, spec.key
        assert page.help_labels[spec.key].text() == spec.description
        if spec.choices is not None:
            assert isinstance(editor, QComboBox)
            assert [editor.itemData(i) for i in range(editor.count())] == list(spec.choices)
        elif spec.type is bool:
            assert isinstance(editor, QCheckBox)
        elif spec.type is int:
            assert isinstance(editor, QSpinBox)
            assert (editor.minimum(), editor.maximum()) == (spec.minimum, spec.maximum)
        elif spec.type is float:
            assert isinstance(editor, QDoubleSpinBox)
            assert (editor.minimum(), editor.maximum()) == (spec.minimum, spec.maximum)
        assert page.value(spec.key) == spec.default
    await finish(dialog, ctx)


async def test_general_values_are_saved(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    page = dialog.general_page
    temperature = page.editors["chat.temperature"]
    tokens = page.editors["chat.max_output_tokens"]
    auto_title = page.editors["chat.auto_title"]
    theme = page.editors["ui.theme"]
    assert isinstance(temperature, QDoubleSpinBox)
    assert isinstance(tokens, QSpinBox)
    assert isinstance(auto_title, QCheckBox)
    assert isinstance(theme, QComboBox)
    temperature.setValue(1.2)
    tokens.setValue(4096)
    auto_title.setChecked(False)
    theme.setCurrentIndex(theme.findData("dark"))
    assert dialog.status_label.text() == "Unsaved changes"

    dialog.save_button.click()
    await wait_signal(dialog.settings_saved)

    reloaded = ctx.reload_settings()
    assert reloaded.get("chat.temperature") == pytest.approx(1.2)
    assert reloaded.get("chat.max_output_tokens") == 4096
    assert reloaded.get("chat.auto_title") is False
    assert reloaded.get("ui.theme") == "dark"
    await finish(dialog, ctx)


# -- the dialog -------------------------------------------------------------------------------


async def test_show_page_by_name(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    for name in ("general", "persona", "providers"):
        dialog.show_page(name)
        assert dialog.current_page_name() == name
        assert dialog.page_list.currentRow() == ("providers", "persona", "general").index(name)
    with pytest.raises(ValueError, match="nowhere"):
        dialog.show_page("nowhere")
    await finish(dialog, ctx)


async def test_closing_with_unsaved_edits_asks_first(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    type_into(qtbot, dialog.persona_page.name_edit, "Mo")

    dialog.close_button.click()
    assert dialog.isVisible()
    box = dialog.discard_box
    assert box is not None
    assert box.isVisible()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert dialog.isVisible()

    dialog.close_button.click()
    dialog.discard_box.button(QMessageBox.StandardButton.Discard).click()
    assert not dialog.isVisible()
    assert not settings_path(ctx.data_dir).exists()
    await finish(dialog, ctx)


async def test_closing_unchanged_dialog_does_not_ask(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    dialog.close_button.click()
    assert not dialog.isVisible()
    assert dialog.discard_box is None
    await finish(dialog, ctx)


async def test_language_change_retranslates_every_page(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    dialog.save_button.setText("x")
    dialog.providers_page.fetch_button.setText("x")
    dialog.persona_page.reset_prompt_button.setText("x")
    dialog.general_page.help_labels["chat.temperature"].setText("x")

    QCoreApplication.sendEvent(dialog, QEvent(QEvent.Type.LanguageChange))

    assert dialog.save_button.text() == "Save"
    assert dialog.providers_page.fetch_button.text() == "Fetch models"
    assert dialog.persona_page.reset_prompt_button.text() == "Reset to default"
    assert dialog.general_page.help_labels["chat.temperature"].text() != "x"
    await finish(dialog, ctx)


async def test_embedding_model_is_saved_with_the_provider(qtbot, ctx: Env) -> None:
    dialog = open_dialog(qtbot, ctx)
    page = dialog.providers_page
    add_custom(qtbot, dialog, name="Embeds", url="http://127.0.0.1:9/v1", key="sk-abcdef")
    assert page.embedding_combo.lineEdit().placeholderText().startswith("None")
    page.embedding_combo.setEditText("text-embedding-3-small")
    dialog.save_button.click()
    await wait_signal(dialog.settings_saved)
    (provider,) = ctx.reload_settings().providers()
    assert provider.embedding_model == "text-embedding-3-small"
    await finish(dialog, ctx)
