"""The scheduler service: APScheduler 3.x on the running asyncio (qasync) loop, timed by the app's clock.

Every run time is a time of the injected clock (``core/clock.py``). APScheduler waits on the
real clock, so a job due at clock time ``T`` is due for real at "now + (T − clock.now())": with
the system clock that is ``T`` itself; with a ``FakeClock`` in tests the job does not fire by
itself while the test runs, and the test fires it as the timer would (:meth:`JobScheduler.fire`)
after asserting on its run time (:meth:`JobScheduler.run_time`). Nothing sleeps.

Pending jobs are kept here, by id; APScheduler holds one timer, armed for the earliest of them.
Scheduling is a dictionary write, so deriving a thousand conversations' jobs at start-up costs
the UI loop next to nothing (one APScheduler job each took ~0.2 ms of it, measured in
``tests/bench/summary_startup.py``).

A fired job does not run inside APScheduler's own task: the timer callback starts the work as a
task of this service, so :meth:`shutdown` can cancel it at a safe point and await it, and a
cancellation is never reported by APScheduler as a failed job. Jobs are derived from database
state by their owners, so nothing here is persisted: a restart schedules them again.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Final

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from etos_desktop.core.clock import Clock

log = logging.getLogger(__name__)

#: The work of one job; it handles its own errors (an exception that escapes is logged) and
#: what it returns is ignored.
JobFunction = Callable[[], Awaitable[object]]

#: The id of the one APScheduler job: the timer of the earliest pending job.
_TIMER_ID: Final = "etos:next"
#: Ids of the work started at once (:meth:`JobScheduler.spawn`) begin with this.
_SPAWNED: Final = "etos:spawned:"


def local_zone() -> tzinfo:
    """The computer's time zone, as APScheduler finds it (DST rules included)."""
    from tzlocal import get_localzone

    return get_localzone()


def next_daily_time(hour: int, after: datetime, zone: tzinfo | None = None) -> datetime:
    """The first time strictly after ``after`` that the local clock shows ``hour``:00.

    APScheduler's cron trigger computes it, so a daylight-saving change moves the run with the
    wall clock (a cron trigger object, not an alias, for the same reason as ``DateTrigger``).

    Args:
        hour: The local hour, 0–23.
        after: A time on the injected clock.
        zone: The local time zone (default: the computer's).

    Returns:
        The run time, aware UTC.
    """
    trigger = CronTrigger(hour=hour, minute=0, second=0, timezone=zone or local_zone())
    start = (after + timedelta(seconds=1)).astimezone(trigger.timezone)
    when: datetime | None = trigger.get_next_fire_time(None, start)
    assert when is not None  # a daily trigger always has a next time
    return when.astimezone(UTC)


@dataclass
class _Pending:
    when: datetime  # on the injected clock
    due: datetime  # on the real clock: when the timer runs it
    function: JobFunction


class JobScheduler:
    """One-shot jobs by id on the running loop; scheduling an id again replaces its job.

    Args:
        clock: The clock run times are read on.
        loop: The running event loop (the qasync loop in the app).
        now_real: The real time (injectable for tests of the translation).
    """

    def __init__(
        self,
        clock: Clock,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        now_real: Callable[[], datetime] | None = None,
    ) -> None:
        self._clock = clock
        self._loop = loop or asyncio.get_running_loop()
        self._now_real = now_real or (lambda: datetime.now(UTC))
        # A late run (after a suspend) still runs once: no misfire limit, missed runs coalesced.
        self._aps = AsyncIOScheduler(
            event_loop=self._loop,
            timezone=UTC,
            job_defaults={"coalesce": True, "misfire_grace_time": None, "max_instances": 1},
        )
        self._pending: dict[str, _Pending] = {}
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._spawned = itertools.count(1)
        self._armed_for: datetime | None = None
        self._arm_queued = False
        self._started = False
        self._closed = False

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start firing jobs (those scheduled before wait until now)."""
        if not self._started and not self._closed:
            self._aps.start()
            self._started = True
            self._arm()

    @property
    def running(self) -> bool:
        """Whether the timer runs (started and not shut down)."""
        return self._started and not self._closed

    async def shutdown(self) -> None:
        """Stop the timer, cancel the jobs that are running and wait for them to end.

        A job is cancelled at its next ``await``; its own writes are shielded single
        transactions, so nothing is left half-written.
        """
        self._closed = True
        if self._started:
            self._aps.shutdown(wait=False)
        self._pending.clear()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- jobs ---------------------------------------------------------------------------------

    def schedule(self, job_id: str, when: datetime, function: JobFunction) -> datetime:
        """Run ``function`` at clock time ``when``, replacing any pending job with this id.

        Returns:
            ``when`` (a time in the past runs as soon as the timer runs).
        """
        if self._closed:
            return when
        delay = when - self._clock.now()
        due = self._now_real() + max(delay, timedelta(0))
        self._pending[job_id] = _Pending(when, due, function)
        self._queue_arm()
        return when

    def cancel(self, job_id: str) -> None:
        """Drop the pending job ``job_id`` (a running one goes on)."""
        if self._pending.pop(job_id, None) is not None:
            self._queue_arm()

    def run_time(self, job_id: str) -> datetime | None:
        """The clock time the pending job ``job_id`` runs at, or ``None``."""
        pending = self._pending.get(job_id)
        return None if pending is None else pending.when

    def pending(self, prefix: str = "") -> dict[str, datetime]:
        """The pending jobs whose id starts with ``prefix``, with their run times."""
        return {i: p.when for i, p in self._pending.items() if i.startswith(prefix)}

    def spawn(self, work: Coroutine[Any, Any, object]) -> asyncio.Task[Any]:
        """Start ``work`` now, as a fired job is started (a check after a reply, a title).

        It is cancelled by :meth:`shutdown`, waited for by :meth:`wait_idle` and counted by
        :meth:`is_busy`; an exception that escapes it is logged.
        """
        job_id = f"{_SPAWNED}{next(self._spawned)}"
        # The coroutine itself is the task (no wrapper): cancelled before it starts, it is
        # closed, never left un-awaited.
        task = asyncio.ensure_future(work)
        self._tasks[job_id] = task
        task.add_done_callback(functools.partial(self._forget, job_id))
        return task

    def is_busy(self) -> bool:
        """Whether a fired job is running, or one whose time has come waits for the timer."""
        if any(not task.done() for task in self._tasks.values()):
            return True
        if not self.running:
            return False
        now = self._now_real()
        return any(p.due <= now for p in self._pending.values())

    def is_running(self, job_id: str) -> bool:
        """Whether the job ``job_id`` is running now."""
        task = self._tasks.get(job_id)
        return task is not None and not task.done()

    async def fire(self, job_id: str) -> None:
        """Run the pending job ``job_id`` now, as its timer would, and wait for it to end.

        Raises:
            KeyError: No job with that id is pending.
        """
        if job_id not in self._pending:
            raise KeyError(job_id)
        task = self._start(job_id)
        self._queue_arm()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def wait_idle(self) -> None:
        """Wait until no job whose time has come is waiting and no fired job is running (tests).

        Jobs due later are not waited for: a test fires them (:meth:`fire`).
        """
        while self.is_busy():
            if self._tasks:
                await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)
            else:
                # The timer hands the job over on a later pass of the loop.
                await asyncio.sleep(0.001)

    # -- the timer ------------------------------------------------------------------------------

    def _queue_arm(self) -> None:
        # Many schedules in a row (start-up) re-arm the timer once.
        if not self._arm_queued and self.running:
            self._arm_queued = True
            self._loop.call_soon(self._arm)

    def _arm(self) -> None:
        self._arm_queued = False
        if not self.running:
            return
        earliest = min((p.due for p in self._pending.values()), default=None)
        if earliest == self._armed_for:
            return
        self._armed_for = earliest
        if earliest is None:
            if self._aps.get_job(_TIMER_ID) is not None:
                self._aps.remove_job(_TIMER_ID)
            return
        # A trigger object, not the alias "date": aliases are looked up through package entry
        # points, which a frozen (PyInstaller) bundle may not carry.
        self._aps.add_job(
            self._on_timer,
            DateTrigger(run_date=earliest, timezone=UTC),
            id=_TIMER_ID,
            replace_existing=True,
        )

    async def _on_timer(self) -> None:
        # Called by APScheduler on the loop; returns at once so its own task never sees a
        # job's cancellation or errors.
        self._armed_for = None
        now = self._now_real()
        for job_id in [i for i, p in self._pending.items() if p.due <= now]:
            self._start(job_id)
        self._arm()

    def _start(self, job_id: str) -> asyncio.Task[None] | None:
        pending = self._pending.pop(job_id, None)
        if pending is None or self._closed:
            return None
        task = asyncio.ensure_future(self._run(job_id, pending.function))
        self._tasks[job_id] = task
        task.add_done_callback(functools.partial(self._forget, job_id))
        return task

    def _forget(self, job_id: str, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(job_id) is task:
            del self._tasks[job_id]
        if job_id.startswith(_SPAWNED) and not task.cancelled() and task.exception() is not None:
            log.error("background work failed", exc_info=task.exception())

    async def _run(self, job_id: str, function: JobFunction) -> None:
        try:
            await function()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("background job %s failed", job_id)
