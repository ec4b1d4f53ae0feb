"""Background requests that report their usage: a provider source wrapped for one job.

The background workflows (titles, summaries, the profile, consolidation, check-ins) ask their
provider source for a provider and call ``complete`` on it. ``services/jobs.py`` hands each
workflow a :class:`MeteredProviders` named for its job, so every completion's usage is kept
(``store.UsageRepository.record``) without the workflows knowing.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

from etos_desktop.core.errors import StorageError
from etos_desktop.core.providers.base import (
    ChatProvider,
    ChatRequest,
    Completion,
    StreamEvent,
    Usage,
)
from etos_desktop.core.providers.registry import ProviderSource, ResolvedProvider
from etos_desktop.core.storage.database import shielded

log = logging.getLogger(__name__)

#: Keeps the usage of one request: (job, model, usage).
UsageSink = Callable[[str, str, Usage], Awaitable[None]]


class MeteredProviders:
    """A provider source whose providers report each completion's usage for ``job``.

    Args:
        inner: The app's provider source.
        job: The job the requests are for (a ``JobName`` value).
        sink: Keeps the usage (a failure to keep it is logged; the reply still counts).
    """

    def __init__(self, inner: ProviderSource, job: str, sink: UsageSink) -> None:
        self._inner = inner
        self._job = job
        self._sink = sink

    async def resolve(self, provider_id: str | None, model: str | None) -> ResolvedProvider:
        """The inner source's provider, wrapped to report usage."""
        resolved = await self._inner.resolve(provider_id, model)
        metered = _MeteredProvider(resolved.provider, self._job, self._sink)
        return ResolvedProvider(resolved.config, metered, resolved.model)

    def is_configured(self) -> bool:
        """Whether the inner source has a provider."""
        return self._inner.is_configured()


class _MeteredProvider:
    """A ``ChatProvider`` that passes everything on and reports each completion's usage."""

    def __init__(self, inner: ChatProvider, job: str, sink: UsageSink) -> None:
        self._inner = inner
        self._job = job
        self._sink = sink

    def stream_chat(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        return self._inner.stream_chat(request)

    async def complete(self, request: ChatRequest) -> Completion:
        completion = await self._inner.complete(request)
        if completion.usage is not None:
            try:
                await shielded(self._sink(self._job, request.model, completion.usage))
            except StorageError as exc:
                log.warning("the usage of a %s request was not kept: %s", self._job, exc.code)
        return completion

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        return await self._inner.embed(model, texts)

    async def list_models(self) -> list[str]:
        return await self._inner.list_models()

    async def aclose(self) -> None:
        # The inner provider belongs to the registry, which closes it.
        return None
