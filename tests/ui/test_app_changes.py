"""Open views follow the data changes (``core/changes.py``): the whole app on a qasync loop.

A memory saved by the chat — the model's ``save_memory`` or the user's ``/remember`` — while
Settings → Memory is open appears in the open page, and the welcome's count follows, from the
one ``ChangesBridge.changed`` signal, without reopening anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.changes import DataChange, MemoriesChanged, MemoryChange
from etos_desktop.ui.settings.memory_page import MemoryPage
from tests.helpers.chat_app import idle, send, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, ToolCall
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, wait_until

TIMEOUT = 15


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment)
    yield app
    await stop_app(app)


async def open_memory_page(etos: EtosApp) -> MemoryPage:
    etos.window.settings_action.trigger()
    await wait_until(lambda: etos._settings_dialog is not None)
    dialog = etos._settings_dialog
    page = dialog.page("memory")
    assert isinstance(page, MemoryPage)
    refreshed = expect_signal(page.refreshed)
    dialog.show_page("memory")
    await asyncio.wait_for(refreshed, TIMEOUT)
    await page.wait_idle()
    return page


def shown(page: MemoryPage) -> list[str]:
    return [memory.content for memory in page.model.records()]


async def test_memories_the_chat_saves_appear_in_the_open_memory_page_and_the_welcome(
    etos: EtosApp, server: FakeOpenAIServer
) -> None:
    assert etos.changes_bridge is not None
    heard: list[DataChange] = []
    etos.changes_bridge.changed.connect(heard.append)
    chat = etos.window.chat
    etos.window.new_action.trigger()
    await idle(etos)
    await wait_until(lambda: chat.welcome.memory_count == 0)
    page = await open_memory_page(etos)
    assert shown(page) == []

    # The model's save_memory, while the page is open.
    server.script(
        ToolCall("save_memory", '{"content": "The user uses pnpm", "kind": "preference"}'),
        Text("Noted!"),
    )
    refreshed = expect_signal(page.refreshed)
    await send(etos, "remember I use pnpm")
    await asyncio.wait_for(refreshed, TIMEOUT)
    assert shown(page) == ["The user uses pnpm"]
    saved = [c for c in heard if isinstance(c, MemoriesChanged)]
    assert [(c.reason, c.source) for c in saved] == [(MemoryChange.SAVED, "assistant_action")]
    assert saved[0].ids == (page.model.records()[0].id,)

    # The user's /remember, from the welcome of a new conversation: its count follows too.
    etos.window.new_action.trigger()
    await idle(etos)
    await wait_until(lambda: chat.welcome.memory_count == 1)
    refreshed = expect_signal(page.refreshed)
    chat.composer.setPlainText("/remember I like green tea")
    await click(chat.send_button)
    await asyncio.wait_for(refreshed, TIMEOUT)
    await idle(etos)
    assert sorted(shown(page)) == ["I like green tea", "The user uses pnpm"]
    await wait_until(lambda: chat.welcome.memory_count == 2)
    await page.wait_idle()
