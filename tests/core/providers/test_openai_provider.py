"""Unit tests of ``OpenAIProvider`` through an ``httpx2.MockTransport`` (no sockets).

Retry delays are recorded by an injected sleep; the only real waits are the sub-second timeout
tests, which must let a deadline pass.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
import traceback
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from typing import Any

import httpx2
import pytest

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
    RetryPolicy,
    StreamEvent,
    Timeouts,
    ToolCallDelta,
    Usage,
)
from etos_desktop.core.providers.openai_provider import OpenAIProvider

BASE_URL = "https://llm.example.test/v1"
KEY = "zk.7Hq2-private-key-value"  # not sk-shaped: the provider must scrub it by value
MODEL = "some-model"
HANG = object()  # in a body script: never send the rest
NO_RETRY = RetryPolicy(max_retries=0)

Handler = Callable[[httpx2.Request], Any]


# -- building blocks ---------------------------------------------------------------------------


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


class ScriptedBody(httpx2.AsyncByteStream):
    """A response body sent piece by piece: bytes, an exception to raise, or HANG."""

    def __init__(self, parts: Sequence[object]) -> None:
        self._parts = parts
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self._parts:
            if part is HANG:
                await asyncio.Event().wait()
            elif isinstance(part, BaseException):
                raise part
            else:
                assert isinstance(part, bytes)
                yield part

    async def aclose(self) -> None:
        self.closed = True


class Server:
    """Answers requests from a FIFO of responses (or callables, or exceptions) and records them."""

    def __init__(self, *replies: object) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else sse_response(chunk("default"))
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = await reply(request)
        assert isinstance(reply, httpx2.Response)
        return reply


def chunk(
    content: str | None = None,
    *,
    role: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if role is not None:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def sse(*payloads: object) -> bytes:
    return b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads
    )


def sse_response(*payloads: object, done: bool = True) -> httpx2.Response:
    body = sse(*payloads, *(["[DONE]"] if done else []))
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def scripted_response(*parts: object) -> httpx2.Response:
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, stream=ScriptedBody(parts)
    )


def error_response(
    status: int,
    message: str = "nope",
    *,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx2.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return httpx2.Response(status, json=body, headers=headers)


def completion_response(text: str = "done", **message: Any) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-2",
            "object": "chat.completion",
            "created": 1,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, **message},
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        },
    )


def embedding_response(vectors: dict[int, list[float]]) -> httpx2.Response:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in vectors.items()]
    return httpx2.Response(200, json={"object": "list", "data": data, "model": "emb"})


def models_response(*ids: str) -> httpx2.Response:
    data = [{"id": i, "object": "model", "created": 1, "owned_by": "x"} for i in ids]
    return httpx2.Response(200, json={"object": "list", "data": data})


def make_provider(
    server: Server,
    *,
    api_key: str | None = KEY,
    retry: RetryPolicy = RetryPolicy(),  # noqa: B008
    timeouts: Timeouts = Timeouts(),  # noqa: B008
    sleeper: SleepRecorder | None = None,
) -> OpenAIProvider:
    return OpenAIProvider(
        BASE_URL,
        api_key,
        timeouts=timeouts,
        retry=retry,
        sleep=sleeper or SleepRecorder(),
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)),
    )


def request(text: str = "hi", **kwargs: Any) -> ChatRequest:
    return ChatRequest(
        model=kwargs.pop("model", MODEL), messages=[{"role": "user", "content": text}], **kwargs
    )


async def collect(provider: OpenAIProvider, req: ChatRequest | None = None) -> list[StreamEvent]:
    async with aclosing(provider.stream_chat(req or request())) as stream:
        return [event async for event in stream]


async def collect_error(
    provider: OpenAIProvider, req: ChatRequest | None = None
) -> tuple[list[StreamEvent], ProviderError]:
    events: list[StreamEvent] = []

    async def drain() -> None:
        async with aclosing(provider.stream_chat(req or request())) as stream:
            async for event in stream:
                events.append(event)

    with pytest.raises(ProviderError) as info:
        await drain()
    return events, info.value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events)


def rendered(error: BaseException) -> str:
    """Everything a log line or an error dialog could show about ``error``."""
    params = getattr(error, "params", {})
    parts = [str(error), repr(error), getattr(error, "detail", ""), repr(params)]
    return "\n".join([*parts, *traceback.format_exception(error)])


# -- operations, so the error table runs against each of them ----------------------------------


async def op_stream(provider: OpenAIProvider) -> object:
    return await collect(provider)


async def op_complete(provider: OpenAIProvider) -> object:
    return await provider.complete(request())


async def op_embed(provider: OpenAIProvider) -> object:
    return await provider.embed(MODEL, ["a"])


async def op_models(provider: OpenAIProvider) -> object:
    return await provider.list_models()


OPERATIONS = {
    "stream_chat": op_stream,
    "complete": op_complete,
    "embed": op_embed,
    "list_models": op_models,
}
#: A good answer to each operation (``op_embed`` embeds one text).
FINE_REPLY = {
    "stream_chat": lambda: sse_response(chunk("ok", finish="stop")),
    "complete": lambda: completion_response("ok"),
    "embed": lambda: embedding_response({0: [1.0, 0.0]}),
    "list_models": lambda: models_response("m"),
}


# -- error mapping -----------------------------------------------------------------------------

STATUS_TABLE: list[tuple[httpx2.Response, type[ProviderError], dict[str, Any]]] = [
    (error_response(401, "Incorrect API key provided"), AuthError, {"status": 401}),
    (error_response(403, "not allowed"), AuthError, {"status": 403}),
    (error_response(404, "no such model", code="model_not_found"), ModelNotFound, {"status": 404}),
    (
        error_response(429, "slow down", headers={"retry-after": "7"}),
        RateLimited,
        {"status": 429, "retry_after": 7.0},
    ),
    (error_response(500, "boom"), ServerError, {"status": 500, "retry_after": None}),
    (error_response(502, "bad gateway"), ServerError, {"status": 502}),
    (error_response(503, "overloaded"), ServerError, {"status": 503}),
    (error_response(504, "gateway timeout"), ServerError, {"status": 504}),
    (
        error_response(400, "too long", code="context_length_exceeded"),
        ContextTooLong,
        {"status": 400},
    ),
    (
        error_response(400, "This model's maximum context length is 8192 tokens."),
        ContextTooLong,
        {},
    ),
    (error_response(413, "payload too large"), ContextTooLong, {"status": 413}),
    (error_response(400, "temperature out of range"), BadRequest, {"status": 400}),
    (error_response(409, "conflict"), BadRequest, {"status": 409}),
    (error_response(422, "unprocessable"), BadRequest, {"status": 422}),
    (httpx2.Response(400, text="<html>bad</html>"), BadRequest, {"status": 400}),
]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    ("response", "expected", "params"),
    STATUS_TABLE,
    ids=[f"{r.status_code}-{e.__name__}" for r, e, _ in STATUS_TABLE],
)
async def test_status_errors_map_to_the_error_tree(
    operation: str,
    response: httpx2.Response,
    expected: type[ProviderError],
    params: dict[str, Any],
) -> None:
    server = Server(response)
    async with make_provider(server, retry=NO_RETRY) as provider:
        with pytest.raises(ProviderError) as info:
            await OPERATIONS[operation](provider)
    assert type(info.value) is expected
    assert params.items() <= info.value.params.items()
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("operation", "model"),
    [("stream_chat", MODEL), ("complete", MODEL), ("embed", MODEL), ("list_models", None)],
)
async def test_model_not_found_names_the_model(operation: str, model: str | None) -> None:
    server = Server(error_response(404, "The model does not exist", code="model_not_found"))
    async with make_provider(server) as provider:
        with pytest.raises(ModelNotFound) as info:
            await OPERATIONS[operation](provider)
    assert info.value.params["model"] == model


TRANSPORT_TABLE: list[tuple[Exception, type[ProviderError], dict[str, Any]]] = [
    (httpx2.ConnectError("connection refused"), ProviderUnavailable, {"base_url": BASE_URL}),
    (httpx2.RemoteProtocolError("server hung up"), ProviderUnavailable, {}),
    (httpx2.ConnectTimeout("connect timed out"), ProviderTimeout, {"phase": "connect"}),
    (httpx2.PoolTimeout("no free connection"), ProviderTimeout, {"phase": "connect"}),
    (httpx2.ReadTimeout("read timed out"), ProviderTimeout, {"phase": "first_token"}),
]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    ("exc", "expected", "params"),
    TRANSPORT_TABLE,
    ids=[type(e).__name__ for e, _, _ in TRANSPORT_TABLE],
)
async def test_transport_errors_map_to_the_error_tree(
    operation: str, exc: Exception, expected: type[ProviderError], params: dict[str, Any]
) -> None:
    server = Server(exc)
    async with make_provider(server, retry=NO_RETRY) as provider:
        with pytest.raises(ProviderError) as info:
            await OPERATIONS[operation](provider)
    assert type(info.value) is expected
    assert params.items() <= info.value.params.items()


@pytest.mark.parametrize(
    "reply",
    [
        error_response(401, f"Incorrect API key provided: {KEY}"),
        error_response(400, f"bad request for key {KEY}"),
        error_response(500, f"Bearer {KEY} crashed us"),
        error_response(429, f"api_key={KEY} is over quota"),
        httpx2.ConnectError(f"could not connect with {KEY}"),
        httpx2.ReadTimeout(f"timed out ({KEY})"),
    ],
    ids=["401", "400", "500-bearer", "429-api_key", "connect", "timeout"],
)
@pytest.mark.parametrize("operation", OPERATIONS)
async def test_the_key_never_appears_in_an_error(operation: str, reply: object) -> None:
    server = Server(reply)
    async with make_provider(server, retry=NO_RETRY) as provider:
        with pytest.raises(ProviderError) as info:
            await OPERATIONS[operation](provider)
    assert KEY not in rendered(info.value)
    assert "[redacted]" in info.value.detail or isinstance(info.value, ProviderTimeout)


async def test_base_url_credentials_stay_out_of_errors() -> None:
    server = Server(httpx2.ConnectError("refused"))
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    provider = OpenAIProvider(
        "https://user:hunter2@llm.example.test/v1?key=abc",
        None,
        retry=NO_RETRY,
        http_client=client,
    )
    async with provider:
        _, error = await collect_error(provider)
    assert error.params["base_url"] == "https://llm.example.test/v1"
    assert "hunter2" not in rendered(error)


# -- retries -----------------------------------------------------------------------------------


async def test_retries_with_backoff_and_announces_each_retry() -> None:
    server = Server(error_response(429), error_response(503), sse_response(chunk("ok")))
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        events = await collect(provider)
    retries = [(e.retry_in, e.retry_reason) for e in events if e.retry_in is not None]
    assert retries == [(1.0, "rate_limited"), (2.0, "server_error")]
    assert sleeper.delays == [1.0, 2.0]
    assert text_of(events) == "ok"
    assert len(server.requests) == 3
    # The retry announcements come first: nothing of the reply arrived before them.
    assert all(e.retry_in is not None for e in events[:2])


async def test_gives_up_after_max_retries() -> None:
    server = Server(*[error_response(502)] * 5)
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        events, error = await collect_error(provider)
    assert isinstance(error, ServerError)
    assert error.params["status"] == 502
    assert sleeper.delays == [1.0, 2.0, 4.0]
    assert len(events) == 3
    assert len(server.requests) == 4


async def test_custom_retry_policy() -> None:
    policy = RetryPolicy(max_retries=2, backoff=(0.25,))
    server = Server(*[httpx2.ConnectError("refused")] * 3)
    sleeper = SleepRecorder()
    async with make_provider(server, retry=policy, sleeper=sleeper) as provider:
        _, error = await collect_error(provider)
    assert isinstance(error, ProviderUnavailable)
    assert sleeper.delays == [0.25, 0.25]
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "86400"}, 60.0),
        ({"retry-after": "soon"}, 1.0),
    ],
)
async def test_retry_after_header(headers: dict[str, str], expected: float) -> None:
    server = Server(error_response(429, headers=headers), sse_response(chunk("ok")))
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        await collect(provider)
    assert sleeper.delays == [expected]


async def test_retry_after_as_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server = Server(error_response(503, headers={"retry-after": when}), sse_response(chunk("ok")))
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        await collect(provider)
    [delay] = sleeper.delays
    assert 25 <= delay <= 31


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
async def test_client_errors_are_never_retried(status: int) -> None:
    server = Server(*[error_response(status)] * 4)
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        events, _ = await collect_error(provider)
    assert events == []
    assert sleeper.delays == []
    assert len(server.requests) == 1


@pytest.mark.parametrize("operation", OPERATIONS)
async def test_connect_timeouts_are_retried_like_refused_connections(operation: str) -> None:
    # DESIGN §4 retries connection errors; a connect timeout is one (nothing was sent yet).
    server = Server(
        httpx2.ConnectTimeout("connect timed out"),
        httpx2.PoolTimeout("no free connection"),
        FINE_REPLY[operation](),
    )
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        await OPERATIONS[operation](provider)
    assert sleeper.delays == [1.0, 2.0]
    assert len(server.requests) == 3


async def test_connect_timeouts_give_up_after_max_retries_and_announce_each() -> None:
    server = Server(*[httpx2.ConnectTimeout("connect timed out")] * 5)
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        events, error = await collect_error(provider)
    assert isinstance(error, ProviderTimeout)
    assert error.params["phase"] == "connect"
    assert [(e.retry_in, e.retry_reason) for e in events] == [
        (1.0, "timeout"),
        (2.0, "timeout"),
        (4.0, "timeout"),
    ]
    assert len(server.requests) == 4


@pytest.mark.parametrize("operation", OPERATIONS)
async def test_read_timeouts_are_not_retried(operation: str) -> None:
    # The request reached the server: waiting again would double a 120 s first-token wait.
    server = Server(httpx2.ReadTimeout("read timed out"), FINE_REPLY[operation]())
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        with pytest.raises(ProviderTimeout):
            await OPERATIONS[operation](provider)
    assert sleeper.delays == []
    assert len(server.requests) == 1


async def test_complete_embed_and_models_retry_silently() -> None:
    server = Server(
        error_response(500),
        completion_response("fine"),
        httpx2.ConnectError("refused"),
        embedding_response({0: [1.0, 0.0]}),
        error_response(429, headers={"retry-after": "2"}),
        models_response("m"),
    )
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        assert (await provider.complete(request())).text == "fine"
        assert await provider.embed("emb", ["x"]) == [[1.0, 0.0]]
        assert await provider.list_models() == ["m"]
    assert sleeper.delays == [1.0, 1.0, 2.0]


async def test_no_retry_once_part_of_the_reply_arrived() -> None:
    server = Server(
        scripted_response(sse(chunk(role="assistant"), chunk("Hel")), httpx2.ReadError("reset"))
    )
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        events = await collect(provider)
    # A dropped connection after text ends the stream; no finish_reason means "interrupted".
    assert text_of(events) == "Hel"
    assert [e.finish_reason for e in events] == [None]
    assert len(server.requests) == 1
    assert sleeper.delays == []


async def test_drop_before_the_first_token_is_retried() -> None:
    server = Server(
        scripted_response(sse(chunk(role="assistant", content="")), httpx2.ReadError("reset")),
        sse_response(chunk("again"), chunk(finish="stop")),
    )
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        events = await collect(provider)
    assert text_of(events) == "again"
    assert sleeper.delays == [1.0]


async def test_closing_the_stream_closes_the_response_at_once() -> None:
    body = ScriptedBody([sse(chunk("one")), sse(chunk("two")), HANG])
    server = Server(
        httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    )
    async with make_provider(server) as provider:
        async with aclosing(provider.stream_chat(request())) as stream:
            async for event in stream:
                assert event.text == "one"
                break
        # Stop must not wait for garbage collection to hang up on the server.
        assert body.closed


async def test_stream_that_ends_without_finish_reason_just_ends() -> None:
    server = Server(sse_response(chunk("partial"), done=False))
    async with make_provider(server) as provider:
        events = await collect(provider)
    assert text_of(events) == "partial"
    assert all(e.finish_reason is None for e in events)


# -- timeouts ----------------------------------------------------------------------------------

SHORT = Timeouts(connect=1.0, first_token=0.1, between_chunks=0.1)


async def test_first_token_timeout_counts_from_the_request() -> None:
    # The role chunk arrives at once but is not a token: the first-token deadline still runs.
    server = Server(scripted_response(sse(chunk(role="assistant", content="")), HANG))
    async with make_provider(server, timeouts=SHORT) as provider:
        events, error = await collect_error(provider)
    assert events == []
    assert isinstance(error, ProviderTimeout)
    assert error.params["phase"] == "first_token"
    assert len(server.requests) == 1


async def test_first_token_timeout_while_waiting_for_headers() -> None:
    async def never(request: httpx2.Request) -> httpx2.Response:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    server = Server(never)
    async with make_provider(server, timeouts=SHORT) as provider:
        _, error = await collect_error(provider)
    assert isinstance(error, ProviderTimeout)
    assert error.params["phase"] == "first_token"


async def test_between_chunks_timeout() -> None:
    server = Server(scripted_response(sse(chunk("one")), HANG))
    async with make_provider(server, timeouts=SHORT) as provider:
        events, error = await collect_error(provider)
    assert text_of(events) == "one"
    assert isinstance(error, ProviderTimeout)
    assert error.params["phase"] == "between_chunks"


async def test_client_timeouts_follow_the_settings() -> None:
    server = Server()
    timeouts = Timeouts(connect=3.0, first_token=90.0, between_chunks=30.0)
    async with make_provider(server, timeouts=timeouts) as provider:
        await collect(provider)
    timeout = server.requests[0].extensions["timeout"]
    # Read covers the wait for the headers too, so it may not undercut the first-token timeout.
    assert timeout["connect"] == 3.0
    assert timeout["read"] == 90.0
    assert timeout["pool"] == 3.0


# -- malformed replies -------------------------------------------------------------------------


async def test_malformed_chunk_after_partial_text() -> None:
    server = Server(scripted_response(sse(chunk("par"), chunk("tial")) + b"data: {not json\n\n"))
    async with make_provider(server) as provider:
        events, error = await collect_error(provider)
    assert text_of(events) == "partial"
    assert isinstance(error, MalformedResponse)
    assert len(server.requests) == 1


async def test_invalid_utf8_is_malformed() -> None:
    server = Server(scripted_response(b"data: \xff\xfe\n\n"))
    async with make_provider(server) as provider:
        _, error = await collect_error(provider)
    assert isinstance(error, MalformedResponse)


async def test_error_event_inside_a_stream() -> None:
    server = Server(sse_response(chunk("a"), {"error": {"message": "upstream overloaded"}}))
    async with make_provider(server) as provider:
        events, error = await collect_error(provider)
    assert text_of(events) == "a"
    assert isinstance(error, ServerError)
    assert "upstream overloaded" in error.detail


async def test_html_page_instead_of_a_stream() -> None:
    server = Server(httpx2.Response(200, html="<html>Welcome to nginx</html>"))
    async with make_provider(server) as provider:
        _, error = await collect_error(provider)
    assert isinstance(error, MalformedResponse)


async def test_json_completion_instead_of_a_stream() -> None:
    server = Server(completion_response("whole reply"))
    async with make_provider(server) as provider:
        events = await collect(provider)
    [event] = events
    assert event.text == "whole reply"
    assert event.finish_reason == "stop"
    assert event.usage == Usage(3, 2, 5)


@pytest.mark.parametrize(
    "response",
    [
        httpx2.Response(200, headers={"content-type": "application/json"}, content=b"{oops"),
        httpx2.Response(200, html="<html>login page</html>"),
        httpx2.Response(200, json={"object": "chat.completion", "choices": []}),
    ],
    ids=["bad-json", "html", "no-choices"],
)
async def test_malformed_non_streamed_completion(response: httpx2.Response) -> None:
    async with make_provider(Server(response)) as provider:
        with pytest.raises(MalformedResponse):
            await provider.complete(request())


async def test_complete_with_a_message_of_the_wrong_shape() -> None:
    bad = {"object": "chat.completion", "choices": [{"index": 0, "message": "text"}]}
    async with make_provider(Server(httpx2.Response(200, json=bad))) as provider:
        with pytest.raises(MalformedResponse) as info:
            await provider.complete(request())
    assert "AttributeError" in info.value.detail


@pytest.mark.parametrize(
    "response",
    [
        httpx2.Response(200, html="<html>login page</html>"),
        httpx2.Response(200, json={"object": "list", "data": [{"index": 0, "embedding": [1.0]}]}),
        httpx2.Response(200, json={"data": [{"index": 0}, {"index": 1}]}),
        httpx2.Response(200, json=[1, 2]),
    ],
    ids=["html", "wrong-count", "no-vectors", "a-list"],
)
async def test_malformed_embeddings(response: httpx2.Response) -> None:
    async with make_provider(Server(response)) as provider:
        with pytest.raises(MalformedResponse):
            await provider.embed("emb", ["a", "b"])


# -- what is sent and what is parsed -----------------------------------------------------------


async def test_request_carries_the_options() -> None:
    server = Server()
    tools = [{"type": "function", "function": {"name": "save_memory", "parameters": {}}}]
    req = ChatRequest(
        model=MODEL,
        messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        temperature=0.2,
        max_tokens=128,
        tools=tools,
        extra={"top_p": 0.9},
    )
    async with make_provider(server) as provider:
        await collect(provider, req)
    [body] = server.bodies
    assert body["model"] == MODEL
    assert body["messages"] == list(req.messages)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0.2, 128, 0.9)
    assert body["tools"] == tools
    assert server.requests[0].url == httpx2.URL(BASE_URL + "/chat/completions")
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_unset_options_are_not_sent() -> None:
    server = Server()
    async with make_provider(server) as provider:
        await collect(provider)
    [body] = server.bodies
    assert not {"temperature", "max_tokens", "tools"} & body.keys()


async def test_missing_key_uses_a_placeholder() -> None:
    server = Server()
    async with make_provider(server, api_key=None) as provider:
        await collect(provider)
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_stream_events_carry_text_tool_calls_finish_and_usage() -> None:
    server = Server(
        sse_response(
            chunk(role="assistant", content=""),
            chunk("Hi"),
            chunk(
                tool_calls=[
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "save_memory", "arguments": ""},
                    }
                ]
            ),
            chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"a":'}}]),
            chunk(tool_calls=[{"index": 0, "function": {"arguments": " 1}"}}]),
            chunk(finish="tool_calls"),
            usage_chunk(10, 4),
        )
    )
    async with make_provider(server) as provider:
        events = await collect(provider)
    assert events == [
        StreamEvent(text="Hi"),
        StreamEvent(tool_calls=(ToolCallDelta(0, "call_1", "save_memory", ""),)),
        StreamEvent(tool_calls=(ToolCallDelta(0, None, None, '{"a":'),)),
        StreamEvent(tool_calls=(ToolCallDelta(0, None, None, " 1}"),)),
        StreamEvent(finish_reason="tool_calls"),
        StreamEvent(usage=Usage(10, 4, 14)),
    ]


async def test_refused_stream_options_fall_back_once_and_are_remembered() -> None:
    refusal = error_response(400, "Extra inputs are not permitted: stream_options")
    server = Server(refusal, sse_response(chunk("a")), sse_response(chunk("b")))
    sleeper = SleepRecorder()
    async with make_provider(server, sleeper=sleeper) as provider:
        assert text_of(await collect(provider)) == "a"
        assert text_of(await collect(provider)) == "b"
    assert ["stream_options" in b for b in server.bodies] == [True, False, False]
    assert sleeper.delays == []


async def test_a_400_that_is_not_about_stream_options_is_not_retried() -> None:
    server = Server(error_response(400, "messages must not be empty"), sse_response(chunk("x")))
    async with make_provider(server) as provider:
        _, error = await collect_error(provider)
    assert isinstance(error, BadRequest)
    assert len(server.requests) == 1


async def test_complete_parses_text_usage_and_tool_calls() -> None:
    tool_call = {
        "id": "call_7",
        "type": "function",
        "function": {"name": "search_memory", "arguments": '{"q": "x"}'},
    }
    server = Server(completion_response("plain"), completion_response("", tool_calls=[tool_call]))
    async with make_provider(server) as provider:
        plain = await provider.complete(request(temperature=0.0))
        tools = await provider.complete(request())
    assert (plain.text, plain.finish_reason, plain.usage) == ("plain", "stop", Usage(3, 2, 5))
    assert tools.tool_calls == (ToolCallDelta(0, "call_7", "search_memory", '{"q": "x"}'),)
    assert server.bodies[0]["stream"] is False
    assert server.bodies[0]["temperature"] == 0.0


async def test_embed_orders_by_index_and_skips_empty_input() -> None:
    server = Server(embedding_response({1: [0.0, 1.0], 0: [1.0, 0.0]}))
    async with make_provider(server) as provider:
        assert await provider.embed("emb", []) == []
        assert len(server.requests) == 0
        assert await provider.embed("emb", ["first", "second"]) == [[1.0, 0.0], [0.0, 1.0]]
    assert server.bodies[0] == {
        "model": "emb",
        "input": ["first", "second"],
        "encoding_format": "float",
    }


async def test_list_models_sorted_and_unique() -> None:
    server = Server(models_response("b", "a", "b"))
    async with make_provider(server) as provider:
        assert await provider.list_models() == ["a", "b"]
    assert server.requests[0].url == httpx2.URL(BASE_URL + "/models")


@pytest.mark.parametrize(
    "response",
    [httpx2.Response(200, html="<html>login</html>"), httpx2.Response(200, json=[1, 2])],
    ids=["html", "a-list"],
)
async def test_malformed_model_list(response: httpx2.Response) -> None:
    async with make_provider(Server(response)) as provider:
        with pytest.raises(MalformedResponse):
            await provider.list_models()


async def test_model_list_skips_entries_without_an_id() -> None:
    body = {"object": "list", "data": [{"id": "a"}, {"name": "no id"}, {"id": 3}]}
    async with make_provider(Server(httpx2.Response(200, json=body))) as provider:
        assert await provider.list_models() == ["a"]


@pytest.mark.parametrize(
    "payload",
    ["[1, 2]", '"text"', '{"choices": "x"}', '{"choices": [{"delta": "x"}]}'],
)
async def test_odd_chunks_are_skipped(payload: str) -> None:
    server = Server(sse_response(payload, chunk("after")))
    async with make_provider(server) as provider:
        assert text_of(await collect(provider)) == "after"


async def test_aclose_closes_the_http_client() -> None:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(Server()))
    provider = OpenAIProvider(BASE_URL, KEY, http_client=client)
    await provider.aclose()
    assert client.is_closed
