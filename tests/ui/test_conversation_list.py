"""The sidebar fetches as it scrolls (issue 21): a long-time user's conversations, a window at a time.

The whole app on a data folder seeded with 450 conversations (bulk SQL through the app's own
storage layer); the test counts the rows the sidebar's model holds, scrolls the real list and
types into the real search box.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import ConversationRow, MessageRow
from etos_desktop.ui.conversation_list import PAGE_SIZE, ConversationIdRole
from tests.helpers.chat_app import idle, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.ui_driver import type_text

COUNT = 450
START = datetime(2026, 1, 1, tzinfo=UTC)


def seed(data_dir: Path) -> None:
    db = Database(data_dir / "etos.db")
    db.open()

    def fill(session: Any) -> None:
        for c in range(COUNT):
            moment = START + timedelta(minutes=c)
            row = ConversationRow(
                title=f"Conversation {c:03d} 对话",
                created_at=moment,
                updated_at=moment,
                pinned=c in (5, 6),
            )
            session.add(row)
            session.flush()
            session.add(
                MessageRow(
                    conversation_id=row.id,
                    role="user",
                    content="about kyoto" if c % 50 == 0 else f"message of {c}",
                    created_at=moment,
                )
            )
        session.commit()

    db.call(fill)
    db.close()


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    seed(isolated_environment)
    app = await start_app(qapp, server, isolated_environment)
    await idle(app)
    yield app
    await stop_app(app)


def shown_titles(app: EtosApp) -> list[str]:
    model = app.window.sidebar.model
    return [model.conversation(r).title for r in range(model.rowCount())]  # type: ignore[union-attr]


async def scroll_to_end(app: EtosApp) -> None:
    sidebar = app.window.sidebar
    bar = sidebar.view.verticalScrollBar()
    while sidebar.model.canFetchMore(QModelIndex()) or len(app.controller._tasks):  # type: ignore[union-attr]
        bar.setValue(bar.maximum())
        await asyncio.sleep(0.005)
        await idle(app)


async def test_the_sidebar_holds_a_window_and_fetches_the_rest_as_it_scrolls(etos: EtosApp):
    model = etos.window.sidebar.model
    assert model.rowCount() == PAGE_SIZE
    titles = shown_titles(etos)
    # Pinned first, then newest first — the order of the whole list, not of a window.
    assert titles[:3] == ["Conversation 006 对话", "Conversation 005 对话", "Conversation 449 对话"]
    await scroll_to_end(etos)
    titles = shown_titles(etos)
    assert len(titles) == len(set(titles)) == COUNT
    assert titles[-1] == "Conversation 000 对话"
    assert not model.canFetchMore(QModelIndex())

    # After a change the list is read again as far as it was scrolled: nothing jumps away.
    last = model.index(COUNT - 1).data(ConversationIdRole)
    assert etos.controller is not None
    etos.controller.update_conversation(last, title="Renamed at the bottom")
    await idle(etos)
    assert model.rowCount() == COUNT
    assert "Renamed at the bottom" in shown_titles(etos)


async def test_a_search_narrows_the_sidebar_in_sql(etos: EtosApp):
    sidebar = etos.window.sidebar
    await type_text(sidebar.search, "kyoto")
    await idle(etos)
    assert shown_titles(etos) == [f"Conversation {c:03d} 对话" for c in range(400, -1, -50)]
    assert not sidebar.model.canFetchMore(QModelIndex())
    sidebar.search.clear()
    await idle(etos)
    assert sidebar.model.rowCount() == PAGE_SIZE
