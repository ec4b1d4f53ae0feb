"""Database file, pragmas, migrations with backup, crash recovery, environment errors."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.errors import StorageError
from etos_desktop.core.storage import migrations
from etos_desktop.core.storage.backups import KEEP_PRE_MIGRATION
from etos_desktop.core.storage.backups import backups as backups_in
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.migrations import LATEST_VERSION, Migration, migrate
from etos_desktop.core.storage.tables import (
    ContextTraceMemoryRow,
    ContextTraceRow,
    ConversationRow,
    MessageRow,
)


def open_db(path: Path, **kwargs) -> Database:
    db = Database(path, path.parent / "backups", **kwargs)
    db.open()
    return db


def test_new_file_is_wal_with_foreign_keys_and_private(tmp_path: Path):
    db = open_db(tmp_path / "etos.db")
    try:

        def pragmas(session):
            conn = session.connection()
            return (
                conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
                conn.exec_driver_sql("PRAGMA foreign_keys").scalar(),
                conn.exec_driver_sql("PRAGMA user_version").scalar(),
            )

        assert db.call(pragmas) == ("wal", 1, LATEST_VERSION)
    finally:
        db.close()
    if os.name == "posix":
        assert stat.S_IMODE((tmp_path / "etos.db").stat().st_mode) == 0o600


def test_schema_matches_the_sqlmodel_tables(tmp_path: Path):
    db = open_db(tmp_path / "etos.db")
    db.close()
    with sqlite3.connect(tmp_path / "etos.db") as conn:
        for table in (ConversationRow, MessageRow, ContextTraceRow, ContextTraceMemoryRow):
            name = table.__tablename__
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
            assert columns == set(table.model_fields), name


def test_work_runs_on_one_db_thread(tmp_path: Path):
    db = open_db(tmp_path / "etos.db")
    try:
        assert not db.on_db_thread()
        assert db.call(lambda _s: db.on_db_thread())
        assert db.call_raw(lambda: db.on_db_thread())
    finally:
        db.close()


def test_streaming_replies_are_marked_interrupted_on_open(tmp_path: Path):
    db = open_db(tmp_path / "etos.db")
    now = datetime(2026, 1, 1, tzinfo=UTC)

    def seed(session):
        conv = ConversationRow(title="t", created_at=now, updated_at=now)
        session.add(conv)
        session.commit()
        session.add(MessageRow(conversation_id=conv.id, role="user", content="q", created_at=now))
        session.add(
            MessageRow(
                conversation_id=conv.id,
                role="assistant",
                content="half an ans",
                created_at=now,
                status="streaming",
            )
        )
        session.commit()

    db.call(seed)
    db.close()
    db = open_db(tmp_path / "etos.db")
    try:
        assert db.recovered_on_open == 1
        rows = db.call(lambda s: s.exec(__import__("sqlmodel").select(MessageRow)).all())
        assert [(r.status, r.content) for r in rows] == [
            ("complete", "q"),
            ("interrupted", "half an ans"),
        ]
    finally:
        db.close()


def test_migration_backs_up_existing_data_first(tmp_path: Path):
    path = tmp_path / "etos.db"
    db = open_db(path)
    db.close()
    extra = Migration(
        LATEST_VERSION + 1,
        "test step",
        lambda conn: conn.execute("CREATE TABLE later_feature (id INTEGER PRIMARY KEY)"),
    )
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        applied = migrate(
            conn,
            tmp_path / "backups",
            now=FakeClock().now(),
            migrations=(*migrations.MIGRATIONS, extra),
        )
        assert applied == [LATEST_VERSION + 1]
        assert migrations.schema_version(conn) == LATEST_VERSION + 1
    finally:
        conn.close()
    backups = list((tmp_path / "backups").glob("etos-before-v*.db"))
    assert len(backups) == 1
    with sqlite3.connect(backups[0]) as old:
        assert old.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
        tables = {r[0] for r in old.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "later_feature" not in tables
        assert "message" in tables


def test_every_upgrade_rotates_the_pre_migration_copies(tmp_path: Path):
    # Left to the daily backup, they piled up when it never ran (quit within minutes of start).
    folder = tmp_path / "backups"
    folder.mkdir()
    older = [folder / f"etos-before-v{n}-2025010{n}-000000.db" for n in range(1, 6)]
    daily = [folder / f"etos-daily-2025010{n}-000000.db" for n in range(1, 9)]
    for path in older + daily:
        path.write_bytes(b"an older copy")
    path = tmp_path / "etos.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, None, now=FakeClock().now(), migrations=migrations.MIGRATIONS[:-1])
    conn.close()

    open_db(path).close()
    kept_daily, kept = backups_in(folder)
    assert len(kept) == KEEP_PRE_MIGRATION
    assert kept[0].name.startswith(f"etos-before-v{LATEST_VERSION}-")  # the new copy
    assert kept[1:] == older[:-KEEP_PRE_MIGRATION:-1]
    # Daily copies are the daily job's to rotate (it reads backup.keep_count).
    assert sorted(kept_daily) == daily


def test_failed_migration_rolls_back(tmp_path: Path):
    path = tmp_path / "etos.db"
    open_db(path).close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (id INTEGER)")
        conn.execute("THIS IS NOT SQL")

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        with pytest.raises(StorageError):
            migrate(
                conn,
                tmp_path / "backups",
                now=FakeClock().now(),
                migrations=(*migrations.MIGRATIONS, Migration(LATEST_VERSION + 1, "x", broken)),
            )
        assert migrations.schema_version(conn) == LATEST_VERSION
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "half_done" not in tables
    finally:
        conn.close()


def test_newer_schema_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "etos.db"
    open_db(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 5}")
    before = path.read_bytes()
    db = Database(path)
    with pytest.raises(StorageError) as info:
        db.open()
    db.close()
    assert info.value.params["reason"] == "newer_schema"
    assert path.read_bytes() == before


def test_corrupt_file_is_a_storage_error(tmp_path: Path):
    path = tmp_path / "etos.db"
    path.write_bytes(b"this is not a database" * 100)
    db = Database(path)
    with pytest.raises(StorageError):
        db.open()
    db.close()
    assert path.read_bytes() == b"this is not a database" * 100


@pytest.mark.parametrize(
    ("sqlite_words", "reason"),
    [
        ("disk I/O error", "io"),  # plenty of room on tmp_path's disk: not a full disk
        ("database or disk is full", "disk_full"),
        ("database is locked", "io"),
        ("no such table: nothing", "database"),
    ],
)
def test_storage_error_has_sqlite_words_not_sqlalchemy_text(
    tmp_path: Path, sqlite_words: str, reason: str
):
    # SQLAlchemy's text adds the statement, its parameters (the user's words) and a link.
    failure = OperationalError(
        "INSERT INTO message (content) VALUES (?)",
        ("what the user wrote",),
        sqlite3.OperationalError(sqlite_words),
    )
    assert "sqlalche.me" in str(failure)
    db = open_db(tmp_path / "etos.db")

    def fail(_session: object) -> None:
        raise failure

    try:
        with pytest.raises(StorageError) as info:
            db.call(fail)
    finally:
        db.close()
    assert info.value.params["reason"] == reason
    assert info.value.detail == sqlite_words
    assert info.value.__cause__ is failure


def test_migration_v3_links_traces_and_erases_texts_of_memories_deleted_before(tmp_path: Path):
    # Before v3 a deleted memory's text stayed in the traces of the replies that used it.
    path = tmp_path / "etos.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, None, now=FakeClock().now(), migrations=migrations.MIGRATIONS[:2])
    when = "2026-01-01 00:00:00.000000"
    conn.execute(
        "INSERT INTO conversation (id, created_at, updated_at) VALUES (1, ?, ?)", (when, when)
    )
    for message_id in (1, 2):
        conn.execute(
            "INSERT INTO message (id, conversation_id, role, created_at) VALUES (?, 1, 'assistant', ?)",
            (message_id, when),
        )
    conn.execute(
        "INSERT INTO memory (id, content, content_key, valid_from, created_at, updated_at) "
        "VALUES (5, 'Likes green tea', 'k', ?, ?, ?)",
        (when, when, when),
    )
    block = (
        "<memories>\n- #5 (preference, 2026-01-01, confidence 1.0) Likes green tea\n"
        "- #7 (fact, 2026-01-01, confidence 1.0) Secret garden zebracorn\n</memories>"
    )
    trace = json.dumps(
        {
            "blocks": [{"kind": "memories", "label": "Saved", "tokens": 20, "text": block}],
            "memories": [{"id": 5}, {"id": 7}],
        }
    )
    conn.execute("INSERT INTO context_trace VALUES (1, ?, ?)", (when, trace))
    conn.execute("INSERT INTO context_trace VALUES (2, ?, 'not a trace')", (when,))
    conn.close()

    db = open_db(path)
    db.close()
    with sqlite3.connect(path) as conn:
        links = conn.execute("SELECT memory_id, message_id FROM context_trace_memory").fetchall()
        assert sorted(links) == [(5, 1), (7, 1)]
        [(text,)] = conn.execute("SELECT trace_json FROM context_trace WHERE message_id = 1")
        assert "zebracorn" not in text
        assert "Likes green tea" in text
        assert "- #7 (fact, 2026-01-01, confidence 1.0) [deleted memory #7]" in text
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM message WHERE id = 1")
        assert conn.execute("SELECT count(*) FROM context_trace_memory").fetchone() == (0,)
    assert list((tmp_path / "backups").glob("etos-before-v3-*.db"))


def test_every_connection_zeroes_deleted_content(tmp_path: Path):
    db = open_db(tmp_path / "etos.db")
    try:
        on = db.call(lambda s: s.connection().exec_driver_sql("PRAGMA secure_delete").scalar())
        assert on == 1
    finally:
        db.close()
