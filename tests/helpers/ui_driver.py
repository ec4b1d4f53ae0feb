"""Driving the app's real widgets and dialogs from async tests, without nesting a Qt event loop.

The app opens its dialogs with ``open()`` and awaits them (``etos_desktop.ui.dialogs``); a test
finds the dialog the app opened among the visible top-level widgets, types into its fields and
clicks its buttons with QTest, then polls on the running loop for the outcome (STYLE recipe 9).
Only the operating system's file chooser is answered directly (``choose_file``), and even that
goes through the app's real awaiting path.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QInputMethodEvent, QTextCursor, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QDialog,
    QFileDialog,
    QLineEdit,
    QMessageBox,
    QStyle,
    QStyleOptionButton,
    QTextBrowser,
    QToolButton,
    QWidget,
)

D = TypeVar("D", bound=QWidget)

TIMEOUT = 10.0


async def wait_until(predicate: Callable[[], Any], timeout: float = TIMEOUT, what: str = "") -> Any:
    """Poll ``predicate`` on the running loop until it is truthy; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.01)


def visible_dialogs(kind: type[D] = QDialog) -> list[D]:  # type: ignore[assignment]
    """The visible top-level widgets of ``kind``, newest last."""
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]


async def find_dialog(
    kind: type[D] = QDialog,  # type: ignore[assignment]
    *,
    name: str | None = None,
    timeout: float = TIMEOUT,
) -> D:
    """Wait for the app to open a visible dialog of ``kind`` (and object name ``name``)."""

    def found() -> D | None:
        for widget in visible_dialogs(kind):
            if name is None or widget.objectName() == name:
                return widget
        return None

    return await wait_until(found, timeout, f"a visible {kind.__name__} {name or ''}")


async def click(widget: QWidget, *, settle: bool = True) -> None:
    """Click ``widget`` with the left mouse button, as a person would."""
    assert widget.isVisible(), f"{widget.objectName() or widget} is not visible"
    assert widget.isEnabled(), f"{widget.objectName() or widget} is disabled"
    center = QPoint(widget.width() // 2, widget.height() // 2)
    if isinstance(widget, QCheckBox):
        # On the box itself: a check box laid out wider than its text ignores clicks beside it.
        option = QStyleOptionButton()
        widget.initStyleOption(option)
        box = widget.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, widget)
        center = box.center()
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, center)
    if settle:
        await asyncio.sleep(0)


async def type_text(widget: QWidget, text: str, *, replace: bool = True) -> None:
    """Type ``text`` into a line or text edit (selecting what is there first when ``replace``).

    ASCII is typed key by key, a line break with Return; other text (Chinese…) arrives as an
    input method commits it, one run at a time (QTest's key clicks take printable ASCII only,
    and abort the process on a control character).
    """
    widget.setFocus()
    if replace:
        QTest.keyClick(widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClick(widget, Qt.Key.Key_Delete)
    for run in re.findall(r"[\x20-\x7e]+|\n|[^\x20-\x7e\n]+", text):
        if run == "\n":
            QTest.keyClick(widget, Qt.Key.Key_Return)
        elif run.isascii() and run.isprintable():
            QTest.keyClicks(widget, run)
        else:
            event = QInputMethodEvent()
            event.setCommitString(run)
            QApplication.sendEvent(widget, event)
    await asyncio.sleep(0)


async def scroll_wheel(widget: QWidget, notches: int) -> None:
    """Turn the mouse wheel over ``widget`` (positive: up, away from the user)."""
    center = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(
        center,
        QPointF(widget.mapToGlobal(center.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)
    await asyncio.sleep(0)


def tool_button(parent: QWidget, name: str) -> QToolButton:
    """The tool button of ``parent`` with object name ``name`` (a message's actions)."""
    found = parent.findChild(QToolButton, name)
    assert found is not None, f"no {name} in {parent.objectName() or parent}"
    return found


def button_with_text(parent: QWidget, text: str) -> QAbstractButton:
    """The visible button of ``parent`` whose text (without ``&``) is ``text``."""
    buttons = [
        b
        for b in parent.findChildren(QAbstractButton)
        if b.text().replace("&", "") == text and b.isVisible()
    ]
    assert buttons, f"no visible button {text!r} in {parent.objectName() or parent}: " + ", ".join(
        repr(b.text()) for b in parent.findChildren(QAbstractButton) if b.isVisible()
    )
    return buttons[0]


async def answer_box(button: str, *, timeout: float = TIMEOUT) -> str:
    """Wait for a message box, click its button labelled ``button``; return the box's text."""
    box = await find_dialog(QMessageBox, timeout=timeout)
    text = box.text()
    await click(button_with_text(box, button))
    await wait_until(lambda: not _alive_and_visible(box), timeout, "the message box to close")
    return text


async def choose_file(path: str, *, timeout: float = TIMEOUT) -> None:
    """Answer the file chooser the app opened with ``path`` (the one allowed stand-in)."""
    dialog = await find_dialog(QFileDialog, timeout=timeout)
    dialog.selectFile(path)
    # selectFile leaves the name field alone while it has focus, as a save dialog's has: type
    # the path there, as a person would.
    name_field = dialog.findChild(QLineEdit, "fileNameEdit")
    if name_field is not None and name_field.text() != path:
        name_field.setText(path)
    dialog.accept()
    await asyncio.sleep(0)


async def cancel_file_chooser(*, timeout: float = TIMEOUT) -> str:
    """Cancel the file chooser the app opened; return the folder it had opened in."""
    dialog = await find_dialog(QFileDialog, timeout=timeout)
    directory = dialog.directory().absolutePath()
    dialog.reject()
    await asyncio.sleep(0)
    return directory


def _alive_and_visible(widget: QWidget) -> bool:
    import shiboken6

    return shiboken6.isValid(widget) and widget.isVisible()


async def click_link(browser: QTextBrowser, href: str) -> None:
    """Click the link to ``href`` in a text browser, where it is drawn."""
    document = browser.document()
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.isValid() and fragment.charFormat().anchorHref() == href:
                cursor = QTextCursor(document)
                cursor.setPosition(fragment.position() + max(0, fragment.length() // 2))
                point = browser.cursorRect(cursor).center()
                viewport = browser.viewport()
                QTest.mouseClick(
                    viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point
                )
                await asyncio.sleep(0)
                return
            iterator += 1
        block = block.next()
    raise AssertionError(f"no link to {href!r} in the text")
