"""The SQLite engine, its pragmas, and the one DB worker thread every query runs on.

SQLite-specific parts (pragmas, WAL, file modes) live here and in ``migrations.py`` only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError, DBAPIError, OperationalError
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, create_engine

from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import StorageError
from etos_desktop.core.settings.paths import FULL_BELOW_BYTES, free_bytes, make_private_dir
from etos_desktop.core.storage.backups import tidy_folder
from etos_desktop.core.storage.migrations import LATEST_VERSION, migrate
from etos_desktop.core.storage.tables import MessageRow, MessageStatus

log = logging.getLogger(__name__)
T = TypeVar("T")

# SQLite says "disk I/O error", not "disk is full", where a full disk stops it growing the WAL
# index (-shm, 32 KiB at a time: SQLITE_IOERR_SHMSIZE, seen on a full tmpfs with 0 and 4 KiB
# free). With less than two such steps left, an I/O error is taken for the disk being full.

#: ``PRAGMA application_id`` of an ETOS Desktop database ("ETOS"); older files have 0.
APPLICATION_ID = 0x45544F53
#: Tables every ETOS Desktop database has from schema 1 on: a file with 0 as its application id
#: and other tables is another program's.
_OWN_TABLES = frozenset({"conversation", "message"})

_ENVIRONMENT_HINTS = (
    "disk is full",
    "disk i/o",
    "readonly",
    "read-only",
    "locked",
    "unable to open",
)


def _set_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    # NORMAL in WAL mode: a power cut may lose the last commits but never corrupts the file.
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=5000")
    _secure_delete(cur)
    cur.close()


def _secure_delete(cur: Any) -> None:
    # Freed pages and deleted cells are overwritten with zeros, so a deleted memory's text does
    # not linger in the file (DESIGN §3). This build's SQLite has it on by default; the Windows
    # and macOS builds do not, so it is always set explicitly.
    cur.execute("PRAGMA secure_delete=ON")


def checkpoint(session: Session) -> bool:
    """Copy the WAL into the database file and truncate it to zero bytes (after a delete).

    Runs on the DB thread, outside a transaction (call it after ``commit``).

    Returns:
        Whether the whole WAL was checkpointed (``False``: a reader held it, the WAL keeps
        frames until the next checkpoint).
    """
    row = session.connection().exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").first()
    busy = row is not None and int(row[0]) != 0
    if busy:
        log.warning("WAL checkpoint was blocked by a reader; it completes on a later one")
    return not busy


def _as_storage_error(exc: Exception, folder: Path) -> StorageError:
    """Turn SQLite's error into a :class:`StorageError` with a ``reason`` and SQLite's own words.

    Args:
        exc: SQLAlchemy's error (its text adds the statement, its parameters, which hold the
            user's text, and a "Background on this error" link) or ``sqlite3``'s own.
        folder: The database's folder, whose file system's free space tells a full disk apart.

    Returns:
        The error; ``params["reason"]`` is ``"disk_full"``, ``"io"`` or ``"database"``.
    """
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    detail = str(cause)
    text = detail.lower()
    name = str(getattr(cause, "sqlite_errorname", ""))
    if name == "SQLITE_FULL" or "full" in text:
        return StorageError(detail, reason="disk_full")
    if name.startswith("SQLITE_IOERR") or "disk i/o" in text:
        free = free_bytes(folder)
        if free is not None and free < FULL_BELOW_BYTES:
            return StorageError(
                f"{detail}: {free} bytes free on the disk of {folder}", reason="disk_full"
            )
        return StorageError(detail, reason="io")
    if not any(hint in text for hint in _ENVIRONMENT_HINTS):
        return StorageError(detail, reason="database")
    if "readonly" in text or "read-only" in text:
        return StorageError(detail, reason="read_only")
    return StorageError(detail, reason="io")


def check_is_ours(path: Path) -> None:
    """Refuse a file that is damaged, another program's, or newer than this program, read-only.

    Runs before anything writes to the file (switching it to WAL rewrites its header and adds
    ``-wal``/``-shm`` files), so a refused file is left byte for byte as it was.

    Raises:
        StorageError: ``reason`` ``"corrupt"``, ``"foreign"`` or ``"newer_schema"``.
    """
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"{path.name}: {exc}", reason="corrupt") from exc
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(row[0]).startswith("sqlite_")
        }
        if app_id not in (0, APPLICATION_ID) or (
            app_id == 0 and tables and not tables >= _OWN_TABLES
        ):
            raise StorageError(
                f"{path.name} is another program's database (application id {app_id}, "
                f"tables {', '.join(sorted(tables))})",
                reason="foreign",
            )
        if version > LATEST_VERSION:
            raise StorageError(
                f"database schema {version} is newer than this program ({LATEST_VERSION})",
                reason="newer_schema",
            )
        result = conn.execute("PRAGMA quick_check").fetchone()
        if result is None or result[0] != "ok":
            raise StorageError(f"integrity check failed: {result}", reason="corrupt")
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"{path.name}: {exc}", reason="corrupt") from exc
    finally:
        conn.close()


class Database:
    """An SQLite database reached only from its own worker thread.

    All methods that touch the database run on that thread; ``run`` is the async entry point for
    code on the event loop, ``call`` the blocking one for scripts, tests and benchmarks (never
    call it from the UI thread).

    Args:
        path: The database file (created if missing).
        backup_dir: Where pre-migration backups go; made ``0700`` and cleared of the parts of
            killed backups at each open.
        clock: Source of the current time.
    """

    def __init__(self, path: Path, backup_dir: Path | None = None, clock: Clock | None = None):
        self.path = path
        self.backup_dir = backup_dir
        self.clock: Clock = clock or SystemClock()
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="etos-db"
        )
        self._engine: Engine | None = None
        self._thread_id: int | None = None
        #: Replies found still streaming (an earlier crash) and marked interrupted by ``open``.
        self.recovered_on_open = 0

    # -- life cycle ---------------------------------------------------------------------------

    def open(self) -> int:
        """Create or migrate the file and recover replies a crash left streaming (blocking).

        Returns:
            How many replies were found still streaming and marked interrupted.

        Raises:
            StorageError: The file cannot be opened, is corrupt, or is newer than this program.
        """
        return self.call_raw(self._open_on_thread)

    async def open_async(self) -> int:
        """Like :meth:`open`, without blocking the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._guarded, self._open_on_thread)

    def _open_on_thread(self) -> int:
        self._thread_id = threading.get_ident()
        if not self.path.parent.is_dir():
            # Only a folder made here: the file's folder may be one the caller chose and owns.
            make_private_dir(self.path.parent)
        if self.backup_dir is not None:
            # Before the pre-migration copy and the daily job (which runs on this thread).
            for stale in tidy_folder(self.backup_dir):
                log.info("removed %s, left by a backup that was cut short", stale.name)
        if self.path.is_file() and self.path.stat().st_size > 0:
            check_is_ours(self.path)
        raw = sqlite3.connect(self.path, isolation_level=None)
        try:
            raw.execute("PRAGMA journal_mode=WAL")
            raw.execute("PRAGMA foreign_keys=ON")
            _secure_delete(raw)
            migrate(raw, self.backup_dir, now=self.clock.now())
            if raw.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        finally:
            raw.close()
        self._restrict_modes()
        engine = create_engine(
            f"sqlite:///{self.path}",
            connect_args={"check_same_thread": False},
            # One thread, one connection, kept open: closing SQLite's last connection
            # checkpoints and syncs the WAL, which cost ~3 ms on every operation (issue 20).
            # It is closed by ``close`` (dispose), on the DB thread.
            poolclass=StaticPool,
        )
        event.listen(engine, "connect", _set_pragmas)
        self._engine = engine
        with Session(engine) as session:
            result_proxy = session.exec(
                update(MessageRow)
                .where(MessageRow.status == MessageStatus.STREAMING)  # type: ignore[arg-type]
                .values(status=MessageStatus.INTERRUPTED)
            )
            session.commit()
            recovered = int(result_proxy.rowcount or 0)
        self.recovered_on_open = recovered
        if recovered:
            log.info("marked %d reply(ies) interrupted after an unclean exit", recovered)
        return recovered

    def _restrict_modes(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(f"{self.path}{suffix}")
            with contextlib.suppress(OSError):
                if candidate.exists() and os.name == "posix":
                    candidate.chmod(0o600)

    def close(self) -> None:
        """Dispose of the engine and stop the worker thread (blocking, idempotent)."""
        if self._engine is not None:
            engine, self._engine = self._engine, None
            with contextlib.suppress(RuntimeError):
                self._executor.submit(engine.dispose).result()
        self._executor.shutdown(wait=True)

    # -- running work -------------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine; only for use on the DB thread."""
        if self._engine is None:
            raise StorageError("the database is not open", reason="closed")
        return self._engine

    def _guarded(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except StorageError:
            raise
        except (OperationalError, DatabaseError, sqlite3.OperationalError) as exc:
            raise _as_storage_error(exc, self.path.parent) from exc
        except sqlite3.DatabaseError as exc:
            raise StorageError(str(exc), reason="corrupt") from exc

    def _in_session(self, fn: Callable[[Session], T]) -> T:
        with Session(self.engine, expire_on_commit=False) as session:
            return fn(session)

    async def run(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn(session)`` on the DB thread and return its result.

        ``fn`` commits itself when it writes. Objects it returns are detached (attributes
        loaded), so they can be read on any thread.

        Raises:
            StorageError: For environmental failures (disk full, I/O error, locked, read-only).
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, self._guarded, lambda: self._in_session(fn)
        )

    def call(self, fn: Callable[[Session], T]) -> T:
        """Blocking variant of :meth:`run` for scripts, tests and benchmarks."""
        return self.call_raw(lambda: self._in_session(fn))

    def call_raw(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the DB thread and wait for it (blocking)."""
        return self._executor.submit(self._guarded, fn).result()

    def submit(self, fn: Callable[[Session], T]) -> concurrent.futures.Future[T]:
        """Queue ``fn(session)`` on the DB thread and return at once (:meth:`call` without waiting).

        For a caller that has work of its own to do meanwhile (memory search scans the vector
        matrix while the DB thread matches the full-text index). ``fn`` must not wait for
        anything that needs the DB thread.
        """
        return self._executor.submit(self._guarded, lambda: self._in_session(fn))

    def on_db_thread(self) -> bool:
        """Whether the caller runs on the DB worker thread."""
        return threading.get_ident() == self._thread_id


async def shielded(awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` so that a cancellation does not cut the write short.

    A job is cancelled (the app quits) at its next ``await``; the write it was awaiting (one
    transaction on the DB thread) finishes, and the cancellation is raised afterwards.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await task
        raise
