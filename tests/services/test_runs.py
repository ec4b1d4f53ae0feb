"""The run recorder: one place where a run's start, success or failure is written and announced."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from etos_desktop.core.changes import ChangeHub, DataChange, JobsChanged
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.errors import AuthError
from etos_desktop.core.jobs import JobName
from etos_desktop.core.storage.database import Database
from etos_desktop.services.runs import RunRecorder


@dataclass(frozen=True)
class Result:
    error: BaseException | None = None


@pytest.fixture
async def recorder(tmp_path: Path) -> AsyncIterator[RunRecorder]:
    db = Database(tmp_path / "etos.db", tmp_path / "backups", clock=FakeClock())
    await db.open_async()
    yield RunRecorder(db, FakeClock(), ChangeHub())
    await asyncio.get_running_loop().run_in_executor(None, db.close)


async def test_a_run_is_recorded_from_its_result_and_announced(recorder: RunRecorder):
    heard: list[DataChange] = []
    unsubscribe = recorder.changes.subscribe(heard.append)
    seen_running: list[frozenset[JobName]] = []

    async def work() -> Result:
        seen_running.append(recorder.running)
        return Result()

    assert await recorder.run(JobName.SUMMARIES, work) == Result()
    row = await recorder.rows.get(JobName.SUMMARIES)
    assert row is not None
    assert (row.runs, row.failures, row.last_error) == (1, 0, None)
    assert row.last_success_at == row.last_started_at
    assert seen_running == [frozenset({JobName.SUMMARIES})]
    assert recorder.running == frozenset()
    assert heard == [JobsChanged(), JobsChanged()]
    failed = Result(AuthError("no"))
    assert await recorder.run(JobName.SUMMARIES, lambda: _value(failed)) is failed
    row = await recorder.rows.get(JobName.SUMMARIES)
    assert row is not None
    assert (row.runs, row.failures, row.last_error) == (2, 1, "auth")
    unsubscribe()
    unsubscribe()  # twice: harmless
    await recorder.run(JobName.SUMMARIES, work)
    assert len(heard) == 4


async def test_a_bug_is_recorded_and_raised_and_a_cancellation_records_neither(
    recorder: RunRecorder,
):
    async def bug() -> Result:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await recorder.run(JobName.TITLES, bug)
    row = await recorder.rows.get(JobName.TITLES)
    assert row is not None
    assert (row.failures, row.last_error) == (1, "bug:RuntimeError")
    started = asyncio.Event()

    async def slow() -> Result:
        started.set()
        await asyncio.sleep(3600)
        return Result()

    task = asyncio.ensure_future(recorder.run(JobName.PROFILE, slow))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    row = await recorder.rows.get(JobName.PROFILE)
    assert row is not None
    assert row.last_started_at is not None
    assert (row.last_success_at, row.last_error_at) == (None, None)
    assert recorder.running == frozenset()


async def test_a_failing_subscriber_stops_neither_the_run_nor_the_others(
    recorder: RunRecorder, caplog: pytest.LogCaptureFixture
):
    heard: list[DataChange] = []

    def broken(_change: DataChange) -> None:
        raise RuntimeError("subscriber bug")

    recorder.changes.subscribe(broken)
    recorder.changes.subscribe(heard.append)
    assert await recorder.run(JobName.PROFILE, lambda: _value(Result())) == Result()
    assert heard == [JobsChanged(), JobsChanged()]
    row = await recorder.rows.get(JobName.PROFILE)
    assert row is not None
    assert (row.runs, row.failures) == (1, 0)
    assert "a subscriber to JobsChanged failed" in caplog.text


async def _value(result: Result) -> Result:
    return result
