"""A message's actions as small icon buttons that show on hover or keyboard focus.

The buttons (copy, regenerate, edit, delete, context, remember; the version switcher) are laid
out under every message from the start and keep their place: they are in the Tab order and
read by screen readers (each has a tooltip and an accessible name), but they paint nothing
until the pointer is over their message or one of them has the keyboard focus, so a
conversation reads as text, not as rows of links. Nothing moves when they appear.

They are cheap: a long conversation opens with a bar per message on screen, so the icons are
drawn once per colour, size and pixel ratio and shared (``action_icon``), and revealing a bar
only repaints it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QIcon,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget
from typing_extensions import override

__all__ = ["ICON_NAMES", "ActionBar", "ActionButton", "action_icon"]

#: The icons drawn here, by name.
ICON_NAMES = (
    "copy",
    "check",
    "regenerate",
    "edit",
    "delete",
    "context",
    "remember",
    "previous",
    "next",
)


def _draw(painter: QPainter, name: str) -> None:
    """Draw icon ``name`` in a 16×16 box with the painter's pen (strokes only)."""
    if name == "copy":
        painter.drawRoundedRect(QRectF(5.5, 5.5, 8, 8.5), 1.6, 1.6)
        path = QPainterPath(QPointF(3.0, 10.5))
        path.lineTo(3.0, 3.6)
        path.quadTo(3.0, 2.5, 4.1, 2.5)
        path.lineTo(10.5, 2.5)
        painter.drawPath(path)
    elif name == "check":
        path = QPainterPath(QPointF(3.0, 8.5))
        path.lineTo(6.5, 12.0)
        path.lineTo(13.0, 4.5)
        painter.drawPath(path)
    elif name == "regenerate":
        rect = QRectF(3.0, 3.0, 10.0, 10.0)
        path = QPainterPath()
        path.arcMoveTo(rect, 60)
        path.arcTo(rect, 60, 280)
        painter.drawPath(path)
        # The arrow head at the arc's start (top right), pointing along it.
        tip = QPointF(8 + 5 * math.cos(math.radians(60)), 8 - 5 * math.sin(math.radians(60)))
        head = QPainterPath(QPointF(tip.x() - 3.2, tip.y() - 1.0))
        head.lineTo(tip)
        head.lineTo(QPointF(tip.x() - 0.6, tip.y() + 3.2))
        painter.drawPath(head)
    elif name == "edit":
        path = QPainterPath(QPointF(3.0, 13.0))
        path.lineTo(3.6, 10.2)
        path.lineTo(10.6, 3.2)
        path.quadTo(11.5, 2.4, 12.4, 3.2)
        path.lineTo(12.8, 3.6)
        path.quadTo(13.6, 4.5, 12.8, 5.4)
        path.lineTo(5.8, 12.4)
        path.closeSubpath()
        painter.drawPath(path)
        painter.drawLine(QPointF(9.4, 4.4), QPointF(11.6, 6.6))
    elif name == "delete":
        painter.drawLine(QPointF(2.5, 4.5), QPointF(13.5, 4.5))
        lid = QPainterPath(QPointF(6.0, 4.5))
        lid.lineTo(6.0, 2.8)
        lid.lineTo(10.0, 2.8)
        lid.lineTo(10.0, 4.5)
        painter.drawPath(lid)
        body = QPainterPath(QPointF(4.0, 4.5))
        body.lineTo(4.8, 13.5)
        body.lineTo(11.2, 13.5)
        body.lineTo(12.0, 4.5)
        painter.drawPath(body)
        painter.drawLine(QPointF(6.8, 7.0), QPointF(7.0, 11.2))
        painter.drawLine(QPointF(9.2, 7.0), QPointF(9.0, 11.2))
    elif name == "context":
        # Stacked layers: what was sent with the reply.
        for top in (2.5, 6.0):
            path = QPainterPath(QPointF(8.0, top))
            path.lineTo(14.0, top + 2.8)
            path.lineTo(8.0, top + 5.6)
            path.lineTo(2.0, top + 2.8)
            path.closeSubpath()
            painter.drawPath(path)
        bottom = QPainterPath(QPointF(2.0, 12.3))
        bottom.lineTo(8.0, 15.1)
        bottom.lineTo(14.0, 12.3)
        painter.drawPath(bottom)
    elif name == "remember":
        path = QPainterPath(QPointF(4.0, 2.5))
        path.lineTo(12.0, 2.5)
        path.lineTo(12.0, 14.0)
        path.lineTo(8.0, 10.8)
        path.lineTo(4.0, 14.0)
        path.closeSubpath()
        painter.drawPath(path)
    elif name in ("previous", "next"):
        x0, x1 = (10.0, 6.0) if name == "previous" else (6.0, 10.0)
        path = QPainterPath(QPointF(x0, 3.5))
        path.lineTo(x1, 8.0)
        path.lineTo(x0, 12.5)
        painter.drawPath(path)
    else:
        raise ValueError(f"no icon named {name!r}")


@functools.lru_cache(maxsize=256)
def _pixmap(name: str, rgba: int, side: int, ratio: float) -> QPixmap:
    pixmap = QPixmap(max(1, round(side * ratio)), max(1, round(side * ratio)))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.scale(side / 16, side / 16)
    pen = QPen(QColor.fromRgba(rgba), 1.4)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    _draw(painter, name)
    painter.end()
    return pixmap


@functools.lru_cache(maxsize=128)
def _icon(name: str, normal: int, active: int, disabled: int, side: int, ratio: float) -> QIcon:
    icon = QIcon()
    for mode, rgba in (
        (QIcon.Mode.Normal, normal),
        (QIcon.Mode.Active, active),
        (QIcon.Mode.Selected, active),
        (QIcon.Mode.Disabled, disabled),
    ):
        icon.addPixmap(_pixmap(name, rgba, side, ratio), mode)
    return icon


def action_icon(name: str, palette: QPalette, side: int, ratio: float = 1.0) -> QIcon:
    """The icon ``name`` in ``palette``'s muted text colour (its text colour on hover).

    Drawn once per colour, size and pixel ratio, and shared by every message.
    """
    muted = palette.color(QPalette.ColorRole.PlaceholderText).rgba()
    text = palette.color(QPalette.ColorRole.Text).rgba()
    disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).rgba()
    return _icon(name, muted, text, disabled, side, ratio)


class ActionButton(QToolButton):
    """A message action: an icon, a tooltip and an accessible name; drawn when its bar shows.

    Args:
        bar: The bar it belongs to (it says whether the actions show).
        icon_name: One of ``ICON_NAMES``.
        always: Drawn even when the bar's actions are hidden (the version switcher, which
            says there are other versions).
    """

    def __init__(self, bar: ActionBar, icon_name: str, *, always: bool = False) -> None:
        super().__init__(bar)
        self._bar = bar
        self._icon_name = icon_name
        self.always = always
        self.setProperty("messageAction", True)
        self.setAutoRaise(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        # Tab reaches it (the keyboard's way to the actions); a click does not take the focus
        # from the composer.
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)

    def set_icon_name(self, name: str) -> None:
        """Show another icon (Copy's check mark after copying)."""
        if name != self._icon_name:
            self._icon_name = name
            self.redraw()

    def redraw(self) -> None:
        """Draw the icon again for the current palette, font size and pixel ratio."""
        side = self._bar.icon_side()
        self.setIconSize(QSize(side, side))
        self.setIcon(action_icon(self._icon_name, self.palette(), side, self.devicePixelRatioF()))

    def set_words(self, words: str) -> None:
        """The action's name: its tooltip and what a screen reader says."""
        self.setToolTip(words)
        self.setAccessibleName(words)

    def shown(self) -> bool:
        """Whether it is drawn now (its bar shows its actions, or it always shows)."""
        return self.always or self._bar.revealed()

    @override
    def paintEvent(self, event: QPaintEvent) -> None:
        if self.shown():
            super().paintEvent(event)

    @override
    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self._bar.update_revealed()

    @override
    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._bar.update_revealed()

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.redraw()


class ActionBar(QWidget):
    """The row of a message's action buttons; they show while it is hovered or focused.

    The message tells it when the pointer enters and leaves (``set_hovered``); focus on one of
    its buttons shows it too.

    Args:
        trailing: The buttons keep to the right (under a user's bubble).
    """

    def __init__(self, parent: QWidget | None = None, *, trailing: bool = False) -> None:
        super().__init__(parent)
        self._trailing = trailing
        self.setObjectName("messageActions")
        self._hovered = False
        self._revealed = False
        self._buttons: list[ActionButton] = []
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(2)
        if trailing:
            self._layout.addStretch(1)

    def add_button(
        self, name: str, icon_name: str, slot: Callable[[], None], *, always: bool = False
    ) -> ActionButton:
        """Add a button (object name ``name``) at the end of the row."""
        button = ActionButton(self, icon_name, always=always)
        button.setObjectName(name)
        button.clicked.connect(slot)
        button.redraw()
        self._buttons.append(button)
        self._layout.addWidget(button)
        return button

    def add_widget(self, widget: QWidget) -> None:
        """Add another widget to the row (the version number)."""
        self._layout.addWidget(widget)

    def finish(self) -> None:
        """End the row: what follows the buttons is space."""
        if not self._trailing:
            self._layout.addStretch(1)

    def buttons(self) -> list[ActionButton]:
        """The buttons, in their order."""
        return list(self._buttons)

    def icon_side(self) -> int:
        """The icons' side: a line of text, so it follows the font size."""
        return max(14, round(self.fontMetrics().height() * 0.95))

    def revealed(self) -> bool:
        """Whether the actions show (the message is hovered, or a button has the focus)."""
        return self._revealed

    def set_hovered(self, hovered: bool) -> None:
        """The pointer entered (``True``) or left its message."""
        self._hovered = hovered
        self.update_revealed()

    def update_revealed(self) -> None:
        """Show or hide the actions after a change of hover or focus."""
        revealed = self._hovered or any(b.hasFocus() for b in self._buttons)
        if revealed != self._revealed:
            self._revealed = revealed
            for button in self._buttons:
                if not button.always:
                    button.update()

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            for button in self._buttons:
                button.redraw()
