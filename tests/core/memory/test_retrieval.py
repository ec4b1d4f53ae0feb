"""Per-turn retrieval's per-kind caps (issue 9: they were untested) and the dates of its lines."""

from __future__ import annotations

from datetime import UTC, datetime

from etos_desktop.core.memory.records import Memory
from etos_desktop.core.memory.retrieval import (
    cap_by_kind,
    memory_block,
    memory_dates,
    trace_memories,
)
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


def _memory(hit: Hit, valid_from: datetime, updated_at: datetime) -> Memory:
    return Memory(
        id=hit.id,
        content=hit.text,
        kind=hit.kind,
        source="user_statement",
        importance=0.5,
        confidence=1.0,
        tags=(),
        trigger_context=None,
        valid_from=valid_from,
        valid_until=None,
        superseded_by=None,
        archived_at=None,
        created_at=hit.created_at,
        updated_at=updated_at,
    )


def test_a_memory_line_shows_since_when_it_holds_and_a_later_edit() -> None:
    plain, restated, edited = _hits("fpp")[:3]
    saved = datetime(2026, 1, 1, tzinfo=UTC)
    memories = {
        plain.id: _memory(plain, saved, saved),
        # A restatement merged into it: it holds from then on.
        restated.id: _memory(restated, datetime(2026, 2, 3, 9, tzinfo=UTC), saved.replace(month=2)),
        # Edited in Settings later: the line says so.
        edited.id: _memory(edited, saved, datetime(2026, 3, 4, 9, tzinfo=UTC)),
    }
    block = memory_block([plain, restated, edited], "en", memories)
    assert block is not None
    assert block.content.splitlines() == [
        "- #1 (fact, 2026-01-01, confidence 1.0) memory 1",
        "- #2 (preference, 2026-02-03, confidence 1.0) memory 2",
        "- #3 (preference, 2026-01-01, edited 2026-03-04, confidence 1.0) memory 3",
    ]
    assert "the one with the later date holds" in block.label
    zh = memory_block([plain, restated, edited], "zh", memories)
    assert zh is not None
    assert (
        zh.content.splitlines()[2]
        == "- #3（偏好，2026-01-01，2026-03-04 修改，可信度 1.0）memory 3"
    )
    assert "以日期较新的为准" in zh.label
    # Without the stored memory, the saving day.
    assert memory_dates(plain) == ("2026-01-01", None)
    assert [m.date for m in trace_memories([restated], memories)] == ["2026-02-03"]
