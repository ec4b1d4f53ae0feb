"""Embedders for tests: a deterministic one (no model, no network; moved here from ``core``),
and the built-in USE model shared by every test of a process."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy
import numpy.typing

if TYPE_CHECKING:
    from etos_desktop.core.providers.embedders import UseEmbedder

_shared: UseEmbedder | None = None
_shared_lock = threading.Lock()


def shared_use() -> UseEmbedder:
    """The process's one ``UseEmbedder``; its model loads on its first ``load()`` or embed.

    The model is immutable and loading it costs ~2.5 s of CPU (more under load): the
    ``use_embedder`` fixture and every app a test starts (``EtosApp(use_factory=...)``) share
    it. Loading it for real is what the USE tests, the self-check and the xcb scenario prove.
    """
    global _shared
    with _shared_lock:
        if _shared is None:
            from etos_desktop.core.providers.embedders import UseEmbedder

            _shared = UseEmbedder()
        return _shared


_TOKEN_RE = re.compile(r"[0-9a-z]+|[\u3400-\u9fff\uf900-\ufaff]")


class HashEmbedder:
    """A deterministic bag-of-words embedder for tests (no model, no network).

    Latin words and single CJK characters are hashed into ``dimension`` buckets with a sign, so
    texts sharing words get a positive cosine and unrelated texts get a cosine near zero.

    Args:
        dimension: The vector length.
        key: The embedder key; defaults to ``"hash:<dimension>"``.
    """

    def __init__(self, dimension: int = 64, key: str | None = None) -> None:
        self.dimension = dimension
        self.key = key or f"hash:{dimension}"
        #: How many texts were embedded so far (tests use it to check batching and caching).
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
        """Embed ``texts`` as normalised hashed bags of words.

        Args:
            texts: The texts to embed.

        Returns:
            An array of shape ``(len(texts), dimension)`` with unit rows (zero rows for empty text).
        """
        self.calls += len(texts)
        out = numpy.zeros((len(texts), self.dimension), dtype=numpy.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN_RE.findall(text.lower()):
                digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                out[row, (value >> 1) % self.dimension] += sign
            norm = float(numpy.linalg.norm(out[row]))
            if norm > 0.0:
                out[row] /= norm
        return out
