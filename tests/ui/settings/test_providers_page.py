"""The Providers page against real stores and a local OpenAI-compatible server."""

from __future__ import annotations

import json
import stat
from collections.abc import Sequence
from pathlib import Path

from keyring.backend import KeyringBackend
from PySide6.QtCore import QLocale, Qt

from etos_desktop.core.errors import AuthError
from etos_desktop.core.providers.base import ChatRequest
from etos_desktop.core.providers.config import ENVIRONMENT_PROVIDER_ID, ProviderConfig
from etos_desktop.core.providers.presets import LOCAL_CANDIDATES
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.paths import secrets_path, settings_path
from etos_desktop.ui.error_text import describe
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault
from tests.helpers.keyrings import ThreadRecordingKeyring
from tests.helpers.qt_async import wait_signal
from tests.helpers.settings_env import (
    SettingsEnv,
    add_custom,
    close_settings,
    closed_port_url,
    make_settings_env,
    open_settings,
    type_into,
)
from tests.helpers.ui_driver import answer_box, click


async def test_add_fetch_and_save_keeps_the_key_out_of_settings_json(
    qtbot, ctx: SettingsEnv
) -> None:
    key = "sk-test-0123456789"
    with FakeOpenAIServer(api_key=key) as server:
        dialog = open_settings(qtbot, ctx)
        page = dialog.providers_page
        provider_id = await add_custom(dialog, name="My server", url=server.base_url, key=key)

        await click(page.fetch_button)
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
        assert page.chat_combo.currentText() == "fake-chat"  # preselected: none was set
        assert page.result_label.property("state") == "ok"

        page.background_combo.setCurrentIndex(page.background_combo.findText("fake-chat-mini"))
        page.context_spin.setValue(65536)
        await click(page.single_system_check)
        assert dialog.is_modified()

        await click(dialog.save_button, settle=False)
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
        await close_settings(dialog, ctx)


async def test_fetch_preselects_the_first_chat_model_and_skips_embedding_models(
    qtbot, ctx: SettingsEnv
) -> None:
    models = ["bge-m3:latest", "nomic-embed-text", "text-embedding-3-small", "qwen2.5:7b", "llama3"]
    with FakeOpenAIServer(models=models) as server:
        dialog = open_settings(qtbot, ctx)
        page = dialog.providers_page
        await add_custom(dialog, name="Local", url=server.base_url, key="")
        assert page.chat_combo.currentText() == ""
        await click(page.fetch_button)
        await wait_signal(page.models_fetched)
        # Listed in order of name: the embedding models first, then the first chat model.
        assert page.chat_combo.itemText(0) == "bge-m3:latest"
        assert page.chat_combo.currentText() == "llama3"
        assert page.context_spin.isEnabled()  # it follows the chat model
        assert page.background_combo.currentText() == ""
        assert page.embedding_combo.currentText() == ""

        # A chosen chat model is kept.
        await type_into(page.chat_combo.lineEdit(), "qwen2.5:7b")
        await click(page.fetch_button)
        await wait_signal(page.models_fetched)
        assert page.chat_combo.currentText() == "qwen2.5:7b"
        await close_settings(dialog, ctx)


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
    backend = MemoryKeyring()
    ctx = make_settings_env(
        isolated_environment, secrets=SecretStore(isolated_environment, backend=backend)
    )
    dialog = open_settings(qtbot, ctx)
    page = dialog.providers_page
    provider_id = await add_custom(dialog, name="K", url="http://127.0.0.1:9/v1", key="sk-kr-1")
    assert page.key_edit.placeholderText() == "Stored in the system keyring"
    assert not page.key_warning.isVisible()

    assert await dialog.save()
    assert backend.passwords == {("ETOS Desktop", provider_id): "sk-kr-1"}
    assert not secrets_path(ctx.data_dir).exists()

    page.add_actions["ollama"].trigger()
    assert page.key_edit.placeholderText() == "Usually not needed for this server"
    await close_settings(dialog, ctx)


async def test_wrong_key_shows_the_auth_error_in_red(qtbot, ctx: SettingsEnv) -> None:
    with FakeOpenAIServer(api_key="sk-right-key-000") as server:
        dialog = open_settings(qtbot, ctx)
        page = dialog.providers_page
        await add_custom(dialog, name="S", url=server.base_url, key="sk-wrong-key-999")
        await type_into(page.chat_combo.lineEdit(), "fake-chat")

        await click(page.test_button)
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
        await close_settings(dialog, ctx)


async def test_the_servers_words_are_shown_as_plain_text(qtbot, ctx: SettingsEnv) -> None:
    body = "<b>bad</b> <img src='file:///etc/hostname'> request"
    with FakeOpenAIServer() as server:
        server.script(Fault(400, body))
        dialog = open_settings(qtbot, ctx)
        page = dialog.providers_page
        await add_custom(dialog, name="<i>Mine</i>", url=server.base_url, key="")
        await type_into(page.chat_combo.lineEdit(), "fake-chat")
        await click(page.test_button)
        ok, text = await wait_signal(page.connection_tested)
        assert not ok
        assert body in text
        assert page.result_label.textFormat() == Qt.TextFormat.PlainText
        assert page.result_label.text() == text
        # The list's tooltip holds a name and URL the user typed: escaped, shown as typed.
        tooltip = page.provider_list.currentItem().toolTip()
        assert "&lt;i&gt;Mine&lt;/i&gt;" in tooltip
        assert "<i>" not in tooltip
        await close_settings(dialog, ctx)


async def test_connection_test_sends_a_one_token_request(qtbot, ctx: SettingsEnv) -> None:
    with FakeOpenAIServer(api_key="sk-right-key-000") as server:
        dialog = open_settings(qtbot, ctx)
        page = dialog.providers_page
        await add_custom(dialog, name="S", url=server.base_url, key="sk-right-key-000")
        await type_into(page.chat_combo.lineEdit(), "fake-chat")

        await click(page.test_button)
        ok, text = await wait_signal(page.connection_tested)

        assert ok, text
        assert "Models available: 3;" in text
        assert "fake-chat" in text
        assert page.result_label.property("state") == "ok"
        (request,) = server.chat_requests()
        assert request.body["model"] == "fake-chat"
        assert request.body["max_tokens"] == 1
        assert not request.body.get("stream")
        await close_settings(dialog, ctx)


async def test_bad_url_is_marked_inline_and_nothing_typed_is_lost(qtbot, ctx: SettingsEnv) -> None:
    saved: list[tuple[object, ...]] = []
    dialog = open_settings(qtbot, ctx)
    dialog.settings_saved.connect(lambda *args: saved.append(args))
    page = dialog.providers_page
    await add_custom(dialog, name="Mine", url="ftp//nowhere", key="sk-abcdef")
    dialog.show_page("general")

    await click(dialog.save_button)
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
    await click(page.fetch_button)
    assert page.fetch_button.isEnabled()
    assert page.url_error.isVisible()

    await type_into(page.url_edit, "http://127.0.0.1:9/v1/")
    await click(dialog.save_button, settle=False)
    await wait_signal(dialog.settings_saved)
    assert not page.url_error.isVisible()
    (provider,) = ctx.reload_settings().providers()
    assert provider.name == "Mine"
    assert provider.base_url == "http://127.0.0.1:9/v1"
    assert page.url_edit.text() == "http://127.0.0.1:9/v1"
    await close_settings(dialog, ctx)


async def test_empty_name_and_bad_key_are_refused(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    page = dialog.providers_page
    await add_custom(dialog, name="", url="http://127.0.0.1:9/v1", key="")
    assert not await dialog.save()
    assert page.name_error.isVisible()

    await type_into(page.name_edit, "Named")
    await type_into(page.key_edit, "sk-with space")
    assert not await dialog.save()
    assert page.key_error.isVisible()
    assert not page.name_error.isVisible()
    assert not secrets_path(ctx.data_dir).exists()
    await close_settings(dialog, ctx)


async def test_edits_survive_switching_between_providers(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    page = dialog.providers_page
    first = await add_custom(dialog, name="First", url="http://a.example/v1", key="sk-first")
    page.add_actions["deepseek"].trigger()
    second = page.current_id
    assert second is not None
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
    await close_settings(dialog, ctx)


async def test_saved_key_is_loaded_off_the_ui_thread_and_used(qtbot, ctx: SettingsEnv) -> None:
    # The key is in the (recording) keyring from an earlier run and not read yet in this one,
    # so the dialog must read it, and on a thread that is not the UI thread (issue 9).
    backend = ThreadRecordingKeyring({"p1": "sk-stored-key-1"})
    ctx = make_settings_env(
        ctx.data_dir, ctx.env, secrets=SecretStore(ctx.data_dir, backend=backend)
    )
    with FakeOpenAIServer(api_key="sk-stored-key-1") as server:
        ctx.settings.upsert_provider(
            ProviderConfig(id="p1", name="Stored", preset="custom", base_url=server.base_url)
        )
        dialog = open_settings(qtbot, ctx)
        page = dialog.providers_page
        assert not page.key_edit.isEnabled()
        await wait_signal(page.keys_loaded)
        assert page.key_edit.isEnabled()
        assert page.key_edit.text() == "sk-stored-key-1"
        assert page.key_edit.echoMode() == page.key_edit.EchoMode.Password
        await click(page.show_key_button)
        assert page.key_edit.echoMode() == page.key_edit.EchoMode.Normal
        assert not dialog.is_modified()

        await click(page.test_button)
        ok, _text = await wait_signal(page.connection_tested)
        assert ok
        await close_settings(dialog, ctx)
    assert [c.username for c in backend.reads()] == ["p1"]
    assert backend.on_main_thread() == []


async def test_remove_asks_then_deletes_the_provider_and_its_key(qtbot, ctx: SettingsEnv) -> None:
    for provider_id in ("p1", "p2"):
        ctx.settings.upsert_provider(
            ProviderConfig(
                id=provider_id, name=provider_id, preset="custom", base_url="http://x/v1"
            )
        )
        ctx.secrets.set(provider_id, f"sk-{provider_id}-key")
    ctx.settings.save()
    dialog = open_settings(qtbot, ctx)
    page = dialog.providers_page
    await wait_signal(page.keys_loaded)
    page.select_provider("p1")

    await click(page.remove_button)
    text = await answer_box("Cancel")
    assert "“p1”" in text
    assert "API key is deleted too" in text
    await page.wait_idle()
    assert page.provider_ids() == ["p1", "p2"]

    await click(page.remove_button)
    await answer_box("Remove")
    await wait_signal(dialog.settings_saved)
    await page.wait_idle()

    assert page.provider_ids() == ["p2"]
    reloaded = ctx.reload_settings()
    assert [p.id for p in reloaded.providers()] == ["p2"]
    assert reloaded.default_provider_id == "p2"
    assert SecretStore(ctx.data_dir).get("p1") is None
    assert SecretStore(ctx.data_dir).get("p2") == "sk-p2-key"
    await close_settings(dialog, ctx)


async def test_set_as_default_saves_at_once(qtbot, ctx: SettingsEnv) -> None:
    for provider_id in ("p1", "p2"):
        ctx.settings.upsert_provider(
            ProviderConfig(
                id=provider_id, name=provider_id, preset="custom", base_url="http://x/v1"
            )
        )
    dialog = open_settings(qtbot, ctx)
    page = dialog.providers_page
    assert not page.default_button.isEnabled()  # p1, the default, is selected
    page.select_provider("p2")
    assert page.default_button.isEnabled()

    saved: list[tuple[object, ...]] = []
    dialog.settings_saved.connect(lambda *args: saved.append(args))
    await click(page.default_button)
    assert saved == [()]
    assert ctx.reload_settings().default_provider_id == "p2"
    assert "default" in page.provider_list.item(1).text()
    assert page.provider_list.item(1).font().bold()
    assert not page.default_button.isEnabled()

    page.add_actions["openai"].trigger()
    assert not page.default_button.isEnabled()  # a provider that is not saved yet
    await close_settings(dialog, ctx)


async def test_environment_provider_is_read_only_and_never_saved(
    qtbot, isolated_environment: Path
) -> None:
    with FakeOpenAIServer(api_key="sk-env-key-42") as server:
        env = make_settings_env(
            isolated_environment,
            {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-env-key-42"},
        )
        dialog = open_settings(qtbot, env)
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

        await click(page.test_button)
        ok, _text = await wait_signal(page.connection_tested)
        assert ok  # the server only accepts the environment's key

        openai_id = page.add_provider("openai")
        await type_into(page.key_edit, "sk-saved-key-7")
        await click(dialog.save_button, settle=False)
        await wait_signal(dialog.settings_saved)
        raw = settings_path(env.data_dir).read_text(encoding="utf-8")
        assert "sk-env-key-42" not in raw
        assert [p["name"] for p in json.loads(raw)["providers"]] == ["OpenAI"]
        key_file = json.loads(secrets_path(env.data_dir).read_text(encoding="utf-8"))
        assert key_file["keys"] == {openai_id: "sk-saved-key-7"}
        await close_settings(dialog, env)


# -- first run --------------------------------------------------------------------------------


async def test_first_run_offers_the_answering_local_server_and_sets_it_up(
    qtbot, ctx: SettingsEnv
) -> None:
    from etos_desktop.core.providers.openai_provider import probe_local_servers

    with FakeOpenAIServer() as server:
        dialog = open_settings(
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

        await click(button, settle=False)
        await wait_signal(dialog.settings_saved)

        (provider,) = ctx.reload_settings().providers()
        assert provider.base_url == server.base_url
        assert provider.chat_model == "fake-chat"
        assert ctx.settings.default_provider_id == provider.id
        assert page.current_id == provider.id
        assert page.offer_buttons() == []
        # The welcome is over once a provider exists; what happened is said on the page.
        assert not page.banner.isVisible()
        assert page.status() == (
            "ok",
            f"Ready: “{provider.name}” with the model “fake-chat”. Close Settings and start"
            " chatting.",
        )
        # The provider works: the chat service's resolver reaches the server through it.
        resolved = await ctx.registry.resolve(None, None)
        reply = await resolved.provider.complete(
            ChatRequest(model=resolved.model, messages=[{"role": "user", "content": "hello"}])
        )
        assert reply.text == "echo: hello"
        await close_settings(dialog, ctx)


async def test_first_run_names_a_known_local_server_after_its_preset(
    qtbot, ctx: SettingsEnv
) -> None:
    ollama = LOCAL_CANDIDATES[0]

    async def probe(candidates: Sequence[str]) -> list[str]:
        assert list(candidates) == [ollama]
        return [ollama]

    dialog = open_settings(qtbot, ctx, probe=probe, local_candidates=[ollama], first_run=True)
    (offers,) = await wait_signal(dialog.providers_page.probe_finished)
    assert offers == [ollama]
    (button,) = dialog.providers_page.offer_buttons()
    assert button.text() == f"Use Ollama at {ollama}"
    await close_settings(dialog, ctx)


async def test_the_first_run_banner_goes_once_a_provider_is_saved(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx, local_candidates=[closed_port_url()], first_run=True)
    page = dialog.providers_page
    (offers,) = await wait_signal(page.probe_finished)
    assert offers == []
    assert page.offer_buttons() == []
    assert page.banner.isVisible()
    assert "No model server was found" in page.banner_text.text()

    await add_custom(dialog, name="Mine", url="http://127.0.0.1:9/v1", key="sk-abcdef")
    assert page.banner.isVisible()  # not saved yet
    await click(dialog.save_button, settle=False)
    await wait_signal(dialog.settings_saved)
    assert not page.banner.isVisible()
    await close_settings(dialog, ctx)


async def test_no_banner_and_no_probe_outside_first_run(qtbot, ctx: SettingsEnv) -> None:
    calls: list[Sequence[str]] = []

    async def probe(candidates: Sequence[str]) -> list[str]:
        calls.append(candidates)
        return []

    dialog = open_settings(qtbot, ctx, probe=probe, local_candidates=["http://127.0.0.1:9/v1"])
    await dialog.wait_idle()
    assert calls == []
    assert not dialog.providers_page.banner.isVisible()
    await close_settings(dialog, ctx)


async def test_embedding_model_is_saved_with_the_provider(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    page = dialog.providers_page
    await add_custom(dialog, name="Embeds", url="http://127.0.0.1:9/v1", key="sk-abcdef")
    assert page.embedding_combo.lineEdit().placeholderText().startswith("None")
    await type_into(page.embedding_combo.lineEdit(), "text-embedding-3-small")
    await click(dialog.save_button, settle=False)
    await wait_signal(dialog.settings_saved)
    (provider,) = ctx.reload_settings().providers()
    assert provider.embedding_model == "text-embedding-3-small"
    await close_settings(dialog, ctx)


async def test_known_services_carry_their_chinese_names_under_chinese(
    qtbot, ctx: SettingsEnv
) -> None:
    """智谱 GLM, 通义千问, 月之暗面 Kimi under 中文; the vendors' English names otherwise (issue 19)."""
    QLocale.setDefault(QLocale("zh_CN"))
    dialog = open_settings(qtbot, ctx)
    page = dialog.providers_page
    menu = [a.text() for a in page.add_menu.actions()]
    combo = [page.preset_combo.itemText(i) for i in range(page.preset_combo.count())]
    for words in ("智谱 GLM", "通义千问（阿里云百炼）", "月之暗面 Kimi", "DeepSeek 深度求索"):
        assert words in menu
        assert words in combo
    assert "Ollama" in menu  # a name with no Chinese of its own stays as it is
    # Added from the menu, the new provider is named as the menu says.
    page.add_actions["zhipu"].trigger()
    assert page.name_edit.text() == "智谱 GLM"
    await dialog.wait_idle()
    dialog.done(0)
    await dialog.wait_idle()

    QLocale.setDefault(QLocale("en_US"))
    dialog = open_settings(qtbot, ctx)
    menu = [a.text() for a in dialog.providers_page.add_menu.actions()]
    assert "Zhipu GLM" in menu
    assert "Qwen (DashScope)" in menu
    await close_settings(dialog, ctx)
