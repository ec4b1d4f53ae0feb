"""The whole app on a qasync loop: real widgets, real DB, real openai client ↔ local server."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QTextBrowser

from etos_desktop.app import EtosApp
from etos_desktop.core.storage.tables import ConversationRow, MessageRow
from etos_desktop.ui.chat_controller import FIRST_PAGE_SIZE, PAGE_SIZE
from etos_desktop.ui.conversation_list import RenameDialog
from etos_desktop.ui.persona_dialog import PersonaOverrideDialog
from tests.helpers.chat_app import (
    first_frame_app,
    first_outcome,
    history,
    idle,
    send,
    start_app,
    stop_app,
)
from tests.helpers.chat_view import assert_view_equals_reopen
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text
from tests.helpers.qt_async import expect_signal
from tests.helpers.stack import fast_provider_factory
from tests.helpers.ui_driver import (
    answer_box,
    button_with_text,
    choose_file,
    click,
    click_link,
    find_dialog,
    scroll_wheel,
    tool_button,
    type_text,
    visible_dialogs,
    wait_until,
)

TIMEOUT = 15


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment, auto_title=True)
    yield app
    await stop_app(app)


async def test_starts_with_empty_data_dir_and_environment_provider(etos: EtosApp):
    window = etos.window
    assert window.isVisible()
    assert window.chat.composer.isEnabled()
    assert "Environment" in window.provider_label.text()
    assert "fake-chat" in window.provider_label.text()
    # Keys go to the 0600 file in this environment, and the window says so.
    notice = window.notice_label.text() + window.notice_label.toolTip()
    assert "secrets.json" in notice or etos.secrets.using_file_fallback is False
    assert (Path(etos.data_dir) / "etos.db").exists()


def seed_conversation(data_dir: Path, title: str, texts: list[str]) -> None:
    """Write a conversation into ``data_dir``'s database before the app starts."""
    from etos_desktop.core.storage.database import Database

    db = Database(data_dir / "etos.db")
    db.open()
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def fill(session) -> None:
        conv = ConversationRow(title=title, created_at=start, updated_at=start)
        session.add(conv)
        session.flush()
        for i, text in enumerate(texts):
            role = "user" if i % 2 == 0 else "assistant"
            session.add(
                MessageRow(
                    conversation_id=conv.id,
                    role=role,
                    content=text,
                    created_at=start + timedelta(seconds=i),
                )
            )
        session.commit()

    db.call(fill)
    db.close()


async def test_a_message_sent_at_the_first_frame_waits_queued_and_is_sent_once_ready(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    """Issue 21 item 4: the composer takes text from the first frame; nothing typed is lost."""
    seed_conversation(isolated_environment, "earlier", ["an old question", "an old answer"])
    server.script(Text("Here from the start."))
    app = first_frame_app(qapp, server, isolated_environment)
    chat = app.window.chat
    # The first frame: no database, no controller, and yet the composer takes keys.
    assert app.db is None
    assert app.controller is None
    assert chat.composer.isEnabled()
    assert chat.welcome.title.text() == "Hi, I'm Etos."  # named before the services are up
    await type_text(chat.composer, "typed at the first frame")
    QTest.keyClick(chat.composer, Qt.Key.Key_Return)
    assert chat.queue_label.isVisible()
    assert chat.queue_label.text().startswith(
        "Queued: your message is sent as soon as ETOS Desktop has started"
    )
    assert chat.composer.toPlainText() == "typed at the first frame"
    starting = asyncio.ensure_future(app.start())
    await asyncio.sleep(0)
    assert not starting.done()
    # Send clicked again while it waits: still one message.
    await click(chat.send_button)
    assert chat.queue_label.isVisible()
    await asyncio.wait_for(starting, TIMEOUT)
    await idle(app)
    try:
        assert [r.body["messages"][-1] for r in server.chat_requests()] == [
            {"role": "user", "content": "typed at the first frame"}
        ]
        # It went where it was written: the new conversation the window showed, not the
        # earlier one the app opens when nothing was written.
        rows = await history(app)
        assert [(m.role, m.content, m.status) for m in rows] == [
            ("user", "typed at the first frame", "complete"),
            ("assistant", "Here from the start.", "complete"),
        ]
        conversations = await app.controller.repo.list_conversations()
        assert sorted(c.title or "" for c in conversations) == ["", "earlier"]
        earlier = next(c for c in conversations if c.title == "earlier")
        assert [m.content for m in await app.controller.repo.current_history(earlier.id)] == [
            "an old question",
            "an old answer",
        ]
        assert not chat.queue_label.isVisible()
        assert chat.composer.toPlainText() == ""
        assert app.window.sidebar.isEnabled()
        await assert_view_equals_reopen(app)
    finally:
        await stop_app(app)


async def test_quitting_before_the_services_are_up_asks_about_the_queued_message(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    server.script(Text("Still here."))
    app = first_frame_app(qapp, server, isolated_environment)
    chat = app.window.chat
    closing = []
    app.window.closing.connect(lambda: closing.append(True))
    await type_text(chat.composer, "do not lose me")
    QTest.keyClick(chat.composer, Qt.Key.Key_Return)
    app.window.quit_action.trigger()
    await find_dialog(QMessageBox)
    app.window.quit_action.trigger()  # Ctrl+Q again while it asks: one question
    text = await answer_box("Cancel")
    assert not visible_dialogs(QMessageBox)
    assert "has not been sent yet" in text
    assert "finish starting" in text
    # Cancel: the window stays, the message still waits and goes once the services are up.
    assert app.window.isVisible()
    assert not closing
    assert chat.queued_message() == "do not lose me"
    assert chat.queue_label.isVisible()
    await app.start()
    await idle(app)
    try:
        assert [r.body["messages"][-1]["content"] for r in server.chat_requests()] == [
            "do not lose me"
        ]
        assert [m.content for m in await history(app)] == ["do not lose me", "Still here."]
    finally:
        await stop_app(app)
    assert closing  # nothing waited any more: closing did not ask


async def test_quit_without_sending_before_the_services_are_up(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    app = first_frame_app(qapp, server, isolated_environment)
    chat = app.window.chat
    closing = []
    app.window.closing.connect(lambda: closing.append(True))
    await type_text(chat.composer, "never mind")
    await click(chat.send_button)
    assert chat.queued_message() == "never mind"
    app.window.close()
    box = await find_dialog(QMessageBox)
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    await answer_box("Quit without sending")
    await wait_until(lambda: closing, TIMEOUT, "the window to close")
    assert not app.window.isVisible()
    assert chat.queued_message() is None
    assert server.chat_requests() == []
    await app.shutdown()
    app.window.deleteLater()


async def test_send_streams_persists_and_titles(etos: EtosApp, server: FakeOpenAIServer):
    server.script(Text("Hi! **Nice** to meet you.", chunks=5), Text("Greeting and names"))
    result = await send(etos, "Hello, I'm Lin")
    assert result[0] == "finished"
    row: MessageRow = result[1]
    assert row.status == "complete"
    await idle(etos)
    chat = etos.window.chat
    assert chat.composer.toPlainText() == ""
    widget = chat.widget(row.id)
    assert widget is not None
    assert widget.text() == "Hi! **Nice** to meet you."
    # What the app sent, not what it got back.
    request = server.chat_requests()[0].body
    assert request["messages"][-1] == {"role": "user", "content": "Hello, I'm Lin"}
    assert request["model"] == "fake-chat"
    title_request = server.chat_requests()[1].body
    assert title_request["stream"] is False
    assert "Hello, I'm Lin" in title_request["messages"][-1]["content"]
    # The title arrived and the sidebar lists the conversation with it.
    model = etos.window.sidebar.model
    assert model.rowCount() == 1
    assert model.conversation(0).title == "Greeting and names"
    assert chat.title.full_text() == "Greeting and names"
    await assert_view_equals_reopen(etos)


async def test_error_is_shown_inline_with_action_and_message_kept(
    etos: EtosApp, server: FakeOpenAIServer
):
    server.script(Fault(401))
    result = await send(etos, "are you there?")
    assert result[0] == "failed"
    await idle(etos)
    chat = etos.window.chat
    assert chat.banner.isVisible()
    assert "API key" in chat.banner_label.text()
    assert chat.banner_action.text() == "Open settings"
    history = await etos.controller.repo.current_history(etos.controller.current.id)
    assert history[0].content == "are you there?"
    assert history[1].status == "error"
    # "Open settings" opens the providers page.
    await click(chat.banner_action)
    assert etos._settings_dialog is not None
    assert etos._settings_dialog.isVisible()
    await assert_view_equals_reopen(etos)


async def test_retry_after_server_error_creates_new_version(
    etos: EtosApp, server: FakeOpenAIServer
):
    server.script(*[Fault(500)] * 4, Text("worked now"))
    result = await send(etos, "try")
    assert result[0] == "failed"
    await idle(etos)
    chat = etos.window.chat
    assert chat.banner_action.text() == "Retry"
    assert etos.sleeps == [1.0, 2.0, 4.0]
    finished = asyncio.ensure_future(first_outcome(etos))
    await click(chat.banner_action)
    result = await asyncio.wait_for(finished, TIMEOUT)
    assert result[0] == "finished"
    assert result[1].content == "worked now"
    await idle(etos)
    versions = await etos.controller.repo.reply_versions(result[1].reply_to_id)
    assert [v.status for v in versions] == ["error", "complete"]
    await assert_view_equals_reopen(etos)


async def test_stop_keeps_partial_reply(etos: EtosApp, server: FakeOpenAIServer):
    server.script(Text(" ".join(f"w{i}" for i in range(300)), delay=0.02))
    controller = etos.controller
    chat = etos.window.chat
    first_delta = expect_signal(controller.reply_delta)
    await type_text(chat.composer, "go on")
    await click(chat.send_button)
    await asyncio.wait_for(first_delta, TIMEOUT)
    assert chat.send_button.text() == "Stop"
    await click(chat.send_button)  # the same button stops
    await idle(etos)
    history = await controller.repo.current_history(controller.current.id)
    assert history[1].status == "interrupted"
    assert history[1].error_code == "stopped"
    assert history[1].content.startswith("w0")
    assert chat.send_button.text() == "Send"
    assert len(server.chat_requests()) == 1
    await assert_view_equals_reopen(etos)


async def test_regenerate_keeps_versions_and_switches(etos: EtosApp, server: FakeOpenAIServer):
    etos.settings.set("chat.auto_title", False)
    server.script(Text("first version"), Text("second version"))
    result = await send(etos, "say something")
    await idle(etos)
    chat = etos.window.chat
    first = result[1]
    finished = asyncio.ensure_future(first_outcome(etos))
    await click(tool_button(chat.widget(first.id), "regenerateButton"))
    result = await asyncio.wait_for(finished, TIMEOUT)
    await idle(etos)
    second = result[1]
    assert second.content == "second version"
    assert chat.widget(first.id) is None
    assert chat.widget(second.id).text() == "second version"
    # The new version shows its switcher at once: 2 of 2.
    view = await assert_view_equals_reopen(etos)
    assert view.messages[-1].versions == "2/2"
    # The regenerate request carried the same conversation, without the first version.
    sent = server.chat_requests()[1].body["messages"]
    assert [m["content"] for m in sent[1:]] == ["say something"]
    # Switch back to version 1 of 2.
    opened = expect_signal(etos.controller.conversation_opened)
    await click(tool_button(chat.widget(second.id), "previousVersionButton"))
    await asyncio.wait_for(opened, TIMEOUT)
    await idle(etos)
    assert chat.widget(first.id) is not None
    history = await etos.controller.repo.current_history(etos.controller.current.id)
    assert history[-1].content == "first version"
    # The reopened view shows the switcher at version 1 of 2 (one query for all versions).
    view = await assert_view_equals_reopen(etos)
    assert view.messages[-1].versions == "1/2"


async def test_conversation_list_actions(etos: EtosApp, server: FakeOpenAIServer):
    etos.settings.set("chat.auto_title", False)
    await send(etos, "first chat")
    controller = etos.controller
    window = etos.window
    sidebar = window.sidebar
    cid = controller.current.id
    sidebar.build_menu(sidebar.model.conversation(0)).actions()[0].trigger()  # Rename…
    dialog = await find_dialog(RenameDialog)
    await type_text(dialog.edit, "Renamed 对话")
    await click(button_with_text(dialog, "Rename"))
    await idle(etos)
    assert sidebar.model.conversation(0).title == "Renamed 对话"
    assert window.chat.title.full_text() == "Renamed 对话"
    window.pin_action.trigger()
    await idle(etos)
    assert sidebar.model.conversation(0).pinned
    # Search finds by message text.
    await type_text(sidebar.search, "nothing like this")
    await idle(etos)
    assert sidebar.model.rowCount() == 0
    await type_text(sidebar.search, "first")
    await idle(etos)
    assert sidebar.model.rowCount() == 1
    sidebar.search.clear()
    await idle(etos)
    # Archive hides it from the list; "Show archived" shows it.
    window.archive_action.trigger()
    await idle(etos)
    assert sidebar.model.rowCount() == 0
    await click(sidebar.archived)
    await idle(etos)
    assert sidebar.model.rowCount() == 1
    # Delete asks first; "Cancel" keeps it, "Delete" removes it.
    sidebar.build_menu(sidebar.model.conversation(0)).actions()[-1].trigger()  # Delete…
    assert "Renamed 对话" in await answer_box("Cancel")
    await idle(etos)
    assert await controller.repo.get_conversation(cid) is not None
    sidebar.build_menu(sidebar.model.conversation(0)).actions()[-1].trigger()
    await answer_box("Delete")
    await idle(etos)
    assert await controller.repo.get_conversation(cid) is None
    assert sidebar.model.rowCount() == 0


async def test_export_markdown_and_json(etos: EtosApp, server: FakeOpenAIServer, tmp_path: Path):
    etos.settings.set("chat.auto_title", False)
    server.script(Text("```python\nprint('你好')\n```"))
    await send(etos, "show code 请")
    window = etos.window
    window.export_md_action.trigger()
    await choose_file(str(tmp_path / "out.md"))
    await idle(etos)
    window.export_json_action.trigger()
    await choose_file(str(tmp_path / "out"))
    await idle(etos)
    markdown = (tmp_path / "out.md").read_text(encoding="utf-8")
    assert "show code 请" in markdown
    assert "print('你好')" in markdown
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]
    assert data["messages"][0]["content"] == "show code 请"
    assert "sk-" not in json.dumps(data)


async def test_code_block_copy_button(etos: EtosApp, server: FakeOpenAIServer):
    etos.settings.set("chat.auto_title", False)
    server.script(Text("Here:\n\n```bash\npnpm install\n```\n"))
    result = await send(etos, "how do I install?")
    await idle(etos)
    widget = etos.window.chat.widget(result[1].id)
    await click_link(widget.findChild(QTextBrowser), "copy-code:0")
    assert QGuiApplication.clipboard().text() == "pnpm install"


async def test_long_conversation_opens_lazily(etos: EtosApp):
    db = etos.db
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def seed(session) -> int:
        conv = ConversationRow(title="long", created_at=start, updated_at=start)
        session.add(conv)
        session.commit()
        rows = []
        for i in range(5000):
            role = "user" if i % 2 == 0 else "assistant"
            rows.append(
                MessageRow(
                    conversation_id=conv.id,
                    role=role,
                    content=f"message {i}",
                    created_at=start + timedelta(seconds=i),
                )
            )
        session.add_all(rows)
        session.commit()
        return conv.id

    cid = await db.run(seed)
    controller = etos.controller
    opened = expect_signal(controller.conversation_opened)
    controller.open_conversation(cid)
    _conv, rows, has_more = await asyncio.wait_for(opened, TIMEOUT)
    await idle(etos)
    chat = etos.window.chat
    # Opening builds about a window of messages, the newest, whatever the conversation's length.
    assert has_more
    assert chat.widget_count() == FIRST_PAGE_SIZE
    assert [r.content for r in rows] == [
        f"message {i}" for i in range(5000 - FIRST_PAGE_SIZE, 5000)
    ]
    assert chat.older_button.isVisible()
    older = expect_signal(controller.older_messages_loaded)
    await click(chat.older_button)
    await asyncio.wait_for(older, TIMEOUT)
    await idle(etos)
    assert chat.widget_count() == FIRST_PAGE_SIZE + PAGE_SIZE


async def test_scrolling_up_a_long_conversation_fetches_older_messages(etos: EtosApp):
    """Issue 21 item 6: older messages arrive as the user scrolls up, without a button."""
    db = etos.db
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def seed(session) -> int:
        conv = ConversationRow(title="long", created_at=start, updated_at=start)
        session.add(conv)
        session.commit()
        session.add_all(
            MessageRow(
                conversation_id=conv.id,
                role="user" if i % 2 == 0 else "assistant",
                content=f"message {i}\n\nwith a second paragraph",
                created_at=start + timedelta(seconds=i),
            )
            for i in range(300)
        )
        session.commit()
        return conv.id

    cid = await db.run(seed)
    controller = etos.controller
    chat = etos.window.chat
    await asyncio.wait_for(controller.open_conversation(cid), TIMEOUT)
    await idle(etos)
    bar = chat.scroll.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0  # at the newest message
    newest = chat.widget(max(chat._widgets))
    assert newest.text().startswith("message 299")
    shown = chat.widget_count()
    oldest_shown = chat.widget(min(chat._widgets))
    # Wheel up, as a person reading back would, until the top of what is loaded is near.
    older = expect_signal(controller.older_messages_loaded)
    for _ in range(200):
        if older.done():
            break
        await scroll_wheel(chat.scroll.viewport(), 3)
    rows, has_more = await asyncio.wait_for(older, TIMEOUT)
    await idle(etos)
    assert has_more
    assert [r.content.split("\n")[0] for r in rows] == [
        f"message {i}" for i in range(300 - shown - PAGE_SIZE, 300 - shown)
    ]
    assert chat.widget_count() == shown + PAGE_SIZE
    # The message that was in view stays in view: the page went in above it.
    assert bar.value() > 0
    top = oldest_shown.mapTo(chat.scroll.viewport(), QPoint(0, 0)).y()
    assert 0 <= top < chat.scroll.viewport().height()
    await assert_view_equals_reopen(etos)


async def test_composer_enter_sends_shift_enter_newline(etos: EtosApp, server: FakeOpenAIServer):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent

    etos.settings.set("chat.auto_title", False)
    composer = etos.window.chat.composer
    composer.setFocus()
    composer.insertPlainText("line one")
    shift_enter = QKeyEvent(
        QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier
    )
    QApplication.sendEvent(composer, shift_enter)
    composer.insertPlainText("line two")
    assert composer.toPlainText() == "line one\nline two"
    finished = asyncio.ensure_future(first_outcome(etos))
    enter = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(composer, enter)
    await asyncio.wait_for(finished, TIMEOUT)
    await idle(etos)
    assert server.chat_requests()[0].body["messages"][-1]["content"] == "line one\nline two"


async def test_per_conversation_model_is_sent(etos: EtosApp, server: FakeOpenAIServer):
    etos.settings.set("chat.auto_title", False)
    await send(etos, "first")
    chat = etos.window.chat
    changed = expect_signal(etos.controller.conversation_changed)
    await type_text(chat.model_combo.lineEdit(), "fake-chat-mini")
    QTest.keyClick(chat.model_combo.lineEdit(), Qt.Key.Key_Return)
    await asyncio.wait_for(changed, TIMEOUT)
    await idle(etos)
    assert etos.controller.current.model == "fake-chat-mini"
    await send(etos, "second")
    assert [r.body["model"] for r in server.chat_requests()] == ["fake-chat", "fake-chat-mini"]


async def test_first_run_opens_provider_settings_and_offers_local_server(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    env = {"ETOS_DATA_DIR": str(isolated_environment)}
    app = EtosApp(
        qapp, env, local_candidates=[server.base_url], provider_factory=fast_provider_factory([])
    )
    app.settings.set("memory.embedder", "keywords")
    app.window.show()
    try:
        await app.start()
        dialog = app._settings_dialog
        assert dialog is not None
        assert dialog.isVisible()
        assert dialog.current_page_name() == "providers"
        page = dialog.providers_page
        if not page.offer_buttons():
            await asyncio.wait_for(expect_signal(page.probe_finished), TIMEOUT)
        assert len(page.offer_buttons()) == 1
        assert [r.path for r in server.requests] == ["/v1/models"]
        saved = expect_signal(dialog.settings_saved)
        await click(page.offer_buttons()[0])
        await asyncio.wait_for(saved, TIMEOUT)
        await dialog.wait_idle()
        assert app.registry.is_configured()
        assert app.window.provider_label.text().endswith("fake-chat")
        # And the chat works with the provider the click created.
        result = await send(app, "hello local model")
        assert result[0] == "finished"
        assert server.chat_requests()[0].body["model"] == "fake-chat"
    finally:
        if app._settings_dialog is not None:
            app._settings_dialog.close()
        await stop_app(app)


async def test_rate_limit_retry_shows_status_line(etos: EtosApp, server: FakeOpenAIServer):
    from PySide6.QtWidgets import QLabel

    etos.settings.set("chat.auto_title", False)
    server.script(Fault(429, retry_after=3), Text("after the wait"))
    seen: list[str] = []

    def on_retrying(message_id: int, seconds: float, reason: str) -> None:
        label = etos.window.chat.widget(message_id).findChild(QLabel, "messageStatus")
        seen.append(f"{seconds}|{reason}|{label.text()}")

    etos.controller.reply_retrying.connect(on_retrying)
    result = await send(etos, "hello?")
    assert result[1].content == "after the wait"
    assert len(seen) == 1
    seconds, reason, text = seen[0].split("|")
    assert (float(seconds), reason) == (3.0, "rate_limited")
    assert text.startswith("Rate limited")
    assert text.count("retrying") == 1
    assert etos.sleeps == [3.0]


async def test_changing_the_embedder_setting_switches_and_embeds(etos: EtosApp):
    await etos.memory.save("I use pnpm for JavaScript projects", "preference")
    assert etos.memory.engine.embedder is None
    etos.settings.set("memory.embedder", "builtin")
    await asyncio.wait_for(etos._embedder_task, 60)
    assert etos.memory.engine.embedder.key == "use-m3:512"
    assert etos.memory.engine.embedding_status() == (1, 1)
    etos.settings.set("memory.embedder", "keywords")
    await asyncio.wait_for(etos._embedder_task, 10)
    assert etos.memory.engine.embedder is None


async def test_strictness_setting_changes_the_floors_in_use(etos: EtosApp):
    await asyncio.wait_for(etos._embedder_task, 10)
    base = etos.memory.engine.tuning.keyword_floor
    etos.settings.set("memory.strictness", "strict")
    await asyncio.wait_for(etos._embedder_task, 10)
    assert etos.memory.engine.tuning.keyword_floor > base


async def test_per_conversation_persona_is_sent(etos: EtosApp, server: FakeOpenAIServer):
    etos.settings.set("chat.auto_title", False)
    await send(etos, "hello")
    etos.window.persona_action.trigger()
    dialog = await find_dialog(PersonaOverrideDialog)
    assert dialog.name_edit.placeholderText() == "Etos"
    await type_text(dialog.name_edit, "Captain Byte")
    await type_text(dialog.prompt_edit, "You speak like a cheerful ship's captain.")
    changed = expect_signal(etos.controller.conversation_changed)
    await click(button_with_text(dialog, "Save"))
    await asyncio.wait_for(changed, TIMEOUT)
    await idle(etos)
    await send(etos, "who are you?")
    first, second = (r.body["messages"][0]["content"] for r in server.chat_requests())
    assert "Captain Byte" not in first
    assert "Captain Byte" in second
    assert "cheerful ship's captain" in second
    # Another conversation keeps the persona from Settings.
    etos.controller.new_conversation()
    await idle(etos)
    await send(etos, "and you?")
    assert "Captain Byte" not in server.chat_requests()[-1].body["messages"][0]["content"]


async def test_delete_message_with_confirm(
    etos: EtosApp, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
):
    etos.settings.set("chat.auto_title", False)
    server.script(Text("first answer"), Text("second answer"))
    await send(etos, "one")
    second = await send(etos, "two")
    chat = etos.window.chat
    user_id = second[1].reply_to_id
    await click(tool_button(chat.widget(user_id), "deleteButton"))
    await answer_box("Cancel")
    await idle(etos)
    assert len(await history(etos)) == 4
    await click(tool_button(chat.widget(user_id), "deleteButton"))
    await answer_box("Delete")
    await idle(etos)
    assert [m.content for m in await history(etos)] == ["one", "first answer"]
    assert chat.widget_count() == 2
    await assert_view_equals_reopen(etos)


async def test_saved_memory_note_comes_back_when_the_conversation_is_reopened(
    etos: EtosApp, server: FakeOpenAIServer
):
    from etos_desktop.ui.message_widget import MemoryNote
    from tests.helpers.fake_openai_server import ToolCall

    etos.settings.set("chat.auto_title", False)
    server.script(
        ToolCall("save_memory", '{"content": "The user uses pnpm", "kind": "preference"}'),
        Text("Noted!"),
    )
    result = await send(etos, "remember I use pnpm")
    reply_id = result[1].id
    first = etos.controller.current.id
    assert etos.window.chat.widget(reply_id).findChildren(MemoryNote)
    etos.controller.new_conversation()
    await idle(etos)
    assert etos.window.chat.widget(reply_id) is None
    loaded = expect_signal(etos.controller.saved_memories_loaded)
    etos.controller.open_conversation(first)
    (events,) = await asyncio.wait_for(loaded, TIMEOUT)
    await idle(etos)
    assert [(e.message_id, e.content) for e in events] == [(reply_id, "The user uses pnpm")]
    notes = etos.window.chat.widget(reply_id).findChildren(MemoryNote)
    assert len(notes) == 1
    # An archived memory's note does not come back.
    await etos.memory.archive(events[0].memory_id)
    etos.controller.new_conversation()
    await idle(etos)
    etos.controller.open_conversation(first)
    await idle(etos)
    assert not etos.window.chat.widget(reply_id).findChildren(MemoryNote)


async def test_provider_embedding_model_becomes_the_memory_embedder(
    etos: EtosApp, server: FakeOpenAIServer
):
    from etos_desktop.core.providers.config import ProviderConfig

    await etos.memory.save("I use pnpm for JavaScript projects", "preference")
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
    etos.settings.set("memory.embedder", "auto")
    await asyncio.wait_for(etos._embedder_task, 30)
    key = etos.memory.engine.embedder.key
    assert key.startswith("openai:")
    assert "fake-embed" in key
    assert etos.memory.engine.embedding_status() == (1, 1)
    embedded = [text for r in server.embedding_requests() for text in r.body["input"]]
    assert "I use pnpm for JavaScript projects" in embedded
    assert all(r.body["model"] == "fake-embed" for r in server.embedding_requests())


async def test_composer_is_free_as_soon_as_the_reply_ends(
    etos: EtosApp, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
):
    etos.settings.set("chat.auto_title", False)
    server.script(Text("one"), Text("two"))
    controller = etos.controller
    release = asyncio.Event()
    real_refresh = controller._refresh

    async def slow_refresh() -> None:
        await release.wait()
        await real_refresh()

    # The sidebar refresh after a reply is held back: sending must not have to wait for it.
    monkeypatch.setattr(controller, "_refresh", slow_refresh)
    states: list[bool] = []
    not_busy: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_busy(busy: bool) -> None:
        states.append(busy)
        if not busy and not not_busy.done():
            not_busy.set_result(None)

    controller.busy_changed.connect(on_busy)
    await type_text(etos.window.chat.composer, "first")
    await click(etos.window.chat.send_button)
    try:
        await asyncio.wait_for(not_busy, 5)
    finally:
        release.set()  # never leave the refresh hanging, even when the check fails
    assert states == [True, False]
    assert etos.window.chat.send_button.text() == "Send"
    release.clear()
    errors: list[object] = []
    controller.task_failed.connect(lambda what, error: errors.append((what, error)))
    second = expect_signal(controller.reply_finished)
    await type_text(etos.window.chat.composer, "second")
    await click(etos.window.chat.send_button)
    await asyncio.wait_for(second, TIMEOUT)
    release.set()
    await idle(etos)
    assert errors == []
    assert [r.body["messages"][-1]["content"] for r in server.chat_requests()] == [
        "first",
        "second",
    ]


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.usefixtures("usual_umask")
async def test_a_session_leaves_the_data_folder_owner_only(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    # What an older version (or the user) left readable by others is tightened.
    data_dir = isolated_environment
    (data_dir / "backups").mkdir(parents=True)
    for folder in (data_dir, data_dir / "backups"):
        folder.chmod(0o755)
    window_state = data_dir / "window-state.ini"
    window_state.write_text("[window]\n", encoding="utf-8")
    window_state.chmod(0o644)
    app = await start_app(qapp, server, data_dir)
    assert stat.S_IMODE(window_state.stat().st_mode) == 0o600
    window_state.unlink()
    await stop_app(app)  # the window state is written anew (0644 by Qt) as the window closes
    assert window_state.exists()
    modes = {
        str(path.relative_to(data_dir)): stat.S_IMODE(path.stat().st_mode)
        for path in (data_dir, *data_dir.rglob("*"))
    }
    expected = {name: 0o700 if (data_dir / name).is_dir() else 0o600 for name in modes}
    assert modes == expected


async def test_a_long_notice_leaves_room_for_status_messages_at_800x600(etos: EtosApp):
    """Issue 19: status-bar messages ran into the keyring notice."""
    window = etos.window
    window.resize(800, 600)
    long_path = "/home/someone/.local/share/etos-desktop/" + "very-long-folder-name/" * 4
    window.set_notice(f"⚠ API keys are kept in {long_path}secrets.json (no system keyring found)")
    await asyncio.sleep(0.05)
    bar = window.statusBar()
    message = "Saved to memory (merged into #123)"
    bar.showMessage(message, 5000)
    await asyncio.sleep(0.05)
    permanent = window.notice_label.width() + window.provider_label.width()
    room = bar.width() - permanent
    assert room >= bar.fontMetrics().horizontalAdvance(message) + 20
    assert window.notice_label.width() <= window.width() * 2 // 5
    assert "…" in window.notice_label.text()
    assert window.notice_label.text().startswith("⚠ API keys are kept in")
    assert "secrets.json" in window.notice_label.toolTip()
