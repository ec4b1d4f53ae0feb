"""Database backups with SQLite's online backup API, and their rotation (DESIGN §9).

SQLite-only, like the pragmas: one module holds the backup API. Two kinds of copies live in the
backups folder:

* ``etos-daily-YYYYmmdd-HHMMSS.db`` — the daily backup job's copies; the newest
  ``backup.keep_count`` (default 7) are kept;
* ``etos-before-vN-YYYYmmdd-HHMMSS.db`` — the copy taken before a schema migration; the newest
  ``KEEP_PRE_MIGRATION`` are kept (they were never rotated before schema v4).

A copy is written to a ``.part`` file and renamed when complete, so a crash or a quit during a
backup never leaves a half-written file that looks like a backup. Restoring is copying a backup
over ``etos.db`` while the app is closed (README, "Backups").
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

#: Pre-migration copies kept (the newest ones).
KEEP_PRE_MIGRATION: Final = 3
DAILY_PREFIX: Final = "etos-daily-"
PRE_MIGRATION_PREFIX: Final = "etos-before-v"
_STAMP_RE: Final = re.compile(r"(\d{8}-\d{6})")


def backup_file(conn: sqlite3.Connection, target: Path) -> Path:
    """Copy the open database to ``target`` with SQLite's online backup API.

    The copy is written beside ``target`` as ``<name>.part`` and renamed when complete.

    Args:
        conn: An open connection to the database to copy.
        target: The file to write; its folder is created.

    Returns:
        ``target``.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    dest = sqlite3.connect(partial)
    try:
        conn.backup(dest)
    finally:
        dest.close()
    if os.name == "posix":
        partial.chmod(0o600)
    partial.replace(target)
    return target


@dataclass(frozen=True)
class BackupResult:
    """What one daily backup did.

    Attributes:
        path: The new backup.
        size: Its size in bytes.
        removed: Older backups removed by the rotation.
    """

    path: Path
    size: int
    removed: tuple[Path, ...]


def daily_backup_path(backup_dir: Path, now: datetime) -> Path:
    """Where the daily backup taken at ``now`` goes."""
    return backup_dir / f"{DAILY_PREFIX}{now.strftime('%Y%m%d-%H%M%S')}.db"


def _stamp(path: Path) -> str:
    match = _STAMP_RE.search(path.name)
    return match.group(1) if match else ""


def backups(backup_dir: Path) -> tuple[list[Path], list[Path]]:
    """The daily and the pre-migration backups in ``backup_dir``, newest first."""
    if not backup_dir.is_dir():
        return [], []
    daily, before = [], []
    for path in backup_dir.iterdir():
        if path.suffix != ".db" or not path.is_file():
            continue
        if path.name.startswith(DAILY_PREFIX):
            daily.append(path)
        elif path.name.startswith(PRE_MIGRATION_PREFIX):
            before.append(path)
    daily.sort(key=lambda p: (_stamp(p), p.name), reverse=True)
    before.sort(key=lambda p: (_stamp(p), p.name), reverse=True)
    return daily, before


def rotate(
    backup_dir: Path, *, keep_daily: int, keep_pre_migration: int = KEEP_PRE_MIGRATION
) -> list[Path]:
    """Remove all but the newest ``keep_daily`` daily and ``keep_pre_migration`` pre-migration copies.

    Left-over ``.part`` files (a backup cut short) are removed too.

    Returns:
        The files removed.
    """
    daily, before = backups(backup_dir)
    doomed = daily[max(keep_daily, 1) :] + before[max(keep_pre_migration, 0) :]
    if backup_dir.is_dir():
        doomed += [p for p in backup_dir.glob("*.db.part") if p.is_file()]
    removed = []
    for path in doomed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def daily_backup(
    conn: sqlite3.Connection, backup_dir: Path, now: datetime, *, keep: int
) -> BackupResult:
    """Take the daily backup of an open database, then rotate the folder.

    Runs on the DB thread (``conn`` is that thread's connection).

    Args:
        conn: The raw sqlite3 connection of the database.
        backup_dir: The backups folder.
        now: The time in the file name.
        keep: Daily backups kept (setting ``backup.keep_count``).

    Returns:
        The new file, its size and what the rotation removed.
    """
    path = backup_file(conn, daily_backup_path(backup_dir, now))
    removed = rotate(backup_dir, keep_daily=keep)
    return BackupResult(path, path.stat().st_size, tuple(removed))
