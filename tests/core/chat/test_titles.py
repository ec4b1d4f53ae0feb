"""The title workflow on the real core stack against the local server: what it sent and stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from etos_desktop.core.chat.titles import TITLE_MAX_CHARS, TitleRun, TitleWriter, clean_title
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.helpers.stack import chat_stack

#: chat_stack's secret store runs on keyring's fail backend (tests/conftest.py) and says so.
pytestmark = pytest.mark.logs(
    r"^WARNING etos_desktop\.core\.providers\.secrets: no usable keyring \("
)


def test_clean_title_keeps_the_first_line_without_quotes_marks_or_a_final_stop() -> None:
    assert clean_title('"Trip to Kyoto."\nA second line') == "Trip to Kyoto"
    assert clean_title("## **《京都旅行》**") == "京都旅行"
    assert clean_title("「京都旅行」\n") == "京都旅行"
    assert clean_title("京都旅行。") == "京都旅行"
    assert clean_title("   \n  ") == ""
    assert clean_title("x" * 100) == "x" * TITLE_MAX_CHARS


async def test_a_first_exchange_is_titled_from_a_detached_request(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.script_when(background, Text("“Trip to Kyoto”"))
    async with chat_stack(tmp_path / "data", server.base_url) as stack:
        titles = TitleWriter(stack.repo, stack.registry, lambda: "auto")
        row = await stack.repo.create_conversation("")
        assert row.id is not None
        await stack.run(stack.chat.send(row.id, "Plan a trip to Kyoto"))
        assert await titles.needs_title(row.id)
        run = await titles.write_title(row.id)
        assert run == TitleRun("titled", "Trip to Kyoto")
        stored = await stack.repo.get_conversation(row.id)
        assert stored is not None
        assert stored.title == "Trip to Kyoto"
        assert not await titles.needs_title(row.id)
    [request] = [r.body for r in server.chat_requests() if background(r.body)]
    assert (request["model"], request["temperature"], request["max_tokens"]) == (
        "fake-chat",
        0.2,
        32,
    )
    assert "tools" not in request
    system, user = request["messages"]
    assert "at most 6 words" in system["content"]
    assert user["content"] == "Plan a trip to Kyoto\n\necho: Plan a trip to Kyoto"


async def test_the_instruction_follows_the_language_of_the_first_message(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.script_when(background, Text("京都旅行"))
    async with chat_stack(tmp_path / "data", server.base_url) as stack:
        titles = TitleWriter(stack.repo, stack.registry, lambda: "en")
        row = await stack.repo.create_conversation("")
        assert row.id is not None
        await stack.run(stack.chat.send(row.id, "帮我计划一次京都旅行"))
        assert (await titles.write_title(row.id)).title == "京都旅行"
    [request] = [r.body for r in server.chat_requests() if background(r.body)]
    assert "不超过12个字" in request["messages"][0]["content"]


async def test_nothing_to_title_sends_nothing_and_an_empty_reply_stores_nothing(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    server.script_when(background, Text("  \n"))
    async with chat_stack(tmp_path / "data", server.base_url) as stack:
        titles = TitleWriter(stack.repo, stack.registry, lambda: "en")
        row = await stack.repo.create_conversation("")
        assert row.id is not None
        assert await titles.write_title(row.id) == TitleRun("no_user_message")
        assert server.chat_requests() == []
        await stack.run(stack.chat.send(row.id, "Hello"))
        assert await titles.write_title(row.id) == TitleRun("empty_reply")
        stored = await stack.repo.get_conversation(row.id)
        assert stored is not None
        assert stored.title == ""


async def test_a_failure_is_returned_not_raised(tmp_path: Path, server: FakeOpenAIServer) -> None:
    async with chat_stack(tmp_path / "data", server.base_url) as stack:
        titles = TitleWriter(stack.repo, stack.registry, lambda: "en")
        row = await stack.repo.create_conversation("")
        assert row.id is not None
        await stack.run(stack.chat.send(row.id, "Hello"))
        server.script_when(background, Fault(401))
        run = await titles.write_title(row.id)
        assert run.outcome == "error"
        assert run.error is not None
        assert run.error.code == "auth"
        gone = await titles.write_title(9999)
        assert gone.outcome == "error"
        assert gone.error is not None
        assert gone.error.params["reason"] == "missing"
        assert not await titles.needs_title(9999)
