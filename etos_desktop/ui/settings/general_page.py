"""The General page: the ``ui.*`` and ``chat.*`` settings, check-ins, and the jobs' status.

The editors are generated from the schema; the "Check-ins" group (``checkins_section.py``) has
its own (times of day, a switch per persona); the "Background jobs" section lists every job's
last run, next run and last error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QEvent, QLocale, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.changes import DataChange, Layer
from etos_desktop.core.context.language import Language, language_for_locale
from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.jobs import JobName, JobStatus
from etos_desktop.core.settings.schema import SETTINGS, SettingSpec, validate
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui.job_text import job_error_text, job_name, local_time
from etos_desktop.ui.settings.checkins_section import CheckinsSection
from etos_desktop.ui.settings.page import (
    SettingsPage,
    VerticalScrollArea,
    help_label,
    plain_label,
    schema_tr,
    set_state,
    stacked,
)
from etos_desktop.ui.usage_text import show_job_usage

if TYPE_CHECKING:
    from etos_desktop.services.jobs import BackgroundJobs
    from etos_desktop.ui.changes_bridge import ChangesBridge

#: The settings sections the General page is built from.
GENERAL_SECTIONS: tuple[str, ...] = ("ui", "chat", "backup")

_SECTION_TITLES = {
    "ui": QT_TRANSLATE_NOOP("SettingsSchema", "Interface"),
    "chat": QT_TRANSLATE_NOOP("SettingsSchema", "Chat"),
    "backup": QT_TRANSLATE_NOOP("SettingsSchema", "Backups"),
}
#: The label of each setting the page shows (English source text, translated where shown).
_LABELS: Mapping[str, str] = {
    "ui.language": QT_TRANSLATE_NOOP("SettingsSchema", "Language"),
    "ui.theme": QT_TRANSLATE_NOOP("SettingsSchema", "Theme"),
    "ui.font_size": QT_TRANSLATE_NOOP("SettingsSchema", "Font size"),
    "chat.max_output_tokens": QT_TRANSLATE_NOOP("SettingsSchema", "Max output tokens"),
    "chat.temperature": QT_TRANSLATE_NOOP("SettingsSchema", "Temperature"),
    "chat.stream_render_interval_ms": QT_TRANSLATE_NOOP(
        "SettingsSchema", "Stream render interval (ms)"
    ),
    "chat.auto_title": QT_TRANSLATE_NOOP("SettingsSchema", "Auto title"),
    "backup.keep_count": QT_TRANSLATE_NOOP("SettingsSchema", "Keep count"),
}
#: Display names of choice values. Language names are written in their own language, as
#: language pickers do, so they are not translated.
_CHOICE_NAMES: Mapping[object, str] = {
    "auto": QT_TRANSLATE_NOOP("SettingsSchema", "Automatic"),
    "system": QT_TRANSLATE_NOOP("SettingsSchema", "Same as the system"),
    "light": QT_TRANSLATE_NOOP("SettingsSchema", "Light"),
    "dark": QT_TRANSLATE_NOOP("SettingsSchema", "Dark"),
    "ask": QT_TRANSLATE_NOOP("SettingsSchema", "Ask every time"),
    "notify": QT_TRANSLATE_NOOP("SettingsSchema", "Save and notify"),
    "never": QT_TRANSLATE_NOOP("SettingsSchema", "Never"),
}
_NATIVE_CHOICE_NAMES: Mapping[object, str] = {"en": "English", "zh": "中文"}
#: Units shown in a number's editor, with the step of its arrows.
_UNITS: Mapping[str, tuple[str, int]] = {"ui.font_size": ("%", 10)}


def ui_language(setting: str) -> Language:
    """The prompt language matching the UI language setting ("auto" follows the locale)."""
    if setting == "zh":
        return "zh"
    if setting == "en":
        return "en"
    return language_for_locale(QLocale().name())


class JobsSection(QGroupBox):
    """The "Background jobs" section: each job's last run, next run, tokens and last error."""

    COLUMNS = 5

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("jobsSection")
        self._statuses: dict[JobName, JobStatus] = {}
        self._headers = [QLabel(self) for _ in range(self.COLUMNS)]
        self.cells: dict[JobName, list[QLabel]] = {}
        grid = QGridLayout(self)
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(4)
        for column, header in enumerate(self._headers):
            header.setStyleSheet("font-weight: bold;")
            # "Tokens, 30 days" may take two lines: the five columns fit the dialog at 800×600.
            header.setWordWrap(True)
            grid.addWidget(header, 0, column, Qt.AlignmentFlag.AlignTop)
        for row, name in enumerate(JobName, start=1):
            # Names, times and tokens stay on one line; the error wraps (it takes the spare
            # width), and so does the next run (the titles' is a sentence, not a time).
            labels = [
                plain_label(self, wrap=column in (2, self.COLUMNS - 1))
                for column in range(self.COLUMNS)
            ]
            labels[0].setObjectName(f"job:{name.value}")
            for column, label in enumerate(labels):
                grid.addWidget(label, row, column, Qt.AlignmentFlag.AlignTop)
            self.cells[name] = labels
        # The next run shares the spare width, so it keeps to one line when the dialog is wide.
        grid.setColumnStretch(2, 1)
        grid.setColumnStretch(self.COLUMNS - 1, 1)
        self.retranslate()

    def set_statuses(self, statuses: Sequence[JobStatus]) -> None:
        """Show these statuses."""
        self._statuses = {s.name: s for s in statuses}
        self.retranslate()

    def row_texts(self, name: JobName) -> list[str]:
        """The texts of one job's row (for tests and screen readers)."""
        return [label.text() for label in self.cells[name]]

    def retranslate(self) -> None:
        self.setTitle(self.tr("Background jobs"))
        for header, text in zip(
            self._headers,
            (
                self.tr("Job"),
                self.tr("Last run"),
                self.tr("Next run"),
                self.tr("Tokens, 30 days"),
                self.tr("Last error"),
            ),
            strict=True,
        ):
            header.setText(text)
        for name, (title, last, next_run, tokens, error) in self.cells.items():
            title.setText(job_name(name))
            status = self._statuses.get(name)
            show_job_usage(tokens, status.usage if status is not None else None)
            if status is None:
                for label in (last, next_run, error):
                    label.setText("…")
                    set_state(label, "muted")
                continue
            if not status.available:
                last.setText("—")
                next_run.setText(self.tr("Not set up yet"))
                error.setText("—")
                for label in (last, next_run, error):
                    set_state(label, "muted")
                continue
            if status.running:
                last.setText(self.tr("Running now"))
            else:
                last.setText(local_time(status.last_started_at, never=self.tr("Never")))
            if name == JobName.TITLES:
                next_run.setText(self.tr("After a new conversation's first reply"))
            else:
                next_run.setText(local_time(status.next_run_at, never=self.tr("Not scheduled")))
            error.setText(job_error_text(status.last_error) if status.failed_last else "—")
            set_state(last, "")
            set_state(next_run, "")
            set_state(error, "warning" if status.failed_last else "muted")

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class GeneralPage(SettingsPage):
    """Editors for the ``ui.*`` and ``chat.*`` settings, generated from the schema.

    Each setting gets a combo box (choices), a spin box (numbers, with the schema's range), a
    check box (bool) or a line edit (text), with its description as tooltip and help line.
    Given the background jobs, a "Background jobs" section below lists every job with its last
    run, next run and last error; it is read again on every visit and when a job changes.

    Signals:
        value_changed(str): the key of the setting whose editor changed.
        jobs_refreshed(): the "Background jobs" section was read again.
    """

    value_changed = Signal(str)
    jobs_refreshed = Signal()

    def __init__(
        self,
        settings: SettingsStore,
        *,
        sections: Sequence[str] = GENERAL_SECTIONS,
        jobs: BackgroundJobs | None = None,
        changes: ChangesBridge | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("generalPage")
        self._settings = settings
        self._jobs = jobs
        self._jobs_queued = False
        self.specs: list[SettingSpec] = [s for s in SETTINGS if s.section in sections]
        self.editors: dict[str, QWidget] = {}
        self.checkins_section: CheckinsSection | None = None
        self.help_labels: dict[str, QLabel] = {}
        self._labels: dict[str, QLabel] = {}
        self._groups: dict[str, QGroupBox] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = VerticalScrollArea(self)
        content = QWidget(scroll)
        column = QVBoxLayout(content)
        scroll.setWidget(content)
        outer.addWidget(scroll, 1)
        outer.addWidget(self.status_label)
        for section in sections:
            group = QGroupBox(content)
            self._groups[section] = group
            form = QFormLayout(group)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
            for spec in (s for s in self.specs if s.section == section):
                editor = self._make_editor(spec, group)
                description = help_label(group)
                self.editors[spec.key] = editor
                self.help_labels[spec.key] = description
                if isinstance(editor, QCheckBox):
                    form.addRow(stacked(group, editor, description))
                else:
                    label = QLabel(group)
                    self._labels[spec.key] = label
                    form.addRow(label, stacked(group, editor, description))
            column.addWidget(group)
            if section == "chat":
                # When the companion may start a conversation: after the chat's settings.
                self.checkins_section = CheckinsSection(settings, jobs=jobs, parent=content)
                self.checkins_section.changed.connect(self.changed)
                column.addWidget(self.checkins_section)
        self.jobs_section: JobsSection | None = None
        if jobs is not None:
            self.jobs_section = JobsSection(content)
            column.addWidget(self.jobs_section)
        if changes is not None:
            changes.changed.connect(self._on_changes_changed)
        column.addStretch(1)
        self.retranslate()

    def _make_editor(self, spec: SettingSpec, parent: QWidget) -> QWidget:
        value = self._settings.get(spec.key)
        key = spec.key
        editor: QWidget
        if spec.choices is not None:
            combo = QComboBox(parent)
            for choice in spec.choices:
                combo.addItem(str(choice), choice)
            combo.setCurrentIndex(max(combo.findData(value), 0))
            combo.currentIndexChanged.connect(lambda _i: self._on_editor_changed(key))
            editor = combo
        elif spec.type is bool:
            check = QCheckBox(parent)
            check.setChecked(bool(value))
            check.toggled.connect(lambda _on: self._on_editor_changed(key))
            editor = check
        elif spec.type is int:
            spin = QSpinBox(parent)
            spin.setRange(
                int(spec.minimum if spec.minimum is not None else -(2**31)),
                int(spec.maximum if spec.maximum is not None else 2**31 - 1),
            )
            spin.setValue(self._settings.get_int(key))
            spin.setGroupSeparatorShown(True)
            if key in _UNITS:
                suffix, step = _UNITS[key]
                spin.setSuffix(suffix)
                spin.setSingleStep(step)
            spin.valueChanged.connect(lambda _v: self._on_editor_changed(key))
            editor = spin
        elif spec.type is float:
            double = QDoubleSpinBox(parent)
            double.setDecimals(2)
            double.setSingleStep(0.1)
            double.setRange(
                spec.minimum if spec.minimum is not None else -1e9,
                spec.maximum if spec.maximum is not None else 1e9,
            )
            double.setValue(self._settings.get_float(key))
            double.valueChanged.connect(lambda _v: self._on_editor_changed(key))
            editor = double
        else:
            line = QLineEdit(parent)
            line.setText(str(value))
            if spec.maximum is not None:
                line.setMaxLength(int(spec.maximum))
            line.textChanged.connect(lambda _t: self._on_editor_changed(key))
            editor = line
        editor.setObjectName(f"setting:{spec.key}")
        return editor

    def retranslate(self) -> None:
        for section, group in self._groups.items():
            group.setTitle(schema_tr(_SECTION_TITLES.get(section, section.capitalize())))
        for spec in self.specs:
            editor = self.editors[spec.key]
            label = schema_tr(_LABELS[spec.key])
            description = schema_tr(spec.description)
            editor.setToolTip(description)
            self.help_labels[spec.key].setText(description)
            if isinstance(editor, QCheckBox):
                editor.setText(label)
            else:
                self._labels[spec.key].setText(label)
                self._labels[spec.key].setToolTip(description)
            if isinstance(editor, QComboBox) and spec.choices is not None:
                for index, choice in enumerate(spec.choices):
                    native = _NATIVE_CHOICE_NAMES.get(choice)
                    text = native or schema_tr(_CHOICE_NAMES.get(choice, str(choice)))
                    editor.setItemText(index, text)
        self._render_status()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._on_jobs_changed()

    def _on_changes_changed(self, change: DataChange) -> None:
        if change.touches(Layer.JOBS, Layer.SUMMARIES):
            self._on_jobs_changed()

    def _on_jobs_changed(self) -> None:
        # Several changes in a row (a job started, then ended) read the statuses once.
        if self._jobs is not None and self.isVisible() and not self._jobs_queued:
            self._jobs_queued = True
            self.spawn(self.refresh_jobs(), self.tr("The background jobs' status was not read."))

    async def refresh_jobs(self) -> None:
        """Read every job's status again."""
        try:
            if self._jobs is None or self.jobs_section is None:
                return
            statuses = await self._jobs.statuses()
            self.jobs_section.set_statuses(statuses)
            if self.checkins_section is not None:
                await self.checkins_section.read()
            self.jobs_refreshed.emit()
        finally:
            self._jobs_queued = False

    def value(self, key: str) -> object:
        """The value the editor of ``key`` holds now."""
        editor = self.editors[key]
        if isinstance(editor, QComboBox):
            return editor.currentData()
        if isinstance(editor, QCheckBox):
            return editor.isChecked()
        if isinstance(editor, QSpinBox | QDoubleSpinBox):
            return editor.value()
        assert isinstance(editor, QLineEdit)
        return editor.text()

    def is_modified(self) -> bool:
        if self.checkins_section is not None and self.checkins_section.is_modified():
            return True
        return any(self.value(s.key) != self._settings.get(s.key) for s in self.specs)

    def validate(self) -> bool:
        ok = True
        for spec in self.specs:
            try:
                validate(spec, self.value(spec.key))
            except InvalidInput:
                set_state(self.help_labels[spec.key], "error")
                ok = False
            else:
                set_state(self.help_labels[spec.key], "muted")
        return ok

    def apply(self) -> None:
        for spec in self.specs:
            self._settings.set(spec.key, self.value(spec.key))
        if self.checkins_section is not None:
            self.checkins_section.apply()

    def _on_editor_changed(self, key: str) -> None:
        self.value_changed.emit(key)
        self.changed.emit()
