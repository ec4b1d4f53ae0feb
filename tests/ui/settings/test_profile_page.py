"""The Profile page in the real Settings dialog, on a real database, the real jobs and the server.

Every test is ``async def`` on the qasync loop. The tests type into the real editor, click the
page's real buttons, answer the confirmations the page opened, then look at the database, the
requests the local server received and the page. Time moves on a ``FakeClock``; the daily job
is fired as its timer would fire it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QTextCursor

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.profile import sections
from etos_desktop.core.profile.injection import profile_label
from etos_desktop.core.profile.records import PinnedLine
from etos_desktop.ui.changes_bridge import ChangesBridge
from etos_desktop.ui.settings.dialog import DEFAULT_SIZE, SettingsDialog
from etos_desktop.ui.settings.memory_page import MemoryPage
from etos_desktop.ui.settings.profile_page import ProfilePage
from etos_desktop.ui.theme import colors
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.helpers.qt_async import expect_signal
from tests.helpers.settings_env import (
    LongerTranslator,
    MappingTranslator,
    clipped_widgets,
    no_servers,
)
from tests.helpers.ui_driver import answer_box, choose_file, click, type_text, wait_until
from tests.services.conftest import JobsEnv, jobs_env

PROFILE = """## Identity
- Mia, a software engineer in Berlin

## Communication style
- Short answers, code first"""

REFRESHED = """## Identity
- Mia, a software engineer in Berlin

## Communication style
- Short answers, code first

## Interests
- Bouldering on weekends (2026-01-01)"""

#: A line the user pins, and the section it is in.
PIN = PinnedLine("- Short answers, code first", "communication_style")


def minute(value: datetime | None) -> str:
    assert value is not None
    return value.astimezone().strftime("%Y-%m-%d %H:%M")


def fenced_blocks(system: str) -> list[tuple[str, str]]:
    """The labelled, fenced blocks of a system message, in order: ``(tag, body)``."""
    return re.findall(r"^## [^\n]+\n<([a-z_]+)>\n(.*?)\n</\1>", system, re.M | re.S)


@dataclass
class PageEnv:
    env: JobsEnv
    dialog: SettingsDialog
    page: ProfilePage

    async def reload(self) -> None:
        """Read the page again from the database (as a visit does)."""
        refreshed = expect_signal(self.page.refreshed)
        self.page.spawn(self.page.refresh(), "")
        await asyncio.wait_for(refreshed, 10)
        await self.page.wait_idle()

    async def new_material(self, text: str = "The user goes bouldering on weekends.") -> None:
        self.env.clock.advance(minutes=5)
        await self.env.memory.save(text, "fact")

    async def say(self, conversation_id: int, text: str) -> None:
        """Send ``text`` and let everything it started end, the page's reload included.

        The jobs a reply starts end by saying so (``JobsChanged``), and the open page then
        reloads: a test must not end with that reload running, or pytest-qt's teardown (which
        processes Qt events before fixtures are torn down, outside the asyncio loop) runs its
        next step where no loop runs ("no running event loop", seen in CI).
        """
        await self.env.say(conversation_id, text)  # waits for the jobs, which spawn the reload
        await self.dialog.wait_idle()


@pytest.fixture
async def pe(qtbot: Any, tmp_path: Path, server: FakeOpenAIServer) -> AsyncIterator[PageEnv]:
    clock = FakeClock()
    async with jobs_env(tmp_path / "data", server, clock) as env:
        bridge = ChangesBridge(env.stack.changes)
        stack = env.stack
        dialog = SettingsDialog(
            stack.settings,
            stack.secrets,
            stack.registry,
            probe=no_servers,
            local_candidates=[],
            env={},
            profile=env.profile,
            jobs=env.jobs,
            changes=bridge,
        )
        qtbot.addWidget(dialog)
        page = dialog.profile_page
        assert page is not None
        refreshed = expect_signal(page.refreshed)
        dialog.show()
        dialog.show_page("profile")
        await asyncio.wait_for(refreshed, 10)
        await dialog.wait_idle()
        yield PageEnv(env, dialog, page)
        if shiboken6.isValid(dialog):
            await dialog.wait_idle()
            dialog.done(0)
            await dialog.wait_idle()
        await env.jobs.wait_idle()
        bridge.detach()


def cursor_to_line(page: ProfilePage, number: int, *, end: bool = False) -> None:
    block = page.editor.document().findBlockByNumber(number)
    cursor = QTextCursor(block)
    if end:
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    page.editor.setTextCursor(cursor)


async def save(page: ProfilePage) -> None:
    await click(page.save_button)
    await page.wait_idle()


# -- editing, saving and the next chat request -------------------------------------------------


async def test_an_edit_saved_here_is_the_first_block_of_the_next_chat_request(pe: PageEnv):
    page = pe.page
    assert page.editor.toPlainText() == ""
    assert not page.save_button.isEnabled()
    await type_text(page.editor, PROFILE)
    assert page.save_button.isEnabled()
    assert page.is_modified()
    await save(page)
    stored = await pe.env.profile.current()
    assert stored.content == PROFILE
    assert page.status() == ("ok", "Profile saved. The next message carries it.")
    assert not page.save_button.isEnabled()
    assert not page.is_modified()
    assert [page.source_text(r) for r in page.revisions()] == ["Edited by you"]
    # A summary of another conversation, so the request has more than one labelled block.
    other = await pe.env.new_conversation("Trip")
    await pe.env.summaries.write_summary(
        conversation_id=other,
        content="The user planned a trip to Kyoto.",
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    cid = await pe.env.new_conversation()
    await pe.say(cid, "Any tips for my code review?")
    system = pe.env.chat_requests()[-1]["messages"][0]["content"]
    blocks = fenced_blocks(system)
    assert [tag for tag, _ in blocks] == ["profile", "summaries"]
    assert blocks[0][1] == PROFILE
    label = profile_label("en", (await pe.env.profile.current()).updated_at)
    assert f"## {label}\n<profile>\n" in system
    # Edited again: the very next request carries the new text.
    cursor_to_line(page, 1, end=True)
    await type_text(page.editor, " (she/her)", replace=False)
    await save(page)
    await pe.say(cid, "And for the tests?")
    system = pe.env.chat_requests()[-1]["messages"][0]["content"]
    assert fenced_blocks(system)[0] == (
        "profile",
        PROFILE.replace("Berlin", "Berlin (she/her)"),
    )


async def test_a_chinese_profile_typed_here_goes_out_under_the_chinese_label(pe: PageEnv):
    page = pe.page
    text = "## 身份\n- 米娅，柏林的软件工程师\n\n## 沟通风格\n- 回答简短，先给代码"
    await type_text(page.editor, text)
    cursor_to_line(page, 4)
    await click(page.pin_button)
    await save(page)
    stored = await pe.env.profile.current()
    assert stored.content == text
    assert stored.pinned == (PinnedLine("- 回答简短，先给代码", "communication_style"),)
    cid = await pe.env.new_conversation()
    await pe.say(cid, "帮我看看这段代码有什么问题？")
    system = pe.env.chat_requests()[-1]["messages"][0]["content"]
    label = profile_label("zh", stored.updated_at)
    assert label.startswith("用户画像（最近更新于 ")
    assert f"## {label}\n<profile>\n{text}\n</profile>" in system


async def test_revert_drops_unsaved_edits(pe: PageEnv):
    await pe.env.profile.save(PROFILE, ())
    await pe.reload()
    page = pe.page
    await type_text(page.editor, "something else")
    assert page.revert_button.isEnabled()
    await click(page.revert_button)
    await page.wait_idle()
    assert page.editor.toPlainText() == PROFILE
    assert not page.is_modified()
    assert not page.revert_button.isEnabled()
    assert (await pe.env.profile.current()).content == PROFILE
    assert len(await pe.env.profile.revisions()) == 1


async def test_a_secret_or_an_over_long_profile_is_refused_and_the_text_kept(pe: PageEnv):
    page = pe.page
    secret = PROFILE + "\n- API key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    await type_text(page.editor, secret)
    await save(page)
    state, text = page.status()
    assert state == "error"
    assert "this looks like an API key" in text
    assert "sk-proj" not in text
    assert page.editor.toPlainText() == secret  # nothing typed is lost
    assert (await pe.env.profile.current()).empty
    long_text = "## Identity\n" + "\n".join(f"- line {i} " + "x" * 60 for i in range(70))
    page.editor.setPlainText(long_text)  # as a paste
    assert page.count_label.property("state") == "error"
    await save(page)
    assert page.status()[0] == "error"
    assert "at most 4,000 are kept" in page.status()[1] or "at most 4000" in page.status()[1]
    assert page.editor.toPlainText() == long_text
    assert await pe.env.profile.revisions() == []


# -- pinned lines -------------------------------------------------------------------------------


async def test_pinned_lines_are_marked_and_follow_an_edit_of_their_text(pe: PageEnv):
    await pe.env.profile.save(PROFILE, ())
    await pe.reload()
    page = pe.page
    cursor_to_line(page, 1)
    assert page.pin_button.text() == "Pin line"
    await click(page.pin_button)
    assert page.editor.pinned_line_numbers() == [1]
    assert page.pin_button.text() == "Unpin line"
    assert re.search(r"pinned lines: 1 \(36 / 1,?000 characters\)", page.count_label.text())
    # The marker: the pinned line is tinted in the memory accent colour.
    [selection] = page.editor.extraSelections()
    assert selection.cursor.blockNumber() == 1
    assert page.is_modified()  # a pin is an edit Save writes
    await save(page)
    assert (await pe.env.profile.current()).pinned == (
        PinnedLine("- Mia, a software engineer in Berlin", "identity"),
    )
    # Editing the pinned line's text pins the new text.
    cursor_to_line(page, 1, end=True)
    await type_text(page.editor, " (she/her)", replace=False)
    assert page.editor.pinned_line_numbers() == [1]
    await save(page)
    assert (await pe.env.profile.current()).pinned == (
        PinnedLine("- Mia, a software engineer in Berlin (she/her)", "identity"),
    )
    # Unpinning.
    cursor_to_line(page, 1)
    await click(page.pin_button)
    assert page.editor.extraSelections() == []
    await save(page)
    assert (await pe.env.profile.current()).pinned == ()


async def test_pinning_a_heading_pins_its_section_and_a_refresh_keeps_the_lines(pe: PageEnv):
    # Issue 19: the heading came back empty and its lines were gone without a warning.
    await pe.env.profile.save(PROFILE, ())
    await pe.reload()
    page = pe.page
    cursor_to_line(page, 3)  # "## Communication style"
    await click(page.pin_button)
    await save(page)
    # The model keeps the heading and drops the line under it.
    await pe.new_material()
    pe.env.server.script_when(background, Text(REFRESHED.replace(f"{PIN.text}\n", "")))
    await click(page.refresh_button)
    await page.wait_idle()
    assert page.status() == ("ok", "The profile was refreshed; see the history.")
    stored = await pe.env.profile.current()
    lines = stored.content.splitlines()
    assert lines[lines.index("## Communication style") + 1] == PIN.text
    heading = PinnedLine("## Communication style", "communication_style")
    assert stored.pinned == (heading, PIN)
    assert page.editor.pins() == (heading, PIN)
    assert page.editor.pinned_line_numbers() == [3, 4]
    cursor_to_line(page, 3)
    assert page.pin_button.text() == "Unpin section"
    cursor_to_line(page, 4)
    assert page.pin_button.text() == "Unpin line"
    # The model drops the whole section: heading and line come back together.
    await pe.new_material("The user switched to Rust.")
    pe.env.server.script_when(
        background,
        Text("## Identity\n- Mia, a software engineer in Berlin\n\n## Expertise\n- Rust"),
    )
    await click(page.refresh_button)
    await page.wait_idle()
    stored = await pe.env.profile.current()
    assert stored.content.startswith(f"## Communication style\n{PIN.text}\n\n## Identity")
    assert page.editor.pinned_line_numbers() == [0, 1]
    # Unpinning the heading unpins its section.
    cursor_to_line(page, 0)
    await click(page.pin_button)
    assert page.editor.pinned_line_numbers() == []
    assert page.pin_button.text() == "Pin section"


async def test_too_many_pinned_characters_are_refused_with_a_message(pe: PageEnv):
    long_line = "- " + "x" * 1001
    await pe.env.profile.save(f"## Identity\n{long_line}", ())
    await pe.reload()
    page = pe.page
    cursor_to_line(page, 1)
    await click(page.pin_button)
    assert page.count_label.property("state") == "error"
    await save(page)
    state, text = page.status()
    assert state == "error"
    assert "at most 1,000 can be pinned" in text or "at most 1000 can be pinned" in text
    assert page.is_modified()  # nothing typed is lost
    assert (await pe.env.profile.current()).pinned == ()


# -- Refresh now ------------------------------------------------------------------------------


async def test_refresh_now_shows_progress_can_be_cancelled_and_then_updates_with_a_diff(
    pe: PageEnv,
):
    await pe.env.profile.save(PROFILE, (PIN,))
    await pe.reload()
    page = pe.page
    await pe.new_material()
    # A slow model: the user cancels while it thinks.
    pe.env.server.script_when(background, Text(REFRESHED, delay=5.0))
    await click(page.refresh_button)
    await wait_until(lambda: page.stage_label.text() == "Waiting for the model…")
    await wait_until(lambda: pe.env.profile_requests(), what="the refresh request")
    assert page.progress.isVisible()
    assert page.cancel_button.isVisible()
    assert not page.refresh_button.isVisible()
    assert page.editor.isReadOnly()
    assert not page.save_button.isEnabled()
    assert not page.clear_button.isEnabled()
    await click(page.cancel_button)
    await page.wait_idle()
    assert page.status() == ("", "Refresh cancelled. The profile is as it was.")
    assert not page.progress.isVisible()
    assert not page.cancel_button.isVisible()
    assert page.refresh_button.isVisible()
    assert not page.editor.isReadOnly()
    assert (await pe.env.profile.current()).content == PROFILE
    assert len(await pe.env.profile.revisions()) == 1
    # Again, answered at once, without the pinned line: a new version, the pin put back.
    pe.env.server.script_when(background, Text(REFRESHED.replace(f"{PIN.text}\n", "")))
    await click(page.refresh_button)
    await page.wait_idle()
    assert page.status() == ("ok", "The profile was refreshed; see the history.")
    assert page.refresh_button.isVisible()
    assert not page.cancel_button.isVisible()
    assert not page.progress.isVisible()
    request = pe.env.profile_requests()[-1]["messages"][1]["content"]
    assert f"<profile>\n{PROFILE}\n</profile>" in request
    assert "The user goes bouldering on weekends." in request
    stored = await pe.env.profile.current()
    lines = stored.content.splitlines()
    assert lines[lines.index("## Communication style") + 1] == PIN.text
    assert stored.pinned == (PIN,)
    assert page.editor.toPlainText() == stored.content
    assert page.editor.pins() == (PIN,)
    assert [page.source_text(r) for r in page.revisions()] == [
        "Refreshed on request",
        "Edited by you",
    ]
    # The earlier version is selected: the diff shows what the refresh added, coloured.
    assert page.selected_revision() == page.revisions()[1]
    assert ("+", "- Bouldering on weekends (2026-01-01)") in page.diff()
    assert ("+", "## Interests") in page.diff()
    assert (" ", PIN.text) in page.diff()
    assert colors(page).added.lower() in page.diff_view.toHtml().lower()
    # What the selected version itself changed: everything was new then.
    page.compare_combo.setCurrentIndex(1)
    assert all(mark == "+" for mark, _ in page.diff())


async def test_a_failed_or_junk_refresh_leaves_the_profile_and_shows_the_error(pe: PageEnv):
    await pe.env.profile.save(PROFILE, (PIN,))
    await pe.reload()
    page = pe.page
    await pe.new_material()
    pe.env.server.script_when(background, *[Fault(500)] * 4)
    await click(page.refresh_button)
    await page.wait_idle()
    state, text = page.status()
    assert state == "error"
    assert text.startswith("The profile was not refreshed.")
    assert (await pe.env.profile.current()).content == PROFILE
    assert page.editor.toPlainText() == PROFILE
    assert page.refresh_button.isVisible()
    # The page shows the failure by itself, with its time (no reload).
    assert "Last refresh: never" in page.job_label.text()
    assert (
        f"last attempt failed at {minute(pe.env.clock.now())}: The model server had an internal "
        "error." in page.job_label.text()
    )
    assert page.job_label.property("state") == "warning"
    for junk, why in (
        ("Sorry, I can't help with that.", "The model's reply was not a profile with sections."),
        ("", "The model answered with nothing."),
        (
            "## Identity\n" + "\n".join(f"- fact {i} " + "x" * 60 for i in range(70)),
            "The model's profile was longer than 4,000 characters.",
        ),
    ):
        pe.env.server.script_when(background, Text(junk))
        await click(page.refresh_button)
        await page.wait_idle()
        assert page.status() == ("error", f"The profile was not refreshed. {why}")
        stored = await pe.env.profile.current()
        assert (stored.content, stored.pinned) == (PROFILE, (PIN,))
        assert page.editor.toPlainText() == PROFILE
        assert len(page.revisions()) == 1
    # The same profile back: nothing to store, and it says so.
    pe.env.server.script_when(background, Text(PROFILE))
    await click(page.refresh_button)
    await page.wait_idle()
    assert page.status() == (
        "ok",
        "The model found nothing to change; the profile is as it was.",
    )
    assert "failed" not in page.job_label.text()
    assert len(page.revisions()) == 1


async def test_last_refresh_is_the_last_successful_one_and_a_failure_is_shown_apart(pe: PageEnv):
    # Issue 19: "Last refresh" showed the time of a failed refresh.
    await pe.env.profile.save(PROFILE, ())
    await pe.reload()
    page = pe.page
    await pe.new_material()
    pe.env.server.script_when(background, Text(REFRESHED))
    await click(page.refresh_button)
    await page.wait_idle()
    succeeded_at = pe.env.clock.now()
    assert f"Last refresh: {minute(succeeded_at)}" in page.job_label.text()
    pe.env.clock.advance(hours=2)
    await pe.new_material("The user started learning Rust.")
    pe.env.server.script_when(background, *[Fault(500)] * 4)
    await click(page.refresh_button)
    await page.wait_idle()
    failed_at = pe.env.clock.now()
    assert minute(failed_at) != minute(succeeded_at)
    await pe.reload()  # Settings opened again later
    text = page.job_label.text()
    assert f"Last refresh: {minute(succeeded_at)}" in text
    assert (
        f"last attempt failed at {minute(failed_at)}: The model server had an internal error."
        in text
    )
    assert page.job_label.property("state") == "warning"


async def test_nothing_new_sends_nothing(pe: PageEnv):
    await pe.env.profile.save(PROFILE, ())
    await pe.reload()
    await click(pe.page.refresh_button)
    await pe.page.wait_idle()
    assert pe.page.status()[1].startswith("Nothing new since the last refresh")
    assert pe.env.profile_requests() == []


async def test_refresh_now_with_unsaved_edits_saves_them_first(pe: PageEnv):
    page = pe.page
    await type_text(page.editor, PROFILE)
    await pe.new_material()
    pe.env.server.script_when(background, Text(REFRESHED))
    await click(page.refresh_button)
    assert "Save your edits first?" in await answer_box("Save and refresh")
    await page.wait_idle()
    request = pe.env.profile_requests()[-1]["messages"][1]["content"]
    assert f"<profile>\n{PROFILE}\n</profile>" in request
    assert [page.source_text(r) for r in page.revisions()] == [
        "Refreshed on request",
        "Edited by you",
    ]


async def test_refresh_now_with_unsaved_edits_can_be_called_off(pe: PageEnv):
    page = pe.page
    await type_text(page.editor, PROFILE)
    await pe.new_material()
    await click(page.refresh_button)
    await answer_box("Cancel")
    await page.wait_idle()
    assert pe.env.profile_requests() == []
    assert page.editor.toPlainText() == PROFILE
    assert page.is_modified()
    assert page.refresh_button.isVisible()
    assert page.refresh_button.isEnabled()


# -- the daily job ------------------------------------------------------------------------------


async def test_the_daily_job_updates_the_open_page_with_a_diff_and_keeps_the_pin(pe: PageEnv):
    env = pe.env
    page = pe.page
    await env.profile.save(PROFILE, (PIN,))
    await pe.reload()
    # Never refreshed: the catch-up after start-up is the next run, and the page says when.
    due = env.jobs.next_profile_refresh_at()
    assert due is not None
    assert f"next: {minute(due)}" in page.job_label.text()
    assert "Last refresh: never" in page.job_label.text()
    await pe.new_material("The user goes bouldering on weekends.")
    # The model rewrites the pinned line.
    env.server.script_when(
        background, Text(REFRESHED.replace(PIN.text, "- Prefers short answers (2026-01-01)"))
    )
    env.clock.advance(minutes=2)
    assert env.clock.now() >= due
    await env.scheduler.fire("profile")
    stored = await env.profile.current()
    # The page was open: it reloads by itself.
    await wait_until(lambda: page.loaded().revision_id == stored.revision_id, what="a reload")
    await page.wait_idle()
    assert [page.source_text(r) for r in page.revisions()] == ["Refreshed daily", "Edited by you"]
    assert "new items: 1" in page.history_list.model().index(0, 0).data()
    assert page.editor.toPlainText() == stored.content
    lines = stored.content.splitlines()
    style = lines.index("## Communication style")
    assert lines[style + 1 : style + 3] == [PIN.text, "- Prefers short answers (2026-01-01)"]
    assert page.editor.pins() == (PIN,)
    assert page.editor.pinned_line_numbers() == [style + 1]
    assert ("+", "- Bouldering on weekends (2026-01-01)") in page.diff()
    assert ("+", "- Prefers short answers (2026-01-01)") in page.diff()
    # The next run is tomorrow at the refresh hour, and the page shows it.
    next_daily = env.jobs.next_profile_refresh_at()
    assert next_daily is not None
    assert next_daily.hour == 4
    assert f"Last refresh: {minute(env.clock.now())}" in page.job_label.text()
    assert f"next: {minute(next_daily)}" in page.job_label.text()
    # The next chat request carries the refreshed profile.
    cid = await env.new_conversation()
    await env.say(cid, "hello")
    assert fenced_blocks(env.chat_requests()[-1]["messages"][0]["content"])[0] == (
        "profile",
        stored.content,
    )


async def test_a_background_refresh_during_an_edit_keeps_the_edit_and_asks_on_save(pe: PageEnv):
    await pe.env.profile.save(PROFILE, ())
    await pe.reload()
    page = pe.page
    await type_text(page.editor, PROFILE + "\n- typed by me")
    await pe.new_material()
    pe.env.server.script_when(background, Text(REFRESHED))
    pe.env.clock.advance(hours=1)
    await pe.env.jobs.refresh_profile()
    await pe.reload()
    assert page.editor.toPlainText() == PROFILE + "\n- typed by me"
    assert page.status()[0] == "warning"
    await click(page.save_button)
    assert "Save your version anyway?" in await answer_box("Save mine")
    await page.wait_idle()
    assert (await pe.env.profile.current()).content == PROFILE + "\n- typed by me"
    sources = [page.source_text(r) for r in page.revisions()]
    assert sources == ["Edited by you", "Refreshed daily", "Edited by you"]


# -- clear, history and restore -----------------------------------------------------------------


async def test_history_entries_are_told_apart_and_a_pin_is_listed_as_one(pe: PageEnv):
    # Issue 19: three identical "18:18" entries; a pin-only change read "Edited by you".
    page = pe.page
    await type_text(page.editor, PROFILE)
    await save(page)
    cursor_to_line(page, 4)
    await click(page.pin_button)
    await save(page)
    cursor_to_line(page, 4, end=True)
    await type_text(page.editor, " (always)", replace=False)
    await save(page)
    cursor_to_line(page, 4)
    await click(page.pin_button)  # unpinned again
    await save(page)
    history = page.history_list.model()
    entries = [history.index(i, 0).data() for i in range(history.rowCount())]
    assert len(set(entries)) == 4  # the clock did not move: the same second for all four
    second = pe.env.clock.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")
    assert all(second in entry for entry in entries)
    assert [e.splitlines()[0] for e in entries] == [f"#{n} · {second}" for n in (4, 3, 2, 1)]
    assert [page.source_text(r) for r in page.revisions()] == [
        "Unpinned by you",
        "Edited by you",
        "Pinned by you",
        "Edited by you",
    ]


async def test_clear_asks_and_restore_brings_it_back(pe: PageEnv):
    await pe.env.profile.save(PROFILE, (PIN,))
    await pe.reload()
    page = pe.page
    await click(page.clear_button)
    assert (await answer_box("Cancel")).startswith("Clear the profile and its pinned lines?")
    await page.wait_idle()
    assert (await pe.env.profile.current()).content == PROFILE
    await click(page.clear_button)
    await answer_box("Clear")
    await page.wait_idle()
    assert (await pe.env.profile.current()).empty
    assert (await pe.env.profile.current()).pinned == ()
    assert page.editor.toPlainText() == ""
    assert not page.clear_button.isEnabled()
    assert [page.source_text(r) for r in page.revisions()] == ["Cleared", "Edited by you"]
    cid = await pe.env.new_conversation()
    await pe.say(cid, "hello")
    assert "<profile>" not in pe.env.chat_requests()[-1]["messages"][0]["content"]
    page.select_revision(page.revisions()[1].id)
    assert ("-", "## Identity") in page.diff()
    assert colors(page).removed.lower() in page.diff_view.toHtml().lower()
    await click(page.restore_button)
    await page.wait_idle()
    stored = await pe.env.profile.current()
    assert (stored.content, stored.pinned) == (PROFILE, (PIN,))
    assert page.editor.toPlainText() == PROFILE
    assert page.editor.pins() == (PIN,)
    assert page.source_text(page.revisions()[0]).startswith("Restored from ")
    assert page.status()[0] == "ok"
    # The current version cannot be restored again.
    page.select_revision(page.revisions()[0].id)
    assert not page.restore_button.isEnabled()


async def test_restore_with_unsaved_edits_asks_first(pe: PageEnv):
    await pe.env.profile.save(PROFILE, ())
    await pe.env.profile.save(PROFILE + "\n- second", ())
    await pe.reload()
    page = pe.page
    await type_text(page.editor, "my unsaved words")
    page.select_revision(page.revisions()[1].id)
    await click(page.restore_button)
    assert "Your unsaved edits are dropped." in await answer_box("Cancel")
    await page.wait_idle()
    assert page.editor.toPlainText() == "my unsaved words"
    assert len(await pe.env.profile.revisions()) == 2
    await click(page.restore_button)
    await answer_box("Restore")
    await page.wait_idle()
    assert page.editor.toPlainText() == PROFILE
    assert (await pe.env.profile.current()).content == PROFILE


# -- the unsaved-changes guard and the dialog's Save --------------------------------------------


async def test_closing_settings_with_an_unsaved_profile_asks_and_saves(pe: PageEnv):
    page = pe.page
    await type_text(page.editor, PROFILE)
    await click(pe.dialog.close_button)
    assert await answer_box("Save") == (
        "Some settings were changed but not saved. Save them before closing?"
    )
    await wait_until(lambda: not pe.dialog.isVisible(), what="the dialog to close")
    assert (await pe.env.profile.current()).content == PROFILE


async def test_closing_settings_can_discard_the_unsaved_profile(pe: PageEnv):
    await type_text(pe.page.editor, PROFILE)
    await click(pe.dialog.close_button)
    await answer_box("Discard")
    await wait_until(lambda: not pe.dialog.isVisible(), what="the dialog to close")
    assert (await pe.env.profile.current()).empty


async def test_a_refused_profile_stops_the_dialogs_save_and_shows_why(pe: PageEnv):
    page = pe.page
    pe.dialog.show_page("general")
    page.editor.setPlainText("## Identity\n" + "- x" * 2100)
    await click(pe.dialog.save_button)
    await pe.dialog.wait_idle()
    assert pe.dialog.current_page_name() == "profile"
    assert page.status()[0] == "error"
    assert pe.dialog.isVisible()
    assert page.is_modified()
    assert (await pe.env.profile.current()).empty


async def test_the_settings_are_saved_with_the_dialog_and_turn_injection_off(pe: PageEnv):
    env = pe.env
    page = pe.page
    await env.profile.save(PROFILE, ())
    await pe.reload()
    page.hour_spin.setValue(6)
    assert pe.dialog.is_modified()
    await click(pe.dialog.save_button)
    await pe.dialog.wait_idle()
    assert env.stack.settings.get_int("profile.refresh_hour") == 6
    # The setting that turns the profile off: no block in the next request, no daily run.
    cid = await env.new_conversation()
    await env.say(cid, "hello")
    assert "<profile>" in env.chat_requests()[-1]["messages"][0]["content"]
    await click(page.enabled_check)
    assert pe.dialog.is_modified()
    await click(pe.dialog.save_button)
    await pe.dialog.wait_idle()
    assert env.stack.settings.get_bool("profile.enabled") is False
    await env.say(cid, "hello again")
    assert "<profile>" not in env.chat_requests()[-1]["messages"][0]["content"]
    await env.jobs.settings_changed()  # what the app does after the dialog's Save
    assert env.jobs.next_profile_refresh_at() is None
    await pe.reload()
    assert "daily refresh is off" in page.job_label.text()
    # Still editable and kept.
    assert page.editor.toPlainText() == PROFILE


# -- language and layout ------------------------------------------------------------------------


async def test_a_language_switch_retranslates_the_page_and_its_messages(pe: PageEnv):
    await pe.env.profile.save(PROFILE, ())
    await pe.reload()
    page = pe.page
    await click(page.refresh_button)  # nothing new: a status line
    await page.wait_idle()
    translator = MappingTranslator(
        {
            "Refresh now": "立即更新",
            "Edited by you": "由你编辑",
            "Your profile": "你的画像",
            "Nothing new since the last refresh: no summary or memory to learn from, "
            "so nothing was sent.": "自上次更新以来没有新内容，未发送任何请求。",
        }
    )
    QCoreApplication.installTranslator(translator)
    try:
        await wait_until(lambda: page.refresh_button.text() == "立即更新", what="retranslation")
        assert page.history_list.model().index(0, 0).data().splitlines()[1].startswith("由你编辑")
        assert page.editor.accessibleName() == "你的画像"
        assert page.status()[1] == "自上次更新以来没有新内容，未发送任何请求。"
        assert page.status_label.text() == page.status()[1]
    finally:
        QCoreApplication.removeTranslator(translator)
    await wait_until(lambda: page.refresh_button.text() == "Refresh now")


@pytest.mark.parametrize("longer", [False, True], ids=["english", "longer-translation"])
async def test_the_page_with_a_profile_lays_out_at_the_default_size(pe: PageEnv, longer: bool):
    await pe.env.profile.save(REFRESHED, (PIN,))
    await pe.env.profile.save(PROFILE, (PIN,))
    translator = LongerTranslator()
    if longer:
        QCoreApplication.installTranslator(translator)
    try:
        pe.dialog.resize(DEFAULT_SIZE)
        await pe.reload()
        await asyncio.sleep(0.05)  # let layouts settle
        assert pe.dialog.size() == DEFAULT_SIZE
        assert clipped_widgets(pe.dialog) == []
    finally:
        if longer:
            QCoreApplication.removeTranslator(translator)


async def test_the_markdown_export_heads_the_profile_in_the_ui_language(
    qtbot: Any, tmp_path: Path, server: FakeOpenAIServer
):
    clock = FakeClock()
    async with jobs_env(tmp_path / "data", server, clock) as env:
        await env.profile.save(PROFILE, (PIN,))
        page = MemoryPage(env.memory, env.stack.settings, transfer=env.transfer, clock=clock)
        qtbot.addWidget(page)
        refreshed = expect_signal(page.refreshed)
        page.show()
        await asyncio.wait_for(refreshed, 10)
        await page.wait_idle()
        path = tmp_path / "memories.md"
        translator = MappingTranslator({"User profile": "用户画像"})
        QCoreApplication.installTranslator(translator)
        try:
            page.export_markdown_action.trigger()
            await choose_file(str(path))
            await page.wait_idle()
        finally:
            QCoreApplication.removeTranslator(translator)
        page.close_page()
        await page.wait_idle()
        markdown = path.read_text(encoding="utf-8")
        assert "## 用户画像" in markdown
        assert "### Identity" in markdown
        assert "User profile" not in markdown


def test_the_limits_are_the_issues():
    assert sections.MAX_PROFILE_CHARS == 4000
    assert sections.MAX_PINNED_CHARS == 1000
