"""The Memory page of Settings: every long-term memory, searchable, editable and under control.

DESIGN §1 principle 5 (the user sees and controls everything), §3 (delete is real; its undo is
held in memory only until Settings closes), §5 (embedder, "All that fit" or top-K, approval) and §9 (imports are
validated and applied in one transaction).

Every memory operation goes through ``MemoryAccess`` (its worker pool): the UI thread never
waits on the disk or an embedder, and nothing here touches the engine. The editor, the import
preview and the confirmations are the app's own dialogs, opened with ``open()`` and awaited
(``ui.dialogs``); the file choosers start in the documents folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Sequence
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
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
    QVBoxLayout,
    QWidget,
)

from etos_desktop import __version__
from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import EtosError, StorageError
from etos_desktop.core.memory.records import DeletedMemory, Memory, MemoryKind, MemorySource
from etos_desktop.core.settings.schema import spec_for
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.files import write_private_text
from etos_desktop.core.transfer.markdown import MarkdownLabels
from etos_desktop.ui import dialogs
from etos_desktop.ui.error_text import failure_text
from etos_desktop.ui.memory_text import (
    kind_name,
    memory_error_text,
    replaced_by_text,
    source_name,
)
from etos_desktop.ui.settings.memory_dialogs import (
    MemoryFields,
    MemoryHistoryDialog,
    confirm_import,
    open_editor,
)
from etos_desktop.ui.settings.memory_models import (
    COLUMNS,
    HIDDEN_COLUMNS,
    MemoryFilterModel,
    MemoryTableModel,
)
from etos_desktop.ui.settings.page import (
    SettingsPage,
    plain_label,
    schema_tr,
    select_item_ids,
    selected_item_ids,
)

if TYPE_CHECKING:
    from etos_desktop.core.memory.access import EmbedderInfo, EmbeddingState, MemoryAccess
    from etos_desktop.core.transfer.service import TransferService

#: The settings this page edits (saved with the dialog's Save, like every other page).
SETTING_KEYS: Final = (
    "memory.enabled",
    "memory.embedder",
    "memory.per_message",
    "memory.all_that_fit_tokens",
    "memory.retrieval_top_k",
    "memory.strictness",
    "memory.approval",
)


def _local_zone() -> tzinfo:
    return datetime.now(UTC).astimezone().tzinfo or UTC


class MemoryPage(SettingsPage):
    """The Memory page: the memory settings, and the memory table with its actions.

    Memory actions (add, edit, archive, delete, import…) take effect at once; the settings at
    the top are saved with the dialog's Save like every other page. Deleted memories can be
    brought back with Undo until :meth:`close_page` (the Settings dialog calls it when it
    closes): the snapshots are held in memory only.

    Args:
        memory: The app's memory access (all work runs off the UI thread).
        settings: The settings store (``memory.*`` keys).
        transfer: Export and import of every memory layer (the Import and Export actions).
        clock: The current time (what counts as active).
        parent: The parent widget.

    Signals:
        memories_changed(): memories were added, changed, archived, deleted or imported here.
        refreshed(): the table was reloaded from the database.
        reembed_progressed(int, int): re-embedding reached ``(done, total)``.
    """

    memories_changed = Signal()
    refreshed = Signal()
    reembed_progressed = Signal(int, int)

    def __init__(
        self,
        memory: MemoryAccess,
        settings: SettingsStore,
        *,
        transfer: TransferService,
        clock: Clock | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryPage")
        self._memory = memory
        self._transfer = transfer
        self._settings = settings
        self._clock: Clock = clock or SystemClock()
        self._busy = False
        self._alive = True
        self._undo: list[list[DeletedMemory]] = []
        self._reembed_cancel: threading.Event | None = None
        self._embedding: EmbeddingState | None = None
        self.history_dialog: MemoryHistoryDialog | None = None

        self.model = MemoryTableModel(self._clock, self)
        self.proxy = MemoryFilterModel(self._clock, self)
        self.proxy.setSourceModel(self.model)
        self._build()
        self.retranslate()
        self._update_actions()

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        self._build_settings()
        self._build_list()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.settings_group)
        layout.addLayout(self._filters)
        layout.addWidget(self.table, 1)
        layout.addLayout(self._actions)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.status_label)

    def _choice_combo(self, key: str, parent: QWidget) -> QComboBox:
        combo = QComboBox(parent)
        combo.setObjectName(f"setting:{key}")
        for choice in spec_for(key).choices or ():
            combo.addItem(str(choice), choice)
        combo.setCurrentIndex(max(combo.findData(self._settings.get(key)), 0))
        combo.currentIndexChanged.connect(self._on_setting_edited)
        return combo

    def _build_settings(self) -> None:
        group = self.settings_group = QGroupBox(self)
        self.enabled_check = QCheckBox(group)
        self.enabled_check.setObjectName("setting:memory.enabled")
        self.enabled_check.setChecked(self._settings.get_bool("memory.enabled"))
        self.enabled_check.toggled.connect(self._on_setting_edited)
        self.approval_label = QLabel(group)
        self.approval_combo = self._choice_combo("memory.approval", group)
        self.top_k_label = QLabel(group)
        self.top_k_spin = QSpinBox(group)
        self.top_k_spin.setObjectName("setting:memory.retrieval_top_k")
        spec = spec_for("memory.retrieval_top_k")
        self.top_k_spin.setRange(int(spec.minimum or 1), int(spec.maximum or 50))
        self.top_k_spin.setValue(self._settings.get_int("memory.retrieval_top_k"))
        self.top_k_spin.valueChanged.connect(self._on_setting_edited)
        self.per_message_label = QLabel(group)
        self.per_message_combo = self._choice_combo("memory.per_message", group)
        self.per_message_combo.currentIndexChanged.connect(self._on_per_message_combo_changed)
        self.fit_budget_label = QLabel(group)
        self.fit_budget_spin = QSpinBox(group)
        self.fit_budget_spin.setObjectName("setting:memory.all_that_fit_tokens")
        spec = spec_for("memory.all_that_fit_tokens")
        self.fit_budget_spin.setRange(int(spec.minimum or 200), int(spec.maximum or 20000))
        self.fit_budget_spin.setSingleStep(100)
        self.fit_budget_spin.setValue(self._settings.get_int("memory.all_that_fit_tokens"))
        self.fit_budget_spin.valueChanged.connect(self._on_setting_edited)
        self.embedder_label = QLabel(group)
        self.embedder_combo = self._choice_combo("memory.embedder", group)
        self.strictness_label = QLabel(group)
        self.strictness_combo = self._choice_combo("memory.strictness", group)
        self._on_per_message_combo_changed()

        # Two label–field columns side by side; a translation too long for its column puts the
        # field under its label instead of squeezing either (and the dialog never grows).
        # Left: how the model may save and how memories are matched; right: how many are sent.
        columns = QHBoxLayout()
        columns.setSpacing(16)
        for pairs in (
            (
                (self.approval_label, self.approval_combo),
                (self.embedder_label, self.embedder_combo),
                (self.strictness_label, self.strictness_combo),
            ),
            (
                (self.per_message_label, self.per_message_combo),
                (self.fit_budget_label, self.fit_budget_spin),
                (self.top_k_label, self.top_k_spin),
            ),
        ):
            form = QFormLayout()
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
            form.setVerticalSpacing(4)
            for label, field in pairs:
                form.addRow(label, field)
            columns.addLayout(form)
        columns.addStretch(1)

        self.embedding_label = plain_label(group)
        self.embedding_label.setObjectName("embedderDescription")
        self.embedding_label.setAlignment(
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        )
        self.reembed_button = QPushButton(group)
        self.reembed_button.clicked.connect(self._on_reembed_button_clicked)
        self.reembed_progress = QProgressBar(group)
        self.reembed_progress.setMaximumWidth(140)
        self.reembed_progress.hide()
        self.reembed_cancel_button = QPushButton(group)
        self.reembed_cancel_button.clicked.connect(self.cancel_reembed)
        self.reembed_cancel_button.hide()
        embed_row = QHBoxLayout()
        embed_row.addWidget(self.embedding_label, 1)
        embed_row.addWidget(self.reembed_progress)
        embed_row.addWidget(self.reembed_cancel_button)
        embed_row.addWidget(self.reembed_button)

        box = QVBoxLayout(group)
        box.setContentsMargins(8, 6, 8, 6)
        box.setSpacing(6)
        box.addWidget(self.enabled_check)
        box.addLayout(columns)
        box.addLayout(embed_row)

    def _build_list(self) -> None:
        self.search_edit = QLineEdit(self)
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setMinimumWidth(120)
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
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentIndexChanged.connect(self._on_filter_changed)
        self._filters = QHBoxLayout()
        self._filters.addWidget(self.search_edit, 1)
        self._filters.addWidget(self.kind_filter)
        self._filters.addWidget(self.status_filter)
        self._filters.addWidget(self.source_filter)

        self.table = QTableView(self)
        self.table.setObjectName("memoryTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        # Rows are chosen with the arrow keys; Tab moves on to the buttons.
        self.table.setTabKeyNavigation(False)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COLUMNS.index("id"), Qt.SortOrder.DescendingOrder)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setAlternatingRowColors(True)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(COLUMNS.index("content"), QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(32)
        header.setHighlightSections(False)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._on_header_context_menu_requested)
        for column in HIDDEN_COLUMNS:
            self.table.setColumnHidden(COLUMNS.index(column), True)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        delete_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table)
        # Only while the table has focus: Delete in the search box edits the search.
        delete_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete_shortcut.activated.connect(self.request_delete)

        # Tool buttons: as wide as their words (push buttons are at least 80 px each, and seven
        # of them would set the page's minimum width).
        self.add_button = self.action_button(self._on_add_button_clicked)
        self.edit_button = self.action_button(self._on_edit_button_clicked)
        self.archive_button = self.action_button(self._on_archive_button_clicked)
        self.restore_button = self.action_button(self._on_restore_button_clicked)
        self.delete_button = self.action_button(self.request_delete)
        self.history_button = self.action_button(self._on_history_button_clicked)
        # A push button draws its menu arrow beside the text (a tool button's overlaps it).
        self.more_button = QPushButton(self)
        self.more_button.setObjectName("memoryMoreButton")
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
        self.count_label = QLabel(self)
        self.count_label.setObjectName("memoryCount")
        self._actions = self.action_row(
            [
                self.add_button,
                self.edit_button,
                self.archive_button,
                self.restore_button,
                self.delete_button,
                self.history_button,
                self.more_button,
            ],
            self.count_label,
        )
        self.undo_bar, self.undo_label, self.undo_button = self.make_undo_bar(
            "memoryUndoBar", self._on_undo_button_clicked
        )

    def retranslate(self) -> None:
        self.settings_group.setTitle(self.tr("Settings"))
        self.enabled_check.setText(self.tr("Use long-term memory in conversations"))
        self.enabled_check.setToolTip(schema_tr(spec_for("memory.enabled").description))
        self.approval_label.setText(self.tr("When the model saves"))
        self._name_items(
            self.approval_combo,
            {
                "ask": self.tr("Ask every time"),
                "notify": self.tr("Save and notify"),
                "never": self.tr("Never save"),
            },
        )
        self.approval_combo.setToolTip(schema_tr(spec_for("memory.approval").description))
        self.embedder_label.setText(self.tr("Matching"))
        self._name_items(
            self.embedder_combo,
            {
                "auto": self.tr("Automatic"),
                "builtin": self.tr("Built-in multilingual model"),
                "keywords": self.tr("Keywords only"),
            },
        )
        self.embedder_combo.setToolTip(schema_tr(spec_for("memory.embedder").description))
        self.strictness_label.setText(self.tr("Relevance"))
        self._name_items(
            self.strictness_combo,
            {
                "strict": self.tr("Strict — fewer, surer"),
                "balanced": self.tr("Balanced"),
                "broad": self.tr("Broad — more, weaker"),
            },
        )
        self.strictness_combo.setToolTip(schema_tr(spec_for("memory.strictness").description))
        self.per_message_label.setText(self.tr("Memories per message"))
        self._name_items(
            self.per_message_combo,
            {
                "auto": self.tr("Automatic — all that fit, else the best matches"),
                "fixed": self.tr("A fixed number of best matches"),
            },
        )
        self.per_message_combo.setToolTip(schema_tr(spec_for("memory.per_message").description))
        self.per_message_combo.setAccessibleName(self.tr("Memories per message"))
        self.fit_budget_label.setText(self.tr("All that fit, up to"))
        self.fit_budget_spin.setSuffix(self.tr(" tokens"))
        self.fit_budget_spin.setToolTip(
            schema_tr(spec_for("memory.all_that_fit_tokens").description)
        )
        self.fit_budget_spin.setAccessibleName(self.tr("Token budget for sending all memories"))
        self.top_k_label.setText(self.tr("Best matches, at most"))
        self.top_k_spin.setToolTip(schema_tr(spec_for("memory.retrieval_top_k").description))
        self.top_k_spin.setAccessibleName(self.tr("Most memories chosen by relevance"))
        self.reembed_button.setText(self.tr("Re-embed all"))
        self.reembed_button.setToolTip(
            self.tr("Give every memory a vector from the model in use, in the background.")
        )
        self.reembed_cancel_button.setText(self.tr("Cancel"))
        self.search_edit.setPlaceholderText(self.tr("Filter by text, tag or #number"))
        self.search_edit.setAccessibleName(self.tr("Filter memories"))
        self.table.setAccessibleName(self.tr("Memories"))
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

    @staticmethod
    def _name_items(combo: QComboBox, names: dict[str, str]) -> None:
        for index in range(combo.count()):
            value = str(combo.itemData(index))
            combo.setItemText(index, names.get(value, value))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # Memories change in conversations too: every visit shows the database as it is now.
        if not self._busy and self._alive:
            self.spawn(self.refresh(), self.tr("The list of memories was not loaded."))

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
            "status": replaced_by_text("0000"),
        }
        header_metrics = header.fontMetrics()
        for column, sample in samples.items():
            section = COLUMNS.index(column)
            title = self.model.column_title(column)
            width = max(
                metrics.horizontalAdvance(sample), header_metrics.horizontalAdvance(title) + 16
            )
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
        if key == "memory.per_message":
            return self.per_message_combo.currentData()
        if key == "memory.all_that_fit_tokens":
            return self.fit_budget_spin.value()
        if key == "memory.strictness":
            return self.strictness_combo.currentData()
        raise KeyError(key)

    def is_modified(self) -> bool:
        return any(self.value(key) != self._settings.get(key) for key in SETTING_KEYS)

    def apply(self) -> None:
        for key in SETTING_KEYS:
            self._settings.set(key, self.value(key))

    def _on_setting_edited(self, *_args: object) -> None:
        self.changed.emit()

    def _on_per_message_combo_changed(self, *_args: object) -> None:
        # The budget matters only to Automatic; the number of best matches to both modes
        # (Automatic falls back to it when the memories do not fit).
        self.fit_budget_spin.setEnabled(self.per_message_combo.currentData() == "auto")

    # -- public API -----------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """The ids of the selected memories, in the table's order."""
        return selected_item_ids(self.table, self.proxy, MemoryTableModel.MEMORY_ROLE)

    def select_ids(self, memory_ids: Sequence[int]) -> None:
        """Select these memories (those shown)."""
        select_item_ids(self.table, self.proxy, self.model, memory_ids)

    def undo_available(self) -> int:
        """How many deleted memories Undo would bring back (the last batch)."""
        return len(self._undo[-1]) if self._undo else 0

    def close_page(self) -> None:
        """Settings is closing: forget the deleted memories held for Undo, stop the work.

        Work already handed to a worker finishes there (an import stays all or nothing); the
        page no longer reacts to it, and the dialogs it opened close unanswered.
        """
        self._undo.clear()
        self._render_undo()
        if self._reembed_cancel is not None:
            self._reembed_cancel.set()
        self._alive = False
        super().close_page()

    async def refresh(self) -> None:
        """Reload every memory from the database, keeping the selection and scroll position."""
        memories = await self._memory.memories(include_inactive=True)
        state = await self._memory.embedding_state()
        if not self._alive:
            return
        self._embedding = state
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
        self._start(self._add(), self.tr("The memory was not added."))

    def _on_edit_button_clicked(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self._start(self._edit(ids[0]), self._not_saved_text(ids[0]))

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        memory = index.data(MemoryTableModel.MEMORY_ROLE)
        if isinstance(memory, Memory) and not self._busy:
            self._start(self._edit(memory.id), self._not_saved_text(memory.id))

    def _not_saved_text(self, memory_id: int) -> str:
        return self.tr("Memory #{id} was not saved.").format(id=memory_id)

    def _on_archive_button_clicked(self) -> None:
        now = self._clock.now()
        ids = [i for i in self.selected_ids() if self._memory_of(i).is_active(now)]
        if ids:
            self._start(
                self._change_state(ids, archive=True),
                self.tr("The memories were not archived."),
            )

    def _on_restore_button_clicked(self) -> None:
        now = self._clock.now()
        ids = [i for i in self.selected_ids() if not self._memory_of(i).is_active(now)]
        if ids:
            self._start(
                self._change_state(ids, archive=False),
                self.tr("The memories were not restored."),
            )

    def request_delete(self) -> None:
        """Delete the selected memories after a confirmation (Undo until Settings closes)."""
        ids = self.selected_ids()
        if not ids or self._busy:
            return
        if len(ids) == 1:
            text = self.tr(
                "Delete memory #{id}? It is removed from memory and from the records of what was sent. Conversations keep their messages; backups keep it until they rotate.\n\nYou can undo this only until you close Settings."
            ).format(id=ids[0])
        else:
            text = self.tr(
                "Delete %n selected memories? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.\n\nYou can undo this only until you close Settings.",
                "",
                len(ids),
            )
        self._start(
            self._confirm_then_delete(ids, self.tr("Delete memories"), text, self.tr("Delete")),
            self.tr("The memories were not deleted."),
        )

    def request_clear_all(self) -> None:
        """Delete every memory, active and archived, after a confirmation with the count."""
        ids = [m.id for m in self.model.memories()]
        if not ids:
            self.set_status("", lambda: self.tr("There are no memories to delete."))
            return
        if self._busy:
            return
        text = self.tr(
            "Delete all %n memories, active and archived? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.\n\nYou can undo this only until you close Settings.",
            "",
            len(ids),
        )
        self._start(
            self._confirm_then_delete(
                ids, self.tr("Delete all memories"), text, self.tr("Delete all")
            ),
            self.tr("The memories were not deleted."),
        )

    def _on_undo_button_clicked(self) -> None:
        if self._undo and not self._busy:
            self._start(self._undo_delete(), self.tr("The deleted memories were not restored."))

    def _on_history_button_clicked(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.spawn(self.show_history(ids[0]), self.tr("The history was not shown."))

    def _on_export_json_action_triggered(self) -> None:
        self._start(self._export("json"), self.tr("The memories were not exported."))

    def _on_export_markdown_action_triggered(self) -> None:
        self._start(self._export("markdown"), self.tr("The memories were not exported."))

    def _on_import_action_triggered(self) -> None:
        self._start(self._import(), self.tr("The memories were not imported."))

    def _on_reembed_button_clicked(self) -> None:
        if self._reembed_cancel is None:
            self.spawn(self.reembed_all(), self.tr("Re-embedding did not finish."))

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

    def _on_header_context_menu_requested(self, position: QPoint) -> None:
        # Which columns show: every one but the memory's text can be hidden.
        header = self.table.horizontalHeader()
        menu = QMenu(header)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        for section, column in enumerate(COLUMNS):
            if column == "content":
                continue
            action = menu.addAction(self.model.column_title(column))
            action.setCheckable(True)
            action.setChecked(not self.table.isColumnHidden(section))
            action.toggled.connect(
                lambda shown, s=section: self.table.setColumnHidden(s, not shown)
            )
        menu.popup(header.mapToGlobal(position))

    # -- the work -------------------------------------------------------------------------------

    def _start(self, coro: Coroutine[Any, Any, None], failure: str) -> None:
        """Run one memory action at a time; the buttons are off while it runs."""
        if self._busy:
            coro.close()
            return
        self._busy = True
        self._update_actions()
        self.spawn(self._busy_while(coro), failure)

    async def _busy_while(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            await coro
        finally:
            self._busy = False
            if self._alive:
                self._update_actions()

    def failure_message(self, failure: str, error: BaseException) -> str:
        if isinstance(error, EtosError):
            return f"{failure} {memory_error_text(error)}".strip()
        return failure_text(failure, error)

    def _memory_of(self, memory_id: int) -> Memory:
        source_row = self.model.row_of(memory_id)
        assert source_row is not None
        return self.model.memory(source_row)

    async def _add(self) -> None:
        fields = await open_editor(
            self, MemoryFields(), self.tr("Add a memory"), max_chars=self._memory.max_content_chars
        )
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
            self.set_status(
                "ok",
                lambda: self.tr("Merged into memory #{id}, which said the same.").format(
                    id=result.id
                ),
            )
        else:
            self.set_status("ok", lambda: self.tr("Saved as #{id}.").format(id=result.id))

    async def _edit(self, memory_id: int) -> None:
        current = await self._memory.get(memory_id)
        if current is None:
            await self.refresh()
            self.set_status("error", lambda: self.tr("That memory no longer exists."))
            return
        title = self.tr("Edit memory #{id}").format(id=memory_id)
        fields = await open_editor(
            self, MemoryFields.of(current), title, max_chars=self._memory.max_content_chars
        )
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
        self.set_status("ok", lambda: self.tr("Memory #{id} saved.").format(id=memory_id))

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
            self.set_status("ok", lambda: self.tr("Archived %n memories.", "", done))
        else:
            self.set_status("ok", lambda: self.tr("Restored %n memories.", "", done))

    async def _confirm_then_delete(
        self, ids: list[int], title: str, text: str, action: str
    ) -> None:
        if not await dialogs.confirm(self, title, text, action, destructive=True):
            return
        if len(ids) > 1:
            self.set_status("", lambda: self.tr("Deleting %n memories…", "", len(ids)))
        # One transaction: all of them go, or (a memory vanished meanwhile) none.
        batch = await self._memory.delete_many(ids)
        self._undo.append(batch)
        self._render_undo()
        self.clear_status()
        await self._after_change([])

    async def _undo_delete(self) -> None:
        batch = self._undo.pop()
        restored: list[int] = []
        try:
            # One transaction for the whole batch (10,000 memories come back in seconds).
            restored = [memory.id for memory in await self._memory.undo_delete_many(batch)]
        finally:
            self._render_undo()
            await self._after_change(restored)
        self.set_status("ok", lambda: self.tr("Brought back %n memories.", "", len(restored)))

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
            caption = self.tr("Export memories as JSON")
            name_filter = self.tr("JSON files (*.json)")
            suggested = f"etos-memories-{stamp}.json"
        else:
            caption = self.tr("Export memories as Markdown")
            name_filter = self.tr("Markdown files (*.md)")
            suggested = f"etos-memories-{stamp}.md"
        path = await dialogs.choose_save_path(self, caption, name_filter, suggested)
        if not path:
            return
        now = self._clock.now()
        if kind == "json":
            text, count = await self._transfer.export_json(now=now, app_version=__version__)
        else:
            text, count = await self._transfer.export_markdown(
                now=now, labels=self._markdown_labels(), tz=_local_zone()
            )
        try:
            await asyncio.to_thread(write_private_text, Path(path), text)
        except StorageError as exc:
            self.set_status(
                "error",
                lambda e=exc: failure_text(self.tr("The memories were not exported."), e),
            )
            return
        self.set_status(
            "ok",
            lambda: self.tr("Exported %n memories to {path}.", "", count).format(path=path),
        )

    def _markdown_labels(self) -> MarkdownLabels:
        return MarkdownLabels(
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
            summaries=self.tr("Session summaries"),
            untitled=self.tr("Untitled conversation"),
            earlier_summary=self.tr("earlier version"),
            archived_summary=self.tr("archived"),
            profile=self.tr("User profile"),
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
        path = await dialogs.choose_open_path(
            self, self.tr("Import memories"), self.tr("Memory exports (*.json)")
        )
        if not path:
            return
        try:
            preview = await self._transfer.preview_import_file(Path(path), now=self._clock.now())
        except OSError as exc:
            self.set_status(
                "error",
                lambda e=exc: self.tr("The file could not be read: {error}").format(
                    error=e.strerror or e
                ),
            )
            return
        if not preview.has_changes and not preview.invalid:
            self.set_status(
                "ok",
                lambda: self.tr(
                    "Nothing to import: all %n memories are here already.",
                    "",
                    len(preview.unchanged),
                ),
            )
            return
        if not await confirm_import(self, preview):
            return
        if not preview.has_changes or preview.over_limit:
            return
        result = await self._transfer.apply_import(preview)
        # Undoing an earlier delete now would bring back what the import may have just put
        # back: duplicates that take slots in what is sent (issue 19). The Undo is withdrawn.
        withdrawn = bool(self._undo) and bool(result.added or result.updated)
        if withdrawn:
            self._undo.clear()
            self._render_undo()
        await self._after_change([*result.added, *result.updated])
        counts = {
            "added": len(result.added),
            "updated": len(result.updated),
            "skipped": len(preview.invalid),
        }
        self.set_status(
            "ok",
            (
                lambda: self.tr(
                    "Imported: {added} added, {updated} updated, {skipped} skipped. The earlier "
                    "delete can no longer be undone: the import changed the memories."
                ).format(**counts)
            )
            if withdrawn
            else (
                lambda: self.tr(
                    "Imported: {added} added, {updated} updated, {skipped} skipped."
                ).format(**counts)
            ),
        )

    async def reembed_all(self) -> None:
        """Give every memory a vector from the active embedder, with progress and Cancel."""
        if self._embedding is None or self._embedding.embedder is None:
            return
        if self._reembed_cancel is not None:
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
        self.set_status("", lambda: self.tr("Embedding memories…"))
        try:
            done = await self._memory.reembed(progress, cancel)
        finally:
            self._reembed_cancel = None
            if self._alive:
                self.reembed_progress.hide()
                self.reembed_cancel_button.hide()
                self._update_actions()
        if not self._alive:
            return
        if cancel.is_set():
            self.set_status(
                "warning",
                lambda: self.tr("Re-embedding cancelled after %n memories.", "", done),
            )
        elif done == 0:
            self.set_status("ok", lambda: self.tr("Every memory has a vector already."))
        else:
            self.set_status("ok", lambda: self.tr("Embedded %n memories.", "", done))
        self._embedding = await self._memory.embedding_state()
        self._render_embedding()

    def cancel_reembed(self) -> None:
        """Stop re-embedding after the current batch (what was done is kept)."""
        if self._reembed_cancel is not None:
            self._reembed_cancel.set()
            self.reembed_cancel_button.setEnabled(False)
            self.set_status("", lambda: self.tr("Cancelling…"))

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
        for action in (self.import_action, self.export_json_action, self.export_markdown_action):
            action.setEnabled(idle)
        self.clear_action.setEnabled(idle and self.model.rowCount() > 0)
        self.undo_button.setEnabled(idle)
        has_embedder = self._embedding is not None and self._embedding.embedder is not None
        self.reembed_button.setEnabled(self._reembed_cancel is None and has_embedder)

    def _render_count(self) -> None:
        total = self.model.rowCount()
        shown = self.proxy.rowCount()
        active = sum(1 for m in self.model.memories() if m.is_active(self._clock.now()))
        if shown == total:
            text = self.tr("%n memories", "", total) + " · " + self.tr("%n active", "", active)
        else:
            text = self.tr("Showing {shown} of {total}").format(shown=shown, total=total)
        self.count_label.setText(text)

    def embedder_text(self, info: EmbedderInfo | None) -> str:
        """Words for the embedder in use (its key is jargon)."""
        if info is None:
            return self.tr("Keywords only: no model for matching by meaning is loaded.")
        if info.kind == "builtin":
            return self.tr("Built-in model (multilingual), {dimension} dimensions").format(
                dimension=info.dimension
            )
        if info.kind == "endpoint":
            return self.tr("“{model}” on {host}, {dimension} dimensions").format(
                model=info.model, host=info.host, dimension=info.dimension
            )
        return self.tr("Model “{model}”, {dimension} dimensions").format(
            model=info.model, dimension=info.dimension
        )

    def _render_embedding(self) -> None:
        state = self._embedding
        if state is None:
            self.embedding_label.setText(self.tr("Matching by meaning: checking…"))
            return
        text = self.tr("Matching by meaning: {embedder}").format(
            embedder=self.embedder_text(state.embedder)
        )
        if state.embedder is None:
            text = self.embedder_text(None)
        else:
            text += " · " + self.tr("{done} of {total} memories indexed").format(
                done=state.embedded, total=state.total
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
