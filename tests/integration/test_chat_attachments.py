"""The chat service with attachments: real SQLite, real files, the real client ↔ local server."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from etos_desktop.core.chat.attachments import PreparedAttachment, PreparedImage, prepare_attachment
from etos_desktop.core.chat.events import ReplyFailed, ReplyFinished, UserMessageSaved
from etos_desktop.core.context.assembler import ContextTrace
from etos_desktop.core.errors import ImagesNotAccepted, MessageTooLong, StorageError
from etos_desktop.core.storage.attachments import AttachmentRepository, BlobStore
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.stack import Stack, chat_stack

KEY = "sk-test-key-123456"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=KEY, models=["fake-chat", "gpt-4o"]) as srv:
        yield srv


@pytest.fixture
async def stack(tmp_path: Path, server: FakeOpenAIServer) -> AsyncIterator[Stack]:
    async with chat_stack(tmp_path / "data", server.base_url, model="gpt-4o") as built:
        built.chat.attachments = AttachmentRepository(
            built.db, BlobStore(tmp_path / "data" / "attachments")
        )
        yield built


def codec(data: bytes) -> PreparedImage:
    return PreparedImage(b"\x89PNG" + data, "image/png", 8, 8)


def image(name: str) -> PreparedAttachment:
    return prepare_attachment(name, name.encode(), codec)


def document(name: str, text: str) -> PreparedAttachment:
    return prepare_attachment(name, text.encode(), codec)


async def new_conversation(stack: Stack) -> int:
    return (await stack.repo.create_conversation()).id or 0


def user_messages(server: FakeOpenAIServer) -> list[dict[str, object]]:
    body = server.chat_requests()[-1].body
    return [m for m in body["messages"] if m["role"] == "user"]


async def test_files_are_stored_content_addressed_and_private(stack: Stack, tmp_path: Path):
    cid = await new_conversation(stack)
    doc = document("a.txt", "alpha")
    events = await stack.run(stack.chat.send(cid, "read", [doc, image("p.png")]))
    assert isinstance(events[-1], ReplyFinished)
    user = next(e.message for e in events if isinstance(e, UserMessageSaved))
    records = (await stack.chat.attachments.for_messages([user.id]))[user.id]
    assert [(r.kind, r.name, r.position) for r in records] == [
        ("document", "a.txt", 0),
        ("image", "p.png", 1),
    ]
    root = tmp_path / "data" / "attachments"
    for record in records:
        path = root / record.sha256[:2] / record.sha256
        assert path.is_file()
        if os.name == "posix":
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert (root / records[0].sha256[:2] / records[0].sha256).read_bytes() == b"alpha"


async def test_images_replay_for_the_last_three_user_messages_only(
    stack: Stack, server: FakeOpenAIServer
):
    cid = await new_conversation(stack)
    for number in range(4):
        await stack.run(stack.chat.send(cid, f"n{number}", [image(f"p{number}.png")]))
    users = user_messages(server)
    assert isinstance(users[0]["content"], str)
    assert "p0.png" in users[0]["content"]
    assert all(isinstance(u["content"], list) for u in users[1:])
    # The trace says how each went (the context inspector shows it).
    history = await stack.repo.current_history(cid)
    trace = ContextTrace.from_json(await stack.repo.get_trace(history[-1].id))
    assert [(a.message, a.name, a.sent) for a in trace.attachments] == [
        ("history", "p0.png", "note"),
        ("history", "p1.png", "image"),
        ("history", "p2.png", "image"),
        ("current", "p3.png", "image"),
    ]
    # Documents are replayed with every message that has them.
    await stack.run(stack.chat.send(cid, "doc", [document("d.txt", "delta words")]))
    await stack.run(stack.chat.send(cid, "and now?"))
    users = user_messages(server)
    assert "delta words" in users[-2]["content"]


async def test_a_model_without_images_gets_notes_and_refuses_new_ones(
    stack: Stack, server: FakeOpenAIServer
):
    cid = await new_conversation(stack)
    await stack.run(stack.chat.send(cid, "look", [image("p.png")]))
    await stack.repo.update_conversation(cid, model="fake-chat")
    before = len(server.chat_requests())
    with pytest.raises(ImagesNotAccepted) as exc:
        await stack.run(stack.chat.send(cid, "again", [image("q.png")]))
    assert exc.value.params["model"] == "fake-chat"
    assert len(server.chat_requests()) == before
    assert [m.content for m in await stack.repo.current_history(cid) if m.role == "user"] == [
        "look"
    ]
    # A text message to it still goes; the earlier image is a note.
    await stack.run(stack.chat.send(cid, "what was it?"))
    users = user_messages(server)
    assert "p.png" in users[0]["content"]
    assert "data:image" not in str(users)
    # Regenerating the reply to the message with the image: refused in the reply's status.
    first_user = next(m for m in await stack.repo.current_history(cid) if m.role == "user")
    events = await stack.run(stack.chat.regenerate(first_user.id))
    assert isinstance(events[-1], ReplyFailed)
    assert events[-1].error.code == "images_not_accepted"


async def test_documents_count_against_the_models_budget(stack: Stack, server: FakeOpenAIServer):
    cid = await new_conversation(stack)
    stack.settings.set_model_context("gpt-4o", 4096)
    big = document("big.txt", "word " * 20_000)
    with pytest.raises(MessageTooLong):
        await stack.run(stack.chat.send(cid, "summarise", [big]))
    assert await stack.repo.current_history(cid) == []
    assert server.chat_requests() == []


async def test_edit_and_resend_keeps_the_files(stack: Stack, server: FakeOpenAIServer):
    cid = await new_conversation(stack)
    events = await stack.run(stack.chat.send(cid, "read it", [document("a.txt", "alpha beta")]))
    old = next(e.message for e in events if isinstance(e, UserMessageSaved))
    await stack.run(stack.chat.edit_and_resend(old.id, "read it carefully"))
    users = user_messages(server)
    assert "alpha beta" in users[-1]["content"]
    assert users[-1]["content"].endswith("read it carefully")


async def test_a_failed_store_leaves_no_message(
    stack: Stack, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
):
    cid = await new_conversation(stack)

    def full(_data: bytes) -> str:
        raise StorageError("disk full", reason="disk_full")

    monkeypatch.setattr(stack.chat.attachments.blobs, "put", full)
    with pytest.raises(StorageError):
        await stack.run(stack.chat.send(cid, "with a file", [document("a.txt", "x")]))
    assert await stack.repo.current_history(cid) == []
    assert server.chat_requests() == []


async def test_unused_files_are_removed_shared_ones_kept(stack: Stack, tmp_path: Path):
    repo = stack.chat.attachments
    one = await new_conversation(stack)
    two = await new_conversation(stack)
    shared = document("s.txt", "shared")
    await stack.run(stack.chat.send(one, "1", [shared, document("o.txt", "only one")]))
    await stack.run(stack.chat.send(two, "2", [shared]))
    files = await repo.of_conversation(one)
    await stack.repo.delete_conversation(one)
    assert await repo.remove_unused(files) == 1
    assert len(repo.blobs.names()) == 1
    # A file a crash left behind, and a half-written one, go at the next start.
    repo.blobs.put(b"orphan")
    stray = repo.blobs.root / "ab" / ".abc.tmp"
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"half")
    os.utime(repo.blobs.path(repo.blobs.put(b"orphan")), (1, 1))
    assert await repo.sweep() == 2
    assert len(repo.blobs.names()) == 1
    assert not stray.exists()


async def test_a_missing_file_becomes_a_note(
    stack: Stack, server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
):
    cid = await new_conversation(stack)
    await stack.run(stack.chat.send(cid, "look", [image("p.png")]))
    for sha in stack.chat.attachments.blobs.names():
        stack.chat.attachments.blobs.remove(sha)
    events = await stack.run(stack.chat.send(cid, "and?"))
    assert isinstance(events[-1], ReplyFinished)
    assert "p.png" in user_messages(server)[0]["content"]
    assert "is missing" in caplog.text
