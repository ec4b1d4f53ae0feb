"""The Memory page of Settings: every long-term memory, searchable, editable and under control.

DESIGN §1 principle 5 (the user sees and controls everything), §3 (delete is real; its undo is
held in memory only until Settings closes), §5 (embedder, top-K, approval) and §9 (imports are
validated and applied in one transaction).

All memory work goes through ``MemoryAccess`` (its worker pool) or, for the engine calls it does
not wrap (import, embedding status), through the loop's default executor: the UI thread never
waits on the disk or an embedder. Confirmations run before any task starts, from the button's
own slot, so no modal loop ever runs inside a coroutine. The editor, the file choosers and the
import preview are injectable coroutines (tests answer them; the defaults, in
``memory_dialogs``, open window-modal dialogs with ``open()`` and await their ``finished``
signal).

Search is a substring filter (case-insensitive) over the text, tags, trigger context and
``#id`` of every memory, archived ones included; the engine's relevance search is deliberately
not used here because it never returns archived memories and may return nothing by design.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import threading
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QBrush, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from etos_desktop import __version__
from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import EtosError
from etos_desktop.core.memory import transfer
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.records import DeletedMemory, Memory, MemoryKind, MemorySource
from etos_desktop.core.settings.schema import spec_for
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui import dialogs
from etos_desktop.ui.memory_dialogs import (
    STATE_COLORS,
    EditorFunction,
    MemoryFields,
    MemoryHistoryDialog,
    PathFunction,
    PreviewFunction,
    confirm_import,
    kind_name,
    local_time,
    memory_error_text,
    one_line,
    open_editor,
    rich_escaped,
    source_name,
    status_name,
    status_of,
)
from etos_desktop.ui.task_set import TaskSet

#: The settings this page edits (saved with the dialog's Save, like every other page).
SETTING_KEYS: Final = (
    "memory.enabled",
    "memory.embedder",
    "memory.retrieval_top_k",
    "memory.strictness",
    "memory.approval",
)
#: Table columns, in order.
COLUMNS: Final = ("id", "content", "kind", "source", "confidence", "created", "last_used", "status")
#: The window size the page asks for when it is first shown (eight columns need room).
PREFERRED_WINDOW_SIZE: Final = (1080, 680)

#: Produces a translated text when called, so a shown message can be re-translated.
TextFactory = Callable[[], str]


# -- the table model --------------------------------------------------------------------------


class MemoryTableModel(QAbstractTableModel):
    """The memories as table rows: ids plus a cache of ``Memory`` values, no business logic.

    ``MEMORY_ROLE`` gives the ``Memory`` of a row, ``SORT_ROLE`` a value that sorts the column
    naturally (numbers as numbers, dates as timestamps).
    """

    MEMORY_ROLE: Final = Qt.ItemDataRole.UserRole + 1
    SORT_ROLE: Final = Qt.ItemDataRole.UserRole + 2

    def __init__(self, clock: Clock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._clock = clock
        self._ids: list[int] = []
        self._rows: dict[int, Memory] = {}

    # -- contents -------------------------------------------------------------------------------

    def set_memories(self, memories: Sequence[Memory]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._ids = [m.id for m in memories]
        self._rows = {m.id: m for m in memories}
        self.endResetModel()

    def memories(self) -> list[Memory]:
        """Every memory, in row order."""
        return [self._rows[i] for i in self._ids]

    def memory(self, row: int) -> Memory:
        """The memory of a row."""
        return self._rows[self._ids[row]]

    def row_of(self, memory_id: int) -> int | None:
        """The row of a memory, if it is shown."""
        try:
            return self._ids.index(memory_id)
        except ValueError:
            return None

    def retranslate(self) -> None:
        """Re-read translated texts (headers and cells)."""
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS) - 1)
        if self._ids:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._ids) - 1, len(COLUMNS) - 1)
            )

    # -- Qt model interface ---------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return {
                "id": self.tr("#"),
                "content": self.tr("Memory"),
                "kind": self.tr("Kind"),
                "source": self.tr("Source"),
                "confidence": self.tr("Confidence"),
                "created": self.tr("Created"),
                "last_used": self.tr("Last used"),
                "status": self.tr("Status"),
            }[COLUMNS[section]]
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section] == "last_used":
            return self.tr("When the memory was last sent with a message")
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._ids):
            return None
        memory = self._rows[self._ids[index.row()]]
        column = COLUMNS[index.column()]
        if role == self.MEMORY_ROLE:
            return memory
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(memory, column)
        if role == self.SORT_ROLE:
            return self._sort_value(memory, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(memory, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in {"id", "confidence"}:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and not memory.is_active(self._clock.now()):
            return QBrush(QPalette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    # -- cells ----------------------------------------------------------------------------------

    def _display(self, memory: Memory, column: str) -> str:
        if column == "id":
            return str(memory.id)
        if column == "content":
            return one_line(memory.content)
        if column == "kind":
            return kind_name(memory.kind)
        if column == "source":
            return source_name(memory.source)
        if column == "confidence":
            return f"{memory.confidence:.2f}"
        if column == "created":
            return local_time(memory.created_at)
        if column == "last_used":
            return local_time(memory.last_accessed_at) if memory.last_accessed_at else "—"
        return status_name(memory, self._clock.now())

    def _sort_value(self, memory: Memory, column: str) -> Any:
        if column == "id":
            return memory.id
        if column == "content":
            return memory.content.casefold()
        if column == "confidence":
            return memory.confidence
        if column == "created":
            return memory.created_at.timestamp()
        if column == "last_used":
            return memory.last_accessed_at.timestamp() if memory.last_accessed_at else -1.0
        if column == "status":
            order = {"active": 0, "expired": 1, "archived": 2, "superseded": 3}
            return order[status_of(memory, self._clock.now())]
        return self._display(memory, column).casefold()

    def _tooltip(self, memory: Memory, column: str) -> str | None:
        if column == "content":
            lines = [f"<p>{rich_escaped(memory.content)}</p>"]
            if memory.tags:
                tags = rich_escaped(", ".join(memory.tags))
                lines.append(f"<p><i>{html.escape(self.tr('Tags'))}:</i> {tags}</p>")
            if memory.trigger_context:
                lines.append(
                    f"<p><i>{html.escape(self.tr('Recall when'))}:</i> "
                    f"{rich_escaped(memory.trigger_context)}</p>"
                )
            lines.append(
                f"<p><i>{html.escape(self.tr('Importance'))}:</i> {memory.importance:.2f}</p>"
            )
            return "<qt>" + "".join(lines) + "</qt>"
        if column in {"created", "last_used"}:
            value = memory.created_at if column == "created" else memory.last_accessed_at
            if value is None:
                return self.tr("Never sent with a message")
            text = local_time(value, "%Y-%m-%d %H:%M")
            if column == "last_used":
                text += " · " + self.tr("used %n time(s)", "", memory.access_count)
            return text
        if column == "status" and memory.valid_until is not None:
            return self.tr("Valid until {date}").format(
                date=local_time(memory.valid_until, "%Y-%m-%d %H:%M")
            )
        return None


class MemoryFilterModel(QSortFilterProxyModel):
    """Filters the memory table by text, kind, status and source; sorts by ``SORT_ROLE``."""

    def __init__(self, clock: Clock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._clock = clock
        self._text = ""
        self._kind: str | None = None
        self._status = "all"
        self._source: str | None = None
        self.setSortRole(MemoryTableModel.SORT_ROLE)
        self.setDynamicSortFilter(True)

    def set_filters(
        self,
        *,
        text: str | None = None,
        kind: str | bool | None = False,
        status: str | None = None,
        source: str | bool | None = False,
    ) -> None:
        """Change some filters (``False`` leaves a kind/source filter as it is; ``None`` clears it).

        Args:
            text: Substring to look for in text, tags, trigger context and ``#id``.
            kind: Only this kind.
            status: ``"all"``, ``"active"`` or ``"inactive"`` (archived, superseded, expired).
            source: Only this source.
        """
        if text is not None:
            self._text = text.strip().casefold()
        if kind is not False:
            self._kind = kind if isinstance(kind, str) else None
        if status is not None:
            self._status = status
        if source is not False:
            self._source = source if isinstance(source, str) else None
        if hasattr(self, "endFilterChange"):  # Qt 6.10+; invalidateRowsFilter is deprecated there
            self.beginFilterChange()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    def filterAcceptsRow(
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        model = self.sourceModel()
        assert isinstance(model, MemoryTableModel)
        memory = model.memory(source_row)
        if self._kind is not None and memory.kind != self._kind:
            return False
        if self._source is not None and memory.source != self._source:
            return False
        if self._status != "all":
            active = memory.is_active(self._clock.now())
            if active != (self._status == "active"):
                return False
        if self._text:
            text = self._text
            if text.startswith("#") and text[1:].isdigit():
                return memory.id == int(text[1:])
            haystack = " ".join(
                [memory.content, " ".join(memory.tags), memory.trigger_context or ""]
            ).casefold()
            return text in haystack
        return True


# -- the page ---------------------------------------------------------------------------------


def _set_state(label: QLabel, state: str) -> None:
    label.setProperty("state", state)
    color = STATE_COLORS.get(state)
    label.setStyleSheet(f"color: {color};" if color else "")


class MemoryPage(QWidget):
    """The Memory page: the memory table with its actions, and the memory settings.

    Memory actions (add, edit, archive, delete, import…) take effect at once; the four settings
    at the top are saved with the dialog's Save like every other page (``is_modified``,
    ``validate``, ``apply``). Deleted memories can be brought back with Undo until
    :meth:`close_panel` (the Settings dialog calls it when it closes): the snapshots are held in
    memory only.

    Args:
        memory: The app's memory access (all work runs off the UI thread).
        settings: The settings store (memory.* keys).
        clock: The current time (what counts as active).
        edit_memory: Shows the memory editor (default: ``open_editor``).
        save_path: Asks where to export (default: a file dialog).
        open_path: Asks which file to import (default: a file dialog).
        preview_import: Shows the import preview and asks to apply it (default: a dialog).
        parent: The parent widget.

    Signals:
        memories_changed(): memories were added, changed, archived, deleted or imported here.
        changed(): a setting edit that Save would write.
        refreshed(): the table was reloaded from the database.
        reembed_progressed(int, int): re-embedding reached ``(done, total)``.
    """

    memories_changed = Signal()
    changed = Signal()
    refreshed = Signal()
    reembed_progressed = Signal(int, int)

    def __init__(
        self,
        memory: MemoryAccess,
        settings: SettingsStore,
        *,
        clock: Clock | None = None,
        edit_memory: EditorFunction | None = None,
        save_path: PathFunction | None = None,
        open_path: PathFunction | None = None,
        preview_import: PreviewFunction | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryPage")
        self._memory = memory
        self._settings = settings
        self._clock: Clock = clock or SystemClock()
        self._edit_memory: EditorFunction = edit_memory or self._default_editor
        self._save_path: PathFunction = save_path or dialogs.choose_save_path
        self._open_path: PathFunction = open_path or (
            lambda parent, caption, name_filter, _name: dialogs.choose_open_path(
                parent, caption, name_filter
            )
        )
        self._preview_import: PreviewFunction = preview_import or confirm_import
        self._tasks = TaskSet()
        self._busy = False
        self._alive = True
        self._status: tuple[str, TextFactory] | None = None
        self._undo: list[list[DeletedMemory]] = []
        self._reembed_cancel: threading.Event | None = None
        self._embedding: tuple[int, int] | None = None
        self.history_dialog: MemoryHistoryDialog | None = None
        self._grown = False

        self.model = MemoryTableModel(self._clock, self)
        self.proxy = MemoryFilterModel(self._clock, self)
        self.proxy.setSourceModel(self.model)
        self._build()
        self.retranslate()
        self._update_actions()

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        # Settings: two columns so the table keeps most of the height.
        self.settings_group = QGroupBox(self)
        grid = QGridLayout(self.settings_group)
        grid.setContentsMargins(8, 6, 8, 6)
        grid.setVerticalSpacing(4)
        self.enabled_check = QCheckBox(self.settings_group)
        self.enabled_check.setObjectName("setting:memory.enabled")
        self.enabled_check.setChecked(self._settings.get_bool("memory.enabled"))
        self.approval_label = QLabel(self.settings_group)
        self.approval_combo = QComboBox(self.settings_group)
        self.approval_combo.setObjectName("setting:memory.approval")
        for choice in spec_for("memory.approval").choices or ():
            self.approval_combo.addItem(str(choice), choice)
        self.approval_combo.setCurrentIndex(
            max(self.approval_combo.findData(self._settings.get("memory.approval")), 0)
        )
        self.embedder_label = QLabel(self.settings_group)
        self.embedder_combo = QComboBox(self.settings_group)
        self.embedder_combo.setObjectName("setting:memory.embedder")
        for choice in spec_for("memory.embedder").choices or ():
            self.embedder_combo.addItem(str(choice), choice)
        self.embedder_combo.setCurrentIndex(
            max(self.embedder_combo.findData(self._settings.get("memory.embedder")), 0)
        )
        self.strictness_label = QLabel(self.settings_group)
        self.strictness_combo = QComboBox(self.settings_group)
        self.strictness_combo.setObjectName("setting:memory.strictness")
        for choice in spec_for("memory.strictness").choices or ():
            self.strictness_combo.addItem(str(choice), choice)
        self.strictness_combo.setCurrentIndex(
            max(self.strictness_combo.findData(self._settings.get("memory.strictness")), 0)
        )
        self.top_k_label = QLabel(self.settings_group)
        self.top_k_spin = QSpinBox(self.settings_group)
        self.top_k_spin.setObjectName("setting:memory.retrieval_top_k")
        spec = spec_for("memory.retrieval_top_k")
        self.top_k_spin.setRange(int(spec.minimum or 1), int(spec.maximum or 50))
        self.top_k_spin.setValue(self._settings.get_int("memory.retrieval_top_k"))
        self.embedding_label = QLabel(self.settings_group)
        self.embedding_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reembed_button = QPushButton(self.settings_group)
        self.reembed_button.clicked.connect(self._on_reembed_button_clicked)
        self.reembed_progress = QProgressBar(self.settings_group)
        self.reembed_progress.setMaximumWidth(160)
        self.reembed_progress.hide()
        self.reembed_cancel_button = QPushButton(self.settings_group)
        self.reembed_cancel_button.clicked.connect(self.cancel_reembed)
        self.reembed_cancel_button.hide()
        grid.addWidget(self.enabled_check, 0, 0, 1, 2)
        grid.addWidget(self.approval_label, 0, 2)
        grid.addWidget(self.approval_combo, 0, 3)
        grid.addWidget(self.embedder_label, 1, 0)
        grid.addWidget(self.embedder_combo, 1, 1)
        grid.addWidget(self.top_k_label, 1, 2)
        grid.addWidget(self.top_k_spin, 1, 3)
        grid.addWidget(self.strictness_label, 0, 4)
        grid.addWidget(self.strictness_combo, 0, 5)
        embed_row = QHBoxLayout()
        embed_row.addWidget(self.embedding_label, 1)
        embed_row.addWidget(self.reembed_progress)
        embed_row.addWidget(self.reembed_cancel_button)
        embed_row.addWidget(self.reembed_button)
        grid.addLayout(embed_row, 2, 0, 1, 6)
        grid.setColumnStretch(6, 1)
        grid.setHorizontalSpacing(10)
        grid.setColumnMinimumWidth(1, 200)
        self.enabled_check.toggled.connect(self._on_setting_edited)
        self.approval_combo.currentIndexChanged.connect(self._on_setting_edited)
        self.embedder_combo.currentIndexChanged.connect(self._on_setting_edited)
        self.top_k_spin.valueChanged.connect(self._on_setting_edited)
        self.strictness_combo.currentIndexChanged.connect(self._on_setting_edited)

        # Filters.
        self.search_edit = QLineEdit(self)
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self._on_search_edit_text_changed)
        self.kind_filter = QComboBox(self)
        self.kind_filter.addItem("", None)
        for kind in MemoryKind:
            self.kind_filter.addItem("", kind.value)
        self.status_filter = QComboBox(self)
        for value in ("all", "active", "inactive"):
            self.status_filter.addItem("", value)
        self.source_filter = QComboBox(self)
        self.source_filter.addItem("", None)
        for source in MemorySource:
            self.source_filter.addItem("", source.value)
        for combo in (self.kind_filter, self.status_filter, self.source_filter):
            combo.currentIndexChanged.connect(self._on_filter_changed)
        self.count_label = QLabel(self)
        filters = QHBoxLayout()
        filters.addWidget(self.search_edit, 1)
        filters.addWidget(self.kind_filter)
        filters.addWidget(self.status_filter)
        filters.addWidget(self.source_filter)

        # The table.
        self.table = QTableView(self)
        self.table.setObjectName("memoryTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COLUMNS.index("id"), Qt.SortOrder.DescendingOrder)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(COLUMNS.index("content"), QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(32)
        header.setHighlightSections(False)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        delete_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table)
        # Only while the table has focus: Delete in the search box edits the search.
        delete_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete_shortcut.activated.connect(self.request_delete)

        # Actions under the table.
        self.add_button = QPushButton(self)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.edit_button = QPushButton(self)
        self.edit_button.clicked.connect(self._on_edit_button_clicked)
        self.archive_button = QPushButton(self)
        self.archive_button.clicked.connect(self._on_archive_button_clicked)
        self.restore_button = QPushButton(self)
        self.restore_button.clicked.connect(self._on_restore_button_clicked)
        self.delete_button = QPushButton(self)
        self.delete_button.clicked.connect(self.request_delete)
        self.history_button = QPushButton(self)
        self.history_button.clicked.connect(self._on_history_button_clicked)
        self.more_button = QToolButton(self)
        self.more_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.more_menu = QMenu(self.more_button)
        self.import_action = QAction(self.more_menu)
        self.import_action.triggered.connect(self._on_import_action_triggered)
        self.export_json_action = QAction(self.more_menu)
        self.export_json_action.triggered.connect(self._on_export_json_action_triggered)
        self.export_markdown_action = QAction(self.more_menu)
        self.export_markdown_action.triggered.connect(self._on_export_markdown_action_triggered)
        self.clear_action = QAction(self.more_menu)
        self.clear_action.triggered.connect(self.request_clear_all)
        self.more_menu.addAction(self.import_action)
        self.more_menu.addAction(self.export_json_action)
        self.more_menu.addAction(self.export_markdown_action)
        self.more_menu.addSeparator()
        self.more_menu.addAction(self.clear_action)
        self.more_button.setMenu(self.more_menu)
        actions = QHBoxLayout()
        for button in (
            self.add_button,
            self.edit_button,
            self.archive_button,
            self.restore_button,
            self.delete_button,
            self.history_button,
        ):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.count_label)
        actions.addWidget(self.more_button)

        # Undo bar (shown after a delete) and status line.
        self.undo_bar = QFrame(self)
        self.undo_bar.setObjectName("memoryUndoBar")
        self.undo_bar.setFrameShape(QFrame.Shape.StyledPanel)
        self.undo_label = QLabel(self.undo_bar)
        self.undo_label.setWordWrap(True)
        self.undo_button = QPushButton(self.undo_bar)
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        undo_row = QHBoxLayout(self.undo_bar)
        undo_row.setContentsMargins(8, 2, 4, 2)
        undo_row.addWidget(self.undo_label, 1)
        undo_row.addWidget(self.undo_button)
        self.undo_bar.hide()
        self.status_label = QLabel(self)
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.settings_group)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        layout.addLayout(actions)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.status_label)

    def retranslate(self) -> None:
        self.settings_group.setTitle(self.tr("Settings"))
        self.enabled_check.setText(self.tr("Use long-term memory in conversations"))
        self.enabled_check.setToolTip(_schema_tr(spec_for("memory.enabled").description))
        self.approval_label.setText(self.tr("When the model saves"))
        approval_names = {
            "ask": self.tr("Ask every time"),
            "notify": self.tr("Save and notify"),
            "never": self.tr("Never save"),
        }
        for index in range(self.approval_combo.count()):
            value = str(self.approval_combo.itemData(index))
            self.approval_combo.setItemText(index, approval_names.get(value, value))
        self.approval_combo.setToolTip(_schema_tr(spec_for("memory.approval").description))
        self.embedder_label.setText(self.tr("Matching"))
        embedder_names = {
            "auto": self.tr("Automatic"),
            "builtin": self.tr("Built-in multilingual model"),
            "keywords": self.tr("Keywords only"),
        }
        for index in range(self.embedder_combo.count()):
            value = str(self.embedder_combo.itemData(index))
            self.embedder_combo.setItemText(index, embedder_names.get(value, value))
        self.embedder_combo.setToolTip(_schema_tr(spec_for("memory.embedder").description))
        self.strictness_label.setText(self.tr("Relevance"))
        strictness_names = {
            "strict": self.tr("Strict — fewer, surer"),
            "balanced": self.tr("Balanced"),
            "broad": self.tr("Broad — more, weaker"),
        }
        for index in range(self.strictness_combo.count()):
            value = str(self.strictness_combo.itemData(index))
            self.strictness_combo.setItemText(index, strictness_names.get(value, value))
        self.strictness_combo.setToolTip(_schema_tr(spec_for("memory.strictness").description))
        self.top_k_label.setText(self.tr("Memories per message"))
        self.top_k_spin.setToolTip(_schema_tr(spec_for("memory.retrieval_top_k").description))
        self.reembed_button.setText(self.tr("Re-embed all"))
        self.reembed_button.setToolTip(
            self.tr("Give every memory a vector from the active embedder, in the background.")
        )
        self.reembed_cancel_button.setText(self.tr("Cancel"))
        self.search_edit.setPlaceholderText(self.tr("Filter by text, tag or #number"))
        self.kind_filter.setItemText(0, self.tr("All kinds"))
        for index in range(1, self.kind_filter.count()):
            self.kind_filter.setItemText(index, kind_name(str(self.kind_filter.itemData(index))))
        for index, text in enumerate(
            (self.tr("Active and archived"), self.tr("Active"), self.tr("Archived or ended"))
        ):
            self.status_filter.setItemText(index, text)
        self.source_filter.setItemText(0, self.tr("All sources"))
        for index in range(1, self.source_filter.count()):
            self.source_filter.setItemText(
                index, source_name(str(self.source_filter.itemData(index)))
            )
        self.add_button.setText(self.tr("Add…"))
        self.edit_button.setText(self.tr("Edit…"))
        self.archive_button.setText(self.tr("Archive"))
        self.restore_button.setText(self.tr("Restore"))
        self.delete_button.setText(self.tr("Delete"))
        self.history_button.setText(self.tr("History"))
        self.more_button.setText(self.tr("More"))
        self.import_action.setText(self.tr("Import from JSON…"))
        self.export_json_action.setText(self.tr("Export as JSON…"))
        self.export_markdown_action.setText(self.tr("Export as Markdown…"))
        self.clear_action.setText(self.tr("Delete all memories…"))
        self.undo_button.setText(self.tr("Undo"))
        self.model.retranslate()
        self._size_columns()
        self._render_embedding()
        self._render_undo()
        self._render_count()
        self._render_status()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if not self._grown:
            self._grown = True
            self._grow_window()
        # Memories change in conversations too: every visit shows the database as it is now.
        if not self._busy:
            self._tasks.spawn(self.refresh())

    def _grow_window(self) -> None:
        # Eight columns do not fit the Settings dialog's usual width: widen it once, within
        # the screen, the first time this page is shown.
        window = self.window()
        if window is self:
            return
        screen = window.screen()
        if screen is None:
            return
        available = screen.availableGeometry()
        width = min(max(window.width(), PREFERRED_WINDOW_SIZE[0]), available.width() - 32)
        height = min(max(window.height(), PREFERRED_WINDOW_SIZE[1]), available.height() - 32)
        if (width, height) != (window.width(), window.height()):
            window.resize(width, height)

    def _size_columns(self) -> None:
        # Fixed widths from the font and the longest expected text: ResizeToContents would
        # measure every row (slow with thousands of memories).
        metrics = self.table.fontMetrics()
        header = self.table.horizontalHeader()
        samples = {
            "id": "00000",
            "kind": max((kind_name(k) for k in MemoryKind), key=metrics.horizontalAdvance),
            "source": max((source_name(k) for k in MemorySource), key=metrics.horizontalAdvance),
            "confidence": "0.00",
            "created": "2026-12-31",
            "last_used": "2026-12-31",
            "status": self.tr("Superseded by #{id}").format(id="0000"),
        }
        for column, sample in samples.items():
            section = COLUMNS.index(column)
            title = str(self.model.headerData(section, Qt.Orientation.Horizontal))
            width = max(metrics.horizontalAdvance(sample), metrics.horizontalAdvance(title) + 16)
            header.resizeSection(section, width + 16)

    # -- settings (saved with the dialog's Save) ----------------------------------------------

    def value(self, key: str) -> object:
        """The value the editor of a memory setting holds now."""
        if key == "memory.enabled":
            return self.enabled_check.isChecked()
        if key == "memory.embedder":
            return self.embedder_combo.currentData()
        if key == "memory.approval":
            return self.approval_combo.currentData()
        if key == "memory.retrieval_top_k":
            return self.top_k_spin.value()
        if key == "memory.strictness":
            return self.strictness_combo.currentData()
        raise KeyError(key)

    def is_modified(self) -> bool:
        """Whether Save would change any memory setting."""
        return any(self.value(key) != self._settings.get(key) for key in SETTING_KEYS)

    def validate(self) -> bool:
        """The editors only offer valid values."""
        return True

    def apply(self) -> None:
        """Write the settings into the store (not yet to the file)."""
        for key in SETTING_KEYS:
            self._settings.set(key, self.value(key))

    def _on_setting_edited(self, *_args: object) -> None:
        self.changed.emit()

    # -- public API -----------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """The ids of the selected memories, in the table's order."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.proxy.index(row, 0).data(MemoryTableModel.MEMORY_ROLE).id for row in rows]

    def select_ids(self, memory_ids: Sequence[int]) -> None:
        """Select these memories (those shown)."""
        selection = QItemSelection()
        for memory_id in memory_ids:
            row = self.model.row_of(memory_id)
            if row is None:
                continue
            index = self.proxy.mapFromSource(self.model.index(row, 0))
            if index.isValid():
                selection.select(index, index)
        self.table.selectionModel().select(
            selection,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def status(self) -> tuple[str, str]:
        """The status line: ``(state, text)`` with state "ok", "error", "warning" or ""."""
        return (self._status[0], self._status[1]()) if self._status else ("", "")

    def undo_available(self) -> int:
        """How many deleted memories Undo would bring back (the last batch)."""
        return len(self._undo[-1]) if self._undo else 0

    async def wait_idle(self) -> None:
        """Wait until every task this page started has ended (tests, closing)."""
        await self._tasks.wait_idle()

    def close_panel(self) -> None:
        """Settings is closing: forget the deleted memories held for Undo, stop the work.

        Work already handed to a worker finishes there (an import stays all or nothing); the
        page no longer reacts to it.
        """
        self._undo.clear()
        self._render_undo()
        if self._reembed_cancel is not None:
            self._reembed_cancel.set()
        self._alive = False
        self._tasks.cancel_all()

    async def refresh(self) -> None:
        """Reload every memory from the database, keeping the selection and scroll position."""
        try:
            memories = await self._memory.memories(include_inactive=True)
            status = await self._run(self._memory.engine.embedding_status)
        except EtosError as exc:
            self._set_status("error", lambda e=exc: memory_error_text(e))
            return
        if not self._alive:
            return
        self._embedding = status
        selected = self.selected_ids()
        scroll = self.table.verticalScrollBar().value()
        self.model.set_memories(memories)
        self.select_ids(selected)
        self.table.verticalScrollBar().setValue(scroll)
        self._render_count()
        self._render_embedding()
        self._update_actions()
        self.refreshed.emit()

    # -- slots that start work ----------------------------------------------------------------

    def _on_add_button_clicked(self) -> None:
        self._start(self._add())

    def _on_edit_button_clicked(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self._start(self._edit(ids[0]))

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        memory = index.data(MemoryTableModel.MEMORY_ROLE)
        if isinstance(memory, Memory) and not self._busy:
            self._start(self._edit(memory.id))

    def _on_archive_button_clicked(self) -> None:
        now = self._clock.now()
        ids = [i for i in self.selected_ids() if self._memory_of(i).is_active(now)]
        if ids:
            self._start(self._change_state(ids, archive=True))

    def _on_restore_button_clicked(self) -> None:
        now = self._clock.now()
        ids = [i for i in self.selected_ids() if not self._memory_of(i).is_active(now)]
        if ids:
            self._start(self._change_state(ids, archive=False))

    def request_delete(self) -> None:
        """Delete the selected memories after a confirmation (Undo until Settings closes)."""
        ids = self.selected_ids()
        if not ids or self._busy:
            return
        if len(ids) == 1:
            text = self.tr(
                "Delete memory #{id}? Its text and history are erased.\n\nYou can undo this only until you close Settings."
            ).format(id=ids[0])
        else:
            text = self.tr(
                "Delete %n selected memories? Their text and history are erased.\n\nYou can undo this only until you close Settings.",
                "",
                len(ids),
            )
        self._tasks.spawn(
            self._confirm_then_delete(ids, self.tr("Delete memories"), text, self.tr("Delete"))
        )

    def request_clear_all(self) -> None:
        """Delete every memory, active and archived, after a confirmation with the count."""
        ids = [m.id for m in self.model.memories()]
        if not ids or self._busy:
            if not ids:
                self._set_status("", lambda: self.tr("There are no memories to delete."))
            return
        text = self.tr(
            "Delete all %n memories, active and archived? Their text and history are erased.\n\nYou can undo this only until you close Settings.",
            "",
            len(ids),
        )
        self._tasks.spawn(
            self._confirm_then_delete(
                ids, self.tr("Delete all memories"), text, self.tr("Delete all")
            )
        )

    async def _confirm_then_delete(
        self, ids: list[int], title: str, text: str, action: str
    ) -> None:
        if await dialogs.confirm(self, title, text, action, destructive=True):
            self._start(self._delete(ids))

    def _on_undo_button_clicked(self) -> None:
        if self._undo and not self._busy:
            self._start(self._undo_delete())

    def _on_history_button_clicked(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self._tasks.spawn(self.show_history(ids[0]))

    def _on_export_json_action_triggered(self) -> None:
        self._start(self._export("json"))

    def _on_export_markdown_action_triggered(self) -> None:
        self._start(self._export("markdown"))

    def _on_import_action_triggered(self) -> None:
        self._start(self._import())

    def _on_reembed_button_clicked(self) -> None:
        if self._reembed_cancel is None:
            self._tasks.spawn(self.reembed_all())

    def _on_search_edit_text_changed(self, text: str) -> None:
        self.proxy.set_filters(text=text)
        self._render_count()

    def _on_filter_changed(self, _index: int) -> None:
        self.proxy.set_filters(
            kind=self.kind_filter.currentData(),
            status=str(self.status_filter.currentData()),
            source=self.source_filter.currentData(),
        )
        self._render_count()
        self._update_actions()

    def _on_selection_changed(self, *_args: object) -> None:
        self._update_actions()

    # -- the work -------------------------------------------------------------------------------

    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        if self._busy:
            coro.close()
            return
        self._busy = True
        self._update_actions()
        self._tasks.spawn(self._busy_while(coro))

    async def _busy_while(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            await coro
        except EtosError as exc:
            self._set_status("error", lambda e=exc: memory_error_text(e))
        finally:
            self._busy = False
            if self._alive:
                self._update_actions()

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """An engine call that ``MemoryAccess`` does not wrap, off the UI thread."""
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    def _memory_of(self, memory_id: int) -> Memory:
        row = self.model.row_of(memory_id)
        assert row is not None
        return self.model.memory(row)

    async def _default_editor(
        self, parent: QWidget, fields: MemoryFields, title: str
    ) -> MemoryFields | None:
        return await open_editor(
            parent, fields, title, max_chars=self._memory.engine.max_content_chars
        )

    async def _add(self) -> None:
        fields = await self._edit_memory(self, MemoryFields(), self.tr("Add a memory"))
        if fields is None:
            return
        result = await self._memory.save(
            fields.content,
            fields.kind,
            source=MemorySource.MANUAL,
            importance=fields.importance,
            tags=fields.tags,
            trigger_context=fields.trigger_context,
        )
        await self._after_change([result.id])
        if result.merged:
            self._set_status(
                "ok",
                lambda: self.tr("Merged into memory #{id}, which said the same.").format(
                    id=result.id
                ),
            )
        else:
            self._set_status("ok", lambda: self.tr("Saved as #{id}.").format(id=result.id))

    async def _edit(self, memory_id: int) -> None:
        current = await self._memory.get(memory_id)
        if current is None:
            await self.refresh()
            self._set_status("error", lambda: self.tr("That memory no longer exists."))
            return
        title = self.tr("Edit memory #{id}").format(id=memory_id)
        fields = await self._edit_memory(self, MemoryFields.of(current), title)
        if fields is None or fields == MemoryFields.of(current):
            return
        await self._memory.edit(
            memory_id,
            text=fields.content,
            kind=fields.kind,
            importance=fields.importance,
            tags=fields.tags,
            trigger_context=fields.trigger_context,
        )
        await self._after_change([memory_id])
        self._set_status("ok", lambda: self.tr("Memory #{id} saved.").format(id=memory_id))

    async def _change_state(self, ids: list[int], *, archive: bool) -> None:
        done = 0
        try:
            for memory_id in ids:
                if archive:
                    await self._memory.archive(memory_id)
                else:
                    await self._memory.restore(memory_id)
                done += 1
        finally:
            if done:
                await self._after_change(ids)
        if archive:
            self._set_status("ok", lambda: self.tr("Archived %n memories.", "", done))
        else:
            self._set_status("ok", lambda: self.tr("Restored %n memories.", "", done))

    async def _delete(self, ids: list[int]) -> None:
        batch: list[DeletedMemory] = []
        try:
            if len(ids) > 1:
                self._set_status("", lambda: self.tr("Deleting %n memories…", "", len(ids)))
            # One transaction: all of them go, or (a memory vanished meanwhile) none.
            batch = await self._memory.delete_many(ids)
        finally:
            if batch:
                self._undo.append(batch)
                self._render_undo()
                await self._after_change([])
        self._set_status("", lambda: "")

    async def _undo_delete(self) -> None:
        batch = self._undo.pop()
        restored: list[int] = []
        try:
            # Newest first: a memory that superseded another comes back after it, so the
            # link is restored.
            for deleted in reversed(batch):
                memory = await self._memory.undo_delete(deleted)
                restored.append(memory.id)
        finally:
            self._render_undo()
            await self._after_change(restored)
        self._set_status("ok", lambda: self.tr("Brought back %n memories.", "", len(restored)))

    async def _after_change(self, select: Sequence[int]) -> None:
        await self.refresh()
        if select:
            self.select_ids(select)
        self.memories_changed.emit()

    async def show_history(self, memory_id: int) -> None:
        """Show one memory's history in the history dialog (non-modal)."""
        revisions = await self._memory.history(memory_id)
        memory = await self._memory.get(memory_id)
        if not self._alive:
            return
        if self.history_dialog is None:
            self.history_dialog = MemoryHistoryDialog(self)
        self.history_dialog.set_history(memory, revisions)
        self.history_dialog.show()
        self.history_dialog.raise_()

    async def _export(self, kind: str) -> None:
        stamp = self._clock.now().astimezone().strftime("%Y-%m-%d")
        if kind == "json":
            caption, name_filter = (
                self.tr("Export memories as JSON"),
                self.tr("JSON files (*.json)"),
            )
            suggested = f"etos-memories-{stamp}.json"
        else:
            caption = self.tr("Export memories as Markdown")
            name_filter = self.tr("Markdown files (*.md)")
            suggested = f"etos-memories-{stamp}.md"
        path = await self._save_path(self, caption, name_filter, suggested)
        if not path:
            return
        memories = sorted(await self._memory.memories(include_inactive=True), key=lambda m: m.id)
        now = self._clock.now()
        if kind == "json":
            text = transfer.export_json(memories, exported_at=now, app_version=__version__)
        else:
            text = transfer.export_markdown(
                memories, exported_at=now, labels=self._markdown_labels(), tz=_local_zone()
            )
        try:
            await self._run(_write_private, Path(path), text)
        except OSError as exc:
            self._set_status(
                "error",
                lambda e=exc: self.tr("The file could not be written: {error}").format(
                    error=e.strerror or e
                ),
            )
            return
        self._set_status(
            "ok",
            lambda: self.tr("Exported %n memories to {path}.", "", len(memories)).format(path=path),
        )

    def _markdown_labels(self) -> transfer.MarkdownLabels:
        return transfer.MarkdownLabels(
            title=self.tr("Memories"),
            exported=self.tr("Exported {date} · {count} memories"),
            kinds={kind.value: self._kind_heading(kind.value) for kind in MemoryKind},
            archived=self.tr("Archived and ended"),
            empty=self.tr("No memories."),
            importance=self.tr("importance"),
            confidence=self.tr("confidence"),
            tags=self.tr("tags"),
            trigger=self.tr("recall when"),
            superseded_by=self.tr("superseded by #{id}"),
            expired=self.tr("expired"),
        )

    def _kind_heading(self, kind: str) -> str:
        return {
            "fact": self.tr("Facts"),
            "preference": self.tr("Preferences"),
            "instruction": self.tr("Instructions"),
            "episode": self.tr("Episodes"),
            "insight": self.tr("Insights"),
        }[kind]

    async def _import(self) -> None:
        path = await self._open_path(
            self, self.tr("Import memories"), self.tr("Memory exports (*.json)"), ""
        )
        if not path:
            return
        engine = self._memory.engine
        try:
            data = await self._run(_read_limited, Path(path))
        except OSError as exc:
            self._set_status(
                "error",
                lambda e=exc: self.tr("The file could not be read: {error}").format(
                    error=e.strerror or e
                ),
            )
            return
        document = await self._run(
            lambda: transfer.parse_import(
                data, now=self._clock.now(), max_content_chars=engine.max_content_chars
            )
        )
        preview = await self._run(engine.preview_import, document)
        if not preview.has_changes and not preview.invalid:
            self._set_status(
                "ok",
                lambda: self.tr(
                    "Nothing to import: all %n memories are here already.",
                    "",
                    len(preview.unchanged),
                ),
            )
            return
        if not await self._preview_import(self, preview):
            return
        if not preview.has_changes or preview.over_limit:
            return
        result = await self._run(engine.import_memories, preview)
        await self._after_change([*result.added, *result.updated])
        self._set_status(
            "ok",
            lambda: self.tr(
                "Imported: {added} added, {updated} updated, {skipped} skipped."
            ).format(
                added=len(result.added), updated=len(result.updated), skipped=len(preview.invalid)
            ),
        )

    async def reembed_all(self) -> None:
        """Give every memory a vector from the active embedder, with progress and Cancel."""
        if self._memory.engine.embedder is None or self._reembed_cancel is not None:
            return
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        self._reembed_cancel = cancel

        def progress(done: int, total: int) -> None:  # on a worker thread
            loop.call_soon_threadsafe(self._on_reembed_progress, done, total)

        self.reembed_progress.setRange(0, 0)
        self.reembed_progress.show()
        self.reembed_cancel_button.show()
        self.reembed_cancel_button.setEnabled(True)
        self.reembed_button.setEnabled(False)
        self._set_status("", lambda: self.tr("Embedding memories…"))
        try:
            done = await self._memory.reembed(progress, cancel)
        except EtosError as exc:
            self._set_status("error", lambda e=exc: memory_error_text(e))
            return
        finally:
            self._reembed_cancel = None
            if self._alive:
                self.reembed_progress.hide()
                self.reembed_cancel_button.hide()
                self._update_actions()
        if not self._alive:
            return
        if cancel.is_set():
            self._set_status(
                "warning",
                lambda: self.tr("Re-embedding cancelled after %n memories.", "", done),
            )
        elif done == 0:
            self._set_status("ok", lambda: self.tr("Every memory has a vector already."))
        else:
            self._set_status("ok", lambda: self.tr("Embedded %n memories.", "", done))
        with contextlib.suppress(EtosError):
            self._embedding = await self._run(self._memory.engine.embedding_status)
        self._render_embedding()

    def cancel_reembed(self) -> None:
        """Stop re-embedding after the current batch (what was done is kept)."""
        if self._reembed_cancel is not None:
            self._reembed_cancel.set()
            self.reembed_cancel_button.setEnabled(False)
            self._set_status("", lambda: self.tr("Cancelling…"))

    def _on_reembed_progress(self, done: int, total: int) -> None:
        if not self._alive:
            return
        with contextlib.suppress(RuntimeError):  # the page was deleted meanwhile
            self.reembed_progress.setRange(0, max(total, 1))
            self.reembed_progress.setValue(done)
            self.reembed_progress.setFormat(f"{done} / {total}")
            self.reembed_progressed.emit(done, total)

    # -- rendering ------------------------------------------------------------------------------

    def _update_actions(self) -> None:
        ids = self.selected_ids() if self.model.rowCount() else []
        now = self._clock.now()
        memories = [self._memory_of(i) for i in ids]
        idle = not self._busy
        self.add_button.setEnabled(idle)
        self.edit_button.setEnabled(idle and len(ids) == 1)
        self.history_button.setEnabled(len(ids) == 1)
        self.archive_button.setEnabled(idle and any(m.is_active(now) for m in memories))
        self.restore_button.setEnabled(idle and any(not m.is_active(now) for m in memories))
        self.delete_button.setEnabled(idle and bool(ids))
        for action in (self.import_action, self.clear_action):
            action.setEnabled(idle)
        self.clear_action.setEnabled(idle and self.model.rowCount() > 0)
        self.undo_button.setEnabled(idle)
        reembedding = self._reembed_cancel is not None
        self.reembed_button.setEnabled(not reembedding and self._memory.engine.embedder is not None)

    def _render_count(self) -> None:
        total = self.model.rowCount()
        shown = self.proxy.rowCount()
        active = sum(1 for m in self.model.memories() if m.is_active(self._clock.now()))
        if shown == total:
            text = self.tr("%n memories", "", total) + " · " + self.tr("%n active", "", active)
        else:
            text = self.tr("Showing {shown} of {total}").format(shown=shown, total=total)
        self.count_label.setText(text)

    def _render_embedding(self) -> None:
        embedder = self._memory.engine.embedder
        if embedder is None:
            self.embedding_label.setText(
                self.tr("Active: keywords only (no embedding model loaded)")
            )
            return
        text = self.tr("Active embedder: {key}").format(key=embedder.key)
        if self._embedding is not None:
            done, total = self._embedding
            text += " · " + self.tr("{done} of {total} memories embedded").format(
                done=done, total=total
            )
        self.embedding_label.setText(text)

    def _render_undo(self) -> None:
        if not self._undo:
            self.undo_bar.hide()
            return
        count = len(self._undo[-1])
        self.undo_label.setText(
            self.tr("Deleted %n memories. Undo is possible until you close Settings.", "", count)
        )
        self.undo_bar.show()

    def _set_status(self, state: str, text: TextFactory) -> None:
        if not self._alive:
            return
        self._status = (state, text)
        self._render_status()

    def _render_status(self) -> None:
        state, text = self.status()
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))
        _set_state(self.status_label, state)


def _schema_tr(text: str) -> str:
    # The schema's descriptions are English source text, translated in the settings context.
    return QCoreApplication.translate("SettingsSchema", text)


def _local_zone() -> Any:
    return datetime.now(UTC).astimezone().tzinfo or UTC


def _write_private(path: Path, text: str) -> None:
    """Write an export readable by its owner only (it holds personal data)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as file:
        file.write(text)


def _read_limited(path: Path) -> bytes:
    """Read an import file, refusing a huge one before reading it."""
    if path.stat().st_size > transfer.MAX_IMPORT_BYTES:
        raise transfer.ImportInvalid("file too large", reason="too_large")
    return path.read_bytes()
