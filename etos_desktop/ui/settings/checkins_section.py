"""The "Check-ins" group of the General page: when the companion may start a conversation.

The ``checkins.*`` settings (off by default): the switch, silence or daily, the days or the
time, the quiet hours, and one switch per persona that could speak (Settings' persona and each
conversation's own); under them, when the next check-in comes or why none will. Like every
editor on the page, Save writes them; the jobs then derive the check-in again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QLocale, QTime, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QTimeEdit,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.checkins.records import (
    SETTINGS_PERSONA,
    Persona,
    parse_personas_off,
    personas_off_value,
)
from etos_desktop.core.context.language import language_for_locale
from etos_desktop.core.context.prompts import DEFAULT_PERSONA_NAME
from etos_desktop.core.settings.schema import spec_for
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui.job_text import local_time
from etos_desktop.ui.labels import plain_tooltip
from etos_desktop.ui.settings.page import help_label, plain_label, schema_tr, set_state, stacked

if TYPE_CHECKING:
    from etos_desktop.core.checkins.rule import Decision
    from etos_desktop.services.jobs import BackgroundJobs

#: The minute keys, edited as a time of day.
_TIME_KEYS = ("checkins.time", "checkins.quiet_start", "checkins.quiet_end")


def _time(minute: int) -> QTime:
    return QTime(minute // 60, minute % 60)


def _minute(edit: QTimeEdit) -> int:
    moment = edit.time()
    return moment.hour() * 60 + moment.minute()


class CheckinsSection(QGroupBox):
    """The check-in settings, with the persona switches and the next check-in.

    Args:
        settings: The store the values are read from and written to (on Save).
        jobs: The background jobs (the personas and the next check-in); ``None``: not shown.
        parent: The page's content.

    Signals:
        changed(): an edit that Save would write.
    """

    changed = Signal()

    def __init__(
        self,
        settings: SettingsStore,
        *,
        jobs: BackgroundJobs | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("checkinsSection")
        self._settings = settings
        self._jobs = jobs
        self._decision: Decision | None = None
        self._personas: list[Persona] = [Persona(SETTINGS_PERSONA)]
        self._off = parse_personas_off(settings.get_str("checkins.personas_off"))

        self.enabled_check = QCheckBox(self)
        self.enabled_check.setObjectName("setting:checkins.enabled")
        self.enabled_check.setChecked(settings.get_bool("checkins.enabled"))
        self.enabled_help = help_label(self)
        self.mode_label = QLabel(self)
        self.mode_combo = QComboBox(self)
        self.mode_combo.setObjectName("setting:checkins.mode")
        for choice in spec_for("checkins.mode").choices or ():
            self.mode_combo.addItem(str(choice), choice)
        self.mode_combo.setCurrentIndex(
            max(self.mode_combo.findData(settings.get_str("checkins.mode")), 0)
        )
        self.days_label = QLabel(self)
        self.days_spin = QSpinBox(self)
        self.days_spin.setObjectName("setting:checkins.after_days")
        days = spec_for("checkins.after_days")
        self.days_spin.setRange(int(days.minimum or 1), int(days.maximum or 60))
        self.days_spin.setValue(settings.get_int("checkins.after_days"))
        self.time_label = QLabel(self)
        self.time_edits: dict[str, QTimeEdit] = {}
        for key in _TIME_KEYS:
            edit = QTimeEdit(self)
            edit.setObjectName(f"setting:{key}")
            edit.setDisplayFormat("HH:mm")
            edit.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
            edit.setTime(_time(settings.get_int(key)))
            edit.timeChanged.connect(self._on_edited)
            self.time_edits[key] = edit
        self.quiet_label = QLabel(self)
        self.quiet_check = QCheckBox(self)
        self.quiet_check.setObjectName("setting:checkins.quiet_hours")
        self.quiet_check.setChecked(settings.get_bool("checkins.quiet_hours"))
        self.quiet_to = QLabel(self)
        quiet_row = QWidget(self)
        quiet_layout = QHBoxLayout(quiet_row)
        quiet_layout.setContentsMargins(0, 0, 0, 0)
        quiet_layout.addWidget(self.quiet_check)
        quiet_layout.addWidget(self.time_edits["checkins.quiet_start"])
        quiet_layout.addWidget(self.quiet_to)
        quiet_layout.addWidget(self.time_edits["checkins.quiet_end"])
        quiet_layout.addStretch(1)
        self.quiet_help = help_label(self)
        self.personas_label = QLabel(self)
        self.personas_box = QWidget(self)
        self.personas_box.setObjectName("checkinPersonas")
        self._personas_layout = QVBoxLayout(self.personas_box)
        self._personas_layout.setContentsMargins(0, 0, 0, 0)
        self._personas_layout.setSpacing(2)
        self.persona_checks: dict[str, QCheckBox] = {}
        self.status_label = plain_label(self)
        self.status_label.setObjectName("checkinStatus")

        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow(stacked(self, self.enabled_check, self.enabled_help))
        form.addRow(self.mode_label, self.mode_combo)
        form.addRow(self.days_label, self.days_spin)
        form.addRow(self.time_label, self.time_edits["checkins.time"])
        form.addRow(self.quiet_label, stacked(self, quiet_row, self.quiet_help))
        form.addRow(self.personas_label, self.personas_box)
        form.addRow(self.status_label)
        self.days_spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

        self.enabled_check.toggled.connect(self._on_edited)
        self.mode_combo.currentIndexChanged.connect(self._on_edited)
        self.days_spin.valueChanged.connect(self._on_edited)
        self.quiet_check.toggled.connect(self._on_edited)
        self._show_personas()
        self.retranslate()

    # -- the values ---------------------------------------------------------------------------

    def values(self) -> dict[str, object]:
        """The value each ``checkins.*`` setting's editor holds now."""
        off = {key for key, check in self.persona_checks.items() if not check.isChecked()}
        # Switches of personas not listed now (no conversation uses them) stay as they were.
        off |= {key for key in self._off if key not in self.persona_checks}
        values: dict[str, object] = {
            "checkins.enabled": self.enabled_check.isChecked(),
            "checkins.mode": self.mode_combo.currentData(),
            "checkins.after_days": self.days_spin.value(),
            "checkins.quiet_hours": self.quiet_check.isChecked(),
            "checkins.personas_off": personas_off_value(off),
        }
        values.update({key: _minute(edit) for key, edit in self.time_edits.items()})
        return values

    def is_modified(self) -> bool:
        """Whether an editor holds a value that is not stored."""
        stored = {key: self._settings.get(key) for key in self.values()}
        stored["checkins.personas_off"] = personas_off_value(
            parse_personas_off(self._settings.get_str("checkins.personas_off"))
        )
        return self.values() != stored

    def apply(self) -> None:
        """Write every editor's value into the store."""
        for key, value in self.values().items():
            self._settings.set(key, value)
        self._off = parse_personas_off(self._settings.get_str("checkins.personas_off"))

    # -- words --------------------------------------------------------------------------------

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setTitle(self.tr("Check-ins"))
        self.enabled_check.setText(self.tr("Let the companion start a conversation now and then"))
        self.enabled_help.setText(
            self.tr(
                "Off unless you turn it on. At most one a day, never during the quiet hours, "
                "never while memory is off. Written by the background model from your profile "
                "and recent summaries, and shown as a new conversation and a notification."
            )
        )
        self.mode_label.setText(self.tr("When"))
        self.mode_combo.setItemText(0, self.tr("After some days without a conversation"))
        self.mode_combo.setItemText(1, self.tr("Every day at a set time"))
        self.days_label.setText(self.tr("Days without a conversation"))
        self.time_label.setText(self.tr("Time of day"))
        self.quiet_label.setText(self.tr("Quiet hours"))
        self.quiet_check.setText(self.tr("From"))
        self.quiet_to.setText(self.tr("to"))
        self.quiet_help.setText(
            self.tr("A check-in due during the quiet hours waits until they end.")
        )
        self.time_edits["checkins.quiet_start"].setAccessibleName(self.tr("Quiet hours begin"))
        self.time_edits["checkins.quiet_end"].setAccessibleName(self.tr("Quiet hours end"))
        self.personas_label.setText(self.tr("Who may check in"))
        for key in ("checkins.enabled", "checkins.mode", "checkins.after_days", *_TIME_KEYS):
            editor = self.findChild(QWidget, f"setting:{key}")
            if editor is not None:
                editor.setToolTip(schema_tr(spec_for(key).description))
        self.quiet_check.setToolTip(schema_tr(spec_for("checkins.quiet_hours").description))
        self.days_spin.setSuffix(self.tr(" day(s)"))
        self._name_personas()
        self._show_status()
        self._update_enabled()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _language(self) -> str:
        setting = self._settings.get_str("ui.language")
        if setting in ("en", "zh"):
            return setting
        return language_for_locale(QLocale().name())

    def _persona_text(self, persona: Persona) -> str:
        if persona.key == SETTINGS_PERSONA:
            lang = "zh" if self._language() == "zh" else "en"
            name = self._settings.get_str("persona.name").strip() or DEFAULT_PERSONA_NAME[lang]
            return self.tr("{name} (the Persona page)").format(name=name)
        return self.tr(
            "{name} (its own persona in %n conversation(s))", "", persona.conversations
        ).format(name=persona.key)

    def _name_personas(self) -> None:
        for persona in self._personas:
            check = self.persona_checks.get(persona.key)
            if check is not None:
                text = self._persona_text(persona)
                check.setText(text)
                check.setToolTip(plain_tooltip(text))

    def _show_personas(self) -> None:
        checked = {key: check.isChecked() for key, check in self.persona_checks.items()}
        for check in self.persona_checks.values():
            self._personas_layout.removeWidget(check)
            check.deleteLater()
        self.persona_checks.clear()
        # Settings' persona first, then the conversations' own, most recently used first.
        ordered = sorted(self._personas, key=lambda p: p.key != SETTINGS_PERSONA)
        for persona in ordered:
            check = QCheckBox(self.personas_box)
            check.setObjectName(f"checkinPersona:{persona.key}")
            check.setChecked(checked.get(persona.key, persona.key not in self._off))
            check.toggled.connect(self._on_edited)
            self._personas_layout.addWidget(check)
            self.persona_checks[persona.key] = check
        self._name_personas()
        self._update_enabled()

    def _show_status(self) -> None:
        decision = self._decision
        if not self.enabled_check.isChecked() or decision is None:
            text = self.tr("Check-ins are off.") if not self.enabled_check.isChecked() else ""
            state = "muted"
        elif decision.at is not None:
            text = self.tr("Next check-in: {when}").format(when=local_time(decision.at))
            state = ""
        else:
            text = {
                "off": self.tr("Save to turn check-ins on."),
                "memory_off": self.tr("No check-in while memory is off (the Memory page)."),
                "no_provider": self.tr("No check-in until a model provider is set up."),
                "no_persona": self.tr("No check-in: every companion's switch is off."),
                "no_conversation": self.tr("The first check-in waits for a first conversation."),
            }.get(decision.reason, "")
            state = "muted" if decision.reason == "off" else "warning"
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))
        set_state(self.status_label, state)

    def _update_enabled(self) -> None:
        on = self.enabled_check.isChecked()
        daily = self.mode_combo.currentData() == "daily"
        for widget in (self.mode_label, self.mode_combo, self.quiet_label, self.quiet_check):
            widget.setEnabled(on)
        for widget in (self.personas_label, self.personas_box, self.quiet_help):
            widget.setEnabled(on)
        self.days_label.setEnabled(on and not daily)
        self.days_spin.setEnabled(on and not daily)
        self.time_label.setEnabled(on and daily)
        self.time_edits["checkins.time"].setEnabled(on and daily)
        quiet = on and self.quiet_check.isChecked()
        for key in ("checkins.quiet_start", "checkins.quiet_end"):
            self.time_edits[key].setEnabled(quiet)
        self.quiet_to.setEnabled(quiet)

    def _on_edited(self, *_args: object) -> None:
        self._update_enabled()
        self._show_status()
        self.changed.emit()

    # -- reading --------------------------------------------------------------------------------

    async def read(self) -> None:
        """Read the personas and the next check-in again (the page runs it as its task)."""
        if self._jobs is None:
            return
        personas, decision = await asyncio.gather(
            self._jobs.checkin_personas(), self._jobs.checkin_decision()
        )
        listed = [(p.key, p.conversations) for p in self._personas]
        if [(p.key, p.conversations) for p in personas] != listed:
            self._personas = list(personas)
            self._show_personas()
        self._decision = decision
        self._show_status()

    @property
    def personas(self) -> Sequence[Persona]:
        """The personas listed."""
        return tuple(self._personas)
