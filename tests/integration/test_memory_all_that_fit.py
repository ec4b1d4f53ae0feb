"""All that fit, judged by what the local server received (issue 18, DESIGN §5.3, §8).

The real chat service with memories, summaries and the profile on a temporary database; the
memory engine matches by keywords (no embedder), which is all retrieval needs here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.chat.events import ReplyFinished
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.context.assembler import ContextTrace
from etos_desktop.core.memory.standing import STANDING_MEMORY_LABEL
from etos_desktop.core.retrieval.block import MEMORY_BLOCK_LABEL
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background
from tests.services.conftest import JobsEnv, jobs_env
from tests.services.test_summary_injection import summarised_conversation
from tests.services.test_summary_jobs import SUMMARY

MEMORIES = (
    "The user uses pnpm to install JavaScript packages.",
    "The user is allergic to peanuts.",
    "The user lives in Lisbon and works as a nurse.",
)
GENERAL_QUESTION = "What is the capital of France?"


@pytest.fixture
async def env(tmp_path: Path, server: FakeOpenAIServer) -> AsyncIterator[JobsEnv]:
    # The default setting (Automatic) is what these tests are about: nothing is set here.
    async with jobs_env(tmp_path / "data", server, FakeClock()) as made:
        yield made


async def save_all(env: JobsEnv, texts: tuple[str, ...] | list[str]) -> list[int]:
    return [(await env.memory.save(text, "fact")).id for text in texts]


def system_of(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def turn_memory_block(body: dict[str, Any]) -> str | None:
    """The per-turn memory system message, right before the user message, if any."""
    messages = body["messages"]
    assert messages[-1]["role"] == "user"
    before = messages[-2]
    if before["role"] == "system" and "<memories>" in before["content"]:
        return str(before["content"])
    return None


async def trace_of(env: JobsEnv, events: list[Any]) -> ContextTrace:
    reply = next(e for e in events if isinstance(e, ReplyFinished)).message
    return ContextTrace.from_json(await env.stack.repo.get_trace(reply.id or 0) or "")


async def test_a_small_store_is_sent_whole_after_the_summaries_the_same_every_turn(env: JobsEnv):
    assert env.stack.settings.get_str("memory.per_message") == "auto"
    env.server.script_when(background, Text(SUMMARY))
    await summarised_conversation(env)
    ids = await save_all(env, MEMORIES)
    other = await env.new_conversation("Dinner")
    first_events = await env.say(other, "What should I cook tonight?")
    await env.say(other, GENERAL_QUESTION)
    first, second = env.chat_requests()[-2:]
    system = system_of(first)
    # After the summaries, in id order, labelled as standing background.
    assert system.index("<summaries>") < system.index("<standing_memories>")
    assert f"## {STANDING_MEMORY_LABEL['en']}\n<standing_memories>\n" in system
    lines = system.split("<standing_memories>\n", 1)[1].split("\n</standing_memories>")[0]
    assert [line.split(" ", 2)[1] for line in lines.splitlines()] == [f"#{i}" for i in ids]
    for text in MEMORIES:
        assert text in system
    assert system.endswith("</standing_memories>")
    # Byte-identical across turns (prompt caches keep it), even for an unrelated question.
    assert system_of(second) == system
    assert [m for m in second["messages"] if m["role"] == "system"] == [first["messages"][0]]
    # No per-turn memory block in either request.
    assert turn_memory_block(first) is None
    assert turn_memory_block(second) is None
    assert MEMORY_BLOCK_LABEL["en"] not in str(first["messages"]) + str(second["messages"])
    trace = await trace_of(env, first_events)
    assert trace.memory_rule == "all_that_fit"
    assert (trace.memory_store_count, trace.memory_fit_budget) == (3, 1500)
    assert 0 < trace.memory_store_tokens <= 1500
    assert [m.id for m in trace.memories] == ids
    assert {m.reason for m in trace.memories} == {"all that fit"}
    standing = [b for b in trace.blocks if b.kind == "standing_memories"]
    assert len(standing) == 1
    assert standing[0].text in system
    assert standing[0].tokens == trace.memory_store_tokens


async def test_a_memory_saved_meanwhile_is_in_the_next_request(env: JobsEnv):
    await save_all(env, MEMORIES[:1])
    cid = await env.new_conversation()
    await env.say(cid, "Hello")
    await env.memory.save("The user prefers tea to coffee.", "preference")
    await env.say(cid, "Hello again")
    before, after = (system_of(body) for body in env.chat_requests()[-2:])
    assert "prefers tea" not in before
    assert "#2 (preference" in after
    assert after.index(MEMORIES[0]) < after.index("prefers tea")


async def test_a_question_about_the_past_still_brings_summaries_by_recall(env: JobsEnv):
    env.server.script_when(background, Text(SUMMARY))
    await summarised_conversation(env)
    env.stack.settings.set("summaries.inject_count", 0)
    await save_all(env, MEMORIES)
    other = await env.new_conversation("Later")
    events = await env.say(other, "Which hotel did we decide on for Kyoto last time?")
    body = env.chat_requests()[-1]
    assert "<standing_memories>" in system_of(body)
    block = turn_memory_block(body)
    assert block is not None
    assert "“Kyoto trip”" in block
    assert SUMMARY in block
    # The memories are not repeated in the per-turn block.
    assert "#1 (fact" not in block
    trace = await trace_of(env, events)
    assert trace.memory_rule == "all_that_fit"
    assert [r.title for r in trace.recalled_summaries] == ["Kyoto trip"]
    assert trace.recall_cue


async def test_a_store_over_the_budget_is_chosen_by_retrieval_as_before(env: JobsEnv):
    env.stack.settings.set("memory.all_that_fit_tokens", 200)
    fillers = [f"The user noted errand number {n} for the week." for n in range(24)]
    ids = await save_all(env, [*fillers, MEMORIES[0]])
    cid = await env.new_conversation()
    events = await env.say(cid, "Should I use pnpm for this project?")
    body = env.chat_requests()[-1]
    assert "<standing_memories>" not in system_of(body)
    block = turn_memory_block(body)
    assert block is not None
    assert f"#{ids[-1]} (fact" in block
    assert "errand" not in block
    trace = await trace_of(env, events)
    assert trace.memory_rule == "retrieval"
    assert (trace.memory_store_count, trace.memory_fit_budget) == (25, 200)
    assert [m.id for m in trace.memories] == [ids[-1]]
    # A question no memory is about gets none: restraint where retrieval chooses.
    await env.say(cid, GENERAL_QUESTION)
    assert turn_memory_block(env.chat_requests()[-1]) is None


async def test_a_4k_model_gets_a_tenth_of_its_window_at_most(env: JobsEnv):
    env.stack.settings.set_model_context("fake-chat", 4096)
    texts = [f"The user told a long story number {n} about the family garden." for n in range(25)]
    await save_all(env, texts)
    cid = await env.new_conversation()
    events = await env.say(cid, "Hello")
    assert "<standing_memories>" not in system_of(env.chat_requests()[-1])
    trace = await trace_of(env, events)
    assert (trace.memory_rule, trace.memory_fit_budget) == ("retrieval", 409)
    assert trace.memory_store_tokens > 409
    # With a large window the same store fits.
    env.stack.settings.set_model_context("fake-chat", 128_000)
    events = await env.say(cid, "Hello again")
    assert "<standing_memories>" in system_of(env.chat_requests()[-1])
    assert (await trace_of(env, events)).memory_rule == "all_that_fit"


async def test_a_fixed_number_always_lets_retrieval_choose(env: JobsEnv):
    env.stack.settings.set("memory.per_message", "fixed")
    # A store that fits 1,500 tokens easily (keyword search needs more than three memories to
    # tell a rare term: in a store of three, "pnpm" is not found at all).
    await save_all(env, [*(f"The user noted errand number {n}." for n in range(24)), *MEMORIES])
    cid = await env.new_conversation()
    events = await env.say(cid, "Should I use pnpm for this project?")
    body = env.chat_requests()[-1]
    assert "<standing_memories>" not in system_of(body)
    block = turn_memory_block(body)
    assert block is not None
    assert "pnpm" in block
    assert "peanuts" not in block
    assert "errand" not in block
    trace = await trace_of(env, events)
    assert (trace.memory_rule, trace.memory_store_count, trace.memory_fit_budget) == ("fixed", 0, 0)


async def test_temporary_conversations_and_memory_off_send_no_memory(env: JobsEnv):
    await save_all(env, MEMORIES)
    temporary = await env.stack.repo.create_conversation(temporary=True)
    events = await env.say(temporary.id or 0, "Should I use pnpm for this project?")
    sent = str(env.chat_requests()[-1]["messages"])
    assert "pnpm to install" not in sent
    assert "<standing_memories>" not in sent
    assert "<memories>" not in sent
    trace = await trace_of(env, events)
    assert (trace.memory_rule, trace.memories) == ("", ())
    env.stack.settings.set("memory.enabled", False)
    cid = await env.new_conversation()
    await env.say(cid, "Should I use pnpm for this project?")
    sent = str(env.chat_requests()[-1]["messages"])
    assert "pnpm to install" not in sent
    assert "<standing_memories>" not in sent


async def test_a_deleted_memory_leaves_the_stored_all_that_fit_block_and_undo_restores_it(
    env: JobsEnv,
):
    ids = await save_all(env, MEMORIES)
    cid = await env.new_conversation()
    events = await env.say(cid, "Hello")
    reply = next(e for e in events if isinstance(e, ReplyFinished)).message
    deleted = await env.memory.delete(ids[1])
    erased = await trace_of(env, events)
    [block] = [b for b in erased.blocks if b.kind == "standing_memories"]
    assert "peanuts" not in (await env.stack.repo.get_trace(reply.id or 0) or "")
    assert f"- #{ids[1]} (fact, " in block.text
    assert f"[deleted memory #{ids[1]}]" in block.text
    assert MEMORIES[0] in block.text
    await env.memory.undo_delete(deleted)
    [restored] = [b for b in (await trace_of(env, events)).blocks if b.kind == "standing_memories"]
    assert MEMORIES[1] in restored.text
    # It is back in the store, so the next request carries it again.
    await env.say(cid, "Hello again")
    assert MEMORIES[1] in system_of(env.chat_requests()[-1])
