"""The OpenAI-compatible provider: the only module of the app that imports ``openai``.

It turns the client's behaviour into the app's contract (DESIGN §4):

* The client never retries on its own (``max_retries=0``); this module retries 429, 5xx
  (``RetryPolicy.retry_statuses``) and connection errors (refused, reset, or a connect timeout)
  before the first part of a reply arrived,
  announcing each retry as a ``StreamEvent(retry_in=..., retry_reason=...)`` so the chat can show
  "rate limited — retrying in 4 s". Sleeping goes through the injected ``sleep``, so tests never
  wait.
* Timeouts come in three phases (``ProviderTimeout.params["phase"]``): ``connect`` (httpx2's connect
  timeout), ``first_token`` (from sending the request to the first chunk that carries content, a
  tool call or a finish reason) and ``between_chunks``. The last two are asyncio deadlines around
  the stream; httpx2's read timeout is only a backstop, set to the larger of the two, because it
  also covers the wait for the response headers, which some servers hold back until the first token.
* Every exception the client raises is mapped to ``core.errors``; details are redacted and the API
  key is removed from them even when it does not look like one.
* A dropped connection after part of the reply arrived ends the stream without a ``finish_reason``:
  the caller marks the reply interrupted. Measured with openai 3.57 / httpx2 2.16: on an HTTP/1.1
  chunked stream the client *raises* ``APIConnectionError`` after yielding what arrived; on a
  close-delimited (HTTP/1.0) stream it ends silently. Both become the same "just ends" here.

Thread/loop contract: every coroutine runs on the caller's event loop; nothing touches Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import ssl
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai
import pydantic
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from etos_desktop.core.errors import (
    AuthError,
    BadRequest,
    ContextTooLong,
    MalformedResponse,
    ModelNotFound,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    ServerError,
)
from etos_desktop.core.providers.base import (
    ChatRequest,
    Completion,
    RetryPolicy,
    Sleeper,
    StreamEvent,
    Timeouts,
    ToolCallDelta,
    Usage,
)

__all__ = ["OpenAIProvider", "probe_local_servers"]

_log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Sent as the key when none is configured: local servers (Ollama, LM Studio) ignore it, and the
#: client refuses to start without one.
NO_KEY_PLACEHOLDER = "not-needed"

#: Phrases servers use when a request exceeds the context window (OpenAI, vLLM, llama.cpp,
#: DeepSeek, Moonshot, DashScope word it differently).
_CONTEXT_PHRASES = (
    "context_length_exceeded",
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "reduce the length",
    "exceeds the context",
)

_MALFORMED_ERRORS: tuple[type[Exception], ...] = (
    json.JSONDecodeError,
    UnicodeDecodeError,
    pydantic.ValidationError,
    openai.APIResponseValidationError,
)
_CLIENT_ERRORS: tuple[type[Exception], ...] = (openai.OpenAIError, *_MALFORMED_ERRORS)
#: What reading a reply of the wrong shape raises (the client builds its models without
#: validation, so a list where an object belongs surfaces as one of these). Caught only around
#: calls that parse a server's reply, and chained, so a bug of ours still shows its traceback.
_SHAPE_ERRORS: tuple[type[Exception], ...] = (AttributeError, TypeError, KeyError, ValueError)


_TLS_LOCK = threading.Lock()
_TLS: list[ssl.SSLContext] = []


def _tls_context() -> ssl.SSLContext:
    """The HTTP clients' shared TLS context (the system's CA certificates, as httpx loads them).

    Built on first use, in whichever thread builds the first provider (the registry builds
    them off the UI thread); an SSL context may serve many connections at once.
    """
    with _TLS_LOCK:
        if not _TLS:
            _TLS.append(httpx2.create_ssl_context())
        return _TLS[0]


class OpenAIProvider:
    """A ``ChatProvider`` for any OpenAI-compatible endpoint, built on ``openai.AsyncOpenAI``.

    Args:
        base_url: The endpoint, e.g. ``https://api.openai.com/v1`` or ``http://localhost:11434/v1``.
        api_key: The key, or ``None`` for local servers that need none. Never logged and never
            part of an error.
        timeouts: Connect, first-token and between-chunk timeouts.
        retry: How often and how long to wait before retrying.
        sleep: Awaited with the delay before each retry (tests inject a recorder).
        http_client: An ``httpx2.AsyncClient`` to use instead of the client's own (tests pass one
            with a ``MockTransport``). It is closed by :meth:`aclose`.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen dataclass, immutable
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen dataclass, immutable
        sleep: Sleeper = asyncio.sleep,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._secret = api_key or None
        self._timeouts = timeouts
        self._retry = retry
        self._sleep = sleep
        # Off for good once the server rejects ``stream_options`` (older vLLM, some proxies).
        self._stream_usage_supported = True
        self._client = openai.AsyncOpenAI(
            base_url=self._base_url,
            api_key=api_key or NO_KEY_PLACEHOLDER,
            max_retries=0,
            timeout=httpx2.Timeout(
                connect=timeouts.connect,
                read=max(timeouts.first_token, timeouts.between_chunks),
                write=max(timeouts.connect, timeouts.between_chunks),
                pool=timeouts.connect,
            ),
            # One TLS context for every provider of the process: loading the CA certificates
            # took 50-100 ms for each client (each provider, each test).
            http_client=http_client or openai.DefaultAsyncHttpxClient(verify=_tls_context()),
        )

    @property
    def base_url(self) -> str:
        """The endpoint this provider talks to."""
        return self._base_url

    async def __aenter__(self) -> OpenAIProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Release the HTTP connections (and close ``http_client`` if one was given)."""
        await self._client.close()

    # -- chat ----------------------------------------------------------------------------------

    async def stream_chat(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Stream a chat completion.

        Use it with ``contextlib.aclosing`` (or break and ``aclose()``): closing the generator
        closes the HTTP response, which is how Stop works.

        Args:
            request: Model, messages and options.

        Yields:
            Text deltas, tool-call deltas, the finish reason and usage, as they arrive; before a
            retry, an event with ``retry_in`` (seconds) and ``retry_reason`` (an error code). A
            stream that ends without an event carrying ``finish_reason`` was interrupted.

        Raises:
            ProviderError: A subclass from ``core.errors`` once retries are exhausted, on an error
                that is never retried, on a timeout, or on a malformed chunk (after the events
                that arrived before it).
        """
        attempt = 0
        while True:
            started = False
            try:
                # aclosing: a consumer that stops early must hang up on the server now, not
                # whenever the abandoned inner generator is garbage-collected.
                async with contextlib.aclosing(self._stream_attempt(request)) as events:
                    async for event in events:
                        started = True
                        yield event
                return
            except ProviderError as error:
                if started or not self._should_retry(error, attempt):
                    raise
                delay = self._retry.delay(attempt, error.params.get("retry_after"))
                reason = error.code
                attempt += 1
                _log.info("retrying chat request in %.1f s (%s)", delay, reason)
            yield StreamEvent(retry_in=delay, retry_reason=reason)
            await self._sleep(delay)

    async def _stream_attempt(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """One HTTP request of :meth:`stream_chat`; raises mapped errors."""
        loop = asyncio.get_running_loop()
        first_token_deadline = loop.time() + self._timeouts.first_token
        phase = "first_token"
        stream = None
        try:
            try:
                async with asyncio.timeout_at(first_token_deadline):
                    stream = await self._open_stream(request)
                    fallback = await _non_stream_reply(stream.response)
                if fallback is not None:
                    yield fallback
                    return
                iterator = stream.__aiter__()
                while True:
                    deadline = (
                        first_token_deadline
                        if phase == "first_token"
                        else loop.time() + self._timeouts.between_chunks
                    )
                    async with asyncio.timeout_at(deadline):
                        try:
                            chunk = await anext(iterator)
                        except StopAsyncIteration:
                            return
                    event = _event_from_chunk(chunk)
                    if event is None:
                        continue
                    phase = "between_chunks"
                    yield event
            except TimeoutError:
                raise ProviderTimeout(
                    f"no data from the server within the {phase} timeout", phase=phase
                ) from None
            except openai.APIConnectionError as exc:
                if phase == "between_chunks" and not isinstance(exc, openai.APITimeoutError):
                    # The connection dropped after part of the reply arrived: end without a
                    # finish_reason so the caller marks the reply interrupted.
                    _log.info("stream from %s ended by a dropped connection", self._safe_url())
                    return
                raise self._map_error(exc, request.model, phase) from None
            except _CLIENT_ERRORS as exc:
                raise self._map_error(exc, request.model, phase) from None
            except _SHAPE_ERRORS as exc:
                raise self._shape_error(exc, request.model) from exc
        finally:
            if stream is not None:
                await stream.close()

    async def _open_stream(self, request: ChatRequest) -> openai.AsyncStream[ChatCompletionChunk]:
        """Send the streaming request, falling back once if ``stream_options`` is refused."""
        include_usage = self._stream_usage_supported
        try:
            return await self._create_stream(request, include_usage=include_usage)
        except openai.BadRequestError as exc:
            if not include_usage or not _mentions_stream_options(exc):
                raise
            _log.info("server refused stream_options; streaming without usage from now on")
        stream = await self._create_stream(request, include_usage=False)
        self._stream_usage_supported = False
        return stream

    async def _create_stream(
        self, request: ChatRequest, *, include_usage: bool
    ) -> openai.AsyncStream[ChatCompletionChunk]:
        return await self._client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            body=_chat_body(request, stream=True, include_usage=include_usage),
            stream=True,
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )

    async def complete(self, request: ChatRequest) -> Completion:
        """Run a non-streaming chat completion, with the same retry policy (retries are silent).

        Args:
            request: Model, messages and options.

        Returns:
            The completion's text, finish reason, usage and tool calls.

        Raises:
            ProviderError: A subclass from ``core.errors``.
        """

        async def call() -> Completion:
            response = await self._client.post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body=_chat_body(request, stream=False),
            )
            return _completion_from(response)

        return await self._with_retries(call, model=request.model)

    # -- embeddings and models -----------------------------------------------------------------

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` with ``model``.

        Args:
            model: The embedding model id.
            texts: The texts; an empty sequence sends no request.

        Returns:
            One vector per text, in the order of ``texts``.

        Raises:
            ProviderError: A subclass from ``core.errors``; ``MalformedResponse`` when the server
                returns a different number of vectors.
        """
        if not texts:
            return []

        async def call() -> list[list[float]]:
            response = await self._client.embeddings.create(
                model=model, input=list(texts), encoding_format="float"
            )
            items = getattr(response, "data", None)
            if not isinstance(items, list):
                raise MalformedResponse("embedding response without data", model=model)
            if len(items) != len(texts):
                raise MalformedResponse(
                    f"asked for {len(texts)} embeddings, got {len(items)}", model=model
                )
            ordered = sorted(
                enumerate(items),
                key=lambda pair: _int_or(getattr(pair[1], "index", None), pair[0]),
            )
            return [[float(x) for x in item.embedding] for _, item in ordered]

        return await self._with_retries(call, model=model)

    async def list_models(self) -> list[str]:
        """Return the model ids the server's ``/models`` endpoint lists, sorted.

        Raises:
            ProviderError: A subclass from ``core.errors``.
        """

        async def call() -> list[str]:
            ids = {getattr(model, "id", None) async for model in self._client.models.list()}
            return sorted(i for i in ids if isinstance(i, str))

        return await self._with_retries(call, model=None)

    # -- retries and error mapping -------------------------------------------------------------

    async def _with_retries(self, call: Callable[[], Awaitable[_T]], *, model: str | None) -> _T:
        attempt = 0
        while True:
            try:
                try:
                    return await call()
                except _CLIENT_ERRORS as exc:
                    raise self._map_error(exc, model, "first_token") from None
                except _SHAPE_ERRORS as exc:
                    raise self._shape_error(exc, model) from exc
            except ProviderError as error:
                if not self._should_retry(error, attempt):
                    raise
                delay = self._retry.delay(attempt, error.params.get("retry_after"))
                attempt += 1
                _log.info("retrying request in %.1f s (%s)", delay, error.code)
            await self._sleep(delay)

    def _should_retry(self, error: ProviderError, attempt: int) -> bool:
        if attempt >= self._retry.max_retries:
            return False
        if isinstance(error, RateLimited | ServerError):
            return error.params.get("status") in self._retry.retry_statuses
        if isinstance(error, ProviderTimeout):
            # Nothing reached the server when connecting timed out: a connection error like a
            # refused one. A first-token or between-chunks timeout is not retried (three more
            # 120 s waits for a model that is still loading would take 8 minutes).
            return error.params.get("phase") == "connect"
        return isinstance(error, ProviderUnavailable)

    def _map_error(self, exc: BaseException, model: str | None, phase: str) -> ProviderError:
        """Translate an exception of the client into the app's error tree."""
        detail = self._scrub(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, openai.APITimeoutError):
            if isinstance(exc.__cause__, httpx2.ConnectTimeout | httpx2.PoolTimeout):
                phase = "connect"
            return ProviderTimeout(detail, phase=phase)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            if cause is not None:
                detail = self._scrub(f"{detail} ({type(cause).__name__}: {cause})")
            return ProviderUnavailable(detail, base_url=self._safe_url())
        if isinstance(exc, openai.APIStatusError):
            return self._map_status_error(exc, detail, model)
        if isinstance(exc, _MALFORMED_ERRORS):
            return MalformedResponse(detail, model=model)
        if isinstance(exc, openai.APIError):
            # An error event inside an otherwise fine stream (OpenRouter, some proxies do this).
            return ServerError(detail, status=None, retry_after=None)
        return ProviderError(detail)

    def _map_status_error(
        self, exc: openai.APIStatusError, detail: str, model: str | None
    ) -> ProviderError:
        status = exc.status_code
        if status in (401, 403):
            return AuthError(detail, status=status)
        if status == 404:
            return ModelNotFound(detail, model=model, status=status)
        if status == 429:
            return RateLimited(detail, status=status, retry_after=_retry_after(exc.response))
        if status >= 500:
            return ServerError(detail, status=status, retry_after=_retry_after(exc.response))
        if status == 413 or _is_context_error(exc):
            return ContextTooLong(detail, model=model, status=status)
        return BadRequest(detail, status=status)

    def _shape_error(self, exc: Exception, model: str | None) -> MalformedResponse:
        detail = self._scrub(f"unexpected reply shape ({type(exc).__name__}: {exc})")
        return MalformedResponse(detail, model=model)

    def _scrub(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "[redacted]")
        return text

    def _safe_url(self) -> str:
        """The base URL without user info, query or fragment, which may carry credentials."""
        parts = urlsplit(self._base_url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, "", ""))


# -- helpers -----------------------------------------------------------------------------------


def _chat_body(
    request: ChatRequest, *, stream: bool, include_usage: bool = False
) -> dict[str, Any]:
    """The JSON body of a chat completion request, as plain data.

    Sent with the client's ``post``, not ``chat.completions.create``: ``create`` walks every
    message against the request's type hints first (to rename aliased keys, which chat
    messages have none of) — ~1 ms a message on the event loop, a stall of over a second for a
    long conversation that fits a large context window. The messages are JSON-ready already.
    """
    body: dict[str, Any] = {"model": request.model, "messages": list(request.messages)}
    body["stream"] = stream
    if stream and include_usage:
        body["stream_options"] = {"include_usage": True}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.tools:
        body["tools"] = list(request.tools)
    body.update(request.extra)
    return body


def _int_or(value: object, default: int) -> int:
    return value if isinstance(value, int) else default


def _error_text(exc: openai.APIStatusError) -> str:
    parts = [str(exc), exc.code or "", exc.param or ""]
    if exc.body is not None:
        parts.append(str(exc.body))
    return " ".join(parts).lower()


def _is_context_error(exc: openai.APIStatusError) -> bool:
    text = _error_text(exc)
    return any(phrase in text for phrase in _CONTEXT_PHRASES)


def _mentions_stream_options(exc: openai.APIStatusError) -> bool:
    text = _error_text(exc)
    return "stream_options" in text or "include_usage" in text


def _retry_after(response: httpx2.Response) -> float | None:
    """The server's requested wait in seconds (``retry-after-ms``, seconds or an HTTP date)."""
    headers = response.headers
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _field(value: Any, name: str) -> Any:
    """``value.name`` or ``value[name]``: a reply built with ``construct`` keeps nested dicts."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage_from(usage: Any) -> Usage | None:
    if usage is None:
        return None
    # OpenAI (and most compatible servers) nest the cache hits; DeepSeek names them on top.
    cached = _count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens")) or _count(
        _field(usage, "prompt_cache_hit_tokens")
    )
    prompt = _count(_field(usage, "prompt_tokens"))
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=_count(_field(usage, "completion_tokens")),
        total_tokens=_count(_field(usage, "total_tokens")),
        cached_tokens=min(cached, prompt),
    )


def _event_from_chunk(chunk: ChatCompletionChunk) -> StreamEvent | None:
    """The event a chunk carries, or ``None`` for chunks with nothing in them (the role chunk)."""
    usage = _usage_from(getattr(chunk, "usage", None))
    text = ""
    tool_calls: list[ToolCallDelta] = []
    finish_reason: str | None = None
    for choice in getattr(chunk, "choices", None) or ():
        if getattr(choice, "index", 0) != 0:
            continue
        delta = getattr(choice, "delta", None)
        if delta is not None:
            text += getattr(delta, "content", None) or ""
            for position, call in enumerate(getattr(delta, "tool_calls", None) or ()):
                function = getattr(call, "function", None)
                index = getattr(call, "index", None)
                tool_calls.append(
                    ToolCallDelta(
                        index=index if isinstance(index, int) else position,
                        id=getattr(call, "id", None),
                        name=getattr(function, "name", None),
                        arguments=getattr(function, "arguments", None) or "",
                    )
                )
        finish_reason = getattr(choice, "finish_reason", None) or finish_reason
    if not text and not tool_calls and finish_reason is None and usage is None:
        return None
    return StreamEvent(
        text=text, tool_calls=tuple(tool_calls), finish_reason=finish_reason, usage=usage
    )


async def _non_stream_reply(response: httpx2.Response) -> StreamEvent | None:
    """The whole reply when a server answered a streaming request with something else.

    Some proxies ignore ``stream: true`` and send one JSON completion; a wrong base URL often
    gets an HTML page with status 200. Anything else is read as an event stream.

    Raises:
        MalformedResponse: For an HTML page or a JSON body that is not a completion.
    """
    content_type = response.headers.get("content-type", "").lower()
    if "event-stream" in content_type:
        return None
    if "html" in content_type:
        raise MalformedResponse(f"expected an event stream, got {content_type}")
    if "json" not in content_type:
        return None
    data = json.loads(await response.aread())
    if not isinstance(data, dict):
        raise MalformedResponse("expected an event stream, got a JSON value")
    completion = _completion_from(ChatCompletion.construct(**data))
    return StreamEvent(
        text=completion.text,
        tool_calls=completion.tool_calls,
        finish_reason=completion.finish_reason,
        usage=completion.usage,
    )


def _completion_from(response: ChatCompletion) -> Completion:
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse("completion without choices")
    choice = choices[0]
    message = choice.message
    tool_calls = tuple(
        ToolCallDelta(
            index=index, id=call.id, name=call.function.name, arguments=call.function.arguments
        )
        for index, call in enumerate(message.tool_calls or ())
        if call.type == "function"
    )
    return Completion(
        text=message.content or "",
        finish_reason=choice.finish_reason,
        usage=_usage_from(response.usage),
        tool_calls=tool_calls,
    )


async def probe_local_servers(candidates: Sequence[str], timeout: float = 0.5) -> list[str]:
    """Find which of ``candidates`` answer ``GET {base_url}/models`` with a model list.

    Used to detect a running Ollama or LM Studio; the addresses are parameters so tests never
    probe real ports.

    Args:
        candidates: Base URLs such as ``http://localhost:11434/v1``.
        timeout: Seconds each probe may take in total.

    Returns:
        The candidates that answered, in the order given.
    """

    async def answers(client: httpx2.AsyncClient, base_url: str) -> bool:
        try:
            async with asyncio.timeout(timeout):
                response = await client.get(base_url.rstrip("/") + "/models")
                payload = response.json() if response.status_code == 200 else None
        except (TimeoutError, httpx2.HTTPError, ValueError):
            return False
        return isinstance(payload, dict) and isinstance(payload.get("data"), list)

    if not candidates:
        return []
    async with httpx2.AsyncClient(timeout=timeout, trust_env=False) as client:
        results = await asyncio.gather(*(answers(client, url) for url in candidates))
    return [url for url, ok in zip(candidates, results, strict=True) if ok]
