from __future__ import annotations

import math

import numpy
import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.retrieval import vectors
from etos_desktop.core.retrieval.vectors import (
    CHUNK_CHARS,
    MAX_WINDOWS,
    VectorIndex,
    VectorRow,
    chunk_texts,
    exact_similarities,
    from_blob,
    quantize,
    timestamp,
    to_blob,
)
from tests.helpers.embedders import HashEmbedder


def _rows(
    key_vectors: list[tuple[int, int, list[float]]], until: float = math.inf
) -> list[VectorRow]:
    out = []
    for memory_id, chunk_no, values in key_vectors:
        vector = numpy.asarray(values, dtype=numpy.float32)
        vector /= numpy.linalg.norm(vector)
        out.append(VectorRow(memory_id, chunk_no, to_blob(vector), until))
    return out


def test_blob_round_trip() -> None:
    vector = numpy.arange(8, dtype=numpy.float32) / 7
    blob = to_blob(vector)
    assert len(blob) == 32
    assert numpy.array_equal(from_blob(blob, 8), vector)


def test_short_text_is_one_chunk() -> None:
    assert chunk_texts("short") == ["short"]


def test_long_text_gets_sentence_windows_after_the_whole_text() -> None:
    sentence = "This is one sentence about the garden. "
    text = sentence * 30
    chunks = chunk_texts(text)
    assert chunks[0] == text
    assert len(chunks) > 2
    assert all(len(c) <= CHUNK_CHARS for c in chunks[1:])
    assert all(c.endswith(".") for c in chunks[1:])
    huge = "字" * (CHUNK_CHARS * 40)
    assert len(chunk_texts(huge)) == 1 + MAX_WINDOWS


def test_index_scores_each_memory_by_its_best_chunk() -> None:
    rows = _rows([(1, 0, [1, 0, 0]), (1, 1, [0, 1, 0]), (2, 0, [0, 0, 1])])
    index = VectorIndex.from_rows("k", 3, rows)
    assert len(index) == 2
    assert index.ids.tolist() == [1, 2]
    sims = index.similarities(numpy.asarray([0, 1, 0], dtype=numpy.float32))
    assert sims.tolist() == pytest.approx([1.0, 0.0])
    assert set(index.whole_text_vectors([1, 2, 3])) == {1, 2}
    assert index.whole_text_vectors([1])[1].tolist() == pytest.approx([1, 0, 0])
    assert index.nbytes > 0
    assert 1 in index
    assert 3 not in index


def test_index_skips_rows_of_another_size() -> None:
    rows = [*_rows([(1, 0, [1, 0, 0])]), *_rows([(2, 0, [1, 0])])]
    assert VectorIndex.from_rows("k", 3, rows).ids.tolist() == [1]


def test_patch_replaces_removes_and_adds() -> None:
    index = VectorIndex.from_rows("k", 2, _rows([(1, 0, [1, 0]), (2, 0, [0, 1]), (3, 0, [1, 1])]))
    patched = index.patched({2, 3}, _rows([(3, 0, [0, 1]), (4, 0, [1, 0]), (4, 1, [0, 1])]))
    assert patched.ids.tolist() == [1, 3, 4]
    assert index.ids.tolist() == [1, 2, 3]  # the old one is unchanged
    sims = patched.similarities(numpy.asarray([0, 1], dtype=numpy.float32))
    assert sims.tolist() == pytest.approx([0.0, 1.0, 1.0])
    assert patched.position(4) == 2


def test_expired_rows_are_not_live_and_not_nearest() -> None:
    clock = FakeClock()
    now = clock.now()
    rows = _rows([(1, 0, [1, 0])], until=timestamp(now)) + _rows([(2, 0, [1, 1])])
    index = VectorIndex.from_rows("k", 2, rows)
    assert index.live(now).tolist() == [False, True]
    assert index.nearest_whole_text(numpy.asarray([1, 0], dtype=numpy.float32), now)[0] == 2  # type: ignore[index]
    empty = VectorIndex.from_rows("k", 2, [])
    assert len(empty) == 0
    assert empty.similarities(numpy.zeros(2, dtype=numpy.float32)).shape == (0,)
    assert empty.nearest_whole_text(numpy.zeros(2, dtype=numpy.float32), now) is None


def test_hash_embedder_is_deterministic_and_normalised() -> None:
    embedder = HashEmbedder(32)
    a, b, c = embedder.embed(["I like green tea", "green tea I like", "完全无关"])
    assert embedder.key == "hash:32"
    assert a.dtype == numpy.float32
    assert float(numpy.linalg.norm(a)) == pytest.approx(1.0)
    assert float(a @ b) == pytest.approx(1.0)
    assert abs(float(a @ c)) < 0.5
    assert numpy.array_equal(HashEmbedder(32).embed(["x y"]), embedder.embed(["x y"]))
    assert not embedder.embed([""]).any()


def test_a_text_of_several_sentences_gets_one_passage_per_sentence() -> None:
    text = "We went to Lisbon in May. The food was great. Okay. I want to go back next year."
    assert chunk_texts(text) == [
        text,
        "We went to Lisbon in May.",
        "The food was great.",
        "Okay. I want to go back next year.",
    ]
    assert chunk_texts("我们五月去了里斯本。好吃。明年还想再去一次。")[1:] == [
        "我们五月去了里斯本。",
        "好吃。明年还想再去一次。",
    ]
    assert chunk_texts("One sentence only, however long it is.") == [
        "One sentence only, however long it is."
    ]


def test_passage_weight_blends_whole_text_and_best_passage() -> None:
    rows = _rows([(1, 0, [1, 0]), (1, 1, [0, 1]), (2, 0, [0.6, 0.8])])
    index = VectorIndex.from_rows("k", 2, rows)
    query = numpy.asarray([0, 1], dtype=numpy.float32)
    assert index.similarities(query, 1.0).tolist() == pytest.approx([1.0, 0.8])
    assert index.similarities(query, 0.0).tolist() == pytest.approx([0.0, 0.8])
    assert index.similarities(query, 0.5).tolist() == pytest.approx([0.5, 0.8])


def test_int8_index_is_within_a_step_of_float32() -> None:
    """The int8 codes times their row scale give every cosine to within ~0.001 (512 dims)."""
    rng = numpy.random.default_rng(3)
    vectors = rng.standard_normal((300, 512)).astype(numpy.float32)
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [VectorRow(i + 1, 0, to_blob(v), math.inf) for i, v in enumerate(vectors)]
    assert not VectorIndex.from_rows("k", 512, rows).quantized  # small: float32, exact
    index = VectorIndex.from_rows("k", 512, rows, quantized=True)
    assert index.codes.dtype == numpy.int8
    assert index.nbytes < vectors.nbytes / 3
    query = vectors[7]
    assert numpy.abs(index.similarities(query) - vectors @ query).max() < 2e-3
    codes, scales = quantize(vectors)
    assert numpy.abs(codes).max() == 127
    assert numpy.allclose(codes * scales[:, None], vectors, atol=scales.max() / 2 + 1e-7)


def test_exact_similarities_are_the_float32_cosines() -> None:
    """The re-score of candidates from their stored float32 vectors: best chunk, or blended."""
    rows = _rows([(1, 0, [1, 0]), (1, 1, [0, 1]), (2, 0, [0.6, 0.8])])
    blobs: dict[int, list[bytes]] = {}
    for row in rows:
        blobs.setdefault(row.memory_id, []).append(row.blob)
    query = numpy.asarray([0, 1], dtype=numpy.float32)
    cosines, whole = exact_similarities(blobs, 2, query, 1.0)
    assert cosines == pytest.approx({1: 1.0, 2: 0.8})
    assert whole[1].tolist() == [1.0, 0.0]
    cosines, _ = exact_similarities(blobs, 2, query, 0.5)
    assert cosines == pytest.approx({1: 0.5, 2: 0.8})
    assert exact_similarities({}, 2, query, 1.0) == ({}, {})


def test_a_float32_index_patched_past_the_threshold_becomes_int8(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vectors, "QUANTIZE_MIN_ROWS", 3)
    index = VectorIndex.from_rows("k", 2, _rows([(1, 0, [1, 0]), (2, 0, [0, 1])]))
    assert not index.quantized
    patched = index.patched(set(), _rows([(3, 0, [1, 1])]))
    assert patched.quantized
    assert patched.ids.tolist() == [1, 2, 3]
    sims = patched.similarities(numpy.asarray([0, 1], dtype=numpy.float32))
    assert sims.tolist() == pytest.approx([0.0, 1.0, math.sqrt(0.5)], abs=2e-3)
    again = patched.patched({1}, _rows([(4, 0, [0, 1])]))
    assert again.quantized
    assert again.ids.tolist() == [2, 3, 4]
