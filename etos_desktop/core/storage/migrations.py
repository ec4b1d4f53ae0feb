"""Ordered schema migrations keyed by ``PRAGMA user_version``.

Each step is plain SQL (portable except where noted) applied in one transaction. Before a database
that already holds data is migrated, the file is copied with SQLite's backup API
(``backups.backup_file``), and the newest ``backups.KEEP_PRE_MIGRATION`` copies are kept
(``backups.rotate``, right after the copy and again with each daily backup).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from etos_desktop.core.errors import StorageError
from etos_desktop.core.storage.backups import backup_file, rotate
from etos_desktop.core.text.secrets import redact_tool_transcript
from etos_desktop.core.text.segmentation import index_text


@dataclass(frozen=True)
class Migration:
    """One schema step: after it runs, ``user_version`` is ``version``."""

    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    # executescript() would COMMIT first and break the step's transaction, so run one by one.
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v1_chat(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE conversation (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            created_at DATETIME NOT NULL,
            updated_at DATETIME NOT NULL,
            pinned BOOLEAN NOT NULL DEFAULT 0,
            archived BOOLEAN NOT NULL DEFAULT 0,
            temporary BOOLEAN NOT NULL DEFAULT 0,
            provider_id TEXT,
            model TEXT,
            persona_name TEXT,
            persona_prompt TEXT
        );
        CREATE INDEX ix_conversation_updated_at ON conversation (updated_at);
        CREATE TABLE message (
            id INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            content TEXT NOT NULL DEFAULT '',
            created_at DATETIME NOT NULL,
            status TEXT NOT NULL DEFAULT 'complete',
            model TEXT,
            usage_json TEXT,
            tool_calls_json TEXT,
            tool_call_id TEXT,
            error_code TEXT,
            error_detail TEXT,
            reply_to_id INTEGER REFERENCES message (id) ON DELETE SET NULL,
            is_current BOOLEAN NOT NULL DEFAULT 1,
            hidden_at DATETIME
        );
        CREATE INDEX ix_message_conversation_id ON message (conversation_id);
        CREATE INDEX ix_message_reply_to_id ON message (reply_to_id);
        CREATE INDEX ix_message_status ON message (status);
        CREATE TABLE context_trace (
            message_id INTEGER PRIMARY KEY REFERENCES message (id) ON DELETE CASCADE,
            created_at DATETIME NOT NULL,
            trace_json TEXT NOT NULL
        );
        """,
    )


def _v2_memory(conn: sqlite3.Connection) -> None:
    # SQLite-only here: AUTOINCREMENT (ids are shown to people and never reused) and the FTS5
    # tables. The FTS5 queries live in ``core/memory/fts.py``. The text put into ``memory_fts``
    # is pre-segmented by ``core/text/segmentation.py`` (space-separated tokens), so the
    # ``ascii`` tokenizer only splits on spaces and behaves the same on every machine.
    _run_script(
        conn,
        """
        CREATE TABLE memory (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            content TEXT NOT NULL,
            content_key TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'fact',
            source TEXT NOT NULL DEFAULT 'manual',
            importance FLOAT NOT NULL DEFAULT 0.5,
            confidence FLOAT NOT NULL DEFAULT 1.0,
            tags_json TEXT NOT NULL DEFAULT '[]',
            trigger_context TEXT,
            valid_from DATETIME NOT NULL,
            valid_until DATETIME,
            superseded_by INTEGER REFERENCES memory (id) ON DELETE SET NULL,
            archived_at DATETIME,
            created_at DATETIME NOT NULL,
            updated_at DATETIME NOT NULL,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at DATETIME,
            origin_conversation_id INTEGER REFERENCES conversation (id) ON DELETE SET NULL,
            origin_message_id INTEGER REFERENCES message (id) ON DELETE SET NULL
        );
        CREATE INDEX ix_memory_content_key ON memory (content_key);
        CREATE INDEX ix_memory_superseded_by ON memory (superseded_by);
        CREATE INDEX ix_memory_archived_at ON memory (archived_at);
        CREATE TABLE memory_revision (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL,
            created_at DATETIME NOT NULL,
            action TEXT NOT NULL,
            actor TEXT NOT NULL,
            before_json TEXT,
            after_json TEXT
        );
        CREATE INDEX ix_memory_revision_memory_id ON memory_revision (memory_id);
        CREATE TABLE memory_vector (
            embedder_key TEXT NOT NULL,
            memory_id INTEGER NOT NULL REFERENCES memory (id) ON DELETE CASCADE,
            chunk_no INTEGER NOT NULL DEFAULT 0,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (embedder_key, memory_id, chunk_no)
        );
        CREATE INDEX ix_memory_vector_memory_id ON memory_vector (memory_id);
        CREATE VIRTUAL TABLE memory_fts USING fts5 (body, tokenize = 'ascii');
        CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab (memory_fts, 'row');
        """,
    )


def _v3_trace_links(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE context_trace_memory (
            memory_id INTEGER NOT NULL,
            message_id INTEGER NOT NULL REFERENCES context_trace (message_id) ON DELETE CASCADE,
            PRIMARY KEY (memory_id, message_id)
        );
        CREATE INDEX ix_context_trace_memory_message_id ON context_trace_memory (message_id);
        """,
    )
    # Imported here: traces pulls in SQLAlchemy, and this module must stay light — the
    # start-up peek imports it before the first frame (sqlite3 only).
    from etos_desktop.core.storage import traces

    existing = {int(row[0]) for row in conn.execute("SELECT id FROM memory")}
    rows = conn.execute("SELECT message_id, trace_json FROM context_trace").fetchall()
    for message_id, trace_json in rows:
        cited = traces.cited_memory_ids(str(trace_json))
        conn.executemany(
            "INSERT INTO context_trace_memory (memory_id, message_id) VALUES (?, ?)",
            [(memory_id, message_id) for memory_id in cited],
        )
        # Memories deleted before this version left their text in the traces: erase it now.
        gone = [memory_id for memory_id in cited if memory_id not in existing]
        if gone:
            new_json, changes = traces.erase_memory_texts(str(trace_json), gone)
            if changes:
                conn.execute(
                    "UPDATE context_trace SET trace_json = ? WHERE message_id = ?",
                    (new_json, message_id),
                )


def _v4_summaries_and_jobs(conn: sqlite3.Connection) -> None:
    # Summaries cascade with their conversation: deleting a conversation deletes what was
    # learned from it. Imported summaries of a conversation that is not here have no link.
    _run_script(
        conn,
        """
        CREATE TABLE session_summary (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id INTEGER REFERENCES conversation (id) ON DELETE CASCADE,
            conversation_title TEXT NOT NULL DEFAULT '',
            content TEXT NOT NULL,
            language TEXT NOT NULL DEFAULT 'en',
            created_at DATETIME NOT NULL,
            updated_at DATETIME NOT NULL,
            covers_until_message_id INTEGER,
            user_turns_covered INTEGER NOT NULL DEFAULT 0,
            source TEXT NOT NULL DEFAULT 'scheduled',
            edited_by_user BOOLEAN NOT NULL DEFAULT 0,
            archived_at DATETIME
        );
        CREATE INDEX ix_session_summary_conversation_id ON session_summary (conversation_id);
        CREATE INDEX ix_session_summary_created_at ON session_summary (created_at);
        CREATE TABLE summary_state (
            conversation_id INTEGER PRIMARY KEY
                REFERENCES conversation (id) ON DELETE CASCADE,
            covered_until_message_id INTEGER,
            succeeded_at DATETIME,
            attempted_at DATETIME,
            retry_at DATETIME,
            error_count INTEGER NOT NULL DEFAULT 0,
            last_outcome TEXT,
            last_error TEXT
        );
        CREATE TABLE summary_vector (
            embedder_key TEXT NOT NULL,
            summary_id INTEGER NOT NULL REFERENCES session_summary (id) ON DELETE CASCADE,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (embedder_key, summary_id)
        );
        CREATE INDEX ix_summary_vector_summary_id ON summary_vector (summary_id);
        CREATE TABLE job_run (
            name TEXT PRIMARY KEY,
            last_started_at DATETIME,
            last_finished_at DATETIME,
            last_success_at DATETIME,
            last_error_at DATETIME,
            last_error TEXT,
            next_run_at DATETIME,
            runs INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX ix_message_conversation_role ON message (conversation_id, role);
        """,
    )


def _v5_profile(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE user_profile (
            id INTEGER PRIMARY KEY,
            content TEXT NOT NULL DEFAULT '',
            pinned_json TEXT NOT NULL DEFAULT '[]',
            revision_id INTEGER,
            updated_at DATETIME,
            material_until DATETIME,
            checked_at DATETIME,
            attempted_at DATETIME,
            retry_at DATETIME,
            error_count INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            last_outcome TEXT
        );
        CREATE TABLE profile_revision (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at DATETIME NOT NULL,
            source TEXT NOT NULL,
            content TEXT NOT NULL,
            pinned_json TEXT NOT NULL DEFAULT '[]',
            summary_ids_json TEXT NOT NULL DEFAULT '[]',
            memory_ids_json TEXT NOT NULL DEFAULT '[]',
            restored_from INTEGER
        );
        CREATE INDEX ix_profile_revision_created_at ON profile_revision (created_at);
        """,
    )


def _v6_reindex_keywords(conn: sqlite3.Connection) -> None:
    # The keyword index is stemmed by Snowball now (issue 18; core/text/stemming.py): every
    # indexed body is segmented again, or old rows would not match the new query terms.
    rows = conn.execute(
        "SELECT memory_fts.rowid, memory.content FROM memory_fts "
        "JOIN memory ON memory.id = memory_fts.rowid"
    ).fetchall()
    conn.executemany(
        "UPDATE memory_fts SET body = ? WHERE rowid = ?",
        [(index_text(content), rowid) for rowid, content in rows],
    )


def _v7_redact_tool_arguments(conn: sqlite3.Connection) -> None:
    # A refused save_memory call kept its secret in the reply's stored tool rounds, and every
    # later request sent it again (issue 19). The rows already stored are scrubbed; secure_delete
    # (set on this connection) zeroes the old cells, and the WAL is checkpointed on close.
    rows = conn.execute(
        "SELECT id, tool_calls_json FROM message WHERE tool_calls_json IS NOT NULL"
    ).fetchall()
    changed = [
        (redacted, row_id)
        for row_id, stored in rows
        if (redacted := redact_tool_transcript(stored)) != stored
    ]
    conn.executemany("UPDATE message SET tool_calls_json = ? WHERE id = ?", changed)


#: Tables whose rows got a global id in v8 (issue 22): the synced items that existed then.
GID_TABLES = ("memory", "memory_revision", "session_summary", "profile_revision")
#: Tables whose rows get one in v14: what summaries link to (their conversation, the last
#: message they cover) and what conversation sync will name.
CONVERSATION_GID_TABLES = ("conversation", "message")

# A random (version 4) UUID in SQLite's SQL, for rows inserted without a gid by raw SQL;
# inserts through the tables' classes get Python's uuid4 first (``tables.new_gid``).
_SQL_UUID4 = (
    "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || "
    "substr(lower(hex(randomblob(2))), 2) || '-' || "
    "substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || "
    "'-' || lower(hex(randomblob(6)))"
)


def _v8_global_ids(conn: sqlite3.Connection) -> None:
    # Sync (issue 22) names items by a stable global id; local integer ids stay local.
    _add_global_ids(conn, GID_TABLES)


def _add_global_ids(conn: sqlite3.Connection, tables: Iterable[str]) -> None:
    # SQLite cannot add a column with a non-constant default, so existing rows are filled here
    # and a trigger gives one to any row inserted without it (bulk inserts, undo's write-back
    # keeps the old one).
    # Safe to run again on a file that has it (tests rewind ``user_version`` to rerun steps).
    for table in tables:
        columns = {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}
        if "gid" not in columns:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN gid TEXT")
        ids = [int(row[0]) for row in conn.execute(f"SELECT id FROM {table} WHERE gid IS NULL")]
        conn.executemany(
            f"UPDATE {table} SET gid = ? WHERE id = ?", [(str(uuid.uuid4()), i) for i in ids]
        )
        conn.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS ix_{table}_gid ON {table} (gid)")
        conn.execute(
            f"CREATE TRIGGER IF NOT EXISTS {table}_gid_default AFTER INSERT ON {table} "
            f"WHEN NEW.gid IS NULL BEGIN "
            f"UPDATE {table} SET gid = ({_SQL_UUID4}) WHERE id = NEW.id; END"
        )


def _v9_sync_state(conn: sqlite3.Connection) -> None:
    # Sync's own bookkeeping (core/sync/state.py), in the database so that applying remote
    # changes and remembering that they were applied commit together: a pass killed half-way
    # leaves both as they were.
    conn.execute(
        "CREATE TABLE IF NOT EXISTS sync_state (key TEXT PRIMARY KEY, value BLOB NOT NULL)"
    )


def _v10_message_index(conn: sqlite3.Connection) -> None:
    # SQLite-only: the FTS5 index of every message (issue 23), queried and kept in step by
    # core/storage/message_fts.py. Its text is pre-segmented like memory_fts's (the ascii
    # tokenizer splits on the spaces between the tokens). Contentless (content=''): the
    # segmented copy of every message would double the file (61 MB of a 120 MB file at 50,000
    # messages, measured), and the message table has the text; deletes pass the tokens again.
    # Only the empty index here: segmenting 50,000 messages takes ~30 s, so the messages that
    # exist are indexed in the background after the window shows (core/chat/search.py), and
    # the backlog mark says search is incomplete until then.
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS message_fts "
        "USING fts5 (body, content = '', tokenize = 'ascii')"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS message_index_state "
        "(key TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    )
    conn.execute(
        "INSERT OR REPLACE INTO message_index_state (key, value) "
        "SELECT 'backlog', 1 WHERE EXISTS (SELECT 1 FROM message)"
    )


def _v11_attachments(conn: sqlite3.Connection) -> None:
    # IF NOT EXISTS: safe to run again on a file that has it (tests rewind ``user_version``).
    _run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS message_attachment (
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL REFERENCES message (id) ON DELETE CASCADE,
            position INTEGER NOT NULL DEFAULT 0,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            mime TEXT NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            tokens INTEGER NOT NULL DEFAULT 0,
            width INTEGER,
            height INTEGER,
            created_at DATETIME NOT NULL
        );
        CREATE INDEX IF NOT EXISTS ix_message_attachment_message_id ON message_attachment (message_id);
        CREATE INDEX IF NOT EXISTS ix_message_attachment_sha256 ON message_attachment (sha256);
        """,
    )


def _v12_checkins(conn: sqlite3.Connection) -> None:
    # v12 (check-ins, issue 23): who started a conversation, and the check-ins made or tried.
    # Self-contained and safe to run again (tests rewind ``user_version`` to rerun steps).
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(conversation)")}
    if "started_by" not in columns:
        conn.execute("ALTER TABLE conversation ADD COLUMN started_by TEXT")
    _run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS checkin (
            id INTEGER PRIMARY KEY,
            gid TEXT NOT NULL,
            created_at DATETIME NOT NULL,
            outcome TEXT NOT NULL,
            reason TEXT NOT NULL,
            persona TEXT NOT NULL DEFAULT '',
            conversation_id INTEGER REFERENCES conversation (id) ON DELETE SET NULL,
            error TEXT
        );
        CREATE UNIQUE INDEX IF NOT EXISTS ix_checkin_gid ON checkin (gid);
        CREATE INDEX IF NOT EXISTS ix_checkin_created_at ON checkin (created_at);
        """,
    )


def _v13_usage(conn: sqlite3.Connection) -> None:
    # v13 (token usage, issue 23): a reply's usage in columns instead of ``usage_json``, so a
    # conversation's total is one SUM; and the background requests' usage. Safe to run again
    # (tests rewind ``user_version`` to rerun steps).
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(message)")}
    for column in ("prompt_tokens", "completion_tokens", "cached_tokens"):
        if column not in columns:
            conn.execute(f"ALTER TABLE message ADD COLUMN {column} INTEGER")
    if "usage_json" in columns:
        rows = conn.execute(
            "SELECT id, usage_json FROM message WHERE usage_json IS NOT NULL"
        ).fetchall()
        conn.executemany(
            "UPDATE message SET prompt_tokens = ?, completion_tokens = ?, cached_tokens = ? "
            "WHERE id = ?",
            [(*_stored_usage(str(stored)), row_id) for row_id, stored in rows],
        )
        if sqlite3.sqlite_version_info >= (3, 35, 0):
            conn.execute("ALTER TABLE message DROP COLUMN usage_json")
        else:  # pragma: no cover - older SQLite cannot drop a column; the copy is emptied
            conn.execute("UPDATE message SET usage_json = NULL")
    _run_script(
        conn,
        """
        CREATE TABLE IF NOT EXISTS request_usage (
            id INTEGER PRIMARY KEY,
            created_at DATETIME NOT NULL,
            job TEXT NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            cached_tokens INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX IF NOT EXISTS ix_request_usage_created_at ON request_usage (created_at);
        """,
    )


def _stored_usage(stored: str) -> tuple[int | None, int | None, int | None]:
    """The (prompt, completion, cached) tokens of a ``usage_json`` value; ``None`` for bad ones."""
    try:
        data = json.loads(stored)
    except ValueError:
        return (None, None, None)
    if not isinstance(data, dict):
        return (None, None, None)

    def number(value: object) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    details = data.get("prompt_tokens_details")
    cached = number(data.get("cached_tokens"))
    if cached is None and isinstance(details, dict):
        cached = number(details.get("cached_tokens"))
    prompt, completion = number(data.get("prompt_tokens")), number(data.get("completion_tokens"))
    if prompt is None and completion is None:
        return (None, None, None)
    return (prompt or 0, completion or 0, cached or 0)


def _v14_conversation_ids(conn: sqlite3.Connection) -> None:
    # Summaries and their state sync (issue 22) and name their conversation and the last
    # message they cover by global ids; conversation sync names its items by them too.
    _add_global_ids(conn, CONVERSATION_GID_TABLES)
    # A profile version that came by sync (or lost a concurrent edit) says from which device.
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(profile_revision)")}
    if "device" not in columns:
        conn.execute("ALTER TABLE profile_revision ADD COLUMN device TEXT")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "conversations, messages, traces", _v1_chat),
    Migration(2, "long-term memory: memories, revisions, vectors, full-text index", _v2_memory),
    Migration(3, "which memories each context trace cites", _v3_trace_links),
    Migration(
        4,
        "session summaries, their bookkeeping and vectors; background job runs",
        _v4_summaries_and_jobs,
    ),
    Migration(5, "the user profile and its revisions", _v5_profile),
    Migration(6, "the keyword index stemmed by Snowball", _v6_reindex_keywords),
    Migration(7, "secrets redacted from stored tool-call arguments", _v7_redact_tool_arguments),
    Migration(
        8, "global ids for memories, revisions, summaries and profile revisions", _v8_global_ids
    ),
    Migration(9, "sync bookkeeping", _v9_sync_state),
    Migration(10, "full-text index of messages", _v10_message_index),
    Migration(11, "attachments", _v11_attachments),
    Migration(12, "check-ins", _v12_checkins),
    Migration(13, "token usage of replies in columns; usage of background requests", _v13_usage),
    Migration(
        14,
        "global ids for conversations and messages; the device of a synced profile version",
        _v14_conversation_ids,
    ),
)
LATEST_VERSION = MIGRATIONS[-1].version


def schema_version(conn: sqlite3.Connection) -> int:
    """Return the database's ``PRAGMA user_version``."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(
    conn: sqlite3.Connection,
    backup_dir: Path | None,
    *,
    now: datetime,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> list[int]:
    """Bring the schema up to date, backing the file up first when it holds data.

    Args:
        conn: A raw sqlite3 connection in autocommit mode (``isolation_level=None``).
        backup_dir: Where the pre-migration copy goes; ``None`` skips the copy (in-memory DBs).
        now: Used in the backup's file name.
        migrations: The ordered steps (injectable for tests).

    Returns:
        The versions that were applied.

    Raises:
        StorageError: The database is newer than this program, or a step failed (the step's
            transaction is rolled back and the file stays at the previous version).
    """
    current = schema_version(conn)
    latest = migrations[-1].version if migrations else 0
    if current > latest:
        raise StorageError(
            f"database schema {current} is newer than this program ({latest})",
            reason="newer_schema",
        )
    pending = [m for m in migrations if m.version > current]
    if not pending:
        return []
    if current > 0 and backup_dir is not None:
        stamp = now.strftime("%Y%m%d-%H%M%S")
        backup_file(conn, backup_dir / f"etos-before-v{pending[0].version}-{stamp}.db")
        # Not left to the daily backup: it may never run (the app quit within minutes of every
        # start), and each upgrade would keep one more full copy with deleted memories in it.
        rotate(backup_dir, keep_daily=None)
    applied = []
    for step in pending:
        try:
            conn.execute("BEGIN IMMEDIATE")
            step.apply(conn)
            conn.execute(f"PRAGMA user_version = {int(step.version)}")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise StorageError(
                f"migration to v{step.version} failed: {exc}", reason="migration"
            ) from exc
        applied.append(step.version)
    return applied
