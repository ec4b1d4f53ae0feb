"""Vectors: their blob format, how a memory is cut into passages, and the in-memory index.

The index is derived data (DESIGN principle 6): one embedder's vectors of the non-archived
memories, rebuilt from ``memory_vector`` rows whenever it is stale. From ``QUANTIZE_MIN_ROWS``
rows on it holds int8 codes with one float32 scale per row (a quarter of the float32 matrix:
49 MiB instead of 195 MiB at 100k × 512) and search re-scores its candidates from the stored
float32 rows; a smaller index keeps the float32 vectors (exact, and no re-score to pay). Vector
math runs in the caller's thread; an index object is never modified after it is built, so a
search can keep using the one it started with while another thread builds the next.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import numpy
import numpy.typing

FloatArray = numpy.typing.NDArray[numpy.float32]
IntArray = numpy.typing.NDArray[numpy.int64]
CodeArray = numpy.typing.NDArray[numpy.int8]
AnyArray = numpy.typing.NDArray[Any]

#: An index of at least this many rows (chunks) is held as int8. Below, the float32 matrix is at
#: most 39 MiB and search reads its cosines from it; above, the re-score of the candidates from
#: the stored rows (~3 ms of a 10k-memory search on a busy machine) buys back 150 MiB at 100k.
QUANTIZE_MIN_ROWS = 20_000
#: Rows quantized at a time while an index is built (bounds the float32 temporaries to ~8 MiB).
_QUANTIZE_BLOCK = 4096

#: A passage is at most this long; a longer sentence is cut, and when a memory has more than
#: ``MAX_WINDOWS`` sentences they are grouped into windows of whole sentences up to this length.
CHUNK_CHARS = 320
#: At most this many passages besides chunk 0 (the whole text).
MAX_WINDOWS = 12
#: A sentence shorter than this ("Okay.", "好的。"; a CJK character counts 2.5) joins the next
#: one: alone it matches little.
MIN_PASSAGE_CHARS = 16

_SENTENCE_END_RE = re.compile(r"(?<=[.!?。！？；;…\n])\s*")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _weight(piece: str) -> float:
    # A CJK character says about as much as a short English word (2.5 characters with its space).
    return len(piece) + 1.5 * len(_CJK_RE.findall(piece))


def _join(left: str, right: str) -> str:
    return f"{left}{right}" if _CJK_RE.match(right) or not left else f"{left} {right}"


def _sentences(text: str) -> list[str]:
    pieces: list[str] = []
    for sentence in _SENTENCE_END_RE.split(text):
        sentence = sentence.strip()
        while len(sentence) > CHUNK_CHARS:
            pieces.append(sentence[:CHUNK_CHARS])
            sentence = sentence[CHUNK_CHARS:]
        if sentence:
            pieces.append(sentence)
    merged: list[str] = []
    carry = ""
    for piece in pieces:
        piece = _join(carry, piece)
        if _weight(piece) < MIN_PASSAGE_CHARS:
            carry = piece
            continue
        carry = ""
        merged.append(piece)
    if carry:
        if merged:
            merged[-1] = _join(merged[-1], carry)
        else:
            merged.append(carry)
    return merged


def chunk_texts(text: str, *, passages: bool = True) -> list[str]:
    """The texts embedded for one memory: the whole text, then its passages.

    A memory of more than one sentence also gets a vector per sentence (issue 10: a long
    dialogue turn or an imported note must be found by a question about any one of its
    sentences); with more than ``MAX_WINDOWS`` sentences, the passages are windows of whole
    sentences of at most ``CHUNK_CHARS`` characters. Chunk 0 is always the whole text; search
    scores a memory by its whole text and its best passage (``VectorIndex.similarities``).

    Args:
        text: The memory's content.
        passages: ``False`` for an embedder whose tuning does not score passages
            (``Tuning.passage_weight`` 0): then only a text too long for one vector is cut.

    Returns:
        ``[text]`` for a single sentence; otherwise ``[text, passage1, passage2, …]``.
    """
    if not passages and len(text) <= CHUNK_CHARS:
        return [text]
    pieces = _sentences(text)
    if len(pieces) < 2:
        if len(text) <= CHUNK_CHARS:
            return [text]
        # One very long "sentence" (no punctuation): it was cut into CHUNK_CHARS pieces.
        pieces = [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)]
        return [text, *pieces[:MAX_WINDOWS]]
    if len(pieces) <= MAX_WINDOWS:
        return [text, *pieces]
    windows: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current} {piece}".strip() if current else piece
        if len(candidate) <= CHUNK_CHARS:
            current = candidate
        else:
            windows.append(current)
            current = piece
    if current:
        windows.append(current)
    return [text, *windows[:MAX_WINDOWS]]


def to_blob(vector: FloatArray) -> bytes:
    """Encode one vector as little-endian float32 bytes."""
    return numpy.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dim: int) -> FloatArray:
    """Decode one vector written by :func:`to_blob`."""
    return numpy.frombuffer(blob, dtype="<f4", count=dim).astype(numpy.float32)


def timestamp(value: datetime | None) -> float:
    """Seconds since the epoch, ``inf`` for ``None`` (a ``valid_until`` that never ends)."""
    return float("inf") if value is None else value.timestamp()


def quantize(matrix: FloatArray) -> tuple[CodeArray, FloatArray]:
    """Each row as int8 codes times one float32 scale (symmetric: ``row ≈ codes · scale``).

    The scale is the row's largest magnitude / 127, so a unit vector of 512 dimensions is off by
    at most half a step (~0.001) per component and its dot product with a unit query by about
    0.0005 (measured on USE vectors: tests/bench/retrieval_speed.py prints the error).

    Args:
        matrix: Rows to quantize (float32).

    Returns:
        The codes (same shape, int8) and the scales (one per row).
    """
    peak = numpy.abs(matrix).max(axis=1) if matrix.size else numpy.zeros(len(matrix))
    scales = (peak / 127.0).astype(numpy.float32)
    scales[scales == 0] = 1.0
    codes = numpy.rint(matrix / scales[:, None]).astype(numpy.int8)
    return codes, scales


def _quantized(matrix: FloatArray) -> tuple[CodeArray, FloatArray]:
    """:func:`quantize` a block of rows at a time (bounds the float32 temporaries)."""
    codes = numpy.empty(matrix.shape, dtype=numpy.int8)
    scales = numpy.empty(len(matrix), dtype=numpy.float32)
    for start in range(0, len(matrix), _QUANTIZE_BLOCK):
        end = start + _QUANTIZE_BLOCK
        codes[start:end], scales[start:end] = quantize(matrix[start:end])
    return codes, scales


def _matvec(codes: AnyArray, scales: FloatArray, vector: FloatArray) -> FloatArray:
    # einsum, not BLAS: OpenBLAS's multi-threaded sgemv took 8 ms for 10k×512 on a busy 2-core
    # machine (its threads wait for each other) against 0.5 ms for einsum's single-thread loop;
    # BLAS has no int8 kernel anyway. The int8 × float32 loop reads a quarter of the bytes.
    result: FloatArray = numpy.einsum("ij,j->i", codes, numpy.asarray(vector, dtype=numpy.float32))
    result *= scales
    return result


def exact_similarities(
    blobs: Mapping[int, Sequence[bytes]], dim: int, query: FloatArray, passage_weight: float
) -> tuple[dict[int, float], dict[int, FloatArray]]:
    """Float32 cosines of stored vectors to ``query``, per memory, as the float32 matrix gave.

    The int8 index only chooses candidates; their scores come from here, so what search ranks
    is what it ranked before the index was quantized.

    Args:
        blobs: Each memory's stored vectors (:func:`to_blob`, ``dim`` floats), chunk 0 first.
        dim: The vectors' dimension.
        query: The query vector (unit length).
        passage_weight: As in :meth:`VectorIndex.similarities`.

    Returns:
        The cosine of each memory, and its whole-text (chunk 0) vector.
    """
    ids = list(blobs)
    if not ids:
        return {}, {}
    counts = numpy.fromiter((len(blobs[i]) for i in ids), numpy.int64, len(ids))
    flat = b"".join(blob for i in ids for blob in blobs[i])
    matrix = numpy.frombuffer(flat, dtype="<f4").astype(numpy.float32).reshape(-1, dim)
    sims: FloatArray = numpy.einsum("ij,j->i", matrix, numpy.asarray(query, dtype=numpy.float32))
    starts = numpy.concatenate(([0], numpy.cumsum(counts)[:-1]))
    if len(matrix) == len(ids):
        combined = sims
    else:
        best = numpy.maximum.reduceat(sims, starts)
        whole = sims[starts]
        combined = (
            best
            if passage_weight >= 1.0
            else whole + numpy.float32(passage_weight) * (best - whole)
        )
    values = combined.tolist()
    cosines = dict(zip(ids, values, strict=True))
    vectors = {i: matrix[int(start)] for i, start in zip(ids, starts.tolist(), strict=True)}
    return cosines, vectors


class VectorRow(NamedTuple):
    """One stored vector as the index reads it."""

    memory_id: int
    chunk_no: int
    blob: bytes
    valid_until: float


class VectorIndex:
    """One embedder's vectors of the non-archived memories (immutable).

    Rows of one memory are adjacent and in chunk order; similarities are per memory (the best
    chunk). Build one with :meth:`from_rows`.

    Args:
        key: The embedder key the vectors belong to.
        codes: The vectors' int8 codes (:func:`quantize`), or the float32 vectors themselves
            (with scales of 1), one row per chunk, grouped by memory, chunk 0 first in each group.
        scales: Each row's scale: the vector is ``codes[i] · scales[i]``.
        row_ids: The memory id of each row.
        row_valid_until: Each row's memory's ``valid_until`` as a timestamp (``inf``: none).
    """

    def __init__(
        self,
        key: str,
        codes: AnyArray,
        scales: FloatArray,
        row_ids: IntArray,
        row_valid_until: numpy.typing.NDArray[numpy.float64],
    ) -> None:
        self.key = key
        self.dim = int(codes.shape[1])
        self.codes = codes
        self.scales = scales
        #: Whether the vectors are int8 codes (cosines off by ~0.0005: search re-scores).
        self.quantized = codes.dtype == numpy.int8
        self.row_ids = row_ids
        self._row_valid_until = row_valid_until
        n = len(row_ids)
        if n:
            self._starts = numpy.flatnonzero(
                numpy.concatenate(([True], row_ids[1:] != row_ids[:-1]))
            )
        else:
            self._starts = numpy.zeros(0, dtype=numpy.int64)
        #: The memory ids, one per memory, in index order.
        self.ids: IntArray = row_ids[self._starts]
        self._valid_until = row_valid_until[self._starts]
        self._single = len(self._starts) == n
        self._position = {int(memory_id): i for i, memory_id in enumerate(self.ids.tolist())}

    @classmethod
    def from_rows(
        cls, key: str, dim: int, rows: Sequence[VectorRow], quantized: bool | None = None
    ) -> VectorIndex:
        """Build an index from stored rows (rows whose size is not ``dim`` floats are skipped).

        Args:
            key: The embedder key.
            dim: The vectors' dimension.
            rows: The stored rows, grouped by memory, in chunk order.
            quantized: Hold int8 codes; ``None``: from ``QUANTIZE_MIN_ROWS`` rows on.
        """
        width = dim * 4
        rows = [r for r in rows if len(r.blob) == width]
        n = len(rows)
        if quantized is None:
            quantized = n >= QUANTIZE_MIN_ROWS
        codes: AnyArray = numpy.empty((n, dim), dtype=numpy.int8 if quantized else numpy.float32)
        scales = numpy.ones(n, dtype=numpy.float32)
        for start in range(0, n, _QUANTIZE_BLOCK):
            block = rows[start : start + _QUANTIZE_BLOCK]
            matrix = numpy.frombuffer(b"".join(r.blob for r in block), dtype="<f4").reshape(
                len(block), dim
            )
            end = start + len(block)
            if quantized:
                codes[start:end], scales[start:end] = quantize(matrix.astype(numpy.float32))
            else:
                codes[start:end] = matrix
        row_ids = numpy.fromiter((r.memory_id for r in rows), numpy.int64, n)
        valid = numpy.fromiter((r.valid_until for r in rows), numpy.float64, n)
        return cls(key, codes, scales, row_ids, valid)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._position

    @property
    def nbytes(self) -> int:
        """Memory held by the vectors (codes), the scales and the id arrays, in bytes."""
        return int(
            self.codes.nbytes
            + self.scales.nbytes
            + self.row_ids.nbytes
            + self._row_valid_until.nbytes
            + self.ids.nbytes
            + self._valid_until.nbytes
            + self._starts.nbytes
        )

    def similarities(self, query: FloatArray, passage_weight: float = 1.0) -> FloatArray:
        """Cosine of ``query`` (a unit vector) to every memory, in the order of ``ids``.

        Args:
            query: The query vector.
            passage_weight: How much a better-matching passage lifts a memory above its whole
                text's cosine: ``whole + passage_weight · max(0, best passage − whole)``; 1.0
                scores a memory by its best chunk, 0.0 by its whole text only.

        Returns:
            One similarity per memory.
        """
        if not len(self.ids):
            return numpy.zeros(0, dtype=numpy.float32)
        sims = _matvec(self.codes, self.scales, query)
        if self._single:
            return sims
        best = numpy.maximum.reduceat(sims, self._starts)
        if passage_weight >= 1.0:
            return best
        whole = sims[self._starts]
        combined: FloatArray = whole + numpy.float32(passage_weight) * (best - whole)
        return combined

    def live(self, now: datetime) -> numpy.typing.NDArray[numpy.bool_]:
        """Which memories (in ``ids`` order) have not expired at ``now``."""
        return self._valid_until > now.timestamp()

    def position(self, memory_id: int) -> int | None:
        """The memory's index in ``ids`` (``None`` when it has no vector here)."""
        return self._position.get(memory_id)

    def whole_text_vectors(self, memory_ids: Iterable[int]) -> dict[int, FloatArray]:
        """The chunk-0 (whole-text) vector of each memory that has one (decoded if int8)."""
        out: dict[int, FloatArray] = {}
        for memory_id in memory_ids:
            i = self._position.get(memory_id)
            if i is not None:
                row = int(self._starts[i])
                out[memory_id] = self.codes[row].astype(numpy.float32) * self.scales[row]
        return out

    def nearest_whole_text(self, vector: FloatArray, now: datetime) -> tuple[int, float] | None:
        """The live memory whose whole-text vector is closest to ``vector``, with the cosine."""
        nearest = self.nearest_whole_texts(vector, now, 1)
        return nearest[0] if nearest else None

    def nearest_whole_texts(
        self, vector: FloatArray, now: datetime, n: int, at_least: float = -1.0
    ) -> list[tuple[int, float]]:
        """The ``n`` live memories whose whole-text vectors are closest to ``vector``.

        Args:
            vector: A unit vector.
            now: Memories expired at this time are skipped.
            n: The most returned.
            at_least: Only cosines of at least this.

        Returns:
            ``(memory id, cosine)`` pairs, most similar first.
        """
        if not len(self.ids) or n <= 0:
            return []
        if self._single:
            sims = _matvec(self.codes, self.scales, vector)
        else:
            sims = _matvec(self.codes[self._starts], self.scales[self._starts], vector)
        sims = numpy.where(self.live(now) & (sims >= at_least), sims, -numpy.inf)
        n = min(n, len(sims))
        top = numpy.argpartition(-sims, n - 1)[:n]
        top = top[numpy.argsort(-sims[top], kind="stable")]
        return [(int(self.ids[i]), float(sims[i])) for i in top if numpy.isfinite(sims[i])]

    def patched(self, removed: Iterable[int], added: Sequence[VectorRow]) -> VectorIndex:
        """A new index without ``removed`` memories' rows and with ``added`` appended.

        Args:
            removed: Memories whose rows go (also the ones being re-added).
            added: New rows, grouped by memory and in chunk order.

        Returns:
            The new index; this one is unchanged.
        """
        gone = numpy.fromiter(set(removed), numpy.int64)
        keep = ~numpy.isin(self.row_ids, gone)
        extra = VectorIndex.from_rows(self.key, self.dim, added, quantized=self.quantized)
        if keep.all():
            # Pure additions: one copy, not a masked copy and then another.
            parts = (self.codes, self.scales, self.row_ids, self._row_valid_until)
        else:
            parts = (
                self.codes[keep],
                self.scales[keep],
                self.row_ids[keep],
                self._row_valid_until[keep],
            )
        codes = numpy.concatenate((parts[0], extra.codes))
        scales = numpy.concatenate((parts[1], extra.scales))
        if not self.quantized and len(codes) >= QUANTIZE_MIN_ROWS:
            codes, scales = _quantized(codes)
        return VectorIndex(
            self.key,
            codes,
            scales,
            numpy.concatenate((parts[2], extra.row_ids)),
            numpy.concatenate((parts[3], extra._row_valid_until)),
        )
