"""Memory in the chat through the real app: notes, approval, Remember…, /remember, the inspector.

The whole app on a qasync loop against the local server; every test asserts on what the server
received and on what is stored, not only on what is shown. Memories are matched with the
embedded USE model (see tests/integration/test_memory_chat_requests.py for why): one loaded copy
is shared by the module, except in the "Done when" scenario, which lets the app pick and load
its own embedder as it does for a user.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QDialog, QToolButton

from etos_desktop.app import EtosApp
from etos_desktop.core.context.prompts import MEMORY_IN_USER_MESSAGE_NOTE
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.memory.errors import MemoryLimitReached, MemoryNotFound
from etos_desktop.core.memory.tools import REFUSAL_TEXT, SaveRequest
from etos_desktop.core.providers.embedders import UseEmbedder
from etos_desktop.core.text.checks import MemoryEmpty, MemorySecret, MemoryTooLong
from etos_desktop.ui.chat_memory_dialogs import (
    ApprovalDialog,
    MemoryTextDialog,
    exact_text,
    invisible_count,
    unescape_invisible,
)
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.error_text import describe
from etos_desktop.ui.labels import plain_tooltip
from etos_desktop.ui.message_widget import MemoryNote, MessageWidget
from tests.helpers.chat_app import history, idle, start_app, stop_app
from tests.helpers.chat_view import assert_view_equals_reopen
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, ToolCall
from tests.helpers.memory_scenario import INSTALL_QUESTION, PNPM, SAVE_PNPM
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click

TIMEOUT = 15


@pytest.fixture
async def etos(
    qapp: QApplication,
    server: FakeOpenAIServer,
    isolated_environment: Path,
    use_embedder: UseEmbedder,
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment, embedder="keywords")
    assert app.memory is not None
    # Let the app finish choosing ("keywords": none) before the shared, loaded model goes in.
    await asyncio.wait_for(app._embedder_task, TIMEOUT)
    app.memory.engine.set_embedder(use_embedder)
    yield app
    await stop_app(app)


async def type_and_send(app: EtosApp, text: str) -> None:
    """Send from the composer and wait until everything it started has ended."""
    chat = app.window.chat
    chat.composer.setPlainText(text)
    await click(chat.send_button)
    await idle(app)


async def new_conversation(app: EtosApp, *, temporary: bool = False) -> None:
    assert app.controller is not None
    opened = expect_signal(app.controller.conversation_opened)
    (app.window.new_temp_action if temporary else app.window.new_action).trigger()
    await asyncio.wait_for(opened, TIMEOUT)
    await idle(app)


async def last_reply(app: EtosApp) -> MessageWidget:
    rows = await history(app)
    widget = app.window.chat.widget(rows[-1].id)
    assert widget is not None
    return widget


def memory_block(body: dict[str, Any]) -> str | None:
    before = body["messages"][-2] if len(body["messages"]) > 1 else None
    if before and before["role"] == "system" and "<memories>" in before["content"]:
        return str(before["content"])
    return None


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def open_inspector(app: EtosApp, widget: MessageWidget) -> ContextDialog:
    await click(widget.findChild(QToolButton, "contextButton"))
    await idle(app)
    dialogs = [d for d in app.window.findChildren(ContextDialog) if d.isVisible()]
    assert len(dialogs) == 1
    return dialogs[0]


def open_dialog(app: EtosApp, cls: type, name: str) -> Any:
    found = [d for d in app.window.findChildren(cls, name) if d.isVisible()]
    assert len(found) == 1, found
    return found[0]


async def memories(app: EtosApp) -> list[Any]:
    assert app.memory is not None
    return await app.memory.memories()


# -- the "Done when" scenario -----------------------------------------------------------------


async def test_done_when_remember_pnpm_then_new_conversation_carries_it(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    # The embedder the app picks for a user ("builtin": the embedded USE model), chosen in the
    # background as at every start (the model is the one this test process loaded).
    app = await start_app(qapp, server, isolated_environment, embedder="builtin")
    try:
        await asyncio.wait_for(app._embedder_task, TIMEOUT)
        assert app.memory is not None
        assert app.memory.engine.embedder is not None
        assert app.memory.engine.embedder.key.startswith("use-m3")
        window = app.window
        chat = window.chat

        server.script(SAVE_PNPM, Text("Noted — you use pnpm."))
        await type_and_send(app, "remember I use pnpm")
        saved_turn = server.chat_requests()[1].body
        assert tool_results(saved_turn) == ["saved as #1"]
        reply = await last_reply(app)
        notes = [n for n in reply.notes() if isinstance(n, MemoryNote)]
        assert len(notes) == 1
        assert notes[0].label.text() == f"Saved to memory as #1: {PNPM}"
        assert notes[0].edit_button.isVisible()
        assert notes[0].undo_button.isVisible()
        assert "Saved to memory as #1" in window.statusBar().currentMessage()

        await new_conversation(app)
        server.script(Text("Run `pnpm install`."))
        await type_and_send(app, INSTALL_QUESTION)
        request = server.chat_requests()[2].body
        block = memory_block(request)
        assert block is not None
        assert "#1 (preference" in block
        assert PNPM in block
        assert request["messages"][-1] == {"role": "user", "content": INSTALL_QUESTION}

        # The inspector shows it with its score parts ...
        inspector = await open_inspector(app, await last_reply(app))
        assert inspector.memory_status.text().startswith("Memories sent: 1, fenced and labelled")
        titles = inspector.item_titles()
        assert any(t.startswith("#1 Preference · ") for t in titles)
        details = inspector.item_text("#1 Preference")
        assert "Sent as: - #1 (preference, " in details
        assert "Why it was chosen: meaning " in details
        for part in ("meaning = ", "floor = ", "keywords = ", "relevance = ", "recency = "):
            assert part in details
        assert f"Searched with: {INSTALL_QUESTION}" in details
        inspector.close()
        # ... and so does the memory list.
        assert [(m.id, m.content, m.kind) for m in await memories(app)] == [(1, PNPM, "preference")]

        # Archived, it is no longer sent.
        await app.memory.archive(1)
        server.script(Text("npm install, or the tool the project uses."))
        await type_and_send(app, INSTALL_QUESTION)
        request = server.chat_requests()[3].body
        assert memory_block(request) is None
        assert "pnpm" not in json.dumps(request["messages"][-1])
        assert len([m for m in request["messages"] if m["role"] == "system"]) == 1
        assert chat.composer.toPlainText() == ""
    finally:
        await stop_app(app)


# -- notify mode: the note, Edit, Undo --------------------------------------------------------


async def test_note_edit_then_undo_restores_the_replaced_memory(
    etos: EtosApp, server: FakeOpenAIServer
):
    assert etos.memory is not None
    old = await etos.memory.save("The user uses npm to install JavaScript packages", "preference")
    server.script(
        ToolCall(
            "save_memory",
            json.dumps({"content": PNPM, "kind": "preference", "supersedes": old.id}),
        ),
        Text("Got it, pnpm from now on."),
    )
    await type_and_send(etos, "I switched to pnpm")
    assert tool_results(server.chat_requests()[1].body) == [
        "saved as #2; #1 is archived as replaced by it"
    ]
    note = next(n for n in (await last_reply(etos)).notes() if isinstance(n, MemoryNote))
    assert note.label.text() == f"Saved to memory as #2, replaces #1: {PNPM}"

    # Edit: a refused text keeps the editor open with the reason; a good one is saved.
    await click(note.edit_button)
    editor = open_dialog(etos, MemoryTextDialog, "memoryEditDialog")
    assert editor.text_edit.toPlainText() == PNPM
    editor.text_edit.setPlainText("My token is sk-abcdefghijklmnopqrstuvwx1234")
    await click(editor.save_button)
    await idle(etos)
    assert editor.isVisible()
    assert "looks like an API key" in editor.error_label.text()
    assert (await etos.memory.get(2)).content == PNPM
    editor.text_edit.setPlainText("The user installs JavaScript packages with pnpm")
    closed = expect_signal(editor.finished)
    await click(editor.save_button)
    await idle(etos)
    assert await asyncio.wait_for(closed, TIMEOUT) == (QDialog.DialogCode.Accepted.value,)
    assert (await etos.memory.get(2)).content == "The user installs JavaScript packages with pnpm"
    assert note.label.text() == "Memory #2, edited: The user installs JavaScript packages with pnpm"

    # Undo: the new memory is deleted and the one it replaced is back.
    await click(note.undo_button)
    await idle(etos)
    assert note.undone
    assert note.label.text() == "Undone — #2 is no longer in memory, and #1 is back."
    assert not note.undo_button.isVisible()
    assert await etos.memory.get(2) is None
    assert [(m.id, m.archived_at) for m in await memories(etos)] == [(1, None)]
    await assert_view_equals_reopen(etos)


async def test_undo_of_a_merged_save_keeps_the_memory_with_its_old_wording(
    etos: EtosApp, server: FakeOpenAIServer
):
    assert etos.memory is not None
    await etos.memory.save(PNPM + ".", "preference", importance=0.8, tags=["tools"])
    server.script(SAVE_PNPM, Text("I already knew!"))
    await type_and_send(etos, "I use pnpm, remember?")
    assert tool_results(server.chat_requests()[1].body)[0].startswith("merged into #1")
    note = next(n for n in (await last_reply(etos)).notes() if isinstance(n, MemoryNote))
    assert note.label.text() == f"Saved to memory — merged into #1: {PNPM}"
    assert (await etos.memory.get(1)).content == PNPM
    await click(note.undo_button)
    await idle(etos)
    restored = await etos.memory.get(1)
    assert (restored.content, restored.importance, restored.tags) == (
        PNPM + ".",
        0.8,
        ("tools",),
    )
    assert note.label.text() == "Undone — memory #1 has its earlier wording again."
    await assert_view_equals_reopen(etos)


# -- ask mode: the approval dialog ------------------------------------------------------------


async def start_send(app: EtosApp, text: str) -> ApprovalDialog:
    """Send, and return the approval dialog the model's save_memory call opens."""
    assert app.controller is not None
    asked = expect_signal(app.controller.approval_requested)
    app.window.chat.composer.setPlainText(text)
    await click(app.window.chat.send_button)
    await asyncio.wait_for(asked, TIMEOUT)
    dialogs = app.window.approval_dialogs
    assert len(dialogs) == 1
    assert dialogs[0].isVisible()
    return dialogs[0]


async def test_ask_shows_every_field_exactly_and_saves_the_edited_text(
    etos: EtosApp, server: FakeOpenAIServer
):
    assert etos.memory is not None
    etos.settings.set("memory.approval", "ask")
    await etos.memory.save("用户喜欢喝咖啡", "preference")
    arguments = {
        "content": "用户喜欢\u200b喝乌龙茶",
        "kind": "preference",
        "importance": 0.7,
        "tags": ["饮品", "tea\u202e"],
        "trigger_context": "聊到饮料时",
        "supersedes": 1,
        "inferred": True,
    }
    server.script(ToolCall("save_memory", json.dumps(arguments)), Text("好的，记住了。"))
    finished = expect_signal(etos.controller.reply_finished)
    dialog = await start_send(etos, "我现在改喝乌龙茶了")
    shown = expect_signal(dialog.superseded_shown)
    await asyncio.wait_for(shown, TIMEOUT)
    assert dialog.content_edit.toPlainText() == "用户喜欢\\u200b喝乌龙茶"
    assert dialog.kind_label.text() == "Preference"  # not "Preference (preference)"
    assert dialog.importance_label.text() == "0.70"
    assert dialog.tags_label.text() == "饮品, tea\\u202e"
    assert dialog.trigger_label.text() == "聊到饮料时"
    assert dialog.supersedes_label.text() == "#1 — 用户喜欢喝咖啡"
    assert dialog.source_label.text().startswith(
        "proposed by the assistant as an observation, low confidence (0.4)"
    )
    assert dialog.invisible_warning.isVisible()
    assert "2 invisible" in dialog.invisible_warning.text()

    # The user drops the invisible character and rewords; that is what is stored.
    dialog.content_edit.setPlainText("用户现在喜欢喝乌龙茶")
    await click(dialog.save_button)
    await asyncio.wait_for(finished, TIMEOUT)
    await idle(etos)
    assert tool_results(server.chat_requests()[1].body) == [
        "saved as #2; #1 is archived as replaced by it"
    ]
    stored = await etos.memory.get(2)
    assert stored is not None
    assert (stored.content, stored.kind, stored.importance, stored.confidence) == (
        "用户现在喜欢喝乌龙茶",
        "preference",
        0.7,
        0.4,
    )
    assert stored.tags == ("饮品", "tea\u202e")
    note = next(n for n in (await last_reply(etos)).notes() if isinstance(n, MemoryNote))
    assert note.label.text() == "Saved to memory as #2, replaces #1: 用户现在喜欢喝乌龙茶"
    assert etos.window.approval_dialogs == []
    await assert_view_equals_reopen(etos)


async def test_ask_unchanged_text_is_saved_byte_for_byte(etos: EtosApp, server: FakeOpenAIServer):
    assert etos.memory is not None
    etos.settings.set("memory.approval", "ask")
    content = "用户喜欢\u200b喝乌龙茶"
    server.script(
        ToolCall("save_memory", json.dumps({"content": content, "kind": "preference"})),
        Text("好的"),
    )
    finished = expect_signal(etos.controller.reply_finished)
    dialog = await start_send(etos, "记住我喜欢乌龙茶")
    await click(dialog.save_button)
    await asyncio.wait_for(finished, TIMEOUT)
    await idle(etos)
    assert [m.content for m in await memories(etos)] == [content]
    note = next(n for n in (await last_reply(etos)).notes() if isinstance(n, MemoryNote))
    # The note shows the stored text exactly, the invisible character spelled out.
    assert note.label.text() == "Saved to memory as #1: 用户喜欢\\u200b喝乌龙茶"


async def test_ask_declined_saves_nothing(etos: EtosApp, server: FakeOpenAIServer):
    etos.settings.set("memory.approval", "ask")
    server.script(SAVE_PNPM, Text("Okay, I won't."))
    finished = expect_signal(etos.controller.reply_finished)
    dialog = await start_send(etos, "remember I use pnpm")
    await click(dialog.decline_button)
    await asyncio.wait_for(finished, TIMEOUT)
    await idle(etos)
    assert tool_results(server.chat_requests()[1].body) == [REFUSAL_TEXT["declined"]]
    assert await memories(etos) == []
    assert not [n for n in (await last_reply(etos)).notes() if isinstance(n, MemoryNote)]
    await assert_view_equals_reopen(etos)


async def test_ask_dialog_goes_away_when_the_reply_is_stopped(
    etos: EtosApp, server: FakeOpenAIServer
):
    etos.settings.set("memory.approval", "ask")
    server.script(SAVE_PNPM, Text("unused"))
    dialog = await start_send(etos, "remember I use pnpm")
    decided = expect_signal(dialog.decided)
    etos.controller.stop()
    assert await asyncio.wait_for(decided, TIMEOUT) == (None,)
    await idle(etos)
    assert etos.window.approval_dialogs == []
    assert await memories(etos) == []
    rows = await history(etos)
    assert (rows[-1].status, rows[-1].error_code) == ("interrupted", "stopped")
    assert len(server.chat_requests()) == 1


async def test_ask_dialog_closed_with_the_window_declines(
    qapp: QApplication,
    server: FakeOpenAIServer,
    isolated_environment: Path,
):
    app = await start_app(qapp, server, isolated_environment, embedder="keywords")
    try:
        app.settings.set("memory.approval", "ask")
        server.script(SAVE_PNPM, Text("unused"))
        dialog = await start_send(app, "remember I use pnpm")
        decided = expect_signal(dialog.decided)
        app.window.close()
        assert await asyncio.wait_for(decided, TIMEOUT) == (None,)
        await idle(app)
        assert await memories(app) == []
    finally:
        await stop_app(app)


def test_approval_dialog_without_extras(qapp: QApplication):
    dialog = ApprovalDialog(SaveRequest(content="Likes tea", kind="fact"))
    assert dialog.tags_label.text() == "none"
    assert dialog.trigger_label.text() == "none"
    assert dialog.supersedes_label.text() == "nothing"
    assert (
        dialog.source_label.text()
        == "proposed by the assistant from what you said (confidence 1.0)"
    )
    assert dialog.invisible_warning.isHidden()
    dialog.content_edit.setPlainText("   ")
    assert not dialog.save_button.isEnabled()
    results: list[Any] = []
    dialog.decided.connect(results.append)
    dialog.reject()
    dialog.reject()
    assert results == [None]
    dialog.deleteLater()


def test_escapes_round_trip():
    original = "a\u200bb\u202ec\\u0041"
    assert invisible_count(original) == 2
    assert exact_text("a\\u200bb\\u202ec\\u0041", original) == original
    # Edited: escapes of invisible characters come back as those characters; others stay text.
    assert (
        unescape_invisible("x\\u200by\\u0041\\U000e0041\\ud800")
        == "x\u200by\\u0041\U000e0041\\ud800"
    )


# -- the Remember… action and /remember ------------------------------------------------------


async def test_remember_action_on_a_message(etos: EtosApp, server: FakeOpenAIServer):
    server.script(Text("Nice! Oolong is lovely."))
    await type_and_send(etos, "I drink oolong tea every morning. What goes well with it?")
    rows = await history(etos)
    user_widget = etos.window.chat.widget(rows[0].id)
    remember = user_widget.findChild(QToolButton, "rememberButton")
    assert remember.isVisible()
    assert etos.window.chat.widget(rows[1].id).findChild(QToolButton, "rememberButton").isVisible()
    await click(remember)
    editor = open_dialog(etos, MemoryTextDialog, "rememberDialog")
    assert editor.text_edit.toPlainText() == rows[0].content
    editor.text_edit.setPlainText("I keep my bank PIN 1234 and card 4111 1111 1111 1111")
    await click(editor.save_button)
    await idle(etos)
    assert editor.isVisible()
    assert "card number" in editor.error_label.text()
    editor.text_edit.setPlainText("The user drinks oolong tea every morning")
    editor.kind_combo.setCurrentIndex(editor.kind_combo.findData("preference"))
    closed = expect_signal(editor.finished)
    await click(editor.save_button)
    await idle(etos)
    assert await asyncio.wait_for(closed, TIMEOUT) == (QDialog.DialogCode.Accepted.value,)
    stored = await memories(etos)
    assert [(m.content, m.kind, m.source) for m in stored] == [
        ("The user drinks oolong tea every morning", "preference", "user_statement")
    ]
    notes = [n for n in user_widget.notes() if isinstance(n, MemoryNote)]
    assert [n.label.text() for n in notes] == [
        f"Saved to memory as #{stored[0].id}: The user drinks oolong tea every morning"
    ]
    # Nothing was sent for it, and the composer was left alone.
    assert len(server.chat_requests()) == 1
    await assert_view_equals_reopen(etos)


async def test_remember_command(etos: EtosApp, server: FakeOpenAIServer):
    chat = etos.window.chat
    # No conversation is open: none is created for it.
    await type_and_send(etos, "/remember I use pnpm")
    assert chat.composer.toPlainText() == ""
    assert etos.window.sidebar.model.rowCount() == 0
    notes = chat.memory_notes()
    assert [n.label.text() for n in notes] == ["Saved to memory as #1: I use pnpm"]
    assert [(m.content, m.source) for m in await memories(etos)] == [
        ("I use pnpm", "user_statement")
    ]
    # In a conversation: still no request and nothing in the history.
    server.script(Text("hello"))
    await type_and_send(etos, "hi")
    await type_and_send(etos, "/remember My dog is called Biscuit")
    assert chat.composer.toPlainText() == ""
    assert len(server.chat_requests()) == 1
    assert [r.content for r in await history(etos)] == ["hi", "hello"]
    assert chat.memory_notes()[-1].label.text() == "Saved to memory as #2: My dog is called Biscuit"
    # The standalone note's Undo works like any other.
    await click(chat.memory_notes()[-1].undo_button)
    await idle(etos)
    assert [m.id for m in await memories(etos)] == [1]
    await assert_view_equals_reopen(etos)


async def test_refused_remember_command_keeps_the_text_and_says_why(
    etos: EtosApp, server: FakeOpenAIServer
):
    chat = etos.window.chat
    text = "/remember my key is sk-abcdefghijklmnopqrstuvwx1234"
    await type_and_send(etos, text)
    assert chat.composer.toPlainText() == text
    assert chat.banner.isVisible()
    assert "looks like an API key" in chat.banner_label.text()
    assert await memories(etos) == []
    await type_and_send(etos, "/remember")
    assert "Write what to remember after /remember" in chat.banner_label.text()


async def test_a_refused_remember_in_a_conversation_says_nothing_was_saved_and_clears(
    etos: EtosApp, server: FakeOpenAIServer
):
    """Issue 19: 'The message was not sent' was said, and the banner stayed after a save."""
    server.script(Text("hello"))
    await type_and_send(etos, "hi there")
    await idle(etos)
    chat = etos.window.chat
    await type_and_send(etos, "/remember my key is sk-abcdefghijklmnopqrstuvwx1234")
    assert chat.banner_label.text().startswith("Not saved: this looks like an API key.")
    assert etos.window.statusBar().currentMessage().startswith("Nothing was saved to memory.")
    await type_and_send(etos, "/remember I like green tea")
    await idle(etos)
    assert [m.content for m in await memories(etos)] == ["I like green tea"]
    assert not chat.banner.isVisible()
    assert len(server.chat_requests()) == 1  # /remember is never sent to the model


async def test_temporary_conversation_uses_no_memory(etos: EtosApp, server: FakeOpenAIServer):
    assert etos.memory is not None
    await etos.memory.save(PNPM, "preference")
    await new_conversation(etos, temporary=True)
    chat = etos.window.chat
    await type_and_send(etos, "/remember I like tea")
    assert chat.composer.toPlainText() == "/remember I like tea"
    assert "temporary conversation" in chat.banner_label.text()
    server.script(Text("npm install"))
    await type_and_send(etos, INSTALL_QUESTION)
    body = server.chat_requests()[0].body
    assert "tools" not in body
    assert memory_block(body) is None
    assert "pnpm" not in json.dumps(body)
    assert [m.content for m in await memories(etos)] == [PNPM]
    inspector = await open_inspector(etos, await last_reply(etos))
    assert inspector.memory_status.text().startswith("Memory was off: this is a temporary")
    assert not any(t.startswith("Memories") for t in inspector.item_titles())
    inspector.close()


# -- the context inspector --------------------------------------------------------------------


async def test_inspector_for_a_general_question_and_copy_as_json(
    etos: EtosApp, server: FakeOpenAIServer
):
    assert etos.memory is not None
    await etos.memory.save(PNPM, "preference")
    server.script(Text("Paris."))
    await type_and_send(etos, "What is the capital of France?")
    body = server.chat_requests()[0].body
    assert memory_block(body) is None
    inspector = await open_inspector(etos, await last_reply(etos))
    assert inspector.memory_status.text() == (
        "No saved memory was relevant to this message, so none was sent.\n"
        "Chosen by: retrieval — a fixed number per message (Settings → Memory), so the ones "
        "relevant to this message were chosen."
    )
    assert "Searched with: What is the capital of France?" in inspector.item_text(
        "Memories — none sent"
    )
    system = inspector.item_text("System message")
    assert system == body["messages"][0]["content"]
    await click(inspector.copy_button)
    copied = json.loads(QGuiApplication.clipboard().text())
    assert copied["retrieval_query"] == "What is the capital of France?"
    assert copied["memories"] == []
    assert copied["blocks"][0]["text"] == body["messages"][0]["content"]
    inspector.close()


async def test_inspector_in_compatibility_mode_and_with_history(
    etos: EtosApp, server: FakeOpenAIServer
):
    assert etos.memory is not None
    # The environment provider is read-only; a saved one can say "one system message only".
    from etos_desktop.core.providers.config import ProviderConfig

    etos.settings.upsert_provider(
        ProviderConfig(
            id="compat",
            name="Compat",
            preset="custom",
            base_url=server.base_url,
            chat_model="fake-chat",
            single_system_message=True,
        )
    )
    await etos.memory.save(PNPM, "preference")
    server.script(Text("Hi!"), Text("Use pnpm install."))
    await type_and_send(etos, "Hello there")
    await type_and_send(etos, INSTALL_QUESTION)
    body = server.chat_requests()[1].body
    assert body["messages"][-1]["content"].startswith(MEMORY_IN_USER_MESSAGE_NOTE["en"])
    inspector = await open_inspector(etos, await last_reply(etos))
    assert "at the top of your message" in inspector.memory_status.text()
    assert any(
        t.startswith("Memories — at the top of your message") for t in inspector.item_titles()
    )
    assert any(t == "Conversation history: 2 of 2 messages" for t in inspector.item_titles())
    assert "messages 1–2" in inspector.item_text("Conversation history")
    inspector.select("#1 Preference")
    assert "Why it was chosen" in inspector.text.toPlainText()
    inspector.close()


def test_note_texts(qapp: QApplication):
    note = MemoryNote(7, "<b>" + "x" * 300)
    assert note.label.text() == "Saved to memory as #7: <b>" + "x" * 237 + "…"
    # The whole text in the tooltip, shown as typed (escaped), never as markup.
    assert note.label.toolTip() == plain_tooltip("<b>" + "x" * 300)
    assert "&lt;b&gt;" in note.label.toolTip()
    note.set_error("Memory #7 no longer exists.")
    assert note.error_label.text() == "Memory #7 no longer exists."
    note.set_undone()
    assert note.error_label.isHidden()
    assert note.label.text() == "Undone — #7 is no longer in memory."
    note.deleteLater()


def test_remember_button_on_every_message(qapp: QApplication):
    for role in ("user", "assistant"):
        widget = MessageWidget(5, role, author="Etos")
        button = widget.findChild(QToolButton, "rememberButton")
        assert button.accessibleName().startswith("Remember…")
        assert button.toolTip() == button.accessibleName()
        assert not button.isEnabled()  # nothing to remember yet
        widget.set_text("I use pnpm", streaming=False)
        assert button.isEnabled()
        widget.set_status("streaming")
        assert not button.isEnabled()
        widget.set_status("complete")
        asked: list[int] = []
        widget.remember_requested.connect(asked.append)
        button.click()
        assert asked == [5]
        widget.deleteLater()


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (MemoryEmpty("empty memory", reason="empty"), "Nothing to remember: the text is empty."),
        (
            MemoryTooLong("x", reason="too_long", length=1200, limit=1000),
            "Too long to remember (1200 characters; the limit is 1000). Keep one or a few short "
            "sentences.",
        ),
        (
            MemorySecret("refused", reason="api_key"),
            "Not saved: this looks like an API key. Secrets and ID numbers are never kept in "
            "memory.",
        ),
        (
            MemorySecret("refused", reason="id_number"),
            "Not saved: this looks like an ID number. Secrets and ID numbers are never kept in "
            "memory.",
        ),
        (
            MemoryLimitReached("full", reason="limit", limit=10000),
            "Not saved: the memory is full (10000 active memories). Archive or delete some in "
            "Settings → Memory.",
        ),
        (MemoryNotFound("no", memory_id=7), "Memory #7 no longer exists."),
        (
            InvalidInput("memory is turned off", reason="memory_off"),
            "Memory is turned off. Turn it on in Settings → Memory to save memories.",
        ),
        (
            InvalidInput("temporary conversation", reason="temporary"),
            "This is a temporary conversation: nothing is saved to or read from memory.",
        ),
        (InvalidInput("empty message", reason="empty"), "The message is empty."),
    ],
)
def test_memory_error_words(qapp: QApplication, error: EtosError, words: str):
    assert describe(error).message == words
