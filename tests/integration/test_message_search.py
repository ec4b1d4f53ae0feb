"""A reply streamed by the real client from the local server is searchable once it ends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etos_desktop.core.chat.search import MessageSearch
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text
from tests.helpers.stack import chat_stack


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key="sk-test-key-123456") as srv:
        yield srv


async def test_a_streamed_reply_is_found_once_it_ends(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.script(Text("Try the cold brew method, 冷萃咖啡 is smoother.", chunks=5))
    async with chat_stack(tmp_path, server.base_url) as stack:
        conversation = await stack.repo.create_conversation()
        await stack.run(stack.chat.send(conversation.id or 0, "How do I make 咖啡 less bitter?"))
        search = MessageSearch(stack.db)
        [hit] = (await search.search_messages("冷萃")).hits
        assert hit.role == "assistant"
        [hit] = (await search.search_messages("bitter")).hits
        assert hit.role == "user"
    assert server.chat_requests()[0].body["messages"][-1]["content"].endswith("less bitter?")
