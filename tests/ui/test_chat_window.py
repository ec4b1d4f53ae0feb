"""What the chat window shows after each action, driven through its real buttons and dialogs.

Each test here was written for a defect seen on screen while the database was right (issue 8):
every one of them failed on the code before the fix. After every chat action the view must equal
what reopening the conversation shows (``assert_view_equals_reopen``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QTextBrowser

from etos_desktop.app import EtosApp
from etos_desktop.core.storage.tables import ConversationRow, MessageRow
from etos_desktop.ui.conversation_list import ArchivedRole, RenameDialog
from etos_desktop.ui.message_widget import MessageWidget
from tests.helpers.chat_app import first_outcome, history, idle, send, start_app, stop_app
from tests.helpers.chat_view import assert_view_equals_reopen, chat_view
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Slow, Text
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import (
    answer_box,
    cancel_file_chooser,
    choose_file,
    click,
    find_dialog,
    tool_button,
    type_text,
    wait_until,
)

TIMEOUT = 15


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment)
    yield app
    await stop_app(app)


async def start_slow_reply(app: EtosApp, server: FakeOpenAIServer, text: str) -> int:
    """Send ``text`` to a server that writes a long reply at 0.2 s a chunk; return its id."""
    server.script(Slow("word " * 60, chunks=60, delay=0.2))
    started = expect_signal(app.controller.reply_started)
    delta = expect_signal(app.controller.reply_delta)
    await type_text(app.window.chat.composer, text)
    await click(app.window.chat.send_button)
    (row,) = await asyncio.wait_for(started, TIMEOUT)
    await asyncio.wait_for(delta, TIMEOUT)
    return row.id


# -- defect 1: Stop -----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["escape", "stop button"])
async def test_stop_shows_stopped_with_retry_at_once(
    etos: EtosApp, server: FakeOpenAIServer, how: str
):
    reply_id = await start_slow_reply(etos, server, "tell me a long story")
    chat = etos.window.chat
    assert chat.send_button.text() == "Stop"
    idle_again = expect_signal(etos.controller.busy_changed)
    if how == "escape":
        etos.window.activateWindow()
        QTest.keyClick(chat.composer, Qt.Key.Key_Escape)
    else:
        await click(chat.send_button)
    await asyncio.wait_for(idle_again, TIMEOUT)
    await idle(etos)
    row = next(m for m in await history(etos) if m.id == reply_id)
    assert (row.status, row.error_code) == ("interrupted", "stopped")
    widget = chat.widget(reply_id)
    shown = chat_view(chat).messages[-1]
    assert shown.status == "Stopped"
    assert widget.text() == row.content
    buttons = {name: (visible, enabled) for name, visible, enabled in shown.buttons}
    assert buttons["retryButton"] == (True, True)
    # One way to try again: Retry (issue 19: Retry and Regenerate were both offered).
    assert not buttons["regenerateButton"][0]
    for name in ("deleteButton", "contextButton"):
        assert buttons[name] == (True, True), name
    assert chat.send_button.text() == "Send"
    await assert_view_equals_reopen(etos)


async def test_enter_while_a_reply_streams_queues_the_message(
    etos: EtosApp, server: FakeOpenAIServer
):
    """Issue 19: Enter stopped the reply and left the new text unsent."""
    server.script(Slow("word " * 12, chunks=12, delay=0.1), Text("second answer"))
    chat = etos.window.chat
    started = expect_signal(etos.controller.reply_started)
    await type_text(chat.composer, "tell me a story")
    QTest.keyClick(chat.composer, Qt.Key.Key_Return)
    (first,) = await asyncio.wait_for(started, TIMEOUT)
    await type_text(chat.composer, "and then?")
    QTest.keyClick(chat.composer, Qt.Key.Key_Return)
    assert chat.queue_label.isVisible()
    assert chat.queue_label.text().startswith("Queued: your message is sent when the reply ends")
    assert chat.composer.toPlainText() == "and then?"
    assert etos.controller.busy  # not stopped
    await wait_until(lambda: len(server.chat_requests()) == 2, TIMEOUT)
    await idle(etos)
    rows = await history(etos)
    reply = next(m for m in rows if m.id == first.id)
    assert (reply.status, reply.content) == ("complete", "word " * 12)
    assert [m.content for m in rows if m.role == "user"] == ["tell me a story", "and then?"]
    assert server.chat_requests()[1].body["messages"][-1]["content"] == "and then?"
    assert not chat.queue_label.isVisible()
    assert chat.composer.toPlainText() == ""
    await assert_view_equals_reopen(etos)


async def test_a_queued_message_edited_again_waits_for_enter(
    etos: EtosApp, server: FakeOpenAIServer
):
    server.script(Slow("word " * 20, chunks=20, delay=0.1))
    chat = etos.window.chat
    started = expect_signal(etos.controller.reply_started)
    await type_text(chat.composer, "tell me a story")
    QTest.keyClick(chat.composer, Qt.Key.Key_Return)
    await asyncio.wait_for(started, TIMEOUT)
    idle_again = expect_signal(etos.controller.busy_changed)
    await type_text(chat.composer, "and then")
    QTest.keyClick(chat.composer, Qt.Key.Key_Return)
    assert chat.queue_label.isVisible()
    await type_text(chat.composer, "?", replace=False)
    assert etos.controller.busy
    assert not chat.queue_label.isVisible()
    await asyncio.wait_for(idle_again, TIMEOUT)
    await idle(etos)
    assert len(server.chat_requests()) == 1
    assert chat.composer.toPlainText() == "and then?"


# -- defect 2: Edit and resend -------------------------------------------------------------------


async def test_edit_and_resend_shows_what_a_reopen_shows(etos: EtosApp, server: FakeOpenAIServer):
    server.script(Text("answer one"), Text("answer one, again"), Text("answer two"))
    first = await send(etos, "question one")
    chat = etos.window.chat
    # A second version of the first reply, so a version switcher is on screen too.
    regenerated = asyncio.ensure_future(first_outcome(etos))
    await click(tool_button(chat.widget(first[1].id), "regenerateButton"))
    await asyncio.wait_for(regenerated, TIMEOUT)
    await idle(etos)
    await send(etos, "question two")
    await assert_view_equals_reopen(etos)
    user_id = first[1].reply_to_id
    await click(tool_button(chat.widget(user_id), "editButton"))
    assert chat.composer.toPlainText() == "question one"
    assert chat.edit_bar.isVisible()
    # The cursor is at the end, ready to add to the text.
    assert chat.composer.textCursor().position() == len("question one")
    QTest.keyClicks(chat.composer, ", edited")
    server.script(Text("answer edited"))
    outcome = asyncio.ensure_future(first_outcome(etos))
    await click(chat.send_button)
    assert "replies after the original are dropped" in await answer_box("Send")
    result = await asyncio.wait_for(outcome, TIMEOUT)
    await idle(etos)
    assert result[1].content == "answer edited"
    sent = server.chat_requests()[-1].body["messages"]
    assert [m["content"] for m in sent[1:]] == ["question one, edited"]
    assert [m.content for m in await history(etos)] == ["question one, edited", "answer edited"]
    view = await assert_view_equals_reopen(etos)
    assert [m.text for m in view.messages] == ["question one, edited", "answer edited"]
    assert view.messages[-1].versions == ""


async def test_edit_cancelled_at_the_confirmation_changes_nothing(
    etos: EtosApp, server: FakeOpenAIServer
):
    first = await send(etos, "keep me")
    chat = etos.window.chat
    await click(tool_button(chat.widget(first[1].reply_to_id), "editButton"))
    QTest.keyClicks(chat.composer, " not")
    await click(chat.send_button)
    await answer_box("Cancel")
    await idle(etos)
    assert [m.content for m in await history(etos)] == ["keep me", "echo: keep me"]
    assert len(server.chat_requests()) == 1
    # The edit is still open, so nothing typed is lost.
    assert chat.composer.toPlainText() == "keep me not"


# -- defect 6: the smaller ones ------------------------------------------------------------------


async def test_send_waits_for_text(etos: EtosApp):
    chat = etos.window.chat
    assert not chat.send_button.isEnabled()
    await type_text(chat.composer, "   ")
    chat.composer.insertPlainText("\n\t ")
    assert not chat.send_button.isEnabled()
    chat.composer.insertPlainText("hi")
    assert chat.send_button.isEnabled()


async def test_new_leaves_no_empty_conversation_behind(etos: EtosApp, server: FakeOpenAIServer):
    await send(etos, "the only one")
    sidebar = etos.window.sidebar
    assert sidebar.model.rowCount() == 1
    for _ in range(2):
        await click(sidebar.new_button)
        await idle(etos)
    assert sidebar.model.rowCount() == 1
    rows = await etos.controller.repo.list_conversations(archived=None)
    assert len(rows) == 1
    window = etos.window
    # Nothing to pin, archive, rename, export or delete until it has a message.
    for action in (
        window.pin_action,
        window.archive_action,
        window.rename_action,
        window.delete_action,
        window.export_md_action,
        window.persona_action,
    ):
        assert not action.isEnabled(), action.text()
    assert chat_view(window.chat).messages == ()
    # A temporary one chosen before the first message is created temporary.
    await click(window.chat.temporary)
    await send(etos, "secret question")
    assert etos.controller.current.temporary
    assert sidebar.model.rowCount() == 2
    assert window.pin_action.isEnabled()
    await assert_view_equals_reopen(etos)


async def test_empty_conversations_of_earlier_versions_are_cleared_at_start(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    app = await start_app(qapp, server, isolated_environment)
    try:
        await app.controller.repo.create_conversation()
        await send(app, "kept")
    finally:
        await stop_app(app)
    again = await start_app(qapp, server, isolated_environment)
    try:
        rows = await again.controller.repo.list_conversations(archived=None)
        assert [r.id for r in rows] == [again.controller.current.id]
    finally:
        await stop_app(again)


async def test_long_titles_are_elided_and_never_widen_the_window(
    etos: EtosApp, server: FakeOpenAIServer
):
    await send(etos, "hello")
    window = etos.window
    window.resize(1000, 700)
    await asyncio.sleep(0.05)
    sidebar_width = window.sidebar.width()
    long_title = "A very long title the model wrote about many things " * 6
    await etos.controller.update_conversation(etos.controller.current.id, title=long_title)
    await idle(etos)
    await asyncio.sleep(0.05)
    assert window.width() == 1000
    assert window.sidebar.width() == sidebar_width
    assert not window.sidebar.view.horizontalScrollBar().isVisible()
    header = window.chat.title
    assert header.full_text() == long_title.strip()
    assert header.text().endswith("…")
    assert header.width() < window.chat.width()


async def test_rename_dialog_is_wide_and_renames(etos: EtosApp, server: FakeOpenAIServer):
    await send(etos, "first chat")
    window = etos.window
    window.rename_action.trigger()
    dialog = await find_dialog(RenameDialog)
    assert dialog.width() >= 420
    assert dialog.label.sizeHint().width() <= dialog.label.width()
    assert dialog.windowTitle() == "Rename conversation"
    await type_text(dialog.edit, "Renamed 对话")
    await click(dialog.buttons.button(dialog.buttons.StandardButton.Ok))
    await wait_until(lambda: etos.controller.current.title == "Renamed 对话")
    await idle(etos)
    assert window.sidebar.model.conversation(0).title == "Renamed 对话"
    assert window.chat.title.full_text() == "Renamed 对话"
    await assert_view_equals_reopen(etos)


async def test_show_archived_adds_archived_rows_with_a_marker(
    etos: EtosApp, server: FakeOpenAIServer
):
    await send(etos, "to archive")
    archived_id = etos.controller.current.id
    etos.window.archive_action.trigger()
    await idle(etos)
    await click(etos.window.sidebar.new_button)
    await send(etos, "stays active")
    sidebar = etos.window.sidebar
    assert sidebar.model.rowCount() == 1
    await click(sidebar.archived)
    await idle(etos)
    assert sidebar.model.rowCount() == 2
    marks = {
        sidebar.model.conversation(row).id: sidebar.model.index(row).data(ArchivedRole)
        for row in range(2)
    }
    assert marks == {archived_id: True, etos.controller.current.id: False}
    archived_row = sidebar.model.row_for(archived_id)
    assert "🗄" in sidebar.model.index(archived_row).data()


async def test_export_starts_in_documents_and_suggests_the_title(
    etos: EtosApp, server: FakeOpenAIServer, isolated_environment: Path
):
    # HOME is the test's own (tests/conftest.py: isolated_environment).
    documents = isolated_environment.parent / "home" / "Documents"
    documents.mkdir(exist_ok=True)
    server.script(Text("```python\nprint('你好')\n```"))
    await send(etos, "show code 请")
    await etos.controller.update_conversation(etos.controller.current.id, title="Code: 你好/世界")
    await idle(etos)
    etos.window.export_md_action.trigger()
    chooser = await find_dialog(QFileDialog)
    assert Path(chooser.directory().absolutePath()) == documents
    assert chooser.selectedFiles()[0].endswith("Code 你好 世界.md")
    target = documents / "chat.md"
    await choose_file(str(target))
    await wait_until(target.exists)
    await idle(etos)
    markdown = target.read_text(encoding="utf-8")
    assert "show code 请" in markdown
    assert "print('你好')" in markdown
    # Cancelled: nothing written, nothing shown as an error.
    etos.window.export_json_action.trigger()
    await cancel_file_chooser()
    await idle(etos)
    assert not list(documents.glob("*.json"))
    assert not etos.window.chat.banner.isVisible()


async def wait_for_room(etos: EtosApp, tokens_below: int) -> int:
    """Wait until the composer knows the (new) limit, below ``tokens_below``."""
    chat = etos.window.chat
    for _ in range(200):
        await idle(etos)
        room = chat._room
        if room is not None and room.tokens < tokens_below:
            return int(room.tokens)
        await asyncio.sleep(0.01)
    raise AssertionError(f"the composer's limit stayed {chat._room}")


async def test_a_message_too_long_for_the_model_is_refused_in_the_composer(
    etos: EtosApp, server: FakeOpenAIServer
):
    """Issue 19: refused before it is saved, with the reason; nothing else is lost."""
    server.script(Text("noted"), Text("Lyon"))
    await send(etos, "my name is Alex and I live in Lyon")
    chat = etos.window.chat
    before = [m.content for m in await history(etos)]
    # A smaller model (set in Settings): the composer's limit follows at once.
    etos.settings.set_model_context("fake-chat", 4096)
    room = await wait_for_room(etos, 4096)
    near = "word " * int(room * 0.7 * 4 / 5)
    chat.composer.setPlainText(near)
    await asyncio.sleep(0.3)  # the count waits for typing to pause
    await idle(etos)
    assert chat.token_label.isVisible()
    assert "tokens fake-chat takes for a message" in chat.token_label.text()
    huge = "long " * 4000
    chat.composer.setPlainText(huge)
    await click(chat.send_button)
    await idle(etos)
    assert chat.token_label.isVisible()
    said = chat.token_label.text().replace(",", "")  # the locale's digit grouping
    assert said.startswith("Too long to send: about 5004 tokens")
    assert f"fake-chat takes {room} for a message" in said
    assert chat.token_label.property("kind") == "error"
    assert chat.composer.toPlainText() == huge
    assert [m.content for m in await history(etos)] == before
    assert len(server.chat_requests()) == 1
    # Shortened, it goes, and the earlier turn goes with it.
    chat.composer.clear()
    await send(etos, "where do I live?")
    assert not chat.token_label.isVisible()
    sent = [m["content"] for m in server.chat_requests()[-1].body["messages"]]
    assert "my name is Alex and I live in Lyon" in sent
    await assert_view_equals_reopen(etos)


async def test_a_first_message_too_long_leaves_no_empty_conversation(
    etos: EtosApp, server: FakeOpenAIServer
):
    etos.settings.set_model_context("fake-chat", 4096)
    await wait_for_room(etos, 4096)
    chat = etos.window.chat
    chat.composer.setPlainText("long " * 4000)
    # Past the composer (as a paste sent at once would be): the window's own check refuses it.
    chat._too_long = False
    chat._count_timer.stop()
    chat.send_requested.emit(chat.composer.toPlainText())
    await idle(etos)
    assert etos.controller is not None
    assert await etos.controller.repo.list_conversations() == []
    assert chat.banner.isVisible()
    assert "too long for the model" in chat.banner_label.text()
    assert not chat.banner_action.isVisible()
    assert server.chat_requests() == []


async def test_retry_is_offered_for_a_server_error(etos: EtosApp, server: FakeOpenAIServer):
    server.script(*[Fault(500)] * 4, Text("worked now"))
    result = await send(etos, "try")
    assert result[0] == "failed"
    chat = etos.window.chat
    reply = chat.widget(result[1].id)
    assert tool_button(reply, "retryButton").isVisible()
    assert not tool_button(reply, "regenerateButton").isVisible()
    assert chat.banner_action.text() == "Retry"
    outcome = asyncio.ensure_future(first_outcome(etos))
    await click(chat.banner_action)
    assert (await asyncio.wait_for(outcome, TIMEOUT))[1].content == "worked now"
    await idle(etos)
    view = await assert_view_equals_reopen(etos)
    assert view.messages[-1].versions == "2/2"


async def test_the_banner_goes_once_the_replys_own_retry_works(
    etos: EtosApp, server: FakeOpenAIServer
):
    """Issue 19: after Retry (under the reply) succeeded, the error banner stayed."""
    server.script(*[Fault(500)] * 4, Text("worked now"))
    result = await send(etos, "try")
    chat = etos.window.chat
    assert chat.banner.isVisible()
    outcome = asyncio.ensure_future(first_outcome(etos))
    await click(tool_button(chat.widget(result[1].id), "retryButton"))
    assert (await asyncio.wait_for(outcome, TIMEOUT))[1].content == "worked now"
    await idle(etos)
    assert not chat.banner.isVisible()
    await assert_view_equals_reopen(etos)


async def test_a_reply_cut_by_a_crash_and_one_cut_by_the_server_say_so(etos: EtosApp):
    now = datetime(2026, 11, 30, 9, tzinfo=UTC)

    def seed(session) -> int:
        conversation = ConversationRow(title="cut", created_at=now, updated_at=now)
        session.add(conversation)
        session.commit()
        for code in (None, "stream_ended"):
            user = MessageRow(
                conversation_id=conversation.id, role="user", content="q", created_at=now
            )
            session.add(user)
            session.commit()
            session.add(
                MessageRow(
                    conversation_id=conversation.id,
                    role="assistant",
                    content="half an ans",
                    status="interrupted",
                    error_code=code,
                    reply_to_id=user.id,
                    created_at=now,
                )
            )
            session.commit()
        return conversation.id

    cid = await etos.db.run(seed)
    await etos.controller.open_conversation(cid)
    await idle(etos)
    statuses = [m.status for m in chat_view(etos.window.chat).messages if m.role == "assistant"]
    assert statuses == [
        "Interrupted — the app closed before the reply finished",
        "Interrupted — the server ended the reply early",
    ]


async def test_remember_is_not_offered_in_a_temporary_conversation(
    etos: EtosApp, server: FakeOpenAIServer
):
    etos.window.new_temp_action.trigger()
    await idle(etos)
    await send(etos, "nothing is remembered here")
    for message in chat_view(etos.window.chat).messages:
        buttons = {name: visible for name, visible, _enabled in message.buttons}
        assert not buttons["rememberButton"]
    await assert_view_equals_reopen(etos)
    await click(etos.window.sidebar.new_button)
    await send(etos, "an ordinary one")
    for message in chat_view(etos.window.chat).messages:
        buttons = {name: visible for name, visible, _enabled in message.buttons}
        assert buttons["rememberButton"]


async def test_opening_a_conversation_clears_the_view_at_once(
    etos: EtosApp, server: FakeOpenAIServer
):
    # A model that takes a 1 MB message (a smaller one refuses it in the composer).
    etos.settings.set_model_context("fake-chat", 2_000_000)
    await send(etos, "small one")
    small_id = etos.controller.current.id
    await click(etos.window.sidebar.new_button)
    await send(etos, "x" * 1_000_000)
    big_id = etos.controller.current.id
    await etos.controller.open_conversation(small_id)
    await idle(etos)
    loading = expect_signal(etos.controller.conversation_loading)
    etos.controller.open_conversation(big_id)
    await asyncio.wait_for(loading, TIMEOUT)
    # Before the big conversation is read, the small one is no longer on screen.
    assert chat_view(etos.window.chat).messages == ()
    assert etos.window.chat.empty_label.text() == "Loading…"
    await idle(etos)
    assert chat_view(etos.window.chat).messages[0].text == "x" * 1_000_000


# -- issue 9, defect 6: text from the model or a server is never rich text ---------------------


async def test_model_and_server_text_is_shown_as_plain_text(
    etos: EtosApp, server: FakeOpenAIServer
):
    spoof = '<img src="file:///etc/passwd"><b style="color:red">Bank</b>'
    await send(etos, "hello")
    await etos.controller.update_conversation(etos.controller.current.id, title=spoof)
    await idle(etos)
    header = etos.window.chat.title
    assert header.textFormat() == Qt.TextFormat.PlainText
    assert header.full_text() == spoof
    tooltip = etos.window.sidebar.model.index(0).data(Qt.ItemDataRole.ToolTipRole)
    assert "<img" not in tooltip
    assert "&lt;img" in tooltip
    server.script(Fault(400, message=spoof))
    result = await send(etos, "again")
    assert result[0] == "failed"
    banner = etos.window.chat.banner_label
    assert banner.textFormat() == Qt.TextFormat.PlainText
    assert "<img" in banner.text()


async def test_bidi_overrides_from_the_model_or_a_server_are_shown_not_obeyed(
    etos: EtosApp, server: FakeOpenAIServer
):
    """Issue 19: a U+202E in a reply, a title or an error reordered what followed it."""
    spoof, shown = "photo\u202egnp.exe", "photo⟨U+202E⟩gnp.exe"
    server.script(Text(f"Here is {spoof}"))
    await send(etos, "hello")
    await etos.controller.update_conversation(etos.controller.current.id, title=spoof)
    await idle(etos)
    chat = etos.window.chat
    reply = [w for w in chat.findChildren(MessageWidget) if w.is_assistant][-1]
    browser = reply.findChild(QTextBrowser)
    assert browser is not None
    assert browser.toPlainText() == f"Here is {shown}"
    assert (await history(etos))[-1].content == f"Here is {spoof}"  # stored as sent
    assert chat.title.full_text() == shown
    assert "\u202e" not in chat.title.text()
    row = etos.window.sidebar.model.index(0)
    assert row.data(Qt.ItemDataRole.DisplayRole) == shown
    assert shown in row.data(Qt.ItemDataRole.ToolTipRole)
    server.script(Fault(400, message=spoof))
    result = await send(etos, "again")
    assert result[0] == "failed"
    assert shown in chat.banner_label.text()
    assert "\u202e" not in chat.banner_label.text()
    status = chat_view(chat).messages[-1].status  # the failed reply's status line
    assert shown in status
    assert "\u202e" not in status


# -- issue 9, defect 7: background failures are shown, once ------------------------------------


async def test_an_unexpected_failure_says_what_was_not_done(
    etos: EtosApp, monkeypatch: pytest.MonkeyPatch, ui_guard
):
    ui_guard.expect("disk on fire")

    async def broken(**_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(etos.controller.repo, "list_conversations_with_previews", broken)
    etos.controller.refresh_conversations()
    await idle(etos)
    chat = etos.window.chat
    assert chat.banner.isVisible()
    assert chat.banner_label.text().startswith("The conversation list was not refreshed.")
    assert "unexpected error" in chat.banner_label.text()
    # Logged once, at ERROR, with the traceback; the global error dialog was not used.
    assert len(ui_guard.error_logs) == 1
    assert ui_guard.exceptions == []


async def test_a_failing_embedder_choice_is_shown_not_lost(
    qapp: QApplication,
    server: FakeOpenAIServer,
    isolated_environment: Path,
    monkeypatch: pytest.MonkeyPatch,
    ui_guard,
):
    ui_guard.expect("no model files")
    from etos_desktop.core.providers import embedders

    def broken(*_args, **_kwargs):
        raise RuntimeError("no model files")

    monkeypatch.setattr(embedders, "choose_embedder", broken)
    app = await start_app(qapp, server, isolated_environment, embedder="builtin")
    try:
        await asyncio.wait_for(asyncio.gather(app._embedder_task, return_exceptions=True), 10)
        await asyncio.sleep(0)
        notice = app.window.notice_label
        assert notice.text().startswith("⚠ Matching memories")  # cut to fit, if need be
        assert "Matching memories by meaning could not be started" in notice.toolTip()
        assert len(ui_guard.error_logs) == 1
    finally:
        await stop_app(app)
