"""The keyword channel's repairs of issue 18: enough candidates, and a floor long questions pass.

On a dialogue store the speakers' names are in every turn, so they stopped pre-selecting
candidates (terms in more than 5 % of memories do not): a fifth of the keyword lists came back
with fewer than 10 results. And the keyword floor (an IDF-weighted share of the query's terms)
was rarely reached by a long question: "what is my favourite tea? I want some now" found
nothing against the only memory "my favourite tea is …" — with no embedder too, which is how the
app searches while the built-in model loads.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine


def test_a_long_question_naming_two_content_words_finds_the_memory(tmp_path: Path) -> None:
    engine = MemoryEngine.open(tmp_path / "m.db", embedder=None, clock=FakeClock())
    try:
        memory = engine.save("My favourite tea is a smoky lapsang souchong.", "preference")
        hits = engine.search("what is my favourite tea? I want some now", k=5)
        assert [h.id for h in hits] == [memory.id]
        assert hits[0].parts["eligible_keyword"] == 1.0
        # One shared word of a long general question is still not enough.
        assert engine.search("Is green tea healthier than coffee for most people?", k=5) == []
    finally:
        engine.close()


def test_names_in_every_turn_still_fill_the_keyword_candidates(tmp_path: Path) -> None:
    clock = FakeClock()
    engine = MemoryEngine.open(tmp_path / "m.db", embedder=None, clock=clock)
    try:
        turns = [
            f"Nadia: Thanks Tomas, the weather was {word} again today."
            for word in ("grey", "sunny", "windy", "cold", "mild") * 60
        ]
        turns[137] = "Nadia: Tomas, I finally read The Lighthouse Ledger, what a book."
        engine.add_many(
            [
                {"text": t, "kind": "episode", "created_at": clock.now() - timedelta(days=i)}
                for i, t in enumerate(turns)
            ]
        )
        hits = engine.search(
            "What did Nadia think of the lighthouse book?", k=10, mode="keyword", apply_floor=False
        )
        # "nadia" is in every turn and "lighthouse"/"book" in one: the rare terms alone
        # pre-selected a single candidate.
        assert len(hits) == 10
        assert "Lighthouse" in hits[0].text
    finally:
        engine.close()
