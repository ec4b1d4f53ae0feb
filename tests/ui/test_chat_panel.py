"""The chat panel's composer on its own: large pastes, and what a keystroke costs (issue 21 item 7)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QInputMethodEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolButton
from pytestqt.qtbot import QtBot

from etos_desktop.core.chat.service import MessageRoom
from etos_desktop.core.context import tokens as tokens_module
from etos_desktop.core.context.tokens import estimate_message_tokens
from etos_desktop.ui import chat_panel as chat_panel_module
from etos_desktop.ui.chat_panel import ChatPanel

MEGABYTE = 1_000_000
PROSE = "The quick brown fox jumps over the lazy dog; 中文内容也在这里。 " * 12 + "\n"


@pytest.fixture
def panel(qtbot: QtBot) -> ChatPanel:
    chat = ChatPanel()
    qtbot.addWidget(chat)
    chat.resize(900, 600)
    chat.show()
    qtbot.waitExposed(chat)
    return chat


def paste(chat: ChatPanel, text: str) -> None:
    """Ctrl+V in the composer with ``text`` on the clipboard, as a person pastes."""
    QGuiApplication.clipboard().setText(text)
    chat.composer.setFocus()
    QTest.keyClick(chat.composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def sent(chat: ChatPanel) -> list[str]:
    messages: list[str] = []
    chat.send_requested.connect(messages.append)
    return messages


def test_a_large_paste_is_kept_beside_the_editor_and_sent_whole(panel: ChatPanel, qtbot: QtBot):
    line = '{"k":"dGhlIHF1aWNr","n":1},' * (MEGABYTE // 26)
    paste(panel, line)
    # Not in the editor (a 1 MB line took Qt 1.3 s, and 1.2 s per keystroke after).
    assert panel.composer.toPlainText() == ""
    (pasted,) = panel.pasted_texts()
    assert pasted.isVisibleTo(panel)
    shown = re.match(r"Pasted text: ([\d,]+) characters, 1 line", pasted.label.text())
    assert shown is not None
    assert int(shown.group(1).replace(",", "")) == len(line)  # the locale's digit grouping
    assert panel.send_button.isEnabled()
    qtbot.keyClicks(panel.composer, "what is wrong here?")
    messages = sent(panel)
    qtbot.mouseClick(panel.send_button, Qt.MouseButton.LeftButton)
    assert messages == ["what is wrong here?\n\n" + line]


def test_a_small_paste_goes_into_the_editor(panel: ChatPanel):
    paste(panel, PROSE * 10)
    assert panel.composer.toPlainText() == PROSE * 10
    assert panel.pasted_texts() == []


def test_removing_the_pasted_text_leaves_nothing_to_send(panel: ChatPanel, qtbot: QtBot):
    paste(panel, PROSE * (MEGABYTE // len(PROSE)))
    (pasted,) = panel.pasted_texts()
    qtbot.mouseClick(pasted.remove_button, Qt.MouseButton.LeftButton)
    assert panel.pasted_texts() == []
    assert not panel.pastes_box.isVisibleTo(panel)
    assert not panel.send_button.isEnabled()
    assert panel.draft_text() == ""


def test_the_token_count_of_a_large_paste_equals_the_estimate_of_the_message(
    panel: ChatPanel, qtbot: QtBot
):
    panel.set_message_room(MessageRoom(tokens=500_000, model="big-model"))
    paste(panel, PROSE * (MEGABYTE // len(PROSE)))
    qtbot.keyClicks(panel.composer, "Summarise ")
    chinese = QInputMethodEvent()
    chinese.setCommitString("这个")  # as an input method commits it
    QApplication.sendEvent(panel.composer, chinese)
    qtbot.waitUntil(lambda: panel.token_label.isVisible(), timeout=5000)
    expected = estimate_message_tokens({"role": "user", "content": panel.draft_text()})
    assert panel.draft_tokens() == expected
    assert panel.token_label.text().replace(",", "") == (
        f"About {expected} of the 500000 tokens big-model takes for a message"
    )
    # Over the limit, Send refuses it and says why; nothing is sent, nothing is lost.
    panel.set_message_room(MessageRoom(tokens=100_000, model="big-model"))
    messages = sent(panel)
    qtbot.mouseClick(panel.send_button, Qt.MouseButton.LeftButton)
    assert messages == []
    said = panel.token_label.text().replace(",", "")
    assert said.startswith(f"Too long to send: about {expected} tokens")
    assert len(panel.pasted_texts()) == 1


def test_typing_after_a_large_paste_does_no_work_proportional_to_it(
    panel: ChatPanel, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
):
    """Issue 21 item 7: the count is taken once per paste and once per pause, never per key."""
    panel.set_message_room(MessageRoom(tokens=5_000_000, model="big-model"))
    paste(panel, PROSE * (MEGABYTE // len(PROSE)))
    (pasted,) = panel.pasted_texts()
    # The paste is counted in steps on the event loop, not at once.
    assert pasted.cjk is None
    qtbot.waitUntil(lambda: pasted.cjk is not None, timeout=5000)
    counted: list[int] = []
    real_count = tokens_module.count_cjk

    def count_cjk(text: str) -> int:
        counted.append(len(text))
        return real_count(text)

    monkeypatch.setattr(tokens_module, "count_cjk", count_cjk)
    reads: list[int] = []
    real_read = panel.composer.toPlainText

    def to_plain_text() -> str:
        text = real_read()
        reads.append(len(text))
        return text

    monkeypatch.setattr(panel.composer, "toPlainText", to_plain_text)
    typed = "and one more thing"
    for key in typed:
        QTest.keyClick(panel.composer, key)
    # Per keystroke: no count and no copy of the draft.
    assert counted == []
    assert reads == []
    assert panel._count_timer.isActive()  # the count waits for typing to pause
    qtbot.waitUntil(lambda: not panel._count_timer.isActive(), timeout=5000)
    # Once the typing paused: the typed text alone is read and counted, the paste not again.
    assert reads == [len(typed)]
    assert counted == [len(typed)]


def test_a_paste_is_counted_in_steps_of_bounded_size(panel: ChatPanel, qtbot: QtBot):
    panel.set_message_room(MessageRoom(tokens=5_000_000, model="big-model"))
    steps: list[int] = []
    real_count = tokens_module.count_cjk

    def count_cjk(text: str) -> int:
        steps.append(len(text))
        return real_count(text)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokens_module, "count_cjk", count_cjk)
        paste(panel, "x" * (3 * MEGABYTE))
        (pasted,) = panel.pasted_texts()
        qtbot.waitUntil(lambda: pasted.cjk is not None, timeout=5000)
    assert pasted.cjk == 0
    assert sum(steps) == 3 * MEGABYTE
    assert max(steps) <= chat_panel_module.COUNT_STEP_CHARS


def test_editing_a_long_message_keeps_it_as_pasted_text(panel: ChatPanel, qtbot: QtBot):
    from datetime import UTC, datetime

    from etos_desktop.core.storage.tables import MessageRow

    long_text = "word " * 60_000
    row = MessageRow(
        id=7,
        conversation_id=1,
        role="user",
        content=long_text,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    panel.show_conversation(None, [row], has_more=False)
    widget: Any = panel.widget(7)
    edit = widget.findChild(QToolButton, "editButton")
    qtbot.waitUntil(edit.isVisible)  # shown by the layout on the next pass of the loop
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    assert panel.editing()
    assert panel.composer.toPlainText() == ""
    assert [p.text for p in panel.pasted_texts()] == [long_text]
    panel.cancel_edit()
    assert panel.pasted_texts() == []
