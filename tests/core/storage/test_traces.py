"""Erasing deleted memories' texts from stored context traces, on traces the real code builds."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from etos_desktop.core.context.assembler import ContextInput, ContextTrace, assemble_context
from etos_desktop.core.memory.retrieval import memory_block, trace_memories
from etos_desktop.core.memory.search import Hit
from etos_desktop.core.storage import traces

WHEN = datetime(2026, 3, 1, tzinfo=UTC)


def _hit(memory_id: int, text: str, kind: str = "preference") -> Hit:
    return Hit(
        id=memory_id,
        score=0.5,
        parts={"vector": 0.4, "eligible_vector": 1.0},
        text=text,
        kind=kind,
        created_at=WHEN,
        confidence=0.9,
    )


def _trace_json(hits: list[Hit], lang: str) -> str:
    block = memory_block(hits, lang)  # type: ignore[arg-type]
    assembled = assemble_context(
        ContextInput(
            system_prompt="You are a companion.",
            history=[],
            current={"role": "user", "content": "how do I install things?"},
            model="m",
            context_window=8000,
            max_output_tokens=500,
            memory_block=block,
            language=lang,  # type: ignore[arg-type]
        )
    )
    trace = dataclasses.replace(assembled.trace, memories=trace_memories(hits))
    return trace.to_json()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_deleted_memorys_text_leaves_the_trace_and_comes_back_on_undo(lang: str) -> None:
    hits = [_hit(3, "Uses pnpm for   JavaScript\nprojects"), _hit(12, "我每天早上喝咖啡", "fact")]
    original = _trace_json(hits, lang)
    assert traces.cited_memory_ids(original) == [3, 12]

    erased_json, changes = traces.erase_memory_texts(original, [12, 99])
    assert "咖啡" not in erased_json
    assert "Uses pnpm for JavaScript projects" in erased_json
    [(memory_id, before, after)] = changes
    assert memory_id == 12
    assert "咖啡" in before
    # The metadata that was sent stays (kind, date, confidence); only the text goes.
    assert after == before[: before.index("我")].rstrip() + " [deleted memory #12]"
    assert "2026-03-01" in after
    # Still a valid trace, citing the same memories, with the same token counts.
    trace, again = ContextTrace.from_json(original), ContextTrace.from_json(erased_json)
    assert [m.id for m in again.memories] == [3, 12]
    assert [b.tokens for b in again.blocks] == [b.tokens for b in trace.blocks]
    assert traces.cited_memory_ids(erased_json) == [3, 12]
    # Erasing twice changes nothing more; undo gives back the exact original.
    assert traces.erase_memory_texts(erased_json, [12]) == (erased_json, [])
    assert traces.restore_memory_texts(erased_json, [(before, after)]) == original


def test_unreadable_traces_cite_nothing_and_stay_as_they_are() -> None:
    for raw in ("", "not json", "[1, 2]", '{"blocks": 3}'):
        assert traces.cited_memory_ids(raw) == []
        assert traces.erase_memory_texts(raw, [1]) == (raw, [])
