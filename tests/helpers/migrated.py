"""New database files in tests start as a copy of one migrated once per process.

``Database.open`` on a new file ran every migration (~100 statements in 9 transactions): 28 ms
of CPU, and the suite makes ~800 new databases. ``migrate_from_template`` stands in for
``migrate`` where ``database.py`` calls it: an empty database (no schema, version 0) gets the
pages of one that the real ``migrate`` brought to the latest version in this process (SQLite's
backup API, into the open connection, so its WAL mode, file modes and everything
``Database.open`` does before and after stay as they are: 16 ms); any other database, or other
migrations, go through the real ``migrate``. ``tests/conftest.py`` puts it in place for every
test outside ``tests/core/storage`` (the migrations' own tests).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from etos_desktop.core.storage.migrations import MIGRATIONS, Migration, migrate, schema_version

_template: bytes | None = None
_lock = threading.Lock()


def _migrated_image() -> bytes:
    """An empty database at the latest version, made once by the real ``migrate``."""
    global _template
    with _lock:
        if _template is None:
            conn = sqlite3.connect(":memory:", isolation_level=None)
            try:
                migrate(conn, None, now=datetime(2026, 1, 1, tzinfo=UTC))
                _template = conn.serialize()
            finally:
                conn.close()
        return _template


def migrate_from_template(
    conn: sqlite3.Connection,
    backup_dir: Path | None,
    *,
    now: datetime,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> list[int]:
    """``migrate``, with an empty database copied from the template instead of migrated."""
    empty = (
        migrations is MIGRATIONS
        and schema_version(conn) == 0
        and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    )
    if not empty:
        return migrate(conn, backup_dir, now=now, migrations=migrations)
    source = sqlite3.connect(":memory:")
    try:
        source.deserialize(_migrated_image())
        source.backup(conn)
    finally:
        source.close()
    return [step.version for step in migrations]
