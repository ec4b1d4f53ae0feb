"""The real ``openai`` client, through ``OpenAIProvider``, against a local fake OpenAI server.

Every test asserts on what the server *received* as well as on what the provider returned.
Retry delays go through an injected recorder, so nothing here sleeps for a retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import traceback
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from typing import Any

import openai
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
from etos_desktop.core.providers.base import ChatRequest, StreamEvent, Timeouts
from etos_desktop.core.providers.openai_provider import OpenAIProvider, probe_local_servers
from tests.helpers.fake_openai_server import (
    CutStream,
    FakeOpenAIServer,
    Fault,
    Hang,
    Malformed,
    ParallelToolCalls,
    Text,
    ToolCall,
    fake_embedding,
)

KEY = "etos-test-key-7f3a9c"  # deliberately not sk-shaped: redact() alone would miss it
MODEL = "fake-chat"
FAST = Timeouts(connect=2.0, first_token=2.0, between_chunks=2.0)


class SleepRecorder:
    """Stands in for ``asyncio.sleep``: records the delays, waits for nothing."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=KEY) as srv:
        yield srv


@pytest.fixture
def sleeper() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
async def provider(
    server: FakeOpenAIServer, sleeper: SleepRecorder
) -> AsyncIterator[OpenAIProvider]:
    async with OpenAIProvider(server.base_url, KEY, timeouts=FAST, sleep=sleeper) as prov:
        yield prov


def chat(text: str = "hello", **kwargs: Any) -> ChatRequest:
    return ChatRequest(
        model=kwargs.pop("model", MODEL), messages=[{"role": "user", "content": text}], **kwargs
    )


async def collect(provider: OpenAIProvider, request: ChatRequest) -> list[StreamEvent]:
    async with aclosing(provider.stream_chat(request)) as stream:
        return [event async for event in stream]


async def collect_until_error(
    provider: OpenAIProvider, request: ChatRequest
) -> tuple[list[StreamEvent], ProviderError]:
    events: list[StreamEvent] = []

    async def drain() -> None:
        async with aclosing(provider.stream_chat(request)) as stream:
            async for event in stream:
                events.append(event)

    with pytest.raises(ProviderError) as info:
        await drain()
    return events, info.value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events)


def finish_reasons(events: list[StreamEvent]) -> list[str]:
    return [e.finish_reason for e in events if e.finish_reason is not None]


def retry_events(events: list[StreamEvent]) -> list[tuple[float | None, str | None]]:
    return [(e.retry_in, e.retry_reason) for e in events if e.retry_in is not None]


def assert_key_absent(error: BaseException) -> None:
    rendered = "".join(traceback.format_exception(error)) + repr(getattr(error, "params", ""))
    assert KEY not in rendered


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the happy paths -------------------------------------------------------------------------


async def test_streams_text_and_sends_the_request(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    server.script(Text("Hello there, world", chunks=4))
    request = ChatRequest(
        model=MODEL,
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "say hello"},
        ],
        temperature=0.3,
        max_tokens=50,
    )

    events = await collect(provider, request)

    assert text_of(events) == "Hello there, world"
    assert len([e for e in events if e.text]) == 4
    assert finish_reasons(events) == ["stop"]
    usage = [e.usage for e in events if e.usage is not None]
    assert len(usage) == 1
    assert usage[0].prompt_tokens == 4  # the fake counts words
    assert usage[0].completion_tokens == 4
    [sent] = server.chat_requests()
    assert sent.body["model"] == MODEL
    assert sent.body["messages"] == list(request.messages)
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["temperature"] == 0.3
    assert sent.body["max_tokens"] == 50
    assert sent.headers["authorization"] == f"Bearer {KEY}"


async def test_default_reply_echoes_the_last_user_message(provider: OpenAIProvider) -> None:
    events = await collect(provider, chat("你好 there"))
    assert text_of(events) == "echo: 你好 there"


async def test_tool_call_deltas_reassemble(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    arguments = '{"content": "uses pnpm", "kind": "preference"}'
    server.script(ToolCall("save_memory", arguments, call_id="call_abc"))
    tools = [{"type": "function", "function": {"name": "save_memory", "parameters": {}}}]

    events = await collect(provider, chat("remember I use pnpm", tools=tools))

    deltas = [d for e in events for d in e.tool_calls]
    assert len(deltas) > 2  # really streamed in pieces
    assert {d.index for d in deltas} == {0}
    assert [d.id for d in deltas if d.id] == ["call_abc"]
    assert [d.name for d in deltas if d.name] == ["save_memory"]
    assert "".join(d.arguments for d in deltas) == arguments
    assert finish_reasons(events) == ["tool_calls"]
    assert server.chat_requests()[0].body["tools"] == tools


async def test_parallel_tool_calls_keep_their_indexes(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    server.script(
        ParallelToolCalls(
            (ToolCall("a", '{"x": 1}', call_id="c1"), ToolCall("b", '{"y": 22}', call_id="c2"))
        )
    )
    events = await collect(provider, chat())
    by_index: dict[int, str] = {}
    for delta in (d for e in events for d in e.tool_calls):
        by_index[delta.index] = by_index.get(delta.index, "") + delta.arguments
    assert by_index == {0: '{"x": 1}', 1: '{"y": 22}'}


async def test_complete_is_not_streamed(server: FakeOpenAIServer, provider: OpenAIProvider) -> None:
    server.script(Text("a short title"))
    completion = await provider.complete(chat("title this"))
    assert completion.text == "a short title"
    assert completion.finish_reason == "stop"
    assert completion.usage is not None
    [sent] = server.chat_requests()
    assert sent.body["stream"] is False
    assert "stream_options" not in sent.body


async def test_complete_returns_tool_calls(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    server.script(ToolCall("search_memory", '{"query": "pets"}', call_id="call_9"))
    completion = await provider.complete(chat())
    assert completion.finish_reason == "tool_calls"
    [call] = completion.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_9", "search_memory", '{"query": "pets"}')


async def test_embeddings_are_the_servers_vectors(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    texts = ["uses pnpm", "allergic to peanuts", "uses pnpm"]
    vectors = await provider.embed("fake-embed", texts)
    assert vectors == [pytest.approx(fake_embedding(t)) for t in texts]
    assert vectors[0] == vectors[2]
    [sent] = server.embedding_requests()
    assert sent.body["model"] == "fake-embed"
    assert sent.body["input"] == texts
    assert sent.body["encoding_format"] == "float"


async def test_list_models_is_sorted(server: FakeOpenAIServer, provider: OpenAIProvider) -> None:
    server.models = ["zeta", "alpha", "fake-chat"]
    assert await provider.list_models() == ["alpha", "fake-chat", "zeta"]
    assert server.requests[-1].path == "/v1/models"


async def test_no_key_sends_a_placeholder(sleeper: SleepRecorder) -> None:
    with FakeOpenAIServer() as srv:
        async with OpenAIProvider(srv.base_url, None, timeouts=FAST, sleep=sleeper) as prov:
            assert text_of(await collect(prov, chat("hi"))) == "echo: hi"
        assert srv.chat_requests()[0].headers["authorization"] == "Bearer not-needed"


# -- errors that are never retried -----------------------------------------------------------


async def test_wrong_key_is_auth_error(server: FakeOpenAIServer, sleeper: SleepRecorder) -> None:
    async with OpenAIProvider(server.base_url, "wrong-key", timeouts=FAST, sleep=sleeper) as prov:
        events, error = await collect_until_error(prov, chat())
    assert isinstance(error, AuthError)
    assert events == []
    assert len(server.chat_requests()) == 1
    assert sleeper.delays == []
    assert "wrong-key" not in "".join(traceback.format_exception(error))


async def test_wrong_key_on_list_models(server: FakeOpenAIServer, sleeper: SleepRecorder) -> None:
    async with OpenAIProvider(server.base_url, "wrong-key", timeouts=FAST, sleep=sleeper) as prov:
        with pytest.raises(AuthError):
            await prov.list_models()


async def test_unknown_model(server: FakeOpenAIServer, provider: OpenAIProvider) -> None:
    _, error = await collect_until_error(provider, chat(model="no-such-model"))
    assert isinstance(error, ModelNotFound)
    assert error.params["model"] == "no-such-model"
    assert len(server.chat_requests()) == 1
    assert server.pending_replies == 0
    assert_key_absent(error)


async def test_context_too_long(server: FakeOpenAIServer, provider: OpenAIProvider) -> None:
    server.script(
        Fault(
            400,
            "This model's maximum context length is 8192 tokens. However, you requested 9000.",
            code="context_length_exceeded",
        )
    )
    _, error = await collect_until_error(provider, chat())
    assert isinstance(error, ContextTooLong)
    assert len(server.chat_requests()) == 1


async def test_other_400_is_bad_request(server: FakeOpenAIServer, provider: OpenAIProvider) -> None:
    server.script(Fault(400, "temperature must be at most 2"))
    _, error = await collect_until_error(provider, chat())
    assert isinstance(error, BadRequest)
    assert "temperature must be at most 2" in error.detail
    assert len(server.chat_requests()) == 1


async def test_refused_stream_options_fall_back_and_are_remembered(
    server: FakeOpenAIServer, provider: OpenAIProvider, sleeper: SleepRecorder
) -> None:
    server.script(
        Fault(400, "Unrecognized request argument supplied: stream_options"),
        Text("first"),
        Text("second"),
    )
    first = await collect(provider, chat())
    second = await collect(provider, chat())
    assert text_of(first) == "first"
    assert text_of(second) == "second"
    assert retry_events(first) == []
    assert sleeper.delays == []
    sent = [r.body for r in server.chat_requests()]
    assert ["stream_options" in body for body in sent] == [True, False, False]


# -- retried errors --------------------------------------------------------------------------


async def test_rate_limit_honours_retry_after_then_succeeds(
    server: FakeOpenAIServer, provider: OpenAIProvider, sleeper: SleepRecorder
) -> None:
    server.script(Fault(429, retry_after=2), Fault(429, retry_after=0.5), Text("finally"))
    events = await collect(provider, chat())
    assert text_of(events) == "finally"
    assert retry_events(events) == [(2.0, "rate_limited"), (0.5, "rate_limited")]
    assert sleeper.delays == [2.0, 0.5]
    assert len(server.chat_requests()) == 3
    # Each retry resends the same request.
    assert len({str(r.body) for r in server.chat_requests()}) == 1


async def test_retry_after_is_capped(
    server: FakeOpenAIServer, provider: OpenAIProvider, sleeper: SleepRecorder
) -> None:
    server.script(Fault(429, retry_after=3600), Text("ok"))
    await collect(provider, chat())
    assert sleeper.delays == [60.0]


async def test_rate_limit_exhausted(
    server: FakeOpenAIServer, provider: OpenAIProvider, sleeper: SleepRecorder
) -> None:
    server.script(*[Fault(429)] * 4)
    events, error = await collect_until_error(provider, chat())
    assert isinstance(error, RateLimited)
    assert sleeper.delays == [1.0, 2.0, 4.0]
    assert len(events) == 3
    assert len(server.chat_requests()) == 4


async def test_server_error_after_three_retries(
    server: FakeOpenAIServer, provider: OpenAIProvider, sleeper: SleepRecorder
) -> None:
    server.script(*[Fault(500)] * 4, Text("never reached"))
    events, error = await collect_until_error(provider, chat())
    assert isinstance(error, ServerError)
    assert error.params["status"] == 500
    assert retry_events(events) == [
        (1.0, "server_error"),
        (2.0, "server_error"),
        (4.0, "server_error"),
    ]
    assert sleeper.delays == [1.0, 2.0, 4.0]
    assert len(server.chat_requests()) == 4
    assert server.pending_replies == 1
    assert_key_absent(error)


async def test_complete_retries_silently(
    server: FakeOpenAIServer, provider: OpenAIProvider, sleeper: SleepRecorder
) -> None:
    server.script(Fault(503), Fault(502), Text("done"))
    completion = await provider.complete(chat())
    assert completion.text == "done"
    assert sleeper.delays == [1.0, 2.0]
    assert len(server.chat_requests()) == 3


async def test_connection_refused(sleeper: SleepRecorder) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    async with OpenAIProvider(base_url, KEY, timeouts=FAST, sleep=sleeper) as prov:
        events, error = await collect_until_error(prov, chat())
    assert isinstance(error, ProviderUnavailable)
    assert error.params["base_url"] == base_url
    assert [reason for _, reason in retry_events(events)] == ["unavailable"] * 3
    assert sleeper.delays == [1.0, 2.0, 4.0]
    assert_key_absent(error)


@pytest.fixture
def blackhole() -> Iterator[str]:
    """A base URL on 127.0.0.1 where connecting hangs: a listener whose accept queue is full.

    Linux drops the SYN of a connection that does not fit the queue, so the client waits for the
    connect timeout, as with a server behind a firewall that drops packets.
    """
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(4)]
        try:
            for filler in fillers:
                filler.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    filler.connect(("127.0.0.1", port))
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            for filler in fillers:
                filler.close()


@pytest.mark.skipif(sys.platform != "linux", reason="a full accept queue drops SYNs on Linux")
async def test_connect_timeout_is_retried_like_a_refused_connection(
    blackhole: str, sleeper: SleepRecorder
) -> None:
    timeouts = Timeouts(connect=0.2, first_token=5.0, between_chunks=5.0)
    async with OpenAIProvider(blackhole, KEY, timeouts=timeouts, sleep=sleeper) as prov:
        events, error = await collect_until_error(prov, chat())
    assert isinstance(error, ProviderTimeout)
    assert error.params["phase"] == "connect"
    assert [reason for _, reason in retry_events(events)] == ["timeout"] * 3
    assert sleeper.delays == [1.0, 2.0, 4.0]
    assert_key_absent(error)


# -- timeouts and broken streams -------------------------------------------------------------


async def test_first_token_timeout(server: FakeOpenAIServer, sleeper: SleepRecorder) -> None:
    server.script(Hang(30))
    timeouts = Timeouts(connect=2.0, first_token=0.3, between_chunks=2.0)
    async with OpenAIProvider(server.base_url, KEY, timeouts=timeouts, sleep=sleeper) as prov:
        _, error = await collect_until_error(prov, chat())
    assert isinstance(error, ProviderTimeout)
    assert error.params["phase"] == "first_token"
    assert sleeper.delays == []  # timeouts are not retried
    # The server's thread may record the one request after the client gave up on it.
    assert await server.wait_for_chat_requests(1) == 1


async def test_between_chunks_timeout_keeps_the_partial_text(
    server: FakeOpenAIServer, sleeper: SleepRecorder
) -> None:
    server.script(Text("one two three", delay=30))
    timeouts = Timeouts(connect=2.0, first_token=2.0, between_chunks=0.3)
    async with OpenAIProvider(server.base_url, KEY, timeouts=timeouts, sleep=sleeper) as prov:
        events, error = await collect_until_error(prov, chat())
    assert text_of(events) == "one "
    assert isinstance(error, ProviderTimeout)
    assert error.params["phase"] == "between_chunks"


@pytest.mark.parametrize("framing", ["chunked", "close"])
async def test_cut_stream_ends_without_finish_reason(framing: str, sleeper: SleepRecorder) -> None:
    with FakeOpenAIServer(stream_framing=framing) as srv:  # type: ignore[arg-type]
        srv.script(CutStream("alpha beta gamma delta", after_chunks=2))
        async with OpenAIProvider(srv.base_url, None, timeouts=FAST, sleep=sleeper) as prov:
            events = await collect(prov, chat())
        assert len(srv.chat_requests()) == 1
    assert text_of(events) == "alpha beta "
    assert finish_reasons(events) == []
    assert sleeper.delays == []


async def test_cut_before_any_content_is_retried(
    server: FakeOpenAIServer, provider: OpenAIProvider, sleeper: SleepRecorder
) -> None:
    server.script(CutStream("never seen", after_chunks=0), Text("second try"))
    events = await collect(provider, chat())
    assert text_of(events) == "second try"
    assert retry_events(events) == [(1.0, "unavailable")]
    assert len(server.chat_requests()) == 2


async def test_malformed_chunk_after_partial_text(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    server.script(Malformed("partial answer"))
    events, error = await collect_until_error(provider, chat())
    assert text_of(events) == "partial answer"
    assert isinstance(error, MalformedResponse)
    assert len(server.chat_requests()) == 1


async def test_malformed_non_streamed_completion(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    server.script(Malformed("", garbage="{not json"))
    with pytest.raises(MalformedResponse):
        await provider.complete(chat())


@pytest.mark.timeout(5)  # the scripted reply takes 10 s if the stream is not closed at once
async def test_stop_closes_the_stream_early(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    server.script(Text("x " * 50, chunks=50, delay=0.2))  # ten seconds if read to the end
    received: list[StreamEvent] = []
    async with aclosing(provider.stream_chat(chat())) as stream:
        async for event in stream:
            received.append(event)
            if len(received) == 2:
                break
    assert text_of(received) == "x x "
    # The provider stays usable after a stop.
    assert text_of(await collect(provider, chat("again"))) == "echo: again"


async def test_server_reports_chunks_sent(
    server: FakeOpenAIServer, provider: OpenAIProvider
) -> None:
    server.script(Text("a b c d e", delay=0.05))
    consumer = asyncio.ensure_future(collect(provider, chat()))
    assert await server.wait_for_chunks_async(3, timeout=5)
    events = await consumer
    assert server.chunks_sent == 5
    assert text_of(events) == "a b c d e"


# -- local server detection ------------------------------------------------------------------


async def test_probe_local_servers_lists_only_the_ones_answering() -> None:
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    with FakeOpenAIServer() as alive, FakeOpenAIServer(api_key="needs-a-key") as locked:
        found = await probe_local_servers([dead, alive.base_url, locked.base_url], timeout=1.0)
        assert found == [alive.base_url]
        assert alive.requests[0].path == "/v1/models"
    assert await probe_local_servers([]) == []


@pytest.mark.timeout(5)
async def test_probe_gives_up_on_a_silent_server() -> None:
    with socket.socket() as listener:  # accepts connections, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        assert await probe_local_servers([url], timeout=0.2) == []


# -- the measurement DESIGN §4 relies on -----------------------------------------------------


class TestCutStreamMeasurement:
    """What the raw openai client does when a stream's connection drops (fake server docstring)."""

    async def _read(self, framing: str) -> tuple[list[str], BaseException | None]:
        with FakeOpenAIServer(stream_framing=framing) as srv:  # type: ignore[arg-type]
            srv.script(CutStream("one two three", after_chunks=2))
            client = openai.AsyncOpenAI(
                base_url=srv.base_url, api_key="x", max_retries=0, timeout=5
            )
            texts: list[str] = []
            try:
                stream = await client.chat.completions.create(
                    model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
                )
                async for chunk in stream:
                    texts.append(chunk.choices[0].delta.content or "")
            except openai.OpenAIError as exc:
                return texts, exc
            finally:
                await client.close()
            return texts, None

    async def test_chunked_stream_raises_connection_error_after_the_data(self) -> None:
        texts, error = await self._read("chunked")
        assert "".join(texts) == "one two "
        assert isinstance(error, openai.APIConnectionError)

    async def test_close_delimited_stream_just_ends(self) -> None:
        texts, error = await self._read("close")
        assert "".join(texts) == "one two "
        assert error is None
