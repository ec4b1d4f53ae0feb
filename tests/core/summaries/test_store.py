"""Summary rows and bookkeeping on a real database: turns, history, injection order, undo."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import SQLModel, select

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.storage.tables import ContextTraceRow, MessageRow
from etos_desktop.core.storage.traces import deleted_summary_text
from etos_desktop.core.summaries.injection import summaries_block
from etos_desktop.core.summaries.records import AttemptOutcome
from tests.core.summaries.conftest import Store


async def write(store: Store, conversation_id: int, text: str, covers: int = 0) -> int:
    summary = await store.access.write_summary(
        conversation_id=conversation_id,
        content=text,
        language="en",
        covers_until=covers,
        user_turns=6,
        source="scheduled",
    )
    return summary.id


def test_schema_v4_matches_the_tables(tmp_path):
    import asyncio

    from etos_desktop.core.storage.database import Database

    db = Database(tmp_path / "x.db")
    db.open()
    db.close()
    conn = sqlite3.connect(tmp_path / "x.db")
    for name in ("session_summary", "summary_state", "summary_vector", "job_run"):
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
        assert columns == set(SQLModel.metadata.tables[name].columns.keys()), name
    assert conn.execute("PRAGMA user_version").fetchone()[0] >= 4
    assert asyncio  # the module is imported for the fixture's loop


async def test_activity_counts_user_turns_of_the_current_history(store: Store):
    cid = await store.conversation(6)
    activity = await store.access.activity(cid)
    assert activity is not None
    assert (activity.user_turns, activity.new_user_turns) == (6, 6)
    # A regenerated reply adds no turn; an edit hides what followed the edited message.
    history = await store.repo.current_history(cid)
    await store.repo.add_message(cid, "assistant", "again", reply_to_id=history[-2].id)
    await store.repo.hide_after(history[-2].id, inclusive=True)
    activity = await store.access.activity(cid)
    assert activity is not None
    assert activity.user_turns == 5


async def test_a_summary_and_what_it_covered_are_written_together(store: Store):
    cid = await store.conversation(6)
    history = await store.repo.current_history(cid)
    await write(store, cid, "first", covers=history[-1].id)
    activity = await store.access.activity(cid)
    assert activity is not None
    assert activity.new_user_turns == 0
    assert activity.covered_until_message_id == history[-1].id
    assert activity.succeeded_at == store.clock.now()
    assert activity.last_outcome == AttemptOutcome.SUMMARY
    await store.talk(cid, 1, start=6)
    activity = await store.access.activity(cid)
    assert activity is not None
    assert activity.new_user_turns == 1


async def test_skip_records_coverage_and_error_records_backoff(store: Store):
    cid = await store.conversation(6)
    retry = store.clock.now() + timedelta(minutes=10)
    assert await store.access.record_error(cid, "provider_unavailable", retry) == 1
    assert await store.access.record_error(cid, "provider_unavailable", retry) == 2
    activity = await store.access.activity(cid)
    assert activity is not None
    assert (activity.retry_at, activity.error_count, activity.last_error) == (
        retry,
        2,
        "provider_unavailable",
    )
    assert activity.succeeded_at is None
    await store.access.record_skip(cid, 12)
    activity = await store.access.activity(cid)
    assert activity is not None
    assert activity.last_outcome == AttemptOutcome.SKIP
    assert (activity.retry_at, activity.error_count, activity.covered_until_message_id) == (
        None,
        0,
        12,
    )
    assert await store.access.summaries() == []


async def test_history_is_kept_and_the_newest_unarchived_is_current(store: Store):
    cid = await store.conversation(6, "Trip")
    first = await write(store, cid, "first version")
    store.clock.advance(hours=3)
    second = await write(store, cid, "second version")
    history = await store.access.of_conversation(cid)
    assert [(s.id, s.current) for s in history] == [(second, True), (first, False)]
    await store.access.archive([second])
    current = await store.access.current(cid)
    assert current is not None
    assert current.id == first
    assert (await store.access.get(second)).archived  # type: ignore[union-attr]


async def test_injection_takes_the_newest_current_summary_of_other_conversations(store: Store):
    ids = []
    for n in range(7):
        cid = await store.conversation(1, f"c{n}")
        await write(store, cid, f"old of c{n}")
        store.clock.advance(minutes=1)
        await write(store, cid, f"summary of c{n}")
        store.clock.advance(minutes=1)
        ids.append(cid)
    picked = await store.access.for_injection(ids[6], 5)
    assert [s.content for s in picked] == [f"summary of c{n}" for n in (5, 4, 3, 2, 1)]
    assert all(s.conversation_title for s in picked)
    archived = picked[0].id
    await store.access.archive([archived])
    picked = await store.access.for_injection(ids[6], 5)
    # c5's archived summary is not sent; its earlier one is current again, and still newer
    # than c4's.
    assert [s.content for s in picked] == ["old of c5", *[f"summary of c{n}" for n in (4, 3, 2, 1)]]
    assert await store.access.for_injection(ids[6], 0) == []


async def test_delete_is_real_and_undo_puts_it_back(store: Store):
    cid = await store.conversation(6)
    sid = await write(store, cid, "to delete")
    deleted = await store.access.delete_many([sid])
    assert await store.access.summaries() == []
    restored = await store.access.undo_delete_many(deleted)
    assert restored == [sid]
    again = await store.access.get(sid)
    assert again is not None
    assert again.content == "to delete"


async def test_deleting_the_current_summary_uncovers_what_it_covered(store: Store):
    cid = await store.conversation(3)
    first_covers = (await store.repo.current_history(cid))[-1].id
    first = await write(store, cid, "first", covers=first_covers)
    await store.talk(cid, 3, start=3)
    store.clock.advance(hours=3)
    second = await write(
        store, cid, "second", covers=(await store.repo.current_history(cid))[-1].id
    )
    written_at = store.clock.now()
    store.clock.advance(minutes=5)
    # An earlier version goes: the current one still covers everything.
    await store.access.delete_many([first])
    activity = await store.access.activity(cid)
    assert activity is not None
    assert activity.new_user_turns == 0
    # The current one goes: what only it covered is new again; the last success stays.
    deleted = await store.access.delete_many([second])
    activity = await store.access.activity(cid)
    assert activity is not None
    assert (activity.covered_until_message_id, activity.new_user_turns) == (None, 6)
    assert activity.succeeded_at == written_at
    await store.access.undo_delete_many(deleted)
    activity = await store.access.activity(cid)
    assert activity is not None
    assert activity.new_user_turns == 0


async def test_deleting_a_summary_falls_back_to_the_one_before(store: Store):
    cid = await store.conversation(3)
    covers = (await store.repo.current_history(cid))[-1].id
    await write(store, cid, "first", covers=covers)
    await store.talk(cid, 3, start=3)
    store.clock.advance(hours=3)
    second = await write(
        store, cid, "second", covers=(await store.repo.current_history(cid))[-1].id
    )
    await store.access.delete_many([second])
    activity = await store.access.activity(cid)
    assert activity is not None
    assert (activity.covered_until_message_id, activity.new_user_turns) == (covers, 3)


async def test_a_deleted_summary_leaves_the_traces_and_the_files(store: Store, tmp_path: Path):
    # Another conversation's reply was sent the summary; its trace keeps what was sent.
    source = await store.conversation(6, "Trip")
    kept = await write(store, await store.conversation(6, "Tea"), "Mia drinks oolong daily.")
    secret = 'Mia planned a "zebracorn" trip\n to   Qingdao.'
    sid = await write(store, source, secret)
    other = await store.conversation(1, "Elsewhere")
    sent = await store.access.for_injection(other, 5)
    block = summaries_block(sent, "en")
    assert block is not None
    assert "zebracorn" in block.content
    trace = json.dumps(
        {"blocks": [{"kind": "summaries", "label": "x", "tokens": 1, "text": block.content}]},
        ensure_ascii=False,
    )

    def add_trace(session):
        reply = session.exec(
            select(MessageRow).where(
                MessageRow.conversation_id == other, MessageRow.role == "assistant"
            )
        ).first()
        session.add(
            ContextTraceRow(message_id=reply.id, created_at=store.clock.now(), trace_json=trace)
        )
        session.commit()
        return reply.id

    reply_id = await store.db.run(add_trace)
    files = [tmp_path / "etos.db", tmp_path / "etos.db-wal"]
    assert any(b"zebracorn" in p.read_bytes() for p in files if p.exists())

    deleted = await store.access.delete_many([sid])

    def stored_trace(session) -> str:
        return session.get(ContextTraceRow, reply_id).trace_json

    erased = json.loads(await store.db.run(stored_trace))["blocks"][0]["text"]
    assert "zebracorn" not in erased
    assert deleted_summary_text(sid) in erased
    assert "“Trip”" in erased  # the line still says a summary of "Trip" was sent
    assert "Mia drinks oolong daily." in erased  # the other summary's line is untouched
    for path in files:
        if path.exists():
            assert b"zebracorn" not in path.read_bytes(), path.name

    await store.access.undo_delete_many(deleted)
    assert json.loads(await store.db.run(stored_trace))["blocks"][0]["text"] == block.content
    assert (await store.access.get(sid)).content == secret
    assert kept


async def test_deleting_a_conversation_deletes_its_summaries(store: Store):
    cid = await store.conversation(6)
    await write(store, cid, "gone with it")
    await store.repo.delete_conversation(cid)
    assert await store.access.summaries() == []
    assert await store.access.activity(cid) is None


async def test_edit_marks_it_and_refuses_secrets_and_empty_text(store: Store):
    cid = await store.conversation(6)
    sid = await write(store, cid, "original")
    store.clock.advance(minutes=5)
    edited = await store.access.edit(sid, "  corrected by the user  ")
    assert edited.content == "corrected by the user"
    assert edited.edited_by_user
    assert edited.updated_at == store.clock.now()
    with pytest.raises(InvalidInput) as refused:
        await store.access.edit(sid, "the password is hunter2222")
    assert refused.value.code == "memory_secret"
    with pytest.raises(InvalidInput):
        await store.access.edit(sid, "   ")
    assert (await store.access.get(sid)).content == "corrected by the user"  # type: ignore[union-attr]


async def test_recent_activity_is_one_query_over_conversations_changed_lately(store: Store):
    old = await store.conversation(6, "old")
    store.clock.advance(days=8)
    recent = await store.conversation(3, "recent")
    found = await store.access.recent_activity(store.clock.now() - timedelta(days=7))
    assert [a.conversation_id for a in found] == [recent]
    assert old not in [a.conversation_id for a in found]
