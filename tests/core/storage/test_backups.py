"""Backups with the SQLite backup API and their rotation."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from etos_desktop.core.storage.backups import (
    KEEP_PRE_MIGRATION,
    backups,
    daily_backup,
    daily_backup_path,
    rotate,
    take_daily_backup,
    tidy_folder,
)
from etos_desktop.core.storage.database import Database

NOW = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes and SIGKILL")

#: A process that backs ``argv[1]`` up to ``argv[2]`` under the usual umask (files 0644).
BACKUP_PROCESS = textwrap.dedent(
    """
    import os, sqlite3, sys
    from pathlib import Path
    from etos_desktop.core.storage.backups import backup_file

    os.umask(0o022)
    backup_file(sqlite3.connect(sys.argv[1]), Path(sys.argv[2]))
    """
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


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


@posix_only
def test_a_backup_killed_midway_leaves_a_private_part_that_the_next_start_removes(
    tmp_path: Path,
):
    source_path = tmp_path / "source.db"
    source = sqlite3.connect(source_path, isolation_level=None)
    source.execute("CREATE TABLE memory (content)")
    source.execute("INSERT INTO memory VALUES ('a deleted memory')")
    target = tmp_path / "data" / "backups" / "etos-before-v5-20260203-040506.db"
    part = target.with_name(target.name + ".part")
    # The source locked (rollback-journal mode): the copy waits, its .part created, until killed.
    source.execute("BEGIN EXCLUSIVE")
    child = subprocess.Popen([sys.executable, "-c", BACKUP_PROCESS, str(source_path), str(target)])
    try:
        # Polled: nothing in the other process can tell this one that the file exists.
        deadline = time.monotonic() + 30
        while not part.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert part.exists()
    finally:
        child.kill()
        child.wait()
        source.execute("ROLLBACK")
        source.close()
    assert not target.exists()
    assert _mode(part) == 0o600
    assert _mode(target.parent) == 0o700

    db = Database(tmp_path / "data" / "etos.db", target.parent)
    db.open()
    db.close()
    assert list(target.parent.iterdir()) == []


def test_tidy_folder_removes_only_what_killed_backups_left(tmp_path: Path):
    folder = tmp_path / "backups"
    folder.mkdir()
    kept = [daily_backup_path(folder, NOW), folder / "etos-before-v6-20260203-040506.db"]
    kept.append(folder / "notes.txt")
    stale = [folder / "etos-daily-20260204-000000.db.part"]
    stale.append(folder / "etos-daily-20260204-000000.db.part-journal")
    for path in kept + stale:
        path.write_bytes(b"x")
    assert tidy_folder(folder) == sorted(stale)
    assert sorted(folder.iterdir()) == sorted(kept)
    assert tidy_folder(tmp_path / "missing") == []
    assert not (tmp_path / "missing").exists()


@posix_only
def test_tidy_folder_tightens_a_backups_folder_others_can_read(tmp_path: Path):
    folder = tmp_path / "backups"
    folder.mkdir()
    folder.chmod(0o755)
    tidy_folder(folder)
    assert _mode(folder) == 0o700


def test_rotation_without_a_daily_count_leaves_daily_copies_alone(tmp_path: Path):
    folder = tmp_path / "backups"
    folder.mkdir()
    before_names = []
    for n in range(KEEP_PRE_MIGRATION + 2):
        when = NOW + timedelta(days=n)
        before_names.append(f"etos-before-v{n}-{when.strftime('%Y%m%d-%H%M%S')}.db")
        (folder / before_names[-1]).write_bytes(b"b")
        daily_backup_path(folder, when).write_bytes(b"d")
    removed = rotate(folder, keep_daily=None)
    daily, before = backups(folder)
    assert len(daily) == KEEP_PRE_MIGRATION + 2
    assert [p.name for p in before] == before_names[:1:-1]
    assert sorted(p.name for p in removed) == before_names[:2]


@pytest.mark.logs(r"^WARNING etos_desktop\.core\.storage\.backups: daily backup failed: ")
async def test_the_daily_job_copies_the_open_database_and_returns_what_it_did(tmp_path: Path):
    db = Database(tmp_path / "etos.db", tmp_path / "backups")
    await db.open_async()
    try:
        run = await take_daily_backup(db, tmp_path / "backups", NOW, keep=7)
        assert run.error is None
        assert run.result is not None
        assert run.result.path == daily_backup_path(tmp_path / "backups", NOW)
        copy = sqlite3.connect(run.result.path)
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        copy.close()
        # A directory where the next copy should go: the failure is returned, not raised.
        later = NOW + timedelta(days=1)
        daily_backup_path(tmp_path / "backups", later).mkdir()
        failed = await take_daily_backup(db, tmp_path / "backups", later, keep=7)
        assert failed.result is None
        assert failed.error is not None
    finally:
        await asyncio.get_running_loop().run_in_executor(None, db.close)
