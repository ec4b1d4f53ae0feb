"""The Summaries page on a real database and the real jobs, through its real dialogs.

Every test is ``async def`` on the qasync loop. The page opens its own editor, confirmations and
history; the tests find them among the visible windows, type into them and click their buttons,
then look at the database, the requests the local server received and the page.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import shiboken6

from etos_desktop.core.clock import FakeClock
from etos_desktop.ui.changes_bridge import ChangesBridge
from etos_desktop.ui.settings.summaries_page import SummariesPage
from etos_desktop.ui.settings.summary_dialogs import SummaryEditorDialog, SummaryHistoryDialog
from etos_desktop.ui.settings.summary_models import COLUMNS, SummaryTableModel
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import answer_box, click, find_dialog, type_text, wait_until
from tests.services.conftest import JobsEnv, jobs_env

SUMMARY = (
    "The user planned a spring trip to Kyoto with a friend and compared budget hotels near "
    "Kyoto Station. They decided on a small hotel in Shijo because it is close to the markets, "
    "and asked for a three-day plan with temples in the morning and food in the evening. The "
    "assistant suggested an ICOCA card."
)
ZH_SUMMARY = "用户计划春天和朋友去京都旅行，比较了京都站附近的经济型酒店，最后决定住在四条的一家小酒店，因为离市场近。还请助手安排了三天的行程：上午看寺庙，晚上吃美食。"


@dataclass
class PageEnv:
    env: JobsEnv
    page: SummariesPage
    bridge: ChangesBridge

    async def conversation(self, title: str, turns: int) -> int:
        cid = await self.env.new_conversation(title)
        for i in range(turns):
            user = await self.env.stack.repo.add_message(cid, "user", f"{title} question {i}")
            await self.env.stack.repo.add_message(
                cid, "assistant", f"answer {i}", reply_to_id=user.id
            )
        return cid

    async def summary(self, cid: int, text: str = SUMMARY) -> int:
        history = await self.env.stack.repo.current_history(cid)
        written = await self.env.summaries.write_summary(
            conversation_id=cid,
            content=text,
            language="en",
            covers_until=history[-1].id if history else 0,
            user_turns=6,
            source="scheduled",
        )
        self.env.clock.advance(minutes=1)
        return written.id

    async def reload(self) -> None:
        refreshed = expect_signal(self.page.refreshed)
        self.page.spawn(self.page.refresh(), "")
        await asyncio.wait_for(refreshed, 10)
        await self.page.wait_idle()


@pytest.fixture
async def pe(qtbot: Any, tmp_path: Path, server: FakeOpenAIServer) -> AsyncIterator[PageEnv]:
    clock = FakeClock()
    async with jobs_env(tmp_path / "data", server, clock) as env:
        bridge = ChangesBridge(env.stack.changes)
        page = SummariesPage(
            env.summaries, env.stack.settings, jobs=env.jobs, changes=bridge, clock=clock
        )
        qtbot.addWidget(page)
        page.resize(900, 640)
        refreshed = expect_signal(page.refreshed)
        page.show()
        await asyncio.wait_for(refreshed, 10)
        await page.wait_idle()
        yield PageEnv(env, page, bridge)
        # pytest-qt deletes the page first when the loop runs its deferred deletes.
        if shiboken6.isValid(page):
            page.close_page()
            await page.wait_idle()
        bridge.detach()


def shown(page: SummariesPage) -> list[int]:
    return [
        page.proxy.index(r, 0).data(SummaryTableModel.SUMMARY_ROLE).id
        for r in range(page.proxy.rowCount())
    ]


def cell(page: SummariesPage, summary_id: int, column: str) -> str:
    row = page.model.row_of(summary_id)
    assert row is not None
    return str(page.model.index(row, COLUMNS.index(column)).data())


async def act(page: SummariesPage, button: Any) -> None:
    await click(button)
    await page.wait_idle()


async def test_the_list_shows_conversation_time_full_text_and_status(pe: PageEnv):
    trip = await pe.conversation("Kyoto trip", 6)
    old = await pe.summary(trip, "An earlier version.")
    new = await pe.summary(trip)
    other = await pe.summary(await pe.conversation("京都旅行", 6), ZH_SUMMARY)
    await pe.reload()
    page = pe.page
    assert shown(page) == [other, new, old]
    assert cell(page, new, "conversation") == "Kyoto trip"
    assert cell(page, new, "status") == "Current"
    assert cell(page, old, "status") == "Earlier version"
    assert cell(page, other, "content") == ZH_SUMMARY
    assert page.count_label.text() == "3 summaries · 2 current"
    page.select_ids([new])
    assert page.full_text.toPlainText() == SUMMARY


async def test_search_and_filters(pe: PageEnv):
    trip = await pe.conversation("Kyoto trip", 6)
    kyoto = await pe.summary(trip)
    dinner = await pe.summary(await pe.conversation("Dinner", 6), "The user cooked curry.")
    await pe.reload()
    page = pe.page
    await type_text(page.search_edit, "curry")
    assert shown(page) == [dinner]
    await type_text(page.search_edit, "kyoto")  # the title counts too
    assert shown(page) == [kyoto]
    page.search_edit.clear()
    page.show_conversation(trip)
    assert shown(page) == [kyoto]
    assert page.count_label.text() == "Showing 1 of 2"
    # The picker shows each conversation with its date (issue 19: it had none).
    picker = page.conversation_filter
    texts = [picker.itemText(i) for i in range(1, picker.count())]
    assert len(texts) == 2
    assert all(re.fullmatch(r".+ · \d{4}-\d{2}-\d{2} \d{2}:\d{2}", t) for t in texts), texts
    assert any(t.startswith("Kyoto trip · ") for t in texts)


async def test_edit_through_the_editor_and_refused_secrets_stay_in_the_dialog(pe: PageEnv):
    sid = await pe.summary(await pe.conversation("Kyoto trip", 6))
    await pe.reload()
    page = pe.page
    page.select_ids([sid])
    await click(page.edit_button)
    dialog = await find_dialog(SummaryEditorDialog, name="summaryEditor")
    assert dialog.text_edit.toPlainText() == SUMMARY
    assert "words (summaries are written with 50–120)" in dialog.length_label.text()
    await type_text(dialog.text_edit, "The password is hunter2222 for the hotel wifi.")
    await click(dialog.buttons.buttons()[0])  # Save
    assert dialog.isVisible()
    assert "password" in dialog.error_label.text().lower()
    await type_text(dialog.text_edit, "The user chose a hotel in Shijo.")
    await click(dialog.buttons.buttons()[0])
    await page.wait_idle()
    stored = await pe.env.summaries.get(sid)
    assert stored is not None
    assert stored.content == "The user chose a hotel in Shijo."
    assert stored.edited_by_user
    assert cell(page, sid, "status") == "Current · edited"
    assert page.status() == ("ok", "Summary saved.")


async def test_archive_and_restore_decide_what_is_sent(pe: PageEnv):
    trip = await pe.conversation("Kyoto trip", 6)
    sid = await pe.summary(trip)
    await pe.reload()
    page = pe.page
    page.select_ids([sid])
    await act(page, page.archive_button)
    assert cell(page, sid, "status") == "Archived"
    assert await pe.env.summaries.for_injection(None, 5) == []
    page.select_ids([sid])
    await act(page, page.restore_button)
    assert [s.id for s in await pe.env.summaries.for_injection(None, 5)] == [sid]
    assert page.status() == ("ok", "Restored 1 summaries.")


async def test_delete_with_confirm_and_undo(pe: PageEnv):
    sid = await pe.summary(await pe.conversation("Kyoto trip", 6))
    await pe.reload()
    page = pe.page
    page.select_ids([sid])
    await click(page.delete_button)
    text = await answer_box("Delete")
    assert "removed for good" in text
    assert "records of what was sent" in text
    await page.wait_idle()
    assert await pe.env.summaries.summaries() == []
    assert page.undo_bar.isVisible()
    await act(page, page.undo_button)
    assert [s.id for s in await pe.env.summaries.summaries()] == [sid]
    assert shown(page) == [sid]


async def test_deleting_a_summary_makes_its_conversation_due_again(pe: PageEnv):
    # Issue 19: after a delete the conversation still said "up to date", Summarise now was off.
    pe.env.server.script_when(background, Text(SUMMARY))
    cid = await pe.conversation("Kyoto trip", 6)
    written_at = pe.env.clock.now()
    sid = await pe.summary(cid)
    await pe.reload()
    page = pe.page
    page.show_conversation(cid)
    assert "up to date" in page.conversation_label.text()
    assert not page.summarise_button.isEnabled()
    page.select_ids([sid])
    await click(page.delete_button)
    await answer_box("Delete")
    await page.wait_idle()
    label = page.conversation_label.text()
    assert "up to date" not in label
    assert "6 user messages, 6 not yet summarised" in label
    # Due again: at the end of the gap after the summary that was written (it did happen).
    due = written_at + timedelta(minutes=120)
    assert pe.env.run_time(cid) == due
    assert f"next summary at {due.astimezone().strftime('%Y-%m-%d %H:%M')}" in label
    assert page.summarise_button.isEnabled()
    # Undo brings the summary back, and with it "up to date".
    await act(page, page.undo_button)
    assert "up to date" in page.conversation_label.text()
    assert not page.summarise_button.isEnabled()
    assert pe.env.run_time(cid) is None
    # Deleted again, Summarise now writes a new one from every turn.
    page.select_ids([sid])
    await click(page.delete_button)
    await answer_box("Delete")
    await page.wait_idle()
    await act(page, page.summarise_button)
    [request] = pe.env.summary_requests()
    conversation = request["messages"][1]["content"]
    assert "Earlier summary" not in conversation
    assert "User: Kyoto trip question 0" in conversation
    assert page.status() == ("ok", "A new summary was written.")
    assert "up to date" in page.conversation_label.text()


async def test_clear_all_confirms_with_the_count(pe: PageEnv):
    for n in range(3):
        await pe.summary(await pe.conversation(f"c{n}", 6))
    await pe.reload()
    page = pe.page
    page.request_clear_all()
    text = await answer_box("Cancel")
    assert text.startswith("Delete all 3 summaries")
    await page.wait_idle()
    assert len(await pe.env.summaries.summaries()) == 3
    page.request_clear_all()
    await answer_box("Delete all")
    await page.wait_idle()
    assert await pe.env.summaries.summaries() == []
    assert page.count_label.text() == "0 summaries · 0 current"
    page.close_page()  # Settings closes: the undo is gone with it
    assert page.undo_available() == 0


async def test_summarise_now_for_a_chosen_conversation(pe: PageEnv):
    pe.env.server.script_when(background, Text(SUMMARY))
    cid = await pe.conversation("Kyoto trip", 2)
    await pe.reload()
    page = pe.page
    page.show_conversation(cid)
    assert "2 user messages, 2 not yet summarised" in page.conversation_label.text()
    assert "summarised after 4 more user messages" in page.conversation_label.text()
    await act(page, page.summarise_button)
    assert len(pe.env.summary_requests()) == 1
    assert page.status() == ("ok", "A new summary was written.")
    stored = await pe.env.summaries.current(cid)
    assert stored is not None
    assert stored.source == "manual"
    assert shown(page) == [stored.id]
    assert "up to date" in page.conversation_label.text()
    assert not page.summarise_button.isEnabled()  # nothing new


async def test_the_next_scheduled_time_and_a_failed_attempt_are_shown(pe: PageEnv):
    pe.env.server.script_when(background, Text(SUMMARY), Text("SKIP"))
    cid = await pe.env.new_conversation("Kyoto trip")
    for i in range(6):
        await pe.env.say(cid, f"question {i}")
    summarised = pe.env.clock.now()
    pe.env.clock.advance(minutes=10)
    await pe.env.say(cid, "one more")
    await pe.reload()
    page = pe.page
    page.show_conversation(cid)
    due = (summarised + timedelta(minutes=120)).astimezone().strftime("%Y-%m-%d %H:%M")
    assert f"next summary at {due}" in page.conversation_label.text()
    assert f"next run {due}" in page.job_label.text()


async def test_a_failed_job_shows_its_error_in_words(pe: PageEnv):
    cid = await pe.env.new_conversation("Kyoto trip")
    pe.env.server.script_when(background, Text("The user asked", finish_reason="length"))
    for i in range(6):
        await pe.env.say(cid, f"question {i}")
    await pe.reload()
    page = pe.page
    page.show_conversation(cid)
    assert "stopped in the middle of a sentence" in page.job_label.text()
    assert page.job_label.property("state") == "warning"
    assert "last attempt failed" in page.conversation_label.text()
    retry = (pe.env.clock.now() + timedelta(minutes=10)).astimezone().strftime("%Y-%m-%d %H:%M")
    assert f"next summary at {retry}" in page.conversation_label.text()


async def test_history_shows_every_version(pe: PageEnv):
    cid = await pe.conversation("Kyoto trip", 6)
    await pe.summary(cid, "First version.")
    await pe.summary(cid, "Second version.")
    await pe.reload()
    page = pe.page
    page.show_conversation(cid)
    await click(page.history_button)
    dialog = await find_dialog(SummaryHistoryDialog, name="summaryHistory")
    text = dialog.browser.toPlainText()
    assert text.index("Second version.") < text.index("First version.")
    assert "earlier version" in text
    assert "Kyoto trip" in dialog.windowTitle()


async def test_the_three_numbers_are_validated_and_saved(pe: PageEnv):
    page = pe.page
    settings = pe.env.stack.settings
    assert not page.is_modified()
    page.turns_spin.setValue(4)
    page.gap_spin.setValue(30)
    page.inject_spin.setValue(0)
    assert page.is_modified()
    assert page.validate()
    page.apply()
    assert (
        settings.get_int("summaries.min_user_turns"),
        settings.get_int("summaries.min_gap_minutes"),
        settings.get_int("summaries.inject_count"),
    ) == (4, 30, 0)
    # The editors refuse what the schema refuses.
    page.turns_spin.setValue(0)
    assert page.turns_spin.value() == 1


async def test_the_page_reloads_when_a_job_writes_a_summary(pe: PageEnv):
    pe.env.server.script_when(background, Text(SUMMARY))
    cid = await pe.env.new_conversation("Kyoto trip")
    for i in range(6):
        await pe.env.say(cid, f"question {i}")
    await wait_until(lambda: pe.page.model.rowCount() == 1, what="the new summary on the page")
    await pe.page.wait_idle()
