"""The scheduler: run times on the injected clock, one job per id, the timer, a clean shutdown."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.services.scheduler import JobScheduler

REAL = datetime(2030, 5, 5, 8, 0, tzinfo=UTC)


async def test_run_times_are_clock_times_and_an_id_has_one_job():
    clock = FakeClock()
    scheduler = JobScheduler(clock, now_real=lambda: REAL)
    ran: list[str] = []

    async def job(name: str) -> None:
        ran.append(name)

    when = clock.now() + timedelta(minutes=110)
    scheduler.schedule("summary:1", clock.now() + timedelta(minutes=5), lambda: job("first"))
    scheduler.schedule("summary:1", when, lambda: job("second"))  # replaces the first
    assert scheduler.pending() == {"summary:1": when}
    assert scheduler.run_time("summary:1") == when
    assert scheduler._pending["summary:1"].due == REAL + timedelta(minutes=110)
    await scheduler.fire("summary:1")
    assert ran == ["second"]
    assert scheduler.pending() == {}
    with pytest.raises(KeyError):
        await scheduler.fire("summary:1")
    scheduler.schedule("x", when, lambda: job("x"))
    scheduler.cancel("x")
    scheduler.cancel("never scheduled")
    assert scheduler.pending() == {}


async def test_the_timer_runs_jobs_whose_time_has_come_and_leaves_the_others():
    clock = FakeClock()
    scheduler = JobScheduler(clock)
    ran: list[str] = []
    done = asyncio.Event()

    async def now_job() -> None:
        ran.append("now")
        done.set()

    async def later_job() -> None:
        ran.append("later")

    scheduler.schedule("later", clock.now() + timedelta(hours=2), later_job)
    scheduler.schedule("now", clock.now() - timedelta(minutes=1), now_job)  # overdue: at once
    scheduler.start()
    assert scheduler.is_busy()
    await asyncio.wait_for(done.wait(), 5)
    await scheduler.wait_idle()
    assert ran == ["now"]
    assert list(scheduler.pending()) == ["later"]
    assert not scheduler.is_busy()
    await scheduler.shutdown()


async def test_shutdown_cancels_a_running_job_and_waits_for_it():
    clock = FakeClock()
    scheduler = JobScheduler(clock)
    started = asyncio.Event()
    cancelled = []

    async def slow() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    scheduler.schedule("slow", clock.now(), slow)
    scheduler.start()
    await asyncio.wait_for(started.wait(), 5)
    assert scheduler.is_running("slow")
    await scheduler.shutdown()
    assert cancelled == [True]
    assert not scheduler.is_running("slow")
    # After shutdown nothing is scheduled any more.
    scheduler.schedule("late", clock.now(), slow)
    assert scheduler.pending() == {}


async def test_a_failing_job_is_logged_not_raised(caplog: pytest.LogCaptureFixture):
    clock = FakeClock()
    scheduler = JobScheduler(clock)

    async def broken() -> None:
        raise RuntimeError("boom")

    scheduler.schedule("broken", clock.now() + timedelta(hours=1), broken)
    await scheduler.fire("broken")
    assert "background job broken failed" in caplog.text


async def test_spawned_work_is_waited_for_cancelled_at_shutdown_and_its_failure_logged(
    caplog: pytest.LogCaptureFixture,
):
    clock = FakeClock()
    scheduler = JobScheduler(clock)
    release = asyncio.Event()
    done: list[str] = []

    async def check() -> None:
        await release.wait()
        done.append("check")

    async def broken() -> None:
        raise RuntimeError("boom")

    scheduler.spawn(check())
    assert scheduler.is_busy()
    release.set()
    await scheduler.wait_idle()
    assert done == ["check"]
    assert not scheduler.is_busy()
    scheduler.spawn(broken())
    await scheduler.wait_idle()
    assert "background work failed" in caplog.text
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.sleep(3600)

    task = scheduler.spawn(slow())
    await asyncio.wait_for(started.wait(), 5)
    await scheduler.shutdown()
    assert task.cancelled()
