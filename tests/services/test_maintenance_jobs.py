"""The daily backup and memory consolidation on the scheduler, on a fake clock."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.jobs import JobName
from etos_desktop.core.memory.records import MemorySource
from etos_desktop.core.storage import backups
from etos_desktop.services.jobs import BACKUP_INTERVAL, CONSOLIDATION_CHECK, STARTUP_DELAY
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.services.conftest import JobsEnv, jobs_env


async def test_backup_is_scheduled_after_start_up_and_then_daily(env: JobsEnv):
    started = env.clock.now()
    assert env.scheduler.run_time("backup") == started + STARTUP_DELAY
    cid = await env.new_conversation("Keep me")
    await env.say(cid, "a message worth keeping")
    env.clock.advance(minutes=2)
    await env.scheduler.fire("backup")
    daily, _before = backups.backups(env.data_dir / "backups")
    assert len(daily) == 1
    copy = sqlite3.connect(daily[0])
    try:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        titles = [r[0] for r in copy.execute("SELECT title FROM conversation")]
        assert titles == ["Keep me"]
    finally:
        copy.close()
    assert daily[0].stat().st_mode & 0o777 == 0o600
    assert not list((env.data_dir / "backups").glob("*.part"))
    assert env.scheduler.run_time("backup") == env.clock.now() + BACKUP_INTERVAL
    status = {s.name: s for s in await env.jobs.statuses()}[JobName.BACKUP]
    assert status.last_success_at == env.clock.now()
    assert status.next_run_at == env.clock.now() + BACKUP_INTERVAL


async def test_backups_rotate_to_the_setting_and_keep_few_pre_migration_copies(env: JobsEnv):
    folder = env.data_dir / "backups"
    folder.mkdir(exist_ok=True)
    for n in range(5):
        (folder / f"etos-before-v{n + 1}-2025010{n + 1}-120000.db").write_bytes(b"old")
    (folder / "etos-daily-20250101-000000.db.part").write_bytes(b"cut short")
    env.stack.settings.set("backup.keep_count", 3)
    for _ in range(5):
        env.clock.advance(days=1)
        await env.scheduler.fire("backup")
    daily, before = backups.backups(folder)
    assert len(daily) == 3
    assert daily[0].name == backups.daily_backup_path(folder, env.clock.now()).name
    assert [p.name[:15] for p in before] == [
        "etos-before-v5-",
        "etos-before-v4-",
        "etos-before-v3-",
    ]
    assert not list(folder.glob("*.part"))


async def test_a_failed_backup_is_recorded_not_raised(env: JobsEnv):
    (env.data_dir / "backups").mkdir(exist_ok=True)
    blocker = (
        env.data_dir
        / "backups"
        / backups.daily_backup_path(Path(), env.clock.now() + timedelta(minutes=2)).name
    )
    blocker.mkdir()  # a directory where the file should go
    env.clock.advance(minutes=2)
    await env.scheduler.fire("backup")
    status = {s.name: s for s in await env.jobs.statuses()}[JobName.BACKUP]
    assert status.failed_last
    assert status.last_error
    assert env.scheduler.run_time("backup") is not None


async def test_restart_catches_up_a_missed_backup(
    tmp_path: Path, server: FakeOpenAIServer, clock: FakeClock
):
    async with jobs_env(tmp_path / "data", server, clock) as env:
        clock.advance(minutes=2)
        await env.scheduler.fire("backup")
        last = clock.now()
    clock.advance(hours=3)
    async with jobs_env(tmp_path / "data", server, clock) as again:
        assert again.scheduler.run_time("backup") == last + BACKUP_INTERVAL
    clock.advance(days=3)
    async with jobs_env(tmp_path / "data", server, clock) as later:
        # Overdue: soon after start-up, never during it.
        assert later.scheduler.run_time("backup") == clock.now() + STARTUP_DELAY


def consolidation_requests(server: FakeOpenAIServer) -> list[dict]:
    return [
        r.body
        for r in server.chat_requests()
        if not r.body.get("stream") and "long-term memory" in r.body["messages"][0]["content"]
    ]


async def save_memories(env: JobsEnv, texts: list[str]) -> list[int]:
    ids = []
    for text in texts:
        ids.append((await env.memory.save(text, "preference")).id)
        env.clock.advance(minutes=1)
    return ids


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


async def test_consolidation_waits_for_eight_new_memories(env: JobsEnv):
    await save_memories(env, MEMORIES[:7])
    env.clock.advance(minutes=2)
    await env.scheduler.fire("consolidation")
    assert consolidation_requests(env.server) == []
    assert env.scheduler.run_time("consolidation") == env.clock.now() + CONSOLIDATION_CHECK


async def test_consolidation_merges_and_supersedes_by_archiving(env: JobsEnv):
    ids = await save_memories(env, MEMORIES)
    pnpm, pnpm2, berlin, shanghai = ids[:4]
    answer = {
        "merge": [{"ids": [pnpm, pnpm2], "text": "Uses and prefers pnpm for JavaScript projects"}],
        "supersede": [{"old": berlin, "new": shanghai}, {"old": 999, "new": ids[4]}],
    }
    env.server.script_when(background, Text(json.dumps(answer)))
    await env.scheduler.fire("consolidation")
    requests = consolidation_requests(env.server)
    assert len(requests) == 1
    body = requests[0]
    assert body["stream"] is False
    assert "tools" not in body
    assert f"#{berlin} [preference," in body["messages"][1]["content"]
    memories = {m.id: m for m in await env.memory.memories(include_inactive=True)}
    merged = [m for m in memories.values() if m.source == MemorySource.CONSOLIDATION]
    assert [m.content for m in merged] == ["Uses and prefers pnpm for JavaScript projects"]
    assert memories[pnpm].superseded_by == merged[0].id
    assert memories[pnpm].archived_at is not None
    assert memories[pnpm2].archived_at is not None
    assert memories[berlin].archived_at is not None
    assert memories[shanghai].archived_at is None
    # Nothing was deleted, and every change is in the memory's history.
    assert len(memories) == len(MEMORIES) + 1
    for memory_id in (pnpm, pnpm2, berlin):
        history = await env.memory.history(memory_id)
        assert any(r.actor == "consolidation" for r in history), memory_id
    status = {s.name: s for s in await env.jobs.statuses()}[JobName.CONSOLIDATION]
    assert status.last_success_at == env.clock.now()
    # The next run waits for 24 hours and new memories.
    await env.scheduler.fire("consolidation")
    assert len(consolidation_requests(env.server)) == 1


async def test_a_consolidation_answer_that_is_not_json_changes_nothing(env: JobsEnv):
    await save_memories(env, MEMORIES)
    env.server.script_when(background, Text("I think they are all fine."))
    await env.scheduler.fire("consolidation")
    assert all(m.archived_at is None for m in await env.memory.memories(include_inactive=True))


async def test_a_failed_consolidation_is_recorded(env: JobsEnv):
    await save_memories(env, MEMORIES)
    env.server.script_when(background, Fault(401))
    await env.scheduler.fire("consolidation")
    status = {s.name: s for s in await env.jobs.statuses()}[JobName.CONSOLIDATION]
    assert status.failed_last
    assert status.last_error == "auth"
    assert status.last_success_at is None


async def test_statuses_list_every_job_and_the_profile_job_with_its_catch_up(env: JobsEnv):
    statuses = await env.jobs.statuses()
    assert [s.name for s in statuses] == list(JobName)
    profile = statuses[[s.name for s in statuses].index(JobName.PROFILE)]
    assert profile.available
    # Never refreshed: caught up shortly after start-up.
    assert profile.next_run_at == env.clock.now() + STARTUP_DELAY
