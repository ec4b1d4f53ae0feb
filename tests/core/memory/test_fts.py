"""The full-text statements: ranked matching when the best-ranked rows are not active."""

from __future__ import annotations

from datetime import timedelta

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory import fts, store
from etos_desktop.core.memory.engine import MemoryEngine


def test_matches_skip_inactive_rows_even_when_they_rank_best(
    lexical: MemoryEngine, clock: FakeClock
) -> None:
    """The ranking reads ``2 × limit`` rows first; when too many of them are archived or
    expired, every match is ranked, so the active ones still come back, best first."""
    # Shorter texts rank higher for the same term (BM25 length normalisation).
    best = lexical.add_many([f"walnut {i}" for i in range(5)])
    rest = lexical.add_many([f"walnut and a much longer sentence number {i}" for i in range(3)])
    for memory_id in best[:4]:
        lexical.archive(memory_id)
    lexical.edit(best[4], valid_until=clock.now() - timedelta(seconds=1))
    now = clock.now()

    found = lexical._call(lambda s: fts.matches(s, ["walnut"], now=now, limit=2))
    assert [memory_id for memory_id, _ in found] == rest[:2]
    found = lexical._call(lambda s: fts.matches(s, ["walnut"], now=now, limit=3))
    assert sorted(memory_id for memory_id, _ in found) == rest
    assert all("walnut" in body for _, body in found)


def test_matches_by_id_read_only_active_bodies(lexical: MemoryEngine, clock: FakeClock) -> None:
    ids = lexical.add_many(["a walnut tree", "a walnut cake", "no nuts here"])
    lexical.archive(ids[1])
    now = clock.now()
    found = lexical._call(
        lambda s: fts.matches(s, ["walnut"], now=now, limit=10, only_ids=[ids[1], ids[2], ids[0]])
    )
    assert sorted(memory_id for memory_id, _ in found) == [ids[0], ids[2]]


def test_ranked_candidates_read_down_the_ranking_past_inactive_rows(
    lexical: MemoryEngine, clock: FakeClock
) -> None:
    """The rows of the best ``limit`` active matches, in BM25 order, when some of the best are
    archived or expired but enough active ones are among the best ``2 × limit``."""
    # Each text is longer than the one before: BM25 ranks them in this order.
    ids = lexical.add_many(["walnut" + " and more" * i for i in range(8)])
    lexical.archive(ids[0])
    lexical.archive(ids[2])
    lexical.edit(ids[3], valid_until=clock.now() - timedelta(seconds=1))
    now = clock.now()

    ranked = lexical._call(lambda s: fts.ranked_candidates(s, ["walnut"], now=now, limit=4))
    assert [row.id for row, _ in ranked] == [ids[1], ids[4], ids[5], ids[6]]
    assert [row.text for row, _ in ranked] == ["walnut" + " and more" * i for i in (1, 4, 5, 6)]
    assert all(body.startswith("walnut and more") for _, body in ranked)
    assert all(row.created_at.tzinfo is not None for row, _ in ranked)
    # The same memories as the plain matches, which tell nothing but ids and bodies.
    plain = lexical._call(lambda s: fts.matches(s, ["walnut"], now=now, limit=4))
    assert plain == [(row.id, body) for row, body in ranked]


def test_term_statistics_are_the_frequencies_and_the_row_count(lexical: MemoryEngine) -> None:
    lexical.add_many(["a walnut tree", "a walnut cake", "no nuts here"])
    lexical.archive(lexical.add_many(["walnut bread"])[0])
    frequencies, total = lexical._call(
        lambda s: fts.term_statistics(s, ["walnut", "cake", "absent"])
    )
    assert frequencies == {"walnut": 3, "cake": 1}
    assert total == 4
    assert frequencies == lexical._call(
        lambda s: fts.document_frequencies(s, ["walnut", "cake", "absent"])
    )


def test_candidates_with_bodies_reads_active_rows_and_their_indexed_text(
    lexical: MemoryEngine,
) -> None:
    ids = lexical.add_many(["Walnuts, please!", "a walnut cake", "no nuts here"])
    lexical.archive(ids[1])
    now = lexical._now()
    found = lexical._call(lambda s: store.candidates_with_bodies(s, [ids[2], ids[1], ids[0]], now))
    assert [(row.id, row.text, body) for row, body in found] == [
        (ids[0], "Walnuts, please!", "walnut pleas"),
        (ids[2], "no nuts here", "no nut here"),
    ]
    assert [row for row, _ in found] == lexical._call(
        lambda s: store.candidates(s, [ids[0], ids[1], ids[2]], now)
    )
