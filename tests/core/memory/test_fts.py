"""The full-text statements: ranked matching when the best-ranked rows are not active."""

from __future__ import annotations

from datetime import timedelta

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory import fts
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
