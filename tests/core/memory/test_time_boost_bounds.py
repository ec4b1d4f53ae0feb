"""The period boost reorders similar matches and never lifts an unrelated one (issue 18).

"What workshop did Caroline attend recently?" names no period: "recently" is a soft preference
for newer memories, not a window that adds +0.2 to every turn of the last two weeks (the
answer, from June, ranked 135th that way on a public dialogue set).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine

NOW = datetime(2026, 8, 20, 20, 0, tzinfo=UTC)


def _store(tmp_path: Any, embedder: Any) -> tuple[MemoryEngine, dict[str, int]]:
    clock = FakeClock(NOW - timedelta(days=400))
    engine = MemoryEngine.open(tmp_path / "m.db", embedder=embedder, clock=clock)
    texts = {
        "answer": ("Caroline: I went to a pottery workshop downtown, so relaxing!", 60),
        "recent1": ("Caroline: Lovely weather today, Melanie, the kids are outside.", 2),
        "recent2": ("Melanie: Caroline, did you see the sunset yesterday? Gorgeous.", 4),
        "recent3": ("Caroline: My tomatoes finally turned red, Melanie!", 6),
        "recent4": ("Melanie: Caroline, I finally cleaned the attic this morning.", 9),
    }
    ids = engine.add_many(
        [
            {"text": t, "kind": "episode", "created_at": NOW - timedelta(days=d)}
            for t, d in texts.values()
        ]
    )
    clock.advance(seconds=(NOW - clock.now()).total_seconds())
    return engine, dict(zip(texts, ids, strict=True))


def test_recently_is_a_preference_not_a_window(tmp_path: Any, use_embedder: Any) -> None:
    engine, ids = _store(tmp_path, use_embedder)
    try:
        window = engine.time_window("What workshop did Caroline attend recently?")
        assert window is not None
        assert window.soft
        hits = engine.search("What workshop did Caroline attend recently?", k=5)
        assert hits[0].id == ids["answer"]
        assert all("time_window" not in h.parts for h in hits)
        # The same question with a real period still boosts that period's matches.
        period = engine.time_window("What did Caroline do last week?")
        assert period is not None
        assert not period.soft
    finally:
        engine.close()


def test_a_named_period_does_not_lift_an_unrelated_memory(tmp_path: Any, use_embedder: Any) -> None:
    engine, ids = _store(tmp_path, use_embedder)
    try:
        # Last week (10–16 August) holds only chit-chat; the pottery turn matches the question.
        hits = engine.search("Which workshop did Caroline go to, was it last week?", k=5)
        assert hits[0].id == ids["answer"]
        boosted = [h for h in hits if h.parts.get("time_window")]
        assert all(h.parts["relevance"] >= 0.5 * hits[0].parts["relevance"] for h in boosted)
    finally:
        engine.close()
