"""The summary list in SQL: windows, which summary is current, filters, sorts and counts."""

from __future__ import annotations

from typing import Any

from etos_desktop.core.storage.tables import SessionSummaryRow
from etos_desktop.core.storage.windows import ListOrder
from etos_desktop.core.summaries.listing import ORDER_KEYS, SummaryFilters, accepts
from etos_desktop.core.summaries.records import Summary
from tests.core.summaries.conftest import Store


async def write(store: Store, conversation_id: int, text: str) -> int:
    summary = await store.access.write_summary(
        conversation_id=conversation_id,
        content=text,
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    store.clock.advance(minutes=1)
    return summary.id


async def every_window(
    store: Store, filters: SummaryFilters, order: ListOrder, limit: int
) -> list[Summary]:
    out: list[Summary] = []
    cursor = None
    while True:
        window = await store.access.window(filters, order, after=cursor, limit=limit)
        out += window.records
        if window.cursor is None:
            return out
        cursor = window.cursor


async def filled(store: Store) -> dict[str, Any]:
    """Three conversations with histories, an archived summary and an imported orphan."""
    trip = await store.conversation(1, "Kyoto trip")
    cooking = await store.conversation(1, "晚饭")
    ids = [await write(store, trip, f"Kyoto plan, version {n}") for n in range(5)]
    ids += [await write(store, cooking, f"用户做了咖喱 {n}") for n in range(3)]
    archived = await write(store, cooking, "The user cooked curry, archived")
    await store.access.archive([archived])

    def orphan(session: Any) -> int:
        row = SessionSummaryRow(
            conversation_id=None,
            conversation_title="Imported trip",
            content="An imported summary about Kyoto.",
            created_at=store.clock.now(),
            updated_at=store.clock.now(),
            source="imported",
        )
        session.add(row)
        session.commit()
        return int(row.id or 0)

    imported = await store.db.run(orphan)
    await store.repo.update_conversation(trip, title="Kyoto trip 2026")
    return {"trip": trip, "cooking": cooking, "archived": archived, "imported": imported}


async def test_windows_agree_with_the_whole_list(store: Store) -> None:
    made = await filled(store)
    everything = {s.id: s for s in await store.access.summaries()}
    for key in sorted(ORDER_KEYS):
        for descending in (True, False):
            rows = await every_window(store, SummaryFilters(), ListOrder(key, descending), 3)
            assert [s.id for s in rows].count(rows[0].id) == 1
            assert {s.id for s in rows} == set(everything), key
            for row in rows:
                assert row == everything[row.id]  # current and the title now, as list_all says
    newest = await every_window(store, SummaryFilters(), ListOrder("time", True), 4)
    assert [s.id for s in newest] == list(everything)  # list_all is newest first
    assert everything[made["imported"]].current
    assert everything[made["imported"]].conversation_title == "Imported trip"
    statuses = await every_window(store, SummaryFilters(), ListOrder("status", False), 2)
    assert [s.current for s in statuses[:3]] == [True, True, True]
    assert statuses[-1].id == made["archived"]


async def test_filters_and_counts(store: Store) -> None:
    made = await filled(store)

    everything = await store.access.summaries()

    async def ids(**filters: Any) -> set[int]:
        rows = await every_window(store, SummaryFilters(**filters), ListOrder("time"), 100)
        listed = set(await store.access.matching_ids(SummaryFilters(**filters)))
        assert listed == {s.id for s in rows}
        # The same rule over loaded summaries (a list held whole filters with it).
        assert listed == {s.id for s in everything if accepts(s, SummaryFilters(**filters))}
        return listed

    assert len(await ids(text="KYOTO")) == 6  # five versions and the imported one
    assert await ids(text="2026") == {s.id for s in everything if s.conversation_id == made["trip"]}
    assert len(await ids(text="咖喱")) == 3
    assert await ids(status="archived") == {made["archived"]}
    current = await ids(status="current")
    assert current == {s.id for s in everything if s.current}
    assert len(current) == 3
    assert await ids(conversation=made["cooking"], status="archived") == {made["archived"]}
    counts = await store.access.counts(SummaryFilters(text="curry"))
    assert (counts.total, counts.matching, counts.lead, counts.archivable) == (10, 1, 3, 0)
    assert await store.access.matching_ids(SummaryFilters(), archivable=False) == [made["archived"]]
    first = await store.access.window(
        SummaryFilters(text="kyoto"), ListOrder("time"), limit=2, with_counts=True
    )
    assert first.counts is not None
    assert first.counts.matching == 6
    assert len(first.records) == 2
    assert first.cursor is not None
