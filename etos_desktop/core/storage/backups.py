"""Database backups with SQLite's online backup API, and their rotation (DESIGN §9).

SQLite-only, like the pragmas: one module holds the backup API. Two kinds of copies live in the
backups folder:

* ``etos-daily-YYYYmmdd-HHMMSS.db`` — the daily backup job's copies; the newest
  ``backup.keep_count`` (default 7) are kept;
* ``etos-before-vN-YYYYmmdd-HHMMSS.db`` — the copy taken before a schema migration; the newest
  ``KEEP_PRE_MIGRATION`` are kept (they were never rotated before schema v4).

A copy is written to a ``.part`` file and renamed when complete, so a crash or a quit during a
backup never leaves a half-written file that looks like a backup. The ``.part`` is created ``0600``
before SQLite writes its first byte (a backup holds deleted memories until it rotates out, DESIGN
§9), and the parts a killed backup left are removed when the database is next opened
(:func:`tidy_folder`). Restoring is copying a backup over ``etos.db`` while the app is closed
(README, "Backups").

The daily job's workflow is :func:`take_daily_backup`: the copy on the DB thread, then the
rotation, returned as a :class:`BackupRun` (a failure is returned, not raised); the background
jobs schedule it and record its runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from etos_desktop.core.settings.paths import create_private_file, make_private_dir

if TYPE_CHECKING:
    # Only for annotations: the database imports this module (tidy_folder).
    from etos_desktop.core.storage.database import Database

log = logging.getLogger(__name__)

#: Pre-migration copies kept (the newest ones).
KEEP_PRE_MIGRATION: Final = 3
DAILY_PREFIX: Final = "etos-daily-"
PRE_MIGRATION_PREFIX: Final = "etos-before-v"
_STAMP_RE: Final = re.compile(r"(\d{8}-\d{6})")
#: A copy being written: the ``.part`` and the rollback journal SQLite keeps beside it.
_PART_SUFFIXES: Final = (".db.part", ".db.part-journal")


def backup_file(conn: sqlite3.Connection, target: Path) -> Path:
    """Copy the open database to ``target`` with SQLite's online backup API.

    The copy is written beside ``target`` as ``<name>.part``, created ``0600`` and empty before
    SQLite writes into it (SQLite keeps an existing file's mode, and gives its journal the same),
    and renamed when complete.

    Args:
        conn: An open connection to the database to copy.
        target: The file to write; its folder is created (``0700``).

    Returns:
        ``target``.
    """
    make_private_dir(target.parent)
    partial = target.with_name(target.name + ".part")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    create_private_file(partial)
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


def stale_parts(backup_dir: Path) -> list[Path]:
    """The files of backups cut short in ``backup_dir`` (``*.db.part`` and its journal)."""
    if not backup_dir.is_dir():
        return []
    return sorted(
        path
        for path in backup_dir.iterdir()
        if path.name.endswith(_PART_SUFFIXES) and path.is_file()
    )


def _remove(paths: list[Path]) -> list[Path]:
    removed = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def rotate(
    backup_dir: Path, *, keep_daily: int | None, keep_pre_migration: int = KEEP_PRE_MIGRATION
) -> list[Path]:
    """Remove all but the newest ``keep_daily`` daily and ``keep_pre_migration`` pre-migration copies.

    Left-over ``.part`` files (a backup cut short) are removed too.

    Args:
        backup_dir: The backups folder (a missing one is nothing to do).
        keep_daily: Daily copies kept (at least 1); ``None`` leaves them alone (a migration
            does not know the setting ``backup.keep_count``).
        keep_pre_migration: Pre-migration copies kept.

    Returns:
        The files removed.
    """
    daily, before = backups(backup_dir)
    doomed = before[max(keep_pre_migration, 0) :]
    if keep_daily is not None:
        doomed += daily[max(keep_daily, 1) :]
    return _remove(doomed + stale_parts(backup_dir))


def tidy_folder(backup_dir: Path) -> list[Path]:
    """At start-up: make an existing backups folder ``0700`` and remove what killed backups left.

    A backup cut short by a kill or a power cut leaves its ``.part`` (a partial copy that still
    holds deleted memories) and journal; nothing else would ever remove them if no backup runs
    again. Call it before any backup of this run starts (the database's open does): a part of a
    backup in progress would be removed too.

    Args:
        backup_dir: The backups folder (not created here).

    Returns:
        The files removed.
    """
    if not backup_dir.is_dir():
        return []
    make_private_dir(backup_dir)
    return _remove(stale_parts(backup_dir))


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


@dataclass(frozen=True)
class BackupRun:
    """What one daily backup did: the copy written, or the failure."""

    result: BackupResult | None = None
    error: BaseException | None = None


async def take_daily_backup(
    db: Database, backup_dir: Path, now: datetime, *, keep: int
) -> BackupRun:
    """Take the daily backup of the open database and rotate the folder (:func:`daily_backup`).

    Args:
        db: The open database.
        backup_dir: The backups folder.
        now: The time in the file name.
        keep: Daily backups kept (setting ``backup.keep_count``).

    Returns:
        The new file, or the failure (returned, not raised).
    """
    # Here, not at the top: the migrations import this module before the first frame, and the
    # start-up peek must load nothing but sqlite3 (tests/test_core_imports.py); the database
    # module loads SQLAlchemy.
    from etos_desktop.core.errors import error_text
    from etos_desktop.core.storage.database import shielded

    try:
        # On the DB thread with its own connection: the copy is consistent, and written to a
        # .part file renamed at the end, so a quit never leaves half a copy.
        result = await shielded(
            db.run(lambda s: daily_backup(_raw_connection(s), backup_dir, now, keep=keep))
        )
    except Exception as exc:  # a cancellation (quit) is not an Exception: it goes on
        log.warning("daily backup failed: %s", error_text(exc))
        return BackupRun(error=exc)
    log.info("daily backup %s (%d bytes)", result.path.name, result.size)
    return BackupRun(result)


def _raw_connection(session: Any) -> Any:
    """The sqlite3 connection under a session (for the backup API; on the DB thread)."""
    return session.connection().connection.driver_connection
