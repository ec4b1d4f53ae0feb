"""The sidebar: search, new conversation, and the list of conversations with their actions.

The list fetches as it scrolls: it is given the first window of conversations (``PAGE_SIZE``,
pinned first, newest next) and asks for the next one (``more_requested``) when the view nears
its end, so a long-time user's thousand conversations are never read, nor laid out, at once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QLocale,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from etos_desktop.core.storage.tables import ConversationRow

from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.ui import dialogs
from etos_desktop.ui.checkin_mark import (
    CHECKIN_MARK,
    checkin_title,
    checkin_tooltip,
    started_by_companion,
)
from etos_desktop.ui.conversation_groups import (
    ConversationDelegate,
    DateGroup,
    GroupedListView,
    GroupHeaderRole,
    PreviewRole,
    date_group,
    group_label,
    preview_line,
)
from etos_desktop.ui.labels import plain_tooltip
from etos_desktop.ui.task_set import TaskSet

#: Conversations the sidebar is given at a time (a full window means more may follow).
PAGE_SIZE = 200

ConversationIdRole = Qt.ItemDataRole.UserRole + 1
PinnedRole = Qt.ItemDataRole.UserRole + 2
TemporaryRole = Qt.ItemDataRole.UserRole + 3
ArchivedRole = Qt.ItemDataRole.UserRole + 4
#: ``True`` for a conversation the companion started (a check-in).
StartedByCompanionRole = Qt.ItemDataRole.UserRole + 5
#: The longest title the rename dialog takes (titles are one line in the sidebar).
MAX_TITLE_CHARS = 200


class ConversationListModel(QAbstractListModel):
    """Conversation rows for the sidebar: ids plus a cache of rows, no logic.

    Filled a window at a time: :meth:`set_rows` gives the first rows, and when the view nears
    the end of a full window (``canFetchMore``) the model asks for the rows after its last one
    (``more_requested``), which :meth:`append_rows` adds.

    Signals:
        more_requested(object): the rows after this conversation are wanted.
    """

    more_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ConversationRow] = []
        self._positions: dict[int, int] = {}
        self._more = False
        self._asked = False
        # The last message of each conversation shown, by id (one line each, for the preview).
        self._previews: dict[int, str] = {}
        self._today: Callable[[], date] = date.today
        self._shown_day: date | None = None

    def check_day(self) -> None:
        """Group again if another day began since the groups were drawn (Today → Yesterday)."""
        today = self._today()
        if today != self._shown_day:
            self._shown_day = today
            self.refresh_groups()

    def set_today(self, today: Callable[[], date]) -> None:
        """Read the local date from ``today`` (the app's clock) for the date groups."""
        self._today = today
        self._shown_day = today()
        self.refresh_groups()

    def refresh_groups(self) -> None:
        """Draw the groups' headers again (another day began, or the language changed)."""
        if self._rows:
            self.layoutChanged.emit()

    def set_previews(self, previews: dict[int, str]) -> None:
        """Show the last message of these conversations (by id) under their titles."""
        changed = False
        for conversation_id, text in previews.items():
            line = preview_line(text)
            if self._previews.get(conversation_id) != line:
                self._previews[conversation_id] = line
                changed = True
        if changed and self._rows:
            self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1), [PreviewRole])

    def group(self, row: int) -> DateGroup | None:
        """The date group of the conversation in ``row``."""
        conversation = self.conversation(row)
        if conversation is None:
            return None
        return date_group(conversation.updated_at, self._today(), pinned=conversation.pinned)

    def header(self, row: int) -> str | None:
        """The group header shown above ``row`` when it begins a group, else ``None``."""
        group = self.group(row)
        if group is None or (row > 0 and self.group(row - 1) == group):
            return None
        return group_label(group, self._today(), QLocale())

    def headers(self) -> list[tuple[str, list[str]]]:
        """The groups in order, each with its conversations' titles (for tests and readers)."""
        groups: list[tuple[str, list[str]]] = []
        for row, conversation in enumerate(self._rows):
            header = self.header(row)
            if header is not None:
                groups.append((header, []))
            groups[-1][1].append(conversation.title)
        return groups

    def set_rows(self, rows: list[ConversationRow]) -> None:
        """Replace every row (a full window: more may follow)."""
        self.beginResetModel()
        self._rows = list(rows)
        self._positions = {r.id: i for i, r in enumerate(self._rows) if r.id is not None}
        self._more = len(rows) >= PAGE_SIZE
        self._asked = False
        self.endResetModel()

    def append_rows(self, rows: list[ConversationRow]) -> None:
        """Add the window that follows the last row (those already held are skipped)."""
        fresh = [r for r in rows if r.id not in self._positions]
        self._more = len(rows) >= PAGE_SIZE
        self._asked = False
        if not fresh:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
        for offset, row in enumerate(fresh):
            self._rows.append(row)
            if row.id is not None:
                self._positions[row.id] = first + offset
        self.endInsertRows()

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        return not parent.isValid() and self._more and not self._asked and bool(self._rows)

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self.canFetchMore(parent):
            self._asked = True
            self.more_requested.emit(self._rows[-1])

    def row_for(self, conversation_id: int) -> int:
        return self._positions.get(conversation_id, -1)

    def conversation(self, row: int) -> ConversationRow | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        checkin = started_by_companion(row)
        untitled = checkin_title() if checkin else self.tr("New conversation")
        if role == Qt.ItemDataRole.DisplayRole:
            # One line: a model-written title with line breaks must not make a tall row, and
            # its bidi overrides must not reorder it.
            title = neutralise_bidi(" ".join((row.title or untitled).split()))
            marks = (
                ("📌 " if row.pinned else "")
                + ("⏳ " if row.temporary else "")
                + ("🗄 " if row.archived else "")
                + (f"{CHECKIN_MARK} " if checkin else "")
            )
            return marks + title
        if role == PreviewRole:
            return self._previews.get(row.id or 0, "")
        if role == GroupHeaderRole:
            return self.header(index.row())
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:
            # A screen reader hears the group and the last message the eye sees.
            group = self.group(index.row())
            label = group_label(group, self._today(), QLocale()) if group is not None else ""
            preview = self._previews.get(row.id or 0, "")
            return f"{label}. {preview}" if preview else label
        if role == Qt.ItemDataRole.ToolTipRole:
            when = row.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
            archived = self.tr("Archived")
            state = f" · {archived}" if row.archived else ""
            started = f"\n{checkin_tooltip()}" if checkin else ""
            return plain_tooltip(f"{row.title or untitled}\n{when}{state}{started}")
        if role == Qt.ItemDataRole.ForegroundRole and row.archived:
            return QGuiApplication.palette().brush(
                QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text
            )
        if role == ConversationIdRole:
            return row.id
        if role == PinnedRole:
            return row.pinned
        if role == TemporaryRole:
            return row.temporary
        if role == ArchivedRole:
            return row.archived
        if role == StartedByCompanionRole:
            return checkin
        return None


class RenameDialog(QDialog):
    """Asks for a conversation's new title (wide enough to read the one it has)."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("renameDialog")
        self.label = QLabel(self)
        self.edit = QLineEdit(title, self)
        self.edit.setObjectName("titleEdit")
        self.edit.setMaxLength(MAX_TITLE_CHARS)
        self.edit.selectAll()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.edit.textChanged.connect(self._on_edit_text_changed)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.edit)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(420)
        self.retranslate()
        self._on_edit_text_changed(title)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Rename conversation"))
        self.label.setText(self.tr("New title:"))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Rename"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def title(self) -> str:
        """The title typed, on one line."""
        return " ".join(self.edit.text().split())

    def _on_edit_text_changed(self, _text: str) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.title()))


class ConversationListPanel(QWidget):
    """Search box, New button, archive filter and the list.

    Signals:
        new_requested(): the user wants a new conversation.
        open_requested(int): open a conversation.
        more_requested(object): the conversations after this one are wanted (the list was
            scrolled near its end); answer with :meth:`append_conversations`.
        search_changed(str): the search text changed.
        show_archived_changed(bool): the archive filter changed.
        rename_requested(int, str), pin_requested(int, bool), archive_requested(int, bool),
        delete_requested(int): actions from the context menu (delete already confirmed).
        export_requested(int, str): export as "markdown" or "json".
    """

    new_requested = Signal()
    open_requested = Signal(int)
    more_requested = Signal(object)
    search_changed = Signal(str)
    show_archived_changed = Signal(bool)
    rename_requested = Signal(int, str)
    pin_requested = Signal(int, bool)
    archive_requested = Signal(int, bool)
    delete_requested = Signal(int)
    export_requested = Signal(int, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversationPanel")
        self._tasks = TaskSet()
        self.search = QLineEdit(self)
        self.search.setObjectName("conversationSearch")
        self.search.setClearButtonEnabled(True)
        self.new_button = QPushButton(self)
        self.new_button.setObjectName("newConversationButton")
        self.archived = QCheckBox(self)
        self.model = ConversationListModel(self)
        self.model.more_requested.connect(self.more_requested)
        self.view = GroupedListView(self)
        self.view.setObjectName("conversationList")
        self.view.setModel(self.model)
        # A row that begins a date group is taller (its header): sizes differ, laid out in
        # batches so a long list is never measured at once.
        self.view.setUniformItemSizes(False)
        self.view.setLayoutMode(QListView.LayoutMode.Batched)
        self.view.setBatchSize(100)
        self.delegate = ConversationDelegate(self.view)
        self.view.setItemDelegate(self.delegate)
        self.view.setMouseTracking(True)
        # The list may stay open past midnight: the groups follow the day.
        self._day_timer = QTimer(self)
        self._day_timer.setInterval(60_000)
        self._day_timer.timeout.connect(self.model.check_day)
        self._day_timer.start()
        # Long titles are elided; the list never scrolls sideways or widens the sidebar.
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.view.setWordWrap(False)
        self.view.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.setEditTriggers(QListView.EditTrigger.NoEditTriggers)

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.archived)

        self.search.textChanged.connect(self.search_changed)
        self.new_button.clicked.connect(self.new_requested)
        self.archived.toggled.connect(self.show_archived_changed)
        self.view.clicked.connect(self._on_view_clicked)
        self.view.activated.connect(self._on_view_clicked)
        self.view.customContextMenuRequested.connect(self._on_view_context_menu)
        self.retranslate()

    def retranslate(self) -> None:
        self.search.setPlaceholderText(self.tr("Search conversations"))
        self.search.setAccessibleName(self.tr("Search conversations"))
        self.view.setAccessibleName(self.tr("Conversations"))
        # Titles computed by the model are shown again in the new language.
        rows = self.model.rowCount()
        if rows:
            self.model.dataChanged.emit(self.model.index(0), self.model.index(rows - 1))
            self.model.refresh_groups()
        self.new_button.setText(self.tr("New"))
        self.new_button.setToolTip(self.tr("New conversation (Ctrl+N)"))
        self.archived.setText(self.tr("Show archived"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def set_conversations(self, rows: list[ConversationRow], current_id: int | None) -> None:
        self.model.set_rows(rows)
        self.select(current_id)

    def set_previews(self, previews: dict[int, str]) -> None:
        """Show the last message of these conversations (by id) under their titles."""
        self.model.set_previews(previews)

    def set_today(self, today: Callable[[], date]) -> None:
        """Read the local date from ``today`` (the app's clock) for the date groups."""
        self.model.set_today(today)

    def append_conversations(self, rows: list[ConversationRow]) -> None:
        """Add the conversations that follow the last one shown (``more_requested``'s answer)."""
        self.model.append_rows(rows)

    def select(self, conversation_id: int | None) -> None:
        row = -1 if conversation_id is None else self.model.row_for(conversation_id)
        if row >= 0:
            self.view.setCurrentIndex(self.model.index(row))
        else:
            self.view.clearSelection()

    def _on_view_clicked(self, index: QModelIndex) -> None:
        conversation_id = index.data(ConversationIdRole)
        if conversation_id is not None:
            self.open_requested.emit(int(conversation_id))

    def _on_view_context_menu(self, pos: Any) -> None:
        index = self.view.indexAt(pos)
        row = self.model.conversation(index.row()) if index.isValid() else None
        if row is None or row.id is None:
            return
        menu = self.build_menu(row)
        menu.exec(self.view.viewport().mapToGlobal(pos))

    def build_menu(self, row: ConversationRow) -> QMenu:
        """The context menu of one conversation (public so tests can trigger its actions)."""
        cid = row.id or 0
        menu = QMenu(self)
        rename = QAction(self.tr("Rename…"), menu)
        rename.triggered.connect(lambda: self.ask_rename(cid, row.title))
        pin = QAction(self.tr("Unpin") if row.pinned else self.tr("Pin"), menu)
        pin.triggered.connect(lambda: self.pin_requested.emit(cid, not row.pinned))
        archive = QAction(
            self.tr("Restore from archive") if row.archived else self.tr("Archive"), menu
        )
        archive.triggered.connect(lambda: self.archive_requested.emit(cid, not row.archived))
        export_md = QAction(self.tr("Export as Markdown…"), menu)
        export_md.triggered.connect(lambda: self.export_requested.emit(cid, "markdown"))
        export_json = QAction(self.tr("Export as JSON…"), menu)
        export_json.triggered.connect(lambda: self.export_requested.emit(cid, "json"))
        delete = QAction(self.tr("Delete…"), menu)
        delete.triggered.connect(lambda: self.ask_delete(cid, row.title))
        for action in (rename, pin, archive):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(export_md)
        menu.addAction(export_json)
        menu.addSeparator()
        menu.addAction(delete)
        return menu

    def ask_rename(self, conversation_id: int, current: str) -> None:
        self._tasks.spawn(self._rename(conversation_id, current))

    async def _rename(self, conversation_id: int, current: str) -> None:
        dialog = RenameDialog(current, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        title = await dialogs.await_dialog(
            dialog,
            lambda result: dialog.title() if result == QDialog.DialogCode.Accepted else "",
            "",
        )
        if title and title != current:
            self.rename_requested.emit(conversation_id, title)

    def ask_delete(self, conversation_id: int, title: str) -> None:
        self._tasks.spawn(self._confirm_delete(conversation_id, title))

    async def _confirm_delete(self, conversation_id: int, title: str) -> None:
        if await dialogs.confirm(
            self,
            self.tr("Delete conversation"),
            self.tr("Delete “{title}” and all its messages? This cannot be undone.").format(
                title=title or self.tr("New conversation")
            ),
            self.tr("Delete"),
            destructive=True,
        ):
            self.delete_requested.emit(conversation_id)
