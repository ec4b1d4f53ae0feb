"""Tokens and cost you can see (issue 23 item 4), through the whole app and its real widgets.

The local server reports the usage of each reply in its last stream chunk (the numbers given
with ``Reported``); the line under the reply, the context inspector and Settings → Providers'
price fields are read and driven as a person would, and the stored settings are checked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QLabel, QToolButton

from etos_desktop.app import EtosApp
from etos_desktop.core.settings import paths
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.usage.prices import ModelPrice
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.message_widget import MessageWidget
from etos_desktop.ui.settings.dialog import SettingsDialog
from etos_desktop.ui.settings.providers_page import ProvidersPage
from tests.helpers.chat_app import history, idle, send, start_app, stop_app
from tests.helpers.chat_view import assert_view_equals_reopen
from tests.helpers.fake_openai_server import FakeOpenAIServer, Reported, Text
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, find_dialog, type_text, wait_until

TIMEOUT = 15
FIRST = Reported(prompt_tokens=1234, completion_tokens=210, cached_tokens=800)
SECOND = Reported(prompt_tokens=1000, completion_tokens=100)


def usage_line(app: EtosApp, message_id: int) -> str:
    """The usage line under a message as shown ("" when there is none)."""
    widget = app.window.chat.widget(message_id)
    assert isinstance(widget, MessageWidget)
    label = widget.findChild(QLabel, "messageUsage")
    return label.text() if label is not None and label.isVisibleTo(widget) else ""


async def last_reply_id(app: EtosApp) -> int:
    rows = await history(app)
    assert rows[-1].role == "assistant"
    return int(rows[-1].id)


async def set_price_in_settings(app: EtosApp, input_price: str, output_price: str) -> None:
    """Type the chat model's prices in Settings → Providers and press Save."""
    app.window.settings_action.trigger()
    dialog = await find_dialog(SettingsDialog)
    dialog.show_page("providers")
    page = dialog.page("providers")
    assert isinstance(page, ProvidersPage)
    await wait_until(lambda: page.price_input_spin.isVisible(), what="the price fields")
    assert page.chat_combo.currentText() == "fake-chat"
    await type_text(page.price_input_spin, input_price)
    await type_text(page.price_output_spin, output_price)
    saved = expect_signal(dialog.settings_saved)
    await click(dialog.save_button, settle=False)
    await asyncio.wait_for(saved, TIMEOUT)
    await click(dialog.close_button)
    await idle(app)


async def open_inspector(app: EtosApp, message_id: int) -> ContextDialog:
    widget = app.window.chat.widget(message_id)
    assert widget is not None
    await click(widget.findChild(QToolButton, "contextButton"))
    await idle(app)
    return await wait_until(
        lambda: next((d for d in app.window.findChildren(ContextDialog) if d.isVisible()), None),
        what="the inspector",
    )


async def test_the_reported_tokens_show_under_the_reply_and_after_a_restart(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> None:
    app = await start_app(qapp, server, isolated_environment)
    try:
        server.script(Text("Paris is the capital of France.", reported=FIRST))
        outcome = await send(app, "What is the capital of France?")
        assert outcome[0] == "finished"
        (request,) = [r.body for r in server.chat_requests() if r.body.get("stream")]
        assert request["stream_options"] == {"include_usage": True}
        reply_id = await last_reply_id(app)
        assert usage_line(app, reply_id) == "Tokens: 1,234 in (800 cached) · 210 out"
        view = await assert_view_equals_reopen(app)
        assert view.messages[-1].usage == "Tokens: 1,234 in (800 cached) · 210 out"
        assert app.controller is not None
        assert app.controller.current is not None
        conversation_id = app.controller.current.id
        assert view.messages[0].usage == "", "a user message has no usage line"
    finally:
        await stop_app(app)

    again = await start_app(qapp, server, isolated_environment)
    try:
        assert again.controller is not None
        await asyncio.wait_for(again.controller.open_conversation(conversation_id), TIMEOUT)
        await idle(again)
        assert usage_line(again, reply_id) == "Tokens: 1,234 in (800 cached) · 210 out"
    finally:
        await stop_app(again)


async def test_a_price_set_in_settings_costs_each_reply_and_the_conversation(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> None:
    app = await start_app(qapp, server, isolated_environment)
    try:
        server.script(Text("Paris.", reported=FIRST), Text("Berlin.", reported=SECOND))
        await send(app, "Capital of France?")
        first_id = await last_reply_id(app)
        await send(app, "Capital of Germany?")
        second_id = await last_reply_id(app)
        assert usage_line(app, second_id) == "Tokens: 1,000 in · 100 out", "no price, no cost"

        await set_price_in_settings(app, "2.5", "10")
        stored = json.loads(app.settings.path.read_text(encoding="utf-8"))
        assert stored["model_prices"] == {
            "fake-chat": {"input": 2.5, "output": 10.0, "currency": "USD"}
        }
        # (1,234 × 2.5 + 210 × 10) / 1e6 = 0.005185; (1,000 × 2.5 + 100 × 10) / 1e6 = 0.0035.
        assert usage_line(app, first_id) == "Tokens: 1,234 in (800 cached) · 210 out · ≈ $0.0052"
        assert usage_line(app, second_id) == "Tokens: 1,000 in · 100 out · ≈ $0.0035"

        inspector = await open_inspector(app, second_id)
        lines = inspector.usage.text().splitlines()
        assert lines == [
            "This reply: Tokens: 1,000 in · 100 out · ≈ $0.0035",
            "Conversation total (2 with usage): 2,234 in (800 cached) · 310 out · ≈ $0.0087",
        ]
        inspector.close()
    finally:
        await stop_app(app)


@pytest.fixture
def refusing_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(refuse_stream_options=True) as srv:
        yield srv


async def test_a_server_refusing_stream_options_still_replies_without_a_usage_line(
    qapp: QApplication, refusing_server: FakeOpenAIServer, isolated_environment: Path
) -> None:
    app = await start_app(qapp, refusing_server, isolated_environment)
    try:
        refusing_server.script(Text("Paris.", reported=FIRST), Text("Berlin.", reported=SECOND))
        first = await send(app, "Capital of France?")
        second = await send(app, "Capital of Germany?")
        assert (first[0], second[0]) == ("finished", "finished")
        bodies: list[dict[str, Any]] = [
            r.body for r in refusing_server.chat_requests() if r.body.get("stream")
        ]
        # Asked once, refused, asked again without; from then on never asked.
        assert ["stream_options" in b for b in bodies] == [True, False, False]
        rows = [r for r in await history(app) if r.role == "assistant"]
        assert [r.content for r in rows] == ["Paris.", "Berlin."]
        assert all(usage_line(app, r.id) == "" for r in rows)
        assert not app.window.chat.banner.isVisible()
        inspector = await open_inspector(app, rows[-1].id)
        assert inspector.usage.text().splitlines() == [
            "This reply: the server reported no token usage.",
            "The server reported no token usage in this conversation yet.",
        ]
        inspector.close()
    finally:
        await stop_app(app)


async def test_the_line_is_in_chinese_and_follows_a_language_switch(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> None:
    settings = SettingsStore(paths.settings_path(isolated_environment))
    settings.load()
    settings.set("ui.language", "zh")
    settings.set_model_price("fake-chat", ModelPrice(input=1.0, output=2.0, currency="CNY"))
    settings.save()
    app = await start_app(qapp, server, isolated_environment)
    try:
        server.script(Text("巴黎。", reported=FIRST))
        await send(app, "法国的首都是哪里？")
        reply_id = await last_reply_id(app)
        # (1,234 × 1 + 210 × 2) / 1e6 = 0.001654 yuan.
        assert (
            usage_line(app, reply_id) == "用量：输入 1,234（缓存命中 800） · 输出 210 · ≈ ¥0.0017"
        )
        app.install_language("en")
        await idle(app)
        assert usage_line(app, reply_id) == "Tokens: 1,234 in (800 cached) · 210 out · ≈ ¥0.0017"
    finally:
        await stop_app(app)
