"""A big store's int8 index ranks exactly as the float32 one: candidates are re-scored."""

from __future__ import annotations

import pytest

from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.retrieval import vectors
from tests.helpers.embedders import HashEmbedder

TOPICS = ("tea", "coffee", "garden", "python", "hiking", "piano", "Lisbon", "budget")


def _results(engine: MemoryEngine, queries: list[str]) -> list[list[tuple[int, float]]]:
    out = []
    for query in queries:
        for mode in ("hybrid", "vector", "keyword"):
            for floor in (True, False):
                hits = engine.search(query, k=8, mode=mode, apply_floor=floor)
                out.append([(h.id, h.score) for h in hits])
    return out


def test_int8_index_gives_the_float32_results(
    engine: MemoryEngine, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [
        f"I like {TOPICS[i % 8]} and {TOPICS[(i * 3) % 8]}, note {i}. It was a good day."
        for i in range(120)
    ]
    engine.add_many(texts)
    queries = [f"what do I think about {t}?" for t in TOPICS] + ["tea in Lisbon", "note 7"]
    exact = _results(engine, queries)
    float32_bytes = engine.vector_cache_bytes()

    monkeypatch.setattr(vectors, "QUANTIZE_MIN_ROWS", 0)
    engine.set_embedder(embedder)  # rebuilds the index, now as int8
    quantized = _results(engine, queries)
    assert engine.vector_cache_bytes() < float32_bytes / 2
    assert [[i for i, _ in hits] for hits in quantized] == [[i for i, _ in hits] for hits in exact]
    for a, b in zip(quantized, exact, strict=True):
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-6)
