"""The history of a record in a list page: every version or change as rich text, non-modal.

A layer's dialog (a memory's changes, a conversation's summaries) says what its window is called
and what it shows; this dialog draws it in a browser with Close, and draws it again when the
language or the theme changes (the muted colour of older values follows the theme).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QDialog, QHBoxLayout, QPushButton, QTextBrowser, QVBoxLayout, QWidget
from typing_extensions import override


class HistoryDialog(QDialog):
    """A browser of a record's history with Close; a subclass gives :meth:`title` and :meth:`body`.

    Args:
        name: The dialog's object name.
        width: Its width at first.
        height: Its height at first.
        parent: The page.
    """

    def __init__(self, name: str, width: int, height: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.close_button = QPushButton(self)
        self.close_button.clicked.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.close_button)
        layout.addLayout(row)
        self.resize(width, height)

    def title(self) -> str:
        """The window's title, translated."""
        raise NotImplementedError

    def body(self) -> str:
        """The history as rich text, every text the app did not write escaped."""
        raise NotImplementedError

    def retranslate(self) -> None:
        """Draw the history again in the current language and theme."""
        self.setWindowTitle(self.title())
        self.close_button.setText(self.tr("Close"))
        self.browser.setHtml(self.body())

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.PaletteChange):
            self.retranslate()
        super().changeEvent(event)
