"""Migration v6 segments every keyword-index body again with the Snowball stemmer (issue 18)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.storage.migrations import MIGRATIONS, migrate
from etos_desktop.core.text.segmentation import index_text


def test_v6_reindexes_bodies_stemmed_the_old_way(tmp_path: Path) -> None:
    path = tmp_path / "etos.db"
    engine = MemoryEngine.open(path, embedder=None, clock=FakeClock())
    memory_id = engine.save("We are restoring the old Gazelle bike", "episode").id
    engine.close()
    conn = sqlite3.connect(path, isolation_level=None)
    # What Porter's step 1 stored before issue 18: "restoring" → "restor" never met
    # "restoration" → "restoration".
    conn.execute(
        "UPDATE memory_fts SET body = 'we are restor the old gazelle bike' WHERE rowid = ?",
        (memory_id,),
    )
    conn.execute("PRAGMA user_version = 5")
    applied = migrate(conn, tmp_path / "backups", now=datetime(2026, 12, 1, tzinfo=UTC))
    assert applied == [m.version for m in MIGRATIONS if m.version >= 6]
    (body,) = conn.execute("SELECT body FROM memory_fts WHERE rowid = ?", (memory_id,)).fetchone()
    assert body == index_text("We are restoring the old Gazelle bike")
    assert "restor" in body.split()
    assert list((tmp_path / "backups").glob("etos-before-v6-*.db"))
    conn.close()
    engine = MemoryEngine.open(path, embedder=None, clock=FakeClock())
    try:
        hits = engine.search("restoration", k=3, mode="keyword", apply_floor=False)
        assert [h.id for h in hits] == [memory_id]
    finally:
        engine.close()
