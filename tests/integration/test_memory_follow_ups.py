"""Follow-ups and stated changes in one conversation, judged by what the local server received.

Issue 8, defect 5: a memory rode along with an unrelated follow-up, because the search text
always included the previous user turn and the impersonal floor was judged on that text. Issue
9, defect 3: a stated change ("I switched to bun") left the old preference active, so the next
request could carry the old one. The real core stack (SQLite, the openai client, the fake server)
and the app's default embedder (USE).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from etos_desktop.core.chat.events import MemorySaved, ReplyFinished
from etos_desktop.core.context.assembler import ContextTrace
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.providers.embedders import UseEmbedder
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, ToolCall
from tests.helpers.memory_scenario import PNPM
from tests.helpers.stack import Stack, chat_stack

PACKAGE_QUESTION = "Which package manager should I use for this JavaScript project?"


@asynccontextmanager
async def memory_chat(
    data_dir: Path, server: FakeOpenAIServer, embedder: UseEmbedder
) -> AsyncIterator[tuple[Stack, MemoryAccess]]:
    async with chat_stack(data_dir, server.base_url) as stack:
        # These tests pin what retrieval chooses; Automatic would send their small stores whole.
        stack.settings.set("memory.per_message", "fixed")
        memory = MemoryAccess(MemoryEngine(stack.db, embedder=embedder), changes=stack.changes)
        stack.chat.memory = memory
        try:
            yield stack, memory
        finally:
            await asyncio.get_running_loop().run_in_executor(None, memory.close)


async def new_conversation(stack: Stack) -> int:
    row = await stack.repo.create_conversation()
    assert row.id is not None
    return row.id


def memory_block(server: FakeOpenAIServer, index: int) -> str | None:
    """The memory system message of request ``index`` (right before the user message)."""
    request = server.chat_requests()[index].body["messages"]
    before = request[-2] if len(request) > 1 else None
    if before is not None and before["role"] == "system" and "<memories>" in before["content"]:
        return str(before["content"])
    return None


async def trace_of(stack: Stack, events: list[Any]) -> ContextTrace:
    reply = next(e for e in events if isinstance(e, ReplyFinished)).message
    raw = await stack.repo.get_trace(reply.id)
    assert raw is not None
    return ContextTrace.from_json(raw)


async def test_an_unrelated_follow_up_carries_no_memory(
    tmp_path: Path, server: FakeOpenAIServer, use_embedder: UseEmbedder
) -> None:
    async with memory_chat(tmp_path, server, use_embedder) as (stack, memory):
        saved = await memory.save(PNPM, "preference")
        conversation = await new_conversation(stack)
        server.script(Text("Use pnpm."), Text("Paris."))
        await stack.run(stack.chat.send(conversation, PACKAGE_QUESTION))
        block = memory_block(server, 0)
        assert block is not None
        assert f"#{saved.id} " in block
        events = await stack.run(stack.chat.send(conversation, "What is the capital of France?"))
        assert memory_block(server, 1) is None
        trace = await trace_of(stack, events)
        assert trace.memories == ()
        # the previous turn is not searched: the message does not refer back to it
        assert trace.retrieval_query == "What is the capital of France?"


async def test_a_follow_up_that_refers_back_still_carries_the_memory(
    tmp_path: Path, server: FakeOpenAIServer, use_embedder: UseEmbedder
) -> None:
    async with memory_chat(tmp_path, server, use_embedder) as (stack, memory):
        saved = await memory.save(PNPM, "preference")
        conversation = await new_conversation(stack)
        server.script(Text("Use pnpm."), Text("pnpm there too."))
        await stack.run(stack.chat.send(conversation, PACKAGE_QUESTION))
        events = await stack.run(stack.chat.send(conversation, "and for that one?"))
        block = memory_block(server, 1)
        assert block is not None
        assert f"#{saved.id} " in block
        trace = await trace_of(stack, events)
        assert PACKAGE_QUESTION in trace.retrieval_query


async def test_a_chinese_follow_up_that_refers_back_widens_the_search(
    tmp_path: Path, server: FakeOpenAIServer, use_embedder: UseEmbedder
) -> None:
    async with memory_chat(tmp_path, server, use_embedder) as (stack, memory):
        saved = await memory.save("用户在 JavaScript 项目里用 pnpm 安装依赖", "preference")
        conversation = await new_conversation(stack)
        server.script(Text("用 pnpm。"), Text("巴黎。"), Text("用 pnpm。"), Text("也用 pnpm。"))
        question = "这个 JavaScript 项目我该用哪个包管理器？"
        await stack.run(stack.chat.send(conversation, question))
        await stack.run(stack.chat.send(conversation, "法国的首都是哪里？"))
        assert memory_block(server, 1) is None
        await stack.run(stack.chat.send(conversation, question))
        await stack.run(stack.chat.send(conversation, "那它呢？"))
        block = memory_block(server, 3)
        assert block is not None
        assert f"#{saved.id}" in block


async def test_the_next_request_carries_the_newer_preference(
    tmp_path: Path, server: FakeOpenAIServer, use_embedder: UseEmbedder
) -> None:
    async with memory_chat(tmp_path, server, use_embedder) as (stack, memory):
        old = await memory.save("I use pnpm for JavaScript projects", "preference")
        change = "I no longer use pnpm for JavaScript projects, I switched to bun"
        server.script(
            ToolCall("save_memory", f'{{"content": "{change}", "kind": "preference"}}'),
            Text("Noted."),
            Text("Use bun."),
        )
        conversation = await new_conversation(stack)
        events = await stack.run(stack.chat.send(conversation, "I switched to bun, remember it"))
        [saved] = [e for e in events if isinstance(e, MemorySaved)]
        # the save event names the memory it replaced (the note says "Replaced #id — Undo")
        assert saved.superseded == old.id
        assert not saved.merged
        other = await new_conversation(stack)
        await stack.run(stack.chat.send(other, PACKAGE_QUESTION))
        block = memory_block(server, 2)
        assert block is not None
        assert f"#{saved.memory_id} " in block
        assert f"#{old.id} " not in block
        assert "switched to bun" in block


async def test_what_did_we_talk_about_last_week_carries_last_weeks_memory(
    tmp_path: Path, server: FakeOpenAIServer, use_embedder: UseEmbedder
) -> None:
    async with memory_chat(tmp_path, server, use_embedder) as (stack, memory):
        now = datetime.now(UTC)
        # Seven days ago is always in the previous calendar week.
        week = await memory.save(
            "We talked about booking the train to Lisbon",
            "episode",
            created_at=now - timedelta(days=7),
        )
        await memory.save(
            "We talked about the garden tomatoes", "episode", created_at=now - timedelta(days=40)
        )
        conversation = await new_conversation(stack)
        server.script(Text("The Lisbon train."))
        events = await stack.run(stack.chat.send(conversation, "What did we talk about last week?"))
        block = memory_block(server, 0)
        assert block is not None
        assert f"#{week.id} " in block
        trace = await trace_of(stack, events)
        assert trace.retrieval_window.endswith("(last week)")
        assert trace.memories[0].id == week.id
