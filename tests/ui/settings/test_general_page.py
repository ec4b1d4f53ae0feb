"""The General page, generated from the settings schema."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox

from etos_desktop.core.settings.schema import SETTINGS
from etos_desktop.ui.settings.general_page import GENERAL_SECTIONS
from tests.helpers.qt_async import wait_signal
from tests.helpers.settings_env import SettingsEnv, close_settings, open_settings
from tests.helpers.ui_driver import click


async def test_general_page_is_generated_from_the_schema(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    page = dialog.general_page
    expected = [s for s in SETTINGS if s.section in GENERAL_SECTIONS]
    assert {s.section for s in expected} == {"ui", "chat", "backup"}
    assert set(page.editors) == {s.key for s in expected}
    for spec in expected:
        editor = page.editors[spec.key]
        assert editor.toolTip() == spec.description, spec.key
        assert page.help_labels[spec.key].text() == spec.description
        if spec.choices is not None:
            assert isinstance(editor, QComboBox)
            assert [editor.itemData(i) for i in range(editor.count())] == list(spec.choices)
        elif spec.type is bool:
            assert isinstance(editor, QCheckBox)
        elif spec.type is int:
            assert isinstance(editor, QSpinBox)
            assert (editor.minimum(), editor.maximum()) == (spec.minimum, spec.maximum)
        elif spec.type is float:
            assert isinstance(editor, QDoubleSpinBox)
            assert (editor.minimum(), editor.maximum()) == (spec.minimum, spec.maximum)
        assert page.value(spec.key) == spec.default
    await close_settings(dialog, ctx)


async def test_general_values_are_saved(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("general")
    page = dialog.general_page
    temperature = page.editors["chat.temperature"]
    tokens = page.editors["chat.max_output_tokens"]
    auto_title = page.editors["chat.auto_title"]
    theme = page.editors["ui.theme"]
    assert isinstance(temperature, QDoubleSpinBox)
    assert isinstance(tokens, QSpinBox)
    assert isinstance(auto_title, QCheckBox)
    assert isinstance(theme, QComboBox)
    temperature.setValue(1.2)
    tokens.setValue(4096)
    auto_title.setChecked(False)
    theme.setCurrentIndex(theme.findData("dark"))
    assert dialog.status_label.text() == "Unsaved changes"

    await click(dialog.save_button, settle=False)
    await wait_signal(dialog.settings_saved)

    reloaded = ctx.reload_settings()
    assert reloaded.get("chat.temperature") == pytest.approx(1.2)
    assert reloaded.get("chat.max_output_tokens") == 4096
    assert reloaded.get("chat.auto_title") is False
    assert reloaded.get("ui.theme") == "dark"
    await close_settings(dialog, ctx)
