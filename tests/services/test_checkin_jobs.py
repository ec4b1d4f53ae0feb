"""The check-in job against the local server, on a fake clock in a real time zone.

Nothing sleeps: a test asserts on the run time the service scheduled, moves the clock there and
fires the job as its timer would, then looks at the request the server received and at what was
stored.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from etos_desktop.core.changes import CheckinShown, ConversationChanged
from etos_desktop.core.checkins.records import STARTED_BY_COMPANION
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.context.assembler import ContextTrace
from etos_desktop.core.jobs import JobName
from etos_desktop.services.checkin_jobs import CHECKIN_JOB_ID
from etos_desktop.services.jobs import STARTUP_DELAY
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.services.conftest import JobsEnv, jobs_env

BERLIN = ZoneInfo("Europe/Berlin")
GREETING = "Good morning, Mia! How did the Kyoto planning go?"
PROFILE = "## Identity\n- Mia, a software engineer in Berlin"
SUMMARY = "The user planned a trip to Kyoto in April and asked about temples to visit."


def berlin(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 1, day, hour, minute, tzinfo=BERLIN).astimezone(UTC)


def checkin_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [
        r.body
        for r in server.chat_requests()
        if background(r.body) and "you speak first" in r.body["messages"][0]["content"]
    ]


def daily(env: JobsEnv, minute: int = 9 * 60) -> None:
    env.stack.settings.set("checkins.mode", "daily")
    env.stack.settings.set("checkins.time", minute)
    env.stack.settings.set("checkins.enabled", True)


async def seed(env: JobsEnv) -> int:
    """A conversation the user had, its summary, and a profile."""
    cid = await env.new_conversation("Kyoto trip")
    await env.stack.repo.add_message(cid, "user", "Help me plan Kyoto in April")
    await env.stack.repo.add_message(cid, "assistant", "Sure!")
    await env.summaries.write_summary(
        conversation_id=cid,
        content=SUMMARY,
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    await env.profile.save(PROFILE, ())
    return cid


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(berlin(5, 7))


@pytest.fixture
async def env(tmp_path: Path, server: FakeOpenAIServer, clock: FakeClock):
    async with jobs_env(tmp_path / "data", server, clock, zone=BERLIN) as made:
        yield made


async def fire_at(env: JobsEnv, when: datetime) -> None:
    assert env.scheduler.run_time(CHECKIN_JOB_ID) == when
    env.clock.advance(seconds=(when - env.clock.now()).total_seconds())
    await env.scheduler.fire(CHECKIN_JOB_ID)
    await env.jobs.wait_idle()


async def test_off_by_default_nothing_is_scheduled(env: JobsEnv):
    await seed(env)
    assert await env.jobs.checkins_changed() == dataclasses.replace(
        await env.jobs.checkin_decision(), reason="off"
    )
    assert env.jobs.next_checkin_at() is None


async def test_a_daily_check_in_fires_at_the_set_time_and_starts_a_marked_conversation(
    env: JobsEnv,
):
    await seed(env)
    published: list[Any] = []
    env.stack.changes.subscribe(published.append, CheckinShown, ConversationChanged)
    daily(env)
    await env.jobs.checkins_changed()
    env.server.script_when(background, Text(GREETING))
    await fire_at(env, berlin(5, 9))

    [body] = checkin_requests(env.server)
    assert body["model"] == "fake-chat"  # the background model: the chat model when unset
    assert body["stream"] is False
    assert "tools" not in body
    system, request = body["messages"]
    assert system["role"] == "system"
    assert f"<profile>\n{PROFILE}\n</profile>" in system["content"]
    assert "<summaries>\n" in system["content"]
    assert SUMMARY in system["content"]
    assert "daily greeting" in system["content"]
    assert request == {
        "role": "user",
        "content": (
            "[Written by the app, not by the user: it is Monday, 2026-01-05 09:00 where the user "
            "is. Write your check-in message now.]"
        ),
    }
    [checkin] = await env.jobs._checkin_jobs.checkins.recent()
    assert (checkin.outcome, checkin.reason, checkin.persona) == ("shown", "daily", "")
    conversation = await env.stack.repo.get_conversation(checkin.conversation_id or 0)
    assert conversation is not None
    assert conversation.started_by == STARTED_BY_COMPANION
    [message] = await env.stack.repo.current_history(conversation.id or 0)
    assert (message.role, message.content, message.reply_to_id) == ("assistant", GREETING, None)
    # The inspector's trace: the request as sent, with the app's message marked as the app's.
    trace = ContextTrace.from_json(await env.stack.repo.get_trace(message.id or 0) or "")
    assert [b.kind for b in trace.blocks] == ["system", "profile", "summaries"]
    assert trace.app_request == request["content"]
    assert trace.model == "fake-chat"
    assert [type(p).__name__ for p in published] == ["ConversationChanged", "CheckinShown"]
    assert published[1] == CheckinShown(conversation.id, "Etos", GREETING)
    # The next one: tomorrow at nine.
    assert env.jobs.next_checkin_at() == berlin(6, 9)
    rows = await env.jobs.runs.all()
    assert rows[JobName.CHECKINS.value].last_success_at == berlin(5, 9)


async def test_silence_fires_after_n_days_not_before(env: JobsEnv):
    await seed(env)  # the user's last message: the 5th at 07:00
    env.stack.settings.set("checkins.enabled", True)
    await env.jobs.checkins_changed()
    # Three days later, at 07:00, the quiet hours (22:00-08:00) still hold it until 08:00.
    assert env.jobs.next_checkin_at() == berlin(8, 8)
    env.clock.advance(days=2, hours=23)
    # Firing early (a timer of a clock that moved) asks the rule again: nothing is sent.
    await env.scheduler.fire(CHECKIN_JOB_ID)
    assert checkin_requests(env.server) == []
    env.server.script_when(background, Text("Hi Mia, it has been a few days. How are you?"))
    await fire_at(env, berlin(8, 8))
    [body] = checkin_requests(env.server)
    assert "has not talked with you for 3 days" in body["messages"][0]["content"]
    # The next: three days after this one, not the next day.
    assert env.jobs.next_checkin_at() == berlin(11, 8)


async def test_a_failed_request_shows_nothing_and_waits_for_the_next_due_time(env: JobsEnv):
    await seed(env)
    daily(env)
    await env.jobs.checkins_changed()
    env.server.script_when(background, *[Fault(500)] * 4)
    await fire_at(env, berlin(5, 9))
    assert len(checkin_requests(env.server)) == 4  # one try and the client's three retries
    [checkin] = await env.jobs._checkin_jobs.checkins.recent()
    assert (checkin.outcome, checkin.conversation_id, checkin.error) == (
        "failed",
        None,
        "server_error",
    )
    conversations = await env.stack.repo.list_conversations()
    assert [c.started_by for c in conversations] == [None]
    # Not in a loop: the next try is tomorrow's time; nothing more is sent today.
    assert env.jobs.next_checkin_at() == berlin(6, 9)
    await env.jobs.wait_idle()
    assert len(checkin_requests(env.server)) == 4
    rows = await env.jobs.runs.all()
    assert rows[JobName.CHECKINS.value].last_error == "server_error"
    # Tomorrow it works.
    env.server.script_when(background, Text(GREETING))
    await fire_at(env, berlin(6, 9))
    assert len(checkin_requests(env.server)) == 5


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [("memory.enabled", False, "memory_off"), ("checkins.personas_off", '[""]', "no_persona")],
)
async def test_never_with_memory_off_or_the_personas_switch_off(env: JobsEnv, key, value, reason):
    await seed(env)
    daily(env)
    env.stack.settings.set(key, value)
    decision = await env.jobs.checkins_changed()
    assert (decision.at, decision.reason) == (None, reason)
    assert env.jobs.next_checkin_at() is None


async def test_a_conversations_own_persona_speaks_when_it_was_used_last(env: JobsEnv):
    await seed(env)
    cid = await env.new_conversation("Study")
    await env.stack.repo.update_conversation(
        cid, persona_name="Coach Li", persona_prompt="You are a strict study coach."
    )
    await env.stack.repo.add_message(cid, "user", "Quiz me on verbs")
    daily(env)
    await env.jobs.checkins_changed()
    env.server.script_when(background, Text("Ready for today's verbs?"))
    await fire_at(env, berlin(5, 9))
    [body] = checkin_requests(env.server)
    assert "Your name is Coach Li.\nYou are a strict study coach." in body["messages"][0]["content"]
    [checkin] = await env.jobs._checkin_jobs.checkins.recent()
    assert checkin.persona == "Coach Li"
    started = await env.stack.repo.get_conversation(checkin.conversation_id or 0)
    assert started is not None
    assert (started.persona_name, started.persona_prompt) == (
        "Coach Li",
        "You are a strict study coach.",
    )


async def test_at_most_one_a_day_across_personas(env: JobsEnv):
    await seed(env)
    daily(env)
    await env.jobs.checkins_changed()
    env.server.script_when(background, Text(GREETING), Text("Another one"))
    await fire_at(env, berlin(5, 9))
    # Switching the persona that spoke off (another may speak now) changes nothing today.
    env.stack.settings.set("checkins.personas_off", '[""]')
    cid = await env.new_conversation("Study")
    await env.stack.repo.update_conversation(cid, persona_name="Coach Li")
    env.clock.advance(hours=1)
    await env.jobs.checkins_changed()
    assert env.jobs.next_checkin_at() == berlin(6, 9)
    await env.jobs.check_in()
    assert len(checkin_requests(env.server)) == 1


async def test_without_a_provider_nothing_is_scheduled_and_it_says_so_at_info(
    tmp_path: Path, server: FakeOpenAIServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
):
    async with jobs_env(tmp_path / "data", server, clock, zone=BERLIN) as env:
        for config in env.stack.settings.providers():
            env.stack.settings.remove_provider(config.id)
        daily(env)
        caplog.set_level("INFO")
        decision = await env.jobs.checkins_changed()
        assert decision.reason == "no_provider"
        assert env.jobs.next_checkin_at() is None
        said = [r for r in caplog.records if "check-ins wait" in r.getMessage()]
        assert [(r.levelname, r.getMessage()) for r in said] == [
            ("INFO", "check-ins wait: no_provider")
        ]
        assert checkin_requests(server) == []


async def test_start_up_waits_before_an_overdue_check_in(
    tmp_path: Path, server: FakeOpenAIServer, clock: FakeClock
):
    async with jobs_env(tmp_path / "data", server, clock, zone=BERLIN) as env:
        await seed(env)
    clock.advance(days=5, hours=3)  # overdue since the 8th; now 10:00, not quiet
    async with jobs_env(
        tmp_path / "data", server, clock, zone=BERLIN, checkins__enabled=True
    ) as env:
        assert env.jobs.next_checkin_at() == clock.now() + STARTUP_DELAY


async def test_a_reply_moves_the_check_in_past_the_conversation(env: JobsEnv):
    cid = await seed(env)
    daily(env)
    await env.jobs.checkins_changed()
    assert env.jobs.next_checkin_at() == berlin(5, 9)
    env.clock.advance(hours=1, minutes=50)  # 08:50: the user is talking
    env.server.script(Text("Kinkaku-ji is lovely in April."))
    await env.say(cid, "Which temple first?")
    await env.jobs.wait_idle()
    assert env.jobs.next_checkin_at() == berlin(5, 9, 20)
    assert timedelta(minutes=30) == berlin(5, 9, 20) - berlin(5, 8, 50)
