"""A local OpenAI-compatible HTTP server for tests, with scripted replies and injectable faults.

Stdlib only: a ``ThreadingHTTPServer`` on 127.0.0.1 (random port) in a daemon thread. It speaks
enough of the OpenAI protocol for the real ``openai`` client: ``GET /v1/models``,
``POST /v1/chat/completions`` (streamed as SSE or as one JSON completion) and
``POST /v1/embeddings``. Every request is recorded, so tests assert on what the app *sent*.

Error bodies repeat the API key the request carried (``echo_key``, on by default), as some
servers and proxies do ("Incorrect API key provided: sk-…"): a test that checks a key never
reaches the database, the logs or an error text can only fail if the key is offered to it.

Replies are scripted per chat request, first in first out (``server.script(Text("hi"),
Fault(429, retry_after=1))``); each chat request that passes the auth and model checks consumes
one, retries included. With the script empty the server echoes the last user message.
``server.script_when(match, ...)`` keeps a separate queue for the requests ``match`` accepts
(``background`` matches the app's detached, non-streamed requests), so a background job's reply
does not depend on when it runs relative to the chat.

Stream framing. By default streams use HTTP/1.1 ``Transfer-Encoding: chunked``, so ``CutStream``
is a real protocol break (the body ends without its terminating chunk). With
``FakeOpenAIServer(stream_framing="close")`` streams are HTTP/1.0 responses delimited by closing
the connection, where a cut is indistinguishable from a normal end of the body.

Measured with openai 3.57 / httpx2 2.16 (``tests/integration/test_provider_faults.py`` keeps the
measurement honest; ``TestCutStreamMeasurement`` there asserts on the raw client):

* chunked framing, connection closed mid-body: ``httpx2.RemoteProtocolError`` ("peer closed
  connection without sending complete message body: incomplete chunked read"), which the client's
  ``AsyncStream`` turns into ``openai.APIConnectionError`` *after* the chunks that arrived were
  yielded. So the client does **raise** on a dropped HTTP/1.1 stream — contrary to the first draft
  of DESIGN §4, which said it ends without raising.
* close-delimited framing (HTTP/1.0 or ``Connection: close`` without a length): the iterator just
  ends after the chunks that arrived, with no error, no ``finish_reason`` and no ``[DONE]``.

Either way the provider ends the stream without a ``finish_reason`` once text has arrived, and the
caller marks the reply interrupted.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
import math
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

__all__ = [
    "EMBEDDING_DIM",
    "CutStream",
    "FakeOpenAIServer",
    "Fault",
    "Hang",
    "Malformed",
    "ParallelToolCalls",
    "RecordedRequest",
    "Reply",
    "Reported",
    "Slow",
    "Text",
    "ToolCall",
    "background",
    "fake_embedding",
]

EMBEDDING_DIM = 16
DEFAULT_MODELS = ("fake-chat", "fake-chat-mini", "fake-embed")

_WORD_RE = re.compile(r"\S+\s*|\s+")
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    429: "rate_limit_error",
}
_DEFAULT_MESSAGES = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    403: "You are not allowed to use this model.",
    404: "Not found.",
    429: "Rate limit reached for requests.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
    504: "Gateway timeout.",
}


# --------------------------------------------------------------------------------------------
# Reply kinds
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A normal text answer.

    Streamed as ``chat.completion.chunk``s: one role chunk, the content split into ``chunks``
    pieces (``None``: one piece per word), a chunk with ``finish_reason``, a usage chunk when the
    request asked for ``stream_options.include_usage`` and ``usage`` is true, then ``[DONE]``.
    ``delay`` is slept before every content chunk but the first; a non-streamed answer is sent
    after waiting ``delay`` once (a slow background request). ``reported`` replaces the counted
    usage (words) with these numbers, cache hits included.
    """

    text: str
    chunks: int | None = None
    delay: float = 0.0
    usage: bool = True
    finish_reason: str = "stop"
    reported: Reported | None = None


@dataclass(frozen=True)
class Reported:
    """The usage a reply reports, as OpenAI sends it (``cached_tokens`` in the details)."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None = None

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if self.cached_tokens is not None:
            data["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return data


def Slow(text: str, chunks: int, delay: float) -> Text:  # noqa: N802 - reads like the other kinds
    """A text answer whose chunks arrive ``delay`` seconds apart."""
    return Text(text, chunks=chunks, delay=delay)


@dataclass(frozen=True)
class ToolCall:
    """A single tool call; its arguments are streamed in several pieces."""

    name: str
    arguments: str
    call_id: str = "call_1"


@dataclass(frozen=True)
class ParallelToolCalls:
    """Several tool calls in one reply (indexes 0, 1, ...), interleaved piece by piece."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Fault:
    """An HTTP error with an OpenAI error body; ``retry_after`` adds a Retry-After header."""

    status: int
    message: str = ""
    retry_after: float | None = None
    code: str | None = None


@dataclass(frozen=True)
class Hang:
    """Read the request, then send nothing for ``seconds`` (``stop()`` ends it early) and close."""

    seconds: float


@dataclass(frozen=True)
class CutStream:
    """Send ``after_chunks`` content chunks, then close the socket: no finish_reason, no [DONE]."""

    text: str
    after_chunks: int


@dataclass(frozen=True)
class Malformed:
    """Send ``text_before`` as valid chunks, then an unparseable SSE data line."""

    text_before: str
    garbage: str = "data: {not json"


Reply = Text | ToolCall | ParallelToolCalls | Fault | Hang | CutStream | Malformed


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


# --------------------------------------------------------------------------------------------
# Deterministic embeddings
# --------------------------------------------------------------------------------------------


def background(body: Any) -> bool:
    """Whether a chat request is a detached background one (a title, a summary): not streamed."""
    return isinstance(body, dict) and not body.get("stream")


def fake_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """Return the vector the server sends for ``text``: word hashes folded into ``dim`` buckets.

    Equal texts give equal vectors; texts sharing words point in similar directions. The vector has
    unit length (an empty text gives a unit vector along the first axis).
    """
    vector = [0.0] * dim
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        vector[digest[0] % dim] += 1.0 if digest[1] % 2 == 0 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class _ClientGone(Exception):
    """The client closed the connection while we were writing."""


class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 for tests.

    Args:
        api_key: When set, requests must carry ``Authorization: Bearer <api_key>`` or get 401.
        models: Model ids served by ``/v1/models``; chat and embedding requests for other models
            get 404 ``model_not_found``.
        stream_framing: ``"chunked"`` (HTTP/1.1) or ``"close"`` (HTTP/1.0, end of body = close).
        echo_key: Error messages end with the bearer token the request carried.

    Thread contract: handlers run on server threads; ``requests``, ``chunks_sent`` and the script
    are guarded by one lock, and every wait inside a handler returns when ``stop()`` is called.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        models: list[str] | None = None,
        stream_framing: Literal["chunked", "close"] = "chunked",
        echo_key: bool = True,
        refuse_stream_options: bool = False,
    ) -> None:
        self.api_key = api_key
        #: Answer 400 to every request with ``stream_options`` (older vLLM, some proxies).
        self.refuse_stream_options = refuse_stream_options
        self.echo_key = echo_key
        self.models: list[str] = list(DEFAULT_MODELS if models is None else models)
        self.stream_framing = stream_framing
        self.requests: list[RecordedRequest] = []
        self._script: deque[Reply] = deque()
        self._routes: list[tuple[Callable[[Any], bool], deque[Reply]]] = []
        self._lock = threading.Lock()
        self._chunk_cond = threading.Condition(self._lock)
        self._chunks_sent = 0
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._ids = itertools.count(1)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind to a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError("server already started")
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"FakeOpenAIServer:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, release hanging handlers and close every open connection."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        with self._lock:
            self._chunk_cond.notify_all()
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what the client takes as base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and inspection -------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next chat completion requests, first in first out."""
        with self._lock:
            self._script.extend(replies)

    def script_when(self, match: Callable[[Any], bool], *replies: Reply) -> None:
        """Queue replies for the chat requests whose JSON body ``match`` accepts.

        These queues are looked at before the main script, in the order they were made; one
        that is empty lets the request fall through to the next.
        """
        with self._lock:
            for existing, queue in self._routes:
                if existing is match:
                    queue.extend(replies)
                    return
            self._routes.append((match, deque(replies)))

    @property
    def pending_replies(self) -> int:
        """How many scripted replies are not consumed yet."""
        with self._lock:
            return len(self._script)

    def chat_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/chat/completions`` requests, in arrival order."""
        with self._lock:
            return [
                r for r in self.requests if r.method == "POST" and r.path == "/v1/chat/completions"
            ]

    def embedding_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/embeddings`` requests, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path == "/v1/embeddings"]

    async def wait_for_chat_requests(self, n: int, timeout: float = 5.0) -> int:
        """Await until ``n`` chat requests are recorded (or ``timeout``); return how many are.

        A client that gives up quickly (a short first-token timeout on a loaded machine) can
        be done before the server's thread has read and recorded its request.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.chat_requests()) < n and loop.time() < deadline:
            await asyncio.sleep(0.01)
        return len(self.chat_requests())

    @property
    def chunks_sent(self) -> int:
        """Content (or tool-call) chunks written for the most recent stream."""
        with self._lock:
            return self._chunks_sent

    def wait_for_chunks(self, n: int, timeout: float = 5.0) -> bool:
        """Block until the current stream has sent ``n`` content chunks; False on timeout.

        From an async test call it through ``asyncio.to_thread`` (or use
        :meth:`wait_for_chunks_async`) so the event loop keeps running the client.
        """
        with self._chunk_cond:
            return (
                self._chunk_cond.wait_for(
                    lambda: self._chunks_sent >= n or self._stopping.is_set(), timeout
                )
                and not self._stopping.is_set()
            )

    async def wait_for_chunks_async(self, n: int, timeout: float = 5.0) -> bool:
        """Await until the current stream has sent ``n`` content chunks; False on timeout."""
        return await asyncio.to_thread(self.wait_for_chunks, n, timeout)

    # -- used by the handler -------------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, body: Any = None) -> Reply | None:
        with self._lock:
            for match, queue in self._routes:
                if queue and match(body):
                    return queue.popleft()
            return self._script.popleft() if self._script else None

    def _reset_chunks(self) -> None:
        with self._chunk_cond:
            self._chunks_sent = 0
            self._chunk_cond.notify_all()

    def _count_chunk(self) -> None:
        with self._chunk_cond:
            self._chunks_sent += 1
            self._chunk_cond.notify_all()

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when interrupted by ``stop()``."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: a client dropping a connection is part of the tests."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    # -- plumbing ------------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle plus the client's
        # delayed ACK add ~40 ms to every response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            with contextlib.suppress(OSError):
                super().finish()
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr log."""

    @property
    def fake(self) -> FakeOpenAIServer:
        return self.server.fake

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGone from exc

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._write(body)

    def _send_error_body(
        self,
        status: int,
        message: str = "",
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        text = message or _DEFAULT_MESSAGES.get(status, f"HTTP {status}")
        presented = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if self.fake.echo_key and presented:
            text = f"{text} (request made with key {presented})"
        error = {
            "message": text,
            "type": _ERROR_TYPES.get(
                status, "server_error" if status >= 500 else "invalid_request_error"
            ),
            "param": None,
            "code": code,
        }
        self._send_json(status, {"error": error}, headers)

    # -- dispatch ------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        path = self.path.split("?", 1)[0]
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.fake._record(RecordedRequest(method, path, headers, body))
        try:
            if self.fake.api_key is not None and (
                headers.get("authorization") != f"Bearer {self.fake.api_key}"
            ):
                self._send_error_body(401, code="invalid_api_key")
            elif method == "GET" and path == "/v1/models":
                self._models()
            elif method == "POST" and path == "/v1/chat/completions":
                self._chat(body, raw_present=bool(raw))
            elif method == "POST" and path == "/v1/embeddings":
                self._embeddings(body)
            else:
                self._send_error_body(404, f"Unknown request URL: {method} {path}.")
        except _ClientGone:
            self.close_connection = True

    # -- endpoints -----------------------------------------------------------------------------

    def _models(self) -> None:
        data = [
            {"id": model, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}
            for model in self.fake.models
        ]
        self._send_json(200, {"object": "list", "data": data})

    def _check_model(self, body: Any) -> str | None:
        model = body.get("model") if isinstance(body, dict) else None
        if not isinstance(model, str) or model not in self.fake.models:
            self._send_error_body(
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                code="model_not_found",
            )
            return None
        return model

    def _embeddings(self, body: Any) -> None:
        if self._check_model(body) is None:
            return
        raw_input = body.get("input")
        texts = [raw_input] if isinstance(raw_input, str) else list(raw_input or [])
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = fake_embedding(str(text))
            embedding: Any = vector
            if as_base64:
                embedding = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(str(t).split()) for t in texts)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _chat(self, body: Any, *, raw_present: bool) -> None:
        if not isinstance(body, dict):
            self._send_error_body(400, "Request body must be a JSON object." if raw_present else "")
            return
        model = self._check_model(body)
        if model is None:
            return
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            self._send_error_body(400, "'messages' must be a non-empty array.")
            return
        if self.fake.refuse_stream_options and "stream_options" in body:
            self._send_error_body(400, "Unrecognized request argument supplied: stream_options")
            return
        reply = self.fake._next_reply(body)
        if reply is None:
            reply = Text("echo: " + _last_user_text(messages))
        stream = bool(body.get("stream"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        context = _ChatContext(
            model=model,
            completion_id=self.fake._new_id("chatcmpl"),
            prompt_tokens=sum(len(_content_text(m.get("content")).split()) for m in messages),
            include_usage=include_usage,
        )
        if isinstance(reply, Fault):
            headers = {}
            if reply.retry_after is not None:
                value = reply.retry_after
                headers["Retry-After"] = str(int(value)) if value == int(value) else str(value)
            self._send_error_body(reply.status, reply.message, reply.code, headers)
        elif isinstance(reply, Hang):
            self.fake._wait(reply.seconds)
            self.close_connection = True
        elif stream:
            self._stream(reply, context)
        else:
            self._complete(reply, context)

    # -- non-streamed completions --------------------------------------------------------------

    def _complete(self, reply: Reply, ctx: _ChatContext) -> None:
        if isinstance(reply, Malformed):
            garbage = reply.garbage.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(garbage)))
            self.end_headers()
            self._write(garbage)
            return
        if isinstance(reply, Text) and reply.delay and self.fake._wait(reply.delay):
            return
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish_reason = "stop"
        completion_tokens = 0
        if isinstance(reply, Text | CutStream):
            message["content"] = reply.text
            completion_tokens = len(_split(reply.text, None))
            if isinstance(reply, Text):
                finish_reason = reply.finish_reason
        else:
            assert isinstance(reply, ToolCall | ParallelToolCalls)
            calls = reply.calls if isinstance(reply, ParallelToolCalls) else (reply,)
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in calls
            ]
            finish_reason = "tool_calls"
        payload: dict[str, Any] = {
            "id": ctx.completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": ctx.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        }
        if isinstance(reply, Text) and reply.reported is not None:
            payload["usage"] = reply.reported.payload()
        elif not isinstance(reply, Text) or reply.usage:
            payload["usage"] = ctx.usage(completion_tokens)
        if isinstance(reply, CutStream):
            # Promise the whole body, send half of it, close: a broken non-streamed response.
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self._write(body[: len(body) // 2])
            self._abort()
            return
        self._send_json(200, payload)

    # -- streamed completions ------------------------------------------------------------------

    def _stream(self, reply: Reply, ctx: _ChatContext) -> None:
        self.fake._reset_chunks()
        chunked = self.fake.stream_framing == "chunked"
        if not chunked:
            # A real HTTP/1.0 response: the body ends when the connection closes.
            self.protocol_version = "HTTP/1.0"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        self._write(b"")
        self.close_connection = not chunked

        def send_raw(data: bytes) -> None:
            self._write(f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data)

        def send_event(payload: Any) -> None:
            text = payload if isinstance(payload, str) else json.dumps(payload)
            send_raw(f"data: {text}\n\n".encode())

        send_event(ctx.chunk({"role": "assistant", "content": ""}))

        if isinstance(reply, Text):
            pieces = _split(reply.text, reply.chunks)
            for i, piece in enumerate(pieces):
                if i and self.fake._wait(reply.delay):
                    return self._abort()
                send_event(ctx.chunk({"content": piece}))
                self.fake._count_chunk()
            send_event(ctx.chunk({}, finish_reason=reply.finish_reason))
            if reply.usage and ctx.include_usage:
                send_event(ctx.usage_chunk(len(pieces), reply.reported))
        elif isinstance(reply, ToolCall | ParallelToolCalls):
            calls = reply.calls if isinstance(reply, ParallelToolCalls) else (reply,)
            for delta in _tool_call_deltas(calls):
                send_event(ctx.chunk({"tool_calls": [delta]}))
                self.fake._count_chunk()
            send_event(ctx.chunk({}, finish_reason="tool_calls"))
            if ctx.include_usage:
                send_event(ctx.usage_chunk(len(calls)))
        elif isinstance(reply, CutStream):
            for piece in _split(reply.text, None)[: reply.after_chunks]:
                send_event(ctx.chunk({"content": piece}))
                self.fake._count_chunk()
            return self._abort()
        elif isinstance(reply, Malformed):
            for piece in _split(reply.text_before, None):
                send_event(ctx.chunk({"content": piece}))
                self.fake._count_chunk()
            send_raw(reply.garbage.encode() + b"\n\n")
            if chunked:
                self._write(b"0\r\n\r\n")
            return None
        send_event("[DONE]")
        if chunked:
            self._write(b"0\r\n\r\n")
        return None

    def _abort(self) -> None:
        """Close the connection at once, in the middle of whatever body was promised."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


@dataclass
class _ChatContext:
    model: str
    completion_id: str
    prompt_tokens: int
    include_usage: bool
    created: int = field(default_factory=lambda: int(time.time()))

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    def usage(self, completion_tokens: int) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": self.prompt_tokens + completion_tokens,
        }

    def usage_chunk(
        self, completion_tokens: int, reported: Reported | None = None
    ) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": reported.payload() if reported is not None else self.usage(completion_tokens),
        }


def _split(text: str, chunks: int | None) -> list[str]:
    """Split ``text`` into per-word pieces (``chunks=None``) or ``chunks`` even pieces."""
    if not text:
        return []
    if chunks is None:
        return _WORD_RE.findall(text)
    n = max(1, min(chunks, len(text)))
    size, extra = divmod(len(text), n)
    pieces, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def _tool_call_deltas(calls: tuple[ToolCall, ...]) -> Iterator[dict[str, Any]]:
    """The deltas OpenAI streams: a head per call, then the argument pieces, interleaved."""
    for index, call in enumerate(calls):
        yield {
            "index": index,
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
    pieces = [_split(call.arguments, 3) for call in calls]
    for round_no in range(max((len(p) for p in pieces), default=0)):
        for index, call_pieces in enumerate(pieces):
            if round_no < len(call_pieces):
                yield {"index": index, "function": {"arguments": call_pieces[round_no]}}


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""
