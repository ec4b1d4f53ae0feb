"""What assistive technology is told about widgets, and whether the keyboard reaches them.

The name checked is the one Qt's accessibility layer reports (``QAccessibleInterface.text``):
a button's text, a label whose buddy is the field, a form layout's label, or an explicit
``setAccessibleName``: what a screen reader reads out.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QScrollBar,
    QTabBar,
    QTextEdit,
    QWidget,
)

#: Widgets a person operates (the rest show things).
INTERACTIVE = (
    QAbstractButton,
    QLineEdit,
    QAbstractSpinBox,
    QComboBox,
    QPlainTextEdit,
    QTextEdit,
    QAbstractItemView,
    QAbstractSlider,
    QTabBar,
)


def accessible_name(widget: QWidget) -> str:
    """The name Qt's accessibility layer gives ``widget``."""
    interface = QAccessible.queryAccessibleInterface(widget)
    if interface is None:
        return ""
    return interface.text(QAccessible.Text.Name).strip()


def _parts_of_another_control(widget: QWidget) -> bool:
    # A spin box's or an editable combo box's own line edit, a scroll area's bars, a table's
    # header: the control they belong to carries the name.
    parent = widget.parentWidget()
    if isinstance(widget, QLineEdit) and isinstance(parent, QAbstractSpinBox | QComboBox):
        return True
    return isinstance(widget, QScrollBar | QHeaderView)


def controls(window: QWidget) -> list[QWidget]:
    """The visible, interactive controls of ``window`` (its own, not other windows')."""
    found = []
    for widget in window.findChildren(QWidget):
        if (
            isinstance(widget, INTERACTIVE)
            and widget.isVisibleTo(window)
            and widget.window() is window
            and not _parts_of_another_control(widget)
        ):
            found.append(widget)
    return found


def describe(widget: QWidget) -> str:
    """A widget, for a failure message: its class, object name and where it is."""
    trail = []
    parent = widget.parentWidget()
    while parent is not None and len(trail) < 3:
        trail.append(parent.objectName() or type(parent).__name__)
        parent = parent.parentWidget()
    name = widget.objectName() or type(widget).__name__
    return f"{type(widget).__name__} {name!r} in {'/'.join(reversed(trail))}"


def unnamed_controls(window: QWidget) -> list[str]:
    """The interactive controls of ``window`` without an accessible name."""
    return [describe(w) for w in controls(window) if not accessible_name(w)]


def takes_tab_focus(widget: QWidget) -> bool:
    """Whether Tab can move the focus to ``widget`` (enabled, shown, tab focus policy)."""
    return (
        widget.isEnabled()
        and widget.isVisible()
        and bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)
    )


async def focus_chain(start: QWidget, *, limit: int = 400) -> list[QWidget]:
    """The widgets Tab visits from ``start`` until it comes back (or ``limit`` presses).

    Tab is pressed on the focused widget each time, as a person would; the loop runs between
    presses (never a nested ``processEvents``: qasync drops tasks started inside one).
    """
    from PySide6.QtTest import QTest

    start.setFocus(Qt.FocusReason.TabFocusReason)
    await asyncio.sleep(0)
    first = QApplication.focusWidget()
    visited: list[QWidget] = [first] if first is not None else []
    for _ in range(limit):
        current = QApplication.focusWidget()
        if current is None:
            break
        QTest.keyClick(current, Qt.Key.Key_Tab)
        await asyncio.sleep(0)
        focused = QApplication.focusWidget()
        if focused is None or focused is first:
            break
        visited.append(focused)
    return visited
