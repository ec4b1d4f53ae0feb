"""The chat's look through the real widgets: bubbles, avatar, and actions shown on hover or focus.

A real ``ChatPanel`` (light theme's style sheet) shows a user message and a reply. The user's
message is a bubble on the right, narrower than the view; the reply has the companion's avatar.
Each message's actions are icon buttons, hidden until the pointer enters the message (a real
``QEnterEvent``) or the keyboard's Tab reaches one of them; each has a tooltip and an accessible
name, and the copy icon copies.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QEnterEvent, QGuiApplication, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from etos_desktop.core.storage.tables import MessageRow
from etos_desktop.resources import resource_path
from etos_desktop.ui.bubbles import BUBBLE_SHARE
from etos_desktop.ui.chat_panel import ChatPanel
from etos_desktop.ui.message_actions import ActionButton
from etos_desktop.ui.message_widget import MessageWidget

THEME = resource_path("themes", "light.qss").read_text(encoding="utf-8")
WHEN = datetime(2026, 3, 10, 9, 30, tzinfo=UTC)
QUESTION = "How do I read a CSV file with pandas?"
ANSWER = "Use `pandas.read_csv` — it guesses the types for you."


def _rows() -> list[MessageRow]:
    return [
        MessageRow(id=1, conversation_id=1, role="user", content=QUESTION, created_at=WHEN),
        MessageRow(
            id=2,
            conversation_id=1,
            role="assistant",
            content=ANSWER,
            created_at=WHEN,
            reply_to_id=1,
        ),
    ]


@pytest.fixture
def panel(qtbot: QtBot) -> ChatPanel:
    chat = ChatPanel()
    chat.setStyleSheet(THEME)
    qtbot.addWidget(chat)
    chat.resize(900, 640)
    chat.show()
    qtbot.waitExposed(chat)
    chat.show_conversation(None, _rows(), has_more=False)
    return chat


def _widget(panel: ChatPanel, message_id: int) -> MessageWidget:
    widget = panel.widget(message_id)
    assert widget is not None
    return widget


def _settle(qtbot: QtBot, panel: ChatPanel) -> None:
    # The layout places new widgets on the next pass of the loop.
    qtbot.waitUntil(lambda: _widget(panel, 1).isVisible() and _widget(panel, 2).isVisible())
    QApplication.processEvents()


def _actions(widget: MessageWidget) -> list[ActionButton]:
    return [b for b in widget.action_bar().buttons() if not b.isHidden()]


def _blank(button: QWidget) -> bool:
    """Whether ``button`` paints nothing (its picture is one colour)."""
    image = button.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
    first = image.pixel(0, 0)
    return all(
        image.pixel(x, y) == first for x in range(image.width()) for y in range(image.height())
    )


def test_the_users_message_is_a_narrower_bubble_on_the_right(
    panel: ChatPanel, qtbot: QtBot
) -> None:
    _settle(qtbot, panel)
    mine, reply = _widget(panel, 1), _widget(panel, 2)
    view = panel.scroll.viewport()
    column = panel.messages.shown_column_width()
    mine_rect = mine.geometry()
    reply_rect = reply.geometry()
    # Right-aligned: it ends where the column ends (the reply's right edge), and starts far
    # to the right of the reply's start.
    assert abs(mine_rect.right() - reply_rect.right()) <= 2
    assert mine_rect.left() > reply_rect.left() + column // 5
    assert mine.width() < view.width()
    assert mine.width() <= round(column * BUBBLE_SHARE) + 1
    # The companion's reply has its avatar; the user's bubble has none.
    avatar = reply.findChild(QLabel, "messageAvatar")
    assert avatar is not None
    assert avatar.isVisible()
    assert not avatar.pixmap().isNull()
    assert mine.findChild(QLabel, "messageAvatar") is None
    # A long message grows to the cap, no further; a narrower window narrows the cap.
    panel.show_conversation(
        None,
        [MessageRow(id=3, conversation_id=1, role="user", content="word " * 400, created_at=WHEN)],
        has_more=False,
    )
    qtbot.waitUntil(lambda: _widget(panel, 3).isVisible())
    wide = _widget(panel, 3).width()
    assert wide <= round(panel.messages.shown_column_width() * BUBBLE_SHARE) + 1
    panel.resize(560, 640)
    qtbot.waitUntil(lambda: _widget(panel, 3).width() < wide)
    assert _widget(panel, 3).width() <= round(panel.messages.shown_column_width() * 0.76)


def test_the_avatar_is_the_personas_image_when_it_has_one(panel: ChatPanel, qtbot: QtBot) -> None:
    _settle(qtbot, panel)
    avatar = _widget(panel, 2).findChild(QLabel, "messageAvatar")
    assert avatar is not None
    initial = avatar.pixmap().toImage()
    picture = QImage(64, 64, QImage.Format.Format_ARGB32)
    picture.fill(Qt.GlobalColor.darkGreen)
    panel.set_companion_avatar(picture)
    drawn = avatar.pixmap().toImage()
    assert drawn != initial
    centre = drawn.pixelColor(drawn.width() // 2, drawn.height() // 2)
    assert centre.green() > centre.red()
    assert centre.green() > centre.blue()


def test_actions_are_hidden_until_the_pointer_enters_the_message(
    panel: ChatPanel, qtbot: QtBot
) -> None:
    _settle(qtbot, panel)
    reply = _widget(panel, 2)
    bar = reply.action_bar()
    copy = reply.findChild(QToolButton, "copyButton")
    assert isinstance(copy, ActionButton)
    assert not bar.revealed()
    assert all(not b.shown() for b in _actions(reply))
    assert _blank(copy)
    # Laid out all along (nothing moves when they appear), and reachable.
    assert copy.isVisible()

    enter = QEnterEvent(QPointF(10, 10), QPointF(10, 10), QPointF(10, 10))
    QApplication.sendEvent(reply, enter)
    assert bar.revealed()
    assert all(b.shown() for b in _actions(reply))
    assert not _blank(copy)
    # Only this message's actions show.
    assert not _widget(panel, 1).action_bar().revealed()

    QApplication.sendEvent(reply, QEvent(QEvent.Type.Leave))
    assert not bar.revealed()
    assert _blank(copy)


def test_tab_reaches_the_actions_and_shows_them(panel: ChatPanel, qtbot: QtBot) -> None:
    _settle(qtbot, panel)
    panel.activateWindow()
    mine = _widget(panel, 1)
    first = mine.action_bar().buttons()[0]
    # From the conversation's top (the user message's text), Tab goes on to its actions.
    start = mine.findChild(QWidget, "messageContent")
    assert start is not None
    start.setFocus(Qt.FocusReason.TabFocusReason)
    reached: list[str] = []
    for _ in range(12):
        QTest.keyClick(QApplication.focusWidget() or panel, Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        reached.append(focused.objectName() if focused is not None else "")
        if focused is first:
            break
    assert QApplication.focusWidget() is first, reached
    assert mine.action_bar().revealed()
    assert not _blank(first)
    # Tab on: the next action has the focus and the bar still shows.
    QTest.keyClick(first, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is mine.action_bar().buttons()[1]
    assert mine.action_bar().revealed()
    # The focus goes elsewhere: hidden again.
    panel.composer.setFocus(Qt.FocusReason.TabFocusReason)
    assert not mine.action_bar().revealed()


@pytest.mark.parametrize("message_id", [1, 2])
def test_every_action_has_a_tooltip_and_an_accessible_name(
    panel: ChatPanel, qtbot: QtBot, message_id: int
) -> None:
    _settle(qtbot, panel)
    buttons = _actions(_widget(panel, message_id))
    assert len(buttons) >= 4
    names = [b.accessibleName() for b in buttons]
    assert all(names), names
    assert len(set(names)) == len(names)
    assert all(b.toolTip() for b in buttons)
    assert all(
        b.text() == "" or b.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly
        for b in buttons
    )
    assert all(not b.icon().isNull() for b in buttons)


def test_clicking_the_copy_icon_copies(panel: ChatPanel, qtbot: QtBot) -> None:
    _settle(qtbot, panel)
    reply = _widget(panel, 2)
    copy = reply.findChild(QToolButton, "copyButton")
    assert copy is not None
    QGuiApplication.clipboard().clear()
    QApplication.sendEvent(reply, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    copied: list[Any] = []
    reply.copy_requested.connect(copied.append)
    QTest.mouseClick(copy, Qt.MouseButton.LeftButton, pos=QPoint(copy.width() // 2, 4))
    assert QGuiApplication.clipboard().text() == ANSWER
    assert copied == [2]
    assert copy.accessibleName() == "Copied"


def test_the_composer_has_an_attach_icon_and_a_quiet_model_and_token_line(
    panel: ChatPanel, qtbot: QtBot
) -> None:
    from etos_desktop.core.chat.service import MessageRoom

    attach = panel.attach_button
    assert not attach.icon().isNull()
    assert attach.toolTip()
    assert attach.accessibleName() == "Attach files"
    indicator = panel.model_indicator
    # Until the model is known there is nothing to name.
    assert not indicator.isVisible()
    panel.set_message_room(MessageRoom(tokens=4000, model="fake-chat"))
    assert indicator.isVisible()
    assert indicator.text() == "fake-chat"
    # The draft's live count follows typing (once typing pauses).
    QTest.keyClicks(panel.composer, "How do I write the CSV file back to disk?")
    qtbot.waitUntil(lambda: indicator.tokens() > 0, timeout=3000)
    expected = panel.draft_tokens()
    assert expected
    assert indicator.text() == f"fake-chat · about {expected} tokens"
    assert indicator.accessibleName() == indicator.text()
    assert "4000" in indicator.toolTip().replace(",", "")
    # Quiet: the loud line (near the limit, too long) stays hidden for a short draft.
    assert not panel.token_label.isVisible()
    panel.composer.clear()
    qtbot.waitUntil(lambda: indicator.tokens() == 0, timeout=3000)
    assert indicator.text() == "fake-chat"
