"""Per-turn retrieval's per-kind caps (issue 9: they were untested)."""

from __future__ import annotations

from datetime import UTC, datetime

from etos_desktop.core.memory.retrieval import cap_by_kind
from etos_desktop.core.memory.search import Hit


def _hits(kinds: str) -> list[Hit]:
    names = {"e": "episode", "i": "insight", "f": "fact", "p": "preference"}
    return [
        Hit(
            id=n,
            score=1.0 - n / 100,
            parts={},
            text=f"memory {n}",
            kind=names[k],
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        for n, k in enumerate(kinds, start=1)
    ]


def test_at_most_two_episodes_and_two_insights_the_rest_in_rank_order() -> None:
    kept = cap_by_kind(_hits("eeeiiifpf"), 5)
    assert [h.id for h in kept] == [1, 2, 4, 5, 7]


def test_uncapped_kinds_fill_up_to_k() -> None:
    assert [h.id for h in cap_by_kind(_hits("fpfpfpf"), 5)] == [1, 2, 3, 4, 5]
    assert [h.id for h in cap_by_kind(_hits("eeee"), 5)] == [1, 2]
    assert cap_by_kind([], 5) == ()
