"""Settings → Memory → Import a memory list: ChatGPT's, Claude's, a Markdown or text list.

The real page on a real engine: the menu action, the file chooser (the one stand-in), the real
preview with its list of facts to tick, Import, then the table. Bad files say why and change
nothing, as for the JSON import (``test_memory_page.py``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.ui.settings.memory_dialogs import ImportPreviewDialog
from etos_desktop.ui.settings.memory_models import COLUMNS
from etos_desktop.ui.settings.memory_page import MemoryPage
from tests.helpers.cards import png_image
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import (
    button_with_text,
    choose_file,
    click,
    find_dialog,
    visible_dialogs,
    wait_until,
)

SECRET = "sk-" + "Q9w8E7r6T5y4U3i2O1p0"
CHATGPT = f"""Here is everything I remember about you:

1. [2024-05-01] - User is a nurse in Lisbon.
2. [2024-06-12] - Prefers short answers.
3. [unknown] - Has a dog named Bolo.
4. [2024-07-01] - User's API key is {SECRET}
5. [2024-07-02] - plays the cello.

Let me know if you'd like me to forget anything!
"""


async def preview_for(page: MemoryPage, tmp_path: Path, text: str | bytes) -> ImportPreviewDialog:
    path = tmp_path / "memories from chatgpt.txt"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    page.import_list_action.trigger()
    await choose_file(str(path))
    return await find_dialog(ImportPreviewDialog, name="memoryImportPreview")


def rows(dialog: ImportPreviewDialog) -> list[tuple[str, bool]]:
    model = dialog.facts_list.model()
    return [
        (
            model.index(r, 0).data(),
            model.index(r, 0).data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked,
        )
        for r in range(model.rowCount())
    ]


def untick(dialog: ImportPreviewDialog, row: int) -> None:
    """Move to a fact and press Space, as a person would."""
    view = dialog.facts_list
    view.setFocus()
    view.setCurrentIndex(view.model().index(row, 0))
    QTest.keyClick(view, Qt.Key.Key_Space)


async def test_a_chatgpt_list_is_previewed_fact_by_fact_and_the_ticked_ones_imported(
    page: MemoryPage, engine: MemoryEngine, tmp_path: Path
) -> None:
    cello = engine.save("Plays the cello").id
    await page.refresh()
    assert page.import_list_action.text() == "Import a memory list (ChatGPT, Claude, text)…"
    dialog = await preview_for(page, tmp_path, CHATGPT)
    assert dialog.source_label.text() == "ChatGPT memory list · 5 facts"
    assert rows(dialog) == [
        ("Line 3 · 2024-05-01 · User is a nurse in Lisbon.", True),
        ("Line 4 · 2024-06-12 · Prefers short answers.", True),
        ("Line 5 · Has a dog named Bolo.", True),
        ("Line 9 · Let me know if you'd like me to forget anything!", False),
    ]
    assert dialog.summary_label.text() == "3 to add, 0 to update, 1 already here, 1 skipped"
    details = dialog.details.toPlainText()
    assert f"Line 7 — #{cello} Plays the cello" in details  # marked, not imported twice
    assert "Line 6: text looks like a password, key or ID number" in details
    assert "Line 1: a heading or a note" in details
    assert SECRET not in details

    untick(dialog, 2)  # the dog
    assert rows(dialog)[2] == ("Line 5 · Has a dog named Bolo.", False)
    assert dialog.summary_label.text() == "2 to add, 0 to update, 1 already here, 1 skipped"

    changed = expect_signal(page.memories_changed)
    await click(button_with_text(dialog, "Import"))
    await asyncio.wait_for(changed, 10)
    await page.wait_idle()
    assert page.status() == ("ok", "Imported: 2 added, 0 updated, 1 skipped.")
    stored = sorted(m.content for m in engine.memories())
    assert stored == ["Plays the cello", "Prefers short answers.", "User is a nurse in Lisbon."]
    row = page.model.row_of(next(m.id for m in engine.memories() if "nurse" in m.content))
    assert row is not None
    assert page.model.index(row, COLUMNS.index("source")).data() == "Imported"


async def test_unticking_every_fact_turns_import_off(page: MemoryPage, tmp_path: Path) -> None:
    dialog = await preview_for(page, tmp_path, "- Likes rain\n- Hates wind\n")
    assert dialog.source_label.text() == "Markdown list · 2 facts"
    for row in range(dialog.facts_list.model().rowCount()):
        untick(dialog, row)
    assert not button_with_text(dialog, "Import").isEnabled()
    assert "Nothing to import." in dialog.summary_label.text()
    await click(button_with_text(dialog, "Cancel"))
    await wait_until(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())
    await page.wait_idle()


async def test_a_utf16_chinese_list_with_full_width_bullets(
    page: MemoryPage, engine: MemoryEngine, tmp_path: Path
) -> None:
    text = "\ufeff以下是我记得的关于你的信息：\r\n・住在杭州\r\n１．喜欢喝乌龙茶\r\n"
    dialog = await preview_for(page, tmp_path, text.encode("utf-16"))
    assert dialog.source_label.text() == "Text list · 2 facts"
    assert [text for text, _ in rows(dialog)] == ["Line 2 · 住在杭州", "Line 3 · 喜欢喝乌龙茶"]
    await click(button_with_text(dialog, "Import"))
    await wait_until(lambda: len(engine.memories()) == 2)
    await page.wait_idle()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (png_image(), "neither a memory export nor a text list of facts"),
        (b"# Memories\n\n## Work:\n", "holds no facts to import"),
    ],
    ids=["image", "headings only"],
)
async def test_a_file_that_is_no_list_says_so_and_changes_nothing(
    page: MemoryPage, engine: MemoryEngine, tmp_path: Path, content: bytes, words: str
) -> None:
    kept = engine.save("Keeps a diary").id
    await page.refresh()
    path = tmp_path / "not a list.txt"
    path.write_bytes(content)
    page.import_list_action.trigger()
    await choose_file(str(path))
    await page.wait_idle()
    state, text = page.status()
    assert state == "error"
    assert text.startswith("The memories were not imported.")
    assert words in text
    assert visible_dialogs() == []
    assert [m.id for m in engine.memories(include_inactive=True)] == [kept]


async def test_the_facts_model_passes_the_model_tester(
    qtmodeltester, page: MemoryPage, tmp_path: Path
) -> None:
    dialog = await preview_for(page, tmp_path, CHATGPT)
    assert dialog.facts is not None
    qtmodeltester.check(dialog.facts)
    await click(button_with_text(dialog, "Cancel"))
    await wait_until(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())
    await page.wait_idle()


async def test_a_long_list_opens_and_ticks_without_holding_up_the_window(
    page: MemoryPage, tmp_path: Path
) -> None:
    text = "\n".join(f"- Fact number {i} about the garden" for i in range(10_000))
    dialog = await preview_for(page, tmp_path, text)
    assert dialog.source_label.text() == "Markdown list · 10000 facts"
    facts = dialog.facts
    assert facts is not None
    # What a tick costs does not grow with the list (a first version rebuilt every row: 4.7 s
    # a tick at 100,000): only the ticked row changes, and only the rows shown were ever worded.
    changed: list[tuple[int, int]] = []
    facts.dataChanged.connect(lambda first, last, _roles: changed.append((first.row(), last.row())))
    untick(dialog, 0)
    assert changed == [(0, 0)]
    assert len(facts._texts) < 500
    assert dialog.summary_label.text().startswith("9999 to add")
    await click(button_with_text(dialog, "Cancel"))
    await wait_until(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())
    await page.wait_idle()
