"""Search every message (Ctrl+Shift+F) and find in the open conversation (Ctrl+F), in the app.

Driven by the real keyboard and mouse on the real window: the hit in an old conversation opens
that conversation scrolled to the message, marked, and the view is what a reopen shows.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.chat.search import MessageIndexer, MessageSearch
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.message_fts import IndexCount
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.ui import theme
from etos_desktop.ui.message_search import MessageSearchDialog, content_browser
from etos_desktop.ui.message_widget import MessageWidget
from tests.helpers.chat_app import idle, send, start_app, stop_app
from tests.helpers.chat_view import assert_view_equals_reopen
from tests.helpers.contrast import AA, contrast_ratio
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text
from tests.helpers.message_index import make_v9_database
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, find_dialog, type_text, wait_until

TIMEOUT = 15
OLD = datetime(2025, 3, 14, 9, 30, tzinfo=UTC)
TARGET_TEXT = "那天我的咖啡机突然坏了，我们聊了好久怎么修 the espresso pump."


async def seed(data_dir: Path) -> dict[str, Any]:
    """Three conversations; the oldest has 60 messages and the target deep in it."""
    clock = FakeClock(OLD)
    db = Database(data_dir / "etos.db", clock=clock)
    await db.open_async()
    repo = ChatRepository(db)
    ids: dict[str, Any] = {}
    old = await repo.create_conversation("Kitchen repairs")
    ids["old"] = old.id
    ids["old_messages"] = []
    for i in range(60):
        clock.advance(minutes=3)
        if i == 8:
            text = TARGET_TEXT
        elif i == 5:
            text = "An otter swam by the river bank while we talked."
        elif i == 55:
            text = "Otters again: the otter family came back."
        else:
            text = f"Message {i} about the weather, the garden and 今天的天气。"
        role = "user" if i % 2 == 0 else "assistant"
        row = await repo.add_message(old.id or 0, role, text)
        ids["old_messages"].append(row.id)
    ids["target"] = ids["old_messages"][8]
    for title in ("Travel plans", "Reading list"):
        clock.advance(days=30)
        conversation = await repo.create_conversation(title)
        for i in range(4):
            clock.advance(minutes=1)
            await repo.add_message(
                conversation.id or 0, "user" if i % 2 == 0 else "assistant", f"{title} {i}"
            )
        ids[title] = conversation.id
    db.close()
    return ids


@pytest.fixture
async def seeded(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[tuple[EtosApp, dict[str, Any]]]:
    ids = await seed(isolated_environment)
    app = await start_app(qapp, server, isolated_environment)
    assert app.message_indexer is not None
    await asyncio.wait_for(app.message_indexer.idle(), TIMEOUT)
    await idle(app)
    yield app, ids
    await stop_app(app)


def _press(
    widget: Any, key: Qt.Key, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    QTest.keyClick(widget, key, modifiers)


def visible_in_viewport(app: EtosApp, message_id: int) -> bool:
    chat = app.window.chat
    widget = chat.widget(message_id)
    if widget is None or not widget.isVisible():
        return False
    viewport = chat.scroll.viewport()
    top_left = widget.mapTo(viewport, QPoint(0, 0))
    return QRect(top_left, widget.size()).intersects(viewport.rect())


async def test_a_message_in_an_old_conversation_opens_scrolled_to_it_and_marked(
    seeded: tuple[EtosApp, dict[str, Any]],
) -> None:
    app, ids = seeded
    window = app.window
    controller = app.controller
    assert controller is not None
    # The app opened the newest conversation; the old one is two months older.
    assert controller.current is not None
    assert controller.current.id == ids["Reading list"]
    window.activateWindow()
    window.chat.composer.setFocus()
    _press(
        window.chat.composer,
        Qt.Key.Key_F,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    dialog = await find_dialog(MessageSearchDialog)
    assert dialog.focusWidget() is dialog.field

    shown = expect_signal(dialog.results_shown)
    await type_text(dialog.field, "咖啡机")  # typed as an input method commits it
    (result,) = await asyncio.wait_for(shown, TIMEOUT)
    assert [hit.message_id for hit in result.hits] == [ids["target"]]
    hit = result.hits[0]
    assert hit.conversation_title == "Kitchen repairs"
    [(start, end)] = hit.snippet.marks
    assert hit.snippet.text[start:end] == "咖啡机"
    assert "1 message found" in dialog.status.text()

    # Down and Up move through the hits; Enter opens the current one.
    _press(dialog.field, Qt.Key.Key_Down)
    assert dialog.results.currentIndex().row() == 0
    jump = window.message_search.jump
    assert jump is not None
    opened = expect_signal(jump.shown)
    _press(dialog.field, Qt.Key.Key_Return)
    (message_id,) = await asyncio.wait_for(opened, TIMEOUT)
    assert message_id == ids["target"]
    assert not dialog.isVisible()
    await idle(app)
    assert controller.current is not None
    assert controller.current.id == ids["old"]

    chat = window.chat
    widget = chat.widget(ids["target"])
    assert widget is not None
    # Loaded page by page, as scrolling up loads them: the 52 newest messages down to it.
    assert chat.widget_count() == 12 + 2 * 20
    await wait_until(lambda: visible_in_viewport(app, ids["target"]), what="the message on screen")
    assert widget.property("searchHit") is True
    browser = content_browser(widget)
    assert browser is not None
    [(a, b)] = jump.marked()[ids["target"]]
    assert browser.document().toPlainText()[a:b] == "咖啡机"
    assert len(browser.extraSelections()) == 1
    await asyncio.sleep(0.3)  # the older pages lay out; the message stays in view
    assert visible_in_viewport(app, ids["target"])

    view = await assert_view_equals_reopen(app)
    assert ids["target"] in [m.id for m in view.messages]


async def test_clicking_a_hit_opens_it_and_an_empty_result_says_so(
    seeded: tuple[EtosApp, dict[str, Any]],
) -> None:
    app, ids = seeded
    window = app.window
    window.search_messages_action.trigger()  # Conversation → Search all messages…
    dialog = await find_dialog(MessageSearchDialog)
    shown = expect_signal(dialog.results_shown)
    await type_text(dialog.field, "nothing-like-this")
    await asyncio.wait_for(shown, TIMEOUT)
    assert "No message contains “nothing-like-this”." in dialog.status.text()
    shown = expect_signal(dialog.results_shown)
    await type_text(dialog.field, 'espresso "pump')  # FTS syntax is only text
    (result,) = await asyncio.wait_for(shown, TIMEOUT)
    assert [hit.message_id for hit in result.hits] == [ids["target"]]
    jump = window.message_search.jump
    assert jump is not None
    opened = expect_signal(jump.shown)
    rect = dialog.results.visualRect(dialog.model.index(0))
    QTest.mouseClick(
        dialog.results.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        rect.center(),
    )
    await asyncio.wait_for(opened, TIMEOUT)
    await wait_until(lambda: visible_in_viewport(app, ids["target"]), what="the message on screen")
    marked = jump.marked()[ids["target"]]
    widget = window.chat.widget(ids["target"])
    assert widget is not None
    text = content_browser(widget).document().toPlainText()  # type: ignore[union-attr]
    assert [text[a:b] for a, b in marked] == ["espresso", "pump"]


async def test_a_hit_deleted_meanwhile_says_so(seeded: tuple[EtosApp, dict[str, Any]]) -> None:
    app, ids = seeded
    dialog = app.window.message_search.open_search()
    shown = expect_signal(dialog.results_shown)
    await type_text(dialog.field, "espresso")
    (result,) = await asyncio.wait_for(shown, TIMEOUT)
    assert [hit.message_id for hit in result.hits] == [ids["target"]]
    assert app.controller is not None
    await app.controller.repo.delete_message(ids["target"])  # from another window, say
    jump = app.window.message_search.jump
    assert jump is not None
    missing = expect_signal(jump.missing)
    _press(dialog.field, Qt.Key.Key_Return)
    await asyncio.wait_for(missing, TIMEOUT)
    await idle(app)
    assert app.controller.current is not None
    assert app.controller.current.id == ids["old"]
    assert (
        app.window.statusBar().currentMessage()
        == "That message is no longer shown in its conversation."
    )
    await assert_view_equals_reopen(app)


async def test_ctrl_f_finds_in_the_open_conversation_beyond_the_loaded_messages(
    seeded: tuple[EtosApp, dict[str, Any]], server: FakeOpenAIServer
) -> None:
    app, ids = seeded
    window = app.window
    controller = app.controller
    assert controller is not None
    await controller.open_conversation(ids["old"])
    await idle(app)
    chat = window.chat
    assert chat.widget_count() == 12  # the newest page only
    window.activateWindow()
    chat.composer.setFocus()
    _press(chat.composer, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.message_search.find_bar
    assert bar.isVisible()
    assert QApplication.focusWidget() is bar.field

    newest, oldest = ids["old_messages"][55], ids["old_messages"][5]
    jump = window.message_search.jump
    assert jump is not None
    shown = expect_signal(chat.scroll.verticalScrollBar().valueChanged)
    await type_text(bar.field, "OTTER")
    await wait_until(lambda: bar.count.text() == "1 of 3", what="the count")
    await asyncio.wait_for(shown, TIMEOUT)
    # The newest first: message 55 holds two ("Otters", "otter").
    assert window.message_search.matches() == [(newest, 0), (newest, 1), (oldest, 0)]
    assert len(jump.marked()[newest]) == 2
    assert chat.widget(newest).property("searchHit") is True  # type: ignore[union-attr]

    _press(bar.field, Qt.Key.Key_Return)
    await wait_until(lambda: bar.count.text() == "2 of 3", what="the second match")
    # Enter again: the oldest, in a message not loaded yet — its pages are loaded.
    assert chat.widget(oldest) is None
    _press(bar.field, Qt.Key.Key_Return)
    await wait_until(lambda: bar.count.text() == "3 of 3", what="the third match")
    await wait_until(lambda: chat.widget(oldest) is not None, what="the old page")
    await wait_until(lambda: visible_in_viewport(app, oldest), what="the old match on screen")
    assert chat.widget(oldest).property("searchHit") is True  # type: ignore[union-attr]
    assert chat.widget(newest).property("searchHit") is False  # type: ignore[union-attr]
    # Shift+Enter goes back to the newer one; Enter past the oldest wraps to the newest.
    _press(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    await wait_until(lambda: bar.count.text() == "2 of 3", what="back")
    await click(bar.older_button)
    await click(bar.older_button)
    await wait_until(lambda: bar.count.text() == "1 of 3", what="wrapped")
    await click(bar.older_button)
    await click(bar.older_button)
    await wait_until(lambda: bar.count.text() == "3 of 3", what="the oldest again")

    # A new message and its reply hold the text too: counted, the view stays on the match.
    server.script(Text("Otters hold hands while they sleep."))
    outcome = await send(app, "Tell me one thing about otters")
    await wait_until(lambda: bar.count.text() == "5 of 5", what="the count with the new ones")
    assert window.message_search.matches()[-1] == (oldest, 0)
    # The chat shows the reply, as after any message; the find did not pull the view away.
    assert visible_in_viewport(app, outcome[1].id)
    assert not visible_in_viewport(app, oldest)
    assert server.chat_requests()[-1].body["messages"][-1]["content"].endswith("otters")

    await type_text(bar.field, "no such words")
    await wait_until(lambda: bar.count.text() == "No matches", what="no matches")
    # Esc closes the bar (and stops no reply); the marks go.
    _press(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert jump.marked() == {}
    assert not any(w.property("searchHit") for w in chat.findChildren(MessageWidget))
    assert QApplication.focusWidget() is chat.composer
    await assert_view_equals_reopen(app)


async def test_a_v9_database_is_indexed_in_the_background_and_then_searchable(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> None:
    ids = make_v9_database(isolated_environment / "etos.db", conversations=3, per_conversation=20)
    app = await start_app(qapp, server, isolated_environment)
    try:
        assert app.message_indexer is not None
        await asyncio.wait_for(app.message_indexer.idle(), TIMEOUT)
        dialog = app.window.message_search.open_search()
        shown = expect_signal(dialog.results_shown)
        await type_text(dialog.field, "zebracorn")
        (result,) = await asyncio.wait_for(shown, TIMEOUT)
        assert [hit.message_id for hit in result.hits] == [ids[3]]
        assert result.indexing is None
        assert "Indexing" not in dialog.status.text()
        dialog.close()
    finally:
        await stop_app(app)


async def test_the_dialog_says_it_is_still_indexing_with_progress(
    qapp: QApplication, tmp_path: Path
) -> None:
    ids = make_v9_database(tmp_path / "etos.db", conversations=3, per_conversation=30)
    db = Database(tmp_path / "etos.db", tmp_path / "backups")
    await db.open_async()
    dialog = MessageSearchDialog(debounce_ms=0)
    try:
        search = MessageSearch(db)
        dialog.set_search(search.search_messages)
        dialog.show()
        shown = expect_signal(dialog.results_shown)
        await type_text(dialog.field, "zebracorn")
        (result,) = await asyncio.wait_for(shown, TIMEOUT)
        assert result.indexing == IndexCount(0, len(ids))
        assert dialog.status.text().startswith(f"Indexing messages… 0 of {len(ids)}.")
        assert "No message contains “zebracorn”." in dialog.status.text()

        indexer = MessageIndexer(db, batch_chars=800, pause=0)
        texts: list[str] = []

        def on_progress(progress: IndexCount | None) -> None:
            dialog.set_progress(progress)
            texts.append(dialog.status.text())

        indexer.subscribe(on_progress)
        again = expect_signal(dialog.results_shown)
        await indexer.index_pending()
        assert any(
            f"Indexing messages… {n} of {len(ids)}." in t for t in texts for n in range(1, len(ids))
        )
        assert "Indexing" not in texts[-1]
        # Once done, the dialog searches again: the old message is found.
        (result,) = await asyncio.wait_for(again, TIMEOUT)
        assert [hit.message_id for hit in result.hits] == [ids[3]]
        assert dialog.model.rowCount() == 1
        assert "Indexing" not in dialog.status.text()
    finally:
        dialog.close()
        dialog.deleteLater()
        db.close()


@pytest.mark.parametrize("colors", [theme.LIGHT, theme.DARK], ids=["light", "dark"])
def test_marked_text_reads_in_both_themes(colors: theme.Colors) -> None:
    def rgb(value: str) -> tuple[int, int, int]:
        color = QColor(value)
        return (color.red(), color.green(), color.blue())

    for background in (colors.mark, colors.mark_current):
        assert contrast_ratio(rgb(colors.mark_text), rgb(background)) >= AA
    # The current match stands out from the others.
    assert rgb(colors.mark) != rgb(colors.mark_current)
