"""Vectors: their blob format, how a memory is cut into chunks, and the in-memory index.

The index is derived data (DESIGN principle 6): a float32 matrix of one embedder's vectors of the
non-archived memories, rebuilt from ``memory_vector`` rows whenever it is stale. Vector math runs
in the caller's thread; an index object is never modified after it is built, so a search can keep
using the one it started with while another thread builds the next.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

import numpy
import numpy.typing

FloatArray = numpy.typing.NDArray[numpy.float32]
IntArray = numpy.typing.NDArray[numpy.int64]

#: Memories longer than this also get one vector per window of sentences, so a question about one
#: part of a long dialogue-style entry is not drowned by the rest of it. Chunk 0 is always the
#: whole text; a memory's similarity is the best of its chunks.
CHUNK_CHARS = 320
#: At most this many windows besides chunk 0.
MAX_WINDOWS = 12

_SENTENCE_END_RE = re.compile(r"(?<=[.!?。！？；;…\n])\s*")


def chunk_texts(text: str) -> list[str]:
    """The texts embedded for one memory: the whole text, then sentence windows if it is long.

    Args:
        text: The memory's content.

    Returns:
        ``[text]`` for short texts; otherwise ``[text, window1, window2, …]`` where each window is
        a run of whole sentences of at most ``CHUNK_CHARS`` characters (a longer sentence is cut).
    """
    if len(text) <= CHUNK_CHARS:
        return [text]
    pieces: list[str] = []
    for sentence in _SENTENCE_END_RE.split(text):
        sentence = sentence.strip()
        while len(sentence) > CHUNK_CHARS:
            pieces.append(sentence[:CHUNK_CHARS])
            sentence = sentence[CHUNK_CHARS:]
        if sentence:
            pieces.append(sentence)
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


def _matvec(matrix: FloatArray, vector: FloatArray) -> FloatArray:
    # einsum, not BLAS: OpenBLAS's multi-threaded sgemv took 8 ms for 10k×512 on a busy 2-core
    # machine (its threads wait for each other) against 0.5 ms for einsum's single-thread loop.
    result: FloatArray = numpy.einsum("ij,j->i", matrix, numpy.asarray(vector, dtype=numpy.float32))
    return result


class VectorRow(NamedTuple):
    """One stored vector as the index reads it."""

    memory_id: int
    chunk_no: int
    blob: bytes
    valid_until: float


class VectorIndex:
    """One embedder's vectors of the non-archived memories, as a matrix (immutable).

    Rows of one memory are adjacent and in chunk order; similarities are per memory (the best
    chunk). Build one with :meth:`from_rows`.

    Args:
        key: The embedder key the vectors belong to.
        matrix: The vectors, one row per chunk, grouped by memory, chunk 0 first in each group.
        row_ids: The memory id of each row.
        row_valid_until: Each row's memory's ``valid_until`` as a timestamp (``inf``: none).
    """

    def __init__(
        self,
        key: str,
        matrix: FloatArray,
        row_ids: IntArray,
        row_valid_until: numpy.typing.NDArray[numpy.float64],
    ) -> None:
        self.key = key
        self.dim = int(matrix.shape[1])
        self.matrix = matrix
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
    def from_rows(cls, key: str, dim: int, rows: Sequence[VectorRow]) -> VectorIndex:
        """Build an index from stored rows (rows whose size is not ``dim`` floats are skipped)."""
        width = dim * 4
        rows = [r for r in rows if len(r.blob) == width]
        n = len(rows)
        matrix = (
            numpy.frombuffer(b"".join(r.blob for r in rows), dtype="<f4")
            .astype(numpy.float32)
            .reshape(n, dim)
        )
        row_ids = numpy.fromiter((r.memory_id for r in rows), numpy.int64, n)
        valid = numpy.fromiter((r.valid_until for r in rows), numpy.float64, n)
        return cls(key, matrix, row_ids, valid)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._position

    @property
    def nbytes(self) -> int:
        """Memory held by the matrix and the id arrays, in bytes."""
        return int(
            self.matrix.nbytes
            + self.row_ids.nbytes
            + self._row_valid_until.nbytes
            + self.ids.nbytes
            + self._valid_until.nbytes
            + self._starts.nbytes
        )

    def similarities(self, query: FloatArray) -> FloatArray:
        """Cosine of ``query`` (a unit vector) to every memory, in the order of ``ids``."""
        if not len(self.ids):
            return numpy.zeros(0, dtype=numpy.float32)
        sims = _matvec(self.matrix, query)
        if self._single:
            return sims
        return numpy.maximum.reduceat(sims, self._starts)

    def live(self, now: datetime) -> numpy.typing.NDArray[numpy.bool_]:
        """Which memories (in ``ids`` order) have not expired at ``now``."""
        return self._valid_until > now.timestamp()

    def position(self, memory_id: int) -> int | None:
        """The memory's index in ``ids`` (``None`` when it has no vector here)."""
        return self._position.get(memory_id)

    def whole_text_vectors(self, memory_ids: Iterable[int]) -> dict[int, FloatArray]:
        """The chunk-0 (whole-text) vector of each memory that has one."""
        out: dict[int, FloatArray] = {}
        for memory_id in memory_ids:
            i = self._position.get(memory_id)
            if i is not None:
                out[memory_id] = self.matrix[int(self._starts[i])]
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
        whole = self.matrix if self._single else self.matrix[self._starts]
        sims = _matvec(whole, vector)
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
        extra = VectorIndex.from_rows(self.key, self.dim, added)
        if keep.all():
            # Pure additions: one copy, not a masked copy and then another.
            parts = (self.matrix, self.row_ids, self._row_valid_until)
        else:
            parts = (self.matrix[keep], self.row_ids[keep], self._row_valid_until[keep])
        return VectorIndex(
            self.key,
            numpy.concatenate((parts[0], extra.matrix)),
            numpy.concatenate((parts[1], extra.row_ids)),
            numpy.concatenate((parts[2], extra._row_valid_until)),
        )
