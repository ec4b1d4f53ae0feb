"""The user's own changes to summaries and the profile are published on the change hub.

Open views refresh from the hub, and sync's debounce starts from it: an edit on the Summaries or
Profile page that published nothing stayed unseen there (issue 20, redesign step).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from etos_desktop.core.changes import ChangeHub, DataChange, ProfileChanged, SummariesChanged
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.summaries.access import SummaryAccess


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[tuple[Database, ChangeHub, list[DataChange]]]:
    clock = FakeClock()
    db = Database(tmp_path / "etos.db", clock=clock)
    await db.open_async()
    hub = ChangeHub()
    heard: list[DataChange] = []
    hub.subscribe(heard.append)
    yield db, hub, heard
    await asyncio.get_running_loop().run_in_executor(None, db.close)


async def test_summary_edits_archive_delete_and_undo_are_each_published_once(
    parts: tuple[Database, ChangeHub, list[DataChange]],
) -> None:
    db, hub, heard = parts
    access = SummaryAccess(db, clock=FakeClock(), changes=hub)
    conversation = await ChatRepository(db).create_conversation("trip")
    assert conversation.id is not None
    summary = await access.write_summary(
        conversation_id=conversation.id,
        content="Planned a trip to Lyon with Alex.",
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    heard.clear()  # the job publishes its own writes (services/summary_jobs.py)

    await access.edit(summary.id, "Planned a trip to Lyon with Alex in May.")
    assert heard == [SummariesChanged(conversation.id)]
    await access.archive([summary.id])
    await access.archive([summary.id])  # already archived: nothing changed, nothing said
    await access.restore([summary.id])
    deleted = await access.delete_many([summary.id])
    await access.undo_delete_many(deleted)
    assert heard == [SummariesChanged(conversation.id)] + [SummariesChanged(None)] * 4
    access.close()


async def test_profile_save_clear_and_restore_are_each_published(
    parts: tuple[Database, ChangeHub, list[DataChange]],
) -> None:
    db, hub, heard = parts
    access = ProfileAccess(db, clock=FakeClock(), changes=hub)
    saved = await access.save("## Identity\n- Mia, engineer in Berlin", [])
    await access.clear()
    assert saved.revision_id is not None
    await access.restore(saved.revision_id)
    assert heard == [ProfileChanged()] * 3
    assert (await access.current()).content.startswith("## Identity")
