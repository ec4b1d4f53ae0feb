"""The background jobs' run bookkeeping and their listeners (DESIGN §6, §7, §9).

One place records every run in its ``JobRunRow`` (shown in Settings): :meth:`RunRecorder.run`
records the start, then the success or the failure the workflow's result reports, and tells the
listeners each time a job's status changes. Listeners are plain callbacks called on the event
loop; ``ui/jobs_bridge.py`` re-emits what they hear as Qt signals. Qt-free.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol, TypeVar

from etos_desktop.core.clock import Clock
from etos_desktop.core.errors import error_text
from etos_desktop.core.jobs import JobName, JobRunRepository
from etos_desktop.core.storage.database import Database, shielded

log = logging.getLogger(__name__)

#: What the listeners hear: ("conversation", id), ("summaries", None), ("profile", None) or
#: ("jobs", None).
Change = tuple[Literal["conversation", "summaries", "profile", "jobs"], int | None]
Listener = Callable[[Change], None]


class Outcome(Protocol):
    """What a job's workflow returns: it says whether the run failed."""

    @property
    def error(self) -> BaseException | None:
        """The failure (``None``: the run ended well)."""
        ...


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


class RunRecorder:
    """Records the jobs' runs and tells listeners what changed.

    Runs on the event loop; the rows are written on the DB thread.

    Args:
        db: The open database.
        clock: The clock runs are timed on.
    """

    def __init__(self, db: Database, clock: Clock) -> None:
        #: The ``JobRunRow`` table.
        self.rows = JobRunRepository(db)
        self._clock = clock
        self._running: set[JobName] = set()
        self._listeners: list[Listener] = []

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener`` on the event loop when a title, a summary or a job status changes."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener``."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def notify(self, change: Change) -> None:
        """Tell every listener; one that raises is logged and does not stop the others."""
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:
                log.exception("a job listener failed")

    @property
    def running(self) -> frozenset[JobName]:
        """The jobs running now."""
        return frozenset(self._running)

    async def run(self, name: JobName, work: Callable[[], Awaitable[OutcomeT]]) -> OutcomeT:
        """Run one job's work with its bookkeeping: the one place runs are recorded.

        The start is recorded, then the success, or the failure the result reports (its
        ``error``); an exception (a bug) is recorded as a failure and raised on. A cancellation
        (a quit) records neither: the run stays started, as it was cut short. The listeners
        hear ``("jobs", None)`` when it starts and when it ends.

        Args:
            name: The job.
            work: Starts the workflow (called once the start is recorded).

        Returns:
            What the workflow returned.
        """
        self._running.add(name)
        try:
            await self.rows.started(name, self._clock.now())
            self.notify(("jobs", None))
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
            self.notify(("jobs", None))
