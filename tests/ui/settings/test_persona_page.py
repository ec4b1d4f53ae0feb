"""The Persona page: name, avatar and personality, with the defaults of the UI language."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import QComboBox

from etos_desktop.core.context.prompts import DEFAULT_PERSONA_NAME, DEFAULT_PERSONA_PROMPT
from etos_desktop.core.settings.paths import settings_path
from tests.helpers.qt_async import wait_signal
from tests.helpers.settings_env import SettingsEnv, close_settings, open_settings, type_into
from tests.helpers.ui_driver import cancel_file_chooser, choose_file, click


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_persona_defaults_follow_the_ui_language(
    qtbot, ctx: SettingsEnv, language: str
) -> None:
    ctx.settings.set("ui.language", language)
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    assert page.name_edit.placeholderText() == DEFAULT_PERSONA_NAME[language]
    assert page.prompt_edit.placeholderText() == DEFAULT_PERSONA_PROMPT[language]
    assert page.prompt_edit.toPlainText() == ""

    await click(page.reset_prompt_button)
    assert page.prompt_edit.toPlainText() == DEFAULT_PERSONA_PROMPT[language]
    await close_settings(dialog, ctx)


async def test_persona_is_saved_and_language_switch_updates_defaults(
    qtbot, ctx: SettingsEnv
) -> None:
    ctx.settings.set("ui.language", "zh")
    dialog = open_settings(qtbot, ctx)
    page = dialog.persona_page
    combo = dialog.general_page.editors["ui.language"]
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData("en"))
    assert page.prompt_edit.placeholderText() == DEFAULT_PERSONA_PROMPT["en"]
    combo.setCurrentIndex(combo.findData("zh"))

    dialog.show_page("persona")
    await type_into(page.name_edit, "小忆同学")
    await click(page.reset_prompt_button)
    await click(dialog.save_button, settle=False)
    await wait_signal(dialog.settings_saved)

    reloaded = ctx.reload_settings()
    assert reloaded.get("persona.name") == "小忆同学"
    assert reloaded.get("persona.prompt") == DEFAULT_PERSONA_PROMPT["zh"]
    await close_settings(dialog, ctx)


async def test_avatar_is_chosen_in_the_file_chooser_previewed_and_reset(
    qtbot, ctx: SettingsEnv, tmp_path: Path
) -> None:
    documents = tmp_path / "home" / "Documents"
    documents.mkdir()
    image = documents / "face.png"
    pixmap = QPixmap(20, 10)
    pixmap.fill(QColor("orange"))
    assert pixmap.save(str(image))
    not_an_image = documents / "notes.png"
    not_an_image.write_text("hello", encoding="utf-8")
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    assert not page.avatar_preview.pixmap().isNull()  # the built-in avatar

    await click(page.choose_avatar_button)
    assert await cancel_file_chooser() == str(documents)  # it starts in the documents folder
    await page.wait_idle()
    assert page.avatar_path == ""

    await click(page.choose_avatar_button)
    await choose_file(str(image))
    await page.wait_idle()
    assert page.avatar_path == str(image)
    preview = page.avatar_preview.pixmap()
    ratio = preview.devicePixelRatio()
    assert round(preview.width() / ratio) == 64
    assert round(preview.height() / ratio) == 32
    assert page.avatar_path_label.text() == "face.png"

    await click(page.choose_avatar_button)
    await choose_file(str(not_an_image))
    await page.wait_idle()
    assert page.avatar_error.isVisible()
    assert page.avatar_path == str(image)

    assert await dialog.save()
    assert ctx.reload_settings().get("persona.avatar") == str(image)
    await click(page.reset_avatar_button)
    assert page.avatar_path == ""
    assert await dialog.save()
    assert ctx.reload_settings().get("persona.avatar") == ""
    await close_settings(dialog, ctx)


async def test_too_long_personality_is_refused_inline(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    page = dialog.persona_page
    page.prompt_edit.setPlainText("x" * 10_001)
    assert not await dialog.save()
    assert dialog.current_page_name() == "persona"
    assert page.prompt_error.isVisible()
    assert len(page.prompt_edit.toPlainText()) == 10_001
    assert not settings_path(ctx.data_dir).exists()
    await close_settings(dialog, ctx)
