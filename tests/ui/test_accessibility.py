"""Accessibility basics and the keyboard: names for every control, Tab to every control, shortcuts.

Every interactive control of the main window (with the showcase conversation, and with the
welcome of a new conversation), of each Settings page, the inspector and the other dialogs
must have the name a screen reader reads out; Tab must reach each one; the shortcuts listed in
Help → Keyboard shortcuts must do what they say.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPushButton, QToolButton, QWidget

from etos_desktop.app import EtosApp
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.message_search import MessageSearchDialog
from etos_desktop.ui.persona_dialog import PersonaOverrideDialog
from etos_desktop.ui.settings.dialog import SettingsDialog
from etos_desktop.ui.shortcuts import SHORTCUTS, WIDGET_KEYS, ShortcutsDialog
from tests.helpers import showcase
from tests.helpers.accessibility import (
    accessible_name,
    controls,
    describe,
    focus_chain,
    takes_tab_focus,
    unnamed_controls,
)
from tests.helpers.chat_app import history, idle, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, find_dialog, wait_until

TIMEOUT = 15


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment)
    app.window.resize(1400, 880)
    app.window.activateWindow()
    await showcase.fill(app, server)
    yield app
    await stop_app(app)


async def _settle() -> None:
    await asyncio.sleep(0.05)


def _not_reached(window: QWidget, chain: list[QWidget]) -> list[str]:
    wanted = [w for w in controls(window) if w.isEnabled()]
    problems = [f"{describe(w)}: Tab cannot focus it" for w in wanted if not takes_tab_focus(w)]
    problems += [f"{describe(w)}: not reached" for w in wanted if w not in chain]
    return problems


async def _inspector(app: EtosApp) -> ContextDialog:
    rows = await history(app)
    reply = next(r for r in rows if r.role == "assistant")
    widget = app.window.chat.widget(reply.id)
    assert widget is not None
    await click(widget.findChild(QToolButton, "contextButton"))
    await idle(app)
    return await wait_until(
        lambda: next((d for d in app.window.findChildren(ContextDialog) if d.isVisible()), None)
    )


async def test_every_control_has_an_accessible_name(etos: EtosApp) -> None:
    window = etos.window
    problems = [f"main window: {p}" for p in unnamed_controls(window)]
    # Icon-like buttons say what they do, not their glyph.
    assert accessible_name(window.chat.banner_close) == "Dismiss"
    window.new_action.trigger()
    await idle(etos)
    await _settle()
    assert window.chat.welcome_shown()
    problems += [f"welcome: {p}" for p in unnamed_controls(window)]

    dialog = etos.open_settings()
    assert dialog is not None
    for name in dialog.page_names():
        dialog.show_page(name)
        await dialog.wait_idle()
        await _settle()
        problems += [f"settings {name}: {p}" for p in unnamed_controls(dialog)]
    dialog.reject()

    rows = await etos.controller.repo.list_conversations(limit=1)
    await etos.controller.open_conversation(rows[0].id)
    await idle(etos)
    inspector = await _inspector(etos)
    problems += [f"inspector: {p}" for p in unnamed_controls(inspector)]
    window.persona_action.trigger()
    persona = await find_dialog(PersonaOverrideDialog)
    problems += [f"persona: {p}" for p in unnamed_controls(persona)]
    for shown in (window.show_about(), window.show_shortcuts()):
        await _settle()
        problems += [f"{shown.objectName()}: {p}" for p in unnamed_controls(shown)]
        shown.close()
    persona.close()
    inspector.close()
    assert not problems, "\n".join(problems)


async def test_tab_reaches_every_control_of_the_chat(etos: EtosApp) -> None:
    window = etos.window
    await _settle()
    chain = await focus_chain(window.chat.composer)
    assert window.sidebar.search in chain
    assert window.sidebar.view in chain
    problems = _not_reached(window, chain)
    # With text in the composer Send is on, and Tab reaches it too.
    window.chat.composer.setPlainText("draft")
    chain = await focus_chain(window.chat.composer)
    assert window.chat.send_button in chain
    window.chat.composer.clear()
    # The welcome of a new conversation.
    window.new_action.trigger()
    await idle(etos)
    await _settle()
    chain = await focus_chain(window.chat.composer)
    assert window.chat.welcome.memory_button in chain
    assert window.chat.temporary in chain
    problems += _not_reached(window, chain)
    assert not problems, "\n".join(problems)


async def test_tab_reaches_every_control_of_each_settings_page(etos: EtosApp) -> None:
    dialog = etos.open_settings()
    assert dialog is not None
    dialog.activateWindow()
    problems = []
    for name in dialog.page_names():
        dialog.show_page(name)
        await dialog.wait_idle()
        await _settle()
        chain = await focus_chain(dialog.page_list)
        assert dialog.save_button in chain
        problems += [f"{name}: {p}" for p in _not_reached(dialog, chain)]
    dialog.reject()
    assert not problems, "\n".join(problems)


# -- shortcuts --------------------------------------------------------------------------------


def _press(
    window: QWidget, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    focused = QApplication.focusWidget() or window
    QTest.keyClick(focused, key, modifiers)


async def test_the_shortcuts_do_what_the_list_says(etos: EtosApp, server: FakeOpenAIServer) -> None:
    window = etos.window
    chat = window.chat
    ctrl = Qt.KeyboardModifier.ControlModifier
    shift = Qt.KeyboardModifier.ShiftModifier
    listed = {s.id for s in SHORTCUTS} - WIDGET_KEYS
    bound = {
        "new": window.new_action,
        "new_temporary": window.new_temp_action,
        "search": window.search_action,
        "search_messages": window.search_messages_action,
        "find": window.find_action,
        "focus_composer": window.focus_composer_action,
        "stop": window.stop_action,
        "regenerate": window.regenerate_action,
        "copy_reply": window.copy_reply_action,
        "rename": window.rename_action,
        "settings": window.settings_action,
        "shortcuts": window.shortcuts_action,
        "quit": window.quit_action,
    }
    assert set(bound) == listed
    for shortcut_id, action in bound.items():
        keys = next(s.keys for s in SHORTCUTS if s.id == shortcut_id)
        assert [k.toString() for k in action.shortcuts()] == list(keys), shortcut_id

    window.activateWindow()
    chat.composer.setFocus()
    await _settle()
    # Search conversations: Ctrl+K; find in this one: Ctrl+F (Esc closes it).
    _press(window, Qt.Key.Key_K, ctrl)
    assert QApplication.focusWidget() is window.sidebar.search
    chat.composer.setFocus()
    _press(window, Qt.Key.Key_F, ctrl)
    find_bar = window.message_search.find_bar
    assert QApplication.focusWidget() is find_bar.field
    _press(window, Qt.Key.Key_Escape)
    assert not find_bar.isVisible()
    assert QApplication.focusWidget() is chat.composer
    # Search every message: Ctrl+Shift+F opens its dialog; Esc closes it.
    _press(window, Qt.Key.Key_F, ctrl | shift)
    search = await find_dialog(MessageSearchDialog)
    assert search.focusWidget() is search.field
    QTest.keyClick(search.field, Qt.Key.Key_Escape)
    assert not search.isVisible()
    window.activateWindow()
    chat.composer.setFocus()
    await _settle()
    # Back to the composer: Ctrl+L.
    _press(window, Qt.Key.Key_L, ctrl)
    assert QApplication.focusWidget() is chat.composer

    # Copy the last reply: Ctrl+Shift+C.
    QGuiApplication.clipboard().clear()
    last = chat.last_reply()
    assert last is not None
    _press(window, Qt.Key.Key_C, ctrl | shift)
    assert QGuiApplication.clipboard().text() == last.text()

    # Regenerate: Ctrl+R asks the server again for the last message.
    before = len(server.chat_requests())
    server.script(Text('Writing it back: use `df.to_csv("out.csv")`.'))
    finished = expect_signal(etos.controller.reply_finished)
    _press(window, Qt.Key.Key_R, ctrl)
    await asyncio.wait_for(finished, TIMEOUT)
    await idle(etos)
    assert len(server.chat_requests()) == before + 1
    assert server.chat_requests()[-1].body["messages"][-1]["content"] == showcase.LAST["en"]

    # Up in the empty composer edits the last message.
    chat.composer.setFocus()
    QTest.keyClick(chat.composer, Qt.Key.Key_Up)
    assert chat.editing()
    assert chat.composer.toPlainText() == showcase.LAST["en"]
    # Esc leaves the edit.
    _press(window, Qt.Key.Key_Escape)
    assert not chat.editing()
    assert chat.composer.toPlainText() == ""

    # Settings: Ctrl+, ; the list of shortcuts: Ctrl+/.
    _press(window, Qt.Key.Key_Comma, ctrl)
    settings = await find_dialog(SettingsDialog)
    settings.reject()
    window.activateWindow()
    chat.composer.setFocus()
    _press(window, Qt.Key.Key_Slash, ctrl)
    shortcuts = await find_dialog(ShortcutsDialog)
    assert ("Ctrl+R", "Regenerate the last reply") in shortcuts.rows()
    shortcuts.close()

    # New conversation: Ctrl+N, with the welcome and the composer focused.
    window.activateWindow()
    chat.composer.setFocus()
    opened = expect_signal(etos.controller.conversation_opened)
    _press(window, Qt.Key.Key_N, ctrl)
    await asyncio.wait_for(opened, TIMEOUT)
    assert chat.welcome_shown()
    assert QApplication.focusWidget() is chat.composer


async def test_welcome_says_what_is_remembered(etos: EtosApp) -> None:
    chat = etos.window.chat
    etos.window.new_action.trigger()
    await idle(etos)
    await wait_until(lambda: chat.welcome.memory_count is not None)
    assert chat.welcome.memory_count == 1
    assert chat.welcome.memory_line.text() == "I remember 1 thing about you."
    assert "/remember" in chat.welcome.teach_line.text()
    assert chat.welcome.title.text() == "Hi, I'm Etos."
    # From the welcome, the memories are a click away.
    requested = expect_signal(etos.window.settings_requested)
    await click(chat.welcome.memory_button)
    assert await asyncio.wait_for(requested, TIMEOUT) == ("memory",)
    await wait_until(lambda: etos._settings_dialog is not None)
    assert etos._settings_dialog.current_page_name() == "memory"
    etos._settings_dialog.reject()
    # A temporary conversation says it remembers nothing there.
    etos.window.new_temp_action.trigger()
    await idle(etos)
    assert "temporary conversation" in chat.welcome.memory_line.text()
    assert not chat.welcome.teach_line.isVisibleTo(chat.welcome)
    # /remember from the welcome counts up.
    etos.window.new_action.trigger()
    await idle(etos)
    chat.composer.setPlainText("/remember I like green tea")
    await click(chat.send_button)
    await idle(etos)
    etos.window.new_action.trigger()
    await idle(etos)
    await wait_until(lambda: chat.welcome.memory_count == 2)


async def test_messages_keep_to_a_readable_column(etos: EtosApp, server: FakeOpenAIServer) -> None:
    window = etos.window
    window.resize(1400, 880)
    long_text = " ".join(
        ["Reading long lines is tiring for the eyes, so the column stays narrow."] * 6
    )
    server.script(Text(long_text))
    from tests.helpers.chat_app import send

    result = await send(etos, "Tell me about line length.")
    await _settle()
    widget = window.chat.widget(result[1].id)
    assert widget is not None
    document = widget._browser.document()
    layout = document.firstBlock().layout()
    lengths = [layout.lineAt(i).textLength() for i in range(layout.lineCount())]
    # At most ~80 characters a line in a 1,400 px window (it was ~190 before).
    assert max(lengths) <= 88, lengths
    assert layout.lineCount() > 3
    # The companion's reply has its avatar and name; the user's message is on the right.
    avatar = widget.findChild(QWidget, "messageAvatar")
    assert avatar is not None
    assert avatar.isVisible()
    user = window.chat.widget(result[1].reply_to_id)
    assert user is not None
    assert user.findChild(QWidget, "messageAvatar") is None
    column_right = widget.mapTo(window, widget.rect().topRight()).x()
    user_right = user.mapTo(window, user.rect().topRight()).x()
    user_left = user.mapTo(window, user.rect().topLeft()).x()
    widget_left = widget.mapTo(window, widget.rect().topLeft()).x()
    assert abs(user_right - column_right) <= 2
    assert user_left > widget_left + 100  # a short message makes a small bubble on the right


async def test_the_banner_close_button_is_named_and_works(etos: EtosApp) -> None:
    chat = etos.window.chat
    assert chat.banner.isVisible()
    assert isinstance(chat.banner_close, QPushButton)
    await click(chat.banner_close)
    assert not chat.banner.isVisible()
