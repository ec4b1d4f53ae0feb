"""Session summaries in the memory export and import: round trips, matching, hostile entries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.transfer.document import FORMAT, VERSION, ImportInvalid, ImportResult
from etos_desktop.core.transfer.markdown import MarkdownLabels
from etos_desktop.core.transfer.service import TransferService

TEXT = "The user planned a Kyoto trip and chose a hotel in Shijo."


class Side:
    def __init__(self, db: Database, clock: FakeClock) -> None:
        self.db = db
        self.repo = ChatRepository(db)
        self.summaries = SummaryAccess(db, clock=clock)
        self.memory = MemoryAccess(MemoryEngine(db, clock=clock))
        self.transfer = TransferService(self.memory, summaries=self.summaries)
        self.clock = clock

    async def summarised(self, title: str, text: str) -> tuple[int, int]:
        conversation = await self.repo.create_conversation(title)
        assert conversation.id is not None
        user = await self.repo.add_message(conversation.id, "user", "hello")
        summary = await self.summaries.write_summary(
            conversation_id=conversation.id,
            content=text,
            language="en",
            covers_until=user.id,
            user_turns=1,
            source="scheduled",
        )
        return conversation.id, summary.id

    async def import_text(self, text: str, tmp: Path) -> ImportResult:
        path = tmp / "import.json"
        path.write_text(text, encoding="utf-8")
        preview = await self.transfer.preview_import_file(path, now=self.clock.now())
        return await self.transfer.apply_import(preview)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.memory.close)
        await loop.run_in_executor(None, self.summaries.close)
        await loop.run_in_executor(None, self.db.close)


@pytest.fixture
async def sides(tmp_path: Path) -> AsyncIterator[tuple[Side, Side]]:
    clock = FakeClock()
    made = []
    for name in ("a", "b"):
        db = Database(tmp_path / name / "etos.db", clock=clock)
        await db.open_async()
        made.append(Side(db, clock))
    yield made[0], made[1]
    for side in made:
        await side.close()


async def test_export_holds_every_summary_with_its_conversation(sides: tuple[Side, Side]):
    a, _b = sides
    cid, first = await a.summarised("Kyoto trip", TEXT)
    a.clock.advance(hours=3)
    second = (
        await a.summaries.write_summary(
            conversation_id=cid,
            content=TEXT + " Then Nara.",
            language="en",
            covers_until=9,
            user_turns=7,
            source="scheduled",
        )
    ).id
    await a.summaries.archive([second])
    text, _count = await a.transfer.export_json(now=a.clock.now(), app_version="t")
    document = json.loads(text)
    records = document["summaries"]
    assert [r["id"] for r in records] == [first, second]
    assert records[0]["conversation_title"] == "Kyoto trip"
    assert records[0]["conversation_id"] == cid
    assert records[0]["conversation_created_at"]
    assert records[1]["archived"] is True
    assert [r["current"] for r in records] == [True, False]


async def test_round_trip_into_another_database_and_back(sides: tuple[Side, Side], tmp_path: Path):
    a, b = sides
    await a.memory.save("Uses pnpm", "preference")
    await a.summarised("Kyoto trip", TEXT)
    text, _ = await a.transfer.export_json(now=a.clock.now(), app_version="t")
    result = await b.import_text(text, tmp_path)
    assert len(result.added) == 1
    assert len(result.summaries_added) == 1
    imported = await b.summaries.summaries()
    assert [(s.content, s.conversation_title, s.conversation_id, s.source) for s in imported] == [
        (TEXT, "Kyoto trip", None, "imported")
    ]
    # An imported summary of a conversation that is not here is still sent as "other".
    assert [s.content for s in await b.summaries.for_injection(None, 5)] == [TEXT]
    # Importing the same file again adds nothing.
    path = tmp_path / "import.json"
    preview = await b.transfer.preview_import_file(path, now=b.clock.now())
    assert not preview.has_changes
    assert preview.summaries.unchanged == 1
    # And into the database it came from: every summary is already there.
    preview = await a.transfer.preview_import_file(path, now=a.clock.now())
    assert preview.summaries.unchanged == 1
    assert not preview.summaries.has_changes


async def test_an_earlier_export_restores_text_and_state_in_one_transaction(
    sides: tuple[Side, Side], tmp_path: Path
):
    a, _ = sides
    _cid, sid = await a.summarised("Kyoto trip", TEXT)
    text, _ = await a.transfer.export_json(now=a.clock.now(), app_version="t")
    a.clock.advance(minutes=5)
    await a.summaries.edit(sid, "Edited away.")
    result = await a.import_text(text, tmp_path)
    assert result.summaries_updated == 1
    restored = await a.summaries.get(sid)
    assert restored is not None
    assert restored.content == TEXT
    assert restored.conversation_title == "Kyoto trip"


def summaries_document(*entries: object) -> dict[str, object]:
    """An export holding these summary entries and no memories."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "memories": [],
        "summaries": list(entries),
    }


async def test_hostile_summary_entries_are_skipped_and_the_rest_imported(
    sides: tuple[Side, Side], tmp_path: Path
):
    _, b = sides
    document = summaries_document(
        {
            "content": TEXT,
            "conversation_title": "ok",
            "created_at": "2026-01-01T00:00:00+00:00",
        },
        "not an object",
        {"content": ""},
        {"content": "x" * 5000},
        {"content": "The key is sk-abcdefghijklmnopqrstuvwxyz123456"},
        {"content": "fine", "archived": "yes"},
        {"content": "fine", "created_at": "yesterday"},
        {"content": "fine", "id": -4},
        {"content": "fine", "language": "fr"},
    )
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    preview = await b.transfer.preview_import_file(path, now=b.clock.now())
    assert len(preview.summaries.to_add) == 1
    assert [(p.index, p.reason) for p in preview.summaries.invalid] == [
        (1, "not_an_object"),
        (2, "empty"),
        (3, "too_long"),
        (4, "secret"),
        (5, "bad_field"),
        (6, "bad_field"),
        (7, "bad_field"),
        (8, "bad_field"),
    ]
    await b.transfer.apply_import(preview)
    assert [s.content for s in await b.summaries.summaries()] == [TEXT]


async def test_an_imported_summary_is_stored_without_control_characters(
    sides: tuple[Side, Side], tmp_path: Path
):
    """Issue 19: NUL and control characters in an export's summary were stored as they were."""
    _, b = sides
    document = summaries_document(
        {
            "content": TEXT.replace("Kyoto", "Ky\x00oto\x1b").replace("hotel", "hotel\x85"),
            "conversation_title": "Kyoto\x00 trip\x07",
            "created_at": "2026-01-01T00:00:00+00:00",
        }
    )
    await b.import_text(json.dumps(document), tmp_path)
    [summary] = await b.summaries.summaries()
    assert (summary.content, summary.conversation_title) == (TEXT, "Kyoto trip")


async def test_summaries_that_are_not_a_list_refuse_the_file(
    sides: tuple[Side, Side], tmp_path: Path
):
    _, b = sides
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps({"format": FORMAT, "version": 1, "memories": [], "summaries": {}}),
        encoding="utf-8",
    )
    with pytest.raises(ImportInvalid) as refused:
        await b.transfer.preview_import_file(path, now=b.clock.now())
    assert refused.value.params["reason"] == "bad_structure"


async def test_a_failing_import_writes_no_summary_either(sides: tuple[Side, Side], tmp_path: Path):
    a, b = sides
    await a.summarised("Kyoto trip", TEXT)
    await a.memory.save("Uses pnpm", "preference")
    text, _ = await a.transfer.export_json(now=a.clock.now(), app_version="t")
    path = tmp_path / "import.json"
    path.write_text(text, encoding="utf-8")
    preview = await b.transfer.preview_import_file(path, now=b.clock.now())
    b.memory.engine.max_active = 0  # the memories part fails at the limit check
    with pytest.raises(Exception, match="active memories"):
        await b.transfer.apply_import(preview)
    assert await b.summaries.summaries() == []


async def test_markdown_export_has_a_summaries_section(sides: tuple[Side, Side]):
    a, _ = sides
    await a.summarised("Kyoto *trip*", TEXT)
    text, _ = await a.transfer.export_markdown(
        now=a.clock.now(),
        labels=MarkdownLabels(),
        tz=a.clock.now().tzinfo,  # type: ignore[arg-type]
    )
    assert "## Session summaries" in text
    assert "- **Kyoto \\*trip\\*** *(2026-01-01 12:00)*" in text
    assert f"  {TEXT}" in text
