"""The tray scenario, run by ``test_tray.py`` on Xvfb with a tray host (trayer) and xcb.

The app puts its icon in the tray; a click on it hides the window and another shows it again;
the icon's menu starts a new conversation (showing the window first) and quits the app. The
clicks are QTest mouse events on the icon's own window, which the tray host embedded. A
check-in shows as the tray's notification (Qt's own balloon: Xvfb has no notification
service), and a click on it opens the conversation the companion started.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon, QWidget

from etos_desktop.app import EtosApp
from tests.helpers.chat_app import idle, send, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import wait_until

TIMEOUT = 30

pytestmark = pytest.mark.skipif(
    QGuiApplication.platformName() != "xcb", reason="runs on a real X server (test_tray.py)"
)


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    # The tray host may still be starting: the app looks for a tray when it starts.
    await wait_until(QSystemTrayIcon.isSystemTrayAvailable, TIMEOUT, "a system tray")
    app = await start_app(qapp, server, isolated_environment)
    app.closed = asyncio.Event()  # as run_app makes it: set when the window closes
    yield app
    await stop_app(app)


def _icon_window() -> QWidget:
    """The icon's own window, which the tray host embedded (Qt's XEmbed tray icon)."""
    found = [
        w
        for w in QApplication.topLevelWidgets()
        if w.metaObject().className() == "QSystemTrayIconSys" and w.isVisible()
    ]
    assert len(found) == 1, found
    return found[0]


def _click_icon(button: Qt.MouseButton = Qt.MouseButton.LeftButton) -> None:
    icon = _icon_window()
    QTest.mouseClick(icon, button, Qt.KeyboardModifier.NoModifier, icon.rect().center())


async def _choose(menu: QMenu, action: QAction) -> None:
    await wait_until(menu.isVisible, TIMEOUT, "the tray menu")
    center: QPoint = menu.actionGeometry(action).center()
    QTest.mouseClick(menu, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, center)
    await asyncio.sleep(0.05)


async def test_the_tray_icon_shows_hides_starts_and_quits(
    etos: EtosApp, server: FakeOpenAIServer
) -> None:
    tray = etos.tray
    assert tray is not None, "no tray icon although a tray host runs"
    await wait_until(lambda: tray.icon.geometry().width() > 0, TIMEOUT, "the icon embedded")
    assert tray.icon.isVisible()
    # Embedded in the tray host's panel, not a window of its own on the screen.
    assert _icon_window().geometry().width() <= 64
    window = etos.window
    assert window.isVisible()

    _click_icon()
    await wait_until(lambda: not window.isVisible(), TIMEOUT, "the window hidden")
    _click_icon()
    await wait_until(window.isVisible, TIMEOUT, "the window shown again")

    server.script(Text("Hello from the tray test."))
    await send(etos, "hello")
    assert etos.controller is not None
    assert etos.controller.current is not None

    # The menu: hide, then "New conversation" shows the window with a new conversation.
    _click_icon(Qt.MouseButton.RightButton)
    await _choose(tray.menu, tray.toggle_action)
    assert tray.toggle_action.text() == "Show window"
    await wait_until(lambda: not window.isVisible(), TIMEOUT, "hidden from the menu")
    opened = expect_signal(etos.controller.conversation_opened)
    _click_icon(Qt.MouseButton.RightButton)
    await _choose(tray.menu, tray.new_action)
    await asyncio.wait_for(opened, TIMEOUT)
    await idle(etos)
    assert window.isVisible()
    assert etos.controller.current is None
    assert window.chat.welcome_shown()

    # Quit from the menu closes the window, which ends the app.
    _click_icon(Qt.MouseButton.RightButton)
    await _choose(tray.menu, tray.quit_action)
    await wait_until(etos.closed.is_set, TIMEOUT, "the app to quit")
    assert not window.isVisible()


def _balloon() -> QWidget | None:
    """Qt's own notification balloon, shown where the desktop has no notification service."""
    return next(
        (
            w
            for w in QApplication.topLevelWidgets()
            if w.metaObject().className() == "QBalloonTip" and w.isVisible()
        ),
        None,
    )


async def test_a_check_in_notifies_in_the_tray_and_a_click_opens_it(
    etos: EtosApp, server: FakeOpenAIServer
) -> None:
    tray = etos.tray
    assert tray is not None
    assert etos.controller is not None
    assert etos.jobs is not None
    # Due now: a daily check-in at this very minute (the job's timer runs it). No message is
    # sent first: none comes within half an hour of one.
    now = datetime.now().astimezone()
    greeting = "Hi! How did the rest of your day go?"
    server.script_when(background, Text(greeting))
    etos.settings.set("checkins.time", now.hour * 60 + now.minute)
    etos.settings.set("checkins.mode", "daily")
    etos.settings.set("checkins.quiet_hours", False)
    etos.settings.set("checkins.enabled", True)
    await wait_until(lambda: tray.notification is not None, TIMEOUT, "the check-in")
    balloon = await wait_until(_balloon, TIMEOUT, "the tray's notification balloon")
    assert tray.notification is not None
    assert tray.notification[1] == greeting
    opened = expect_signal(etos.controller.conversation_opened)
    QTest.mouseClick(
        balloon, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(20, 20)
    )
    await asyncio.wait_for(opened, TIMEOUT)
    await idle(etos)
    current = etos.controller.current
    assert current is not None
    assert current.started_by == "companion"
    assert etos.window.chat.checkin_mark.isVisible()
