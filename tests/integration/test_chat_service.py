"""ChatService end to end: real openai client ↔ local server, real SQLite, every failure path."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from etos_desktop.core.chat.events import (
    ReplyDelta,
    ReplyFailed,
    ReplyFinished,
    ReplyRetrying,
    ReplyStarted,
    UserMessageSaved,
)
from etos_desktop.core.context.assembler import ContextTrace
from etos_desktop.core.errors import (
    AuthError,
    ContextTooLong,
    InvalidInput,
    MalformedResponse,
    MessageTooLong,
    ModelNotFound,
    NotConfigured,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    ServerError,
    StorageError,
)
from etos_desktop.core.providers.base import Timeouts
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from tests.helpers.fake_openai_server import (
    CutStream,
    FakeOpenAIServer,
    Fault,
    Hang,
    Malformed,
    Text,
)
from tests.helpers.stack import chat_stack

KEY = "sk-test-key-123456"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=KEY) as srv:
        yield srv


def closed_port_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def test_round_trip_send_stream_persist_reload(tmp_path: Path, server: FakeOpenAIServer):
    server.script(Text("Hello there, friend.", chunks=4), Text("Second answer."))
    async with chat_stack(tmp_path, server.base_url) as s:
        conv = await s.repo.create_conversation()
        events = await s.run(s.chat.send(conv.id, "Hi, I am Ann"))
        kinds = [type(e) for e in events]
        assert kinds[0] is UserMessageSaved
        assert kinds[1] is ReplyStarted
        assert kinds[-1] is ReplyFinished
        deltas = [e for e in events if isinstance(e, ReplyDelta)]
        assert len(deltas) == 4
        assert deltas[-1].text == "Hello there, friend."
        events2 = await s.run(s.chat.send(conv.id, "What is my name?"))
        assert isinstance(events2[-1], ReplyFinished)

    # What the app sent: the persona system prompt, then the history, then the message.
    first, second = server.chat_requests()
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.body["model"] == "fake-chat"
    assert first.body["stream"] is True
    assert [m["role"] for m in first.body["messages"]] == ["system", "user"]
    assert first.body["messages"][-1]["content"] == "Hi, I am Ann"
    assert [m["role"] for m in second.body["messages"]] == ["system", "user", "assistant", "user"]
    assert second.body["messages"][2]["content"] == "Hello there, friend."
    # The stable prefix is byte-identical between turns (provider prompt caches).
    assert second.body["messages"][0] == first.body["messages"][0]

    # Reload from the file with a fresh database object: everything is there.
    db = Database(tmp_path / "etos.db")
    db.open()
    try:
        repo = ChatRepository(db)
        history = await repo.current_history(conv.id)
        assert [(m.role, m.content, m.status) for m in history] == [
            ("user", "Hi, I am Ann", "complete"),
            ("assistant", "Hello there, friend.", "complete"),
            ("user", "What is my name?", "complete"),
            ("assistant", "Second answer.", "complete"),
        ]
        assert history[1].model == "fake-chat"
        assert history[1].prompt_tokens is not None
        trace = await repo.get_trace(history[3].id)
        assert trace is not None
        assert '"history_kept":2' in trace
    finally:
        db.close()


async def _send_expect_failure(tmp_path, server_url, error_type, *, script=(), **stack_kwargs):
    async with chat_stack(tmp_path, server_url, **stack_kwargs) as s:
        conv = await s.repo.create_conversation()
        events = await s.run(s.chat.send(conv.id, "please answer"))
        assert isinstance(events[0], UserMessageSaved)
        failed = events[-1]
        assert isinstance(failed, ReplyFailed), events
        assert isinstance(failed.error, error_type)
        history = await s.repo.current_history(conv.id)
        # The user's message survives every failure.
        assert history[0].role == "user"
        assert history[0].content == "please answer"
        assert history[1].status in ("error", "interrupted")
        assert history[1].error_code == failed.error.code
        return s, events, history


async def test_wrong_key_is_auth_error_without_retry(tmp_path: Path, server: FakeOpenAIServer):
    s, _events, history = await _send_expect_failure(
        tmp_path, server.base_url, AuthError, api_key="sk-wrong-key-999999"
    )
    assert len(server.chat_requests()) == 1
    assert s.sleeps == []
    assert "sk-wrong-key-999999" not in (history[1].error_detail or "")


async def test_unknown_model(tmp_path: Path, server: FakeOpenAIServer):
    _s, events, _h = await _send_expect_failure(
        tmp_path, server.base_url, ModelNotFound, model="no-such-model"
    )
    assert len(server.chat_requests()) == 1
    assert events[-1].error.params.get("model") == "no-such-model"


async def test_rate_limit_with_retry_after_then_success(tmp_path: Path, server: FakeOpenAIServer):
    server.script(Fault(429, retry_after=2), Text("finally"))
    async with chat_stack(tmp_path, server.base_url) as s:
        conv = await s.repo.create_conversation()
        events = await s.run(s.chat.send(conv.id, "hello"))
        retrying = [e for e in events if isinstance(e, ReplyRetrying)]
        assert [(e.seconds, e.reason) for e in retrying] == [(2.0, "rate_limited")]
        assert s.sleeps == [2.0]
        assert isinstance(events[-1], ReplyFinished)
        assert events[-1].message.content == "finally"
    assert len(server.chat_requests()) == 2


async def test_rate_limit_exhausted(tmp_path: Path, server: FakeOpenAIServer):
    server.script(*[Fault(429) for _ in range(4)])
    s, _e, _h = await _send_expect_failure(tmp_path, server.base_url, RateLimited)
    assert s.sleeps == [1.0, 2.0, 4.0]
    assert len(server.chat_requests()) == 4


async def test_server_error_retried_three_times(tmp_path: Path, server: FakeOpenAIServer):
    server.script(*[Fault(500) for _ in range(4)])
    s, _e, _h = await _send_expect_failure(tmp_path, server.base_url, ServerError)
    assert s.sleeps == [1.0, 2.0, 4.0]
    assert len(server.chat_requests()) == 4


async def test_first_token_timeout(tmp_path: Path, server: FakeOpenAIServer):
    server.script(Hang(30))
    _s, events, _h = await _send_expect_failure(
        tmp_path,
        server.base_url,
        ProviderTimeout,
        timeouts=Timeouts(connect=2, first_token=0.5, between_chunks=0.5),
    )
    assert events[-1].error.params.get("phase") in ("first_token", "between_chunks", "read")


async def test_server_down(tmp_path: Path):
    s, _e, _h = await _send_expect_failure(tmp_path, closed_port_url(), ProviderUnavailable)
    assert s.sleeps == [1.0, 2.0, 4.0]


async def test_stream_cut_keeps_partial_and_retry_works(tmp_path: Path, server: FakeOpenAIServer):
    server.script(CutStream("one two three four five six", after_chunks=3), Text("complete answer"))
    async with chat_stack(tmp_path, server.base_url) as s:
        conv = await s.repo.create_conversation()
        events = await s.run(s.chat.send(conv.id, "tell me"))
        user = events[0].message
        last = events[-1]
        assert isinstance(last, ReplyFinished | ReplyFailed)
        assert last.message.status == "interrupted"
        assert last.message.content == "one two three "
        # Retry = regenerate: a new version; the interrupted one is kept.
        events = await s.run(s.chat.regenerate(user.id))
        assert isinstance(events[-1], ReplyFinished)
        assert events[-1].message.content == "complete answer"
        versions = await s.repo.reply_versions(user.id)
        assert [(v.content, v.status, v.is_current) for v in versions] == [
            ("one two three ", "interrupted", False),
            ("complete answer", "complete", True),
        ]
        history = await s.repo.current_history(conv.id)
        assert [m.content for m in history] == ["tell me", "complete answer"]
    # The retry sent the same conversation: no trace of the interrupted version in it.
    retry_request = server.chat_requests()[1]
    assert [m["content"] for m in retry_request.body["messages"][1:]] == ["tell me"]


async def test_malformed_chunk_keeps_partial(tmp_path: Path, server: FakeOpenAIServer):
    server.script(Malformed("partial words here"))
    _s, _events, history = await _send_expect_failure(tmp_path, server.base_url, MalformedResponse)
    assert history[1].status == "interrupted"
    assert history[1].content.startswith("partial")


async def test_server_says_context_too_long(tmp_path: Path, server: FakeOpenAIServer):
    server.script(
        Fault(400, code="context_length_exceeded", message="maximum context length is 8192 tokens")
    )
    await _send_expect_failure(tmp_path, server.base_url, ContextTooLong)
    assert len(server.chat_requests()) == 1


async def test_message_too_long_is_refused_before_it_is_saved(
    tmp_path: Path, server: FakeOpenAIServer
):
    async with chat_stack(tmp_path, server.base_url) as s:
        s.settings.set_model_context("fake-chat", 4096)
        conv = await s.repo.create_conversation()
        huge = "word " * 200_000  # a 1 MB paste
        with pytest.raises(MessageTooLong) as refused:
            await s.run(s.chat.send(conv.id, huge))
        room = await s.chat.message_room(conv.id)
        assert room is not None
        assert refused.value.params["budget"] == room.tokens
        max_output = s.settings.get_int("chat.max_output_tokens")
        assert 1000 < room.tokens < 4096 - max_output - 64
        assert refused.value.params["needed"] > 200_000
        assert await s.repo.current_history(conv.id) == []
    assert server.chat_requests() == []


LYON = ["my name is Alex and I live in Lyon", "I have a cat called Miso", "I work as a nurse"]


async def test_an_oversized_message_does_not_cut_off_earlier_context(
    tmp_path: Path, server: FakeOpenAIServer
):
    """Issue 19: after a refused 200 KB paste, every request carried only the turns after it."""
    server.script(*(Text(f"reply {i}") for i in range(5)))
    async with chat_stack(tmp_path, server.base_url) as s:
        s.settings.set_model_context("fake-chat", 32_768)
        conv = await s.repo.create_conversation()
        for text in LYON:
            await s.run(s.chat.send(conv.id, text))
        with pytest.raises(MessageTooLong):
            await s.run(s.chat.send(conv.id, "x" * 200_000))
        await s.run(s.chat.send(conv.id, "where do I live?"))
        sent = [m["content"] for m in server.chat_requests()[-1].body["messages"]]
        assert [t for t in LYON if t in sent] == LYON
        assert sent[-1] == "where do I live?"


async def test_a_stored_oversized_turn_is_left_out_alone(tmp_path: Path, server: FakeOpenAIServer):
    """Databases that already hold such a message (saved before the composer refused it)."""
    server.script(*(Text(f"reply {i}") for i in range(5)))
    async with chat_stack(tmp_path, server.base_url) as s:
        s.settings.set_model_context("fake-chat", 32_768)
        conv = await s.repo.create_conversation()
        for text in LYON[:2]:
            await s.run(s.chat.send(conv.id, text))
        await s.repo.add_message(conv.id, "user", "y" * 200_000)
        await s.run(s.chat.send(conv.id, LYON[2]))
        events = await s.run(s.chat.send(conv.id, "where do I live?"))
        body = server.chat_requests()[-1].body
        sent = [m["content"] for m in body["messages"]]
        assert [t for t in LYON if t in sent] == LYON
        assert not any("yyyy" in str(c) for c in sent)
        reply = next(e for e in events if isinstance(e, ReplyFinished)).message
        raw = await s.repo.get_trace(reply.id)
        assert raw is not None
        trace = ContextTrace.from_json(raw)
        assert trace.oversized_turns == 1
        assert len(trace.oversized_message_indexes) == 1
        assert trace.dropped_turns == 1


async def test_stop_keeps_partial_reply(tmp_path: Path, server: FakeOpenAIServer):
    server.script(Text(" ".join(f"w{i}" for i in range(200)), delay=0.02))
    async with chat_stack(tmp_path, server.base_url) as s:
        conv = await s.repo.create_conversation()
        seen: list[str] = []
        got_text = asyncio.Event()

        async def consume() -> None:
            async for event in s.chat.send(conv.id, "long story please"):
                if isinstance(event, ReplyDelta):
                    seen.append(event.text)
                    if len(seen) == 3:
                        got_text.set()

        task = asyncio.ensure_future(consume())
        await asyncio.wait_for(got_text.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        history = await s.repo.current_history(conv.id)
        assert history[1].status == "interrupted"
        assert history[1].error_code == "stopped"
        assert history[1].content.startswith(seen[2])
        assert len(history[1].content) < len(" ".join(f"w{i}" for i in range(200)))


async def test_control_characters_removed_invisible_kept(tmp_path: Path, server: FakeOpenAIServer):
    async with chat_stack(tmp_path, server.base_url) as s:
        conv = await s.repo.create_conversation()
        text = "a\x00b\x07c\u200bd\u202eé\r\nnext"
        await s.run(s.chat.send(conv.id, text))
        with pytest.raises(InvalidInput):
            await s.run(s.chat.send(conv.id, "\x00\x01  \n"))
    sent = server.chat_requests()[0].body["messages"][-1]["content"]
    assert sent == "abc\u200bd\u202eé\nnext"
    assert len(server.chat_requests()) == 1


async def test_environment_provider_without_saved_config(tmp_path: Path):
    with FakeOpenAIServer() as srv:
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_MODEL": "fake-chat"}
        async with chat_stack(tmp_path, srv.base_url, env=env, save_provider=False) as s:
            assert s.registry.default().id == "env"
            conv = await s.repo.create_conversation()
            events = await s.run(s.chat.send(conv.id, "hi"))
            assert isinstance(events[-1], ReplyFinished)
        assert srv.chat_requests()[0].body["model"] == "fake-chat"
    assert (
        not (tmp_path / "settings.json").exists()
        or "OPENAI" not in (tmp_path / "settings.json").read_text()
    )


async def test_environment_provider_without_a_model_uses_the_servers_first_chat_model(
    tmp_path: Path,
):
    # Only OPENAI_API_KEY and OPENAI_BASE_URL set: the first message used to fail with "Choose
    # a chat model" (issue 8). The server lists its models; embedding models are skipped.
    models = ["bge-m3", "llama3.1:8b", "nomic-embed-text", "qwen2.5:7b"]
    with FakeOpenAIServer(api_key="sk-env-only-key-42", models=models) as srv:
        env = {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-env-only-key-42"}
        async with chat_stack(tmp_path, srv.base_url, env=env, save_provider=False) as s:
            conv = await s.repo.create_conversation()
            first = await s.run(s.chat.send(conv.id, "hi"))
            second = await s.run(s.chat.send(conv.id, "and again"))
            assert isinstance(first[-1], ReplyFinished)
            assert isinstance(second[-1], ReplyFinished)
            history = await s.repo.current_history(conv.id)
            assert [m.model for m in history if m.role == "assistant"] == ["llama3.1:8b"] * 2
        assert [r.body["model"] for r in srv.chat_requests()] == ["llama3.1:8b"] * 2
        assert [r.path for r in srv.requests].count("/v1/models") == 1  # asked once


async def test_not_configured(tmp_path: Path):
    async with chat_stack(tmp_path, "http://127.0.0.1:9/v1", save_provider=False) as s:
        conv = await s.repo.create_conversation()
        events = await s.run(s.chat.send(conv.id, "hi"))
        assert isinstance(events[-1], ReplyFailed)
        assert isinstance(events[-1].error, NotConfigured)
        assert (await s.repo.current_history(conv.id))[0].content == "hi"


# The second key does not look like one: only the provider's own scrubbing can remove it.
@pytest.mark.parametrize("key", [KEY, "etos-plain-key-7f3a9c2e"])
async def test_key_never_reaches_database_or_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, key: str
):
    caplog.set_level("DEBUG")
    # The fake server repeats the key in every error body (echo_key).
    with FakeOpenAIServer(api_key=key) as server:
        server.script(Fault(401), Fault(400, "bad temperature"), *[Fault(500)] * 4)
        async with chat_stack(tmp_path, server.base_url, api_key=key) as s:
            conv = await s.repo.create_conversation()
            sends = [await s.run(s.chat.send(conv.id, text)) for text in ("hi", "again", "more")]
            for events in sends:
                failed = events[-1]
                assert isinstance(failed, ReplyFailed)
                assert key not in f"{failed.error} {failed.error.detail!r} {failed.error.params!r}"
            history = await s.repo.current_history(conv.id)
    # The server did repeat it; what was kept says what went wrong, without the key.
    assert [m.error_code for m in history if m.role == "assistant"] == [
        "auth",
        "bad_request",
        "server_error",
    ]
    assert history[1].error_detail.endswith("(request made with key [redacted])")  # type: ignore[union-attr]
    assert "bad temperature" in (history[3].error_detail or "")
    for name in ("etos.db", "etos.db-wal", "settings.json"):
        path = tmp_path / name
        if path.exists():
            assert key.encode() not in path.read_bytes(), name
    assert key not in caplog.text


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """``app.setup_logging`` on a temporary data dir; the logging config is restored after."""
    from etos_desktop.app import setup_logging  # the app module imports Qt

    root = logging.getLogger()
    clients = [logging.getLogger(name) for name in ("httpx2", "httpx", "httpcore2", "httpcore")]
    levels = (root.level, [c.level for c in clients])
    handler = setup_logging(tmp_path / "data")
    try:
        yield tmp_path / "data" / "logs" / "etos.log"
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(levels[0])
        for client, level in zip(clients, levels[1], strict=True):
            client.setLevel(level)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_the_log_folder_and_file_are_owner_only(usual_umask: None, log_file: Path):
    # usual_umask before log_file: setup_logging runs under it.
    logging.getLogger("etos_desktop").info("a line with a conversation title in it")
    assert stat.S_IMODE(log_file.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600


async def test_the_log_file_holds_no_key_and_no_request_url(tmp_path: Path, log_file: Path):
    with FakeOpenAIServer(api_key=KEY) as server:
        base_url = server.base_url
        server.script(Fault(401), *[Fault(503)] * 4, Fault(500))
        async with chat_stack(tmp_path / "stack", server.base_url, api_key=KEY) as s:
            conv = await s.repo.create_conversation()
            for text in ("hi", "again"):
                events = await s.run(s.chat.send(conv.id, text))
                assert isinstance(events[-1], ReplyFailed)
            # What the app's error paths log besides: an error's detail (ChatController), an
            # unexpected exception's traceback (the excepthook) — here the client's own
            # exception, whose text is the server's body with the key in it.
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
            try:
                await client.chat.completions.create(
                    model="fake-chat", messages=[{"role": "user", "content": "x"}]
                )
            except openai.APIStatusError:
                logging.getLogger("etos_desktop").exception("unexpected error in a task")
            finally:
                await client.close()
            logging.getLogger("openai").warning(
                "request headers: %s", {"Authorization": f"Bearer {KEY}"}
            )
    text = log_file.read_text(encoding="utf-8")
    assert KEY not in text
    assert KEY[3:] not in text  # not even without its sk- prefix
    assert "retrying chat request" in text  # the app's own lines are written
    assert "Traceback" in text
    assert "(request made with key [redacted])" in text  # the body, minus the key
    assert "'Authorization': '[redacted]'" in text
    # The HTTP client's one line per request, with the full URL, is not written.
    assert "HTTP Request" not in text
    assert base_url not in text


async def test_full_disk_keeps_everything_saved(tmp_path: Path, server: FakeOpenAIServer):
    async with chat_stack(tmp_path, server.base_url) as s:
        conv = await s.repo.create_conversation()
        await s.run(s.chat.send(conv.id, "first message"))

        # Cap the file at its current size: the next write fails with SQLITE_FULL.
        def cap(session):
            conn = session.connection().connection.dbapi_connection
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages}")

        async def fill() -> None:
            big = "x" * 100_000  # fits the model (a longer one is refused before it is saved)
            for _ in range(50):
                await s.run(s.chat.send(conv.id, big))

        # NullPool gives each session a fresh connection, so cap inside the write's connection:
        original = s.db._in_session

        def capped(fn):
            def wrapped(session):
                cap(session)
                return fn(session)

            return original(wrapped)

        s.db._in_session = capped
        with pytest.raises(StorageError) as info:
            await fill()
        assert info.value.params["reason"] == "disk_full"
        s.db._in_session = original
        history = await s.repo.current_history(conv.id)
        assert history[0].content == "first message"
        assert history[1].status == "complete"
    requests_before = len(server.chat_requests())
    assert requests_before == 1
    with sqlite3.connect(tmp_path / "etos.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_automatic_language_is_the_one_the_window_shows(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    """Language "Automatic" under a Chinese locale: a message with no words of its own gets the
    Chinese companion, as the window names it, not English because the setting says "auto"."""
    from etos_desktop.core.changes import ChangeHub
    from etos_desktop.core.chat.service import ChatService

    server.script(Text("好的。"), Text("OK."))
    async with chat_stack(tmp_path, server.base_url) as s:
        assert s.settings.get_str("ui.language") == "auto"
        chinese_window = ChatService(
            s.repo, s.registry, s.settings, ui_language=lambda: "zh", changes=ChangeHub()
        )
        conv = await s.repo.create_conversation()
        await s.run(chinese_window.send(conv.id, "👍"))
        english_window = ChatService(
            s.repo, s.registry, s.settings, ui_language=lambda: "en", changes=ChangeHub()
        )
        other = await s.repo.create_conversation()
        await s.run(english_window.send(other.id, "👍"))
    chinese, english = (r.body["messages"][0]["content"] for r in server.chat_requests())
    assert "小忆" in chinese
    assert "Etos" in english
    assert "小忆" not in english
