"""How wide a user's bubble may grow: three quarters of the chat column that is on screen.

The user's messages are tinted bubbles on the right, as wide as their text up to this width;
the companion's replies stand on the chat's background beside its avatar, the column's width
(``MessageWidget`` draws both; their colours are the themes' ``QFrame#userMessage`` rules).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QWidget

from etos_desktop.ui import theme

#: The share of the column a user's bubble takes at most.
BUBBLE_SHARE = 0.75
#: A bubble is never narrower than this, however narrow the window (logical pixels).
MIN_BUBBLE = 160


def bubble_max_width(column: int, available: int) -> int:
    """The widest a user's bubble grows in a ``column``-wide column, ``available`` on screen."""
    return max(MIN_BUBBLE, round(min(column, available) * BUBBLE_SHARE))


#: The bubble's corner radius (logical pixels).
RADIUS = 12


def paint_bubble(widget: QWidget, bottom: int) -> None:
    """Paint ``widget``'s bubble from its top down to ``bottom`` (its actions stay outside).

    The colour is the theme's (``theme.Colors.bubble``), read from the widget's palette, so a
    theme switch recolours it at the next paint.
    """
    painter = QPainter(widget)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QColor(0, 0, 0, 0))
    painter.setBrush(QColor(theme.colors(widget).bubble))
    painter.drawRoundedRect(QRectF(0, 0, widget.width(), max(0, bottom)), RADIUS, RADIUS)
    painter.end()
