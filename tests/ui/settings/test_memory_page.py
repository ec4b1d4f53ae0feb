"""The Memory page against a real engine on a temporary database, through its real dialogs.

Every test is ``async def`` on the qasync loop (tests/ui/conftest.py). The page opens its own
editor, import preview and confirmations; the tests find them among the visible windows, type
into their fields, click their buttons (tests/helpers/ui_driver.py) and then look at the
database and the page. Only the operating system's file chooser is answered by ``choose_file``,
and that still goes through the page's real awaiting path.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy
import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication, QPoint, Qt
from PySide6.QtWidgets import QFileDialog, QMenu

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.records import MemoryDraft
from etos_desktop.ui.settings.memory_dialogs import MemoryEditorDialog
from etos_desktop.ui.settings.memory_models import COLUMNS, MemoryTableModel
from etos_desktop.ui.settings.memory_page import MemoryPage
from tests.helpers.embedders import HashEmbedder
from tests.helpers.qt_async import expect_signal
from tests.helpers.settings_env import MappingTranslator, type_into
from tests.helpers.ui_driver import (
    answer_box,
    button_with_text,
    cancel_file_chooser,
    choose_file,
    click,
    find_dialog,
    type_text,
    visible_dialogs,
    wait_until,
)

ZWSP = "\u200b"
DELETE_WORDS = (
    "It is removed from memory and from the records of what was sent. Conversations keep their "
    "messages; backups keep it until they rotate."
)


def shown_ids(page: MemoryPage) -> list[int]:
    return [
        page.proxy.index(r, 0).data(MemoryTableModel.MEMORY_ROLE).id
        for r in range(page.proxy.rowCount())
    ]


def cell(page: MemoryPage, memory_id: int, column: str) -> Any:
    row = page.model.row_of(memory_id)
    assert row is not None
    return page.model.index(row, COLUMNS.index(column)).data()


async def act(page: MemoryPage, button: Any) -> None:
    await click(button)
    await page.wait_idle()


async def editor() -> MemoryEditorDialog:
    return await find_dialog(MemoryEditorDialog, name="memoryEditor")


async def fill_editor(
    dialog: MemoryEditorDialog,
    *,
    text: str,
    kind: str = "",
    importance: str = "",
    tags: str = "",
    trigger: str = "",
) -> None:
    await type_into(dialog.content_edit, text)
    if kind:
        # A closed combo box picks the item whose name starts with what is typed.
        dialog.kind_combo.setFocus()
        await type_text(dialog.kind_combo, kind, replace=False)
    if importance:
        await type_text(dialog.importance_spin, importance)
    if tags:
        await type_text(dialog.tags_edit, tags)
    if trigger:
        await type_text(dialog.trigger_edit, trigger)


async def press(dialog: Any, button: str) -> None:
    await click(button_with_text(dialog, button))
    await wait_until(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())


# -- add, edit: the real editor (defect 3) -----------------------------------------------------


async def test_add_through_the_editor(page: MemoryPage, engine: MemoryEngine) -> None:
    await click(page.add_button)
    dialog = await editor()
    assert dialog.windowTitle() == "Add a memory"
    await press(dialog, "Cancel")
    await page.wait_idle()
    assert engine.memories(include_inactive=True) == []

    changed = expect_signal(page.memories_changed)
    await click(page.add_button)
    dialog = await editor()
    await fill_editor(
        dialog,
        text="I drink oat milk",
        kind="Pref",
        importance="0.8",
        tags="food",
        trigger="ordering coffee",
    )
    await press(dialog, "Save")
    await asyncio.wait_for(changed, 5)
    await page.wait_idle()
    (memory,) = engine.memories()
    assert (memory.content, memory.kind, memory.importance) == (
        "I drink oat milk",
        "preference",
        0.8,
    )
    assert (memory.tags, memory.trigger_context, memory.source) == (
        ("food",),
        "ordering coffee",
        "manual",
    )
    assert page.selected_ids() == [memory.id]
    assert cell(page, memory.id, "content") == "I drink oat milk"
    assert cell(page, memory.id, "source") == "Added by you"
    assert page.status() == ("ok", f"Saved as #{memory.id}.")


async def test_chinese_text_is_added_as_typed(page: MemoryPage, engine: MemoryEngine) -> None:
    await click(page.add_button)
    dialog = await editor()
    await fill_editor(dialog, text="我每天早上喝咖啡")
    await press(dialog, "Save")
    await page.wait_idle()
    assert [m.content for m in engine.memories()] == ["我每天早上喝咖啡"]


async def test_a_refused_text_is_corrected_in_the_editor_and_nothing_is_saved(
    page: MemoryPage, engine: MemoryEngine
) -> None:
    await click(page.add_button)
    dialog = await editor()
    await fill_editor(dialog, text="my password is hunter2222")
    await click(button_with_text(dialog, "Save"))
    assert dialog.isVisible()  # refused in place: nothing typed is lost
    assert dialog.error_label.isVisible()
    assert "password" in dialog.error_label.text()
    assert dialog.content_edit.toPlainText() == "my password is hunter2222"
    await fill_editor(dialog, text="I prefer short answers")
    assert not dialog.error_label.isVisible()
    await press(dialog, "Save")
    await page.wait_idle()
    assert [m.content for m in engine.memories()] == ["I prefer short answers"]


async def test_edit_through_the_editor_reembeds_the_new_text(
    page: MemoryPage,
    engine: MemoryEngine,
    clock: FakeClock,
    remember: Callable[..., int],
) -> None:
    memory_id = remember("I use npm for JavaScript", "preference", tags=["js"])
    await page.refresh()
    page.select_ids([memory_id])
    clock.advance(minutes=1)
    await click(page.edit_button)
    dialog = await editor()
    assert dialog.windowTitle() == f"Edit memory #{memory_id}"
    assert dialog.content_edit.toPlainText() == "I use npm for JavaScript"
    assert dialog.tags_edit.text() == "js"
    await fill_editor(dialog, text="I use pnpm for JavaScript", tags="js, tools")
    await press(dialog, "Save")
    await page.wait_idle()
    memory = engine.get(memory_id)
    assert memory is not None
    assert memory.content == "I use pnpm for JavaScript"
    assert memory.tags == ("js", "tools")
    assert engine.embedding_status() == (1, 1)
    hit = engine.search("pnpm", mode="vector", apply_floor=False)[0]
    assert hit.text == "I use pnpm for JavaScript"
    assert cell(page, memory_id, "content") == "I use pnpm for JavaScript"
    assert page.status() == ("ok", f"Memory #{memory_id} saved.")

    # Double-click edits too; saving an unchanged editor writes no revision.
    row = page.proxy.mapFromSource(page.model.index(page.model.row_of(memory_id), 1))
    page.table.doubleClicked.emit(row)
    dialog = await editor()
    await press(dialog, "Save")
    await page.wait_idle()
    assert [r.action for r in engine.history(memory_id)] == ["create", "edit"]


# -- archive, delete: the real confirmation -----------------------------------------------------


async def test_bulk_archive_and_restore(
    page: MemoryPage, engine: MemoryEngine, remember: Callable[..., int]
) -> None:
    a = remember("Likes hiking")
    b = remember("Likes swimming")
    c = remember("Likes chess")
    await page.refresh()
    page.select_ids([a, b])
    assert page.archive_button.isEnabled()
    assert not page.restore_button.isEnabled()
    assert not page.edit_button.isEnabled()  # one memory at a time
    await act(page, page.archive_button)
    assert [m.id for m in engine.memories()] == [c]
    assert cell(page, a, "status") == "Archived"
    assert page.status() == ("ok", "Archived 2 memories.")
    assert sorted(page.selected_ids()) == [a, b]
    await act(page, page.restore_button)
    assert sorted(m.id for m in engine.memories()) == [a, b, c]
    assert [r.action for r in engine.history(a)] == ["create", "archive", "restore"]


async def test_delete_confirms_with_what_happens_and_undo_brings_it_back(
    page: MemoryPage, engine: MemoryEngine, remember: Callable[..., int]
) -> None:
    keep = remember("Has a cat named Miso")
    gone = remember("Works at a bakery")
    engine.edit(gone, "Works at a bakery on weekends")
    await page.refresh()
    page.select_ids([gone])
    await click(page.delete_button)
    text = await answer_box("Cancel")
    await page.wait_idle()
    assert engine.get(gone) is not None
    assert text == (
        f"Delete memory #{gone}? {DELETE_WORDS}\n\nYou can undo this only until you close Settings."
    )

    changed = expect_signal(page.memories_changed)
    await click(page.delete_button)
    await answer_box("Delete")
    await asyncio.wait_for(changed, 5)
    await page.wait_idle()
    assert engine.get(gone) is None
    assert page.model.row_of(gone) is None
    assert page.undo_bar.isVisible()
    assert page.undo_available() == 1

    await act(page, page.undo_button)
    back = engine.get(gone)
    assert back is not None
    assert back.content == "Works at a bakery on weekends"
    assert [r.action for r in engine.history(gone)] == ["create", "edit", "undelete"]
    assert not page.undo_bar.isVisible()
    assert page.model.row_of(gone) is not None
    assert page.status() == ("ok", "Brought back 1 memories.")
    assert engine.get(keep) is not None


async def test_undo_ends_when_the_page_closes(
    page: MemoryPage, engine: MemoryEngine, remember: Callable[..., int]
) -> None:
    gone = remember("Works at a bakery")
    await page.refresh()
    page.select_ids([gone])
    await click(page.delete_button)
    await answer_box("Delete")
    await page.wait_idle()
    assert page.undo_available() == 1
    page.close_page()
    assert page.undo_available() == 0
    assert not page.undo_bar.isVisible()
    assert engine.get(gone) is None
    assert [r.action for r in engine.history(gone)] == ["delete"]  # only the tombstone


async def test_clear_all_says_how_many_and_can_be_undone(
    page: MemoryPage, engine: MemoryEngine, populate: Callable[[], dict[str, int]]
) -> None:
    ids = populate()
    await page.refresh()
    page.search_edit.setText("zzz")  # a filter does not limit "delete all"
    page.clear_action.trigger()
    text = await answer_box("Delete all")
    await page.wait_idle()
    assert text.startswith("Delete all 7 memories, active and archived?")
    assert "undo this only until you close Settings" in text
    assert engine.memories(include_inactive=True) == []
    assert page.model.rowCount() == 0
    assert page.undo_available() == 7
    await act(page, page.undo_button)
    after = {m.id: m for m in engine.memories(include_inactive=True)}
    assert set(after) == set(ids.values())
    assert after[ids["old"]].superseded_by == ids["new"]  # links come back too
    assert after[ids["rust"]].archived_at is not None


async def test_an_import_after_delete_all_withdraws_the_undo(
    tmp_path: Path, page: MemoryPage, engine: MemoryEngine, populate: Callable[[], dict[str, int]]
) -> None:
    """Issue 19: Undo pressed after the import brought every memory back a second time."""
    populate()
    await page.refresh()
    path = tmp_path / "m.json"
    page.export_json_action.trigger()
    await choose_file(str(path))
    await page.wait_idle()
    page.clear_action.trigger()
    await answer_box("Delete all")
    await page.wait_idle()
    assert page.undo_bar.isVisible()
    page.import_action.trigger()
    await choose_file(str(path))
    await press(await find_dialog(name="memoryImportPreview"), "Import")
    await page.wait_idle()
    assert page.status() == (
        "ok",
        "Imported: 7 added, 0 updated, 0 skipped. The earlier delete can no longer be undone: "
        "the import changed the memories.",
    )
    assert not page.undo_bar.isVisible()
    assert page.undo_available() == 0
    contents = [m.content for m in engine.memories(include_inactive=True)]
    assert len(contents) == 7
    assert len(set(contents)) == 7


async def test_history_lists_each_change_before_and_after(
    page: MemoryPage, engine: MemoryEngine, clock: FakeClock, remember: Callable[..., int]
) -> None:
    memory_id = remember("Likes green tea")
    clock.advance(hours=1)
    engine.edit(memory_id, f"Likes green{ZWSP} tea <i>without</i> sugar")
    engine.archive(memory_id)
    await page.refresh()
    page.select_ids([memory_id])
    await act(page, page.history_button)
    dialog = page.history_dialog
    assert dialog is not None
    assert dialog.isVisible()
    assert dialog.windowTitle() == f"History of memory #{memory_id}"
    text = dialog.browser.toPlainText()
    assert (
        text.index("Archived by you") < text.index("Edited by you") < text.index("Created by you")
    )
    assert "Likes green tea" in text  # before
    assert r"Likes green\u200b tea <i>without</i> sugar" in text  # after, escaped and literal
    assert "2026-01-01 13:00" in text


# -- export and import: the file chooser and the real preview (defect 3) -------------------------


async def test_export_then_import_into_a_fresh_database(
    tmp_path: Path,
    page: MemoryPage,
    engine: MemoryEngine,
    clock: FakeClock,
    populate: Callable[[], dict[str, int]],
    open_page: Callable[[MemoryAccess, FakeClock], Any],
) -> None:
    populate()
    json_path = tmp_path / "out" / "memories.json"
    md_path = tmp_path / "out" / "memories.md"
    json_path.parent.mkdir()
    page.export_json_action.trigger()
    await cancel_file_chooser()
    await page.wait_idle()
    assert not json_path.exists()
    page.export_json_action.trigger()
    await choose_file(str(json_path))
    await page.wait_idle()
    assert page.status() == ("ok", f"Exported 7 memories to {json_path}.")
    page.export_markdown_action.trigger()
    await choose_file(str(md_path))
    await page.wait_idle()
    document = json.loads(json_path.read_text(encoding="utf-8"))
    assert len(document["memories"]) == 7
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown.startswith("# Memories")
    assert "## Archived and ended" in markdown
    assert "## Preferences" in markdown
    if os.name == "posix":
        assert stat.S_IMODE(json_path.stat().st_mode) == 0o600
        assert stat.S_IMODE(md_path.stat().st_mode) == 0o600
    assert sorted(p.name for p in json_path.parent.iterdir()) == ["memories.json", "memories.md"]

    # A fresh database, another page: the preview, declined; then accepted.
    fresh_clock = FakeClock(clock.now())
    with MemoryEngine.open(
        tmp_path / "fresh.db", embedder=HashEmbedder(), clock=fresh_clock
    ) as fresh:
        fresh_access = MemoryAccess(fresh)
        other = await open_page(fresh_access, fresh_clock)
        other.import_action.trigger()
        await choose_file(str(json_path))
        preview = await find_dialog(name="memoryImportPreview")
        assert preview.summary_label.text() == "7 to add, 0 to update, 0 already here, 0 skipped"
        await press(preview, "Cancel")
        await other.wait_idle()
        assert fresh.memories(include_inactive=True) == []  # declined: nothing written

        changed = expect_signal(other.memories_changed)
        other.import_action.trigger()
        await choose_file(str(json_path))
        await press(await find_dialog(name="memoryImportPreview"), "Import")
        await asyncio.wait_for(changed, 5)
        await other.wait_idle()
        assert other.status() == ("ok", "Imported: 7 added, 0 updated, 0 skipped.")
        assert other.model.rowCount() == 7
        before = sorted(engine.memories(include_inactive=True), key=lambda m: m.id)
        after = sorted(fresh.memories(include_inactive=True), key=lambda m: m.id)
        assert [(m.content, m.kind, m.source, m.tags, m.archived_at is None) for m in before] == [
            (m.content, m.kind, m.source, m.tags, m.archived_at is None) for m in after
        ]
        superseded = next(m for m in after if m.content == "Lives in Berlin")
        assert superseded.superseded_by is not None
        successor = fresh.get(superseded.superseded_by)
        assert successor is not None
        assert successor.content == "Lives in Shanghai"
        other.close_page()
        await other.wait_idle()
        fresh_access.close()


async def test_file_choosers_start_in_the_documents_folder(
    page: MemoryPage, isolated_environment: Path, tmp_path: Path
) -> None:
    documents = tmp_path / "home" / "Documents"
    documents.mkdir()
    page.export_json_action.trigger()
    assert Path(await cancel_file_chooser()) == documents
    await page.wait_idle()
    page.import_action.trigger()
    assert Path(await cancel_file_chooser()) == documents
    await page.wait_idle()


async def test_reimporting_an_export_shows_nothing_to_do(
    tmp_path: Path, page: MemoryPage, populate: Callable[[], dict[str, int]]
) -> None:
    populate()
    path = tmp_path / "m.json"
    page.export_json_action.trigger()
    await choose_file(str(path))
    await page.wait_idle()
    page.import_action.trigger()
    await choose_file(str(path))
    await page.wait_idle()
    assert visible_dialogs() == []  # no preview for nothing
    assert page.status() == ("ok", "Nothing to import: all 7 memories are here already.")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{\x00\x01 not json at all", "it is not a JSON file, or it is damaged"),
        (b"\x00\x01 not json at all", "neither a memory export nor a text list of facts"),
        (b'{"format": "something-else", "memories": []}', "not a memory export of ETOS Desktop"),
        (
            b'{"format": "etos-desktop.memories", "version": 9, "memories": []}',
            "exported by a newer version",
        ),
    ],
)
async def test_a_corrupt_import_says_so_and_changes_nothing(
    tmp_path: Path,
    page: MemoryPage,
    engine: MemoryEngine,
    remember: Callable[..., int],
    content: bytes,
    words: str,
) -> None:
    memory_id = remember("Keeps a diary")
    await page.refresh()
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    page.import_action.trigger()
    await choose_file(str(path))
    await page.wait_idle()
    state, text = page.status()
    assert state == "error"
    assert text.startswith("The memories were not imported.")
    assert words in text
    assert visible_dialogs() == []
    assert [m.id for m in engine.memories(include_inactive=True)] == [memory_id]
    assert page.import_action.isEnabled()  # the page is usable again


async def test_import_preview_lists_invalid_entries(
    tmp_path: Path, page: MemoryPage, engine: MemoryEngine
) -> None:
    path = tmp_path / "mixed.json"
    secret = "sk-" + "Q9w8E7r6T5y4U3i2O1p0"
    path.write_text(
        json.dumps(
            {
                "format": "etos-desktop.memories",
                "version": 1,
                "memories": [{"content": "Plays the cello"}, {"content": f"key {secret}"}],
            }
        ),
        encoding="utf-8",
    )
    page.import_action.trigger()
    await choose_file(str(path))
    preview = await find_dialog(name="memoryImportPreview")
    assert preview.summary_label.text() == "1 to add, 0 to update, 0 already here, 1 skipped"
    details = preview.details.toPlainText()
    assert "Plays the cello" in details
    assert "Entry 2: text looks like a password, key or ID number" in details
    assert secret not in details
    await press(preview, "Import")
    await page.wait_idle()
    assert page.status() == ("ok", "Imported: 1 added, 0 updated, 1 skipped.")
    assert [m.content for m in engine.memories()] == ["Plays the cello"]


# -- failures name what was not done, on this page (defect 4) ---------------------------------


async def test_an_unexpected_failure_says_what_was_not_done_on_the_page(
    page: MemoryPage,
    access: MemoryAccess,
    engine: MemoryEngine,
    ui_guard: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ui_guard.expect("The memory was not added")
    await click(page.add_button)
    dialog = await editor()
    await fill_editor(dialog, text="I drink oat milk")
    access.close()  # the worker pool is gone: saving raises a RuntimeError, a bug's kind of error
    with caplog.at_level(logging.INFO):
        await press(dialog, "Save")
        await page.wait_idle()
    state, text = page.status()
    assert state == "error"
    assert text == (
        "The memory was not added. An unexpected error occurred; the details are in the log file."
    )
    assert page.status_label.isVisible()
    assert "messages are saved" not in text
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1  # logged once, with its traceback
    assert errors[0].exc_info is not None
    assert engine.memories() == []
    assert page.add_button.isEnabled()  # the page is usable again


async def test_an_expected_failure_says_what_was_not_done_and_why(
    page: MemoryPage, engine: MemoryEngine, remember: Callable[..., int]
) -> None:
    memory_id = remember("Likes jazz")
    await page.refresh()
    page.select_ids([memory_id])
    engine.delete(memory_id)  # gone meanwhile (a conversation's Undo, another window…)
    await act(page, page.archive_button)
    assert page.status() == (
        "error",
        f"The memories were not archived. Memory #{memory_id} no longer exists.",
    )


# -- re-embedding and the words for the embedder ------------------------------------------------


class GateEmbedder:
    """An embedder that waits for the test before each batch (a slow model, without sleeping)."""

    key = "gate:16"
    dimension = 16

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._inner = HashEmbedder(16)
        self.gate = threading.Semaphore(0)
        self.entered: asyncio.Queue[int] = asyncio.Queue()

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        self._loop.call_soon_threadsafe(self.entered.put_nowait, len(texts))
        if not self.gate.acquire(timeout=10):
            raise RuntimeError("the test never opened the gate")
        return self._inner.embed(texts)


async def test_reembed_shows_progress_and_can_be_cancelled(
    tmp_path: Path, clock: FakeClock, open_page: Callable[[MemoryAccess, FakeClock], Any]
) -> None:
    with MemoryEngine.open(tmp_path / "r.db", embedder=None, clock=clock) as eng:
        eng.add_many([MemoryDraft(f"memory number {i}") for i in range(70)])
        gate = GateEmbedder(asyncio.get_running_loop())
        eng.set_embedder(gate)
        acc = MemoryAccess(eng)
        page = await open_page(acc, clock)
        assert page.embedding_label.text() == (
            "Matching by meaning: Model “gate”, 16 dimensions · 0 of 70 memories indexed"
        )
        seen: list[tuple[int, int]] = []
        page.reembed_progressed.connect(lambda done, total: seen.append((done, total)))

        await click(page.reembed_button)
        assert await asyncio.wait_for(gate.entered.get(), 5) == 32  # first batch is embedding
        assert page.reembed_progress.isVisible()
        assert page.reembed_cancel_button.isVisible()
        assert not page.reembed_button.isEnabled()
        gate.gate.release()
        await asyncio.wait_for(gate.entered.get(), 5)  # the second batch started
        assert seen == [(0, 70), (32, 70)]
        assert page.reembed_progress.value() == 32
        await click(page.reembed_cancel_button)
        gate.gate.release()
        await page.wait_idle()
        assert seen[-1] == (64, 70)
        assert page.status() == ("warning", "Re-embedding cancelled after 64 memories.")
        assert not page.reembed_progress.isVisible()
        assert eng.embedding_status() == (64, 70)
        assert page.embedding_label.text().endswith("64 of 70 memories indexed")

        gate.gate.release(5)
        await act(page, page.reembed_button)
        assert page.status() == ("ok", "Embedded 6 memories.")
        assert eng.embedding_status() == (70, 70)
        page.close_page()
        await page.wait_idle()
        acc.close()


async def test_reembed_is_off_without_an_embedder(
    tmp_path: Path, clock: FakeClock, open_page: Callable[[MemoryAccess, FakeClock], Any]
) -> None:
    with MemoryEngine.open(tmp_path / "k.db", embedder=None, clock=clock) as eng:
        acc = MemoryAccess(eng)
        page = await open_page(acc, clock)
        assert not page.reembed_button.isEnabled()
        assert page.embedding_label.text() == (
            "Keywords only: no model for matching by meaning is loaded."
        )
        page.close_page()
        await page.wait_idle()
        acc.close()


class NamedEmbedder(HashEmbedder):
    """A stand-in for the app's embedders, identified by their real keys only."""

    def __init__(self, key: str, dimension: int, model: str | None = None) -> None:
        super().__init__(dimension, key)
        if model is not None:
            self.model = model


@pytest.mark.parametrize(
    ("embedder", "words"),
    [
        (NamedEmbedder("use-m3:512", 512), "Built-in model (multilingual), 512 dimensions"),
        (
            NamedEmbedder(
                "openai:http://localhost:11434/v1:bge-m3:latest:1024", 1024, "bge-m3:latest"
            ),
            "“bge-m3:latest” on localhost:11434, 1024 dimensions",
        ),
    ],
)
async def test_the_embedder_in_use_is_said_in_words(
    tmp_path: Path,
    clock: FakeClock,
    open_page: Callable[[MemoryAccess, FakeClock], Any],
    embedder: HashEmbedder,
    words: str,
) -> None:
    with MemoryEngine.open(tmp_path / "e.db", embedder=embedder, clock=clock) as eng:
        eng.save("Likes jazz")
        acc = MemoryAccess(eng)
        page = await open_page(acc, clock)
        assert page.embedding_label.text() == (
            f"Matching by meaning: {words} · 1 of 1 memories indexed"
        )
        assert ":512" not in page.embedding_label.text()
        page.close_page()
        await page.wait_idle()
        acc.close()


# -- the page's conventions ---------------------------------------------------------------------


async def test_a_language_switch_retranslates_the_page(
    page: MemoryPage, populate: Callable[[], dict[str, int]]
) -> None:
    populate()
    await page.refresh()
    translator = MappingTranslator(
        {
            "Archive": "归档",
            "Memory": "记忆",
            "Delete all memories…": "删除全部记忆…",
            "Imported": "导入",
        }
    )
    QCoreApplication.installTranslator(translator)
    try:
        # The application passes LanguageChange to every window and widget.
        await wait_until(lambda: page.archive_button.text() == "归档")
        assert page.clear_action.text() == "删除全部记忆…"
        assert page.model.headerData(1, Qt.Orientation.Horizontal) == "记忆"
        assert "导入" in [page.source_filter.itemText(i) for i in range(page.source_filter.count())]
    finally:
        QCoreApplication.removeTranslator(translator)
    await wait_until(lambda: page.archive_button.text() == "Archive")


async def test_status_lines_take_their_colour_from_the_theme(page: MemoryPage) -> None:
    from etos_desktop.ui.theme import DARK, LIGHT

    page.set_status("error", lambda: "x")
    assert LIGHT.error in page.status_label.styleSheet()
    dark = page.palette()
    dark.setColor(dark.ColorRole.WindowText, Qt.GlobalColor.white)
    page.setPalette(dark)  # sends the page a PaletteChange
    assert DARK.error in page.status_label.styleSheet()


async def test_closing_the_page_while_a_dialog_is_open_ends_the_wait(
    page: MemoryPage, engine: MemoryEngine
) -> None:
    await click(page.add_button)
    dialog = await editor()
    await fill_editor(dialog, text="Never saved")
    page.close_page()
    await page.wait_idle()
    await wait_until(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())
    assert visible_dialogs(QFileDialog) == []
    assert engine.memories() == []


async def test_hidden_columns_are_shown_from_the_header_menu(page: MemoryPage) -> None:
    created = COLUMNS.index("created")
    assert page.table.isColumnHidden(created)
    assert page.table.isColumnHidden(COLUMNS.index("confidence"))
    assert page.table.isColumnHidden(COLUMNS.index("source"))
    assert not page.table.isColumnHidden(COLUMNS.index("kind"))
    page.table.horizontalHeader().customContextMenuRequested.emit(QPoint(10, 5))
    menu = await find_dialog(QMenu)
    titles = {action.text(): action for action in menu.actions()}
    assert "Memory" not in titles  # the text always shows
    assert not titles["Created"].isChecked()
    titles["Created"].trigger()
    assert not page.table.isColumnHidden(created)
    menu.close()
