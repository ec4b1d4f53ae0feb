"""Settings → General → Background jobs: every job with its last run, next run and last error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.jobs import JobName
from etos_desktop.ui.changes_bridge import ChangesBridge
from etos_desktop.ui.settings.general_page import GeneralPage
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Reported, Text, background
from tests.helpers.qt_async import expect_signal
from tests.services.conftest import JobsEnv, jobs_env


def minute(value: Any) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M")


@pytest.fixture
async def general(
    qtbot: Any, tmp_path: Path, server: FakeOpenAIServer
) -> AsyncIterator[tuple[GeneralPage, JobsEnv]]:
    async with jobs_env(tmp_path / "data", server, FakeClock()) as env:
        bridge = ChangesBridge(env.stack.changes)
        page = GeneralPage(env.stack.settings, jobs=env.jobs, changes=bridge)
        qtbot.addWidget(page)
        page.resize(800, 900)
        refreshed = expect_signal(page.jobs_refreshed)
        page.show()
        await asyncio.wait_for(refreshed, 10)
        yield page, env
        # pytest-qt deletes the page first when the loop runs its deferred deletes.
        if shiboken6.isValid(page):
            page.close_page()
            await page.wait_idle()
        bridge.detach()


async def settle(page: GeneralPage, env: JobsEnv) -> None:
    await env.jobs.wait_idle()
    await page.wait_idle()


async def test_every_job_is_listed_with_its_schedule(general: tuple[GeneralPage, JobsEnv]):
    page, env = general
    section = page.jobs_section
    assert section is not None
    assert section.title() == "Background jobs"
    start = env.clock.now()
    assert section.row_texts(JobName.TITLES) == [
        "Conversation titles",
        "Never",
        "After a new conversation's first reply",
        "—",
        "—",
    ]
    assert section.row_texts(JobName.SUMMARIES) == [
        "Session summaries",
        "Never",
        "Not scheduled",
        "—",
        "—",
    ]
    from etos_desktop.services.jobs import STARTUP_DELAY

    # Never refreshed: the profile is caught up shortly after start-up.
    assert section.row_texts(JobName.PROFILE) == [
        "User profile",
        "Never",
        minute(start + STARTUP_DELAY),
        "—",
        "—",
    ]

    assert section.row_texts(JobName.BACKUP)[2] == minute(start + STARTUP_DELAY)
    assert section.row_texts(JobName.CONSOLIDATION)[2] == minute(start + STARTUP_DELAY)


async def test_a_run_and_a_failure_show_up(general: tuple[GeneralPage, JobsEnv]):
    page, env = general
    section = page.jobs_section
    assert section is not None
    env.clock.advance(minutes=2)
    await env.scheduler.fire("backup")
    await settle(page, env)
    backup = section.row_texts(JobName.BACKUP)
    assert backup[1] == minute(env.clock.now())
    assert backup[3:] == ["—", "—"]
    # A failed consolidation: its error in words, coloured as a warning.
    for n in range(8):
        await env.memory.save(f"memory number {n} about something", "fact")
    env.server.script_when(background, Fault(401))
    await env.scheduler.fire("consolidation")
    await settle(page, env)
    row = section.row_texts(JobName.CONSOLIDATION)
    assert row[4] == "The server rejected the API key."
    assert section.cells[JobName.CONSOLIDATION][4].property("state") == "warning"


async def test_the_tokens_a_job_used_in_30_days_show_in_its_row(
    general: tuple[GeneralPage, JobsEnv],
):
    page, env = general
    section = page.jobs_section
    assert section is not None
    for n in range(8):
        await env.memory.save(f"memory number {n} about something", "fact")
    env.server.script_when(background, Text("[]", reported=Reported(1200, 34, cached_tokens=1000)))
    await env.scheduler.fire("consolidation")
    await settle(page, env)
    [sent] = [r for r in env.server.chat_requests() if background(r.body)]
    assert sent.body["messages"], "consolidation asked the background model"
    cell = section.cells[JobName.CONSOLIDATION][3]
    assert section.row_texts(JobName.CONSOLIDATION)[3] == "1,234"
    assert cell.toolTip() == "Requests: 1 · 1,200 in (1,000 cached) · 34 out"
    assert section.row_texts(JobName.TITLES)[3] == "—"
    # A month later the run is out of the window.
    env.clock.advance(days=31)
    await page.refresh_jobs()
    assert section.row_texts(JobName.CONSOLIDATION)[3] == "—"


async def test_the_jobs_list_fits_beside_the_page_list_at_800_by_600(
    general: tuple[GeneralPage, JobsEnv],
):
    page, _env = general
    section = page.jobs_section
    assert section is not None
    # Settings at 800 px leaves the page about 620 px (the page list, margins, the scroll bar);
    # with every header and the next run on one line the section needed 673 (now 430).
    assert section.minimumSizeHint().width() <= 600
