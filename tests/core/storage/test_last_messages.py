"""The sidebar's previews: the start of each conversation's last visible message, from SQL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


async def test_the_preview_is_the_last_visible_current_message(tmp_path: Path) -> None:
    db = Database(tmp_path / "etos.db", tmp_path / "backups", clock=FakeClock(NOW))
    await db.open_async()
    try:
        repo = ChatRepository(db)
        talk = await repo.create_conversation("talk")
        question = await repo.add_message(talk.id or 0, "user", "What is a CSV file?")
        await repo.add_message(talk.id or 0, "assistant", "First answer", reply_to_id=question.id)
        await repo.add_message(talk.id or 0, "assistant", "Second answer", reply_to_id=question.id)
        # An earlier version made current again is the one shown.
        versions = await repo.reply_versions(question.id or 0)
        await repo.set_current_reply(versions[0].id or 0)

        edited = await repo.create_conversation("edited")
        kept = await repo.add_message(edited.id or 0, "user", "kept " + "x" * 500)
        await repo.add_message(edited.id or 0, "assistant", "dropped by the edit")
        await repo.hide_after(kept.id or 0)

        tools = await repo.create_conversation("tools only")
        await repo.add_message(tools.id or 0, "assistant", "", tool_calls=[{"id": "1"}])
        empty = await repo.create_conversation("empty")

        previews = await repo.last_messages(
            [talk.id or 0, edited.id or 0, tools.id or 0, empty.id or 0], chars=100
        )
        assert previews == {talk.id: "First answer", edited.id: "kept " + "x" * 95}
        assert await repo.last_messages([]) == {}
        # The sidebar reads its window and the window's previews in one trip.
        rows, shown = await repo.list_conversations_with_previews(limit=2, chars=100)
        assert [r.title for r in rows] == ["empty", "tools only"]
        assert shown == {}
        rows, shown = await repo.list_conversations_with_previews(after=rows[-1], chars=100)
        assert [r.title for r in rows] == ["edited", "talk"]
        assert shown == {edited.id: "kept " + "x" * 95, talk.id: "First answer"}
    finally:
        db.close()
