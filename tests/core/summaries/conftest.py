"""Fixtures of the summary tests: a real database on a temporary dir and a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.summaries.access import SummaryAccess


@dataclass
class Store:
    db: Database
    repo: ChatRepository
    access: SummaryAccess
    clock: FakeClock

    async def conversation(self, turns: int, title: str = "", *, temporary: bool = False) -> int:
        """A conversation with ``turns`` user messages, each answered."""
        row = await self.repo.create_conversation(title, temporary=temporary)
        assert row.id is not None
        await self.talk(row.id, turns)
        return row.id

    async def talk(self, conversation_id: int, turns: int, start: int = 0) -> list[int]:
        ids = []
        for i in range(start, start + turns):
            user = await self.repo.add_message(conversation_id, "user", f"question {i}")
            reply = await self.repo.add_message(
                conversation_id, "assistant", f"answer {i}", reply_to_id=user.id
            )
            ids += [user.id or 0, reply.id or 0]
        return ids


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    clock = FakeClock()
    db = Database(tmp_path / "etos.db", tmp_path / "backups", clock=clock)
    await db.open_async()
    access = SummaryAccess(db, clock=clock)
    yield Store(db, ChatRepository(db), access, clock)
    access.close()
    await asyncio.get_running_loop().run_in_executor(None, db.close)
