"""The profile refresh workflow on a real database against the local server.

No scheduler and no Qt: the tests call ``pending`` and ``refresh`` as the jobs service does, and
look at the request the server received, the run returned and the profile stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.profile import rule, sections
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.profile.errors import ProfileRejected
from etos_desktop.core.profile.writing import ProfileRun, ProfileWriter, RefreshInput
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.helpers.stack import chat_stack

#: chat_stack's secret store runs on keyring's fail backend (tests/conftest.py) and says so.
pytestmark = pytest.mark.logs(
    r"^WARNING etos_desktop\.core\.providers\.secrets: no usable keyring \("
)

PROFILE = """## Identity
- Software engineer in Berlin (2026-01-01)

## Expertise
- Python and SQLite (2026-01-01)"""


@dataclass
class Env:
    profile: ProfileAccess
    memory: MemoryAccess
    writer: ProfileWriter
    clock: FakeClock
    server: FakeOpenAIServer
    stages: list[str]

    async def start(self) -> RefreshInput:
        start = await self.writer.pending(self.stages.append)
        assert isinstance(start, RefreshInput)
        return start

    def requests(self) -> list[dict]:
        return [r.body for r in self.server.chat_requests() if background(r.body)]


@pytest.fixture
async def env(tmp_path: Path, server: FakeOpenAIServer) -> AsyncIterator[Env]:
    clock = FakeClock()
    async with chat_stack(tmp_path / "data", server.base_url, clock=clock) as stack:
        profile = ProfileAccess(stack.db, clock=clock)
        memory = MemoryAccess(MemoryEngine(stack.db, clock=clock))
        writer = ProfileWriter(profile, stack.registry, clock, lambda: "en")
        yield Env(profile, memory, writer, clock, server, [])
        await asyncio.get_running_loop().run_in_executor(None, memory.close)


async def test_no_new_material_sends_nothing_and_records_it(env: Env):
    run = await env.writer.pending(env.stages.append)
    assert isinstance(run, ProfileRun)
    assert run.outcome == "nothing_new"
    assert run.profile is not None
    assert run.profile.last_outcome == "nothing_new"
    assert env.stages == ["reading"]
    assert env.requests() == []


async def test_new_material_is_sent_and_the_reply_stored_as_a_revision(env: Env):
    saved = await env.memory.save("The user is a software engineer in Berlin.", "fact")
    env.clock.advance(minutes=1)
    start = await env.start()
    assert [i.id for i in start.material.items] == [saved.id]
    env.server.script_when(background, Text(f"Here is the profile:\n\n{PROFILE}"))
    run = await env.writer.refresh(start, forced=False, progress=env.stages.append)
    assert run.outcome == "changed"
    assert run.error is None
    assert run.profile is not None
    assert run.profile.content == sections.normalised(PROFILE)
    assert run.profile == await env.profile.current()
    assert env.stages == ["reading", "asking", "checking", "saving"]
    [revision] = await env.profile.revisions()
    assert (revision.source, revision.memory_ids) == ("scheduled", (saved.id,))
    [body] = env.requests()
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("fake-chat", 0.2, 4500)
    assert "tools" not in body
    assert "There is no profile yet" in body["messages"][1]["content"]
    assert f"#{saved.id} (fact, 2026-01-01)" in body["messages"][1]["content"]
    # The material is used up.
    env.clock.advance(minutes=1)
    again = await env.writer.pending()
    assert isinstance(again, ProfileRun)
    assert again.outcome == "nothing_new"


async def test_the_same_profile_back_is_unchanged_and_the_users_refresh_is_requested(env: Env):
    await env.memory.save("The user is a software engineer in Berlin.", "fact")
    env.server.script_when(background, Text(PROFILE), Text(PROFILE + "\n"))
    env.clock.advance(minutes=1)
    first = await env.writer.refresh(await env.start(), forced=True)
    assert first.outcome == "changed"
    [revision] = await env.profile.revisions()
    assert revision.source == "requested"
    await env.memory.save("The user writes Python.", "fact")
    env.clock.advance(minutes=1)
    run = await env.writer.refresh(await env.start(), forced=False)
    assert run.outcome == "unchanged"
    assert run.profile is not None
    assert (run.profile.revision_id, run.profile.last_outcome) == (revision.id, "unchanged")
    assert len(await env.profile.revisions()) == 1


async def test_a_rejected_reply_keeps_the_profile_and_backs_off(env: Env):
    await env.memory.save("The user is a software engineer in Berlin.", "fact")
    env.server.script_when(background, Text("Sure! I updated the profile."), *[Fault(500)] * 4)
    env.clock.advance(minutes=1)
    start = await env.start()
    run = await env.writer.refresh(start, forced=False)
    assert run.outcome == "error"
    assert isinstance(run.error, ProfileRejected)
    assert run.error.params["reason"] == "no_sections"
    assert run.profile is not None
    assert run.profile.empty
    assert (run.profile.error_count, run.profile.last_error) == (1, "profile_rejected:no_sections")
    assert run.profile.retry_at == env.clock.now() + rule.FIRST_RETRY_DELAY
    # A failed request the same way, with a longer backoff.
    failed = await env.writer.refresh(await env.start(), forced=False)
    assert failed.outcome == "error"
    assert failed.profile is not None
    assert (failed.profile.error_count, failed.profile.last_error) == (2, "server_error")
    assert failed.profile.retry_at == env.clock.now() + rule.retry_delay(2)
    assert await env.profile.revisions() == []


async def test_an_edit_after_the_reading_wins_over_the_refresh(env: Env):
    await env.memory.save("The user is a software engineer in Berlin.", "fact")
    env.server.script_when(background, Text(PROFILE))
    env.clock.advance(minutes=1)
    start = await env.start()
    await env.profile.save("## Identity\n- Edited by hand", ())
    run = await env.writer.refresh(start, forced=True)
    assert run.outcome == "error"
    assert run.profile is not None
    assert run.profile.content == "## Identity\n- Edited by hand"
    assert run.profile.last_error == "profile_stale"
