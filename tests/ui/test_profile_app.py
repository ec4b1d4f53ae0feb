"""The user profile in the whole app, against the local server, on an injected clock.

The issue's "Done when": a user edits the profile in Settings → Profile and the next chat
request carries the edit, first of the labelled blocks of the system message (and the context
inspector shows it); the daily job updates it from new summaries and memories and the change
shows in the history with a diff; a refresh that fails or returns junk leaves the profile as it
was; pinned lines never change. Temporary conversations get no profile, and the setting turns
it off.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.profile.injection import profile_label
from etos_desktop.core.profile.records import PinnedLine
from etos_desktop.services.scheduler import local_zone
from etos_desktop.ui.context_dialog import ContextDialog, show_context
from etos_desktop.ui.settings.profile_page import ProfilePage
from tests.helpers.chat_app import history, idle, send, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, ToolCall, background
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, type_text, wait_until

TIMEOUT = 15
PROFILE = """## Identity
- Mia, a software engineer in Berlin

## Communication style
- Short answers, code first"""
PIN = PinnedLine("- Short answers, code first", "communication_style")
MEMORY = "The user goes bouldering twice a week at a gym in Kreuzberg"
SUMMARY = (
    "The user asked how to train finger strength for bouldering without getting injured. They "
    "climb twice a week in Kreuzberg and want to move from V3 to V5 by summer. The assistant "
    "suggested hangboard repeaters twice a week, rest days between sessions, and antagonist "
    "exercises; the user decided to start with ten-minute sessions."
)
#: The refresh: learns from the memory and the summary, and rewrites the pinned line.
REFRESHED = """## Identity
- Mia, a software engineer in Berlin

## Communication style
- Prefers short answers (2026-01-01)

## Interests
- Bouldering twice a week in Kreuzberg; aims for V5 by summer (2026-01-01)"""


def fenced_blocks(system: str) -> list[tuple[str, str]]:
    """The labelled, fenced blocks of a system message, in order: ``(tag, body)``."""
    return re.findall(r"^## [^\n]+\n<([a-z_]+)>\n(.*?)\n</\1>", system, re.M | re.S)


def chat_system(server: FakeOpenAIServer) -> str:
    """The system message of the last chat (streamed) request."""
    body = [r.body for r in server.chat_requests() if r.body.get("stream")][-1]
    return str(body["messages"][0]["content"])


def profile_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [
        r.body
        for r in server.chat_requests()
        if not r.body.get("stream") and "profile" in r.body["messages"][0]["content"]
    ]


async def open_profile(app: EtosApp) -> ProfilePage:
    dialog = app.open_settings("profile")
    page = dialog.page("profile")
    assert isinstance(page, ProfilePage)
    await dialog.wait_idle()
    return page


async def close_settings(app: EtosApp, page: ProfilePage) -> None:
    dialog = page.window()
    await click(dialog.close_button)  # type: ignore[attr-defined]
    await wait_until(lambda: app._settings_dialog is None, what="Settings to close")


async def new_conversation(app: EtosApp, *, temporary: bool = False) -> None:
    assert app.controller is not None
    opened = expect_signal(app.controller.conversation_opened)
    (app.window.new_temp_action if temporary else app.window.new_action).trigger()
    await asyncio.wait_for(opened, TIMEOUT)
    await idle(app)


async def test_done_when_edited_in_settings_refreshed_daily_and_sent_first(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    clock = FakeClock()
    app = await start_app(qapp, server, isolated_environment, summaries=True, clock=clock)
    try:
        assert app.jobs is not None
        assert app.profile is not None
        assert app.controller is not None
        # The user writes the profile in Settings → Profile, pins a line and saves.
        page = await open_profile(app)
        await type_text(page.editor, PROFILE)
        page.editor.setTextCursor(QTextCursor(page.editor.document().findBlockByNumber(4)))
        await click(page.pin_button)
        await click(page.save_button)
        await page.wait_idle()
        saved_at = clock.now()
        await close_settings(app, page)
        stored = await app.profile.current()
        assert (stored.content, stored.pinned) == (PROFILE, (PIN,))

        # The next chat request carries it, first of the labelled blocks.
        await send(app, "Any tips for my code review?")
        system = chat_system(server)
        assert fenced_blocks(system)[0] == ("profile", PROFILE)
        assert f"## {profile_label('en', stored.updated_at)}\n<profile>\n" in system
        assert system.index("<profile>") > 0  # after the persona and the rules
        # The context inspector shows the block and when the profile last changed.
        rows = await history(app)
        inspector = await asyncio.wait_for(
            show_context(app.window, app.controller, rows[-1].id), TIMEOUT
        )
        assert isinstance(inspector, ContextDialog)
        title = next(t for t in inspector.item_titles() if t.startswith("Your profile"))
        assert title == f"Your profile, as of {saved_at.astimezone():%Y-%m-%d %H:%M}"
        assert PROFILE in inspector.item_text("Your profile")
        inspector.close()

        # New material: a memory saved by the model, and a summary after six user turns.
        await new_conversation(app)
        server.script(
            ToolCall("save_memory", json.dumps({"content": MEMORY, "kind": "preference"})),
            Text("Noted."),
        )
        await send(app, "Remember that I go bouldering twice a week in Kreuzberg.")
        server.script_when(background, Text(SUMMARY))
        for turn in range(5):
            clock.advance(seconds=30)
            await send(app, f"Finger strength question {turn}: how do I train it safely?")
        await idle(app)
        summaries = await app.summaries.summaries()  # type: ignore[union-attr]
        assert [s.content for s in summaries] == [SUMMARY]
        assert profile_requests(server) == []

        # Never refreshed before: the start-up catch-up is the next run. The daily job runs
        # as its timer would; the model rewrites the pinned line.
        due = app.jobs.next_profile_refresh_at()
        assert due is not None
        clock.advance(minutes=2)
        assert clock.now() >= due
        server.script_when(background, Text(REFRESHED))
        await app.jobs.scheduler.fire("profile")
        await idle(app)
        [request] = profile_requests(server)
        sent = request["messages"][1]["content"]
        assert f"<profile>\n{PROFILE}\n</profile>" in sent  # the user's edit is the base
        assert f"- [Communication style] {PIN.text}" in sent
        assert MEMORY in sent
        assert SUMMARY in sent
        refreshed = await app.profile.current()
        lines = refreshed.content.splitlines()
        style = lines.index("## Communication style")
        # The pinned line, word for word, at the top of its section.
        assert lines[style + 1 : style + 3] == [PIN.text, "- Prefers short answers (2026-01-01)"]
        assert refreshed.pinned == (PIN,)
        assert "## Interests" in lines

        # The change shows in the history with a diff.
        page = await open_profile(app)
        assert [page.source_text(r) for r in page.revisions()] == [
            "Refreshed daily",
            "Edited by you",
        ]
        assert page.editor.toPlainText() == refreshed.content
        assert page.editor.pins() == (PIN,)
        assert (
            "+",
            "- Bouldering twice a week in Kreuzberg; aims for V5 by summer (2026-01-01)",
        ) in page.diff()
        assert (" ", PIN.text) in page.diff()
        refreshed_at = f"{clock.now().astimezone():%Y-%m-%d %H:%M}"
        assert f"Last refresh: {refreshed_at}" in page.job_label.text()
        await close_settings(app, page)
        # Another conversation: the climbing summary goes out too, after the profile.
        await new_conversation(app)
        await send(app, "What should I cook tonight?")
        blocks = fenced_blocks(chat_system(server))
        assert [tag for tag, _ in blocks] == ["profile", "summaries"]
        assert blocks[0][1] == refreshed.content

        # The next daily run is at the refresh hour; a failing server leaves the profile.
        daily = app.jobs.next_profile_refresh_at()
        assert daily is not None
        assert daily.astimezone(local_zone()).hour == app.settings.get_int("profile.refresh_hour")
        await app.memory.save("The user switched from Python to Rust at work.", "fact")  # type: ignore[union-attr]
        server.script_when(background, *[Fault(500)] * 4)
        clock.advance(seconds=(daily - clock.now()).total_seconds())
        await app.jobs.scheduler.fire("profile")
        await idle(app)
        assert len(profile_requests(server)) == 1 + 4  # a try and the client's three retries
        after = await app.profile.current()
        assert (after.content, after.pinned, after.revision_id) == (
            refreshed.content,
            refreshed.pinned,
            refreshed.revision_id,
        )
        page = await open_profile(app)
        assert f"Last refresh: {refreshed_at}" in page.job_label.text()  # the one that worked
        assert (
            f"last attempt failed at {clock.now().astimezone():%Y-%m-%d %H:%M}: "
            "The model server had an internal error."
        ) in page.job_label.text()
        await close_settings(app, page)
        # The retry after the backoff gets junk: still the same profile, no new version.
        retry = app.jobs.next_profile_refresh_at()
        assert retry is not None
        server.script_when(background, Text("I'm sorry, I cannot write a profile."))
        clock.advance(seconds=(retry - clock.now()).total_seconds())
        await app.jobs.scheduler.fire("profile")
        await idle(app)
        assert len(profile_requests(server)) == 6
        after = await app.profile.current()
        assert (after.content, after.revision_id) == (refreshed.content, refreshed.revision_id)
        assert len(await app.profile.revisions()) == 2
        assert after.last_error == "profile_rejected:no_sections"

        # A temporary conversation carries no profile.
        await new_conversation(app, temporary=True)
        assert app.controller.current is None or app.controller.current.temporary
        await send(app, "Just a quick question, don't remember anything.")
        assert app.controller.current is not None
        assert app.controller.current.temporary
        assert "<profile>" not in chat_system(server)

        # The setting turns it off: no block, no daily run.
        await new_conversation(app)
        page = await open_profile(app)
        await click(page.enabled_check)
        dialog = page.window()
        await click(dialog.save_button)  # type: ignore[attr-defined]
        await dialog.wait_idle()  # type: ignore[attr-defined]
        await idle(app)
        await close_settings(app, page)
        await send(app, "Hello again")
        assert "<profile>" not in chat_system(server)
        assert app.jobs.next_profile_refresh_at() is None
    finally:
        await stop_app(app)
