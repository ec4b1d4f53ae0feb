"""Migration v10 creates the empty message index; the messages already there are indexed later.

The background indexer fills it in batches on the DB thread, newest first, reporting progress;
search meanwhile answers from what is indexed and says that it is still indexing.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.chat.search import MessageIndexer, MessageSearch
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.storage import message_fts
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.message_fts import IndexCount
from etos_desktop.core.storage.repositories import ChatRepository
from tests.helpers.message_index import NOW, make_v9_database


async def test_v9_database_migrates_then_indexes_in_the_background_with_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "etos.db"
    ids = make_v9_database(path, conversations=4, per_conversation=30)
    db = Database(path, tmp_path / "backups", clock=FakeClock(NOW))
    await db.open_async()
    try:
        # The migration made the index and marked the backlog, and indexed nothing itself.
        assert list((tmp_path / "backups").glob("etos-before-v10-*.db"))
        assert db.call(message_fts.backlog_marked)
        assert db.call(message_fts.count) == IndexCount(indexed=0, total=len(ids))
        search = MessageSearch(db)
        before = await search.search_messages("zebracorn")
        assert before.hits == ()
        assert before.indexing == IndexCount(0, len(ids))

        on_thread: list[bool] = []
        real_add = message_fts.add

        def add(session: Any, rows: Any) -> None:
            on_thread.append(db.on_db_thread())
            real_add(session, rows)

        monkeypatch.setattr(message_fts, "add", add)
        indexer = MessageIndexer(db, batch_chars=600, pause=0)
        progress: list[IndexCount | None] = []
        midway: list[asyncio.Task[Any]] = []

        def on_progress(state: IndexCount | None) -> None:
            progress.append(state)
            if state is not None and state.indexed > 0 and not midway:
                # A search between two batches: what is indexed so far (the newest first).
                midway.append(asyncio.ensure_future(search.search_messages("天气")))

        indexer.subscribe(on_progress)
        assert await indexer.index_pending() == len(ids)

        assert on_thread
        assert all(on_thread)
        assert progress[0] == IndexCount(0, len(ids))
        assert progress[-1] is None
        counts = [p.indexed for p in progress if p is not None]
        assert counts == sorted(counts)
        assert counts[-1] == len(ids)
        assert len(counts) > 5  # in batches
        assert all(p.total == len(ids) for p in progress if p is not None)

        partial = await midway[0]
        assert partial.indexing is not None
        assert partial.indexing.indexed < len(ids)
        assert partial.hits
        assert all(hit.message_id > ids[len(ids) // 2] for hit in partial.hits)

        done = await search.search_messages("咖啡机")
        assert [hit.message_id for hit in done.hits] == [ids[3]]
        assert done.hits[0].conversation_title == "Old conversation 0"
        assert done.hits[0].created_at == NOW - timedelta(days=400) + timedelta(minutes=7 * 4)
        assert done.indexing is None
        assert not db.call(message_fts.backlog_marked)
        assert await indexer.index_pending() == 0
    finally:
        db.close()


async def test_a_new_database_has_no_backlog(tmp_path: Path) -> None:
    db = Database(tmp_path / "etos.db", clock=FakeClock(NOW))
    await db.open_async()
    try:
        assert not db.call(message_fts.backlog_marked)
        repo = ChatRepository(db)
        conversation = await repo.create_conversation()
        await repo.add_message(conversation.id or 0, "user", "hello there")
        assert db.call(message_fts.count) == IndexCount(1, 1)
        assert (await MessageSearch(db).search_messages("hello")).indexing is None
    finally:
        db.close()


async def test_a_reply_cut_off_by_a_crash_is_indexed_at_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "etos.db"
    db = Database(path, clock=FakeClock(NOW))
    await db.open_async()
    repo = ChatRepository(db)
    conversation = await repo.create_conversation()
    reply = await repo.add_message(conversation.id or 0, "assistant", "", status="streaming")
    await repo.update_message(reply.id or 0, content="half a reply about quokkas")
    db.close()  # the app died while it streamed

    db = Database(path, clock=FakeClock(NOW))
    assert await db.open_async() == 1  # marked interrupted
    try:
        search = MessageSearch(db)
        assert (await search.search_messages("quokkas")).hits == ()
        assert await MessageIndexer(db, pause=0).index_pending() == 1
        [hit] = (await search.search_messages("quokkas")).hits
        assert hit.message_id == reply.id
    finally:
        db.close()


async def test_the_indexer_purges_after_a_delete_and_at_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "etos.db"
    db = Database(path, clock=FakeClock(NOW))
    await db.open_async()
    indexer = MessageIndexer(db, pause=0, purge_delay=0)
    repo = ChatRepository(db, after_delete=indexer.note_deleted)
    run = asyncio.ensure_future(indexer.run())
    try:
        conversation = await repo.create_conversation()
        message = await repo.add_message(conversation.id or 0, "user", "short lived words")
        await asyncio.sleep(0)  # the indexer starts
        await repo.delete_message(message.id or 0)
        assert db.call(message_fts.purge_pending)
        await asyncio.wait_for(indexer.idle(), 10)
        assert not db.call(message_fts.purge_pending)
        # Killed before a purge: the mark stays, and the next start purges.
        run.cancel()
        other = await repo.add_message(conversation.id or 0, "user", "more words")
        await repo.delete_message(other.id or 0)
        assert db.call(message_fts.purge_pending)
    finally:
        run.cancel()
        db.close()
    db = Database(path, clock=FakeClock(NOW))
    await db.open_async()
    try:
        restarted = MessageIndexer(db, pause=0, purge_delay=0)
        run = asyncio.ensure_future(restarted.run())
        await asyncio.sleep(0)
        await asyncio.wait_for(restarted.idle(), 10)
        assert not db.call(message_fts.purge_pending)
        run.cancel()
    finally:
        db.close()
