"""The Profile page's parts: the Markdown editor with pinned lines, and the revision diff.

Pinned lines are marked in the editor itself: a bar in a gutter at the left and a tinted line,
in the memory accent colour of ``ui.theme``. A pin belongs to its line (the text block), so
editing a pinned line's text keeps it pinned with the new text.
"""

from __future__ import annotations

import difflib
import html
from typing import Final

from PySide6.QtCore import QEvent, QRect, QSize, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QResizeEvent, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget
from typing_extensions import override

from etos_desktop.core.profile import sections
from etos_desktop.core.profile.records import PinnedLine
from etos_desktop.ui.theme import colors

#: ``QTextBlock.userState`` of a pinned line (the default is -1).
PINNED_STATE: Final = 1
_GUTTER_WIDTH: Final = 12


def _qcolor(css: str) -> QColor:
    """A ``#rrggbb`` or ``rgba(r, g, b, a)`` colour of ``ui.theme`` as a QColor."""
    if css.startswith("rgba("):
        r, g, b, a = (part.strip() for part in css[5:-1].split(","))
        color = QColor(int(r), int(g), int(b))
        color.setAlphaF(float(a))
        return color
    return QColor(css)


class _PinGutter(QWidget):
    def __init__(self, editor: ProfileEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(_GUTTER_WIDTH, 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_gutter(self, event)


class ProfileEditor(QPlainTextEdit):
    """A plain-text Markdown editor whose lines can be pinned.

    Signals:
        pins_changed(): lines were pinned or unpinned.
    """

    pins_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("profileEditor")
        self.setTabChangesFocus(True)
        self._gutter = _PinGutter(self)
        self.setViewportMargins(_GUTTER_WIDTH, 0, 0, 0)
        self.updateRequest.connect(self._on_update_request)
        self.textChanged.connect(self._mark_pinned)

    # -- pins -----------------------------------------------------------------------------------

    def set_profile(self, text: str, pins: tuple[PinnedLine, ...]) -> None:
        """Show ``text`` with ``pins`` marked."""
        self.blockSignals(True)
        try:
            self.setPlainText(text)
            for number in sections.pin_line_numbers(text, pins):
                self.document().findBlockByNumber(number).setUserState(PINNED_STATE)
        finally:
            self.blockSignals(False)
        self._mark_pinned()

    def pinned_line_numbers(self) -> list[int]:
        """The numbers (0-based) of the pinned lines that hold text."""
        numbers = []
        block = self.document().begin()
        while block.isValid():
            if block.userState() == PINNED_STATE and block.text().strip():
                numbers.append(block.blockNumber())
            block = block.next()
        return numbers

    def pins(self) -> tuple[PinnedLine, ...]:
        """The pinned lines as they read now, with their sections."""
        return sections.pins_for_lines(self.toPlainText(), self.pinned_line_numbers())

    def selected_line_numbers(self) -> list[int]:
        """The lines the cursor or the selection is on."""
        cursor = self.textCursor()
        doc = self.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        last = doc.findBlock(cursor.selectionEnd()).blockNumber()
        return list(range(first, last + 1))

    def pin_target_numbers(self) -> list[int]:
        """The lines a pin of the cursor or selection holds: a heading holds its section."""
        text = self.toPlainText()
        numbers: set[int] = set()
        for number in self.selected_line_numbers():
            numbers.update(sections.section_line_numbers(text, number) or [number])
        return sorted(numbers)

    def selection_has_heading(self) -> bool:
        """Whether the cursor or selection is on a heading (a pin then holds its section)."""
        doc = self.document()
        return any(
            sections.heading(doc.findBlockByNumber(n).text()) is not None
            for n in self.selected_line_numbers()
        )

    def selection_pinned(self) -> bool:
        """Whether every non-blank line a pin of the cursor or selection holds is pinned."""
        blocks = [self.document().findBlockByNumber(n) for n in self.pin_target_numbers()]
        filled = [b for b in blocks if b.text().strip()]
        return bool(filled) and all(b.userState() == PINNED_STATE for b in filled)

    def toggle_pin(self) -> bool:
        """Pin the non-blank lines of the cursor or selection, or unpin them if all are pinned.

        A heading pins (or unpins) its whole section with it (``sections.section_line_numbers``).

        Returns:
            Whether the lines are pinned now.
        """
        pin = not self.selection_pinned()
        for number in self.pin_target_numbers():
            block = self.document().findBlockByNumber(number)
            if block.text().strip() or not pin:
                block.setUserState(PINNED_STATE if pin else -1)
        self._mark_pinned()
        self.pins_changed.emit()
        return pin

    # -- drawing --------------------------------------------------------------------------------

    def _mark_pinned(self) -> None:
        tint = _qcolor(colors(self).accent_tint)
        selections = []
        for number in self.pinned_line_numbers():
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(tint)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            cursor = self.textCursor()
            cursor.setPosition(self.document().findBlockByNumber(number).position())
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)
        self._gutter.update()

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        """Paint the pin marks of the visible lines on ``gutter`` (its paint event calls this)."""
        painter = QPainter(gutter)
        painter.fillRect(event.rect(), self.palette().base())
        bar = _qcolor(colors(self).accent_border)
        bar.setAlphaF(1.0)
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(offset)
            if geometry.top() > event.rect().bottom():
                break
            if block.isVisible() and block.userState() == PINNED_STATE and block.text().strip():
                painter.fillRect(
                    QRect(3, int(geometry.top()) + 2, 4, int(geometry.height()) - 4), bar
                )
            block = block.next()
        painter.end()

    @override
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self._gutter.setGeometry(QRect(rect.left(), rect.top(), _GUTTER_WIDTH, rect.height()))

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._mark_pinned()


def diff_lines(old: str, new: str) -> list[tuple[str, str]]:
    """The lines of ``new`` compared with ``old``: ``(" " | "+" | "-", line)``, blank lines skipped."""
    a = [line for line in old.splitlines() if line.strip()]
    b = [line for line in new.splitlines() if line.strip()]
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend((" ", line) for line in a[i1:i2])
            continue
        out.extend(("-", line) for line in a[i1:i2])
        out.extend(("+", line) for line in b[j1:j2])
    return out


def diff_html(lines: list[tuple[str, str]], widget: QWidget) -> str:
    """The diff as rich text: added and removed lines marked, coloured by ``ui.theme`` and bold.

    Not struck through: a line through Chinese characters makes them hard to read, and the
    ``+``/``−`` marks say what the colours say for readers who do not see them. Bold because
    thin coloured strokes measure below 4.5:1 on screen (4.9:1 at the normal weight for a
    9:1 colour, about 7:1 bold; ``tests/ui/test_contrast.py``).
    """
    palette = colors(widget)
    rows = []
    for mark, line in lines:
        text = html.escape(line)
        if mark == " ":
            rows.append(f'<div style="white-space:pre-wrap;">&nbsp;&nbsp;{text}</div>')
            continue
        color = palette.added if mark == "+" else palette.removed
        sign = "+" if mark == "+" else "−"
        rows.append(
            f'<div style="color:{color}; font-weight:600; white-space:pre-wrap;">{sign} {text}</div>'
        )
    return "".join(rows)
