"""A stated change supersedes (issue 9, defect 3) and newer wins between results (issue 10).

Run with the app's default embedder (the built-in USE), since the same-slot threshold is measured
for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.slots import MEANING_MARGIN, change_cue, key_terms, same_slot
from etos_desktop.core.storage.tables import RevisionAction


@pytest.fixture
def use_engine(tmp_path: Path, use_embedder: Any) -> Iterator[tuple[MemoryEngine, FakeClock]]:
    clock = FakeClock()
    engine = MemoryEngine.open(tmp_path / "m.db", embedder=use_embedder, clock=clock)
    yield engine, clock
    engine.close()


@pytest.mark.parametrize(
    ("old_text", "new_text"),
    [
        (
            "I use pnpm for JavaScript projects",
            "I no longer use pnpm for JavaScript projects, I switched to bun",
        ),
        ("我每天早上喝咖啡", "我现在不喝咖啡了，改喝茶"),
        ("我喜欢用 VS Code 写代码。", "我不再用 VS Code 了，改用 Neovim。"),
    ],
)
def test_a_stated_change_supersedes_the_same_slot(
    use_engine: tuple[MemoryEngine, FakeClock], old_text: str, new_text: str
) -> None:
    engine, clock = use_engine
    old = engine.save(old_text, "preference").id
    clock.advance(days=30)
    result = engine.save(new_text, "preference")
    assert not result.merged
    assert result.superseded == old
    before = engine.get(old)
    assert before is not None
    assert before.superseded_by == result.id
    assert before.valid_until == clock.now()
    assert before.archived_at is not None
    assert [r.action for r in engine.history(old)][-1] == RevisionAction.SUPERSEDE
    assert [m.id for m in engine.memories()] == [result.id]
    # restorable: the user's Undo deletes the new one and restores the old one
    engine.restore(old)
    assert {m.id for m in engine.memories()} == {old, result.id}


@pytest.mark.parametrize(
    ("old_text", "new_text"),
    [
        # a cue, but another slot: different tools for different languages (0.43 apart)
        ("I use pnpm for JavaScript projects", "I switched to Poetry for Python projects"),
        ("I use pnpm for JavaScript projects", "I no longer use Windows, I switched to Linux"),
        # a cue, but nothing shared: coffee vs spicy food
        ("我每天早上喝咖啡", "我现在不吃辣了"),
        ("我喜欢用 VS Code 写代码。", "我不再吃甜食了。"),
    ],
)
def test_a_change_about_another_slot_supersedes_nothing(
    use_engine: tuple[MemoryEngine, FakeClock], old_text: str, new_text: str
) -> None:
    engine, clock = use_engine
    old = engine.save(old_text, "preference").id
    clock.advance(days=1)
    result = engine.save(new_text, "preference")
    assert result.superseded is None
    assert {m.id for m in engine.memories()} == {old, result.id}


def test_without_a_cue_nothing_is_superseded(use_engine: tuple[MemoryEngine, FakeClock]) -> None:
    engine, clock = use_engine
    old = engine.save("I use pnpm for JavaScript projects", "preference").id
    clock.advance(days=1)
    result = engine.save("I use bun to run quick JavaScript scripts", "preference")
    assert result.superseded is None
    assert engine.get(old) is not None
    assert {m.id for m in engine.memories()} == {old, result.id}


def test_a_change_supersedes_only_the_same_kind(
    use_engine: tuple[MemoryEngine, FakeClock],
) -> None:
    engine, _ = use_engine
    engine.save("I use pnpm for JavaScript projects", "instruction")
    result = engine.save(
        "I no longer use pnpm for JavaScript projects, I switched to bun", "preference"
    )
    assert result.superseded is None


def test_a_negated_restatement_is_not_merged(use_engine: tuple[MemoryEngine, FakeClock]) -> None:
    # Nearly the same words (cosine above the duplicate threshold without the cue rule): it
    # states the opposite, so the old wording must not simply be replaced in place.
    engine, clock = use_engine
    old = engine.save("I drink coffee every morning", "preference").id
    clock.advance(days=2)
    result = engine.save("I don't drink coffee every morning any more", "preference")
    assert not result.merged
    assert result.superseded == old


def test_the_newer_preference_is_what_search_returns(
    use_engine: tuple[MemoryEngine, FakeClock],
) -> None:
    engine, clock = use_engine
    engine.save("I use pnpm for JavaScript projects", "preference")
    clock.advance(days=10)
    new = engine.save(
        "I no longer use pnpm for JavaScript projects, I switched to bun", "preference"
    )
    hits = engine.search("Which package manager should I use for my JavaScript project?")
    assert [h.id for h in hits] == [new.id]


@pytest.mark.parametrize(
    ("old_text", "new_text", "query"),
    [
        (
            "Please answer me in English.",
            "I no longer want English replies; answer me in Chinese from now on.",
            "Which language should you answer me in?",
        ),
        ("请用英文回答我。", "以后不要再用英文了，改用中文回答我。", "你应该用什么语言回答我？"),
        (
            "The user is reading Dune before bed.",
            "The user finished Dune and has started The Left Hand of Darkness.",
            "Which novel am I in the middle of right now?",
        ),
    ],
)
def test_between_two_active_statements_of_one_slot_the_newer_ranks_first(
    use_engine: tuple[MemoryEngine, FakeClock], old_text: str, new_text: str, query: str
) -> None:
    engine, clock = use_engine
    # bulk: both stay active, only ranking can put the newer one first
    old = engine.save(old_text, "preference", clock.now() - timedelta(days=200), bulk=True).id
    new = engine.save(new_text, "preference", bulk=True).id
    hits = engine.search(query, apply_floor=False)
    ids = [h.id for h in hits]
    assert ids.index(new) < ids.index(old)
    # the rule is what decides it: with it off, the older statement is not put below
    off = engine.search(
        query, apply_floor=False, tuning=engine.with_tuning(same_slot_query_similarity=1.01)
    )
    assert all("newer_first" not in h.parts for h in off)


def test_an_older_statement_is_not_pushed_down_by_a_newer_one_without_a_cue(
    use_engine: tuple[MemoryEngine, FakeClock],
) -> None:
    engine, clock = use_engine
    old = engine.save(
        "My favourite drink is coffee every morning",
        "preference",
        clock.now() - timedelta(days=400),
        bulk=True,
    ).id
    engine.save("My favourite drink is tea every afternoon", "preference", bulk=True)
    hits = engine.search("favourite morning coffee drink", apply_floor=False)
    assert hits[0].id == old
    assert all("newer_first" not in h.parts for h in hits)


# -- the rule itself -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I no longer use pnpm",
        "I don't run in the mornings any more",
        "I switched to soy milk",
        "The user has given up caffeine",
        "The user now drinks rooibos",
        "我现在不喝咖啡了",
        "我不再熬夜",
        "改用 Neovim",
        "我已经不去健身房了",
        "手机套餐我们改用 Lebara 了",
    ],
)
def test_change_cues(text: str) -> None:
    assert change_cue(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "I use pnpm for JavaScript projects",
        "Right now I need a break",
        "我每天早上喝咖啡",
        "我住在杭州",
        "Please answer in short bullet points",
    ],
)
def test_statements_without_a_change_cue(text: str) -> None:
    assert change_cue(text) is None


def test_key_terms_leave_out_cue_words_and_stray_bigrams() -> None:
    assert key_terms("I no longer use pnpm, I switched to bun") == {"pnpm", "bun"}
    assert "户已" not in key_terms("用户已经搬到鹿特丹")
    assert "咖啡" in key_terms("我现在不喝咖啡了")


def test_same_slot_needs_cue_shared_terms_and_similarity() -> None:
    old, new = "I use pnpm for JavaScript projects", "I no longer use pnpm, I switched to bun"
    assert same_slot(new, old, 0.74, 0.5) is not None
    assert same_slot(new, old, 0.45, 0.5) is None
    assert same_slot(old, new, 0.74, 0.5) is None  # the older has no cue
    # nothing shared: meaning alone needs the margin above the threshold
    assert same_slot("I no longer eat sweets", old, 0.5 + MEANING_MARGIN - 0.01, 0.5) is None
