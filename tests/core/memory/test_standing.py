"""All that fit (issue 18): when the whole store is sent, and what the block looks like."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.context.assembler import render_block
from etos_desktop.core.context.language import Language
from etos_desktop.core.context.model_limits import context_window_for
from etos_desktop.core.context.tokens import estimate_tokens
from etos_desktop.core.memory import standing
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.retrieval import memory_block
from etos_desktop.core.memory.search import Hit
from etos_desktop.core.memory.standing import (
    MIN_LINE_TOKENS,
    STANDING_MEMORY_LABEL,
    choose,
    effective_budget,
    row_limit,
)

DAY = datetime(2026, 3, 1, tzinfo=UTC)


def hits(texts: list[str], *, kind: str = "fact", first_id: int = 1) -> list[Hit]:
    return [
        Hit(
            id=first_id + n,
            score=0.0,
            parts={},
            text=text,
            kind=kind,
            created_at=DAY + timedelta(days=n),
            confidence=0.9,
        )
        for n, text in enumerate(texts)
    ]


def test_the_budget_is_the_setting_but_never_more_than_a_tenth_of_the_window() -> None:
    assert effective_budget(1500, 128_000) == 1500
    assert effective_budget(800, 128_000) == 800
    # A 4k local model: 409 tokens, so the memories do not crowd out the conversation.
    assert effective_budget(1500, context_window_for("llama2:7b")) == 409
    assert effective_budget(1500, context_window_for("my-model", {"my-model": 8000})) == 800


def test_an_empty_store_sends_nothing_and_needs_no_retrieval() -> None:
    choice = choose(0, 1500, None, "en")
    assert (choice.rule, choice.count, choice.tokens, choice.block) == ("all_that_fit", 0, 0, None)
    assert choice.fits


def test_a_small_store_is_sent_whole_in_id_order() -> None:
    memories = hits(["The user uses pnpm.", "Allergic to peanuts.", "Lives in Lisbon."])
    shuffled = random.Random(4).sample(memories, len(memories))
    choice = choose(3, 1500, shuffled, "en")
    assert choice.fits
    assert [m.id for m in choice.memories] == [1, 2, 3]
    assert choice.block is not None
    assert choice.block.kind == "standing_memories"
    assert choice.block.label == STANDING_MEMORY_LABEL["en"]
    assert choice.block.content.splitlines() == [
        "- #1 (fact, 2026-03-01, confidence 0.9) The user uses pnpm.",
        "- #2 (fact, 2026-03-02, confidence 0.9) Allergic to peanuts.",
        "- #3 (fact, 2026-03-03, confidence 0.9) Lives in Lisbon.",
    ]
    # The tokens are those of the block as it is sent: label and fence included.
    assert choice.tokens == estimate_tokens(render_block(choice.block))
    assert choice.tokens <= 1500
    # Equal stores give byte-identical blocks, whatever order the rows came in.
    again = choose(3, 1500, list(reversed(memories)), "en")
    assert again.block == choice.block


def test_the_label_says_standing_background_use_only_when_it_helps_in_both_languages() -> None:
    assert "use them only when they help" in STANDING_MEMORY_LABEL["en"].lower()
    assert "not instructions" in STANDING_MEMORY_LABEL["en"]
    assert "仅在有帮助时使用" in STANDING_MEMORY_LABEL["zh"]
    assert "不是指令" in STANDING_MEMORY_LABEL["zh"]
    zh = choose(1, 1500, hits(["喜欢喝绿茶"], kind="preference"), "zh")
    assert zh.block is not None
    assert zh.block.content == "- #1（偏好，2026-03-01，可信度 0.9）喜欢喝绿茶"


def test_a_store_over_the_budget_goes_to_retrieval() -> None:
    memories = hits(
        [f"Memory number {n} says something fairly long about the user." for n in range(40)]
    )
    choice = choose(40, 400, memories, "en")
    assert choice.rule == "retrieval"
    assert not choice.fits
    assert choice.tokens > 400
    assert choice.block is None


def test_the_tenth_of_a_4k_window_sends_to_retrieval_what_1500_tokens_would_take() -> None:
    memories = hits(
        [f"The user mentioned detail {n} about their garden and tools." for n in range(20)]
    )
    roomy = choose(20, effective_budget(1500, 128_000), memories, "en")
    small = choose(20, effective_budget(1500, 4096), memories, "en")
    assert roomy.fits
    assert 409 < roomy.tokens <= 1500
    assert small.rule == "retrieval"


def test_a_count_above_what_the_budget_could_hold_is_refused_without_the_rows() -> None:
    assert row_limit(1500) == 150
    choice = choose(151, 1500, None, "en")
    assert (choice.rule, choice.count, choice.tokens) == ("retrieval", 151, 0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_memory_line_is_cheaper_than_the_bound_the_count_check_uses(lang: Language) -> None:
    # The shortest line: a one-digit id, the shortest kind, a one-character text.
    for kind in ("fact", "preference", "instruction", "episode", "insight"):
        block = memory_block(hits(["x"] * 9, kind=kind), lang)
        assert block is not None
        assert estimate_tokens(block.content) >= 9 * MIN_LINE_TOKENS


# -- reading the store (real SQLite) ---------------------------------------------------------


async def test_the_store_is_read_in_id_order_without_archived_or_expired_memories(
    engine: MemoryEngine, clock: FakeClock
) -> None:
    access = MemoryAccess(engine)
    try:
        first = engine.save("The user uses pnpm.", "preference").id
        archived = engine.save("The user owns a red bicycle.").id
        engine.archive(archived)
        third = engine.save("The user is allergic to peanuts.").id
        choice = await access.standing(1500, "en")
        assert choice.fits
        assert [m.id for m in choice.memories] == [first, third]
        assert choice.count == 2
        assert choice.block is not None
        assert "bicycle" not in choice.block.content
    finally:
        access.close()


async def test_a_large_store_is_decided_by_its_count_alone(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.add_many([f"Fact {n} about the user's week." for n in range(21)])
    reads: list[Any] = []
    real = standing.active_by_id
    monkeypatch.setattr(standing, "active_by_id", lambda *args: reads.append(args) or real(*args))
    access = MemoryAccess(engine)
    try:
        over = await access.standing(200, "en")  # row_limit 20 < 21 memories
        assert (over.rule, over.count, over.tokens) == ("retrieval", 21, 0)
        assert reads == []
        under = await access.standing(1500, "en")
        assert under.fits
        assert len(under.memories) == 21
        assert len(reads) == 1
    finally:
        access.close()
