"""Lists that fetch as they scroll (issue 21): the Memory and Summaries pages over big stores.

(And the profile's history, which is read whole — a version a day at most — and laid out a
batch of entries at a time.)

A store of 3,000 memories (English and Chinese, dated, a few archived) is loaded with
``add_many`` (no embedder) into a real database; the real Memory page shows it. The tests count
the rows the model holds and the windows it read from the database, scroll the real table,
type into the real filter box, press Ctrl+A in the table and click the real buttons.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtTest import QTest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.listing import MemoryFilters
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import (
    ConversationRow,
    ProfileRevisionRow,
    SessionSummaryRow,
    UserProfileRow,
)
from etos_desktop.core.storage.windows import PAGE_SIZE
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.transfer.service import TransferService
from etos_desktop.ui.settings.memory_models import COLUMNS, MemoryTableModel
from etos_desktop.ui.settings.memory_page import MemoryPage
from etos_desktop.ui.settings.profile_page import ProfilePage
from etos_desktop.ui.settings.summaries_page import SummariesPage
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import answer_box, click, type_text

STORE_SIZE = 3000
#: Every memory whose number ends in 7 mentions tea: 300 of them.
TEA = "green tea"
START = datetime(2026, 1, 1, 12, tzinfo=UTC)


def _texts() -> list[dict[str, Any]]:
    drafts = []
    for i in range(STORE_SIZE):
        if i % 10 == 7:
            text = f"Memory {i:04d}: the user drinks {TEA} every morning before work"
        elif i % 2:
            text = f"记忆 {i:04d}：用户周末常去图书馆看书，喜欢历史和地理。"
        else:
            text = f"Memory {i:04d}: the user keeps a garden with tomatoes and basil"
        drafts.append(
            {
                "text": text,
                "kind": ("fact", "preference", "episode")[i % 3],
                "created_at": START - timedelta(days=i % 500, minutes=i),
            }
        )
    return drafts


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with the 3,000 memories, built once and copied for each test."""
    path = tmp_path_factory.mktemp("big") / "memory.db"
    with MemoryEngine.open(path, clock=FakeClock(START), max_active=10**6) as engine:
        ids = engine.add_many(_texts(), batch_size=1000)
        # Ten tea memories archived before the tests: Undo must leave them archived.
        engine.archive_many([memory_id for memory_id in ids if memory_id % 10 == 8][:10])
    return path


@pytest.fixture
def big(tmp_path: Path, template: Path) -> Iterator[tuple[MemoryEngine, MemoryAccess]]:
    path = tmp_path / "memory.db"
    shutil.copy(template, path)
    engine = MemoryEngine.open(path, clock=FakeClock(START), max_active=10**6)
    access = MemoryAccess(engine)
    yield engine, access
    access.close()
    engine.close()


@pytest.fixture
async def page(
    qtbot: Any, settings: SettingsStore, big: tuple[MemoryEngine, MemoryAccess]
) -> AsyncIterator[MemoryPage]:
    _engine, access = big
    shown = MemoryPage(access, settings, transfer=TransferService(access), clock=FakeClock(START))
    qtbot.addWidget(shown)
    shown.resize(900, 600)
    refreshed = expect_signal(shown.refreshed)
    shown.show()
    await asyncio.wait_for(refreshed, 10)
    await shown.wait_idle()
    yield shown
    if shiboken6.isValid(shown):
        shown.close_page()
        await shown.wait_idle()


def tea_ids(engine: MemoryEngine) -> set[int]:
    return {m.id for m in engine.memories(include_inactive=True) if TEA in m.content}


def shown_ids(page: MemoryPage) -> list[int]:
    return [
        page.proxy.index(r, 0).data(MemoryTableModel.MEMORY_ROLE).id
        for r in range(page.proxy.rowCount())
    ]


async def scroll_to_end(page: MemoryPage) -> None:
    bar = page.table.verticalScrollBar()
    while page.model.canFetchMore(QModelIndex()) or page.model.reading():
        bar.setValue(bar.maximum())
        await asyncio.sleep(0.005)
    await page.wait_idle()


async def test_the_first_rows_show_without_reading_every_memory(page: MemoryPage) -> None:
    assert page.model.rowCount() == PAGE_SIZE
    assert page.model.canFetchMore(QModelIndex())
    assert page.model.windows_read == 1
    assert page.count_label.text() == "3000 memories · 2990 active"  # counted in SQL
    # Newest first, as the table says: the last memory saved is the first row.
    assert shown_ids(page)[:3] == [STORE_SIZE, STORE_SIZE - 1, STORE_SIZE - 2]
    assert page.table.isSortingEnabled()


async def test_scrolling_to_the_end_fetches_the_rest_once(page: MemoryPage) -> None:
    await scroll_to_end(page)
    ids = shown_ids(page)
    assert len(ids) == len(set(ids)) == STORE_SIZE
    assert ids == sorted(ids, reverse=True)
    assert page.model.windows_read == STORE_SIZE // PAGE_SIZE
    assert not page.model.canFetchMore(QModelIndex())


@pytest.fixture
def kept() -> Iterator[list[Any]]:
    """Widgets kept alive until after the model tester's teardown (it disconnects from them)."""
    widgets: list[Any] = []
    yield widgets
    for widget in widgets:
        widget.deleteLater()


async def test_the_model_passes_the_model_tester_while_fetching(
    kept: list[Any], qtmodeltester: Any, tmp_path: Path, settings: SettingsStore
) -> None:
    clock = FakeClock(START)
    with MemoryEngine.open(tmp_path / "m.db", clock=clock) as engine:
        engine.add_many(_texts()[:450], batch_size=450)
        access = MemoryAccess(engine)
        page = MemoryPage(access, settings, transfer=TransferService(access), clock=clock)
        kept.append(page)
        refreshed = expect_signal(page.refreshed)
        page.show()
        await asyncio.wait_for(refreshed, 10)
        qtmodeltester.check(page.model, force_py=True)  # it asks for more rows too
        await page.wait_idle()
        await scroll_to_end(page)
        assert page.model.rowCount() == 450
        page.proxy.set_filters(text="tea")
        await page.wait_idle()
        page.proxy.sort(COLUMNS.index("content"), Qt.SortOrder.AscendingOrder)
        await page.wait_idle()
        assert page.model.rowCount() == 45
        page.close_page()
        await page.wait_idle()
        page.hide()
        access.close()


async def test_a_typed_filter_narrows_in_sql_once_per_pause(
    page: MemoryPage, big: tuple[MemoryEngine, MemoryAccess]
) -> None:
    engine, _access = big
    before = page.model.windows_read
    await type_text(page.search_edit, "GREEN TEA")
    await page.wait_idle()
    assert page.model.windows_read == before + 1  # nine keys, one query
    expected = tea_ids(engine)
    assert page.count_label.text() == f"Showing {len(expected)} of {STORE_SIZE}"
    assert page.model.rowCount() == PAGE_SIZE  # still a window: 300 match
    await scroll_to_end(page)
    assert set(shown_ids(page)) == expected
    page.kind_filter.setCurrentIndex(page.kind_filter.findData("episode"))
    await page.wait_idle()
    episodes = {m.id for m in engine.memories(include_inactive=True) if m.kind == "episode"}
    assert set(shown_ids(page)) == expected & episodes
    assert page.count_label.text() == f"Showing {len(expected & episodes)} of {STORE_SIZE}"
    page.status_filter.setCurrentIndex(page.status_filter.findData("inactive"))
    await page.wait_idle()
    assert page.count_label.text().startswith("Showing ")
    archived = {m.id for m in engine.memories(include_inactive=True) if m.archived_at}
    assert set(shown_ids(page)) == expected & episodes & archived


async def test_a_clicked_column_sorts_every_memory_in_sql(
    page: MemoryPage, big: tuple[MemoryEngine, MemoryAccess]
) -> None:
    engine, _access = big
    header = page.table.horizontalHeader()
    column = COLUMNS.index("created")
    page.table.setColumnHidden(column, False)
    reads = page.model.windows_read
    where = QPoint(header.sectionViewportPosition(column) + 5, header.height() // 2)
    QTest.mouseClick(
        header.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, where
    )
    await page.wait_idle()
    assert header.sortIndicatorSection() == column
    assert page.model.windows_read == reads + 1
    descending = header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    memories = sorted(
        engine.memories(include_inactive=True),
        key=lambda m: (m.created_at, m.id),
        reverse=descending,
    )
    # The first window is the first of all 3,000 in that order, not of the 200 fetched.
    assert shown_ids(page) == [m.id for m in memories[:PAGE_SIZE]]
    await scroll_to_end(page)
    assert shown_ids(page) == [m.id for m in memories]


async def test_select_all_then_archive_archives_every_match_and_undo_restores_them(
    page: MemoryPage, big: tuple[MemoryEngine, MemoryAccess]
) -> None:
    engine, _access = big
    await type_text(page.search_edit, TEA)
    await page.wait_idle()
    expected = tea_ids(engine)
    before = {m.id for m in engine.memories(include_inactive=True) if m.archived_at}
    active_tea = expected - before
    assert (len(expected), len(active_tea)) == (300, 290)
    assert page.model.rowCount() == PAGE_SIZE  # 100 of them not fetched
    page.table.setFocus()
    QTest.keyClick(page.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert page.every_row_selected()
    assert page.count_label.text() == f"All 300 selected · Showing 300 of {STORE_SIZE}"
    assert page.archive_button.isEnabled()
    await click(page.archive_button)
    await page.wait_idle()
    archived = {m.id for m in engine.memories(include_inactive=True) if m.archived_at}
    assert archived == before | active_tea  # the 100 never fetched too
    assert page.status() == ("ok", "Archived 290 memories.")
    assert page.undo_bar.isVisible()
    assert page.undo_label.text() == "Archived 290 memories."
    assert page.undo_available() == 290
    assert page.every_row_selected()  # the list read again still has every row selected

    await click(page.undo_button)
    await page.wait_idle()
    after = {m.id for m in engine.memories(include_inactive=True) if m.archived_at}
    assert after == before  # exactly those: the ten archived before stay archived
    assert page.status() == ("ok", "Restored 290 memories.")
    assert not page.undo_bar.isVisible()
    assert [r.action for r in engine.history(max(active_tea))][-2:] == ["archive", "restore"]


async def test_select_all_then_delete_confirms_every_match_and_undo_brings_them_back(
    page: MemoryPage, big: tuple[MemoryEngine, MemoryAccess]
) -> None:
    engine, _access = big
    await type_text(page.search_edit, TEA)
    await page.wait_idle()
    expected = tea_ids(engine)
    page.table.setFocus()
    QTest.keyClick(page.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    await click(page.delete_button)
    text = await answer_box("Delete")
    await page.wait_idle()
    assert text.startswith(f"Delete {len(expected)} selected memories?")
    left = {m.id for m in engine.memories(include_inactive=True)}
    assert left.isdisjoint(expected)
    assert len(left) == STORE_SIZE - len(expected)
    assert page.count_label.text() == f"Showing 0 of {len(left)}"
    assert page.undo_available() == len(expected)
    await click(page.undo_button)
    await page.wait_idle()
    assert tea_ids(engine) == expected
    assert page.status() == ("ok", f"Brought back {len(expected)} memories.")


async def test_delete_all_counts_in_sql(page: MemoryPage, big: tuple[MemoryEngine, Any]) -> None:
    engine, _access = big
    page.clear_action.trigger()
    text = await answer_box("Cancel")
    await page.wait_idle()
    assert text.startswith(f"Delete all {STORE_SIZE} memories, active and archived?")
    assert len(engine.memories(include_inactive=True)) == STORE_SIZE


async def test_a_shrunk_store_is_held_whole_and_filtered_in_place(
    page: MemoryPage, big: tuple[MemoryEngine, MemoryAccess]
) -> None:
    engine, access = big
    keep = sorted(tea_ids(engine))[:50]
    doomed = [m.id for m in engine.memories(include_inactive=True) if m.id not in set(keep)]
    engine.delete_many(doomed)
    await page.refresh()
    assert page.model.holds_everything()
    assert page.model.rowCount() == 50
    reads = page.model.windows_read
    await type_text(page.search_edit, "memory 00")
    # Held whole: narrowed at once, without a query.
    assert shown_ids(page) == [i for i in sorted(keep, reverse=True) if i <= 100]
    assert page.model.windows_read == reads
    assert await access.matching_ids(MemoryFilters(text="memory 00")) == sorted(shown_ids(page))


# -- the Summaries page ---------------------------------------------------------------------


async def test_the_summaries_page_fetches_as_it_scrolls_and_archives_every_match(
    qtbot: Any, tmp_path: Path, settings: SettingsStore
) -> None:
    clock = FakeClock(START)
    db = Database(tmp_path / "etos.db", clock=clock)
    db.open()

    def fill(session: Any) -> None:
        for c in range(30):
            row = ConversationRow(title=f"Trip {c}", created_at=START, updated_at=START)
            session.add(row)
            session.flush()
            for n in range(20):
                moment = START + timedelta(minutes=c * 20 + n)
                session.add(
                    SessionSummaryRow(
                        conversation_id=row.id,
                        conversation_title=row.title,
                        content=f"The user planned trip {c}, version {n}"
                        + (" to Kyoto" if c % 3 == 0 else ""),
                        created_at=moment,
                        updated_at=moment,
                    )
                )
        session.commit()

    db.call(fill)
    summaries = SummaryAccess(db, clock=clock)
    page = SummariesPage(summaries, settings, clock=clock)
    qtbot.addWidget(page)
    page.resize(900, 640)
    refreshed = expect_signal(page.refreshed)
    page.show()
    await asyncio.wait_for(refreshed, 10)
    await page.wait_idle()
    try:
        assert page.model.rowCount() == PAGE_SIZE
        assert page.count_label.text() == "600 summaries · 30 current"
        await type_text(page.search_edit, "kyoto")
        await page.wait_idle()
        assert page.count_label.text() == "Showing 200 of 600"
        assert page.model.canFetchMore(QModelIndex()) is False  # exactly one window
        page.status_filter.setCurrentIndex(page.status_filter.findData("current"))
        await page.wait_idle()
        assert page.count_label.text() == "Showing 10 of 600"
        page.status_filter.setCurrentIndex(0)
        page.search_edit.clear()
        await page.wait_idle()
        page.table.setFocus()
        QTest.keyClick(page.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        await click(page.archive_button)
        await page.wait_idle()
        assert page.status() == ("ok", "Archived 600 summaries.")
        assert await summaries.for_injection(None, 5) == []
        await click(page.undo_button)
        await page.wait_idle()
        assert len(await summaries.for_injection(None, 50)) == 30
        assert page.count_label.text() == "All 600 selected · 600 summaries · 30 current"
    finally:
        page.close_page()
        await page.wait_idle()
        summaries.close()
        db.close()


# -- the profile's history ------------------------------------------------------------------


async def test_a_long_profile_history_numbers_and_compares_every_version(
    qtbot: Any, tmp_path: Path, settings: SettingsStore
) -> None:
    db = Database(tmp_path / "etos.db", clock=FakeClock(START))
    db.open()

    def fill(session: Any) -> None:
        last = 0
        for day in range(400):
            row = ProfileRevisionRow(
                created_at=START + timedelta(days=day),
                source="restored" if day == 399 else "scheduled",
                content=f"## Identity\n- Mia, day {day}",
                restored_from=3 if day == 399 else None,
            )
            session.add(row)
            session.flush()
            last = int(row.id or 0)
        session.merge(UserProfileRow(id=1, content="## Identity\n- Mia, day 2", revision_id=last))
        session.commit()

    db.call(fill)
    access = ProfileAccess(db)
    page = ProfilePage(access, settings)
    qtbot.addWidget(page)
    page.show()
    await page.refresh()
    try:
        revisions = page.revisions()
        assert len(revisions) == 400
        newest, oldest = revisions[0], revisions[-1]
        assert page.version_number(newest) == 400
        assert page.version_number(oldest) == 1
        assert page.source_text(newest) == "Restored from #3"
        # The version before the current one is selected; the oldest compares with nothing.
        assert page.selected_revision() == revisions[1]
        page.compare_combo.setCurrentIndex(page.compare_combo.findData("previous"))
        page.select_revision(oldest.id)
        assert ("+", "- Mia, day 0") in page.diff()
        page.select_revision(revisions[200].id)
        assert page.diff() == [
            (" ", "## Identity"),
            ("-", "- Mia, day 198"),
            ("+", "- Mia, day 199"),
        ]
    finally:
        page.close_page()
        await page.wait_idle()
        db.close()
