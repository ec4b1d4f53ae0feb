"""The sidebar's date groups and how one conversation is drawn in it.

Conversations are grouped by the day they were last active: Pinned, Today, Yesterday, Previous
7 days, then one group per month ("October", "October 2025" for another year; month names in the
UI language). Each row shows the title over a one-line preview of the last message, and the
first row of a group carries the group's header above it. The header is drawn by the delegate,
not held as a row of its own: the model keeps one row per conversation, so the list still
fetches as it scrolls and every caller's row numbers stay conversation rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from PySide6.QtCore import (
    QCoreApplication,
    QDate,
    QLocale,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import QFont, QFontMetrics, QMouseEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.text.cleaning import neutralise_bidi

__all__ = [
    "ConversationDelegate",
    "DateGroup",
    "GroupedListView",
    "date_group",
    "group_label",
    "preview_line",
]

#: A preview keeps this many characters (the row elides it to its width anyway).
PREVIEW_CHARS = 160
_MARKUP = re.compile(r"[#*_`>|~]+|\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True)
class DateGroup:
    """One group of the sidebar: ``kind`` is pinned, today, yesterday, week or month."""

    kind: str
    year: int = 0
    month: int = 0


PINNED = DateGroup("pinned")


def date_group(when: datetime, today: date, *, pinned: bool = False) -> DateGroup:
    """The group of a conversation last active at ``when`` (local time), seen on ``today``.

    A time in the future (another device's clock) counts as today.
    """
    if pinned:
        return PINNED
    local = when.astimezone() if when.tzinfo is not None else when
    day = local.date()
    if day >= today:
        return DateGroup("today")
    if day == today - timedelta(days=1):
        return DateGroup("yesterday")
    if day >= today - timedelta(days=7):
        return DateGroup("week")
    return DateGroup("month", day.year, day.month)


def group_label(group: DateGroup, today: date, locale: QLocale) -> str:
    """The header of ``group`` in the UI language (``locale`` names the months)."""
    if group.kind == "pinned":
        return QCoreApplication.translate("ConversationGroups", "Pinned")
    if group.kind == "today":
        return QCoreApplication.translate("ConversationGroups", "Today")
    if group.kind == "yesterday":
        return QCoreApplication.translate("ConversationGroups", "Yesterday")
    if group.kind == "week":
        return QCoreApplication.translate("ConversationGroups", "Previous 7 days")
    first = QDate(group.year, group.month, 1)
    if group.year == today.year:
        # A date format: "MMMM" is the month's name ("October"); Chinese writes "10月".
        return locale.toString(first, QCoreApplication.translate("ConversationGroups", "MMMM"))
    return locale.toString(first, QCoreApplication.translate("ConversationGroups", "MMMM yyyy"))


def preview_line(text: str) -> str:
    """One line of a message for the sidebar: Markdown marks and line breaks dropped."""
    short = _MARKUP.sub(lambda m: m.group(1) or "", text[: PREVIEW_CHARS * 2])
    return neutralise_bidi(" ".join(short.split())[:PREVIEW_CHARS])


#: Item data roles the delegate reads (the model answers them).
PreviewRole = Qt.ItemDataRole.UserRole + 20
#: The header text when this row begins a group, else ``None``.
GroupHeaderRole = Qt.ItemDataRole.UserRole + 21

_PAD_X = 10
_PAD_Y = 6
_LINE_GAP = 2
_HEADER_TOP = 10
_HEADER_BOTTOM = 4


def _small(font: QFont) -> QFont:
    small = QFont(font)
    size = font.pointSizeF()
    if size > 0:
        small.setPointSizeF(size * 0.88)
    else:
        small.setPixelSize(max(9, round(font.pixelSize() * 0.88)))
    return small


class ConversationDelegate(QStyledItemDelegate):
    """Draws a conversation as its title over a muted preview, under its group's header."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)

    def _header_height(self, font: QFont, index: QModelIndex | QPersistentModelIndex) -> int:
        if not index.data(GroupHeaderRole):
            return 0
        top = _HEADER_TOP if index.row() > 0 else _HEADER_BOTTOM
        return top + QFontMetrics(_small(font)).height() + _HEADER_BOTTOM

    @override
    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        font = option.font
        title = QFontMetrics(font).height()
        preview = QFontMetrics(_small(font)).height()
        height = _PAD_Y + title + _LINE_GAP + preview + _PAD_Y
        return QSize(100, height + self._header_height(font, index))

    @override
    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        rect: QRect = opt.rect
        font: QFont = opt.font
        palette: QPalette = opt.palette
        small = _small(font)
        widget = opt.widget
        style = widget.style() if widget is not None else None
        painter.save()
        header = index.data(GroupHeaderRole)
        header_height = self._header_height(font, index)
        if header:
            header_font = QFont(small)
            header_font.setWeight(QFont.Weight.DemiBold)
            painter.setFont(header_font)
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            header_rect = QRect(
                rect.left() + _PAD_X,
                rect.top(),
                rect.width() - 2 * _PAD_X,
                header_height - _HEADER_BOTTOM,
            )
            painter.drawText(
                header_rect,
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom),
                QFontMetrics(header_font).elidedText(
                    str(header), Qt.TextElideMode.ElideRight, header_rect.width()
                ),
            )
        item = QRect(
            rect.left(), rect.top() + header_height, rect.width(), rect.height() - header_height
        )
        title = opt.text
        opt.rect = item
        opt.text = ""
        if style is not None:
            # Background, hover, selection and focus as the theme draws an item.
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        foreground = index.data(Qt.ItemDataRole.ForegroundRole)
        title_color = (
            foreground.color()
            if foreground is not None and not selected
            else palette.color(text_role)
        )
        inner = item.adjusted(_PAD_X, _PAD_Y, -_PAD_X, -_PAD_Y)
        metrics = QFontMetrics(font)
        painter.setFont(font)
        painter.setPen(title_color)
        title_rect = QRect(inner.left(), inner.top(), inner.width(), metrics.height())
        painter.drawText(
            title_rect,
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            metrics.elidedText(str(title), Qt.TextElideMode.ElideRight, inner.width()),
        )
        preview = index.data(PreviewRole)
        if preview:
            small_metrics = QFontMetrics(small)
            painter.setFont(small)
            painter.setPen(
                palette.color(text_role)
                if selected
                else palette.color(QPalette.ColorRole.PlaceholderText)
            )
            preview_rect = QRect(
                inner.left(),
                title_rect.bottom() + 1 + _LINE_GAP,
                inner.width(),
                small_metrics.height(),
            )
            painter.drawText(
                preview_rect,
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                small_metrics.elidedText(str(preview), Qt.TextElideMode.ElideRight, inner.width()),
            )
        painter.restore()

    def header_rect(self, option: QStyleOptionViewItem, index: QModelIndex) -> QRect:
        """The part of a row's rectangle that its group's header takes (empty for none)."""
        rect: QRect = option.rect
        height = self._header_height(option.font, index)
        return QRect(rect.left(), rect.top(), rect.width(), height)


class GroupedListView(QListView):
    """The conversation list: a press on a group's header selects nothing."""

    def text_areas(self, index: QModelIndex) -> list[tuple[QRect, str]]:
        """The parts of a row on their own backgrounds: its group's header, if any, and the row.

        The contrast checks measure each apart.
        """
        rect = self.visualRect(index)
        delegate = self.itemDelegate()
        if not isinstance(delegate, ConversationDelegate):
            return [(rect, "")]
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = rect
        header = delegate.header_rect(option, index)
        if header.isEmpty():
            return [(rect, "")]
        row = rect.adjusted(0, header.height(), 0, 0)
        return [(header, " header"), (row, "")]

    @override
    def mousePressEvent(self, event: QMouseEvent) -> None:
        index = self.indexAt(event.position().toPoint())
        delegate = self.itemDelegate()
        if index.isValid() and isinstance(delegate, ConversationDelegate):
            option = QStyleOptionViewItem()
            self.initViewItemOption(option)
            option.rect = self.visualRect(index)
            if delegate.header_rect(option, index).contains(event.position().toPoint()):
                event.accept()
                return
        super().mousePressEvent(event)
