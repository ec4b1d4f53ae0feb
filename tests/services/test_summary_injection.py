"""What the model receives: the summaries block of other conversations, its session snapshot, recall."""

from __future__ import annotations

import json
from datetime import timedelta

from etos_desktop.core.context.assembler import ContextTrace
from etos_desktop.core.summaries.injection import SUMMARIES_BLOCK_LABEL
from tests.helpers.fake_openai_server import Text, background
from tests.services.conftest import JobsEnv
from tests.services.test_summary_jobs import SUMMARY, SUMMARY_2, six_turns


def system_message(body: dict) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return first["content"]


async def summarised_conversation(env: JobsEnv, title: str = "Kyoto trip") -> int:
    cid = await env.new_conversation(title)
    await six_turns(env, cid)
    assert await env.summaries.current(cid) is not None
    return cid


async def test_another_conversation_carries_the_summary_in_the_labelled_block(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY))
    await summarised_conversation(env)
    other = await env.new_conversation("Dinner")
    await env.say(other, "What should I cook tonight?")
    system = system_message(env.chat_requests()[-1])
    date = env.clock.now().astimezone().date().isoformat()
    assert (
        f"## {SUMMARIES_BLOCK_LABEL['en']}\n<summaries>\n- {date} · “Kyoto trip”: {SUMMARY}\n</summaries>"
        in system
    )
    # It is data in the system message, after the persona and the rules.
    assert system.index("Ground rules") < system.index("<summaries>")


async def test_a_conversation_is_never_sent_its_own_summary(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY))
    cid = await summarised_conversation(env)
    env.clock.advance(hours=3)
    await env.say(cid, "Where were we?")
    assert "<summaries>" not in system_message(env.chat_requests()[-1])


async def test_the_first_system_message_is_identical_across_a_session(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY), Text(SUMMARY_2))
    first = await summarised_conversation(env)
    env.clock.advance(minutes=121)
    other = await env.new_conversation("Dinner")
    await env.say(other, "What should I cook tonight?")
    before = system_message(env.chat_requests()[-1])
    assert SUMMARY in before
    # A newer summary lands meanwhile (the first conversation is summarised again) …
    env.clock.advance(minutes=1)
    await env.say(first, "And Nara?")
    assert len(env.summary_requests()) == 2
    # … but the other conversation's session keeps its snapshot, byte for byte.
    for minutes in (5, 20, 29):
        env.clock.advance(minutes=minutes)
        await env.say(other, "And for dessert?")
        assert system_message(env.chat_requests()[-1]) == before
    # 30 minutes without a message end the session: the next request takes a new snapshot.
    env.clock.advance(minutes=31)
    await env.say(other, "Good morning")
    after = system_message(env.chat_requests()[-1])
    assert SUMMARY_2 in after
    assert SUMMARY not in after


async def test_the_trace_shows_the_block_its_tokens_and_the_snapshot_time(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY))
    await summarised_conversation(env)
    other = await env.new_conversation("Dinner")
    taken = env.clock.now()
    events = await env.say(other, "Hello")
    reply_id = events[-1].message.id
    env.clock.advance(minutes=3)
    await env.say(other, "Again")
    trace = ContextTrace.from_json(await env.stack.repo.get_trace(reply_id) or "")
    blocks = [b for b in trace.blocks if b.kind == "summaries"]
    assert len(blocks) == 1
    assert SUMMARY in blocks[0].text
    assert blocks[0].tokens > 50
    assert trace.summaries_snapshot_at == taken.isoformat(timespec="seconds")
    latest = await env.stack.repo.current_history(other)
    later = ContextTrace.from_json(await env.stack.repo.get_trace(latest[-1].id) or "")
    assert later.summaries_snapshot_at == taken.isoformat(timespec="seconds")


async def test_archived_summaries_and_temporary_conversations_get_none(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY))
    cid = await summarised_conversation(env)
    temporary = await env.stack.repo.create_conversation(temporary=True)
    await env.say(temporary.id or 0, "Hello")
    assert "<summaries>" not in system_message(env.chat_requests()[-1])
    current = await env.summaries.current(cid)
    assert current is not None
    await env.summaries.archive([current.id])
    other = await env.new_conversation()
    await env.say(other, "Hello")
    assert "<summaries>" not in system_message(env.chat_requests()[-1])


async def test_the_number_injected_is_the_setting(env: JobsEnv):
    env.server.script_when(background, *[Text(SUMMARY)] * 3)
    for n in range(3):
        await summarised_conversation(env, f"conversation {n}")
        env.clock.advance(minutes=1)
    env.stack.settings.set("summaries.inject_count", 2)
    other = await env.new_conversation()
    await env.say(other, "Hello")
    system = system_message(env.chat_requests()[-1])
    assert "“conversation 2”" in system
    assert "“conversation 1”" in system
    assert "“conversation 0”" not in system


async def test_a_recall_question_finds_an_older_summary(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY))
    await summarised_conversation(env)
    # Not in the system block (inject none), so only recall can bring it.
    env.stack.settings.set("summaries.inject_count", 0)
    env.clock.advance(days=3)
    other = await env.new_conversation("Later")
    events = await env.say(other, "Which hotel did we decide on for Kyoto last time?")
    body = env.chat_requests()[-1]
    assert "<summaries>" not in system_message(body)
    memory = body["messages"][-2]
    assert memory["role"] == "system"
    assert "<memories>" in memory["content"]
    written = (env.clock.now() - timedelta(days=3)).astimezone().date().isoformat()
    assert f"- summary of the conversation “Kyoto trip” ({written}): {SUMMARY}" in memory["content"]
    trace = ContextTrace.from_json(await env.stack.repo.get_trace(events[-1].message.id) or "")
    assert [r.title for r in trace.recalled_summaries] == ["Kyoto trip"]
    assert "keyword" in trace.recalled_summaries[0].reason
    assert trace.recall_cue


async def test_a_question_without_a_recall_cue_does_not_search_summaries(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY))
    await summarised_conversation(env)
    env.stack.settings.set("summaries.inject_count", 0)
    other = await env.new_conversation()
    await env.say(other, "Kyoto hotel prices in general?")
    messages = env.chat_requests()[-1]["messages"]
    assert all(SUMMARY not in json.dumps(m, ensure_ascii=False) for m in messages)


async def test_time_words_make_summaries_of_that_period_recallable(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY), Text(SUMMARY_2))
    # FakeClock starts on Thursday 2026-01-01; a summary that day, another a week later.
    await summarised_conversation(env, "Kyoto trip")
    env.clock.advance(days=7)
    await summarised_conversation(env, "Nara day")
    env.clock.advance(days=1)
    env.stack.settings.set("summaries.inject_count", 0)
    other = await env.new_conversation()
    await env.say(other, "What did we talk about last week?")
    memory = env.chat_requests()[-1]["messages"][-2]["content"]
    # "Last week" is the calendar week of 2025-12-29 – 2026-01-04: the Kyoto conversation only.
    assert "“Kyoto trip”" in memory
    assert "“Nara day”" not in memory
