"""The end-to-end scenario, run by ``test_xcb_smoke.py`` on Xvfb with the xcb platform.

A person's afternoon, with the keyboard and the mouse only (QTest events on the real window):
"remember I use pnpm", a new conversation (Ctrl+N) whose question carries the memory, a long reply
stopped with Esc, an earlier message edited and resent, then Settings (Ctrl+,) → Memory: Add…,
Edit… and More → Export as JSON…. Each step checks what the local server received, what the
database holds and what the window shows, and saves a screenshot.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from etos_desktop.app import EtosApp
from etos_desktop.ui.settings.dialog import SettingsDialog
from etos_desktop.ui.settings.memory_dialogs import MemoryEditorDialog
from tests.helpers.chat_app import first_outcome, history, idle, start_app, stop_app
from tests.helpers.chat_view import assert_view_equals_reopen, chat_view
from tests.helpers.fake_openai_server import FakeOpenAIServer, Slow, Text
from tests.helpers.memory_scenario import INSTALL_QUESTION, PNPM, SAVE_PNPM
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import (
    answer_box,
    button_with_text,
    choose_file,
    click,
    find_dialog,
    tool_button,
    type_text,
    wait_until,
)

TIMEOUT = 30
SHOTS = Path(os.environ.get("ETOS_SCREENSHOTS", "."))

pytestmark = pytest.mark.skipif(
    QGuiApplication.platformName() != "xcb", reason="runs on a real X server (test_xcb_smoke.py)"
)


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment, embedder="builtin")
    app.window.resize(1200, 800)
    app.window.activateWindow()
    await asyncio.wait_for(app._embedder_task, TIMEOUT)
    yield app
    await stop_app(app)


def shot(widget: QWidget, name: str) -> None:
    """Save what the X server shows of ``widget``'s window."""
    window = widget.window()
    screen = window.screen()
    image = screen.grabWindow(window.winId())
    assert not image.isNull()
    assert image.save(str(SHOTS / f"{name}.png"))


def press(
    widget: QWidget, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    QTest.keyClick(widget, key, modifiers)


async def type_and_enter(app: EtosApp, text: str) -> tuple[object, ...]:
    composer = app.window.chat.composer
    outcome = asyncio.ensure_future(first_outcome(app))
    await click(composer)
    await type_text(composer, text)
    press(composer, Qt.Key.Key_Return)
    result = await asyncio.wait_for(outcome, TIMEOUT)
    await idle(app)
    return result


async def test_an_afternoon_with_the_keyboard_and_the_mouse(
    etos: EtosApp, server: FakeOpenAIServer, tmp_path: Path
):
    window = etos.window
    chat = window.chat
    await wait_until(window.isActiveWindow, TIMEOUT, "the window to be active")

    # 1. "remember I use pnpm": the model saves it; a note under the reply says so.
    server.script(SAVE_PNPM, Text("Noted — you use pnpm."))
    await type_and_enter(etos, "remember I use pnpm")
    assert [
        m["content"] for m in server.chat_requests()[1].body["messages"] if m["role"] == "tool"
    ] == ["saved as #1"]
    reply = chat_view(chat).messages[-1]
    assert reply.notes == (1,)
    await asyncio.sleep(0.2)
    shot(window, "1-remembered")

    # 2. Ctrl+N: a new conversation; its question carries the memory, fenced and labelled.
    opened = expect_signal(etos.controller.conversation_opened)
    press(chat.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    await asyncio.wait_for(opened, TIMEOUT)
    server.script(Text("Run `pnpm install`."))
    await type_and_enter(etos, INSTALL_QUESTION)
    sent = server.chat_requests()[-1].body["messages"]
    assert "<memories>" in sent[-2]["content"]
    assert PNPM in sent[-2]["content"]
    assert sent[-1] == {"role": "user", "content": INSTALL_QUESTION}
    await assert_view_equals_reopen(etos)
    shot(window, "2-carried")

    # 3. A long reply, stopped with Esc: it says "Stopped" and offers Retry at once.
    server.script(Slow("word " * 80, chunks=80, delay=0.2))
    delta = expect_signal(etos.controller.reply_delta)
    await click(chat.composer)
    await type_text(chat.composer, "tell me a long story")
    press(chat.composer, Qt.Key.Key_Return)
    await asyncio.wait_for(delta, TIMEOUT)
    not_busy = expect_signal(etos.controller.busy_changed)
    press(chat.composer, Qt.Key.Key_Escape)
    await asyncio.wait_for(not_busy, TIMEOUT)
    await idle(etos)
    stopped = chat_view(chat).messages[-1]
    assert stopped.status == "Stopped"
    assert ("retryButton", True, True) in stopped.buttons
    rows = await history(etos)
    assert (rows[-1].status, rows[-1].error_code) == ("interrupted", "stopped")
    await assert_view_equals_reopen(etos)
    shot(window, "3-stopped")

    # 4. Edit the first question of this conversation and resend it (confirmed with the mouse).
    first_user = (await history(etos))[0]
    await click(tool_button(chat.widget(first_user.id), "editButton"))
    await type_text(chat.composer, " With pnpm, please.", replace=False)
    server.script(Text("Then `pnpm install` it is."))
    outcome = asyncio.ensure_future(first_outcome(etos))
    press(chat.composer, Qt.Key.Key_Return)
    await answer_box("Send")
    await asyncio.wait_for(outcome, TIMEOUT)
    await idle(etos)
    edited = INSTALL_QUESTION + " With pnpm, please."
    assert [m.content for m in await history(etos)] == [edited, "Then `pnpm install` it is."]
    assert server.chat_requests()[-1].body["messages"][-1]["content"] == edited
    view = await assert_view_equals_reopen(etos)
    assert [m.text for m in view.messages] == [edited, "Then `pnpm install` it is."]
    shot(window, "4-edited")

    # 5. Ctrl+, → Memory → Add…: a memory typed in the real editor is stored. (Xvfb runs no
    # window manager: after the confirmation box the main window is activated as a click would.)
    window.activateWindow()
    await wait_until(window.isActiveWindow, TIMEOUT, "the window to be active again")
    press(chat.composer, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    settings = await find_dialog(SettingsDialog)
    names = [settings.page_list.item(i).text() for i in range(settings.page_list.count())]
    item = settings.page_list.item(names.index("Memory"))
    await_point = settings.page_list.visualItemRect(item).center()
    QTest.mouseClick(
        settings.page_list.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        await_point,
    )
    page = settings.memory_page
    await wait_until(lambda: page.model.rowCount() == 1, TIMEOUT, "the memory list")
    await click(page.add_button)
    editor = await find_dialog(MemoryEditorDialog)
    await type_text(editor.content_edit, "我每天早上喝咖啡")
    await click(button_with_text(editor, "Save"))
    await wait_until(lambda: page.model.rowCount() == 2, TIMEOUT, "the added memory")
    memories = await etos.memory.memories()
    assert sorted(m.content for m in memories) == sorted([PNPM, "我每天早上喝咖啡"])
    await asyncio.sleep(0.2)
    shot(settings, "5-memory-added")

    # 6. Edit… the new memory in the same editor.
    added = next(m for m in memories if m.content == "我每天早上喝咖啡")
    page.select_ids([added.id])
    await click(page.edit_button)
    editor = await find_dialog(MemoryEditorDialog)
    await type_text(editor.content_edit, " 加一点牛奶", replace=False)
    await click(button_with_text(editor, "Save"))
    await wait_until(
        lambda: any("牛奶" in page.model.memory(r).content for r in range(page.model.rowCount())),
        TIMEOUT,
        "the edited memory",
    )
    assert (await etos.memory.get(added.id)).content == "我每天早上喝咖啡 加一点牛奶"
    shot(settings, "6-memory-edited")

    # 7. More → Export as JSON…: the file chooser (the one stand-in) and a 0600 file.
    target = tmp_path / "memories.json"
    await click(page.more_button)
    menu = page.more_menu
    await wait_until(menu.isVisible, TIMEOUT, "the More menu")
    rect = menu.actionGeometry(page.export_json_action)
    QTest.mouseClick(menu, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
    await choose_file(str(target))
    await wait_until(target.exists, TIMEOUT, "the export")
    await asyncio.sleep(0.2)
    data = json.loads(target.read_text(encoding="utf-8"))
    assert sorted(m["content"] for m in data["memories"]) == sorted(
        [PNPM, "我每天早上喝咖啡 加一点牛奶"]
    )
    assert target.stat().st_mode & 0o777 == 0o600
    shot(settings, "7-exported")
    settings.close()
