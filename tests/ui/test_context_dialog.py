"""The context inspector on a reply whose memory was deleted afterwards (issue 9, defect 2)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from etos_desktop.core.context.assembler import ContextInput, ContextTrace, assemble_context
from etos_desktop.core.memory.retrieval import memory_block, trace_memories
from etos_desktop.core.memory.search import Hit
from etos_desktop.core.storage import traces
from etos_desktop.ui.context_dialog import ContextDialog


def _trace(lang: str) -> str:
    hit = Hit(
        id=12,
        score=0.5,
        parts={"vector": 0.4, "floor": 0.15, "eligible_vector": 1.0},
        text="我每天早上喝咖啡",
        kind="fact",
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
        confidence=0.9,
    )
    assembled = assemble_context(
        ContextInput(
            system_prompt="You are a companion.",
            history=[],
            current={"role": "user", "content": "早上喝什么？"},
            model="m",
            context_window=8000,
            max_output_tokens=500,
            memory_block=memory_block([hit], lang),  # type: ignore[arg-type]
            language=lang,  # type: ignore[arg-type]
        )
    )
    trace = dataclasses.replace(
        assembled.trace, memories=trace_memories([hit]), retrieval_query="早上喝什么？"
    )
    return trace.to_json()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_deleted_memory_is_shown_as_sent_without_its_text(qtbot, lang: str) -> None:
    original = _trace(lang)
    before = ContextDialog(ContextTrace.from_json(original))
    qtbot.addWidget(before)
    assert "咖啡" in before.item_text("#12 Fact")  # the line is found in both languages

    erased, _changes = traces.erase_memory_texts(original, [12])
    dialog = ContextDialog(ContextTrace.from_json(erased))
    qtbot.addWidget(dialog)
    details = dialog.item_text("#12 Fact")
    assert "咖啡" not in details
    assert "[deleted memory #12]" in details
    assert "2026-03-01" in details.splitlines()[1]  # "Sent as:" keeps what was sent about it
    assert "This memory was deleted after the reply" in details
    assert "咖啡" not in dialog.json_text()
