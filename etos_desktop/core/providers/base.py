"""The provider protocol every LLM / embedding backend implements, and its value types.

Messages are plain OpenAI-format dicts (``{"role": ..., "content": ...}``) because that is
exactly what goes over the wire and what the context trace records.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]


@dataclass(frozen=True)
class Timeouts:
    """Timeouts of one provider, in seconds (DESIGN §4)."""

    connect: float = 10.0
    first_token: float = 120.0
    between_chunks: float = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a failed request (DESIGN §4).

    Retries happen for 429, 500, 502, 503, 504 and connection errors only, before any part of a
    reply arrived.
    """

    max_retries: int = 3
    backoff: tuple[float, ...] = (1.0, 2.0, 4.0)
    max_retry_after: float = 60.0
    retry_statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based).

        Args:
            attempt: How many retries were made before this one.
            retry_after: The server's Retry-After in seconds, if it sent one.

        Returns:
            The server's Retry-After capped at ``max_retry_after``, else the backoff step.
        """
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        return self.backoff[min(attempt, len(self.backoff) - 1)]


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of a streamed tool call; pieces with the same ``index`` belong together."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True)
class Usage:
    """Token usage as reported by the server.

    ``cached_tokens`` is the part of ``prompt_tokens`` the server read from its prompt cache
    (OpenAI's ``prompt_tokens_details.cached_tokens``, DeepSeek's ``prompt_cache_hit_tokens``);
    0 when it said nothing.
    """

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True)
class StreamEvent:
    """One event of a streamed chat completion.

    Exactly one of the fields is meaningful per event, except that the final chunk may carry both
    ``finish_reason`` and ``usage``.
    """

    text: str = ""
    tool_calls: tuple[ToolCallDelta, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    #: Set when the provider is about to retry: seconds it will wait, and why (an error code).
    retry_in: float | None = None
    retry_reason: str | None = None


@dataclass(frozen=True)
class Completion:
    """A non-streamed completion."""

    text: str
    finish_reason: str | None
    usage: Usage | None = None
    tool_calls: tuple[ToolCallDelta, ...] = ()


@dataclass(frozen=True)
class ChatRequest:
    """Everything one chat call sends."""

    model: str
    messages: Sequence[Message]
    temperature: float | None = None
    max_tokens: int | None = None
    tools: Sequence[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


Sleeper = Callable[[float], Awaitable[None]]


class ChatProvider(Protocol):
    """An OpenAI-compatible chat and embedding backend."""

    def stream_chat(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Stream a chat completion; raises a ``ProviderError`` subclass on failure."""
        ...

    async def complete(self, request: ChatRequest) -> Completion:
        """Run a non-streaming chat completion."""
        ...

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` with ``model``; one vector per text, in order."""
        ...

    async def list_models(self) -> list[str]:
        """Return the ids the server's ``/models`` endpoint lists, sorted."""
        ...

    async def aclose(self) -> None:
        """Release the HTTP connections."""
        ...
