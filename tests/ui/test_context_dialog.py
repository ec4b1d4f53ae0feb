"""The context inspector on a reply whose memory was deleted afterwards (issue 9, defect 2)."""

from __future__ import annotations

import dataclasses
import json
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


def _standing_trace(rule: str) -> ContextTrace:
    from etos_desktop.core.memory.standing import choose, trace_standing

    memories = [
        Hit(
            id=n,
            score=0.0,
            parts={},
            text=text,
            kind="fact",
            created_at=datetime(2026, 3, n, tzinfo=UTC),
            confidence=1.0,
        )
        for n, text in enumerate(("Uses pnpm", "Allergic to peanuts", "Lives in Lisbon"), 1)
    ]
    choice = choose(3, 1500, memories, "en")
    assert choice.block is not None
    fits = rule == "all_that_fit"
    assembled = assemble_context(
        ContextInput(
            system_prompt="You are a companion.",
            history=[],
            current={"role": "user", "content": "Hello"},
            model="m",
            context_window=128_000,
            max_output_tokens=500,
            system_blocks=(choice.block,) if fits else (),
        )
    )
    return dataclasses.replace(
        assembled.trace,
        memories=trace_standing(choice.memories) if fits else (),
        retrieval_query="" if fits else "Hello",
        memory_rule=rule,  # type: ignore[arg-type]
        memory_store_count=3 if fits else 240,
        memory_store_tokens=choice.tokens if fits else 0,
        memory_fit_budget=1500,
    )


def test_all_that_fit_is_named_as_the_rule_with_every_memory_in_the_system_message(qtbot) -> None:
    trace = _standing_trace("all_that_fit")
    dialog = ContextDialog(ContextTrace.from_json(trace.to_json()))
    qtbot.addWidget(dialog)
    status = dialog.memory_status.text()
    assert "All 3 saved memories were sent" in status
    budget = dialog.locale().toString(1500)
    assert f"about {trace.memory_store_tokens} of the {budget}-token budget" in status
    titles = dialog.item_titles()
    group = titles.index("All your memories: 3, all that fit")
    assert titles[0] == "System message (the stable prefix)"
    assert titles[group + 1 : group + 4] == [
        "#1 Fact · 2026-03-01 · confidence 1.0",
        "#2 Fact · 2026-03-02 · confidence 1.0",
        "#3 Fact · 2026-03-03 · confidence 1.0",
    ]
    assert not any(t.startswith("Memories —") for t in titles)
    details = dialog.item_text("#2 Fact")
    assert "Sent as: - #2 (fact, 2026-03-02, confidence 1.0) Allergic to peanuts" in details
    assert "Chosen by: all that fit" in details
    assert "Score" not in details
    assert "<standing_memories>" in dialog.item_text("All your memories")


def test_retrieval_over_the_budget_is_named_as_the_rule(qtbot) -> None:
    dialog = ContextDialog(_standing_trace("retrieval"))
    qtbot.addWidget(dialog)
    status = dialog.memory_status.text()
    assert "No saved memory was relevant to this message" in status
    budget = dialog.locale().toString(1500)
    assert f"the store of 240 memories is over the {budget}-token budget" in status
    assert "Memories — none sent" in dialog.item_titles()


def test_a_trace_from_before_the_rule_shows_no_rule(qtbot) -> None:
    data = json.loads(_trace("en"))
    for key in ("memory_rule", "memory_store_count", "memory_store_tokens", "memory_fit_budget"):
        del data[key]
    trace = ContextTrace.from_json(json.dumps(data))
    assert trace.memory_rule == ""
    dialog = ContextDialog(trace)
    qtbot.addWidget(dialog)
    assert "Chosen by" not in dialog.memory_status.text()
    assert dialog.memory_status.text().startswith("Memories sent: 1")


@pytest.mark.parametrize(
    ("directed", "words"),
    [
        (1.0, "yes, by the message itself"),
        (0.5, "yes, by a name or rare word it shares with a memory"),
        (0.0, "no, a general question"),
    ],
)
def test_the_inspector_says_what_the_relevance_gate_decided(
    qtbot, directed: float, words: str
) -> None:
    trace = ContextTrace.from_json(_trace("en"))
    memory = dataclasses.replace(
        trace.memories[0], parts=(*trace.memories[0].parts, ("directed", directed))
    )
    dialog = ContextDialog(dataclasses.replace(trace, memories=(memory,)))
    qtbot.addWidget(dialog)
    details = dialog.item_text("#12 Fact")
    assert f"about your memory = {words}" in details
    assert "directed" not in details


def test_an_empty_store_says_no_memory_is_saved_without_a_rule_line(qtbot) -> None:
    trace = dataclasses.replace(
        _standing_trace("all_that_fit"), memories=(), memory_store_count=0, memory_store_tokens=0
    )
    dialog = ContextDialog(trace)
    qtbot.addWidget(dialog)
    status = dialog.memory_status.text()
    assert status == "No memory is saved yet, so none was sent."
