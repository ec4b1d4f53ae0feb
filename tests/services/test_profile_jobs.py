"""The daily profile refresh against the local server, on a fake clock.

Nothing sleeps: a test asserts on the run time of the job the service scheduled, moves the clock
there and fires the job as its timer would, then looks at the request the server received and
at what was stored.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.jobs import JobName
from etos_desktop.core.profile import rule, sections
from etos_desktop.core.profile.injection import profile_label
from etos_desktop.core.profile.records import PinnedLine
from etos_desktop.services.jobs import STARTUP_DELAY
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.services.conftest import JobsEnv, jobs_env

PROFILE_V1 = """## Identity
- Software engineer in Berlin (2026-01-01)

## Communication style
- Prefers short answers with code first (2026-01-01)

## Expertise
- Python and SQLite (2026-01-01)"""

PROFILE_V2 = """## Identity
- Software engineer in Berlin (2026-01-01)

## Communication style
- Prefers short answers with code first (2026-01-01)

## Expertise
- Python and SQLite (2026-01-01)
- Rust, learning since January (2026-01-02)

## Interests
- Bouldering on weekends (2026-01-02)"""

PINNED = "- Always call me Mia"


async def seed_profile(env: JobsEnv, text: str = PROFILE_V1, pins: tuple[PinnedLine, ...] = ()):
    """A profile that a first refresh wrote, so later material is new."""
    await env.memory.save("The user is a software engineer in Berlin.", "fact")
    env.server.script_when(background, Text(text))
    env.clock.advance(minutes=1)
    result = await env.jobs.refresh_profile()
    assert result.outcome == "changed"
    if pins:
        await env.profile.save(text, pins)
    return await env.profile.current()


async def test_no_new_material_sends_nothing_and_new_memories_send_one_request(env: JobsEnv):
    # Never refreshed: the catch-up shortly after start-up; with nothing to read, no request.
    assert env.scheduler.run_time("profile") == env.clock.now() + STARTUP_DELAY
    env.clock.advance(minutes=2)
    await env.scheduler.fire("profile")
    assert env.profile_requests() == []
    profile = await env.profile.current()
    assert profile.empty
    assert profile.last_outcome == "nothing_new"
    assert await env.profile.revisions() == []
    # New material: a memory and a summary; the next run sends them, newest first.
    env.clock.advance(hours=1)
    saved = await env.memory.save("The user is learning Rust since January.", "fact")
    cid = await env.new_conversation("Climbing")
    env.clock.advance(minutes=1)
    summary = await env.summaries.write_summary(
        conversation_id=cid,
        content="The user talked about bouldering on weekends and asked for training tips.",
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    env.server.script_when(background, Text(PROFILE_V2))
    env.clock.advance(minutes=1)
    result = await env.jobs.refresh_profile()
    assert result.outcome == "changed"
    [body] = env.profile_requests()
    assert body["stream"] is False
    assert "tools" not in body
    assert body["temperature"] == 0.2
    system, user = body["messages"]
    assert (
        "Identity, Communication style, Expertise, Interests, Work style, Goals"
        in system["content"]
    )
    text = user["content"]
    assert "There is no profile yet" in text
    assert f"#{saved.id} (fact, 2026-01-01) The user is learning Rust since January." in text
    assert "“Climbing”: The user talked about bouldering" in text
    assert text.index("<summaries>") < text.index("<memories>")
    stored = await env.profile.current()
    assert stored.content == sections.normalised(PROFILE_V2)
    [revision] = await env.profile.revisions()
    assert revision.source == "scheduled"
    assert revision.memory_ids == (saved.id,)
    assert revision.summary_ids == (summary.id,)
    # Read up to the newest item: running again right away finds nothing new.
    env.clock.advance(minutes=5)
    assert (await env.jobs.refresh_profile()).outcome == "nothing_new"
    assert len(env.profile_requests()) == 1


async def test_the_daily_run_is_at_the_local_refresh_hour(tmp_path: Path, server: FakeOpenAIServer):
    shanghai = ZoneInfo("Asia/Shanghai")
    clock = FakeClock(datetime(2026, 3, 1, 2, 0, tzinfo=UTC))  # 10:00 in Shanghai
    async with jobs_env(tmp_path / "data", server, clock, zone=shanghai) as env:
        await seed_profile(env)
        # 04:00 local tomorrow is 20:00 UTC today.
        assert env.jobs.next_profile_refresh_at() == datetime(2026, 3, 1, 20, 0, tzinfo=UTC)
        env.stack.settings.set("profile.refresh_hour", 6)
        await env.jobs.settings_changed()
        assert env.jobs.next_profile_refresh_at() == datetime(2026, 3, 1, 22, 0, tzinfo=UTC)
        status = {s.name: s for s in await env.jobs.statuses()}[JobName.PROFILE]
        assert status.next_run_at == datetime(2026, 3, 1, 22, 0, tzinfo=UTC)
        # At the time, new material: the timer's run refreshes and schedules the next day.
        await env.memory.save("The user started learning Rust.", "fact")
        env.server.script_when(background, Text(PROFILE_V2))
        clock.advance(hours=20)
        await env.scheduler.fire("profile")
        assert len(env.profile_requests()) == 2
        assert env.jobs.next_profile_refresh_at() == datetime(2026, 3, 2, 22, 0, tzinfo=UTC)
        # Turned off: no job at all.
        env.stack.settings.set("profile.enabled", False)
        await env.jobs.settings_changed()
        assert env.jobs.next_profile_refresh_at() is None


def test_next_daily_time_follows_daylight_saving():
    from etos_desktop.services.scheduler import next_daily_time

    berlin = ZoneInfo("Europe/Berlin")
    before = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    first = next_daily_time(4, before, berlin)
    assert first == datetime(2026, 3, 29, 2, 0, tzinfo=UTC)  # 04:00 CEST
    assert next_daily_time(4, first, berlin) == datetime(2026, 3, 30, 2, 0, tzinfo=UTC)
    assert next_daily_time(4, datetime(2026, 3, 27, 12, 0, tzinfo=UTC), berlin) == datetime(
        2026, 3, 28, 3, 0, tzinfo=UTC
    )  # 04:00 CET


async def test_closed_for_three_days_catches_up_exactly_once(
    tmp_path: Path, server: FakeOpenAIServer
):
    clock = FakeClock(datetime(2026, 1, 5, 12, 0, tzinfo=UTC))
    data_dir = tmp_path / "data"
    async with jobs_env(data_dir, server, clock) as env:
        await seed_profile(env)
        assert len(env.profile_requests()) == 1
        await env.memory.save("The user started bouldering.", "fact")
    # Closed over three 04:00s.
    clock.advance(days=3)
    server.script_when(background, Text(PROFILE_V2), Text(PROFILE_V2 + "\n- more"))
    async with jobs_env(data_dir, server, clock) as again:
        assert again.jobs.next_profile_refresh_at() == clock.now() + STARTUP_DELAY
        clock.advance(minutes=2)
        await again.scheduler.fire("profile")
        assert len(again.profile_requests()) == 2
        assert (
            "The user started bouldering." in again.profile_requests()[1]["messages"][1]["content"]
        )
        # Then the daily time, not another catch-up.
        assert again.jobs.next_profile_refresh_at() == datetime(2026, 1, 9, 4, 0, tzinfo=UTC)
        await again.jobs.wait_idle()
        assert len(again.profile_requests()) == 2
    # Restarted the same day: no catch-up.
    clock.advance(hours=1)
    async with jobs_env(data_dir, server, clock) as third:
        assert third.jobs.next_profile_refresh_at() == datetime(2026, 1, 9, 4, 0, tzinfo=UTC)


async def test_pinned_lines_survive_a_model_that_drops_or_rewrites_them(env: JobsEnv):
    text = PROFILE_V1.replace("## Communication style", f"## Communication style\n{PINNED}")
    top = "Pinned above every section"
    text = f"{top}\n\n{text}"
    pins = (
        PinnedLine(PINNED, "communication_style"),
        PinnedLine("- Python and SQLite (2026-01-01)", "expertise"),
        PinnedLine(top, ""),
    )
    await seed_profile(env, text, pins)
    await env.memory.save("The user now prefers long explanations.", "preference")
    # The model rewrites one pinned line, drops the other, and drops the Expertise section.
    reply = (
        "Here is the updated profile:\n\n"
        "## Identity\n- Software engineer in Berlin (2026-01-01)\n\n"
        "## Communication style\n- Always call me Mia, please\n"
        "- Prefers long explanations (2026-01-02)\n"
    )
    env.server.script_when(background, Text(reply))
    env.clock.advance(hours=1)
    result = await env.jobs.refresh_profile()
    assert result.outcome == "changed"
    request = env.profile_requests()[-1]["messages"][1]["content"]
    assert f"- [Communication style] {PINNED}" in request
    stored = (await env.profile.current()).content
    lines = stored.splitlines()
    # Word for word: at the top of its section, or of the profile when its section is gone.
    assert lines[:3] == ["- Python and SQLite (2026-01-01)", top, ""]
    style = lines.index("## Communication style")
    assert lines[style + 1 : style + 3] == [PINNED, "- Always call me Mia, please"]
    assert "Here is the updated profile" not in stored
    assert (await env.profile.current()).pinned == pins


async def test_empty_over_limit_sectionless_and_unchanged_replies_keep_the_profile(env: JobsEnv):
    before = await seed_profile(env)
    revisions = await env.profile.revisions()
    too_long = "## Identity\n" + "\n".join(f"- fact number {i} " + "x" * 60 for i in range(80))
    for reply, reason in (
        (Text(""), "empty"),
        (Text(too_long), "too_long"),
        (Text("Sure! I updated the profile as you asked."), "no_sections"),
        (Text(PROFILE_V2, finish_reason="length"), "incomplete"),
    ):
        await env.memory.save(f"A new fact before the {reason} reply.", "fact")
        env.server.script_when(background, reply)
        env.clock.advance(hours=1)
        result = await env.jobs.refresh_profile()
        assert result.outcome == "error"
        assert result.error is not None
        assert result.error.params["reason"] == reason
        now = await env.profile.current()
        assert now.content == before.content
        assert now.revision_id == before.revision_id
        assert now.last_error == f"profile_rejected:{reason}"
        assert await env.profile.revisions() == revisions
    # The same profile back (spacing aside): nothing stored, no error; the material is used up.
    env.server.script_when(background, Text(PROFILE_V1.replace("\n\n", "\n\n\n") + "\n"))
    env.clock.advance(hours=1)
    result = await env.jobs.refresh_profile()
    assert result.outcome == "unchanged"
    now = await env.profile.current()
    assert (now.revision_id, now.error_count, now.last_outcome) == (
        before.revision_id,
        0,
        "unchanged",
    )
    assert await env.profile.revisions() == revisions
    assert (await env.jobs.refresh_profile()).outcome == "nothing_new"


async def test_a_failing_server_keeps_the_profile_records_the_error_and_backs_off(env: JobsEnv):
    before = await seed_profile(env)
    await env.memory.save("The user moved to Hamburg.", "fact")
    env.server.script_when(background, *[Fault(500)] * 4)
    env.clock.advance(hours=1)
    failed_at = env.clock.now()
    result = await env.jobs.refresh_profile()
    assert result.outcome == "error"
    now = await env.profile.current()
    assert now.content == before.content
    assert (now.error_count, now.last_error) == (1, "server_error")
    assert now.retry_at == failed_at + rule.FIRST_RETRY_DELAY
    status = {s.name: s for s in await env.jobs.statuses()}[JobName.PROFILE]
    assert status.failed_last
    assert status.last_error == "server_error"
    assert status.next_run_at == failed_at + rule.FIRST_RETRY_DELAY
    # The chat never hears of it: a reply works as before.
    cid = await env.new_conversation()
    await env.say(cid, "hello")
    assert env.chat_requests()[-1]["messages"][-1]["content"] == "hello"
    # The retry, when the backoff ends, succeeds and clears the error.
    env.server.script_when(background, Text(PROFILE_V2))
    env.clock.advance(minutes=30)
    await env.scheduler.fire("profile")
    now = await env.profile.current()
    assert now.content == sections.normalised(PROFILE_V2)
    assert (now.error_count, now.last_error) == (0, None)
    assert "The user moved to Hamburg." in env.profile_requests()[-1]["messages"][1]["content"]


async def test_a_manual_edit_is_the_base_of_the_refresh_and_carried_by_the_next_request(
    env: JobsEnv,
):
    before = await seed_profile(env)
    edited = before.content.replace("Berlin", "Hamburg") + "\n\n## Goals\n- Run a marathon"
    await env.profile.save(edited, (), base_revision_id=before.revision_id)
    cid = await env.new_conversation()
    await env.say(cid, "What should I eat before a long run?")
    system = env.chat_requests()[-1]["messages"][0]["content"]
    label = profile_label("en", (await env.profile.current()).updated_at)
    assert label.startswith("The user's profile, last updated 2026-01-01 — compiled")
    assert f"## {label}\n<profile>\n" in system
    profile_sent = system.split("<profile>\n", 1)[1].split("\n</profile>", 1)[0]
    assert "- Run a marathon" in profile_sent
    # The profile's own text (a saved memory may still say Berlin, sent as a memory).
    assert "Berlin" not in profile_sent
    await env.memory.save("The user signed up for the Hamburg marathon in April.", "fact")
    env.server.script_when(background, Text(edited + "\n- Hamburg marathon in April (2026-01-01)"))
    env.clock.advance(hours=1)
    assert (await env.jobs.refresh_profile()).outcome == "changed"
    request = env.profile_requests()[-1]["messages"][1]["content"]
    assert f"<profile>\n{sections.normalised(edited)}\n</profile>" in request
    sources = [r.source for r in await env.profile.revisions()]
    assert sources == ["scheduled", "manual", "scheduled"]


async def test_restore_brings_an_old_revision_back_as_a_new_one(env: JobsEnv):
    first = await seed_profile(env)
    await env.profile.save(
        PROFILE_V2, (PinnedLine("- Bouldering on weekends (2026-01-02)", "interests"),)
    )
    await env.profile.clear()
    assert (await env.profile.current()).empty
    [cleared, manual, scheduled] = await env.profile.revisions()
    assert (cleared.source, manual.source, scheduled.source) == ("cleared", "manual", "scheduled")
    restored = await env.profile.restore(manual.id)
    assert restored.content == sections.normalised(PROFILE_V2)
    assert restored.pinned == manual.pinned
    newest = (await env.profile.revisions())[0]
    assert (newest.source, newest.restored_from) == ("restored", manual.id)
    assert first.revision_id == scheduled.id


async def test_an_edit_during_a_refresh_wins_and_the_refresh_is_retried(env: JobsEnv):
    before = await seed_profile(env)
    await env.memory.save("The user likes tea.", "preference")

    class EditWhileAsking:
        def __init__(self) -> None:
            self.done = False

        def __call__(self, stage: str) -> None:
            if stage == "asking" and not self.done:
                self.done = True
                env.scheduler.spawn(env.profile.save("## Identity\n- Edited by hand", ()))

    env.server.script_when(background, Text(PROFILE_V2))
    env.clock.advance(hours=1)
    result = await env.jobs.refresh_profile(forced=True, progress=EditWhileAsking())
    await env.jobs.wait_idle()
    assert result.outcome == "error"
    now = await env.profile.current()
    assert now.content == "## Identity\n- Edited by hand"
    assert now.last_error == "profile_stale"
    assert now.revision_id != before.revision_id


async def test_temporary_conversations_and_the_setting_send_no_profile(env: JobsEnv):
    await seed_profile(env)
    temporary = await env.stack.repo.create_conversation("", temporary=True)
    assert temporary.id is not None
    await env.say(temporary.id, "hi")
    assert "<profile>" not in env.chat_requests()[-1]["messages"][0]["content"]
    cid = await env.new_conversation()
    await env.say(cid, "hi")
    system = env.chat_requests()[-1]["messages"][0]["content"]
    assert "<profile>" in system
    # First of the labelled blocks, right after the system prompt.
    assert system.index("<profile>") < system.find("<summaries>") or "<summaries>" not in system
    env.stack.settings.set("profile.enabled", False)
    await env.say(cid, "hi again")
    assert "<profile>" not in env.chat_requests()[-1]["messages"][0]["content"]


async def test_the_profile_block_comes_before_the_summaries_block(env: JobsEnv):
    await seed_profile(env)
    other = await env.new_conversation("Trip")
    await env.summaries.write_summary(
        conversation_id=other,
        content="The user planned a trip.",
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    cid = await env.new_conversation()
    await env.say(cid, "hello")
    system = env.chat_requests()[-1]["messages"][0]["content"]
    assert 0 < system.index("<profile>") < system.index("<summaries>")


def test_retry_delay_grows_and_is_capped():
    assert rule.retry_delay(1) == timedelta(minutes=30)
    assert rule.retry_delay(2) == timedelta(minutes=90)
    assert rule.retry_delay(50) == timedelta(hours=24)
