"""The consolidation workflow on a real database against the local server.

No scheduler and no Qt: the tests call ``pending`` and ``consolidate`` as the jobs service does,
and look at the request the server received, the run returned and the memories' state.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.consolidation import (
    MIN_INTERVAL,
    ConsolidationRun,
    MemoryConsolidator,
    Merge,
    Proposals,
    Supersession,
    new_memories,
)
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.records import Memory, MemorySource
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.helpers.records import make_memory
from tests.helpers.stack import chat_stack

#: chat_stack's secret store runs on keyring's fail backend (tests/conftest.py) and says so.
pytestmark = pytest.mark.logs(
    r"^WARNING etos_desktop\.core\.providers\.secrets: no usable keyring \("
)

MEMORIES = [
    "Uses pnpm for JavaScript projects",
    "Prefers pnpm over npm for JavaScript",
    "Lives in Berlin",
    "Moved to Shanghai this spring",
    "Likes green tea",
    "Is allergic to peanuts",
    "Plays the violin on weekends",
    "Works as a nurse",
]


@dataclass
class Env:
    memory: MemoryAccess
    consolidator: MemoryConsolidator
    clock: FakeClock
    server: FakeOpenAIServer

    async def save(self, texts: list[str]) -> list[int]:
        ids = []
        for text in texts:
            ids.append((await self.memory.save(text, "preference")).id)
            self.clock.advance(minutes=1)
        return ids

    async def active(self) -> list[Memory]:
        active = await self.consolidator.pending(None, self.clock.now())
        assert active is not None
        return active

    async def by_id(self) -> dict[int, Memory]:
        return {m.id: m for m in await self.memory.memories(include_inactive=True)}

    def requests(self) -> list[dict]:
        return [r.body for r in self.server.chat_requests() if background(r.body)]


@pytest.fixture
async def env(tmp_path: Path, server: FakeOpenAIServer) -> AsyncIterator[Env]:
    clock = FakeClock()
    async with chat_stack(tmp_path / "data", server.base_url, clock=clock) as stack:
        memory = MemoryAccess(MemoryEngine(stack.db, clock=clock))
        consolidator = MemoryConsolidator(memory, stack.registry, lambda: "en")
        yield Env(memory, consolidator, clock, server)
        await asyncio.get_running_loop().run_in_executor(None, memory.close)


def test_new_memories_leave_out_older_ones_and_consolidations_own():
    now = FakeClock().now()
    old = make_memory(1, "old", now - timedelta(days=2))
    new = make_memory(2, "new", now)
    merged = dataclasses.replace(make_memory(3, "merged", now), source=MemorySource.CONSOLIDATION)
    assert new_memories([old, new, merged], None) == [old, new]
    assert new_memories([old, new, merged], now - timedelta(days=1)) == [new]


async def test_pending_waits_for_eight_new_memories_and_a_day(env: Env):
    await env.save(MEMORIES[:7])
    assert await env.consolidator.pending(None, env.clock.now()) is None
    await env.save(MEMORIES[7:])
    assert len(await env.active()) == 8
    ran_at = env.clock.now() - timedelta(hours=1)
    assert await env.consolidator.pending(ran_at, env.clock.now()) is None
    assert await env.consolidator.pending(None, ran_at + MIN_INTERVAL) is not None
    assert env.requests() == []


async def test_proposals_are_applied_by_archiving_and_returned(env: Env):
    pnpm, pnpm2, berlin, shanghai, *_ = await env.save(MEMORIES)
    answer = {
        "merge": [{"ids": [pnpm, pnpm2], "text": "Uses and prefers pnpm for JavaScript"}],
        "supersede": [{"old": berlin, "new": shanghai}, {"old": 999, "new": shanghai}],
    }
    env.server.script_when(background, Text(json.dumps(answer)))
    run = await env.consolidator.consolidate(await env.active())
    assert run == ConsolidationRun(
        "applied",
        Proposals(
            (Merge((pnpm, pnpm2), "Uses and prefers pnpm for JavaScript"),),
            (Supersession(berlin, shanghai),),
        ),
    )
    memories = await env.by_id()
    [merged] = [m for m in memories.values() if m.source == MemorySource.CONSOLIDATION]
    assert merged.content == "Uses and prefers pnpm for JavaScript"
    assert memories[pnpm].superseded_by == merged.id
    assert all(memories[i].archived_at is not None for i in (pnpm, pnpm2, berlin))
    assert memories[shanghai].archived_at is None
    [body] = env.requests()
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("fake-chat", 0.2, 1200)
    assert "tools" not in body
    assert "long-term memory" in body["messages"][0]["content"]
    # Newest first.
    lines = body["messages"][1]["content"].splitlines()
    assert lines[1].endswith(MEMORIES[-1])
    assert lines[-2].endswith(MEMORIES[0])


async def test_an_answer_without_proposals_changes_nothing(env: Env):
    await env.save(MEMORIES)
    env.server.script_when(background, Text("I think they are all fine."))
    assert await env.consolidator.consolidate(await env.active()) == ConsolidationRun(
        "nothing_proposed"
    )
    assert all(m.archived_at is None for m in (await env.by_id()).values())


async def test_a_merged_wording_the_write_checks_refuse_is_not_applied(env: Env):
    pnpm, pnpm2, *_ = await env.save(MEMORIES)
    merge = {"ids": [pnpm, pnpm2], "text": "Uses pnpm; my password is hunter2!"}
    env.server.script_when(background, Text(json.dumps({"merge": [merge]})))
    run = await env.consolidator.consolidate(await env.active())
    assert run.outcome == "refused"
    assert run.refused == (Merge((pnpm, pnpm2), merge["text"]),)
    assert run.error is None
    assert all(m.archived_at is None for m in (await env.by_id()).values())


@pytest.mark.logs(
    r"^WARNING etos_desktop\.core\.memory\.consolidation: consolidation failed: auth$"
)
async def test_a_failed_request_is_returned_not_raised(env: Env):
    await env.save(MEMORIES)
    env.server.script_when(background, Fault(401))
    run = await env.consolidator.consolidate(await env.active())
    assert run.outcome == "error"
    assert getattr(run.error, "code", None) == "auth"
    assert all(m.archived_at is None for m in (await env.by_id()).values())
