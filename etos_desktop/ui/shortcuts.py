"""The keyboard shortcuts: one table that the main window binds and Help → Keyboard shortcuts lists.

Each entry names what it does (translated where it is shown) and its keys, written in Qt's
portable form ("Ctrl+K", shown as ⌘K on macOS). "Up" in the empty composer is the composer's
own key, not a window shortcut; it is listed all the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QEvent, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override


@dataclass(frozen=True)
class Shortcut:
    """One shortcut: its id (the main window's action), keys and English description.

    The descriptions are marked with ``QT_TRANSLATE_NOOP`` (context "Shortcuts") for lupdate and
    translated where they are shown.
    """

    id: str
    keys: tuple[str, ...]
    description: str


SHORTCUTS: tuple[Shortcut, ...] = (
    Shortcut("new", ("Ctrl+N",), QT_TRANSLATE_NOOP("Shortcuts", "New conversation")),
    Shortcut(
        "new_temporary",
        ("Ctrl+Shift+N",),
        QT_TRANSLATE_NOOP("Shortcuts", "New temporary conversation"),
    ),
    Shortcut("search", ("Ctrl+K",), QT_TRANSLATE_NOOP("Shortcuts", "Search conversations")),
    Shortcut(
        "search_messages",
        ("Ctrl+Shift+F",),
        QT_TRANSLATE_NOOP("Shortcuts", "Search the messages of every conversation"),
    ),
    Shortcut(
        "find",
        ("Ctrl+F",),
        QT_TRANSLATE_NOOP("Shortcuts", "Find in this conversation (Esc closes)"),
    ),
    Shortcut(
        "focus_composer",
        ("Ctrl+L", "Shift+Esc"),
        QT_TRANSLATE_NOOP("Shortcuts", "Write a message (focus the composer)"),
    ),
    Shortcut(
        "send",
        ("Enter",),
        QT_TRANSLATE_NOOP("Shortcuts", "Send the message (Shift+Enter: a new line)"),
    ),
    Shortcut(
        "stop", ("Esc",), QT_TRANSLATE_NOOP("Shortcuts", "Stop the reply (or cancel editing)")
    ),
    Shortcut(
        "regenerate", ("Ctrl+R",), QT_TRANSLATE_NOOP("Shortcuts", "Regenerate the last reply")
    ),
    Shortcut(
        "copy_reply", ("Ctrl+Shift+C",), QT_TRANSLATE_NOOP("Shortcuts", "Copy the last reply")
    ),
    Shortcut(
        "edit_last",
        ("Up",),
        QT_TRANSLATE_NOOP("Shortcuts", "Edit your last message (in the empty composer)"),
    ),
    Shortcut("rename", ("F2",), QT_TRANSLATE_NOOP("Shortcuts", "Rename the conversation")),
    Shortcut("settings", ("Ctrl+,",), QT_TRANSLATE_NOOP("Shortcuts", "Settings")),
    Shortcut("shortcuts", ("Ctrl+/",), QT_TRANSLATE_NOOP("Shortcuts", "Keyboard shortcuts")),
    Shortcut("quit", ("Ctrl+Q",), QT_TRANSLATE_NOOP("Shortcuts", "Quit")),
)

#: Shortcuts that are keys of a widget, not actions of the window.
WIDGET_KEYS = frozenset({"send", "edit_last"})


def shortcut(shortcut_id: str) -> Shortcut:
    """The shortcut called ``shortcut_id``."""
    for entry in SHORTCUTS:
        if entry.id == shortcut_id:
            return entry
    raise KeyError(shortcut_id)


def key_sequences(shortcut_id: str) -> list[QKeySequence]:
    """The keys of a shortcut, for ``QAction.setShortcuts``."""
    return [QKeySequence(keys) for keys in shortcut(shortcut_id).keys]


def shown_keys(entry: Shortcut) -> str:
    """The keys as this platform writes them ("Ctrl+K" or "⌘K"), alternatives joined."""
    return " / ".join(
        QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText) for keys in entry.keys
    )


class ShortcutsDialog(QDialog):
    """Help → Keyboard shortcuts: every shortcut and what it does."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        self.table = QTreeWidget(self)
        self.table.setObjectName("shortcutsTable")
        self.table.setRootIsDecorated(False)
        self.table.setColumnCount(2)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.header().setStretchLastSection(True)
        for entry in SHORTCUTS:
            item = QTreeWidgetItem([shown_keys(entry), ""])
            item.setData(0, Qt.ItemDataRole.UserRole, entry.id)
            self.table.addTopLevelItem(item)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.buttons)
        self.resize(560, 440)
        self.retranslate()

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        self.intro.setText(
            self.tr(
                "Everything in the window can be reached with Tab; these keys go straight there."
            )
        )
        self.table.setHeaderLabels([self.tr("Keys"), self.tr("Action")])
        self.table.setAccessibleName(self.tr("Keyboard shortcuts"))
        self.buttons.button(QDialogButtonBox.StandardButton.Close).setText(self.tr("Close"))
        for index, entry in enumerate(SHORTCUTS):
            item = self.table.topLevelItem(index)
            if item is not None:
                item.setText(1, QCoreApplication.translate("Shortcuts", entry.description))

    def rows(self) -> list[tuple[str, str]]:
        """The rows as shown: (keys, what they do)."""
        items = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [(item.text(0), item.text(1)) for item in items if item is not None]

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
