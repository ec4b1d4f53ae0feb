"""Bring your memory (issue 23, item 5) through the whole app: a ChatGPT memory list and a character
card imported in Settings, then what the next chat request carried to the local server.

The app on a qasync loop against the local OpenAI-compatible server; Settings is opened from the
window's menu, the pages are chosen in its list, the imports go through the pages' real buttons,
file chooser (the one stand-in) and preview dialogs, and Save. The assertions are on the request
the server received.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.ui.settings.dialog import SettingsDialog
from etos_desktop.ui.settings.memory_dialogs import ImportPreviewDialog
from etos_desktop.ui.settings.persona_cards import CardPreviewDialog
from tests.helpers.cards import card_png, png_image, v2_card
from tests.helpers.chat_app import idle, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import button_with_text, choose_file, click, find_dialog, wait_until

TIMEOUT = 15
CHATGPT_LIST = """Here is everything I remember about you:

1. [2024-05-01] - User keeps bees on a rooftop in Porto.
2. [2024-06-12] - Prefers answers without bullet points.

Let me know if you'd like me to forget anything!
"""


def chat_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.chat_requests() if r.body.get("stream")]


async def open_page(app: EtosApp, qtbot: Any, name: str) -> tuple[SettingsDialog, Any]:
    if not any(d.isVisible() for d in app.window.findChildren(SettingsDialog)):
        app.window.settings_action.trigger()
    dialog = await wait_until(
        lambda: next((d for d in app.window.findChildren(SettingsDialog) if d.isVisible()), None),
        what="the Settings dialog",
    )
    row = dialog.page_names().index(name)
    rect = dialog.page_list.visualItemRect(dialog.page_list.item(row))
    qtbot.mouseClick(dialog.page_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    page = dialog.page(name)
    await wait_until(lambda: page.isVisible(), what=f"the {name} page")
    await page.wait_idle()
    return dialog, page


async def test_an_imported_memory_list_and_card_are_in_the_next_request(
    qapp: QApplication,
    qtbot: Any,
    server: FakeOpenAIServer,
    isolated_environment: Path,
    tmp_path: Path,
) -> None:
    memories = tmp_path / "chatgpt memory.txt"
    memories.write_text(CHATGPT_LIST, encoding="utf-8")
    card = tmp_path / "Mira.png"
    card.write_bytes(card_png(v2_card(), image=png_image(40, 60)))
    app = await start_app(qapp, server, isolated_environment, per_message="auto")
    try:
        assert app.memory is not None
        assert app.controller is not None
        dialog, memory_page = await open_page(app, qtbot, "memory")
        changed = expect_signal(memory_page.memories_changed)
        memory_page.import_list_action.trigger()
        await choose_file(str(memories))
        preview = await find_dialog(ImportPreviewDialog, name="memoryImportPreview")
        assert preview.source_label.text() == "ChatGPT memory list · 2 facts"
        await click(button_with_text(preview, "Import"))
        await asyncio.wait_for(changed, TIMEOUT)
        await memory_page.wait_idle()
        assert memory_page.model.rowCount() == 2

        dialog, persona_page = await open_page(app, qtbot, "persona")
        await click(persona_page.import_card_button)
        await choose_file(str(card))
        card_preview = await find_dialog(CardPreviewDialog, name="cardPreview")
        await click(button_with_text(card_preview, "Use as persona"))
        await persona_page.wait_idle()
        saved = expect_signal(dialog.settings_saved)
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        await asyncio.wait_for(saved, TIMEOUT)
        await click(dialog.close_button)
        await idle(app)
        assert app.settings.get_str("persona.name") == "Mira"
        await wait_until(lambda: app.window.chat.companion_name == "Mira", what="the new name")

        opened = expect_signal(app.controller.conversation_opened)
        app.window.new_action.trigger()
        await asyncio.wait_for(opened, TIMEOUT)
        await idle(app)
        chat = app.window.chat
        chat.composer.setPlainText("Good evening! What should I plant this spring?")
        await click(chat.send_button)
        await idle(app)
        system = chat_requests(server)[-1]["messages"][0]["content"]
        assert "Your name is Mira." in system
        assert "Mira is a lighthouse keeper who writes letters to the user." in system
        assert "Personality: patient, dry-humoured, curious" in system
        assert "User keeps bees on a rooftop in Porto." in system
        assert "Prefers answers without bullet points." in system
        assert "Let me know" not in system  # the unticked remark stayed out
        assert "first_mes" not in system
        assert "a visitor, at this hour" not in system
    finally:
        await stop_app(app)
