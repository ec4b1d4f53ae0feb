"""The background jobs' run bookkeeping (DESIGN §6, §7, §9).

One place records every run in its ``JobRunRow`` (shown in Settings): :meth:`RunRecorder.run`
records the start, then the success or the failure the workflow's result reports, and publishes
``JobsChanged`` on the app's change hub (``core/changes.py``) each time a job's status changes.
Qt-free.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from etos_desktop.core.changes import ChangeHub, JobsChanged
from etos_desktop.core.clock import Clock
from etos_desktop.core.errors import error_text
from etos_desktop.core.jobs import JobName, JobRunRepository
from etos_desktop.core.storage.database import Database, shielded


class Outcome(Protocol):
    """What a job's workflow returns: it says whether the run failed."""

    @property
    def error(self) -> BaseException | None:
        """The failure (``None``: the run ended well)."""
        ...


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


class RunRecorder:
    """Records the jobs' runs and publishes each change of a job's status.

    Runs on the event loop; the rows are written on the DB thread.

    Args:
        db: The open database.
        clock: The clock runs are timed on.
        changes: The app's change hub (``JobsChanged`` when a run starts and ends).
    """

    def __init__(self, db: Database, clock: Clock, changes: ChangeHub) -> None:
        #: The ``JobRunRow`` table.
        self.rows = JobRunRepository(db)
        self._clock = clock
        #: The change hub the runs are published on.
        self.changes = changes
        self._running: set[JobName] = set()

    @property
    def running(self) -> frozenset[JobName]:
        """The jobs running now."""
        return frozenset(self._running)

    async def run(self, name: JobName, work: Callable[[], Awaitable[OutcomeT]]) -> OutcomeT:
        """Run one job's work with its bookkeeping: the one place runs are recorded.

        The start is recorded, then the success, or the failure the result reports (its
        ``error``); an exception (a bug) is recorded as a failure and raised on. A cancellation
        (a quit) records neither: the run stays started, as it was cut short. ``JobsChanged``
        is published when it starts (once recorded) and when it ends.

        Args:
            name: The job.
            work: Starts the workflow (called once the start is recorded).

        Returns:
            What the workflow returned.
        """
        self._running.add(name)
        try:
            await self.rows.started(name, self._clock.now())
            self.changes.publish(JobsChanged())
            try:
                result = await work()
            except Exception as exc:
                await shielded(self.rows.failed(name, self._clock.now(), error_text(exc)))
                raise
            if result.error is None:
                await shielded(self.rows.succeeded(name, self._clock.now()))
            else:
                await shielded(self.rows.failed(name, self._clock.now(), error_text(result.error)))
            return result
        finally:
            self._running.discard(name)
            self.changes.publish(JobsChanged())
