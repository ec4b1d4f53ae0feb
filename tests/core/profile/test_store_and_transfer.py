"""The profile on a real database: user edits, revisions, and the memory export and import."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.transfer import ImportStale
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.profile.errors import ProfilePinsTooLong, ProfileStale, ProfileTooLong
from etos_desktop.core.profile.records import PinnedLine
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.migrations import MIGRATIONS, migrate
from etos_desktop.core.text.checks import MemorySecret
from etos_desktop.core.transfer.document import FORMAT, ImportResult
from etos_desktop.core.transfer.markdown import MarkdownLabels
from etos_desktop.core.transfer.service import TransferService

TEXT = "## Identity\n- Mia, engineer in Berlin\n\n## Goals\n- Run a marathon"
PIN = PinnedLine("- Mia, engineer in Berlin", "identity")


class Side:
    def __init__(self, db: Database, clock: FakeClock) -> None:
        self.db = db
        self.profile = ProfileAccess(db, clock=clock)
        self.memory = MemoryAccess(MemoryEngine(db, clock=clock))
        self.transfer = TransferService(self.memory, profile=self.profile)
        self.clock = clock

    async def import_text(self, text: str, tmp: Path) -> ImportResult:
        path = tmp / "import.json"
        path.write_text(text, encoding="utf-8")
        preview = await self.transfer.preview_import_file(path, now=self.clock.now())
        return await self.transfer.apply_import(preview)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.memory.close)
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


async def test_user_edits_are_checked_and_nothing_refused_is_stored(sides: tuple[Side, Side]):
    a, _ = sides
    with pytest.raises(ProfileTooLong):
        await a.profile.save("## Identity\n" + "x" * 4000, ())
    with pytest.raises(MemorySecret):
        await a.profile.save("## Identity\n- my password: hunter22hunter", ())
    long_line = "- " + "y" * 1001
    with pytest.raises(ProfilePinsTooLong):
        await a.profile.save(f"## Identity\n{long_line}", (PinnedLine(long_line, "identity"),))
    assert await a.profile.revisions() == []
    saved = await a.profile.save(TEXT + "\n\n\n", (PIN, PinnedLine("- not in the text", "")))
    assert saved.content == TEXT
    assert saved.pinned == (PIN,)  # a pin whose line is gone is dropped
    with pytest.raises(ProfileStale):
        await a.profile.save("## Identity\n- other", (), base_revision_id=None)
    cleared = await a.profile.save("   ", (), base_revision_id=saved.revision_id)
    assert cleared.empty
    assert [r.source for r in await a.profile.revisions()] == ["cleared", "manual"]


async def test_export_import_round_trip_with_pins(sides: tuple[Side, Side], tmp_path: Path):
    a, b = sides
    await a.profile.save(TEXT, (PIN,))
    text, _ = await a.transfer.export_json(now=a.clock.now(), app_version="t")
    document = json.loads(text)
    assert document["profile"]["content"] == TEXT
    assert document["profile"]["pinned"] == [{"section": "identity", "text": PIN.text}]
    await b.profile.save("## Identity\n- someone else", ())
    result = await b.import_text(text, tmp_path)
    assert result.profile_replaced
    imported = await b.profile.current()
    assert (imported.content, imported.pinned) == (TEXT, (PIN,))
    # The local text stays in the history.
    assert [r.source for r in await b.profile.revisions()] == ["imported", "manual"]
    # Importing the same file again changes nothing.
    preview = await b.transfer.preview_import_file(tmp_path / "import.json", now=b.clock.now())
    assert not preview.profile.has_changes
    assert not preview.has_changes
    # Markdown export shows it with its headings a level down.
    markdown, _ = await a.transfer.export_markdown(
        now=a.clock.now(), labels=MarkdownLabels(), tz=a.clock.now().tzinfo
    )
    assert "## User profile\n\n### Identity\n- Mia, engineer in Berlin" in markdown


async def test_a_profile_is_stored_without_control_characters(
    sides: tuple[Side, Side], tmp_path: Path
):
    """Issue 19: NUL and control characters in an edited or imported profile were stored."""
    a, b = sides
    dirty = "## Identity\n- Mia,\x00 engineer in\x1b Berlin\x85\r\n\r\n## Goals\n- Run a marathon"
    saved = await a.profile.save(dirty, ())
    assert saved.content == TEXT
    document = {
        "format": FORMAT,
        "version": 1,
        "memories": [],
        "profile": {
            "content": dirty,
            "pinned": [{"section": "identity", "text": "- Mia,\x00 engineer in\x1b Berlin"}],
        },
    }
    result = await b.import_text(json.dumps(document), tmp_path)
    assert result.profile_replaced
    imported = await b.profile.current()
    # The pin is cleaned like the text, so it still names its line.
    assert (imported.content, imported.pinned) == (TEXT, (PIN,))


@pytest.mark.parametrize(
    ("profile", "reason"),
    [
        ({"content": 5}, "bad_field"),
        ("a string", "bad_field"),
        ({"content": "## Identity\n- pin: 4111 1111 1111 1111"}, "secret"),
        ({"content": "## Identity\n" + "z" * 4100}, "too_long"),
        ({"content": "## Identity\n- a", "pinned": [{"text": "x\ny"}]}, "bad_field"),
        ({"content": "## Identity\n- a", "pinned": {"text": "a"}}, "bad_field"),
    ],
)
async def test_a_bad_profile_in_a_file_is_skipped_and_the_rest_imported(
    sides: tuple[Side, Side], tmp_path: Path, profile: object, reason: str
):
    _a, b = sides
    await b.profile.save(TEXT, ())
    document = {
        "format": FORMAT,
        "version": 1,
        "memories": [{"content": "Uses pnpm", "kind": "preference"}],
        "profile": profile,
    }
    path = tmp_path / "import.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    preview = await b.transfer.preview_import_file(path, now=b.clock.now())
    assert preview.profile.invalid == reason
    result = await b.transfer.apply_import(preview)
    assert len(result.added) == 1
    assert not result.profile_replaced
    assert (await b.profile.current()).content == TEXT


async def test_a_profile_changed_after_the_preview_fails_the_whole_import(
    sides: tuple[Side, Side], tmp_path: Path
):
    a, b = sides
    await a.profile.save(TEXT, ())
    await a.memory.save("Uses pnpm", "preference")
    text, _ = await a.transfer.export_json(now=a.clock.now(), app_version="t")
    path = tmp_path / "import.json"
    path.write_text(text, encoding="utf-8")
    preview = await b.transfer.preview_import_file(path, now=b.clock.now())
    await b.profile.save("## Identity\n- changed meanwhile", ())
    with pytest.raises(ImportStale.__mro__[1]):
        await b.transfer.apply_import(preview)
    assert await b.memory.memories() == []
    assert (await b.profile.current()).content == "## Identity\n- changed meanwhile"


def test_v5_migration_adds_the_profile_tables_after_a_backup(tmp_path: Path):
    from datetime import UTC, datetime

    path = tmp_path / "etos.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, None, now=datetime(2026, 1, 1, tzinfo=UTC), migrations=MIGRATIONS[:4])
    conn.execute(
        "INSERT INTO conversation (title, created_at, updated_at) VALUES ('x', '2026', '2026')"
    )
    applied = migrate(conn, tmp_path / "backups", now=datetime(2026, 1, 2, tzinfo=UTC))
    assert applied[0] == 5
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"user_profile", "profile_revision"} <= tables
    [backup] = (tmp_path / "backups").glob("etos-before-v5-*.db")
    old = sqlite3.connect(backup)
    assert old.execute("PRAGMA user_version").fetchone()[0] == 4
    old.close()
    conn.close()
