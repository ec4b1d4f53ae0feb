"""Session summaries in the whole app, against the local server, on an injected clock.

The issue's "Done when": the sixth user turn produces a summary in the background within 5 s of
the reply's end while the user keeps chatting (the composer stays enabled); another
conversation's next request carries it in the labelled block; the 120-minute rule holds under
the injected clock across a restart (the app reopened on the same data dir); everything is
visible, editable, archivable and clearable in Settings → Summaries.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.summaries.injection import SUMMARIES_BLOCK_LABEL
from etos_desktop.services.jobs import summary_job_id
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.settings.summaries_page import SummariesPage
from etos_desktop.ui.settings.summary_dialogs import SummaryEditorDialog
from tests.helpers.chat_app import first_outcome, history, idle, send, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import answer_box, click, find_dialog, type_text, wait_until

TIMEOUT = 15
SUMMARY = (
    "The user planned a spring trip to Kyoto with a friend and compared budget hotels near "
    "Kyoto Station. They decided on a small hotel in Shijo because it is close to the markets, "
    "and asked for a three-day plan with temples in the morning and food in the evening. The "
    "assistant suggested an ICOCA card."
)
SUMMARY_2 = (
    "The user came back to the Kyoto trip and added a day in Nara to see the deer park and "
    "Todai-ji. They asked how to get there from Shijo by train and whether a day pass is worth "
    "it; the assistant explained the Kintetsu line and said a pass only pays off with more "
    "trips. The user decided to buy single tickets and leave early."
)


def summary_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [
        r.body
        for r in server.chat_requests()
        if not r.body.get("stream") and "summary" in r.body["messages"][0]["content"]
    ]


def chat_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.chat_requests() if r.body.get("stream")]


async def new_conversation(app: EtosApp) -> None:
    assert app.controller is not None
    opened = expect_signal(app.controller.conversation_opened)
    await click(app.window.sidebar.new_button)
    await asyncio.wait_for(opened, TIMEOUT)
    await idle(app)


async def settings_summaries(app: EtosApp) -> SummariesPage:
    dialog = app.open_settings("summaries")
    page = dialog.page("summaries")
    assert isinstance(page, SummariesPage)
    await wait_until(lambda: page.model.rowCount() > 0, what="summaries on the page")
    await page.wait_idle()
    return page


async def test_done_when_summaries_in_the_background_across_a_restart(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
):
    clock = FakeClock()
    server.script_when(background, Text(SUMMARY, delay=1.0), Text(SUMMARY_2))
    app = await start_app(qapp, server, isolated_environment, summaries=True, clock=clock)
    try:
        chat = app.window.chat
        for i in range(5):
            await send(app, f"Kyoto question {i}: where should we stay?")
        assert summary_requests(server) == []
        # The sixth user turn: the reply ends, the summary is written in the background.
        outcome = asyncio.ensure_future(first_outcome(app))
        await type_text(chat.composer, "Kyoto question 5: and the markets?")
        await click(chat.send_button)
        result = await asyncio.wait_for(outcome, TIMEOUT)
        assert result[0] == "finished"
        reply_ended = time.monotonic()
        assert app.jobs is not None
        await wait_until(lambda: summary_requests(server), what="the summary request")
        # While it is on its way, the user keeps chatting: the composer is free.
        assert app.jobs.summary_running(app.controller.current.id)  # type: ignore[union-attr]
        assert chat.composer.isEnabled()
        await type_text(chat.composer, "Kyoto question 6: one more thing")
        assert chat.send_button.isEnabled()
        assert chat.send_button.text() == "Send"
        outcome = asyncio.ensure_future(first_outcome(app))
        await click(chat.send_button)
        assert (await asyncio.wait_for(outcome, TIMEOUT))[0] == "finished"
        await wait_until(
            lambda: app.jobs is not None and not app.jobs.busy(), what="the summary job to end"
        )
        stored = await app.summaries.summaries()  # type: ignore[union-attr]
        assert [s.content for s in stored] == [SUMMARY]
        assert time.monotonic() - reply_ended < 5.0
        assert len(summary_requests(server)) == 1
        body = summary_requests(server)[0]
        assert body["stream"] is False
        assert "tools" not in body
        # The summary never entered the chat.
        assert all(SUMMARY not in m.content for m in await history(app))
        first_id = app.controller.current.id  # type: ignore[union-attr]
        summarised_at = clock.now()
        # The seventh turn came within the gap: its summary waits for the gap's end.
        due = app.jobs.next_summary_at(first_id)
        assert due == summarised_at + app.jobs.rule_settings().min_gap

        # Another conversation's next request carries it, in the labelled block.
        await new_conversation(app)
        await send(app, "What should I cook tonight?")
        system = chat_requests(server)[-1]["messages"][0]["content"]
        assert f"## {SUMMARIES_BLOCK_LABEL['en']}\n<summaries>\n" in system
        assert SUMMARY in system
        # The context inspector shows the block, its tokens and the snapshot's time.
        rows = await history(app)
        from etos_desktop.ui.context_dialog import show_context

        shown = show_context(app.window, app.controller, rows[-1].id)  # type: ignore[arg-type]
        inspector = await asyncio.wait_for(shown, TIMEOUT)
        assert isinstance(inspector, ContextDialog)
        title = next(t for t in inspector.item_titles() if t.startswith("Summaries of other"))
        assert (
            title
            == f"Summaries of other conversations: 1, snapshot of {summarised_at.astimezone():%Y-%m-%d %H:%M}"
        )
        assert SUMMARY in inspector.item_text("Summaries of other")
        inspector.close()
    finally:
        await stop_app(app)

    # The app is closed for 30 minutes, then opened again on the same data dir.
    clock.advance(minutes=30)
    app = await start_app(qapp, server, isolated_environment, summaries=True, clock=clock)
    try:
        assert app.jobs is not None
        assert app.jobs.scheduler.pending("summary:") == {summary_job_id(first_id): due}
        await idle(app)
        assert len(summary_requests(server)) == 1  # the gap holds across the restart
        clock.advance(minutes=90)
        assert clock.now() == due
        await app.jobs.scheduler.fire(summary_job_id(first_id))
        await idle(app)
        assert len(summary_requests(server)) == 2
        assert (
            "Kyoto question 6: one more thing"
            in summary_requests(server)[1]["messages"][1]["content"]
        )

        # Everything is in Settings → Summaries: visible, editable, archivable, clearable.
        page = await settings_summaries(app)
        assert page.model.rowCount() == 2
        assert [page.model.status_text(s) for s in page.model.summaries()] == [
            "Current",
            "Earlier version",
        ]
        current = page.model.summaries()[0]
        page.select_ids([current.id])
        assert page.full_text.toPlainText() == SUMMARY_2
        await click(page.edit_button)
        editor = await find_dialog(SummaryEditorDialog, name="summaryEditor")
        await type_text(editor.text_edit, "The user added a day in Nara.")
        await click(editor.buttons.buttons()[0])
        await page.wait_idle()
        assert (await app.summaries.get(current.id)).content == "The user added a day in Nara."  # type: ignore[union-attr]
        page.select_ids([current.id])
        await click(page.archive_button)
        await page.wait_idle()
        assert page.model.status_text(page.model.summaries()[0]).startswith("Archived")
        page.request_clear_all()
        assert (await answer_box("Delete all")).startswith("Delete all 2 summaries")
        await page.wait_idle()
        assert await app.summaries.summaries() == []  # type: ignore[union-attr]
    finally:
        await stop_app(app)
