"""After a stated change nothing contradicts it undated (issue 18).

The user says "I switched from coffee to tea" over an older coffee memory, a profile and a
summary that mention coffee. The next request carries the tea memory with its date and not the
archived coffee one; the profile and the summary carry their dates, and the labels say that the
later date wins. The supersession schedules a profile refresh ten minutes later on the fake
clock; fired as the timer would, it sends the tea memory to the background model and stores
the new profile. A supersession that consolidation or an import made schedules no such refresh.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from etos_desktop.core.chat.events import MemorySaved
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.records import MemorySource
from etos_desktop.core.profile import rule, sections
from etos_desktop.core.transfer.document import export_json
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, ToolCall, background
from tests.services.conftest import JobsEnv, jobs_env

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
#: The refresh after a stated change (``rule.CHANGE_REFRESH_DELAY``).
TEN_MINUTES = timedelta(minutes=10)

COFFEE = "I drink coffee every morning"
TEA = "I switched from coffee to tea"
PROFILE_COFFEE = """## Identity
- Software engineer in Berlin (2026-01-01)

## Interests
- Drinks coffee every morning (2026-01-01)"""
PROFILE_TEA = """## Identity
- Software engineer in Berlin (2026-01-01)

## Interests
- Drinks tea now; switched from coffee (2026-01-04)"""
SUMMARY = "The user described their morning routine: a coffee before work and a short run."


def chat_requests(env: JobsEnv) -> list[dict[str, Any]]:
    return [r.body for r in env.server.chat_requests() if r.body.get("stream")]


def memory_message(body: dict[str, Any]) -> str:
    """The memory block: the system message right before the current user message."""
    before = body["messages"][-2]
    assert before["role"] == "system"
    assert "<memories>" in before["content"]
    return str(before["content"])


async def coffee_world(env: JobsEnv, kind: str = "preference") -> int:
    """An old coffee memory, a profile and another conversation's summary that mention it.

    ``/remember`` saves a fact, and a change cue only supersedes a memory of its own kind.
    """
    coffee = await env.memory.save(COFFEE, kind, source=MemorySource.USER_STATEMENT)
    env.server.script_when(background, Text(PROFILE_COFFEE))
    env.clock.advance(minutes=1)
    assert (await env.jobs.refresh_profile()).outcome == "changed"
    env.clock.advance(days=1)
    other = await env.new_conversation("Mornings")
    await env.summaries.write_summary(
        conversation_id=other,
        content=SUMMARY,
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    return coffee.id


async def test_a_stated_change_is_sent_dated_and_refreshes_the_profile_ten_minutes_later(
    tmp_path: Path, server: FakeOpenAIServer, use_embedder: Any
):
    clock = FakeClock(START)
    async with jobs_env(
        tmp_path / "data", server, clock, embedder=use_embedder, memory__per_message="fixed"
    ) as env:
        coffee = await coffee_world(env)
        clock.advance(days=2)  # 2026-01-04 12:01
        cid = await env.new_conversation()
        # The model saves the stated change; the change cue supersedes the coffee memory.
        server.script(
            ToolCall("save_memory", json.dumps({"content": TEA, "kind": "preference"})),
            Text("Noted: tea it is."),
        )
        events = await env.say(cid, TEA)
        saved = next(e for e in events if isinstance(e, MemorySaved))
        assert saved.superseded == coffee
        tea = saved.memory_id
        changed_at = clock.now()

        # The next request: the tea memory with its date, never the archived coffee memory.
        clock.advance(minutes=1)
        await env.say(cid, "Coffee or tea this morning, what do you suggest for me?")
        body = chat_requests(env)[-1]
        block = memory_message(body)
        assert f"- #{tea} (preference, 2026-01-04, confidence 1.0) {TEA}" in block
        assert "where a memory, the profile or a summary disagree" in block.lower()
        assert "the later date holds" in block
        assert COFFEE not in json.dumps(body["messages"], ensure_ascii=False)
        system = body["messages"][0]["content"]
        assert "The user's profile, last updated 2026-01-01 —" in system
        assert "- Drinks coffee every morning (2026-01-01)" in system
        assert f"- 2026-01-02 · “Mornings”: {SUMMARY}" in system
        assert "the later date wins" in system

        # The supersession scheduled a refresh ten minutes after it, on the fake clock.
        assert env.jobs.next_profile_refresh_at() == changed_at + TEN_MINUTES
        assert rule.CHANGE_REFRESH_DELAY == TEN_MINUTES
        assert env.profile_requests()[1:] == []

        # Fired as the timer would: the tea memory is new material, the new profile is stored.
        server.script_when(background, Text(PROFILE_TEA))
        clock.advance(minutes=9)
        await env.scheduler.fire("profile")
        [request] = env.profile_requests()[1:]
        material = request["messages"][1]["content"]
        assert f"#{tea} (preference, 2026-01-04) {TEA}" in material
        assert COFFEE not in material
        profile = await env.profile.current()
        assert profile.content == sections.normalised(PROFILE_TEA)
        assert profile.updated_at == clock.now()
        # Then the daily run again, not another early one.
        assert env.jobs.next_profile_refresh_at() == datetime(2026, 1, 5, 4, 0, tzinfo=UTC)

    # Derived from data: a restart before the ten minutes are up schedules it again.
    clock.advance(hours=1)
    async with jobs_env(tmp_path / "data", server, clock, embedder=use_embedder) as env:
        cid = await env.new_conversation()
        water = "I no longer drink tea, I drink water now"
        server.script(
            ToolCall("save_memory", json.dumps({"content": water, "kind": "preference"})),
            Text("Water, then."),
        )
        events = await env.say(cid, water)
        [saved] = [e for e in events if isinstance(e, MemorySaved)]
        assert saved.superseded == tea
        changed_at = clock.now()
        assert env.jobs.next_profile_refresh_at() == changed_at + TEN_MINUTES
    clock.advance(minutes=3)
    async with jobs_env(tmp_path / "data", server, clock, embedder=use_embedder) as env:
        assert env.jobs.next_profile_refresh_at() == changed_at + TEN_MINUTES


async def test_only_the_users_supersessions_schedule_the_early_refresh(
    tmp_path: Path, server: FakeOpenAIServer, use_embedder: Any
):
    clock = FakeClock(START)
    async with jobs_env(tmp_path / "data", server, clock, embedder=use_embedder) as env:
        coffee = await coffee_world(env, kind="fact")
        await env.jobs.settings_changed()
        daily = env.jobs.next_profile_refresh_at()
        assert daily == env.jobs.next_daily_refresh()
        # Consolidation merges two memories: the merged one supersedes the first.
        ids = []
        for text in [
            "Uses pnpm for JavaScript projects",
            "Prefers pnpm over npm for JavaScript",
            "Lives in Berlin",
            "Is allergic to peanuts",
            "Plays the violin on weekends",
            "Works as a nurse",
            "Has a cat called Miso",
            "Reads science fiction",
        ]:
            ids.append((await env.memory.save(text, "fact")).id)
            clock.advance(minutes=1)
        answer = {"merge": [{"ids": ids[:2], "text": "Uses and prefers pnpm for JavaScript"}]}
        server.script_when(background, Text(json.dumps(answer)))
        await env.scheduler.fire("consolidation")
        merged = await env.memory.get(ids[0])
        assert merged is not None
        assert merged.superseded_by is not None
        assert env.jobs.next_profile_refresh_at() == daily

        # An import whose file holds a supersession (made elsewhere, by its user).
        other_path = tmp_path / "other" / "memory.db"
        other_path.parent.mkdir()
        with MemoryEngine.open(other_path, clock=clock) as other:
            old = other.save("Drives a red car").id
            other.supersede(old, "Drives a blue car")
            document = export_json(
                other.memories(include_inactive=True), exported_at=clock.now(), app_version="t"
            )
        path = tmp_path / "export.json"
        path.write_text(document, encoding="utf-8")
        preview = await env.transfer.preview_import_file(path, now=clock.now())
        result = await env.transfer.apply_import(preview)
        assert len(result.added) == 2
        assert env.jobs.next_profile_refresh_at() == daily
        await env.jobs.settings_changed()
        assert env.jobs.next_profile_refresh_at() == env.jobs.next_daily_refresh()

        # The user's own /remember with a change cue does schedule it.
        cid = await env.new_conversation()
        events = await env.say(cid, f"/remember {TEA}")
        [saved] = [e for e in events if isinstance(e, MemorySaved)]
        assert saved.superseded == coffee
        assert env.jobs.next_profile_refresh_at() == clock.now() + TEN_MINUTES

        # With the profile off, a stated change schedules nothing.
        env.stack.settings.set("profile.enabled", False)
        await env.jobs.settings_changed()
        assert env.jobs.next_profile_refresh_at() is None
        clock.advance(minutes=1)
        await env.say(cid, "/remember I no longer drink tea, I drink water now")
        assert env.jobs.next_profile_refresh_at() is None
