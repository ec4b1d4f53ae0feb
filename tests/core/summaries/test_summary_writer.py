"""The summary workflow on a real database against the local server: what it returns and stores.

No scheduler and no Qt: the tests call ``pending`` and ``write`` as the jobs service does, and
look at the request the server received, the run returned and the attempt recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.summaries.records import SummaryActivity
from etos_desktop.core.summaries.rule import FIRST_RETRY_DELAY
from etos_desktop.core.summaries.writing import SummaryRejected, SummaryRun, SummaryWriter
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.helpers.stack import chat_stack

#: chat_stack's secret store runs on keyring's fail backend (tests/conftest.py) and says so.
pytestmark = pytest.mark.logs(
    r"^WARNING etos_desktop\.core\.providers\.secrets: no usable keyring \("
)

SUMMARY = (
    "The user planned a spring trip to Kyoto and compared budget hotels near the station. "
    "They chose a small hotel in Shijo close to the markets and asked for a three-day plan."
)


@dataclass
class Env:
    repo: ChatRepository
    summaries: SummaryAccess
    writer: SummaryWriter
    clock: FakeClock
    server: FakeOpenAIServer
    ui_language: list[str]

    async def conversation(self, texts: list[str], *, temporary: bool = False) -> int:
        row = await self.repo.create_conversation("Trip", temporary=temporary)
        assert row.id is not None
        for text in texts:
            user = await self.repo.add_message(row.id, "user", text)
            await self.repo.add_message(row.id, "assistant", f"answer: {text}", reply_to_id=user.id)
        return row.id

    async def activity(self, conversation_id: int) -> SummaryActivity:
        activity = await self.summaries.activity(conversation_id)
        assert activity is not None
        return activity

    def requests(self) -> list[dict]:
        return [r.body for r in self.server.chat_requests() if background(r.body)]


@pytest.fixture
async def env(tmp_path: Path, server: FakeOpenAIServer) -> AsyncIterator[Env]:
    clock = FakeClock()
    async with chat_stack(tmp_path / "data", server.base_url, clock=clock) as stack:
        summaries = SummaryAccess(stack.db, clock=clock)
        ui_language = ["en"]
        writer = SummaryWriter(summaries, stack.repo, stack.registry, clock, lambda: ui_language[0])
        yield Env(stack.repo, summaries, writer, clock, server, ui_language)
        await asyncio.get_running_loop().run_in_executor(None, summaries.close)


def always(_activity: SummaryActivity) -> bool:
    return True


def never(_activity: SummaryActivity) -> bool:
    return False


QUESTIONS = [f"Kyoto question {i}: which hotel for day {i}?" for i in range(6)]


async def test_pending_says_why_there_is_nothing_to_do(env: Env):
    assert await env.writer.pending(9999, forced=True, due=always) == SummaryRun("missing")
    temporary = await env.conversation(QUESTIONS, temporary=True)
    assert await env.writer.pending(temporary, forced=True, due=always) == SummaryRun("temporary")
    cid = await env.conversation(QUESTIONS)
    assert await env.writer.pending(cid, forced=False, due=never) == SummaryRun("not_due")
    # The user's "Summarise now" does not ask the rule.
    assert await env.writer.pending(cid, forced=True, due=never) == await env.activity(cid)
    assert await env.writer.pending(cid, forced=False, due=always) == await env.activity(cid)
    empty = await env.conversation([])
    assert await env.writer.pending(empty, forced=True, due=always) == SummaryRun("nothing_new")
    assert env.requests() == []


async def test_an_accepted_reply_is_stored_and_returned(env: Env):
    env.server.script_when(background, Text(SUMMARY))
    cid = await env.conversation(QUESTIONS)
    run = await env.writer.write(await env.activity(cid), forced=False)
    assert run.outcome == "summary"
    assert run.error is None
    assert run.summary is not None
    assert (run.summary.content, run.summary.source, run.summary.user_turns_covered) == (
        SUMMARY,
        "scheduled",
        6,
    )
    assert run.summary == await env.summaries.current(cid)
    [body] = env.requests()
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("fake-chat", 0.2, 400)
    assert "tools" not in body
    system, user = body["messages"]
    assert "50 to 120 words" in system["content"]
    assert f"User: {QUESTIONS[0]}" in user["content"]
    assert f"Assistant: answer: {QUESTIONS[5]}" in user["content"]
    # Covered: nothing new until the next turn.
    activity = await env.activity(cid)
    assert (activity.new_user_turns, activity.last_outcome) == (0, "summary")


async def test_a_summary_the_user_asked_for_is_manual_and_brings_the_last_one_up_to_date(
    env: Env,
):
    env.server.script_when(background, Text(SUMMARY), Text(SUMMARY))
    cid = await env.conversation(QUESTIONS)
    await env.writer.write(await env.activity(cid), forced=False)
    user = await env.repo.add_message(cid, "user", "And a day in Nara?")
    await env.repo.add_message(cid, "assistant", "Take the Kintetsu line.", reply_to_id=user.id)
    run = await env.writer.write(await env.activity(cid), forced=True)
    assert run.summary is not None
    assert (run.summary.source, run.summary.user_turns_covered) == ("manual", 7)
    conversation = env.requests()[1]["messages"][1]["content"]
    assert conversation.startswith("Earlier summary (")
    assert "User: And a day in Nara?" in conversation
    assert QUESTIONS[0] not in conversation


async def test_skip_records_the_attempt_and_stores_nothing(env: Env):
    env.server.script_when(background, Text("SKIP"))
    cid = await env.conversation(QUESTIONS)
    assert await env.writer.write(await env.activity(cid), forced=False) == SummaryRun("skip")
    assert await env.summaries.current(cid) is None
    activity = await env.activity(cid)
    assert (activity.new_user_turns, activity.last_outcome) == (0, "skip")


async def test_a_rejected_reply_is_returned_as_an_error_with_a_backoff(env: Env):
    env.server.script_when(background, Text("I'm sorry, but I can't summarise this."))
    cid = await env.conversation(QUESTIONS)
    run = await env.writer.write(await env.activity(cid), forced=False)
    assert run.outcome == "error"
    assert isinstance(run.error, SummaryRejected)
    assert run.error.params["reason"] == "not_a_summary"
    assert await env.summaries.current(cid) is None
    activity = await env.activity(cid)
    assert (activity.error_count, activity.last_error) == (1, "summary_rejected:not_a_summary")
    assert activity.retry_at == env.clock.now() + FIRST_RETRY_DELAY


async def test_a_failed_request_is_returned_and_the_backoff_grows(env: Env):
    env.server.script_when(background, Fault(401), Fault(401))
    cid = await env.conversation(QUESTIONS)
    first = await env.writer.write(await env.activity(cid), forced=False)
    second = await env.writer.write(await env.activity(cid), forced=False)
    assert first.outcome == second.outcome == "error"
    assert getattr(second.error, "code", None) == "auth"
    activity = await env.activity(cid)
    assert (activity.error_count, activity.last_error) == (2, "auth")
    assert activity.retry_at == env.clock.now() + 3 * FIRST_RETRY_DELAY


async def test_the_language_is_the_users_else_the_ui_language(env: Env):
    env.server.script_when(background, Text("SKIP"), Text("SKIP"))
    cid = await env.conversation(["帮我计划京都之旅", "四条附近的酒店怎么样？"])
    await env.writer.write(await env.activity(cid), forced=True)
    env.ui_language[0] = "zh"
    wordless = await env.conversation(["👍", "?!"])
    await env.writer.write(await env.activity(wordless), forced=True)
    for body in env.requests():
        assert "你为一位 AI 陪伴者撰写" in body["messages"][0]["content"]
        assert "用户: " in body["messages"][1]["content"]
