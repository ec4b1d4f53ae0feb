"""Time words in a query boost memories from the period they name (issue 10)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine

# A Wednesday; last week is Monday 8 – Sunday 14 June.
NOW = datetime(2026, 6, 17, 20, 0, tzinfo=UTC)


@pytest.fixture
def dated(engine: MemoryEngine, clock: FakeClock) -> dict[str, int]:
    clock.advance(seconds=(NOW - clock.now()).total_seconds())
    texts = {
        "old_car": ("The garage says the car brakes are fine", NOW - timedelta(days=60)),
        "old_garden": ("The tomatoes in the garden have aphids again", NOW - timedelta(days=40)),
        "week_car": (
            "We talked about new tyres for the car",
            datetime(2026, 6, 13, 10, tzinfo=UTC),
        ),
        "week_cook": (
            "I cooked a lentil curry for my parents",
            datetime(2026, 6, 9, 19, tzinfo=UTC),
        ),
        "yesterday": (
            "The cat had her vaccination at the vet",
            datetime(2026, 6, 16, 9, tzinfo=UTC),
        ),
        "march": ("我们在阳台上种了一盆柠檬树", datetime(2026, 3, 7, 14, tzinfo=UTC)),
    }
    return {
        name: engine.save(text, "episode", when, bulk=True).id
        for name, (text, when) in texts.items()
    }


@pytest.mark.parametrize("query", ["What did we talk about last week?", "上周我们聊了些什么？"])
def test_what_did_we_talk_about_last_week_ranks_last_weeks_memories_first(
    engine: MemoryEngine, dated: dict[str, int], query: str
) -> None:
    hits = engine.search(query, k=5)
    assert {h.id for h in hits[:2]} == {dated["week_car"], dated["week_cook"]}
    assert all(h.parts["time_window"] > 0 for h in hits[:2])
    # without the window, nothing ties these memories to the question
    assert {h.id for h in engine.search("What did we talk about?", k=5)} != {
        dated["week_car"],
        dated["week_cook"],
    }


def test_a_subject_and_a_period_prefer_that_periods_memory(
    engine: MemoryEngine, dated: dict[str, int]
) -> None:
    hits = engine.search("What did we say about the car last weekend?", k=3)
    assert hits[0].id == dated["week_car"]
    ids = [h.id for h in hits]
    assert dated["old_car"] in ids
    assert dated["week_cook"] not in ids  # in the window, but about something else


def test_yesterday_and_march(engine: MemoryEngine, dated: dict[str, int]) -> None:
    assert engine.search("what did we chat about yesterday", k=1)[0].id == dated["yesterday"]
    assert engine.search("三月份我们聊过什么？", k=1)[0].id == dated["march"]


def test_the_window_follows_the_injected_clock(
    engine: MemoryEngine, clock: FakeClock, dated: dict[str, int]
) -> None:
    clock.advance(days=7)  # now last week is 15–21 June: none of these
    hits = engine.search("What did we talk about last week?", k=5)
    assert dated["week_car"] not in {h.id for h in hits}
    window = engine.time_window("上周")
    assert window is not None
    assert window.describe() == "2026-06-15 – 2026-06-21"


def test_a_busy_period_still_marks_an_older_memory_from_it(
    engine: MemoryEngine, clock: FakeClock
) -> None:
    # More memories in the period than are added for it (WINDOW_CANDIDATES, newest first):
    # the one the question is about is older than those, found by its words, and still gets
    # the period's boost from its own date.
    from etos_desktop.core.memory import engine as engine_module

    clock.advance(seconds=(NOW - clock.now()).total_seconds())
    target = engine.save(
        "The zebracorn sticker went on the laptop lid",
        "episode",
        datetime(2026, 6, 8, 9, tzinfo=UTC),
        bulk=True,
    ).id
    busy = engine_module.WINDOW_CANDIDATES + 30
    for i in range(busy):
        moment = datetime(2026, 6, 14, 20, tzinfo=UTC) - timedelta(minutes=10 * i)
        engine.save(
            f"Weekend note {i}: groceries, laundry and a walk", "episode", moment, bulk=True
        )
    hits = engine.search("What did we say about the zebracorn last week?", k=3)
    assert hits[0].id == target
    assert hits[0].parts["time_window"] > 0
