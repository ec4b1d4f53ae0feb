"""Migration v8: a stable global id on memories, revisions, summaries, profile revisions (issue 22)."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.storage import migrations
from etos_desktop.core.storage.migrations import GID_TABLES, migrate

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _v7_database(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, None, now=NOW, migrations=migrations.MIGRATIONS[:7])
    stamp = NOW.isoformat()
    for n in range(3):
        conn.execute(
            "INSERT INTO memory (content, content_key, valid_from, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (f"memory {n}", f"k{n}", stamp, stamp, stamp),
        )
        conn.execute(
            "INSERT INTO memory_revision (memory_id, created_at, action, actor) "
            "VALUES (?, ?, 'create', 'user')",
            (n + 1, stamp),
        )
    conn.execute(
        "INSERT INTO session_summary (content, created_at, updated_at) VALUES ('s', ?, ?)",
        (stamp, stamp),
    )
    conn.execute(
        "INSERT INTO profile_revision (created_at, source, content) VALUES (?, 'manual', 'p')",
        (stamp,),
    )
    return conn


def _gids(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[0]) for row in conn.execute(f"SELECT gid FROM {table} ORDER BY id")]


def test_existing_rows_get_distinct_uuids(tmp_path: Path) -> None:
    conn = _v7_database(tmp_path / "etos.db")
    assert migrate(conn, tmp_path / "backups", now=NOW) == [
        m.version for m in migrations.MIGRATIONS if m.version >= 8
    ]
    seen: set[str] = set()
    for table in GID_TABLES:
        gids = _gids(conn, table)
        assert gids
        for gid in gids:
            assert uuid.UUID(gid).version == 4
        seen.update(gids)
    assert len(seen) == sum(len(_gids(conn, t)) for t in GID_TABLES)
    conn.close()


def test_raw_inserts_get_a_gid_and_duplicates_are_refused(tmp_path: Path) -> None:
    conn = _v7_database(tmp_path / "etos.db")
    migrate(conn, None, now=NOW)
    stamp = NOW.isoformat()
    conn.execute(
        "INSERT INTO memory (content, content_key, valid_from, created_at, updated_at) "
        "VALUES ('raw', 'kr', ?, ?, ?)",
        (stamp, stamp, stamp),
    )
    (gid,) = conn.execute("SELECT gid FROM memory WHERE content = 'raw'").fetchone()
    assert uuid.UUID(gid).version == 4
    conn.execute(
        "INSERT INTO memory (content, content_key, valid_from, created_at, updated_at, gid) "
        "VALUES ('given', 'kg', ?, ?, ?, 'fixed-gid')",
        (stamp, stamp, stamp),
    )
    assert conn.execute("SELECT gid FROM memory WHERE content = 'given'").fetchone() == (
        "fixed-gid",
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memory (content, content_key, valid_from, created_at, updated_at, gid) "
            "VALUES ('again', 'ka', ?, ?, ?, 'fixed-gid')",
            (stamp, stamp, stamp),
        )
    conn.close()


def test_rerunning_the_step_keeps_the_gids(tmp_path: Path) -> None:
    conn = _v7_database(tmp_path / "etos.db")
    migrate(conn, None, now=NOW)
    before = _gids(conn, "memory")
    conn.execute("PRAGMA user_version = 7")
    migrate(conn, None, now=NOW)
    assert _gids(conn, "memory") == before
    conn.close()


def test_engine_writes_get_gids_and_undo_delete_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "etos.db"
    engine = MemoryEngine.open(path, embedder=None, clock=FakeClock())
    try:
        first = engine.save("I use pnpm for JavaScript", "preference").id
        engine.add_many(["I live in Lyon", "I like tea"])
        deleted = engine.delete(first)
        engine.undo_delete(deleted)
    finally:
        engine.close()
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT id, gid FROM memory ORDER BY id").fetchall()
    assert len(rows) == 3
    assert all(uuid.UUID(gid) for _, gid in rows)
    assert deleted.row["gid"] == rows[0][1]
    revisions = _gids(conn, "memory_revision")
    assert len(revisions) == len(set(revisions)) >= 4
    conn.close()


def test_v14_gives_conversations_and_messages_global_ids(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "etos.db", isolation_level=None)
    v14 = next(i for i, m in enumerate(migrations.MIGRATIONS) if m.version == 14)
    migrate(conn, None, now=NOW, migrations=migrations.MIGRATIONS[:v14])
    stamp = NOW.isoformat()
    conn.execute(
        "INSERT INTO conversation (title, created_at, updated_at, pinned, archived, temporary) "
        "VALUES ('t', ?, ?, 0, 0, 0)",
        (stamp, stamp),
    )
    for n in range(2):
        conn.execute(
            "INSERT INTO message (conversation_id, role, content, created_at, status, is_current) "
            "VALUES (1, 'user', ?, ?, 'complete', 1)",
            (f"m{n}", stamp),
        )
    migrate(conn, tmp_path / "backups", now=NOW)
    gids = [*_gids(conn, "conversation"), *_gids(conn, "message")]
    assert len(set(gids)) == 3
    assert all(uuid.UUID(gid).version == 4 for gid in gids)
    conn.execute(
        "INSERT INTO message (conversation_id, role, content, created_at, status, is_current) "
        "VALUES (1, 'assistant', 'raw', ?, 'complete', 1)",
        (stamp,),
    )
    (gid,) = conn.execute("SELECT gid FROM message WHERE content = 'raw'").fetchone()
    assert uuid.UUID(gid).version == 4
    conn.close()
