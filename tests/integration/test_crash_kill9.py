"""A reply streaming when the app is killed with SIGKILL is kept, and marked interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text

REPO_ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from tests.helpers.stack import chat_stack

    async def main(data_dir, base_url):
        async with chat_stack(Path(data_dir), base_url, api_key=None) as s:
            conv = await s.repo.create_conversation()
            async for _event in s.chat.send(conv.id, "tell me a long story"):
                pass

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
async def test_kill_while_streaming_keeps_partial_reply(tmp_path: Path):
    words = [f"word{i}" for i in range(400)]
    with FakeOpenAIServer() as server:
        server.script(Text(" ".join(words), delay=0.02))
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        stderr_path = tmp_path / "child-stderr.txt"
        with stderr_path.open("wb") as stderr:
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(tmp_path), server.base_url],
                cwd=REPO_ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        try:
            # 60 chunks at 20 ms ≈ 1.2 s of streaming: several throttled writes (every 0.25 s).
            assert server.wait_for_chunks(60, timeout=30), stderr_path.read_text()
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == -signal.SIGKILL
        sent_chunks = server.chunks_sent

    db = Database(tmp_path / "etos.db")
    db.open()
    try:
        assert db.recovered_on_open == 1
        repo = ChatRepository(db)
        conversations = await repo.list_conversations()
        history = await repo.current_history(conversations[0].id)
        user, reply = history
        assert user.content == "tell me a long story"
        assert reply.status == "interrupted"
        assert reply.content, "the partial reply was not persisted while streaming"
        full = " ".join(words)
        assert full.startswith(reply.content)
        # Throttled persistence: at most ~0.25 s of text (≈ 15 chunks) may be lost.
        assert len(reply.content.split()) >= sent_chunks - 40
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    finally:
        db.close()
