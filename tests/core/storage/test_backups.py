"""Backups with the SQLite backup API and their rotation."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from etos_desktop.core.storage.backups import (
    KEEP_PRE_MIGRATION,
    backups,
    daily_backup,
    daily_backup_path,
    rotate,
)

NOW = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_daily_backup_is_a_complete_copy_written_whole(tmp_path: Path):
    source = sqlite3.connect(tmp_path / "etos.db")
    source.execute("CREATE TABLE t (x)")
    source.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(1000)])
    source.commit()
    result = daily_backup(source, tmp_path / "backups", NOW, keep=7)
    assert result.path == daily_backup_path(tmp_path / "backups", NOW)
    assert result.path.name == "etos-daily-20260203-040506.db"
    assert result.size == result.path.stat().st_size
    copy = sqlite3.connect(result.path)
    assert copy.execute("SELECT count(*) FROM t").fetchone()[0] == 1000
    copy.close()
    source.close()
    assert not list((tmp_path / "backups").glob("*.part"))


def test_rotation_keeps_the_newest_of_each_kind(tmp_path: Path):
    folder = tmp_path / "backups"
    folder.mkdir()
    for n in range(10):
        daily_backup_path(folder, NOW + timedelta(days=n)).write_bytes(b"d")
        (
            folder / f"etos-before-v{n}-{(NOW + timedelta(days=n)).strftime('%Y%m%d-%H%M%S')}.db"
        ).write_bytes(b"b")
    (folder / "notes.txt").write_text("not a backup")
    removed = rotate(folder, keep_daily=7)
    daily, before = backups(folder)
    assert len(daily) == 7
    assert daily[0].name == daily_backup_path(folder, NOW + timedelta(days=9)).name
    assert len(before) == KEEP_PRE_MIGRATION
    assert before[0].name.startswith("etos-before-v9-")
    assert len(removed) == 3 + 10 - KEEP_PRE_MIGRATION
    assert (folder / "notes.txt").exists()
    assert rotate(tmp_path / "missing", keep_daily=7) == []
