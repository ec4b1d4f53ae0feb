"""Background job runs: their names and the ``JobRunRow`` bookkeeping Settings shows.

Each job's workflow lives in the core package of what it writes (``chat/titles.py``,
``summaries/writing.py``, ``profile/writing.py``, ``memory/consolidation.py``,
``storage/backups.py``, ``checkins/writing.py``) and returns what it did; ``services/jobs.py`` decides when they run
(the scheduler) and records each run here. This module holds what core knows about the runs —
which jobs exist, and when each last started, succeeded or failed and runs next — read and
written on the DB thread through :class:`JobRunRepository`, and :func:`shielded`, which the
workflows' writes go through so a quit never cuts one short.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlmodel import Session, select

from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import JobRunRow
from etos_desktop.core.usage.store import JobUsage

#: Settings shows what each job's requests used over this many days.
USAGE_DAYS = 30


class JobName(StrEnum):
    """Every background job, in the order Settings lists them."""

    TITLES = "titles"
    SUMMARIES = "summaries"
    PROFILE = "profile"
    CONSOLIDATION = "consolidation"
    BACKUP = "backup"
    SYNC = "sync"
    CHECKINS = "checkins"


@dataclass(frozen=True)
class JobStatus:
    """What Settings shows about one job.

    Attributes:
        name: The job.
        available: ``False`` for a job that is not set up yet (the profile).
        last_started_at: When it last started.
        last_success_at: When it last ended well.
        last_error_at: When it last failed.
        last_error: The error code (and a short, key-free detail) of the last failure.
        next_run_at: When it runs next (``None``: on an event, or not scheduled).
        running: It is running now.
        usage: What its model requests used in the last :data:`USAGE_DAYS` days (``None``: it
            sent none, or sends none at all, like the backup).
    """

    name: JobName
    available: bool = True
    last_started_at: datetime | None = None
    last_success_at: datetime | None = None
    last_error_at: datetime | None = None
    last_error: str | None = None
    next_run_at: datetime | None = None
    running: bool = False
    usage: JobUsage | None = None

    @classmethod
    def from_row(cls, name: JobName, row: JobRunRow | None, *, running: bool = False) -> JobStatus:
        """The status of ``name`` from its row (``None``: it never ran)."""
        if row is None:
            return cls(name, running=running)
        return cls(
            name,
            last_started_at=row.last_started_at,
            last_success_at=row.last_success_at,
            last_error_at=row.last_error_at,
            last_error=row.last_error,
            next_run_at=row.next_run_at,
            running=running,
        )

    @property
    def failed_last(self) -> bool:
        """Whether the most recent run failed."""
        if self.last_error_at is None:
            return False
        return self.last_success_at is None or self.last_error_at >= self.last_success_at


def job_statuses(
    rows: Mapping[str, JobRunRow],
    next_runs: Mapping[JobName, datetime | None],
    running: Collection[JobName] = (),
    unavailable: Collection[JobName] = (),
) -> list[JobStatus]:
    """Every job's status for Settings, in ``JobName`` order.

    Args:
        rows: The jobs' rows by name (:meth:`JobRunRepository.all`).
        next_runs: When each job runs next (missing: not scheduled).
        running: The jobs running now.
        unavailable: Jobs that are not set up (shown as such, without their rows).
    """
    return [
        JobStatus(name, available=False)
        if name in unavailable
        else dataclasses.replace(
            JobStatus.from_row(name, rows.get(name.value), running=name in running),
            next_run_at=next_runs.get(name),
        )
        for name in JobName
    ]


class JobRunRepository:
    """``JobRunRow`` reads and writes on the DB thread.

    Args:
        db: The open database (schema v4 or later).
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, name: JobName) -> JobRunRow | None:
        """The row of one job, or ``None`` if it never ran."""
        return await self._db.run(lambda s: s.get(JobRunRow, name.value))

    async def last_success(self, name: JobName) -> datetime | None:
        """When the job last ended well (``None``: never)."""
        row = await self.get(name)
        return row.last_success_at if row is not None else None

    async def all(self) -> dict[str, JobRunRow]:
        """Every job's row by name."""
        return await self._db.run(
            lambda s: {row.name: row for row in s.exec(select(JobRunRow)).all()}
        )

    async def started(self, name: JobName, now: datetime) -> None:
        """The job started."""

        def write(session: Session) -> None:
            row = _row(session, name)
            row.last_started_at = now
            row.runs += 1
            session.add(row)
            session.commit()

        await self._db.run(write)

    async def succeeded(self, name: JobName, now: datetime) -> None:
        """The job ended well."""

        def write(session: Session) -> None:
            row = _row(session, name)
            row.last_finished_at = now
            row.last_success_at = now
            session.add(row)
            session.commit()

        await self._db.run(write)

    async def failed(self, name: JobName, now: datetime, error: str) -> None:
        """The job failed with ``error`` (a code, never a server's text)."""

        def write(session: Session) -> None:
            row = _row(session, name)
            row.last_finished_at = now
            row.last_error_at = now
            row.last_error = error[:300]
            row.failures += 1
            session.add(row)
            session.commit()

        await self._db.run(write)

    async def set_next(self, name: JobName, when: datetime | None) -> None:
        """When the job runs next (``None``: not scheduled)."""

        def write(session: Session) -> None:
            existing = session.get(JobRunRow, name.value)
            if existing is not None and existing.next_run_at == when:
                return
            row = existing or JobRunRow(name=name.value)
            row.next_run_at = when
            session.add(row)
            session.commit()

        await self._db.run(write)


def _row(session: Session, name: JobName) -> JobRunRow:
    return session.get(JobRunRow, name.value) or JobRunRow(name=name.value)
