"""Measuring text contrast on a rendered window, as WCAG 2 defines it (AA: 4.5:1 for body text).

A window is grabbed as it is composited (style sheets, translucent tints, palettes), then every
visible text widget is measured in its own rectangle: the background is the rectangle's most
common colour, and the ink is the contrast that most glyph pixels reach, the 60th percentile of
the contrast of the pixels that differ visibly (1.5:1) from the background. Anti-aliased glyph edges and
an inline code box are the low end of that spread, so they do not decide it; a few dark pixels
of a frame do not lift it either. A list or tree is measured item by item, a text browser block
by block (a code block's lines against the code background, a paragraph against the bubble).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QImage, QTextBlock
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenuBar,
    QPlainTextEdit,
    QStyle,
    QStyleOptionButton,
    QStyleOptionComboBox,
    QStyleOptionGroupBox,
    QTabBar,
    QTextEdit,
    QWidget,
)

#: WCAG AA for normal-size text.
AA = 4.5
#: Pixels this close to the background are shading, not ink (a gradient, a tinted box, the faintest
#: anti-aliasing): below 1.5:1 a pixel is barely told apart from its background.
_GLYPH_THRESHOLD = 1.5
#: The share of glyph pixels whose contrast is allowed to fall below the measured ink.
_PERCENTILE = 60
#: With fewer glyph pixels than this, the text is measured on every pixel unlike the background.
_MIN_GLYPH_PIXELS = 12


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of sRGB colours (``…×3`` uint8 array)."""
    c = rgb.astype(np.float64) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def contrast_ratio(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """The WCAG contrast ratio of two colours, 1 to 21."""
    la, lb = relative_luminance(np.array([a, b], dtype=np.uint8))
    high, low = max(la, lb), min(la, lb)
    return float((high + 0.05) / (low + 0.05))


def image_array(image: QImage) -> np.ndarray:
    """An ``H×W×3`` uint8 copy of ``image``'s RGB pixels."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    width, height, stride = rgb.width(), rgb.height(), rgb.bytesPerLine()
    data = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=stride * height)
    return data.reshape(height, stride)[:, : width * 3].reshape(height, width, 3).copy()


@dataclass(frozen=True)
class Measure:
    """The contrast of the text in one rectangle."""

    background: tuple[int, int, int]
    ink: float
    glyph_pixels: int


def measure(pixels: np.ndarray) -> Measure | None:
    """Measure the text in ``pixels`` (``H×W×3``), which must show some (``None``: no pixels)."""
    flat = pixels.reshape(-1, 3)
    if not len(flat):
        return None
    packed = (flat[:, 0].astype(np.int32) << 16) | (flat[:, 1].astype(np.int32) << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    bg_packed = int(values[np.argmax(counts)])
    background = ((bg_packed >> 16) & 255, (bg_packed >> 8) & 255, bg_packed & 255)
    lum = relative_luminance(flat)
    bg_lum = float(relative_luminance(np.array([background], dtype=np.uint8))[0])
    ratio = (np.maximum(lum, bg_lum) + 0.05) / (np.minimum(lum, bg_lum) + 0.05)
    glyphs = ratio[ratio >= _GLYPH_THRESHOLD]
    if len(glyphs) < _MIN_GLYPH_PIXELS:
        # Text that is there but can hardly be told from its background (black on near-black).
        faint = ratio[ratio > 1.0]
        ink = float(np.percentile(faint, _PERCENTILE)) if len(faint) else 1.0
        return Measure(background, ink, len(glyphs))
    return Measure(background, float(np.percentile(glyphs, _PERCENTILE)), len(glyphs))


@dataclass(frozen=True)
class TextArea:
    """A rectangle of a window that shows text, and what it is (for the failure message)."""

    what: str
    rect: QRect


def _name(widget: QWidget) -> str:
    name = widget.objectName() or type(widget).__name__
    parent = widget.parentWidget()
    trail = []
    while parent is not None and len(trail) < 3:
        if parent.objectName():
            trail.append(parent.objectName())
        parent = parent.parentWidget()
    return "/".join([*reversed(trail), name])


def _shown_text(widget: QWidget) -> str:
    if isinstance(widget, QLabel):
        return "" if widget.pixmap() is not None and not widget.pixmap().isNull() else widget.text()
    if isinstance(widget, QAbstractButton):
        return widget.text()
    if isinstance(widget, QLineEdit):
        return widget.text() or widget.placeholderText()
    if isinstance(widget, QComboBox):
        return widget.currentText()
    if isinstance(widget, QAbstractSpinBox):
        return widget.text()
    if isinstance(widget, QPlainTextEdit):
        return widget.toPlainText() or widget.placeholderText()
    if isinstance(widget, QTextEdit):
        return widget.toPlainText() or widget.placeholderText()
    if isinstance(widget, QGroupBox):
        return widget.title()
    return ""


def _visible_rect(widget: QWidget, window: QWidget, rect: QRect | None = None) -> QRect:
    """``rect`` (default: all of ``widget``) in ``window`` coordinates, cut to what is seen.

    Empty when less than a line of it shows (a text cut off at a scroll area's edge).
    """
    wanted = rect or widget.rect()
    local = wanted.intersected(widget.visibleRegion().boundingRect())
    if local.height() < min(wanted.height(), widget.fontMetrics().height()) or local.width() < 4:
        return QRect()
    top_left = widget.mapTo(window, local.topLeft())
    return QRect(top_left, local.size()).intersected(window.rect())


def _blocks(document_owner: QTextEdit) -> list[tuple[QRectF, str]]:
    document = document_owner.document()
    layout = document.documentLayout()
    blocks = []
    block: QTextBlock = document.begin()
    while block.isValid():
        if block.text().strip():
            blocks.append((layout.blockBoundingRect(block), block.text()))
        block = block.next()
    return blocks


def text_areas(window: QWidget) -> list[TextArea]:
    """Every visible, enabled text of ``window``, as rectangles in its coordinates."""
    areas: list[TextArea] = []
    for widget in [window, *window.findChildren(QWidget)]:
        if not widget.isVisible() or not widget.isEnabled() or widget.window() is not window:
            continue
        name = _name(widget)
        if isinstance(widget, QHeaderView):
            model = widget.model()
            if model is None:
                continue
            for section in range(widget.count()):
                label = model.headerData(section, widget.orientation())
                if widget.isSectionHidden(section) or not str(label or "").strip():
                    continue
                start, size = widget.sectionViewportPosition(section), widget.sectionSize(section)
                if widget.orientation() == Qt.Orientation.Horizontal:
                    rect = QRect(start, 0, size, widget.height())
                else:
                    rect = QRect(0, start, widget.width(), size)
                shown = _visible_rect(widget.viewport(), window, rect.adjusted(3, 3, -3, -3))
                if not shown.isEmpty():
                    areas.append(TextArea(f"{name} header {label!r}", shown))
            continue
        if isinstance(widget, QAbstractItemView):
            model = widget.model()
            if model is None:
                continue
            viewport = widget.viewport()
            try:
                columns = model.columnCount(widget.rootIndex())
            except TypeError:  # a list model keeps columnCount private: one column
                columns = 1
            hidden_column = getattr(widget, "isColumnHidden", lambda _column: False)
            expanded = getattr(widget, "isExpanded", lambda _index: False)
            parents = [widget.rootIndex()]
            while parents:
                parent = parents.pop()
                for row in range(model.rowCount(parent)):
                    if expanded(model.index(row, 0, parent)):
                        parents.append(model.index(row, 0, parent))
                    for column in range(columns):
                        index = model.index(row, column, parent)
                        if hidden_column(column) or not str(index.data() or "").strip():
                            continue
                        # A view that draws several texts on their own backgrounds in one row
                        # (the sidebar: a date header over the row) names each part's area.
                        parts = getattr(widget, "text_areas", None)
                        rects = (
                            parts(index) if parts is not None else [(widget.visualRect(index), "")]
                        )
                        for part_rect, part in rects:
                            shown = _visible_rect(
                                viewport, window, part_rect.adjusted(1, 1, -1, -1)
                            )
                            if not shown.isEmpty():
                                label = f"{name}[{row},{column}]{part} {index.data()!r}"
                                areas.append(TextArea(label, shown))
            continue
        if isinstance(widget, QTabBar):
            for tab in range(widget.count()):
                shown = _visible_rect(widget, window, widget.tabRect(tab).adjusted(3, 3, -3, -3))
                if not shown.isEmpty():
                    areas.append(TextArea(f"{name} tab {widget.tabText(tab)!r}", shown))
            continue
        if isinstance(widget, QMenuBar):
            for action in widget.actions():
                rect = widget.actionGeometry(action).adjusted(2, 2, -2, -2)
                shown = _visible_rect(widget, window, rect)
                if not shown.isEmpty() and action.text():
                    areas.append(TextArea(f"{name} menu {action.text()!r}", shown))
            continue
        if isinstance(widget, QTextEdit) and widget.toPlainText().strip():
            # Block by block: a code block's lines against the code background, a paragraph
            # against the bubble.
            viewport = widget.viewport()
            offset = QPoint(
                widget.horizontalScrollBar().value(), widget.verticalScrollBar().value()
            )
            for block_rect, block_text in _blocks(widget):
                rect = block_rect.toAlignedRect().translated(-offset)
                shown = _visible_rect(viewport, window, rect)
                if not shown.isEmpty():
                    areas.append(TextArea(f"{name} {block_text[:40]!r}", shown))
            continue
        if isinstance(widget, QAbstractSpinBox) or (
            isinstance(widget, QComboBox) and widget.isEditable()
        ):
            continue  # its line edit is measured
        text = _shown_text(widget)
        if not text.strip():
            continue
        rect = widget.rect()
        if isinstance(widget, QAbstractButton | QLineEdit):
            # Inside the frame: a bevel's lines are not ink.
            rect = rect.adjusted(3, 3, -3, -3)
        elif isinstance(widget, QComboBox):
            option = QStyleOptionComboBox()
            widget.initStyleOption(option)
            rect = widget.style().subControlRect(
                QStyle.ComplexControl.CC_ComboBox,
                option,
                QStyle.SubControl.SC_ComboBoxEditField,
                widget,
            )
        elif isinstance(widget, QPlainTextEdit | QTextEdit):
            rect = widget.viewport().geometry()  # a plain text editor: all its text at once
        elif isinstance(widget, QGroupBox):
            option = QStyleOptionGroupBox()
            widget.initStyleOption(option)
            rect = widget.style().subControlRect(
                QStyle.ComplexControl.CC_GroupBox,
                option,
                QStyle.SubControl.SC_GroupBoxLabel,
                widget,
            )
        shown = _visible_rect(widget, window, rect)
        if not shown.isEmpty():
            areas.append(TextArea(f"{name} {text[:40]!r}", shown))
    return areas


@dataclass(frozen=True)
class Finding:
    """One measured text area."""

    what: str
    measure: Measure

    def __str__(self) -> str:
        bg = "#{:02x}{:02x}{:02x}".format(*self.measure.background)
        return f"{self.what}: ink {self.measure.ink:.2f}:1 on {bg}"


def measure_window(window: QWidget) -> list[Finding]:
    """Grab ``window`` and measure every text area in it."""
    grabbed = window.grab()
    pixels = image_array(grabbed.toImage())
    scale = grabbed.devicePixelRatio()
    findings = []
    for area in text_areas(window):
        r = QRectF(area.rect).adjusted(0, 0, 0, 0)
        r = QRect(
            round(r.left() * scale),
            round(r.top() * scale),
            round(r.width() * scale),
            round(r.height() * scale),
        )
        found = measure(pixels[r.top() : r.bottom() + 1, r.left() : r.right() + 1])
        if found is not None:
            findings.append(Finding(area.what, found))
    return findings


def low_contrast(window: QWidget, minimum: float = AA) -> list[Finding]:
    """The text areas of ``window`` whose ink falls below ``minimum``."""
    return [f for f in measure_window(window) if f.measure.ink < minimum]


#: WCAG 2.1 (1.4.11) for the parts of a control that identify it, and for icons.
NON_TEXT = 3.0


def measure_outline(pixels: np.ndarray, rect: QRect, band: int = 3) -> float:
    """The contrast of a control's boundary in ``rect`` of ``pixels`` against what surrounds it.

    The surround is the most common colour of the ``band`` pixels just outside ``rect`` (cut to
    the image); each side of ``rect`` is the line, among its ``band`` outermost ones, whose
    pixels contrast most with it (a border, or a fill if there is none), taken at its median so
    a rounded corner does not decide it. The control's contrast is its weakest side: a box
    that shows on three sides only is not told from its background.
    """
    height, width = pixels.shape[:2]
    top, left = max(rect.top(), 0), max(rect.left(), 0)
    bottom, right = min(rect.bottom(), height - 1), min(rect.right(), width - 1)
    outer = np.zeros((height, width), dtype=bool)
    outer[max(top - band, 0) : bottom + band + 1, max(left - band, 0) : right + band + 1] = True
    outer[top : bottom + 1, left : right + 1] = False
    surround = measure(pixels[outer].reshape(-1, 1, 3))
    if surround is None:
        raise ValueError(f"nothing around {rect} in a {width}x{height} image")
    bg_lum = float(relative_luminance(np.array([surround.background], dtype=np.uint8))[0])
    lum = relative_luminance(pixels[top : bottom + 1, left : right + 1])
    ratio = (np.maximum(lum, bg_lum) + 0.05) / (np.minimum(lum, bg_lum) + 0.05)
    lines = {
        "top": [ratio[i, :] for i in range(band)],
        "bottom": [ratio[-1 - i, :] for i in range(band)],
        "left": [ratio[:, i] for i in range(band)],
        "right": [ratio[:, -1 - i] for i in range(band)],
    }
    return min(max(float(np.median(line)) for line in side) for side in lines.values())


def measure_icon(button: QAbstractButton) -> Measure | None:
    """The contrast of ``button``'s icon, as drawn on the button.

    The button is grabbed with its text left out for the moment, so that inside its frame only
    the icon differs from the button's face; the icon is then measured as a text is (the
    glyph pixels' 60th percentile). ``None`` when the button shows no icon.
    """
    if button.icon().isNull():
        return None
    text = button.text()
    button.setText("")
    try:
        pixels = image_array(button.grab().toImage())
    finally:
        button.setText(text)
    r = button.rect().adjusted(3, 3, -3, -3)
    return measure(pixels[r.top() : r.bottom() + 1, r.left() : r.right() + 1])


def measure_checkbox(box: QCheckBox) -> float:
    """The contrast of ``box``'s indicator against the background around it (see measure_outline)."""
    grabbed = box.grab()
    scale = grabbed.devicePixelRatio()
    option = QStyleOptionButton()
    box.initStyleOption(option)
    r = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    scaled = QRect(
        round(r.left() * scale),
        round(r.top() * scale),
        round(r.width() * scale),
        round(r.height() * scale),
    )
    return measure_outline(image_array(grabbed.toImage()), scaled, band=max(2, round(3 * scale)))
