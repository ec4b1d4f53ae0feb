"""The jobs service on the real core stack: a temporary database, a fake clock and the local server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.chat.service import ChatService
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.transfer.service import TransferService
from etos_desktop.services.jobs import BackgroundJobs, summary_job_id
from etos_desktop.services.scheduler import JobScheduler
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.stack import Stack, chat_stack


@dataclass
class JobsEnv:
    stack: Stack
    chat: ChatService
    summaries: SummaryAccess
    jobs: BackgroundJobs
    scheduler: JobScheduler
    clock: FakeClock
    server: FakeOpenAIServer
    data_dir: Path
    memory: MemoryAccess
    profile: ProfileAccess
    transfer: TransferService

    async def new_conversation(self, title: str = "") -> int:
        row = await self.stack.repo.create_conversation(title)
        assert row.id is not None
        return row.id

    async def say(self, conversation_id: int, text: str) -> list[Any]:
        """Send ``text`` and let the reply and the checks after it finish."""
        events = [event async for event in self.chat.send(conversation_id, text)]
        await self.jobs.wait_idle()
        return events

    def summary_requests(self) -> list[dict[str, Any]]:
        return [
            r.body
            for r in self.server.chat_requests()
            if not r.body.get("stream") and "summary" in r.body["messages"][0]["content"]
        ]

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.server.chat_requests() if r.body.get("stream")]

    def profile_requests(self) -> list[dict[str, Any]]:
        return [
            r.body
            for r in self.server.chat_requests()
            if not r.body.get("stream") and "profile" in r.body["messages"][0]["content"]
        ]

    def run_time(self, conversation_id: int) -> Any:
        return self.scheduler.run_time(summary_job_id(conversation_id))


EnvFactory = Callable[..., Any]


@asynccontextmanager
async def jobs_env(
    data_dir: Path,
    server: FakeOpenAIServer,
    clock: FakeClock,
    *,
    zone: tzinfo = UTC,
    embedder: Any = None,
    **settings: Any,
) -> AsyncIterator[JobsEnv]:
    """The stack with summaries, the profile and the jobs service, started; shut down on exit.

    ``zone`` is the local time zone the daily profile refresh follows; ``embedder`` the memory
    embedder (``None``: keyword search only, so a change cue supersedes nothing).
    """
    async with chat_stack(data_dir, server.base_url, clock=clock) as stack:
        stack.settings.set("chat.auto_title", False)
        for key, value in settings.items():
            stack.settings.set(key.replace("__", "."), value)
        memory = MemoryAccess(
            MemoryEngine(stack.db, clock=clock, embedder=embedder), changes=stack.changes
        )
        summaries = SummaryAccess(
            stack.db,
            clock=clock,
            embedding=lambda: (memory.engine.embedder, memory.engine.tuning),
        )
        profile = ProfileAccess(stack.db, clock=clock)
        chat = ChatService(
            stack.repo,
            stack.registry,
            stack.settings,
            memory=memory,
            summaries=summaries,
            clock=clock,
            profile=profile,
            changes=stack.changes,
        )
        scheduler = JobScheduler(clock)
        jobs = BackgroundJobs(
            db=stack.db,
            changes=stack.changes,
            summaries=summaries,
            providers=stack.registry,
            settings=stack.settings,
            clock=clock,
            scheduler=scheduler,
            memory=memory,
            backup_dir=data_dir / "backups",
            profile=profile,
            zone=zone,
        )
        await jobs.start()
        transfer = TransferService(memory, summaries=summaries, profile=profile)
        env = JobsEnv(
            stack,
            chat,
            summaries,
            jobs,
            scheduler,
            clock,
            server,
            data_dir,
            memory,
            profile,
            transfer,
        )
        try:
            yield env
        finally:
            await jobs.shutdown()
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, summaries.close)
            await loop.run_in_executor(None, memory.close)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def env(tmp_path: Path, server: FakeOpenAIServer, clock: FakeClock) -> AsyncIterator[JobsEnv]:
    async with jobs_env(tmp_path / "data", server, clock) as made:
        yield made
