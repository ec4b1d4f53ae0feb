"""Newer wins across languages: the same-slot rule decides by meaning, not shared words (issue 18).

Two active answer-language preferences, the older in English and the newer in Chinese, share no
word; between two results of one query the newer (with its change cue "以后") must come first.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine


@pytest.mark.parametrize(
    "query", ["Which language should you answer me in?", "你应该用什么语言回答我？"]
)
def test_two_answer_language_preferences_come_out_newer_first(
    tmp_path: Any, use_embedder: Any, query: str
) -> None:
    clock = FakeClock()
    engine = MemoryEngine.open(tmp_path / "m.db", embedder=use_embedder, clock=clock)
    try:
        older, newer = engine.add_many(
            [
                {
                    "text": "Please always answer me in English.",
                    "kind": "instruction",
                    "created_at": clock.now() - timedelta(days=200),
                },
                {
                    "text": "以后都用中文回答我。",
                    "kind": "instruction",
                    "created_at": clock.now() - timedelta(days=5),
                },
            ]
        )
        ids = [h.id for h in engine.search(query, k=5)]
        assert newer in ids
        assert older in ids
        assert ids.index(newer) < ids.index(older)
    finally:
        engine.close()
