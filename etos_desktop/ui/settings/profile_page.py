"""The Profile page of Settings: the user profile, editable, with pins, history and refresh.

DESIGN §7 (editor with save and revert, clear with confirm, "Refresh now", last and next refresh
time, revision history with a diff against the current text and restore) and §1 principle 5
(the user sees and controls everything).

Every read and write goes through ``ProfileAccess`` (the DB thread) and "Refresh now" and the
schedule through the background jobs: the UI thread never waits on the disk or the model. The
confirmations are the app's own message boxes, opened with ``open()`` and awaited. Unsaved edits
are guarded: Settings' close asks (its Save writes them too), and Refresh now and Restore ask
first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.changes import DataChange, Layer
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.jobs import JobName, JobStatus
from etos_desktop.core.profile import sections
from etos_desktop.core.profile.errors import ProfileStale
from etos_desktop.core.profile.records import Profile, ProfileRevision
from etos_desktop.core.profile.store import ANY_BASE
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui import dialogs
from etos_desktop.ui.error_text import failure_text
from etos_desktop.ui.job_text import job_error_text, local_time
from etos_desktop.ui.memory_text import memory_error_text
from etos_desktop.ui.settings.page import SettingEditors, SettingsPage, plain_label, set_state
from etos_desktop.ui.settings.profile_widgets import ProfileEditor, diff_html, diff_lines
from etos_desktop.ui.settings.record_list import Column, RecordList, RecordTableModel

if TYPE_CHECKING:
    from etos_desktop.core.profile.access import ProfileAccess
    from etos_desktop.core.profile.writing import ProfileRun
    from etos_desktop.services.jobs import BackgroundJobs
    from etos_desktop.ui.changes_bridge import ChangesBridge


class ProfilePage(SettingsPage):
    """The Profile page: the profile in a Markdown editor, its pins, history and refresh.

    Text edits are saved with the page's Save button (or the dialog's Save); restore, clear and
    Refresh now take effect at once and each leaves a revision, so every version stays in the
    history.

    Args:
        profile: The app's profile access (all work runs off the UI thread).
        settings: The settings store (``profile.*`` keys).
        jobs: The background jobs (``None``: no Refresh now, no schedule shown).
        changes: The app's data changes (the page reloads on a profile's or jobs' change).
        parent: The parent widget.

    Signals:
        refreshed(): the page was reloaded from the database.
        profile_saved(): the profile was changed here (saved, cleared, restored, refreshed).
    """

    refreshed = Signal()
    profile_saved = Signal()

    def __init__(
        self,
        profile: ProfileAccess,
        settings: SettingsStore,
        *,
        jobs: BackgroundJobs | None = None,
        changes: ChangesBridge | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("profilePage")
        self._profile = profile
        self._settings = settings
        self._jobs = jobs
        self.setting_editors = SettingEditors(settings, self.changed.emit)
        self._loaded = Profile()
        # The newest revision in the database (the editor may hold an older one with edits).
        self._current_revision_id: int | None = None
        self._revisions: list[ProfileRevision] = []
        # Each revision's place in ``_revisions`` (newest first): every history entry asks.
        self._places: dict[int, int] = {}
        self._job_status: JobStatus | None = None
        self._refresh_task: asyncio.Task[None] | None = None
        self._refresh_queued = False
        self._stage = ""
        self._background_change = False
        self._build()
        self.retranslate()
        self._update_actions()
        if changes is not None:
            changes.changed.connect(self._on_changes_changed)

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        group = self.settings_group = QGroupBox(self)
        self.enabled_check = self.setting_editors.check("profile.enabled", group)
        self.hour_label = QLabel(group)
        self.hour_spin = self.setting_editors.spin("profile.refresh_hour", group)
        self.hour_spin.setSuffix(":00")
        self.job_label = plain_label(group)
        self.job_label.setObjectName("profileJobStatus")
        top = QHBoxLayout()
        top.addWidget(self.enabled_check)
        top.addStretch(1)
        top.addWidget(self.hour_label)
        top.addWidget(self.hour_spin)
        box = QVBoxLayout(group)
        box.setContentsMargins(8, 6, 8, 6)
        box.addLayout(top)
        box.addWidget(self.job_label)

        left = QWidget(self)
        self.editor_title = QLabel(left)
        self.editor_title.setObjectName("profileEditorTitle")
        # Under the editor and wrapping: beside the title it made the page too wide to fit.
        self.count_label = plain_label(left)
        self.count_label.setObjectName("profileCount")
        self.editor = ProfileEditor(left)
        self.editor.textChanged.connect(self._on_editor_changed)
        self.editor.pins_changed.connect(self._on_editor_changed)
        self.editor.cursorPositionChanged.connect(self._update_actions)
        self.save_button = QPushButton(left)
        self.save_button.setObjectName("profileSaveButton")
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.revert_button = QPushButton(left)
        self.revert_button.setObjectName("profileRevertButton")
        self.revert_button.clicked.connect(self._on_revert_button_clicked)
        self.pin_button = QPushButton(left)
        self.pin_button.setObjectName("profilePinButton")
        self.pin_button.clicked.connect(self._on_pin_button_clicked)
        self.clear_button = QPushButton(left)
        self.clear_button.setObjectName("profileClearButton")
        self.clear_button.clicked.connect(self._on_clear_button_clicked)
        self.refresh_button = QPushButton(left)
        self.refresh_button.setObjectName("profileRefreshButton")
        self.refresh_button.clicked.connect(self._on_refresh_button_clicked)
        self.cancel_button = QPushButton(left)
        self.cancel_button.setObjectName("profileCancelButton")
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.cancel_button.hide()
        self.progress = QProgressBar(left)
        self.progress.setObjectName("profileProgress")
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(8)
        self.progress.hide()
        self.stage_label = plain_label(left)
        self.stage_label.setObjectName("profileStage")
        self.stage_label.hide()
        buttons = QHBoxLayout()
        for button in (self.save_button, self.revert_button, self.pin_button, self.clear_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.cancel_button)
        working = QHBoxLayout()
        working.addWidget(self.stage_label, 1)
        working.addWidget(self.progress, 1)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.editor_title)
        column.addWidget(self.editor, 1)
        column.addWidget(self.count_label)
        column.addLayout(buttons)
        column.addLayout(working)

        right = QWidget(self)
        self.history_title = QLabel(right)
        # The column is narrow: entries wrap onto a second line rather than scroll sideways.
        self.history = RecordList.entries(
            RecordTableModel(
                [Column("revision", lambda: self.tr("History"), self._history_entry)], parent=self
            ),
            right,
            name="profileHistory",
        )
        self.history_list = self.history.view
        self.history.current_changed.connect(self._on_history_current_changed)
        self.compare_combo = QComboBox(right)
        self.compare_combo.setObjectName("profileCompare")
        self.compare_combo.addItem("", "current")
        self.compare_combo.addItem("", "previous")
        self.compare_combo.currentIndexChanged.connect(self._render_diff)
        self.diff_view = QTextBrowser(right)
        self.diff_view.setObjectName("profileDiff")
        self.diff_view.setOpenLinks(False)
        self.restore_button = QPushButton(right)
        self.restore_button.setObjectName("profileRestoreButton")
        self.restore_button.clicked.connect(self._on_restore_button_clicked)
        history = QVBoxLayout(right)
        history.setContentsMargins(0, 0, 0, 0)
        history.addWidget(self.history_title)
        history.addWidget(self.history_list, 2)
        history.addWidget(self.compare_combo)
        history.addWidget(self.diff_view, 3)
        history.addWidget(self.restore_button, 0, Qt.AlignmentFlag.AlignRight)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.settings_group)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.status_label)

    @override
    def retranslate(self) -> None:
        self.settings_group.setTitle(self.tr("Settings"))
        self.setting_editors.retranslate()
        self.enabled_check.setText(self.tr("Keep a profile of me and send it with every message"))
        self.hour_label.setText(self.tr("Refresh daily at"))
        self.editor_title.setText(self.tr("Your profile (Markdown)"))
        self.editor.setAccessibleName(self.tr("Your profile"))
        self.hour_spin.setAccessibleName(self.tr("Refresh daily at"))
        self.history_list.setAccessibleName(self.tr("History of the profile"))
        self.diff_view.setAccessibleName(self.tr("Changes of the selected version"))
        self.compare_combo.setAccessibleName(self.tr("Compare"))
        self.editor.setPlaceholderText(
            self.tr(
                "No profile yet. It is written from your conversations' summaries and your "
                "memories once a day, or write it yourself here."
            )
        )
        self.save_button.setText(self.tr("Save"))
        self.save_button.setToolTip(self.tr("Save your edits; the next refresh starts from them."))
        self.revert_button.setText(self.tr("Revert"))
        self.revert_button.setToolTip(self.tr("Drop the unsaved edits."))
        self.clear_button.setText(self.tr("Clear…"))
        self.refresh_button.setText(self.tr("Refresh now"))
        self.refresh_button.setToolTip(
            self.tr(
                "Update the profile now from the summaries and memories since the last refresh."
            )
        )
        self.cancel_button.setText(self.tr("Cancel"))
        self.history_title.setText(self.tr("History"))
        self.compare_combo.setItemText(0, self.tr("Compare with the current profile"))
        self.compare_combo.setItemText(1, self.tr("Show what this version changed"))
        self.restore_button.setText(self.tr("Restore this version"))
        self._render_pin_button()
        self._render_counts()
        self._render_job()
        self._render_history()
        self._render_stage()
        self._render_status()

    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # The profile changes in the background: every visit shows the database as it is now.
        if self._alive and not self._busy:
            self.spawn(self.refresh(), self.tr("The profile was not loaded."))

    # -- settings (saved with the dialog's Save) ----------------------------------------------

    def settings_modified(self) -> bool:
        """Whether a profile setting was changed and not saved."""
        return self.setting_editors.is_modified()

    def text_modified(self) -> bool:
        """Whether the editor holds edits (text or pins) that are not saved."""
        text = sections.normalised(self.editor.toPlainText())
        if text != sections.normalised(self._loaded.content):
            return True
        return set(self.editor.pins()) != set(self._loaded.pinned)

    @override
    def is_modified(self) -> bool:
        return self.settings_modified() or self.text_modified()

    @override
    def validate(self) -> bool:
        if self.setting_editors.invalid_key() is not None:
            self.set_status("error", lambda: self.tr("A profile setting is out of range."))
            return False
        return True

    @override
    def apply(self) -> None:
        self.setting_editors.apply()

    async def save_pending(self) -> bool:
        """Save the edited profile if it was edited (the dialog's Save)."""
        if not self.text_modified():
            return True
        return await self.save_profile()

    # -- public API -----------------------------------------------------------------------------

    def loaded(self) -> Profile:
        """The profile as it was last read from the database."""
        return self._loaded

    def revisions(self) -> list[ProfileRevision]:
        """The revisions shown, newest first."""
        return list(self._revisions)

    def select_revision(self, revision_id: int) -> None:
        """Select a revision in the history."""
        self.history.set_current(revision_id)

    def selected_revision(self) -> ProfileRevision | None:
        """The revision selected in the history."""
        return self.history.current()

    def diff(self) -> list[tuple[str, str]]:
        """The diff shown: ``(" " | "+" | "-", line)``."""
        revision = self.selected_revision()
        if revision is None:
            return []
        if self.compare_combo.currentData() == "previous":
            previous = self._previous(revision)
            older = previous.content if previous is not None else ""
            return diff_lines(older, revision.content)
        return diff_lines(revision.content, self._loaded.content)

    def refreshing(self) -> bool:
        """Whether a Refresh now started here is running."""
        return self._refresh_task is not None and not self._refresh_task.done()

    async def refresh(self, *, keep_edits: bool = True) -> None:
        """Read the profile, its history and the job's status again.

        Unsaved edits stay in the editor (``keep_edits``); otherwise it shows the profile read.
        """
        profile = await self._profile.current()
        revisions = await self._profile.revisions()
        status = None
        if self._jobs is not None:
            statuses = await self._jobs.statuses()
            status = next((s for s in statuses if s.name == JobName.PROFILE), None)
        if not self._alive:
            return
        edited = keep_edits and self.text_modified()
        moved = profile.revision_id != self._current_revision_id
        self._background_change = edited and profile.revision_id != self._loaded.revision_id
        # A new version shows what it changed (the default selection); otherwise the version
        # the user picked stays selected.
        selected = None if moved else self.selected_revision()
        self._current_revision_id = profile.revision_id
        if not edited:
            self.editor.set_profile(profile.content, profile.pinned)
        self._loaded = _with_bookkeeping(self._loaded, profile) if edited else profile
        self._revisions = revisions
        self._places = {r.id: place for place, r in enumerate(revisions)}
        self._job_status = status
        self._render_history(selected.id if selected is not None else None)
        self._render_counts()
        self._render_job()
        self._update_actions()
        if self._background_change:
            self.set_status(
                "warning",
                lambda: self.tr(
                    "The profile changed while you were editing it. Your edits are kept; "
                    "saving them asks first."
                ),
            )
        self.refreshed.emit()

    async def save_profile(self) -> bool:
        """Save the editor's text and pins as a new revision.

        Returns:
            Whether it was saved; otherwise why not is in the status line and nothing is lost.
        """
        text = self.editor.toPlainText()
        pins = self.editor.pins()
        base = self._loaded.revision_id
        try:
            saved = await self._profile.save(text, pins, base_revision_id=base)
        except ProfileStale:
            if not await dialogs.confirm(
                self,
                self.tr("The profile changed"),
                self.tr(
                    "The profile was changed since you started editing (a refresh, or an "
                    "import). Save your version anyway? The other one stays in the history."
                ),
                self.tr("Save mine"),
            ):
                return False
            saved = await self._profile.save(text, pins, base_revision_id=ANY_BASE)
        except InvalidInput as exc:
            self.set_status("error", lambda e=exc: self._refused_text(e))
            return False
        self._loaded = saved
        self._background_change = False
        self.editor.set_profile(saved.content, saved.pinned)
        await self.refresh(keep_edits=False)
        self.set_status("ok", lambda: self.tr("Profile saved. The next message carries it."))
        self.profile_saved.emit()
        self.changed.emit()
        return True

    # -- slots that start work ------------------------------------------------------------------

    def _on_changes_changed(self, change: DataChange) -> None:
        # Several changes in a row (a job started, wrote, ended) reload the page once.
        if not change.touches(Layer.PROFILE, Layer.JOBS):
            return
        if self._alive and self.isVisible() and not self._refresh_queued and not self._busy:
            self._refresh_queued = True
            self.spawn(self._queued_refresh(), self.tr("The profile was not loaded."))

    async def _queued_refresh(self) -> None:
        try:
            await self.refresh()
        finally:
            self._refresh_queued = False

    def _on_save_button_clicked(self) -> None:
        self.start(self._save(), self.tr("The profile was not saved."))

    async def _save(self) -> None:
        await self.save_profile()

    def _on_revert_button_clicked(self) -> None:
        self.editor.set_profile(self._loaded.content, self._loaded.pinned)
        self._background_change = False
        self.set_status("", lambda: self.tr("Unsaved edits dropped."))
        self._on_editor_changed()
        self.start(self.refresh(keep_edits=False), self.tr("The profile was not loaded."))

    def _on_pin_button_clicked(self) -> None:
        self.editor.toggle_pin()
        self.editor.setFocus()

    def _on_clear_button_clicked(self) -> None:
        self.start(self._clear(), self.tr("The profile was not cleared."))

    async def _clear(self) -> None:
        if not await dialogs.confirm(
            self,
            self.tr("Clear the profile"),
            self.tr(
                "Clear the profile and its pinned lines? It is no longer sent to the model. "
                "The current text stays in the history and can be restored."
            ),
            self.tr("Clear"),
            destructive=True,
        ):
            return
        await self._profile.clear()
        await self.refresh(keep_edits=False)
        self.set_status("ok", lambda: self.tr("The profile was cleared."))
        self.profile_saved.emit()
        self.changed.emit()

    def _on_restore_button_clicked(self) -> None:
        revision = self.selected_revision()
        if revision is not None:
            self.start(self._restore(revision), self.tr("The version was not restored."))

    async def _restore(self, revision: ProfileRevision) -> None:
        if self.text_modified() and not await dialogs.confirm(
            self,
            self.tr("Restore this version"),
            self.tr("Restore version #{n} of {time}? Your unsaved edits are dropped.").format(
                n=self.version_number(revision), time=local_time(revision.created_at, seconds=True)
            ),
            self.tr("Restore"),
        ):
            return
        number = self.version_number(revision)
        await self._profile.restore(revision.id)
        await self.refresh(keep_edits=False)
        self.set_status(
            "ok",
            lambda: self.tr("Version #{n} of {time} is the profile again.").format(
                n=number, time=local_time(revision.created_at, seconds=True)
            ),
        )
        self.profile_saved.emit()
        self.changed.emit()

    def _on_refresh_button_clicked(self) -> None:
        if self._jobs is None or self._busy:
            return
        self._busy = True
        self._update_actions()
        self._refresh_task = self.spawn(
            self._refresh_now(), self.tr("The profile was not refreshed.")
        )

    def _on_cancel_button_clicked(self) -> None:
        if self._refresh_task is not None and not self._refresh_task.done():
            self._refresh_task.cancel()
            self.set_status("", lambda: self.tr("Refresh cancelled. The profile is as it was."))

    async def _refresh_now(self) -> None:
        assert self._jobs is not None
        try:
            if self.text_modified():
                if not await dialogs.confirm(
                    self,
                    self.tr("Refresh now"),
                    self.tr("Save your edits first? The refresh starts from the saved profile."),
                    self.tr("Save and refresh"),
                ):
                    return
                if not await self.save_profile():
                    return
            self.editor.setReadOnly(True)
            self._set_stage("reading")
            try:
                result = await self._jobs.refresh_profile_now(progress=self._set_stage)
            except Exception:
                # Recorded with its time: the page shows it, not only the status line.
                if self._alive:
                    await self.refresh(keep_edits=False)
                raise
            await self.refresh(keep_edits=False)
            self._show_outcome(result)
            if result.outcome == "changed":
                self.profile_saved.emit()
        finally:
            # The task is not done yet here: the buttons must not ask it whether it runs.
            self._refresh_task = None
            self._busy = False
            self._set_stage("")
            if self._alive:
                self.editor.setReadOnly(False)
                self._update_actions()

    def _show_outcome(self, result: ProfileRun) -> None:
        messages: dict[str, tuple[str, Callable[[], str]]] = {
            "changed": ("ok", lambda: self.tr("The profile was refreshed; see the history.")),
            "unchanged": (
                "ok",
                lambda: self.tr("The model found nothing to change; the profile is as it was."),
            ),
            "nothing_new": (
                "",
                lambda: self.tr(
                    "Nothing new since the last refresh: no summary or memory to learn from, "
                    "so nothing was sent."
                ),
            ),
        }
        state, text = messages.get(result.outcome, ("", lambda: ""))
        self.set_status(state, text)

    def _set_stage(self, stage: str) -> None:
        if not self._alive:
            return
        self._stage = stage
        self._render_stage()

    def _on_editor_changed(self) -> None:
        self._render_counts()
        self._update_actions()
        self.changed.emit()

    def _on_history_current_changed(self) -> None:
        self._render_diff()
        self._update_actions()

    # -- the work -------------------------------------------------------------------------------

    @override
    def failure_message(self, failure: str, error: BaseException) -> str:
        if isinstance(error, InvalidInput):
            return f"{failure} {self._refused_text(error)}".strip()
        if isinstance(error, EtosError) and error.code == "profile_rejected":
            reason = str(error.params.get("reason", ""))
            return f"{failure} {job_error_text('profile_rejected:' + reason)}"
        return failure_text(failure, error)

    def _refused_text(self, error: InvalidInput) -> str:
        if error.code == "profile_too_long":
            return self.tr(
                "The profile is {length} characters long; at most {limit} are kept."
            ).format(length=error.params.get("length"), limit=error.params.get("limit"))
        if error.code == "profile_pins_too_long":
            return self.tr(
                "The pinned lines hold {length} characters together; at most {limit} can be "
                "pinned. Unpin a line, or shorten one."
            ).format(length=error.params.get("length"), limit=error.params.get("limit"))
        if error.code.startswith("memory_"):
            return memory_error_text(error)
        return failure_text("", error)

    # -- rendering ------------------------------------------------------------------------------

    def _update_actions(self) -> None:
        idle = not self._busy
        modified = self.text_modified()
        self.save_button.setEnabled(idle and modified)
        self.revert_button.setEnabled(idle and modified)
        self.pin_button.setEnabled(idle and bool(self.editor.toPlainText().strip()))
        self.clear_button.setEnabled(idle and not self._loaded.empty)
        self.refresh_button.setVisible(self._jobs is not None and not self.refreshing())
        self.refresh_button.setEnabled(idle and self._jobs is not None)
        self.cancel_button.setVisible(self.refreshing())
        revision = self.selected_revision()
        self.restore_button.setEnabled(
            idle and revision is not None and revision.id != self._current_revision_id
        )
        self.compare_combo.setEnabled(revision is not None)
        self._render_pin_button()

    def _render_pin_button(self) -> None:
        pinned = self.editor.selection_pinned()
        if self.editor.selection_has_heading():
            self.pin_button.setText(self.tr("Unpin section") if pinned else self.tr("Pin section"))
        else:
            self.pin_button.setText(self.tr("Unpin line") if pinned else self.tr("Pin line"))
        self.pin_button.setToolTip(
            self.tr(
                "Pinned lines are kept word for word by every refresh (marked at the left). "
                "Editing a pinned line keeps it pinned with the new text. Pinning a heading "
                "pins its whole section."
            )
        )

    def _render_counts(self) -> None:
        text = sections.normalised(self.editor.toPlainText())
        pins = self.editor.pins()
        pinned = sections.pinned_chars(pins)
        parts = [
            self.tr("{n} / {limit} characters").format(
                n=self.locale().toString(len(text)),
                limit=self.locale().toString(sections.MAX_PROFILE_CHARS),
            ),
            # No plural in the English source ("line(s)"): the numbers follow a colon.
            self.tr("pinned lines: {lines} ({n} / {limit} characters)").format(
                lines=self.locale().toString(len(pins)),
                n=self.locale().toString(pinned),
                limit=self.locale().toString(sections.MAX_PINNED_CHARS),
            ),
        ]
        self.count_label.setText(" · ".join(parts))
        over = len(text) > sections.MAX_PROFILE_CHARS or pinned > sections.MAX_PINNED_CHARS
        set_state(self.count_label, "error" if over else "muted")

    def _render_job(self) -> None:
        profile = self._loaded
        # The last refresh that worked; a failed one is told apart below, with its own time.
        parts = [
            self.tr("Last refresh: {time}").format(
                time=local_time(profile.checked_at, never=self.tr("never"))
            )
        ]
        status = self._job_status
        if self._jobs is not None:
            if status is not None and status.running:
                parts.append(self.tr("running now"))
            next_at = status.next_run_at if status is not None else None
            if not self._settings.get_bool("profile.enabled") or not self._settings.get_bool(
                "memory.enabled"
            ):
                parts.append(self.tr("daily refresh is off"))
            else:
                parts.append(
                    self.tr("next: {time}").format(
                        time=local_time(next_at, never=self.tr("not scheduled"))
                    )
                )
        failed = profile.last_outcome == "error" and profile.last_error
        if failed:
            parts.append(
                self.tr("last attempt failed at {time}: {error}").format(
                    time=local_time(profile.attempted_at),
                    error=job_error_text(profile.last_error),
                )
            )
        self.job_label.setText(" · ".join(parts))
        set_state(self.job_label, "warning" if failed else "muted")

    def version_number(self, revision: ProfileRevision) -> int:
        """A revision's place in the history, counted from 1 for the oldest."""
        place = self._places.get(revision.id)
        return len(self._revisions) - place if place is not None else 0

    def _previous(self, revision: ProfileRevision) -> ProfileRevision | None:
        place = self._places.get(revision.id)
        if place is None or place + 1 >= len(self._revisions):
            return None
        return self._revisions[place + 1]

    def source_text(self, revision: ProfileRevision) -> str:
        """How a revision came to be, in words."""
        if revision.source == "restored":
            place = self._places.get(revision.restored_from or 0)
            restored = self._revisions[place] if place is not None else None
            if restored is None:
                return self.tr("Restored from {time}").format(time="—")
            return self.tr("Restored from #{n}").format(n=self.version_number(restored))
        if revision.source == "manual":
            previous = self._previous(revision)
            if previous is not None and sections.normalised(
                previous.content
            ) == sections.normalised(revision.content):
                # Only the pins changed: say which way (issue 19: it read "Edited by you").
                if set(revision.pinned) - set(previous.pinned):
                    return self.tr("Pinned by you")
                if set(previous.pinned) - set(revision.pinned):
                    return self.tr("Unpinned by you")
        return {
            "scheduled": self.tr("Refreshed daily"),
            "requested": self.tr("Refreshed on request"),
            "manual": self.tr("Edited by you"),
            "cleared": self.tr("Cleared"),
            "imported": self.tr("Imported"),
        }.get(revision.source, revision.source)

    def _history_entry(self, revision: ProfileRevision) -> str:
        # Numbered and to the second: saves a minute apart read "18:18" three times.
        when = local_time(revision.created_at, seconds=True)
        text = f"#{self.version_number(revision)} · {when}\n{self.source_text(revision)}"
        if revision.source in ("scheduled", "requested"):
            learned = len(revision.summary_ids) + len(revision.memory_ids)
            text += " · " + self.tr("new items: {n}").format(n=self.locale().toString(learned))
        if revision.id == self._current_revision_id:
            text += " · " + self.tr("current")
        return text

    def _render_history(self, select: int | None = None) -> None:
        # The diff is drawn once, after the entries and the selection are in place.
        self.history.blockSignals(True)
        try:
            self.history.model.set_records(self._revisions)
            ids = [r.id for r in self._revisions]
            if select in ids:
                self.history.set_current(select)
            elif self._revisions:
                # The version before the current one shows what the last change did.
                self.history.set_current(ids[min(1, len(ids) - 1)])
        finally:
            self.history.blockSignals(False)
        self._render_diff()

    def _render_diff(self, *_args: object) -> None:
        revision = self.selected_revision()
        if revision is None:
            self.diff_view.setPlainText(self.tr("No earlier versions yet."))
            return
        lines = self.diff()
        if not any(mark != " " for mark, _ in lines):
            if self.compare_combo.currentData() == "previous":
                note = self.tr("This version changed nothing in the text.")
            else:
                note = self.tr("This version is the same as the current profile.")
            self.diff_view.setHtml(f"<p><i>{note}</i></p>{diff_html(lines, self)}")
            return
        self.diff_view.setHtml(diff_html(lines, self))

    def _render_stage(self) -> None:
        words = {
            "reading": self.tr("Reading new summaries and memories…"),
            "asking": self.tr("Waiting for the model…"),
            "checking": self.tr("Checking the reply…"),
            "saving": self.tr("Saving…"),
        }
        working = bool(self._stage)
        self.progress.setVisible(working)
        self.stage_label.setVisible(working)
        self.stage_label.setText(words.get(self._stage, ""))
        self.cancel_button.setVisible(working and self.refreshing())
        self.refresh_button.setVisible(self._jobs is not None and not working)

    def _recolour(self) -> None:
        super()._recolour()
        self._render_diff()


def _with_bookkeeping(loaded: Profile, fresh: Profile) -> Profile:
    """``loaded``'s text and revision with ``fresh``'s refresh bookkeeping (edits in progress)."""
    import dataclasses

    return dataclasses.replace(
        fresh,
        content=loaded.content,
        pinned=loaded.pinned,
        revision_id=loaded.revision_id,
        updated_at=loaded.updated_at,
    )
