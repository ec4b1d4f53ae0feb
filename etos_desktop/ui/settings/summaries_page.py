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

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.changes import DataChange, Layer
from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import EtosError
from etos_desktop.core.jobs import JobName, JobStatus
from etos_desktop.core.settings.schema import spec_for
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.windows import ListCounts
from etos_desktop.core.summaries.records import DeletedSummary, Summary, SummaryActivity
from etos_desktop.ui.error_text import failure_text
from etos_desktop.ui.job_text import job_error_text, local_time
from etos_desktop.ui.memory_text import memory_error_text
from etos_desktop.ui.settings.list_page import ListPage, ListWords
from etos_desktop.ui.settings.page import (
    SettingEditors,
    form_columns,
    plain_label,
    schema_tr,
    set_state,
)
from etos_desktop.ui.settings.summary_dialogs import SummaryHistoryDialog, open_summary_editor
from etos_desktop.ui.settings.summary_models import SummaryFilterModel, SummaryTableModel

if TYPE_CHECKING:
    from etos_desktop.core.summaries.access import SummaryAccess
    from etos_desktop.services.jobs import BackgroundJobs
    from etos_desktop.ui.changes_bridge import ChangesBridge


class SummariesPage(ListPage[Summary]):
    """The Summaries page: the summary settings, the summaries, and what the job will do next.

    Summary actions (edit, archive, delete, "Summarise now") take effect at once; the settings
    at the top are saved with the dialog's Save. Deleted summaries can be brought back with Undo
    until :meth:`close_page`: the snapshots are held in memory only.

    Args:
        summaries: The app's summary access (all work runs off the UI thread).
        settings: The settings store (``summaries.*`` keys).
        jobs: The background jobs (``None``: no "Summarise now", no schedule shown).
        changes: The app's data changes (the page reloads on a summaries' or jobs' change).
        clock: The current time.
        parent: The parent widget.

    Signals:
        refreshed(): the page was reloaded from the database.
        summaries_changed(): summaries were edited, archived, deleted or written here.
    """

    summaries_changed = Signal()

    def __init__(
        self,
        summaries: SummaryAccess,
        settings: SettingsStore,
        *,
        jobs: BackgroundJobs | None = None,
        changes: ChangesBridge | None = None,
        clock: Clock | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("summariesPage")
        self._summaries = summaries
        self._settings = settings
        self._jobs = jobs
        self._clock: Clock = clock or SystemClock()
        self._activity: dict[int, SummaryActivity] = {}
        self._job_status: JobStatus | None = None
        self._refresh_queued = False
        self._picker_items: list[tuple[str, int]] = []
        self.history_dialog: SummaryHistoryDialog | None = None
        self.setting_editors = SettingEditors(settings, self.changed.emit)
        self.words = self._words()
        self._build()
        self.retranslate()
        self._update_actions()
        if changes is not None:
            changes.changed.connect(self._on_changes_changed)

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        self._build_settings()
        self.build_list(
            self.settings_group,
            SummaryTableModel(self),
            SummaryFilterModel(self),
            name="summary",
            sort_by="time",
            source=self._summaries,
            filters=self._build_filters,
            between=self._build_conversation_bar,
            body=self._build_body,
        )

    def _build_settings(self) -> None:
        group = self.settings_group = QGroupBox(self)
        editors = self.setting_editors
        self.enabled_check = editors.check("summaries.enabled", group)
        self.turns_label = QLabel(group)
        self.turns_spin = editors.spin("summaries.min_user_turns", group)
        self.gap_label = QLabel(group)
        self.gap_spin = editors.spin("summaries.min_gap_minutes", group)
        self.inject_label = QLabel(group)
        self.inject_spin = editors.spin("summaries.inject_count", group)
        self.settings_error = plain_label(group)
        set_state(self.settings_error, "error")
        self.settings_error.hide()
        columns = form_columns(
            [(self.turns_label, self.turns_spin)],
            [(self.gap_label, self.gap_spin)],
            [(self.inject_label, self.inject_spin)],
        )
        self.job_label = plain_label(group)
        self.job_label.setObjectName("summaryJobStatus")
        box = QVBoxLayout(group)
        box.setContentsMargins(8, 6, 8, 6)
        box.setSpacing(6)
        box.addWidget(self.enabled_check)
        box.addLayout(columns)
        box.addWidget(self.settings_error)
        box.addWidget(self.job_label)

    def _build_filters(self) -> list[QWidget]:
        self.conversation_filter = self.filter_combo([None])
        self.conversation_filter.setObjectName("summaryConversation")
        self.conversation_filter.setMaximumWidth(260)
        self.conversation_filter.currentIndexChanged.connect(self._on_conversation_changed)
        self.status_filter = self.filter_combo(["all", "current", "archived"])
        self.status_filter.currentIndexChanged.connect(self._on_status_filter_changed)
        return [self.conversation_filter, self.status_filter]

    def _build_conversation_bar(self) -> list[QWidget]:
        # What the job will do for the chosen conversation, and its "Summarise now".
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
        return [self.conversation_bar]

    def _build_body(self, table: QTableView) -> QWidget:
        # The full text of the selected summary, below the one-line table.
        self.full_text = QPlainTextEdit(self)
        self.full_text.setObjectName("summaryFullText")
        self.full_text.setReadOnly(True)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(table)
        self.splitter.addWidget(self.full_text)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        return self.splitter

    def _words(self) -> ListWords:
        return ListWords(
            count=self._count_text,
            delete_question=self._delete_question,
            nothing_to_delete=lambda: self.tr("There are no summaries to delete."),
            deleted=lambda count: self.tr(
                "Deleted %n summaries. Undo is possible until you close Settings.", "", count
            ),
            archived=lambda count: self.tr("Archived %n summaries.", "", count),
            brought_back=lambda count: self.tr("Brought back %n summaries.", "", count),
            not_loaded=lambda: self.tr("The list of summaries was not loaded."),
            not_saved=lambda _summary_id: self.tr("The summary was not saved."),
            not_archived=lambda: self.tr("The summaries were not archived."),
            not_restored=lambda: self.tr("The summaries were not restored."),
            not_deleted=lambda: self.tr("The summaries were not deleted."),
            not_brought_back=lambda: self.tr("The deleted summaries were not restored."),
        )

    def _count_text(self, counts: ListCounts) -> str:
        return (
            self.tr("%n summaries", "", counts.total)
            + " · "
            + self.tr("%n current", "", counts.lead)
        )

    def _delete_question(self, ids: Sequence[int], every: bool) -> tuple[str, str]:
        if every:
            return self.tr("Delete all summaries"), self.tr(
                "Delete all %n summaries, current, earlier and archived? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.\n\nYou can undo this only until you close Settings.",
                "",
                len(ids),
            )
        return self.tr("Delete summaries"), self.tr(
            "Delete %n selected summaries? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.\n\nYou can undo this only until you close Settings.",
            "",
            len(ids),
        )

    @override
    def retranslate(self) -> None:
        self.settings_group.setTitle(self.tr("Settings"))
        self.setting_editors.retranslate()
        self.enabled_check.setText(self.tr("Summarise conversations in the background"))
        self.turns_label.setText(self.tr("After user messages"))
        self.gap_label.setText(self.tr("Time between summaries"))
        self.gap_spin.setSuffix(self.tr(" min"))
        self.inject_label.setText(self.tr("Summaries sent with a message"))
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
        self.clear_action.setText(self.tr("Delete all summaries…"))
        self._render_conversations()
        self._render_job()
        self._render_conversation_bar()
        self.retranslate_list()

    # -- settings (saved with the dialog's Save) ----------------------------------------------

    @override
    def is_modified(self) -> bool:
        return self.setting_editors.is_modified()

    @override
    def validate(self) -> bool:
        key = self.setting_editors.invalid_key()
        if key is not None:
            self.settings_error.setText(
                self.tr("“{setting}” is out of range.").format(
                    setting=schema_tr(spec_for(key).description)
                )
            )
        self.settings_error.setVisible(key is not None)
        return key is None

    @override
    def apply(self) -> None:
        self.setting_editors.apply()

    # -- public API -----------------------------------------------------------------------------

    def chosen_conversation(self) -> int | None:
        """The conversation chosen in the filter, else the one of the selected summary."""
        chosen = self.conversation_filter.currentData()
        if isinstance(chosen, int):
            return chosen
        ids = [] if self.every_row_selected() else self.selected_ids()
        if len(ids) == 1:
            return self.records.record_of(ids[0]).conversation_id
        return None

    def show_conversation(self, conversation_id: int | None) -> None:
        """Choose a conversation in the filter (``None``: all of them)."""
        index = self.conversation_filter.findData(conversation_id)
        self.conversation_filter.setCurrentIndex(max(index, 0))

    async def refresh(self) -> None:
        """Read the list again (a window of it), the conversations' state and the job's status."""
        await self.reload_list()
        activity = await self._summaries.all_activity()
        status = None
        if self._jobs is not None:
            statuses = await self._jobs.statuses()
            status = next((s for s in statuses if s.name == JobName.SUMMARIES), None)
        if not self._alive:
            return
        self._activity = {a.conversation_id: a for a in activity if not a.temporary}
        self._job_status = status
        self._render_conversations()
        self._render_job()
        self._render_conversation_bar()
        self._render_full_text()
        self.refreshed.emit()

    # -- slots that start work ------------------------------------------------------------------

    def _on_changes_changed(self, change: DataChange) -> None:
        # Several changes in a row (a job started, wrote, ended) reload the page once.
        relevant = change.touches(Layer.SUMMARIES, Layer.JOBS)
        if relevant and self._alive and self.isVisible() and not self._refresh_queued:
            self._refresh_queued = True
            self.spawn(self._queued_refresh(), self.tr("The list of summaries was not loaded."))

    async def _queued_refresh(self) -> None:
        try:
            await self.refresh()
        finally:
            self._refresh_queued = False

    def _on_history_button_clicked(self) -> None:
        conversation = self.chosen_conversation()
        if conversation is not None:
            self.spawn(self.show_history(conversation), self.tr("The history was not shown."))

    def _on_summarise_button_clicked(self) -> None:
        conversation = self.chosen_conversation()
        if conversation is not None and self._jobs is not None:
            self.start(
                self.summarise_now(conversation), self.tr("The conversation was not summarised.")
            )

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

    def _on_selection_changed(self) -> None:
        self._render_full_text()
        self._render_conversation_bar()
        self._update_actions()

    # -- the work -------------------------------------------------------------------------------

    @override
    def failure_message(self, failure: str, error: BaseException) -> str:
        if isinstance(error, EtosError) and error.code.startswith("memory_"):
            return f"{failure} {memory_error_text(error)}".strip()
        if isinstance(error, EtosError) and error.code == "summary_rejected":
            reason = str(error.params.get("reason", ""))
            return f"{failure} {job_error_text('summary_rejected:' + reason)}"
        return failure_text(failure, error)

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

    def _is_active(self, summary: Summary) -> bool:
        return not summary.archived

    async def _unarchive(self, ids: list[int]) -> int:
        # A summary's archive is its only state: restoring it is the undo.
        done = await self._summaries.restore(ids)
        await self._after_change(ids)
        self.set_status("ok", lambda: self.tr("Restored %n summaries.", "", done))
        return done

    async def _set_archived(self, ids: list[int], archived: bool) -> None:
        if archived:
            done = await self._summaries.archive(ids)
            await self._after_change(ids)
            self.set_status("ok", lambda: self.tr("Archived %n summaries.", "", done))
        else:
            done = await self._summaries.restore(ids)
            await self._after_change(ids)
            self.set_status("ok", lambda: self.tr("Restored %n summaries.", "", done))

    async def _delete_records(self, ids: list[int]) -> list[DeletedSummary]:
        return await self._summaries.delete_many(ids)

    async def _undelete_records(self, batch: Sequence[DeletedSummary]) -> list[int]:
        return await self._summaries.undo_delete_many(batch)

    async def _reconsider(self, batch: Sequence[DeletedSummary]) -> None:
        """Apply the rule again to the conversations of deleted (or restored) summaries.

        A deleted current summary leaves what it covered to be summarised again: the job is
        scheduled (for the end of the gap), an undo drops it again.
        """
        if self._jobs is None:
            return
        for conversation_id in sorted({d.conversation_id for d in batch if d.conversation_id}):
            await self._jobs.check_conversation(conversation_id)

    async def summarise_now(self, conversation_id: int) -> None:
        """Summarise one conversation now (the button); the outcome is shown in the status line."""
        if self._jobs is None:
            return
        self.set_status("", lambda: self.tr("Summarising…"))
        self.summarise_button.setEnabled(False)
        result = await self._jobs.summarise_now(conversation_id)
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

    def _records_changed(self) -> None:
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
        super()._update_actions()
        conversation = self.chosen_conversation()
        self.history_button.setEnabled(conversation is not None)
        activity = self._activity.get(conversation) if conversation is not None else None
        self.summarise_button.setEnabled(
            not self._busy
            and self._jobs is not None
            and activity is not None
            and activity.new_user_turns > 0
        )

    def _render_conversations(self) -> None:
        combo = self.conversation_filter
        chosen = combo.currentData()
        ordered = sorted(
            (a for a in self._activity.values() if a.user_turns > 0),
            key=lambda a: a.updated_at.timestamp() if a.updated_at else 0.0,
            reverse=True,
        )
        # With its date: conversations are often named alike ("Kyoto trip" twice).
        untitled = self.tr("(untitled)")
        items = [
            (
                f"{a.title or untitled} · {_minute(a.updated_at)}"
                if a.updated_at
                else a.title or untitled,
                a.conversation_id,
            )
            for a in ordered
        ]
        combo.blockSignals(True)
        try:
            # A thousand conversations: one removal, and no rebuild when nothing changed.
            if items != self._picker_items:
                self._picker_items = items
                combo.model().removeRows(1, combo.count() - 1)
                combo.addItems([text for text, _ in items])
                for index, (_, conversation_id) in enumerate(items, start=1):
                    combo.setItemData(index, conversation_id)
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
        jobs = self._jobs
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
        ids = [] if self.every_row_selected() else self.selected_ids()
        shown = self.records.record_of(ids[0]).content if len(ids) == 1 else ""
        self.full_text.setPlainText(shown)


def _minute(moment: datetime) -> str:
    """``job_text.local_time`` of a time, without ``strftime`` (44 µs a call, a thousand here)."""
    local = moment.astimezone()
    return f"{local.year:04d}-{local.month:02d}-{local.day:02d} {local.hour:02d}:{local.minute:02d}"
