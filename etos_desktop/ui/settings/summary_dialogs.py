"""The Summaries page's dialogs: the summary editor and a conversation's summary history.

The editor is opened with ``open()`` and awaited (``ui.dialogs.await_dialog``), its text read as
it finishes; the history is non-modal. Summary texts are shown as typed, with invisible
characters spelled out.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.summaries.access import MAX_EDIT_CHARS
from etos_desktop.core.summaries.records import Summary
from etos_desktop.core.summaries.writing import bounds_for, is_cjk_text, measure
from etos_desktop.core.text.checks import MemoryRejected, check_content
from etos_desktop.ui.dialogs import await_dialog
from etos_desktop.ui.job_text import local_time
from etos_desktop.ui.memory_text import memory_error_text, rich_escaped
from etos_desktop.ui.settings.history_dialog import HistoryDialog
from etos_desktop.ui.settings.page import error_label, help_label, set_state
from etos_desktop.ui.settings.summary_models import summary_state
from etos_desktop.ui.theme import colors


class SummaryEditorDialog(QDialog):
    """Edit one summary's text; refused text (empty, too long, a secret) is corrected in place."""

    def __init__(self, summary: Summary, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("summaryEditor")
        self.summary = summary
        self.title_label = QLabel(self)
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.title_label.setWordWrap(True)
        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setObjectName("summaryText")
        self.text_edit.setPlainText(summary.content)
        self.text_edit.moveCursor(QTextCursor.MoveOperation.End)
        self.text_edit.setTabChangesFocus(True)
        self.text_edit.textChanged.connect(self._on_text_edit_text_changed)
        self.length_label = help_label(self)
        self.error_label = error_label(self)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.length_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.retranslate()
        self.resize(560, 340)

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setWindowTitle(self.tr("Edit summary"))
        title = self.summary.conversation_title or self.tr("(untitled)")
        self.title_label.setText(
            self.tr("Summary of “{title}”, written {time}").format(
                title=title, time=local_time(self.summary.created_at)
            )
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setText(self.tr("Save"))
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(self.tr("Cancel"))
        self._on_text_edit_text_changed()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            set_state(self.error_label, "error")
        super().changeEvent(event)

    def text(self) -> str:
        """The text in the editor now."""
        return self.text_edit.toPlainText().strip()

    @override
    def accept(self) -> None:
        try:
            check_content(self.text_edit.toPlainText(), max_chars=MAX_EDIT_CHARS)
        except MemoryRejected as exc:
            self.error_label.setText(memory_error_text(exc))
            self.error_label.show()
            self.text_edit.setFocus()
            return
        super().accept()

    def _on_text_edit_text_changed(self) -> None:
        text = self.text()
        low, high = bounds_for(text)
        if is_cjk_text(text):
            words = self.tr("{n} characters (summaries are written with {low}–{high})")
        else:
            words = self.tr("{n} words (summaries are written with {low}–{high})")
        self.length_label.setText(words.format(n=measure(text), low=low, high=high))
        self.error_label.hide()


async def open_summary_editor(parent: QWidget, summary: Summary) -> str | None:
    """Show the editor; the saved text, or ``None`` when cancelled or unchanged."""
    dialog = SummaryEditorDialog(summary, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    text = await await_dialog(
        dialog,
        lambda result: dialog.text() if result == QDialog.DialogCode.Accepted else None,
        None,
    )
    return None if text is None or text == summary.content else text


class SummaryHistoryDialog(HistoryDialog):
    """A conversation's summaries, newest first, each with its time and state (non-modal)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("summaryHistory", 600, 460, parent)
        self._title = ""
        self._summaries: list[Summary] = []
        self.retranslate()

    def set_history(self, title: str, summaries: Sequence[Summary]) -> None:
        """Show ``summaries`` (newest first) of the conversation called ``title``."""
        self._title = title
        self._summaries = list(summaries)
        self.retranslate()

    @override
    def title(self) -> str:
        return self.tr("Summary history of “{title}”").format(
            title=self._title or self.tr("(untitled)")
        )

    @override
    def body(self) -> str:
        muted = colors(self).muted
        states = {
            "current": self.tr("current"),
            "earlier": self.tr("earlier version"),
            "archived": self.tr("archived"),
        }
        parts = []
        for summary in self._summaries:
            notes = [states[summary_state(summary)]]
            if summary.edited_by_user:
                notes.append(self.tr("edited by you"))
            notes.append(self.tr("%n user turns", "", summary.user_turns_covered))
            parts.append(
                f"<h4>{html.escape(local_time(summary.created_at))}"
                f" <span style='color:{muted}; font-weight:normal'>· "
                f"{html.escape(' · '.join(notes))}</span></h4>"
                f"<p>{rich_escaped(summary.content)}</p>"
            )
        if not parts:
            nothing = self.tr("This conversation has no summary yet.")
            parts.append(f"<p>{html.escape(nothing)}</p>")
        return "".join(parts)
