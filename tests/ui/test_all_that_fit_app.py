"""All that fit through the real app (issue 18): chosen on the Settings page, seen in the request
and in the inspector.

The whole app on a qasync loop against the local server. The test starts with a fixed number
(the test helpers' choice), switches to Automatic and sets the budget with the real controls of
Settings → Memory, presses Save, and then asserts on what the server received and on what the
inspector of that reply says.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolButton

from etos_desktop.app import EtosApp
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.settings.dialog import SettingsDialog
from etos_desktop.ui.settings.memory_page import MemoryPage
from tests.helpers.chat_app import history, idle, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, wait_until

TIMEOUT = 15
MEMORIES = (
    "The user uses pnpm to install JavaScript packages.",
    "The user is allergic to peanuts.",
    "The user lives in Lisbon and works as a nurse.",
)
QUESTION = "What is the capital of France?"


def chat_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.chat_requests() if r.body.get("stream")]


async def send(app: EtosApp, text: str) -> None:
    chat = app.window.chat
    chat.composer.setPlainText(text)
    await click(chat.send_button)
    await idle(app)


async def open_memory_settings(app: EtosApp, qtbot: Any) -> tuple[SettingsDialog, MemoryPage]:
    app.window.settings_action.trigger()
    dialog = await wait_until(
        lambda: next((d for d in app.window.findChildren(SettingsDialog) if d.isVisible()), None),
        what="the Settings dialog",
    )
    row = dialog.page_names().index("memory")
    rect = dialog.page_list.visualItemRect(dialog.page_list.item(row))
    qtbot.mouseClick(dialog.page_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    page = dialog.page("memory")
    assert isinstance(page, MemoryPage)
    await wait_until(lambda: page.isVisible(), what="the Memory page")
    await page.wait_idle()
    return dialog, page


async def open_inspector(app: EtosApp) -> ContextDialog:
    rows = await history(app)
    widget = app.window.chat.widget(rows[-1].id)
    assert widget is not None
    await click(widget.findChild(QToolButton, "contextButton"))
    await idle(app)
    return await wait_until(
        lambda: next((d for d in app.window.findChildren(ContextDialog) if d.isVisible()), None),
        what="the inspector",
    )


async def test_automatic_chosen_in_settings_sends_every_memory_and_the_inspector_says_why(
    qapp: QApplication, qtbot: Any, server: FakeOpenAIServer, isolated_environment: Path
):
    app = await start_app(qapp, server, isolated_environment)
    try:
        assert app.memory is not None
        ids = [(await app.memory.save(text, "fact")).id for text in MEMORIES]
        opened = expect_signal(app.controller.conversation_opened)  # type: ignore[union-attr]
        app.window.new_action.trigger()
        await asyncio.wait_for(opened, TIMEOUT)
        await idle(app)
        await send(app, QUESTION)
        before = chat_requests(server)[-1]["messages"]
        assert "<standing_memories>" not in before[0]["content"]
        assert not any("peanuts" in str(m["content"]) for m in before)

        dialog, page = await open_memory_settings(app, qtbot)
        combo, budget = page.per_message_combo, page.fit_budget_spin
        assert combo.currentData() == "fixed"
        assert not budget.isEnabled()
        assert combo.accessibleName() == "Memories per message"
        assert "all of them while they fit" in combo.toolTip()
        # The keyboard, as a person would: focus the combo, move to the choice above.
        combo.setFocus()
        qtbot.keyClick(combo, Qt.Key.Key_Up)
        assert combo.currentData() == "auto"
        assert combo.currentText() == "Automatic — all that fit, else the best matches"
        assert budget.isEnabled()
        budget.setFocus()
        qtbot.keyClick(budget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(budget, "1200")
        assert budget.value() == 1200
        assert dialog.is_modified()
        saved = expect_signal(dialog.settings_saved)
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        await asyncio.wait_for(saved, TIMEOUT)
        assert app.settings.get_str("memory.per_message") == "auto"
        assert app.settings.get_int("memory.all_that_fit_tokens") == 1200
        await click(dialog.close_button)

        await send(app, QUESTION)
        await send(app, "And of Portugal?")
        first, second = (body["messages"] for body in chat_requests(server)[-2:])
        system = first[0]["content"]
        assert system.index("<standing_memories>") < system.index("</standing_memories>")
        standing = system.split("<standing_memories>\n", 1)[1]
        assert [standing.index(f"- #{i} (fact, ") for i in ids] == sorted(
            standing.index(f"- #{i} (fact, ") for i in ids
        )
        for text in MEMORIES:
            assert text in standing
        assert second[0] == first[0]  # the same prefix on the next turn
        assert [m["role"] for m in first].count("system") == 1  # no per-turn memory block

        inspector = await open_inspector(app)
        status = inspector.memory_status.text()
        assert "All 3 saved memories were sent" in status
        assert f"of the {inspector.locale().toString(1200)}-token budget" in status
        titles = inspector.item_titles()
        assert "All your memories: 3, all that fit" in titles
        assert titles[titles.index("All your memories: 3, all that fit") + 1].startswith(
            f"#{ids[0]} Fact"
        )
        assert MEMORIES[1] in inspector.item_text(f"#{ids[1]} Fact")
        inspector.close()

        # A temporary conversation still sends nothing.
        opened = expect_signal(app.controller.conversation_opened)  # type: ignore[union-attr]
        app.window.new_temp_action.trigger()
        await asyncio.wait_for(opened, TIMEOUT)
        await idle(app)
        await send(app, QUESTION)
        sent = str(chat_requests(server)[-1]["messages"])
        assert "peanuts" not in sent
        assert "<standing_memories>" not in sent
    finally:
        await stop_app(app)
