"""Check-ins in the whole app, against the local server, on an injected clock (issue 23 item 6).

The user turns check-ins on in Settings → General (real widgets, real Save); at the set time the
job fires as its timer would: the request goes to the background model with the persona, the
profile and the recent summaries fenced; a conversation marked as started by the companion
appears at the top of the list, the tray notifies, and clicking the notification opens it with
the mark at its top; the inspector shows the request; a restart shows the same and keeps the
settings. A failing server shows nothing and does not ask again that day; memory off or the
persona's switch off means no check-in.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolButton

from etos_desktop.app import EtosApp
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.providers.config import ProviderConfig
from etos_desktop.services.scheduler import local_zone
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.conversation_list import StartedByCompanionRole
from etos_desktop.ui.message_widget import MessageWidget
from etos_desktop.ui.settings.checkins_section import CheckinsSection
from etos_desktop.ui.settings.general_page import GeneralPage
from tests.helpers.chat_app import first_frame_app, idle, send, stop_app
from tests.helpers.chat_view import assert_view_equals_reopen, chat_view
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, background
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, wait_until

TIMEOUT = 15
#: What Qt says when a tray icon is made on the offscreen platform, which has no tray.
TRAYLESS = r"systemTrayWindowChanged"
GREETING = "Good morning, Mia here! Did you book the ryokan in Kyoto?"
PROFILE = "## Identity\n- Lena, a teacher in Graz\n\n## Interests\n- Travel in Japan"
SUMMARY = "The user planned a trip to Kyoto in April and compared ryokans near Gion."


def local(day: int, hour: int, minute: int = 0) -> datetime:
    """A wall-clock time of January 2026 where the tests run, as aware UTC."""
    return datetime(2026, 1, day, hour, minute, tzinfo=local_zone()).astimezone(UTC)


def checkin_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [
        r.body
        for r in server.chat_requests()
        if background(r.body) and "you speak first" in r.body["messages"][0]["content"]
    ]


async def open_app(
    qapp: QApplication, server: FakeOpenAIServer, data_dir: Path, clock: FakeClock, monkeypatch
) -> EtosApp:
    """The app with a tray (as a desktop with one has), a provider with a background model.

    The offscreen platform has no tray: the icon is a real ``QSystemTrayIcon`` that shows
    nothing, and a click on its notification is its ``messageClicked`` signal, emitted as the
    platform would (the e2e tray scenario runs the real thing on Xvfb).
    """
    monkeypatch.setattr("etos_desktop.ui.tray.tray_available", lambda: True)
    if "fake-background" not in server.models:
        server.models.append("fake-background")
    app = first_frame_app(qapp, server, data_dir, clock=clock, summaries=True)
    if app.settings.provider("local") is None:
        app.settings.upsert_provider(
            ProviderConfig(
                id="local",
                name="Local",
                preset="custom",
                base_url=server.base_url,
                chat_model="fake-chat",
                background_model="fake-background",
            )
        )
        app.settings.default_provider_id = "local"
        app.settings.set("persona.name", "Mia")
        app.settings.save()
    await app.start()
    assert app.jobs is not None
    await asyncio.wait_for(app.jobs.wait_started(), TIMEOUT)
    await idle(app)
    return app


async def seed(app: EtosApp, server: FakeOpenAIServer) -> None:
    """A conversation the user had, its summary, and a profile."""
    assert app.summaries is not None
    assert app.profile is not None
    assert app.controller is not None
    server.script(Text("Gion is lovely in April."))
    await send(app, "Help me pick a ryokan in Kyoto")
    conversation = app.controller.current
    assert conversation is not None
    await app.summaries.write_summary(
        conversation_id=conversation.id,
        content=SUMMARY,
        language="en",
        covers_until=0,
        user_turns=6,
        source="scheduled",
    )
    await app.profile.save(PROFILE, ())


async def open_general(app: EtosApp) -> tuple[Any, GeneralPage, CheckinsSection]:
    dialog = app.open_settings("general")
    page = dialog.page("general")
    assert isinstance(page, GeneralPage)
    await dialog.wait_idle()
    section = page.checkins_section
    assert section is not None
    return dialog, page, section


async def save_and_close(app: EtosApp, dialog: Any) -> None:
    await click(dialog.save_button)
    await dialog.wait_idle()
    await asyncio.wait_for(app._tasks.wait_idle(), TIMEOUT)
    await idle(app)
    await click(dialog.close_button)
    await wait_until(lambda: app._settings_dialog is None, what="Settings to close")


async def choose(combo: Any, data: str) -> None:
    """Pick an item of a combo box with the keyboard, as a person would without the popup."""
    combo.setFocus()
    while combo.currentData() != data:
        QTest.keyClick(combo, Qt.Key.Key_Down)
        await asyncio.sleep(0)


def sidebar_rows(app: EtosApp) -> list[tuple[str, bool]]:
    model = app.window.sidebar.model
    return [
        (model.data(model.index(r, 0)), model.data(model.index(r, 0), StartedByCompanionRole))
        for r in range(model.rowCount(QModelIndex()))
    ]


def checkin_view(app: EtosApp) -> tuple[Any, ...]:
    """What the open conversation shows: the mark at its top and its messages."""
    chat = app.window.chat
    widgets = [w for w in chat.findChildren(MessageWidget) if w.isVisibleTo(chat)]
    return (
        chat.checkin_mark.isVisibleTo(chat),
        chat.checkin_mark.text(),
        [(w.role, w.text()) for w in widgets],
        [
            w.findChild(QToolButton, "regenerateButton").isVisibleTo(w)
            for w in widgets
            if w.role == "assistant"
        ],
    )


@pytest.mark.timeout(120)
async def test_done_when_a_check_in_fires_at_the_set_time_marked_notified_and_inspectable(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path, monkeypatch, ui_guard
):
    ui_guard.expect(TRAYLESS)
    clock = FakeClock(local(5, 7, 30))  # a Monday
    app = await open_app(qapp, server, isolated_environment, clock, monkeypatch)
    try:
        assert app.jobs is not None
        assert app.controller is not None
        assert app.tray is not None
        await seed(app, server)
        assert app.jobs.next_checkin_at() is None  # off by default

        # Settings → General → Check-ins: on, every day at 09:00 (quiet hours as they are).
        dialog, _page, section = await open_general(app)
        assert not section.enabled_check.isChecked()
        assert not section.mode_combo.isEnabled()
        await click(section.enabled_check)
        await choose(section.mode_combo, "daily")
        assert section.time_edits["checkins.time"].time().toString("HH:mm") == "09:00"
        assert section.time_edits["checkins.quiet_start"].time().toString("HH:mm") == "22:00"
        assert section.time_edits["checkins.quiet_end"].time().toString("HH:mm") == "08:00"
        assert not section.days_spin.isEnabled()  # silence mode's
        assert list(section.persona_checks) == [""]
        assert section.persona_checks[""].text() == "Mia (the Persona page)"
        assert section.persona_checks[""].isChecked()
        await save_and_close(app, dialog)
        assert app.jobs.next_checkin_at() == local(5, 9)

        # Nine o'clock: the job runs as its timer would.
        server.script_when(background, Text(GREETING))
        clock.advance(seconds=(local(5, 9) - clock.now()).total_seconds())
        await app.jobs.scheduler.fire("checkins")
        await idle(app)

        [body] = checkin_requests(server)
        assert body["model"] == "fake-background"
        system = body["messages"][0]["content"]
        assert system.startswith("Your name is Mia.\n")
        assert f"<profile>\n{PROFILE}\n</profile>" in system
        assert "<summaries>\n- 2026-01-05 · “" in system
        assert SUMMARY in system
        assert body["messages"][1]["content"].startswith("[Written by the app, not by the user")

        # The new conversation, at the top of the list, marked; the tray says who checked in.
        await wait_until(lambda: len(sidebar_rows(app)) == 2, what="the check-in in the list")
        rows = sidebar_rows(app)
        assert rows[0] == ("👋 Check-in", True)
        assert rows[1][1] is False
        assert app.tray.notification == ("Mia checked in", GREETING)
        shown_before = app.controller.current
        assert shown_before is not None
        assert shown_before.started_by is None

        # Clicking the notification opens it, the mark at its top.
        opened = expect_signal(app.controller.conversation_opened)
        app.tray.icon.messageClicked.emit()
        await asyncio.wait_for(opened, TIMEOUT)
        await idle(app)
        view = checkin_view(app)
        assert view[0] is True
        assert view[1].startswith("👋 Mia started this conversation: a check-in, ")
        assert view[2] == [("assistant", GREETING)]
        assert view[3] == [False]  # nothing to regenerate: it answers no message
        live = await assert_view_equals_reopen(app)
        assert live.title == "Check-in"

        # The inspector shows the request behind it.
        greeting = next(w for w in app.window.chat.findChildren(MessageWidget) if w.isVisible())
        await click(greeting.findChild(QToolButton, "contextButton"))
        await idle(app)
        inspector = next(d for d in app.window.findChildren(ContextDialog) if d.isVisible())
        titles = inspector.item_titles()
        assert "The app's request (not written by you)" in titles
        assert PROFILE in inspector.item_text(
            next(t for t in titles if t.startswith("Your profile"))
        )
        assert SUMMARY in inspector.item_text(
            next(t for t in titles if t.startswith("Summaries of other conversations: 1"))
        )
        assert inspector.memory_status.text().startswith("A check-in: your companion started")
        inspector.close()
        list_then = sidebar_rows(app)
    finally:
        await stop_app(app)

    # A restart: the same list, the same conversation, and the settings kept.
    app = await open_app(qapp, server, isolated_environment, clock, monkeypatch)
    try:
        assert app.controller is not None
        assert app.jobs is not None
        assert sidebar_rows(app) == list_then
        await app.controller.open_conversation(app.window.sidebar.model.conversation(0).id)
        await idle(app)
        assert checkin_view(app) == view
        assert chat_view(app.window.chat) == live
        assert app.jobs.next_checkin_at() == local(6, 9)
        dialog, _page, section = await open_general(app)
        assert section.enabled_check.isChecked()
        assert section.mode_combo.currentData() == "daily"
        assert section.status_label.text() == "Next check-in: 2026-01-06 09:00"
        dialog.reject()
        await dialog.wait_idle()

        # The user answers: the greeting is the start of the history the chat sends.
        server.script(Text("Wonderful, enjoy Gion!"))
        outcome = await send(app, "Yes, booked it yesterday!")
        assert outcome[0] == "finished"
        body = [r.body for r in server.chat_requests() if r.body.get("stream")][-1]
        assert [m["role"] for m in body["messages"]] == ["system", "assistant", "user"]
        assert body["messages"][1]["content"] == GREETING
        assert body["messages"][0]["content"].startswith("Your name is Mia.")
        await assert_view_equals_reopen(app)
    finally:
        await stop_app(app)


async def test_a_failed_request_shows_nothing_and_waits_for_tomorrow(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path, monkeypatch, ui_guard
):
    ui_guard.expect(TRAYLESS)
    clock = FakeClock(local(5, 7, 30))
    app = await open_app(qapp, server, isolated_environment, clock, monkeypatch)
    try:
        assert app.jobs is not None
        assert app.tray is not None
        await seed(app, server)
        app.settings.set("checkins.mode", "daily")
        app.settings.set("checkins.enabled", True)
        await asyncio.wait_for(app._tasks.wait_idle(), TIMEOUT)
        assert app.jobs.next_checkin_at() == local(5, 9)
        server.script_when(background, *[Fault(429)] * 4)
        clock.advance(seconds=(local(5, 9) - clock.now()).total_seconds())
        await app.jobs.scheduler.fire("checkins")
        await idle(app)
        assert len(checkin_requests(server)) == 4  # a try and the client's three retries
        assert [started for _title, started in sidebar_rows(app)] == [False]
        assert app.tray.notification is None
        assert app.jobs.next_checkin_at() == local(6, 9)
        await idle(app)
        assert len(checkin_requests(server)) == 4  # no loop
        dialog, page, section = await open_general(app)
        assert section.status_label.text() == "Next check-in: 2026-01-06 09:00"
        assert page.jobs_section is not None
        from etos_desktop.core.jobs import JobName

        assert page.jobs_section.row_texts(JobName.CHECKINS)[4] == (
            "The server was rate limiting requests."
        )
        dialog.reject()
        await dialog.wait_idle()
    finally:
        await stop_app(app)


async def test_no_check_in_with_memory_off_or_the_personas_switch_off(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path, monkeypatch, ui_guard
):
    ui_guard.expect(TRAYLESS)
    clock = FakeClock(local(5, 7, 30))
    app = await open_app(qapp, server, isolated_environment, clock, monkeypatch)
    try:
        assert app.jobs is not None
        await seed(app, server)
        app.settings.set("checkins.mode", "daily")
        app.settings.set("checkins.enabled", True)
        app.settings.set("memory.enabled", False)
        await asyncio.wait_for(app._tasks.wait_idle(), TIMEOUT)
        assert app.jobs.next_checkin_at() is None
        dialog, _page, section = await open_general(app)
        assert section.status_label.text() == "No check-in while memory is off (the Memory page)."
        dialog.reject()
        await dialog.wait_idle()

        app.settings.set("memory.enabled", True)
        await asyncio.wait_for(app._tasks.wait_idle(), TIMEOUT)
        assert app.jobs.next_checkin_at() == local(5, 9)
        dialog, _page, section = await open_general(app)
        await click(section.persona_checks[""])
        await save_and_close(app, dialog)
        assert app.settings.get_str("checkins.personas_off") == '[""]'
        assert app.jobs.next_checkin_at() is None
        clock.advance(hours=2)
        await idle(app)
        assert checkin_requests(server) == []
    finally:
        await stop_app(app)
