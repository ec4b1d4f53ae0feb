"""The Summaries page of Settings: every session summary, visible, editable and under control.

DESIGN §6 (the three numbers, the list, edit, archive/restore, delete, clear all with the count,
"Summarise now"), §1 principle 5 (the user sees and controls everything) and §3 (delete is real;
its undo is held in memory only until Settings closes).

Every summary operation goes through ``SummaryAccess`` (the DB thread) and "Summarise now", the
next scheduled times and the job status through the background jobs: the UI thread never waits
on the disk or the model. The editor and the confirmations are the app's own dialogs, opened with
``open()`` and awaited.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.jobs import JobName, JobStatus
from etos_desktop.core.settings.schema import spec_for, validate
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.summaries.records import DeletedSummary, Summary, SummaryActivity
from etos_desktop.ui import dialogs
from etos_desktop.ui.error_text import failure_text
from etos_desktop.ui.job_text import job_error_text, local_time
from etos_desktop.ui.memory_text import memory_error_text
from etos_desktop.ui.settings.page import (
    SettingsPage,
    plain_label,
    schema_tr,
    select_item_ids,
    selected_item_ids,
    set_state,
)
from etos_desktop.ui.settings.summary_dialogs import SummaryHistoryDialog, open_summary_editor
from etos_desktop.ui.settings.summary_models import COLUMNS, SummaryFilterModel, SummaryTableModel

if TYPE_CHECKING:
    from etos_desktop.core.summaries.access import SummaryAccess
    from etos_desktop.ui.jobs_bridge import JobsBridge

#: The settings this page edits (saved with the dialog's Save, like every other page).
SETTING_KEYS: Final = (
    "summaries.enabled",
    "summaries.min_user_turns",
    "summaries.min_gap_minutes",
    "summaries.inject_count",
)


class SummariesPage(SettingsPage):
    """The Summaries page: the summary settings, the summaries, and what the job will do next.

    Summary actions (edit, archive, delete, "Summarise now") take effect at once; the settings
    at the top are saved with the dialog's Save. Deleted summaries can be brought back with Undo
    until :meth:`close_page`: the snapshots are held in memory only.

    Args:
        summaries: The app's summary access (all work runs off the UI thread).
        settings: The settings store (``summaries.*`` keys).
        jobs: The background jobs (``None``: no "Summarise now", no schedule shown).
        clock: The current time.
        parent: The parent widget.

    Signals:
        refreshed(): the page was reloaded from the database.
        summaries_changed(): summaries were edited, archived, deleted or written here.
    """

    refreshed = Signal()
    summaries_changed = Signal()

    def __init__(
        self,
        summaries: SummaryAccess,
        settings: SettingsStore,
        *,
        jobs: JobsBridge | None = None,
        clock: Clock | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("summariesPage")
        self._summaries = summaries
        self._settings = settings
        self._jobs = jobs
        self._clock: Clock = clock or SystemClock()
        self._busy = False
        self._alive = True
        self._undo: list[list[DeletedSummary]] = []
        self._activity: dict[int, SummaryActivity] = {}
        self._job_status: JobStatus | None = None
        self._refresh_queued = False
        self.history_dialog: SummaryHistoryDialog | None = None

        self.model = SummaryTableModel(self)
        self.proxy = SummaryFilterModel(self)
        self.proxy.setSourceModel(self.model)
        self._build()
        self.retranslate()
        self._update_actions()
        if jobs is not None:
            jobs.summaries_changed.connect(self._on_jobs_summaries_changed)
            jobs.jobs_changed.connect(self._on_jobs_summaries_changed)

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        self._build_settings()
        self._build_list()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.settings_group)
        layout.addLayout(self._filters)
        layout.addWidget(self.conversation_bar)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(self._actions)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.status_label)

    def _spin(self, key: str, parent: QWidget) -> QSpinBox:
        spec = spec_for(key)
        spin = QSpinBox(parent)
        spin.setObjectName(f"setting:{key}")
        spin.setRange(int(spec.minimum or 0), int(spec.maximum or 10_000))
        spin.setValue(self._settings.get_int(key))
        spin.valueChanged.connect(self._on_setting_edited)
        return spin

    def _build_settings(self) -> None:
        group = self.settings_group = QGroupBox(self)
        self.enabled_check = QCheckBox(group)
        self.enabled_check.setObjectName("setting:summaries.enabled")
        self.enabled_check.setChecked(self._settings.get_bool("summaries.enabled"))
        self.enabled_check.toggled.connect(self._on_setting_edited)
        self.turns_label = QLabel(group)
        self.turns_spin = self._spin("summaries.min_user_turns", group)
        self.gap_label = QLabel(group)
        self.gap_spin = self._spin("summaries.min_gap_minutes", group)
        self.inject_label = QLabel(group)
        self.inject_spin = self._spin("summaries.inject_count", group)
        self.settings_error = plain_label(group)
        set_state(self.settings_error, "error")
        self.settings_error.hide()
        columns = QHBoxLayout()
        columns.setSpacing(16)
        for label, field in (
            (self.turns_label, self.turns_spin),
            (self.gap_label, self.gap_spin),
            (self.inject_label, self.inject_spin),
        ):
            form = QFormLayout()
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
            form.addRow(label, field)
            columns.addLayout(form)
        columns.addStretch(1)
        self.job_label = plain_label(group)
        self.job_label.setObjectName("summaryJobStatus")
        box = QVBoxLayout(group)
        box.setContentsMargins(8, 6, 8, 6)
        box.setSpacing(6)
        box.addWidget(self.enabled_check)
        box.addLayout(columns)
        box.addWidget(self.settings_error)
        box.addWidget(self.job_label)

    def _build_list(self) -> None:
        self.search_edit = QLineEdit(self)
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setMinimumWidth(120)
        self.search_edit.textChanged.connect(self._on_search_edit_text_changed)
        self.conversation_filter = QComboBox(self)
        self.conversation_filter.setObjectName("summaryConversation")
        self.conversation_filter.addItem("", None)
        self.conversation_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.conversation_filter.setMaximumWidth(260)
        self.conversation_filter.currentIndexChanged.connect(self._on_conversation_changed)
        self.status_filter = QComboBox(self)
        for value in ("all", "current", "archived"):
            self.status_filter.addItem("", value)
        self.status_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.status_filter.currentIndexChanged.connect(self._on_status_filter_changed)
        self._filters = QHBoxLayout()
        self._filters.addWidget(self.search_edit, 1)
        self._filters.addWidget(self.conversation_filter)
        self._filters.addWidget(self.status_filter)

        self.conversation_bar = QFrame(self)
        self.conversation_bar.setObjectName("summaryConversationBar")
        self.conversation_label = plain_label(self.conversation_bar)
        self.conversation_label.setObjectName("summaryConversationStatus")
        self.summarise_button = QPushButton(self.conversation_bar)
        self.summarise_button.setObjectName("summariseNowButton")
        self.summarise_button.clicked.connect(self._on_summarise_button_clicked)
        bar = QHBoxLayout(self.conversation_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.conversation_label, 1)
        bar.addWidget(self.summarise_button, 0, Qt.AlignmentFlag.AlignTop)

        self.table = QTableView(self)
        self.table.setObjectName("summaryTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COLUMNS.index("time"), Qt.SortOrder.DescendingOrder)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(COLUMNS.index("content"), QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        delete_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table)
        delete_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete_shortcut.activated.connect(self.request_delete)
        # The full text of the selected summary, below the one-line table.
        self.full_text = QPlainTextEdit(self)
        self.full_text.setObjectName("summaryFullText")
        self.full_text.setReadOnly(True)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.full_text)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)

        self.edit_button = self.action_button(self._on_edit_button_clicked)
        self.archive_button = self.action_button(self._on_archive_button_clicked)
        self.restore_button = self.action_button(self._on_restore_button_clicked)
        self.delete_button = self.action_button(self.request_delete)
        self.history_button = self.action_button(self._on_history_button_clicked)
        self.more_button = QPushButton(self)
        self.more_button.setObjectName("summaryMoreButton")
        self.more_menu = QMenu(self.more_button)
        self.clear_action = QAction(self.more_menu)
        self.clear_action.triggered.connect(self.request_clear_all)
        self.more_menu.addAction(self.clear_action)
        self.more_button.setMenu(self.more_menu)
        self.count_label = QLabel(self)
        self.count_label.setObjectName("summaryCount")
        self._actions = self.action_row(
            [
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
            "summaryUndoBar", self._on_undo_button_clicked
        )

    def retranslate(self) -> None:
        self.settings_group.setTitle(self.tr("Settings"))
        self.enabled_check.setText(self.tr("Summarise conversations in the background"))
        self.enabled_check.setToolTip(schema_tr(spec_for("summaries.enabled").description))
        self.turns_label.setText(self.tr("After user messages"))
        self.turns_spin.setToolTip(schema_tr(spec_for("summaries.min_user_turns").description))
        self.gap_label.setText(self.tr("Time between summaries"))
        self.gap_spin.setSuffix(self.tr(" min"))
        self.gap_spin.setToolTip(schema_tr(spec_for("summaries.min_gap_minutes").description))
        self.inject_label.setText(self.tr("Summaries sent with a message"))
        self.inject_spin.setToolTip(schema_tr(spec_for("summaries.inject_count").description))
        self.search_edit.setPlaceholderText(self.tr("Filter by text or conversation"))
        self.search_edit.setAccessibleName(self.tr("Filter summaries"))
        self.table.setAccessibleName(self.tr("Summaries"))
        self.full_text.setAccessibleName(self.tr("Full summary"))
        self.conversation_filter.setItemText(0, self.tr("All conversations"))
        for index, text in enumerate(
            (self.tr("Current and earlier"), self.tr("Current only"), self.tr("Archived"))
        ):
            self.status_filter.setItemText(index, text)
        self.summarise_button.setText(self.tr("Summarise now"))
        self.summarise_button.setToolTip(
            self.tr("Write a summary of this conversation now, whatever the waiting time.")
        )
        self.full_text.setPlaceholderText(self.tr("Select a summary to read all of it."))
        self.edit_button.setText(self.tr("Edit…"))
        self.archive_button.setText(self.tr("Archive"))
        self.restore_button.setText(self.tr("Restore"))
        self.delete_button.setText(self.tr("Delete"))
        self.history_button.setText(self.tr("History"))
        self.more_button.setText(self.tr("More"))
        self.clear_action.setText(self.tr("Delete all summaries…"))
        self.undo_button.setText(self.tr("Undo"))
        self.model.retranslate()
        self._size_columns()
        self._render_conversations()
        self._render_job()
        self._render_conversation_bar()
        self._render_undo()
        self._render_count()
        self._render_status()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # Summaries are written in the background: every visit shows the database as it is now.
        if not self._busy and self._alive:
            self.spawn(self.refresh(), self.tr("The list of summaries was not loaded."))

    def _size_columns(self) -> None:
        metrics = self.table.fontMetrics()
        header = self.table.horizontalHeader()
        samples = {
            "conversation": "M" * 14,
            "time": "2026-12-31 23:59",
            "status": self.model.status_text(_sample_edited()),
        }
        for column, sample in samples.items():
            title = self.model.column_title(column)
            width = max(
                metrics.horizontalAdvance(sample),
                header.fontMetrics().horizontalAdvance(title) + 16,
            )
            header.resizeSection(COLUMNS.index(column), width + 16)

    # -- settings (saved with the dialog's Save) ----------------------------------------------

    def value(self, key: str) -> object:
        """The value the editor of a summary setting holds now."""
        if key == "summaries.enabled":
            return self.enabled_check.isChecked()
        return {
            "summaries.min_user_turns": self.turns_spin,
            "summaries.min_gap_minutes": self.gap_spin,
            "summaries.inject_count": self.inject_spin,
        }[key].value()

    def is_modified(self) -> bool:
        return any(self.value(key) != self._settings.get(key) for key in SETTING_KEYS)

    def validate(self) -> bool:
        for key in SETTING_KEYS:
            try:
                validate(spec_for(key), self.value(key))
            except InvalidInput:
                self.settings_error.setText(
                    self.tr("“{setting}” is out of range.").format(
                        setting=schema_tr(spec_for(key).description)
                    )
                )
                self.settings_error.show()
                return False
        self.settings_error.hide()
        return True

    def apply(self) -> None:
        for key in SETTING_KEYS:
            self._settings.set(key, self.value(key))

    def _on_setting_edited(self, *_args: object) -> None:
        self.changed.emit()

    # -- public API -----------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """The ids of the selected summaries, in the table's order."""
        return selected_item_ids(self.table, self.proxy, SummaryTableModel.SUMMARY_ROLE)

    def select_ids(self, summary_ids: Sequence[int]) -> None:
        """Select these summaries (those shown)."""
        select_item_ids(self.table, self.proxy, self.model, summary_ids)

    def chosen_conversation(self) -> int | None:
        """The conversation chosen in the filter, else the one of the selected summary."""
        chosen = self.conversation_filter.currentData()
        if isinstance(chosen, int):
            return chosen
        ids = self.selected_ids()
        if len(ids) == 1:
            return self._summary_of(ids[0]).conversation_id
        return None

    def show_conversation(self, conversation_id: int | None) -> None:
        """Choose a conversation in the filter (``None``: all of them)."""
        index = self.conversation_filter.findData(conversation_id)
        self.conversation_filter.setCurrentIndex(max(index, 0))

    def undo_available(self) -> int:
        """How many deleted summaries Undo would bring back (the last batch)."""
        return len(self._undo[-1]) if self._undo else 0

    def close_page(self) -> None:
        """Settings is closing: forget the deleted summaries held for Undo, stop the work."""
        self._undo.clear()
        self._render_undo()
        self._alive = False
        super().close_page()

    async def refresh(self) -> None:
        """Reload the summaries, the conversations' state and the job's status."""
        summaries = await self._summaries.summaries()
        activity = await self._summaries.all_activity()
        status = None
        if self._jobs is not None:
            statuses = await self._jobs.jobs.statuses()
            status = next((s for s in statuses if s.name == JobName.SUMMARIES), None)
        if not self._alive:
            return
        self._activity = {a.conversation_id: a for a in activity if not a.temporary}
        self._job_status = status
        selected = self.selected_ids()
        scroll = self.table.verticalScrollBar().value()
        self.model.set_summaries(summaries)
        self.select_ids(selected)
        self.table.verticalScrollBar().setValue(scroll)
        self._render_conversations()
        self._render_job()
        self._render_conversation_bar()
        self._render_count()
        self._render_full_text()
        self._update_actions()
        self.refreshed.emit()

    # -- slots that start work ------------------------------------------------------------------

    def _on_jobs_summaries_changed(self) -> None:
        # Several changes in a row (a job started, wrote, ended) reload the page once.
        if self._alive and self.isVisible() and not self._refresh_queued:
            self._refresh_queued = True
            self.spawn(self._queued_refresh(), self.tr("The list of summaries was not loaded."))

    async def _queued_refresh(self) -> None:
        try:
            await self.refresh()
        finally:
            self._refresh_queued = False

    def _on_edit_button_clicked(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self._start(self._edit(ids[0]), self.tr("The summary was not saved."))

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        summary = index.data(SummaryTableModel.SUMMARY_ROLE)
        if isinstance(summary, Summary) and not self._busy:
            self._start(self._edit(summary.id), self.tr("The summary was not saved."))

    def _on_archive_button_clicked(self) -> None:
        ids = [i for i in self.selected_ids() if not self._summary_of(i).archived]
        if ids:
            self._start(self._set_archived(ids, True), self.tr("The summaries were not archived."))

    def _on_restore_button_clicked(self) -> None:
        ids = [i for i in self.selected_ids() if self._summary_of(i).archived]
        if ids:
            self._start(self._set_archived(ids, False), self.tr("The summaries were not restored."))

    def request_delete(self) -> None:
        """Delete the selected summaries after a confirmation (Undo until Settings closes)."""
        ids = self.selected_ids()
        if not ids or self._busy:
            return
        text = self.tr(
            "Delete %n selected summaries? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.\n\nYou can undo this only until you close Settings.",
            "",
            len(ids),
        )
        self._start(
            self._confirm_then_delete(ids, self.tr("Delete summaries"), text, self.tr("Delete")),
            self.tr("The summaries were not deleted."),
        )

    def request_clear_all(self) -> None:
        """Delete every summary, current, earlier and archived, after a confirmation with the count."""
        ids = [s.id for s in self.model.summaries()]
        if not ids:
            self.set_status("", lambda: self.tr("There are no summaries to delete."))
            return
        if self._busy:
            return
        text = self.tr(
            "Delete all %n summaries, current, earlier and archived? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.\n\nYou can undo this only until you close Settings.",
            "",
            len(ids),
        )
        self._start(
            self._confirm_then_delete(
                ids, self.tr("Delete all summaries"), text, self.tr("Delete all")
            ),
            self.tr("The summaries were not deleted."),
        )

    def _on_undo_button_clicked(self) -> None:
        if self._undo and not self._busy:
            self._start(self._undo_delete(), self.tr("The deleted summaries were not restored."))

    def _on_history_button_clicked(self) -> None:
        conversation = self.chosen_conversation()
        if conversation is not None:
            self.spawn(self.show_history(conversation), self.tr("The history was not shown."))

    def _on_summarise_button_clicked(self) -> None:
        conversation = self.chosen_conversation()
        if conversation is not None and self._jobs is not None:
            self._start(
                self.summarise_now(conversation), self.tr("The conversation was not summarised.")
            )

    def _on_search_edit_text_changed(self, text: str) -> None:
        self.proxy.set_filters(text=text)
        self._render_count()

    def _on_conversation_changed(self, _index: int) -> None:
        chosen = self.conversation_filter.currentData()
        self.proxy.set_filters(conversation=chosen if isinstance(chosen, int) else None)
        self._render_conversation_bar()
        self._render_count()
        self._update_actions()

    def _on_status_filter_changed(self, _index: int) -> None:
        self.proxy.set_filters(status=str(self.status_filter.currentData()))
        self._render_count()
        self._update_actions()

    def _on_selection_changed(self, *_args: object) -> None:
        self._render_full_text()
        self._render_conversation_bar()
        self._update_actions()

    # -- the work -------------------------------------------------------------------------------

    def _start(self, coro: Coroutine[Any, Any, None], failure: str) -> None:
        """Run one summary action at a time; the buttons are off while it runs."""
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
        if isinstance(error, EtosError) and error.code.startswith("memory_"):
            return f"{failure} {memory_error_text(error)}".strip()
        if isinstance(error, EtosError) and error.code == "summary_rejected":
            reason = str(error.params.get("reason", ""))
            return f"{failure} {job_error_text('summary_rejected:' + reason)}"
        return failure_text(failure, error)

    def _summary_of(self, summary_id: int) -> Summary:
        source_row = self.model.row_of(summary_id)
        assert source_row is not None
        return self.model.summary(source_row)

    async def _edit(self, summary_id: int) -> None:
        current = await self._summaries.get(summary_id)
        if current is None:
            await self.refresh()
            self.set_status("error", lambda: self.tr("That summary no longer exists."))
            return
        text = await open_summary_editor(self, current)
        if text is None:
            return
        await self._summaries.edit(summary_id, text)
        await self._after_change([summary_id])
        self.set_status("ok", lambda: self.tr("Summary saved."))

    async def _set_archived(self, ids: list[int], archived: bool) -> None:
        if archived:
            done = await self._summaries.archive(ids)
            await self._after_change(ids)
            self.set_status("ok", lambda: self.tr("Archived %n summaries.", "", done))
        else:
            done = await self._summaries.restore(ids)
            await self._after_change(ids)
            self.set_status("ok", lambda: self.tr("Restored %n summaries.", "", done))

    async def _confirm_then_delete(
        self, ids: list[int], title: str, text: str, action: str
    ) -> None:
        if not await dialogs.confirm(self, title, text, action, destructive=True):
            return
        batch = await self._summaries.delete_many(ids)
        self._undo.append(batch)
        self._render_undo()
        self.clear_status()
        await self._reschedule(batch)
        await self._after_change([])

    async def _undo_delete(self) -> None:
        batch = self._undo.pop()
        restored: list[int] = []
        try:
            restored = await self._summaries.undo_delete_many(batch)
        finally:
            self._render_undo()
            await self._reschedule(batch)
            await self._after_change(restored)
        self.set_status("ok", lambda: self.tr("Brought back %n summaries.", "", len(restored)))

    async def _reschedule(self, batch: Sequence[DeletedSummary]) -> None:
        """Apply the rule again to the conversations of deleted (or restored) summaries.

        A deleted current summary leaves what it covered to be summarised again: the job is
        scheduled (for the end of the gap), an undo drops it again.
        """
        if self._jobs is None:
            return
        for conversation_id in sorted({d.conversation_id for d in batch if d.conversation_id}):
            await self._jobs.jobs.check_conversation(conversation_id)

    async def summarise_now(self, conversation_id: int) -> None:
        """Summarise one conversation now (the button); the outcome is shown in the status line."""
        if self._jobs is None:
            return
        self.set_status("", lambda: self.tr("Summarising…"))
        self.summarise_button.setEnabled(False)
        result = await self._jobs.jobs.summarise_now(conversation_id)
        await self._after_change([result.summary.id] if result.summary is not None else [])
        messages: dict[str, tuple[str, Callable[[], str]]] = {
            "summary": ("ok", lambda: self.tr("A new summary was written.")),
            "skip": (
                "ok",
                lambda: self.tr("The model found nothing worth keeping; no summary was written."),
            ),
            "nothing_new": (
                "",
                lambda: self.tr("Nothing new to summarise since the last summary."),
            ),
            "temporary": (
                "warning",
                lambda: self.tr("Temporary conversations are never summarised."),
            ),
            "missing": ("error", lambda: self.tr("That conversation no longer exists.")),
        }
        state, text = messages.get(result.outcome, ("", lambda: ""))
        self.set_status(state, text)

    async def _after_change(self, select: Sequence[int]) -> None:
        await self.refresh()
        if select:
            self.select_ids(select)
        self.summaries_changed.emit()

    async def show_history(self, conversation_id: int) -> None:
        """Show one conversation's summaries, newest first (non-modal)."""
        history = await self._summaries.of_conversation(conversation_id)
        if not self._alive:
            return
        activity = self._activity.get(conversation_id)
        title = activity.title if activity is not None else ""
        if not title and history:
            title = history[0].conversation_title
        if self.history_dialog is None:
            self.history_dialog = SummaryHistoryDialog(self)
        self.history_dialog.set_history(title, history)
        self.history_dialog.show()
        self.history_dialog.raise_()

    # -- rendering ------------------------------------------------------------------------------

    def _update_actions(self) -> None:
        ids = self.selected_ids() if self.model.rowCount() else []
        summaries = [self._summary_of(i) for i in ids]
        idle = not self._busy
        self.edit_button.setEnabled(idle and len(ids) == 1)
        self.archive_button.setEnabled(idle and any(not s.archived for s in summaries))
        self.restore_button.setEnabled(idle and any(s.archived for s in summaries))
        self.delete_button.setEnabled(idle and bool(ids))
        conversation = self.chosen_conversation()
        self.history_button.setEnabled(conversation is not None)
        self.clear_action.setEnabled(idle and self.model.rowCount() > 0)
        self.undo_button.setEnabled(idle)
        activity = self._activity.get(conversation) if conversation is not None else None
        self.summarise_button.setEnabled(
            idle and self._jobs is not None and activity is not None and activity.new_user_turns > 0
        )

    def _render_conversations(self) -> None:
        combo = self.conversation_filter
        chosen = combo.currentData()
        combo.blockSignals(True)
        try:
            while combo.count() > 1:
                combo.removeItem(1)
            ordered = sorted(
                self._activity.values(),
                key=lambda a: a.updated_at.timestamp() if a.updated_at else 0.0,
                reverse=True,
            )
            for activity in ordered:
                if activity.user_turns == 0:
                    continue
                # With its date: conversations are often named alike ("Kyoto trip" twice).
                title = activity.title or self.tr("(untitled)")
                when = local_time(activity.updated_at) if activity.updated_at else ""
                combo.addItem(f"{title} · {when}" if when else title, activity.conversation_id)
            index = combo.findData(chosen) if isinstance(chosen, int) else 0
            combo.setCurrentIndex(max(index, 0))
        finally:
            combo.blockSignals(False)
        if isinstance(chosen, int) and combo.currentData() != chosen:
            self._on_conversation_changed(combo.currentIndex())

    def _render_job(self) -> None:
        status = self._job_status
        if self._jobs is None:
            self.job_label.hide()
            return
        self.job_label.show()
        if status is None:
            self.job_label.setText(self.tr("Background job: checking…"))
            set_state(self.job_label, "muted")
            return
        text = self.tr("Background job: last run {last} · next run {next}").format(
            last=local_time(status.last_started_at, never=self.tr("never")),
            next=local_time(status.next_run_at, never=self.tr("none scheduled")),
        )
        if status.running:
            text += " · " + self.tr("running now")
        if status.failed_last:
            text += " · " + self.tr("last error: {error}").format(
                error=job_error_text(status.last_error)
            )
        self.job_label.setText(text)
        set_state(self.job_label, "warning" if status.failed_last else "muted")

    def conversation_text(self, conversation_id: int) -> str:
        """What the job will do for one conversation, in words."""
        activity = self._activity.get(conversation_id)
        if activity is None:
            return self.tr("This conversation is not summarised (temporary, or gone).")
        parts = [
            self.tr("“{title}”: {turns}, {new}").format(
                title=activity.title or self.tr("(untitled)"),
                turns=self.tr("%n user messages", "", activity.user_turns),
                new=self.tr("%n not yet summarised", "", activity.new_user_turns),
            )
        ]
        jobs = self._jobs.jobs if self._jobs is not None else None
        next_at = jobs.next_summary_at(conversation_id) if jobs is not None else None
        if jobs is not None and jobs.summary_running(conversation_id):
            parts.append(self.tr("being summarised now"))
        elif next_at is not None:
            parts.append(self.tr("next summary at {time}").format(time=local_time(next_at)))
        elif not self._settings.get_bool("summaries.enabled"):
            parts.append(self.tr("summaries are turned off"))
        elif activity.new_user_turns == 0:
            parts.append(self.tr("up to date"))
        else:
            needed = self._settings.get_int("summaries.min_user_turns") - activity.user_turns
            if needed > 0:
                parts.append(self.tr("summarised after %n more user messages", "", needed))
        if activity.last_outcome == "error":
            parts.append(
                self.tr("last attempt failed at {time}: {error}").format(
                    time=local_time(activity.attempted_at),
                    error=job_error_text(activity.last_error),
                )
            )
        elif activity.attempted_at is not None:
            parts.append(
                self.tr("last attempt {time}").format(time=local_time(activity.attempted_at))
            )
        return " · ".join(parts)

    def _render_conversation_bar(self) -> None:
        conversation = self.chosen_conversation()
        if conversation is None:
            self.conversation_label.setText(
                self.tr("Choose a conversation to see when it is summarised next.")
            )
            set_state(self.conversation_label, "muted")
        else:
            activity = self._activity.get(conversation)
            self.conversation_label.setText(self.conversation_text(conversation))
            failed = activity is not None and activity.last_outcome == "error"
            set_state(self.conversation_label, "warning" if failed else "")
        self.summarise_button.setVisible(self._jobs is not None)
        self._update_actions()

    def _render_full_text(self) -> None:
        ids = self.selected_ids() if self.model.rowCount() else []
        self.full_text.setPlainText(self._summary_of(ids[0]).content if len(ids) == 1 else "")

    def _render_count(self) -> None:
        total = self.model.rowCount()
        shown = self.proxy.rowCount()
        current = sum(1 for s in self.model.summaries() if s.current)
        if shown == total:
            text = self.tr("%n summaries", "", total) + " · " + self.tr("%n current", "", current)
        else:
            text = self.tr("Showing {shown} of {total}").format(shown=shown, total=total)
        self.count_label.setText(text)

    def _render_undo(self) -> None:
        if not self._undo:
            self.undo_bar.hide()
            return
        count = len(self._undo[-1])
        self.undo_label.setText(
            self.tr("Deleted %n summaries. Undo is possible until you close Settings.", "", count)
        )
        self.undo_bar.show()


def _sample_edited() -> Summary:
    """A summary whose status text is the longest (for column widths)."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return Summary(0, 0, "", "", "en", now, now, None, 0, "scheduled", True, None, current=False)
