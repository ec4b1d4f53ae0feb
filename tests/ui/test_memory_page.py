"""The Memory page against a real engine on a temporary database, on the qasync loop.

Every test is ``async def`` (tests/ui/conftest.py): the page's work runs as tasks that the
tests await with ``page.wait_idle()`` or through signals, never with a nested Qt event loop.
Dialogs are answered by injected coroutines (editor, file choosers, import preview) and by
replacing ``dialogs.confirm``.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy
import pytest
from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTranslator

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.records import MemoryDraft
from etos_desktop.core.memory.transfer import ImportPreview
from etos_desktop.core.providers.registry import ProviderRegistry
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.paths import settings_path
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui import dialogs
from etos_desktop.ui.memory_page import (
    COLUMNS,
    MemoryFields,
    MemoryFilterModel,
    MemoryPage,
    MemoryTableModel,
)
from etos_desktop.ui.settings_dialog import SettingsDialog
from tests.helpers.embedders import HashEmbedder
from tests.helpers.qt_async import expect_signal

ZWSP = "\u200b"


class Editor:
    """Answers the memory editor: each call takes the next queued result."""

    def __init__(self) -> None:
        self.answers: list[MemoryFields | None] = []
        self.calls: list[tuple[MemoryFields, str]] = []

    async def __call__(self, _parent: Any, fields: MemoryFields, title: str) -> MemoryFields | None:
        self.calls.append((fields, title))
        return self.answers.pop(0)


class Files:
    """Answers the file choosers."""

    def __init__(self) -> None:
        self.save: list[str | None] = []
        self.open: list[str | None] = []
        self.captions: list[str] = []

    async def save_path(self, _parent: Any, caption: str, _filter: str, _name: str) -> str | None:
        self.captions.append(caption)
        return self.save.pop(0)

    async def open_path(self, _parent: Any, caption: str, _filter: str, _name: str) -> str | None:
        self.captions.append(caption)
        return self.open.pop(0)


class Previews:
    """Answers the import preview and keeps what it was shown."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.shown: list[ImportPreview] = []

    async def __call__(self, _parent: Any, preview: ImportPreview) -> bool:
        self.shown.append(preview)
        return self.answer


@pytest.fixture(autouse=True)
def no_task_errors(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[BaseException]]:
    """Fail the test if a task of the page ended with an exception (they go to the hook)."""
    errors: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda _t, exc, _tb: errors.append(exc))
    yield errors
    assert errors == []


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def engine(tmp_path: Path, clock: FakeClock) -> Iterator[MemoryEngine]:
    eng = MemoryEngine.open(tmp_path / "memory.db", embedder=HashEmbedder(), clock=clock)
    yield eng
    eng.close()


@pytest.fixture
def access(engine: MemoryEngine) -> Iterator[MemoryAccess]:
    acc = MemoryAccess(engine)
    yield acc
    acc.close()


@pytest.fixture
def settings(isolated_environment: Path) -> SettingsStore:
    store = SettingsStore(settings_path(isolated_environment))
    store.load()
    return store


@pytest.fixture
def editor() -> Editor:
    return Editor()


@pytest.fixture
def files() -> Files:
    return Files()


@pytest.fixture
def previews() -> Previews:
    return Previews()


class Confirms(list[tuple[str, str, str]]):
    """Every confirmation asked, as (title, text, action); answered from ``answers`` (default yes)."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[bool] = []

    async def __call__(
        self, _parent: Any, title: str, text: str, action: str, *, destructive: bool
    ) -> bool:
        assert destructive
        self.append((title, text, action))
        return self.answers.pop(0) if self.answers else True


@pytest.fixture
def confirms(monkeypatch: pytest.MonkeyPatch) -> Confirms:
    asked = Confirms()
    monkeypatch.setattr(dialogs, "confirm", asked)
    return asked


async def open_page(
    qtbot: Any,
    access: MemoryAccess,
    settings: SettingsStore,
    clock: FakeClock,
    editor: Editor,
    files: Files,
    previews: Previews,
) -> MemoryPage:
    page = MemoryPage(
        access,
        settings,
        clock=clock,
        edit_memory=editor,
        save_path=files.save_path,
        open_path=files.open_path,
        preview_import=previews,
    )
    qtbot.addWidget(page)
    page.resize(900, 600)
    refreshed = expect_signal(page.refreshed)
    page.show()  # every visit reloads from the database
    await asyncio.wait_for(refreshed, 10)
    await page.wait_idle()
    return page


@pytest.fixture
async def page(
    qtbot: Any,
    access: MemoryAccess,
    settings: SettingsStore,
    clock: FakeClock,
    editor: Editor,
    files: Files,
    previews: Previews,
) -> MemoryPage:
    return await open_page(qtbot, access, settings, clock, editor, files, previews)


def populate(engine: MemoryEngine, clock: FakeClock) -> dict[str, int]:
    ids = {"pnpm": engine.save("I use pnpm for JavaScript projects", "preference", tags=["js"]).id}
    clock.advance(minutes=1)
    ids["lily"] = engine.save("我的女儿叫莉莉", "fact", source="user_statement", confidence=0.4).id
    clock.advance(minutes=1)
    ids["old"] = engine.save("Lives in Berlin", "fact").id
    clock.advance(minutes=1)
    ids["new"] = engine.supersede(ids["old"], "Lives in Shanghai")
    ids["rust"] = engine.save("Was learning Rust", "episode").id
    engine.archive(ids["rust"])
    ids["hidden"] = engine.save(f"Likes{ZWSP} <b>tea</b>", "preference").id
    ids["trip"] = engine.save("Is in Japan this week", "episode", valid_until=clock.now()).id
    clock.advance(minutes=1)
    return ids


def cell(
    page: MemoryPage, memory_id: int, column: str, role: int = Qt.ItemDataRole.DisplayRole
) -> Any:
    row = page.model.row_of(memory_id)
    assert row is not None
    return page.model.index(row, COLUMNS.index(column)).data(role)


def shown_ids(page: MemoryPage) -> list[int]:
    return [
        page.proxy.index(r, 0).data(MemoryTableModel.MEMORY_ROLE).id
        for r in range(page.proxy.rowCount())
    ]


async def act(page: MemoryPage, button: Any) -> None:
    button.click()
    await page.wait_idle()


# -- the table --------------------------------------------------------------------------------


async def test_the_table_model_passes_the_model_tester(
    qtmodeltester, engine: MemoryEngine, clock: FakeClock
) -> None:
    populate(engine, clock)
    model = MemoryTableModel(clock)
    qtmodeltester.check(model, force_py=True)  # empty
    model.set_memories(engine.memories(include_inactive=True))  # a reset under the tester
    assert model.rowCount() == 7
    model.retranslate()
    model.set_memories(engine.memories())


async def test_the_filter_model_passes_the_model_tester(
    qtmodeltester, engine: MemoryEngine, clock: FakeClock
) -> None:
    populate(engine, clock)
    model = MemoryTableModel(clock)
    model.set_memories(engine.memories(include_inactive=True))
    proxy = MemoryFilterModel(clock)
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy, force_py=True)
    proxy.set_filters(text="li", status="active")
    proxy.sort(COLUMNS.index("created"), Qt.SortOrder.AscendingOrder)
    assert proxy.rowCount() == 2
    proxy.set_filters(text="", kind="episode", status="all")
    assert proxy.rowCount() == 2
    model.set_memories(engine.memories())


async def test_cells_show_each_column_with_invisible_characters_escaped(
    page: MemoryPage, engine: MemoryEngine, clock: FakeClock
) -> None:
    ids = populate(engine, clock)
    engine.mark_accessed([ids["pnpm"]])
    await page.refresh()
    assert cell(page, ids["pnpm"], "id") == str(ids["pnpm"])
    assert cell(page, ids["pnpm"], "kind") == "Preference"
    assert cell(page, ids["pnpm"], "source") == "Added by you"
    assert cell(page, ids["lily"], "source") == "Said in chat"
    assert cell(page, ids["lily"], "confidence") == "0.40"
    assert cell(page, ids["pnpm"], "created") == "2026-01-01"
    assert cell(page, ids["lily"], "last_used") == "—"
    assert cell(page, ids["pnpm"], "last_used") == "2026-01-01"
    assert "used 1 time" in cell(page, ids["pnpm"], "last_used", Qt.ItemDataRole.ToolTipRole)
    assert cell(page, ids["pnpm"], "status") == "Active"
    assert cell(page, ids["rust"], "status") == "Archived"
    assert cell(page, ids["old"], "status") == f"Superseded by #{ids['new']}"
    assert cell(page, ids["trip"], "status") == "Expired"
    assert cell(page, ids["hidden"], "content") == r"Likes\u200b <b>tea</b>"
    tooltip = cell(page, ids["hidden"], "content", Qt.ItemDataRole.ToolTipRole)
    assert r"Likes\u200b &lt;b&gt;tea&lt;/b&gt;" in tooltip
    assert ZWSP not in tooltip
    assert "js" in cell(page, ids["pnpm"], "content", Qt.ItemDataRole.ToolTipRole)
    assert page.count_label.text() == "7 memories · 4 active"


async def test_filters_and_search(page: MemoryPage, engine: MemoryEngine, clock: FakeClock) -> None:
    ids = populate(engine, clock)
    await page.refresh()
    page.search_edit.setText("LIVES IN")  # substring, case-insensitive, archived included
    assert sorted(shown_ids(page)) == sorted([ids["old"], ids["new"]])
    assert page.count_label.text() == "Showing 2 of 7"
    page.search_edit.setText("莉莉")
    assert shown_ids(page) == [ids["lily"]]
    page.search_edit.setText("js")  # tags are searched too
    assert shown_ids(page) == [ids["pnpm"]]
    page.search_edit.setText(f"#{ids['rust']}")
    assert shown_ids(page) == [ids["rust"]]
    page.search_edit.clear()

    page.kind_filter.setCurrentIndex(page.kind_filter.findData("episode"))
    assert sorted(shown_ids(page)) == sorted([ids["rust"], ids["trip"]])
    page.status_filter.setCurrentIndex(page.status_filter.findData("active"))
    assert shown_ids(page) == []
    page.kind_filter.setCurrentIndex(0)
    assert sorted(shown_ids(page)) == sorted([ids["pnpm"], ids["lily"], ids["new"], ids["hidden"]])
    page.status_filter.setCurrentIndex(page.status_filter.findData("inactive"))
    assert sorted(shown_ids(page)) == sorted([ids["old"], ids["rust"], ids["trip"]])
    page.status_filter.setCurrentIndex(0)
    page.source_filter.setCurrentIndex(page.source_filter.findData("user_statement"))
    assert shown_ids(page) == [ids["lily"]]


async def test_columns_sort(page: MemoryPage, engine: MemoryEngine, clock: FakeClock) -> None:
    ids = populate(engine, clock)
    await page.refresh()
    assert shown_ids(page) == sorted(ids.values(), reverse=True)  # newest first
    page.table.sortByColumn(COLUMNS.index("confidence"), Qt.SortOrder.AscendingOrder)
    assert shown_ids(page)[0] == ids["lily"]
    page.table.sortByColumn(COLUMNS.index("content"), Qt.SortOrder.AscendingOrder)
    assert shown_ids(page)[0] == ids["pnpm"]  # "I use…" before "Is in…", "Likes…"
    page.table.sortByColumn(COLUMNS.index("status"), Qt.SortOrder.DescendingOrder)
    assert shown_ids(page)[0] == ids["old"]  # superseded last in ascending order


# -- actions ----------------------------------------------------------------------------------


async def test_add_through_the_editor(
    page: MemoryPage, engine: MemoryEngine, editor: Editor
) -> None:
    editor.answers = [
        None,  # cancelled: nothing happens
        MemoryFields("I drink oat milk", "preference", 0.8, ("food",), "ordering coffee"),
    ]
    await act(page, page.add_button)
    assert engine.memories(include_inactive=True) == []
    changed = expect_signal(page.memories_changed)
    await act(page, page.add_button)
    await asyncio.wait_for(changed, 5)
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
    assert editor.calls[1] == (MemoryFields(), "Add a memory")
    assert page.selected_ids() == [memory.id]
    assert page.status() == ("ok", f"Saved as #{memory.id}.")


async def test_a_refused_memory_says_why_and_saves_nothing(
    page: MemoryPage, engine: MemoryEngine, editor: Editor
) -> None:
    editor.answers = [MemoryFields("my password is hunter2222")]
    await act(page, page.add_button)
    state, text = page.status()
    assert state == "error"
    assert "password" in text
    assert engine.memories(include_inactive=True) == []


async def test_edit_reembeds_when_the_text_changes(
    page: MemoryPage, engine: MemoryEngine, editor: Editor, clock: FakeClock
) -> None:
    memory_id = engine.save("I use npm for JavaScript", "preference", tags=["js"]).id
    await page.refresh()
    page.select_ids([memory_id])
    clock.advance(minutes=1)
    editor.answers = [
        MemoryFields("I use pnpm for JavaScript", "preference", 0.9, ("js", "tools"), None)
    ]
    await act(page, page.edit_button)
    fields, title = editor.calls[0]
    assert fields == MemoryFields("I use npm for JavaScript", "preference", 0.5, ("js",), None)
    assert title == f"Edit memory #{memory_id}"
    memory = engine.get(memory_id)
    assert memory.content == "I use pnpm for JavaScript"
    assert memory.tags == ("js", "tools")
    assert engine.embedding_status() == (1, 1)
    hit = engine.search("pnpm", mode="vector", apply_floor=False)[0]
    assert hit.text == "I use pnpm for JavaScript"
    assert cell(page, memory_id, "content") == "I use pnpm for JavaScript"
    # Double-click edits too; an unchanged editor writes no revision.
    editor.answers = [MemoryFields.of(memory)]
    row = page.proxy.mapFromSource(page.model.index(page.model.row_of(memory_id), 1))
    page.table.doubleClicked.emit(row)
    await page.wait_idle()
    assert [r.action for r in engine.history(memory_id)] == ["create", "edit"]


async def test_bulk_archive_and_restore(
    page: MemoryPage, engine: MemoryEngine, clock: FakeClock
) -> None:
    a = engine.save("Likes hiking").id
    b = engine.save("Likes swimming").id
    c = engine.save("Likes chess").id
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
    assert page.restore_button.isEnabled()
    await act(page, page.restore_button)
    assert sorted(m.id for m in engine.memories()) == [a, b, c]
    assert [r.action for r in engine.history(a)] == ["create", "archive", "restore"]


async def test_delete_confirms_and_undo_brings_it_back(
    page: MemoryPage, engine: MemoryEngine, confirms: Confirms
) -> None:
    keep = engine.save("Has a cat named Miso").id
    gone = engine.save("Works at a bakery").id
    engine.edit(gone, "Works at a bakery on weekends")
    await page.refresh()
    page.select_ids([gone])
    confirms.answers.append(False)
    await act(page, page.delete_button)
    assert engine.get(gone) is not None
    title, text, action = confirms[0]
    assert (title, action) == ("Delete memories", "Delete")
    assert f"#{gone}" in text
    assert "undo this only until you close Settings" in text

    changed = expect_signal(page.memories_changed)
    await act(page, page.delete_button)
    await asyncio.wait_for(changed, 5)
    assert engine.get(gone) is None
    assert page.model.row_of(gone) is None
    assert page.undo_bar.isVisible()
    assert page.undo_label.text().startswith("Deleted 1 memories.")
    assert page.undo_available() == 1

    await act(page, page.undo_button)
    back = engine.get(gone)
    assert back.content == "Works at a bakery on weekends"
    assert [r.action for r in engine.history(gone)] == ["create", "edit", "undelete"]
    assert not page.undo_bar.isVisible()
    assert page.model.row_of(gone) is not None
    assert page.status() == ("ok", "Brought back 1 memories.")
    assert engine.get(keep) is not None


async def test_undo_ends_when_the_panel_closes(
    page: MemoryPage, engine: MemoryEngine, confirms: Confirms
) -> None:
    gone = engine.save("Works at a bakery").id
    await page.refresh()
    page.select_ids([gone])
    await act(page, page.delete_button)
    assert page.undo_available() == 1
    page.close_panel()
    assert page.undo_available() == 0
    assert not page.undo_bar.isVisible()
    assert engine.get(gone) is None
    assert [r.action for r in engine.history(gone)] == ["delete"]  # only the tombstone


async def test_clear_all_says_how_many_and_can_be_undone(
    page: MemoryPage,
    engine: MemoryEngine,
    clock: FakeClock,
    confirms: Confirms,
) -> None:
    ids = populate(engine, clock)
    await page.refresh()
    page.search_edit.setText("zzz")  # a filter does not limit "delete all"
    page.clear_action.trigger()
    await page.wait_idle()
    title, text, action = confirms[0]
    assert (title, action) == ("Delete all memories", "Delete all")
    assert "Delete all 7 memories, active and archived?" in text
    assert "undo this only until you close Settings" in text
    assert engine.memories(include_inactive=True) == []
    assert page.model.rowCount() == 0
    assert page.undo_available() == 7
    await act(page, page.undo_button)
    after = {m.id: m for m in engine.memories(include_inactive=True)}
    assert set(after) == set(ids.values())
    assert after[ids["old"]].superseded_by == ids["new"]  # links come back too
    assert after[ids["rust"]].archived_at is not None


async def test_history_lists_each_change_before_and_after(
    page: MemoryPage, engine: MemoryEngine, clock: FakeClock
) -> None:
    memory_id = engine.save("Likes green tea").id
    clock.advance(hours=1)
    engine.edit(memory_id, f"Likes green{ZWSP} tea <i>without</i> sugar")
    engine.archive(memory_id)
    await page.refresh()
    page.select_ids([memory_id])
    page.history_button.click()
    await page.wait_idle()
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


# -- export and import ------------------------------------------------------------------------


async def test_export_then_import_into_a_fresh_database(
    qtbot,
    tmp_path: Path,
    page: MemoryPage,
    engine: MemoryEngine,
    clock: FakeClock,
    settings: SettingsStore,
    editor: Editor,
    files: Files,
) -> None:
    ids = populate(engine, clock)
    json_path = tmp_path / "out" / "memories.json"
    md_path = tmp_path / "out" / "memories.md"
    json_path.parent.mkdir()
    files.save = [None, str(json_path), str(md_path)]
    page.export_json_action.trigger()  # cancelled in the file dialog
    await page.wait_idle()
    assert not json_path.exists()
    page.export_json_action.trigger()
    await page.wait_idle()
    assert page.status() == ("ok", f"Exported 7 memories to {json_path}.")
    page.export_markdown_action.trigger()
    await page.wait_idle()
    document = json.loads(json_path.read_text(encoding="utf-8"))
    assert len(document["memories"]) == 7
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown.startswith("# Memories")
    assert "## Archived and ended" in markdown
    assert "## Preferences" in markdown
    if os.name == "posix":
        assert stat.S_IMODE(json_path.stat().st_mode) == 0o600

    # A fresh database, another page: the preview, then the import.
    fresh_clock = FakeClock(clock.now())
    with MemoryEngine.open(
        tmp_path / "fresh.db", embedder=HashEmbedder(), clock=fresh_clock
    ) as fresh:
        fresh_access = MemoryAccess(fresh)
        previews = Previews(answer=False)
        other = await open_page(qtbot, fresh_access, settings, fresh_clock, editor, files, previews)
        files.open = [str(json_path), str(json_path)]
        other.import_action.trigger()
        await other.wait_idle()
        assert len(previews.shown[0].to_add) == 7
        assert fresh.memories(include_inactive=True) == []  # declined: nothing written
        previews.answer = True
        changed = expect_signal(other.memories_changed)
        other.import_action.trigger()
        await other.wait_idle()
        await asyncio.wait_for(changed, 5)
        assert other.status() == ("ok", "Imported: 7 added, 0 updated, 0 skipped.")
        assert other.model.rowCount() == 7
        before = sorted(engine.memories(include_inactive=True), key=lambda m: m.id)
        after = sorted(fresh.memories(include_inactive=True), key=lambda m: m.id)
        assert [(m.content, m.kind, m.source, m.tags, m.archived_at is None) for m in before] == [
            (m.content, m.kind, m.source, m.tags, m.archived_at is None) for m in after
        ]
        superseded = next(m for m in after if m.content == "Lives in Berlin")
        assert fresh.get(superseded.superseded_by).content == "Lives in Shanghai"
        other.close_panel()
        fresh_access.close()
    assert ids


async def test_reimporting_an_export_shows_nothing_to_do(
    tmp_path: Path,
    page: MemoryPage,
    engine: MemoryEngine,
    clock: FakeClock,
    files: Files,
    previews: Previews,
) -> None:
    populate(engine, clock)
    path = tmp_path / "m.json"
    files.save = [str(path)]
    files.open = [str(path)]
    page.export_json_action.trigger()
    await page.wait_idle()
    page.import_action.trigger()
    await page.wait_idle()
    assert previews.shown == []
    assert page.status() == ("ok", "Nothing to import: all 7 memories are here already.")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\x00\x01 not json at all", "it is not a JSON file, or it is damaged"),
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
    files: Files,
    previews: Previews,
    content: bytes,
    words: str,
) -> None:
    memory_id = engine.save("Keeps a diary").id
    await page.refresh()
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    files.open = [str(path)]
    page.import_action.trigger()
    await page.wait_idle()
    state, text = page.status()
    assert state == "error"
    assert words in text
    assert previews.shown == []
    assert [m.id for m in engine.memories(include_inactive=True)] == [memory_id]
    assert page.import_action.isEnabled()  # the page is usable again


async def test_import_preview_lists_invalid_entries(
    tmp_path: Path, page: MemoryPage, engine: MemoryEngine, files: Files, previews: Previews
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
    files.open = [str(path)]
    page.import_action.trigger()
    await page.wait_idle()
    (preview,) = previews.shown
    assert [e.content for e in preview.to_add] == ["Plays the cello"]
    assert [(i.index, i.reason) for i in preview.invalid] == [(1, "secret")]
    assert page.status() == ("ok", "Imported: 1 added, 0 updated, 1 skipped.")
    assert [m.content for m in engine.memories()] == ["Plays the cello"]


async def test_the_preview_dialog_shows_what_happens(
    qtbot, engine: MemoryEngine, clock: FakeClock
) -> None:
    from etos_desktop.core.memory.transfer import parse_import
    from etos_desktop.ui.memory_dialogs import ImportPreviewDialog

    engine.save("Plays the cello")
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
    preview = engine.preview_import(parse_import(text, now=clock.now(), max_content_chars=100))
    dialog = ImportPreviewDialog(preview)
    qtbot.addWidget(dialog)
    assert dialog.summary_label.text() == "1 to add, 1 to update, 0 already here, 1 skipped"
    details = dialog.details.toPlainText()
    assert r"New <b>one</b>\u200b" in details
    assert "plays the CELLO (Text, Importance)" in details
    assert "Entry 3: no text" in details
    assert dialog.import_button.isEnabled()


# -- re-embedding -----------------------------------------------------------------------------


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
    tmp_path: Path,
    qtbot,
    settings: SettingsStore,
    clock: FakeClock,
    editor: Editor,
    files: Files,
    previews: Previews,
) -> None:
    with MemoryEngine.open(tmp_path / "r.db", embedder=None, clock=clock) as eng:
        eng.add_many([MemoryDraft(f"memory number {i}") for i in range(70)])
        gate = GateEmbedder(asyncio.get_running_loop())
        eng.set_embedder(gate)
        acc = MemoryAccess(eng)
        page = await open_page(qtbot, acc, settings, clock, editor, files, previews)
        assert page.embedding_label.text() == "Active embedder: gate:16 · 0 of 70 memories embedded"
        seen: list[tuple[int, int]] = []
        page.reembed_progressed.connect(lambda done, total: seen.append((done, total)))

        page.reembed_button.click()
        assert await asyncio.wait_for(gate.entered.get(), 5) == 32  # first batch is embedding
        assert page.reembed_progress.isVisible()
        assert page.reembed_cancel_button.isVisible()
        assert not page.reembed_button.isEnabled()
        gate.gate.release()
        await asyncio.wait_for(gate.entered.get(), 5)  # the second batch started
        assert seen == [(0, 70), (32, 70)]
        assert page.reembed_progress.value() == 32
        page.reembed_cancel_button.click()
        gate.gate.release()
        await page.wait_idle()
        assert seen[-1] == (64, 70)
        assert page.status() == ("warning", "Re-embedding cancelled after 64 memories.")
        assert not page.reembed_progress.isVisible()
        assert eng.embedding_status() == (64, 70)
        assert page.embedding_label.text().endswith("64 of 70 memories embedded")

        gate.gate.release(5)
        page.reembed_button.click()
        await page.wait_idle()
        assert page.status() == ("ok", "Embedded 6 memories.")
        assert eng.embedding_status() == (70, 70)
        page.close_panel()
        acc.close()


async def test_reembed_is_off_without_an_embedder(
    tmp_path: Path, qtbot, settings, clock, editor, files, previews
) -> None:
    with MemoryEngine.open(tmp_path / "k.db", embedder=None, clock=clock) as eng:
        acc = MemoryAccess(eng)
        page = await open_page(qtbot, acc, settings, clock, editor, files, previews)
        assert not page.reembed_button.isEnabled()
        assert "keywords only" in page.embedding_label.text()
        page.close_panel()
        acc.close()


# -- settings and the dialog ------------------------------------------------------------------


async def _no_servers(_candidates: Sequence[str]) -> list[str]:
    return []


async def test_the_settings_dialog_shows_the_page_and_saves_its_settings(
    qtbot,
    isolated_environment: Path,
    settings: SettingsStore,
    access: MemoryAccess,
    engine: MemoryEngine,
    confirms: Confirms,
) -> None:
    secrets = SecretStore(isolated_environment)
    registry = ProviderRegistry(settings, secrets, {}, lambda _c, _k: None)  # type: ignore[arg-type]
    without = SettingsDialog(
        settings, secrets, registry, probe=_no_servers, local_candidates=(), env={}
    )
    qtbot.addWidget(without)
    with pytest.raises(ValueError, match="memory"):
        without.show_page("memory")
    without.done(0)

    memory_id = engine.save("Likes jazz").id
    dialog = SettingsDialog(
        settings, secrets, registry, probe=_no_servers, local_candidates=(), env={}, memory=access
    )
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.memory_page
    assert page is not None
    refreshed = expect_signal(page.refreshed)
    dialog.show_page("memory")
    await asyncio.wait_for(refreshed, 5)
    assert dialog.current_page_name() == "memory"
    assert dialog.page_list.item(3).text() == "Memory"
    assert page.model.rowCount() == 1
    assert not dialog.is_modified()

    page.enabled_check.setChecked(False)
    page.embedder_combo.setCurrentIndex(page.embedder_combo.findData("keywords"))
    page.approval_combo.setCurrentIndex(page.approval_combo.findData("ask"))
    page.top_k_spin.setValue(9)
    assert dialog.is_modified()
    assert dialog.status_label.text() == "Unsaved changes"
    assert await dialog.save()
    reloaded = SettingsStore(settings_path(isolated_environment))
    reloaded.load()
    assert reloaded.get("memory.enabled") is False
    assert reloaded.get("memory.embedder") == "keywords"
    assert reloaded.get("memory.approval") == "ask"
    assert reloaded.get("memory.retrieval_top_k") == 9
    assert not dialog.is_modified()

    # Undo lives only as long as the dialog.
    page.select_ids([memory_id])
    await act(page, page.delete_button)
    assert page.undo_available() == 1
    dialog.done(0)
    assert page.undo_available() == 0
    await dialog.wait_idle()
    await registry.aclose()


CHINESE = {"Archive": "归档", "Memory": "记忆", "Delete all memories…": "删除全部记忆…"}


class _Chinese(QTranslator):
    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        return CHINESE.get(source, "")

    def isEmpty(self) -> bool:  # noqa: N802 (Qt override)
        return False


async def test_language_change_retranslates(page: MemoryPage) -> None:
    translator = _Chinese()
    QCoreApplication.installTranslator(translator)
    try:
        QCoreApplication.sendEvent(page, QEvent(QEvent.Type.LanguageChange))
        assert page.archive_button.text() == "归档"
        assert page.clear_action.text() == "删除全部记忆…"
        assert page.model.headerData(1, Qt.Orientation.Horizontal) == "记忆"
    finally:
        QCoreApplication.removeTranslator(translator)
    QCoreApplication.sendEvent(page, QEvent(QEvent.Type.LanguageChange))
    assert page.archive_button.text() == "Archive"
