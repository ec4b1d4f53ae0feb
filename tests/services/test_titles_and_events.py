"""Titles as a background job, and the chat service announcing finished replies."""

from __future__ import annotations

from etos_desktop.core.changes import ConversationChanged, DataChange, ReplyCompleted
from etos_desktop.core.jobs import JobName
from tests.helpers.fake_openai_server import Fault, Text, background
from tests.services.conftest import JobsEnv


async def test_a_first_reply_gets_a_title_and_listeners_hear_of_it(env: JobsEnv):
    env.stack.settings.set("chat.auto_title", True)
    heard: list[DataChange] = []
    env.stack.changes.subscribe(heard.append)
    env.server.script_when(background, Text("Trip to Kyoto"))
    cid = await env.new_conversation()
    await env.say(cid, "Plan a trip to Kyoto")
    row = await env.stack.repo.get_conversation(cid)
    assert row is not None
    assert row.title == "Trip to Kyoto"
    assert ConversationChanged(cid) in heard
    titles = [r.body for r in env.server.chat_requests() if not r.body.get("stream")]
    assert len(titles) == 1
    assert titles[0]["max_tokens"] == 32
    # A titled conversation is not titled again.
    await env.say(cid, "And Nara?")
    assert len([r for r in env.server.chat_requests() if not r.body.get("stream")]) == 1
    status = {s.name: s for s in await env.jobs.statuses()}[JobName.TITLES]
    assert status.last_success_at == env.clock.now()


async def test_a_failed_title_is_recorded_not_shown_in_the_chat(env: JobsEnv):
    env.stack.settings.set("chat.auto_title", True)
    env.server.script_when(background, Fault(401))
    cid = await env.new_conversation()
    events = await env.say(cid, "Hello")
    assert type(events[-1]).__name__ == "ReplyFinished"
    row = await env.stack.repo.get_conversation(cid)
    assert row is not None
    assert row.title == ""
    status = {s.name: s for s in await env.jobs.statuses()}[JobName.TITLES]
    assert status.last_error == "auth"


async def test_replies_are_announced_once_finished_and_a_failing_listener_is_harmless(env: JobsEnv):
    heard: list[ReplyCompleted] = []

    def broken(_event: ReplyCompleted) -> None:
        raise RuntimeError("listener bug")

    env.stack.changes.subscribe(broken, ReplyCompleted)
    env.stack.changes.subscribe(heard.append, ReplyCompleted)
    cid = await env.new_conversation()
    events = await env.say(cid, "Hello")
    assert [e.message.id for e in heard] == [events[-1].message.id]
    assert heard[0].conversation.id == cid
    # A failed reply is not announced.
    env.server.script(Fault(400, "no"))
    await env.say(cid, "again")
    assert len(heard) == 1
