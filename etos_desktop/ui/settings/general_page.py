"""The General page: editors for the ``ui.*`` and ``chat.*`` settings, generated from the schema."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QLocale, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.context.language import Language, language_for_locale
from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.settings.schema import SETTINGS, SettingSpec, validate
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui.settings.page import (
    SettingsPage,
    VerticalScrollArea,
    help_label,
    schema_tr,
    set_state,
    stacked,
)

#: The settings sections the General page is built from.
GENERAL_SECTIONS: tuple[str, ...] = ("ui", "chat")

_SECTION_TITLES = {"ui": "Interface", "chat": "Chat"}
#: Display names of choice values. Language names are written in their own language, as
#: language pickers do, so they are not translated.
_CHOICE_NAMES: Mapping[object, str] = {
    "auto": "Automatic",
    "system": "Same as the system",
    "light": "Light",
    "dark": "Dark",
    "ask": "Ask every time",
    "notify": "Save and notify",
    "never": "Never",
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


def _label_for(spec: SettingSpec) -> str:
    """A short English label made from the key: ``chat.max_output_tokens`` → "Max output tokens"."""
    name = spec.key.split(".", 1)[1]
    unit = ""
    if name.endswith("_ms"):
        name, unit = name[:-3], " (ms)"
    words = name.replace("_", " ")
    return words[:1].upper() + words[1:] + unit


class GeneralPage(SettingsPage):
    """Editors for the ``ui.*`` and ``chat.*`` settings, generated from the schema.

    Each setting gets a combo box (choices), a spin box (numbers, with the schema's range), a
    check box (bool) or a line edit (text), with its description as tooltip and help line.

    Signals:
        value_changed(str): the key of the setting whose editor changed.
    """

    value_changed = Signal(str)

    def __init__(
        self,
        settings: SettingsStore,
        *,
        sections: Sequence[str] = GENERAL_SECTIONS,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("generalPage")
        self._settings = settings
        self.specs: list[SettingSpec] = [s for s in SETTINGS if s.section in sections]
        self.editors: dict[str, QWidget] = {}
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
            label = schema_tr(_label_for(spec))
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

    def _on_editor_changed(self, key: str) -> None:
        self.value_changed.emit(key)
        self.changed.emit()
