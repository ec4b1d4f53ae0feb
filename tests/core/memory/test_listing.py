"""The memory list in SQL: windows by keyset, filters, sorts, counts, and bulk archive/restore."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory import listing
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.errors import MemoryLimitReached, MemoryNotFound
from etos_desktop.core.memory.listing import MemoryFilters
from etos_desktop.core.memory.records import Memory
from etos_desktop.core.storage.windows import ListCounts, ListOrder, ListWindow


def read(engine: MemoryEngine, fn: Callable[[Any, Any], Any]) -> Any:
    now = engine._now()
    return engine._call(lambda session: fn(session, now))


def every_window(
    engine: MemoryEngine, filters: MemoryFilters, order: ListOrder, limit: int
) -> list[list[int]]:
    """The ids of each window, read one after the other until the last."""
    windows: list[list[int]] = []
    cursor = None
    while True:
        window: ListWindow[Memory] = read(
            engine,
            lambda s, now, c=cursor: listing.window(s, filters, order, now, after=c, limit=limit),
        )
        windows.append([m.id for m in window.records])
        if window.cursor is None:
            return windows
        cursor = window.cursor


@pytest.fixture
def store(lexical: MemoryEngine, clock: FakeClock) -> dict[str, int]:
    """450 memories in both languages, dated, some archived, ended, superseded, used."""
    start = clock.now()
    drafts = []
    for i in range(450):
        text = f"Memory {i:03d}: " + ("the user likes green tea" if i % 3 == 0 else "用户喜欢咖啡")
        drafts.append(
            {
                "text": text,
                "kind": ("fact", "preference", "episode")[i % 3],
                "source": ("manual", "imported")[i % 2],
                "created_at": start - timedelta(days=(i * 7) % 300, minutes=i),
                "tags": ["Straße"] if i % 10 == 0 else [],
                "trigger_context": "when ordering drinks" if i % 25 == 0 else None,
            }
        )
    # Letters that case-fold beyond ASCII: "ß" → "ss", the Kelvin sign → "k", "ﬁ" → "fi".
    drafts += [
        {"text": "Lives on the Hauptstraße", "trigger_context": "İstanbul trips"},
        {"text": "The lab freezer holds 300 \u212a"},
        {"text": "Keeps a \ufb01le cabinet", "tags": ["Ordnung"]},
    ]
    ids = lexical.add_many(drafts, batch_size=100)
    lexical.archive(ids[1])
    lexical.mark_accessed([ids[2], ids[4]])
    ended = lexical.save("Is in Japan this week", "episode", valid_until=start)
    clock.advance(minutes=1)
    old = lexical.save("Lives in Berlin").id
    new = lexical.supersede(old, "Lives in Shanghai")
    return {"first": ids[0], "archived": ids[1], "ended": ended.id, "old": old, "new": new}


def test_windows_cover_every_match_once_in_every_order(
    lexical: MemoryEngine, store: dict[str, int]
) -> None:
    everything = {m.id for m in lexical.memories(include_inactive=True)}
    for key in sorted(listing.ORDER_KEYS):
        for descending in (True, False):
            order = ListOrder(key, descending, ranks=("preference", "fact"))
            windows = every_window(lexical, MemoryFilters(), order, limit=100)
            ids = [i for w in windows for i in w]
            assert len(ids) == len(set(ids)) == len(everything), (key, descending)
            assert set(ids) == everything
            assert all(len(w) == 100 for w in windows[:-1])


def test_windows_follow_the_columns_order(lexical: MemoryEngine, store: dict[str, int]) -> None:
    memories = {m.id: m for m in lexical.memories(include_inactive=True)}

    def ordered(key: str, descending: bool, **options: Any) -> list[Memory]:
        windows = every_window(lexical, MemoryFilters(), ListOrder(key, descending, **options), 50)
        return [memories[i] for w in windows for i in w]

    newest = ordered("created", True)
    assert [m.created_at for m in newest] == sorted((m.created_at for m in newest), reverse=True)
    assert [m.id for m in ordered("id", True)] == sorted(memories, reverse=True)
    kinds = [m.kind for m in ordered("kind", False, ranks=("preference", "fact", "episode"))]
    assert kinds == sorted(kinds, key=("preference", "fact", "episode").index)
    texts = [m.content.casefold() for m in ordered("content", False)]
    assert texts == sorted(texts)
    used = ordered("last_used", True)
    assert {m.id for m in used[:2]} == {m.id for m in memories.values() if m.access_count}
    status = [m.id for m in ordered("status", True)]
    # Superseded last when ascending, so first when descending; then archived, ended, active.
    assert status[0] == store["old"]
    assert status[1] == store["archived"]
    assert status[2] == store["ended"]


def test_the_sql_filters_and_the_python_rule_agree(
    lexical: MemoryEngine, store: dict[str, int]
) -> None:
    memories = lexical.memories(include_inactive=True)
    now = lexical._now()

    def python(filters: MemoryFilters) -> set[int]:
        # The same rule over loaded memories (a list held whole filters with it), checked
        # against the page's rule as it was: a substring of text, tags and trigger.
        out = {m.id for m in memories if listing.accepts(m, filters, now)}
        text = filters.text.strip().casefold()
        for m in memories:
            searched = " ".join([m.content, " ".join(m.tags), m.trigger_context or ""])
            if text and not text.startswith("#") and m.id in out:
                assert text in searched.casefold()
        return out

    cases = [
        MemoryFilters(),
        MemoryFilters(text="GREEN TEA"),
        MemoryFilters(text="咖啡", status="active"),
        MemoryFilters(text="strasse"),  # a tag, matched as str.casefold matches it
        MemoryFilters(text="ordering DRINKS"),
        MemoryFilters(kind="episode", status="inactive"),
        MemoryFilters(source="imported", kind="fact"),
        MemoryFilters(text="lives in", status="inactive"),
        MemoryFilters(text="100%"),
        MemoryFilters(text="memory_0"),
        MemoryFilters(text="STRASSE memory"),  # across a folded tag? no: a separate part
        MemoryFilters(text="straße"),  # not ASCII, not caseless: decided in Python
        MemoryFilters(text="喜欢咖啡"),  # caseless: looked for as it is
        MemoryFilters(text="咖啡 "),
        MemoryFilters(text="HAUPTSTRASSE"),
        MemoryFilters(text="300 k"),  # the Kelvin sign folds to "k"
        MemoryFilters(text="file cabinet"),
        MemoryFilters(text="istanbul"),
        MemoryFilters(text="i̇stanbul"),
    ]
    for filters in cases:
        sql = {i for w in every_window(lexical, filters, ListOrder("id"), 100) for i in w}
        assert sql == python(filters), filters
        ids = read(lexical, lambda s, now, f=filters: listing.matching_ids(s, f, now))
        assert set(ids) == sql
    for needle in ("hauptstrasse", "300 k", "file cabinet", "istanbul"):
        found = read(
            lexical, lambda s, now, n=needle: listing.matching_ids(s, MemoryFilters(text=n), now)
        )
        assert len(found) == (0 if needle == "istanbul" else 1), needle  # "İ" folds to "i̇"
    named = MemoryFilters(text=f"#{store['first']}")
    assert read(lexical, lambda s, now: listing.matching_ids(s, named, now)) == [store["first"]]


def test_counts_come_from_sql(lexical: MemoryEngine, store: dict[str, int]) -> None:
    total = len(lexical.memories(include_inactive=True))
    active = lexical.count_active()
    tea = MemoryFilters(text="green tea")
    counts = read(lexical, lambda s, now: listing.counts(s, tea, now))
    assert counts == ListCounts(total=total, matching=150, lead=active, archivable=150)
    folded = MemoryFilters(text="hauptstrasse")
    assert read(lexical, lambda s, now: listing.counts(s, folded, now)).matching == 1
    inactive = MemoryFilters(status="inactive")
    counts = read(lexical, lambda s, now: listing.counts(s, inactive, now))
    assert (counts.matching, counts.archivable, counts.restorable) == (3, 0, 3)
    archivable = read(
        lexical, lambda s, now: listing.matching_ids(s, MemoryFilters(), now, archivable=True)
    )
    assert len(archivable) == active
    window = read(
        lexical,
        lambda s, now: listing.window(s, tea, ListOrder("id"), now, limit=10, with_counts=True),
    )
    assert window.counts == read(lexical, lambda s, now: listing.counts(s, tea, now))
    assert len(window.records) == 10


def test_a_row_saved_or_deleted_between_windows_moves_no_other_row(
    lexical: MemoryEngine, store: dict[str, int]
) -> None:
    order = ListOrder("id", descending=True)
    before = sorted((m.id for m in lexical.memories(include_inactive=True)), reverse=True)
    first = read(lexical, lambda s, now: listing.window(s, MemoryFilters(), order, now, limit=50))
    assert [m.id for m in first.records] == before[:50]
    # A new memory goes before the cursor and one of the first window goes: an offset would
    # now skip a row; the keyset starts right after the last row shown.
    lexical.save("A new memory after the first window")
    lexical.delete(before[10])
    after = read(
        lexical,
        lambda s, now: listing.window(
            s, MemoryFilters(), order, now, after=first.cursor, limit=1000
        ),
    )
    assert [m.id for m in after.records] == before[50:]
    assert after.cursor is None


def test_unknown_columns_are_refused(lexical: MemoryEngine) -> None:
    with pytest.raises(ValueError, match="does not sort by"):
        listing.sort_key(ListOrder("nonsense"), lexical._now())


def test_archive_many_then_undo_restores_exactly_those(
    lexical: MemoryEngine, store: dict[str, int], clock: FakeClock
) -> None:
    tea = read(lexical, lambda s, now: listing.matching_ids(s, MemoryFilters(text="tea"), now))
    soon = lexical.save(
        "Is at a conference until Friday", valid_until=clock.now() + timedelta(days=3)
    )
    with pytest.raises(MemoryNotFound):
        lexical.archive_many([*tea, 10**9])  # one is gone: none is archived
    assert (
        read(lexical, lambda s, now: listing.counts(s, MemoryFilters(text="tea"), now)).archivable
        == 150
    )
    archived = lexical.archive_many([*tea, soon.id, store["archived"]])
    assert archived == [*tea, soon.id]  # the one archived before is skipped
    assert (
        read(lexical, lambda s, now: listing.counts(s, MemoryFilters(text="tea"), now)).archivable
        == 0
    )
    assert [r.action for r in lexical.history(tea[0])][-1] == "archive"
    assert lexical.history(tea[0])[-1].after["archived_at"] is not None

    restored = lexical.restore_many(archived, archive_only=True)
    assert restored == archived
    back = lexical.get(soon.id)
    assert back is not None
    assert back.valid_until is not None  # the undo of an archive keeps the expiry
    assert back.is_active(clock.now())
    still = lexical.get(store["archived"])
    assert still is not None
    assert still.archived_at is not None  # archived before: not the undo's business
    assert [r.action for r in lexical.history(tea[0])][-2:] == ["archive", "restore"]


def test_restore_many_restores_like_restore_and_keeps_the_limit(
    tmp_path: Any, clock: FakeClock
) -> None:
    engine = MemoryEngine.open(tmp_path / "limit.db", clock=clock, max_active=3)
    try:
        a, b, _c = (engine.save(t).id for t in ("One", "Two", "Three"))
        assert engine.archive_many([a, b]) == [a, b]
        old = engine.save("Lives in Berlin").id
        new = engine.supersede(old, "Lives in Shanghai")
        assert engine.restore_many([a]) == [a]
        with pytest.raises(MemoryLimitReached):
            engine.restore_many([b, old])  # five would be active
        restored_b, ended = engine.get(b), engine.get(old)
        assert restored_b is not None
        assert restored_b.archived_at is not None  # none was restored
        assert ended is not None
        assert ended.superseded_by == new
        engine.archive_many([a])
        assert engine.restore_many([old]) == [old]  # as restore does: the link is cleared
        back = engine.get(old)
        assert back is not None
        assert (back.superseded_by, back.valid_until, back.archived_at) == (None, None, None)
        assert engine.history(old)[-1].action == "restore"
    finally:
        engine.close()
