"""The Memory page's dialogs on their own: what the import preview and the history show."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.transfer.document import ImportPreview, parse_import
from etos_desktop.ui.settings.memory_dialogs import (
    ImportPreviewDialog,
    MemoryEditorDialog,
    MemoryFields,
    MemoryHistoryDialog,
)
from etos_desktop.ui.theme import DARK, LIGHT

ZWSP = "\u200b"


async def test_the_preview_shows_what_an_import_adds_updates_and_skips(
    qtbot, engine: MemoryEngine, clock: FakeClock, remember: Callable[..., int]
) -> None:
    remember("Plays the cello")
    text = json.dumps(
        {
            "format": "etos-desktop.memories",
            "version": 1,
            "memories": [
                {"content": "plays the CELLO", "importance": 0.9},
                {"content": f"New <b>one</b>{ZWSP}"},
                {"content": "", "kind": "fact"},
            ],
        }
    )
    document = parse_import(text, now=clock.now(), max_content_chars=100)
    preview = ImportPreview.of(engine.preview_import(document))
    dialog = ImportPreviewDialog(preview)
    qtbot.addWidget(dialog)
    assert dialog.summary_label.text() == "1 to add, 1 to update, 0 already here, 1 skipped"
    details = dialog.details.toPlainText()
    assert r"New <b>one</b>\u200b" in details  # markup as typed, the invisible one spelled out
    assert "plays the CELLO (Text, Importance)" in details
    assert "Entry 3: no text" in details
    assert dialog.import_button.isEnabled()


async def test_the_history_colours_old_values_from_the_theme(
    qtbot, engine: MemoryEngine, remember: Callable[..., int]
) -> None:
    memory_id = remember("Likes green tea")
    engine.edit(memory_id, "Likes black tea")
    dialog = MemoryHistoryDialog()
    qtbot.addWidget(dialog)
    dialog.set_history(engine.get(memory_id), engine.history(memory_id))
    assert f"color:{LIGHT.muted}" in dialog.browser.toHtml().replace(" ", "")
    dark = dialog.palette()
    dark.setColor(dark.ColorRole.WindowText, "#f0f0f0")
    dark.setColor(dark.ColorRole.Base, "#202020")
    dialog.setPalette(dark)  # as a switch to the dark theme does
    assert f"color:{DARK.muted}" in dialog.browser.toHtml().replace(" ", "")


async def test_the_editor_spells_out_invisible_characters(qtbot) -> None:
    dialog = MemoryEditorDialog(MemoryFields(f"Likes{ZWSP} tea"), "Edit", max_chars=100)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.invisible_label.isVisible()
    assert dialog.invisible_label.text() == r"Contains invisible characters: Likes\u200b tea"
    assert dialog.fields() == MemoryFields(f"Likes{ZWSP} tea")


async def test_ctrl_enter_saves_the_editor_and_enter_is_a_new_line(qtbot) -> None:
    """Issue 19: Ctrl+Enter did nothing in the memory editor."""
    dialog = MemoryEditorDialog(MemoryFields("Likes tea"), "Edit", max_chars=100)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    dialog.content_edit.setFocus()
    qtbot.keyClick(dialog.content_edit, Qt.Key.Key_Return)
    assert dialog.isVisible()
    assert dialog.content_edit.toPlainText() == "Likes tea\n"
    with qtbot.waitSignal(dialog.accepted, timeout=2000):
        qtbot.keyClick(dialog.content_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.fields().content == "Likes tea"
