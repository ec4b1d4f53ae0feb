"""What core knows about job runs: the statuses Settings shows, error texts, shielded writes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from etos_desktop.core.errors import AuthError, error_text
from etos_desktop.core.jobs import JobName, JobStatus, job_statuses
from etos_desktop.core.storage.database import shielded
from etos_desktop.core.storage.tables import JobRunRow

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def test_statuses_list_every_job_with_its_row_next_run_and_whether_it_runs():
    rows = {"backup": JobRunRow(name="backup", last_success_at=NOW, next_run_at=NOW)}
    later = NOW + timedelta(hours=1)
    statuses = job_statuses(
        rows,
        {JobName.BACKUP: later, JobName.SUMMARIES: None},
        running=[JobName.SUMMARIES],
        unavailable=[JobName.PROFILE],
    )
    assert [s.name for s in statuses] == list(JobName)
    by_name = {s.name: s for s in statuses}
    assert by_name[JobName.BACKUP] == JobStatus(
        JobName.BACKUP, last_success_at=NOW, next_run_at=later
    )
    assert by_name[JobName.SUMMARIES] == JobStatus(JobName.SUMMARIES, running=True)
    assert by_name[JobName.PROFILE] == JobStatus(JobName.PROFILE, available=False)
    assert by_name[JobName.TITLES] == JobStatus(JobName.TITLES)


def test_error_text_names_the_code_never_the_servers_words():
    assert error_text(AuthError("key sk-123 refused")) == "auth"
    assert error_text(ValueError("x")) == "bug:ValueError"


async def test_a_shielded_write_finishes_when_its_caller_is_cancelled():
    written: list[str] = []
    started = asyncio.Event()

    async def write() -> str:
        started.set()
        await asyncio.sleep(0.01)
        written.append("row")
        return "row"

    assert await shielded(write()) == "row"
    started.clear()
    task = asyncio.ensure_future(shielded(write()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert written == ["row", "row"]
