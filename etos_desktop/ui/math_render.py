r"""Math in chat replies, offline and without TeX: LaTeX → MathML → SVG → an image in the text.

``latex2mathml`` turns the LaTeX into MathML and ``ziamath`` lays it out as SVG paths in its own
STIX Two Math font (pure Python, no TeX, no system font); QtSvg rasterises that at the text's size,
in the palette's text colour and at the screen's pixel ratio, and the message view
(:class:`MathBrowserMixin`, mixed into it) gives its document the images as resources.

Laying a formula out is slow (pure Python: 5-60 ms each, ~50 ms CPU a formula in
tests/bench/math_speed.py), so it never runs on the UI thread's render: the Markdown renderer asks
:func:`lookup`, which answers from the cache or queues the formula for the one layout thread and
answers ``PENDING``. A pending formula is shown as its source, marked with an anchor; once the
thread has laid it out, the views that show it replace the source with the image (or restyle it
as code, if it turned out bad) in place, a few per event-loop turn, without rendering the message
again. Rasterising (1-5 ms a formula, cached) happens on the UI thread.

Qt places an inline image with ``vertical-align: middle`` by centring it in its line, so each
formula is padded (transparent rows) to put its own baseline on the text's (:func:`_padding`), and
the inline formulas of one paragraph are padded to one box, so a tall one does not move the rest.

A formula is bad when latex2mathml or ziamath refuse it, when its braces do not balance, when it
uses a command or environment latex2mathml does not know (it would print the name), or when it
lays out to nothing; a bad formula shows its source as code. Nothing here logs above DEBUG.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import logging
import math
import queue
import re
import threading
import time
import warnings
import xml.etree.ElementTree as ET
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import unescape
from typing import Any

from PySide6.QtCore import (
    QByteArray,
    QEvent,
    QMimeData,
    QObject,
    QRectF,
    Qt,
    QTimer,
    QUrl,
    QUrlQuery,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontInfo,
    QFontMetricsF,
    QImage,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextImageFormat,
    QTextLayout,
    QTextLength,
)

__all__ = [
    "MATH_SCHEME",
    "PENDING",
    "Formula",
    "MathBrowserMixin",
    "formula_image",
    "image_url",
    "lookup",
    "pending_anchor",
    "wait_until_idle",
]

log = logging.getLogger(__name__)

#: URL scheme of formula images in a message's document.
MATH_SCHEME = "etos-math"
_IMAGE_SRC_RE = re.compile(r'<img src="(' + MATH_SCHEME + r':[^"]*)"')
#: Anchor names of formulas still being laid out start with this.
PENDING_ANCHOR = "etos-math-pending:"

# ziamath lays out at this size (px per em); the SVG is scaled to the text's size.
_LAYOUT_PX = 20.0
# STIX Two Math's x-height is smaller than a UI sans font's: at the same em it looks a size
# smaller than the text around it, so formulas are drawn this much larger.
_MATH_SCALE = 1.12
# Longer sources are shown as code: ziamath's layout grows faster than linearly with size.
MAX_TEX_CHARS = 2000
# Laid-out formulas kept (SVG text, 2-20 KB each) and rasterised images kept (~30 KB each).
_FORMULAS_KEPT = 2048
_IMAGES_KEPT = 512
#: The monospace fonts code is shown in (markdown_render's inline code).
CODE_FONTS = (
    "JetBrains Mono",
    "Cascadia Mono",
    "Menlo",
    "Consolas",
    "DejaVu Sans Mono",
    "monospace",
)
# While the layout thread is busy, views are told of finished formulas at most this often (and
# when it is done). Putting them in place meanwhile competes with the thread for the GIL: at 0.15 s
# the UI thread spent 4× as long on it (tests/bench/math_speed.py).
_NOTICE_INTERVAL_S = 0.6
# Formulas are put in place (rasterised, inserted) for about this long per event-loop turn.
_FILL_BUDGET_S = 0.012
# A batch of layouts starts once no render has asked for a formula for this long.
_START_DELAY_S = 0.06
# At most this many formulas are put in place per event-loop turn (each is rasterised then,
# 1-5 ms; and the document is laid out again once per turn).
_FILL_MAX = 4
# Qt's relative font sizes (``font-size: large`` is adjustment 1, ``x-large`` 2), as
# QTextCharFormat resolves them; a formula in a heading is drawn at the heading's size.
_SIZE_ADJUSTMENTS = {-2: 0.7, -1: 0.8, 0: 1.0, 1: 1.2, 2: 1.5, 3: 2.0, 4: 2.4}


@dataclass(frozen=True, slots=True)
class Formula:
    """A laid-out formula: its SVG and its box, in ems of the size it is drawn at.

    Attributes:
        tex: The LaTeX source (without delimiters).
        display: Laid out in display style (limits above and below, larger fractions).
        svg: The SVG document, glyphs as paths.
        width: The box's width.
        ascent: How far the box reaches above the baseline.
        depth: How far it reaches below the baseline.
    """

    tex: str
    display: bool
    svg: bytes
    width: float
    ascent: float
    depth: float


class _Pending(enum.Enum):
    PENDING = "pending"


#: What :func:`lookup` answers for a formula that is being laid out.
PENDING = _Pending.PENDING


# --- layout (any thread; ziamath only on the layout thread) -----------------------------------------

_BEGIN_RE = re.compile(r"\\begin\s*\{([^}]*)\}")
_TAG_RE = re.compile(r"\\tag\*?\s*\{([^{}]*)\}")
# latex2mathml writes a command it does not know as an identifier with its name.
_UNKNOWN_COMMAND_RE = re.compile(r"<m[io][^>]*>\\")
_ENVIRONMENTS = frozenset(
    {
        "matrix",
        "pmatrix",
        "bmatrix",
        "Bmatrix",
        "vmatrix",
        "Vmatrix",
        "smallmatrix",
        "cases",
        "align",
        "align*",
        "aligned",
        "split",
        "array",
        "substack",
    }
)


def _braces_balance(tex: str) -> bool:
    depth = 0
    escaped = False
    for char in tex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _plausible(tex: str) -> bool:
    if not tex.strip() or len(tex) > MAX_TEX_CHARS or not _braces_balance(tex):
        return False
    return all(name.strip() in _ENVIRONMENTS for name in _BEGIN_RE.findall(tex))


_ziamath_lock = threading.Lock()
_known_elements: frozenset[str] = frozenset()


def _ziamath() -> Any:
    """Import and set up ziamath once (it costs ~100 ms: fonts and tables)."""
    global _known_elements
    # ziamath 0.13 finds its font with importlib.resources.path, which Python 3.11 and 3.12
    # deprecate; the warning says nothing to a user (and tests make warnings errors).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import ziamath
        from ziamath.nodes import mnode

    # SVG 1.1 paths (no <symbol>/<use href>), which QtSvg draws.
    ziamath.config.svg2 = False
    if not _known_elements:
        known = set(getattr(mnode, "_node_classes", {})) | {
            "math",
            "mtd",
            "mtr",
            "none",
            "ms",
            "mstyle",
        }
        _known_elements = frozenset(known)
    return ziamath


def _mathml_elements(mathml: str) -> set[str]:
    root = ET.fromstring(mathml)
    return {element.tag.rpartition("}")[2] for element in root.iter()}


def _layout(tex: str, display: bool) -> Formula | None:
    """Lay ``tex`` out (slow, pure Python); ``None`` if it is not a formula ziamath can draw."""
    if not _plausible(tex):
        return None
    # \tag would number the formula against a 6.5-inch column: the number goes beside it.
    source = _TAG_RE.sub(r"\\qquad(\1)", tex)
    try:
        with _ziamath_lock:
            ziamath = _ziamath()
            from ziamath.tex import tex2mml

            mathml = tex2mml(source, inline=not display)
            if _UNKNOWN_COMMAND_RE.search(mathml):
                return None
            # ziamath warns (on the root logger) about elements it cannot draw: refuse them first.
            if not _mathml_elements(mathml) <= _known_elements:
                return None
            rendered = ziamath.Math(mathml, size=_LAYOUT_PX, margin=1.0)
            svg = rendered.svg()
            box = rendered.node.bbox
            width = box.xmax - box.xmin + 2 * rendered.margin
            ascent = box.ymax + rendered.margin
            depth = -box.ymin + rendered.margin
    except Exception as error:  # a model's bad LaTeX can fail anywhere in there
        log.debug("formula not drawn (%s): %.80r", type(error).__name__, tex)
        return None
    sizes = (width, ascent, depth)
    if not all(math.isfinite(size) for size in sizes) or width <= 2 or ascent + depth <= 2:
        return None
    if width > 400 * _LAYOUT_PX or ascent + depth > 100 * _LAYOUT_PX:
        return None
    return Formula(
        tex=tex,
        display=display,
        svg=svg.encode(),
        width=width / _LAYOUT_PX,
        ascent=ascent / _LAYOUT_PX,
        depth=depth / _LAYOUT_PX,
    )


class _Notifier(QObject):
    """Lives on the UI thread; the layout thread emits through it.

    Signals:
        laid_out(): Formulas that were pending are laid out (their views may replace them).
    """

    laid_out = Signal()


class _FormulaStore:
    """The laid-out formulas, and the one thread that lays them out. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: OrderedDict[tuple[str, bool], Formula | None] = OrderedDict()
        self._queued: set[tuple[str, bool]] = set()
        # Pending formulas' anchor names → (tex, display, source as written, CJK, paragraph).
        self._anchors: OrderedDict[str, tuple[str, bool, str, bool, int]] = OrderedDict()
        self._idle = threading.Condition(self._lock)
        self._jobs: queue.SimpleQueue[tuple[tuple[str, bool], bool]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._notifier: _Notifier | None = None
        self._last_notice = 0.0
        self._last_lookup = 0.0

    def notifier(self) -> _Notifier:
        # Made on first use by a view, on the UI thread, so its signal is delivered there.
        if self._notifier is None:
            self._notifier = _Notifier()
        return self._notifier

    def known(self, key: tuple[str, bool]) -> tuple[bool, Formula | None]:
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return True, self._done[key]
        return False, None

    def lookup(self, tex: str, display: bool) -> Formula | _Pending | None:
        key = (tex, display)
        self._last_lookup = time.monotonic()
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            if not _plausible(tex):
                return None
            if key not in self._queued:
                first = not self._queued
                self._queued.add(key)
                if self._thread is None:
                    # A daemon: quitting the app must not wait for a queue of formulas (a
                    # ThreadPoolExecutor's thread is joined at exit, after all its work).
                    self._thread = threading.Thread(
                        target=self._work, name="etos-math", daemon=True
                    )
                    self._thread.start()
                self._jobs.put((key, first))
        return PENDING

    def layout_now(self, tex: str, display: bool) -> Formula | None:
        known, formula = self.known((tex, display))
        if known:
            return formula
        formula = _layout(tex, display)
        self._store((tex, display), formula)
        return formula

    def anchor(self, name: str, written: tuple[str, bool, str, bool, int]) -> None:
        with self._lock:
            self._anchors[name] = written
            self._anchors.move_to_end(name)
            while len(self._anchors) > _FORMULAS_KEPT:
                self._anchors.popitem(last=False)

    def anchored(self, name: str) -> tuple[str, bool, str, bool, int] | None:
        with self._lock:
            return self._anchors.get(name)

    def wait_until_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: not self._queued, timeout)

    def _store(self, key: tuple[str, bool], formula: Formula | None) -> None:
        with self._lock:
            self._done[key] = formula
            self._done.move_to_end(key)
            while len(self._done) > _FORMULAS_KEPT:
                self._done.popitem(last=False)

    def _work(self) -> None:
        while True:
            key, first = self._jobs.get()
            try:
                self._run(key, first)
            except Exception:  # a bug here (bad LaTeX is caught in _layout): keep the thread
                log.exception("laying out a formula failed")

    def _run(self, key: tuple[str, bool], first: bool) -> None:
        if first:
            # Let the renders that ask finish first (a conversation opening renders many): the
            # UI thread would share the GIL with this pure-Python layout (they took 2-8× as long).
            while (wait := self._last_lookup + _START_DELAY_S - time.monotonic()) > 0:
                time.sleep(wait)
        formula: Formula | None = None
        try:
            formula = _layout(*key)
        finally:
            # Stored and announced even if it failed: nothing may wait for it forever.
            self._store(key, formula)
            self._finish(key)

    def _finish(self, key: tuple[str, bool]) -> None:
        with self._idle:
            self._queued.discard(key)
            remaining = len(self._queued)
            if not remaining:
                self._idle.notify_all()
            now = time.monotonic()
            notify = not remaining or now - self._last_notice >= _NOTICE_INTERVAL_S
            if notify:
                self._last_notice = now
            notifier = self._notifier
        if notify and notifier is not None:
            notifier.laid_out.emit()


_STORE = _FormulaStore()


def lookup(tex: str, display: bool) -> Formula | _Pending | None:
    """The laid-out formula, ``None`` for a bad one, or ``PENDING`` (then it is being laid out).

    Never waits: runs wherever the Markdown is rendered. Views showing a pending formula hear
    when it is done through :class:`MathBrowserMixin`.
    """
    return _STORE.lookup(tex, display)


def wait_until_idle(timeout: float = 10.0) -> bool:
    """Block until every queued formula is laid out (tests and benchmarks); ``False`` on timeout."""
    return _STORE.wait_until_idle(timeout)


def _encode(tex: str) -> str:
    return base64.urlsafe_b64encode(tex.encode()).decode().rstrip("=")


def _decode(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def image_url(
    tex: str, display: bool, size_adjustment: int = 0, cjk: bool = False, paragraph: int = 0
) -> str:
    """The image name for a formula in a message's HTML (holding its source, so it is never lost).

    Args:
        tex: The LaTeX source.
        display: Display style.
        size_adjustment: Qt's relative font size where it stands (a heading's ``x-large`` is 2).
        cjk: It stands in a paragraph with Chinese (or Japanese, Korean) text, whose taller lines
            Qt centres it in differently.
        paragraph: The paragraph's number in its message (0: none), whose inline formulas are
            padded alike.
    """
    kind = "display" if display else "inline"
    return f"{MATH_SCHEME}:{kind}?a={size_adjustment}&c={int(cjk)}&p={paragraph}&t={_encode(tex)}"


def pending_anchor(
    tex: str, display: bool, source: str, cjk: bool = False, paragraph: int = 0
) -> str:
    """The anchor name that marks a pending formula's source text in a document.

    Args:
        tex: The LaTeX source.
        display: Display style.
        source: The formula as written, with its delimiters (what copying it gives).
        cjk: As for :func:`image_url`.
        paragraph: As for :func:`image_url`.
    """
    digest = hashlib.sha1(f"{int(display)}{paragraph}{source}".encode(), usedforsecurity=False)
    name = PENDING_ANCHOR + digest.hexdigest()[:24]
    _STORE.anchor(name, (tex, display, source, cjk, paragraph))
    return name


def _parse_url(url: QUrl) -> tuple[str, bool, int, bool, int] | None:
    if url.scheme() != MATH_SCHEME:
        return None
    query = QUrlQuery(url)
    try:
        tex = _decode(query.queryItemValue("t"))
        adjustment = int(query.queryItemValue("a") or 0)
        paragraph = int(query.queryItemValue("p") or 0)
    except (ValueError, UnicodeDecodeError):
        return None
    cjk = query.queryItemValue("c") == "1"
    return tex, url.path() == "display", adjustment, cjk, paragraph


# --- images (UI thread) -----------------------------------------------------------------------------

_IMAGES: OrderedDict[tuple[Any, ...], QImage] = OrderedDict()


def _baseline_offset(
    ascent: float, depth: float, line: _LineMetrics, top: float, bottom: float
) -> float:
    """Where Qt puts a padded formula's baseline, below (+) or above (-) the text's.

    Qt gives an image with ``vertical-align: middle`` an ascent of (height + x/2) / 2 and a
    descent of (height - x/2) / 2 (x/2: half the x-height), which may raise the line's, and then
    draws it centred in the line (QTextLine::draw): where it lands depends on the line's text.
    """
    height = ascent + depth + top + bottom
    image_ascent = (height + line.half_x) / 2
    image_descent = (height - line.half_x) / 2
    line_ascent = max(image_ascent, line.ascent)
    line_descent = max(image_descent, line.descent)
    image_top = -line_ascent + (line_ascent + line_descent - height) / 2
    return image_top + top + ascent


def _padding(ascent: float, depth: float, line: _LineMetrics) -> tuple[float, float]:
    """Transparent space above and below a formula that puts its baseline on the text's."""
    offset = _baseline_offset(ascent, depth, line, 0.0, 0.0)
    if abs(offset) < 0.05:
        return 0.0, 0.0
    # Space above moves the formula down, space below moves it up (both monotonic): bisect.
    above = offset < 0
    low, high = 0.0, 4 * (ascent + depth + line.ascent + line.descent)
    for _ in range(24):  # to 1/4000 of a pixel or so
        middle = (low + high) / 2
        pad = (middle, 0.0) if above else (0.0, middle)
        moved = _baseline_offset(ascent, depth, line, *pad)
        if (moved < 0) == above:
            low = middle
        else:
            high = middle
    return (high, 0.0) if above else (0.0, high)


@dataclass(frozen=True, slots=True)
class _LineMetrics:
    """The text line a formula stands in: ascent, descent and half the x-height, in pixels."""

    ascent: float
    descent: float
    half_x: float


_LINES: dict[tuple[str, bool], _LineMetrics] = {}


def _line_metrics(font: QFont, cjk: bool) -> _LineMetrics:
    """The line metrics of ``font``'s text, with its CJK fallback font's if ``cjk``."""
    key = (font.key(), cjk)
    line = _LINES.get(key)
    if line is None:
        metrics = QFontMetricsF(font)
        ascent, descent = metrics.ascent(), metrics.descent()
        if cjk:
            # Chinese text is drawn in a fallback font with a taller line; Qt's layout says how tall.
            layout = QTextLayout("中x", font)
            layout.beginLayout()
            text_line = layout.createLine()
            layout.endLayout()
            ascent, descent = max(ascent, text_line.ascent()), max(descent, text_line.descent())
        line = _LINES[key] = _LineMetrics(ascent, descent, metrics.xHeight() / 2)
    return line


def _rasterise(
    formula: Formula,
    em: float,
    color: QColor,
    ratio: float,
    line: _LineMetrics,
    box: tuple[float, float] | None,
) -> QImage:
    from PySide6.QtSvg import QSvgRenderer

    width = formula.width * em
    ascent = formula.ascent * em
    depth = formula.depth * em
    # Every inline formula of a paragraph is padded to the box of its tallest: Qt centres each in
    # its line, and a taller one in the same line moves the centre (tests/ui/test_math_render.py).
    boxed_ascent = max(ascent, box[0] * em) if box else ascent
    boxed_depth = max(depth, box[1] * em) if box else depth
    top, bottom = _padding(boxed_ascent, boxed_depth, line)
    top += boxed_ascent - ascent
    bottom += boxed_depth - depth
    height = ascent + depth + top + bottom
    image = QImage(
        max(1, math.ceil(width * ratio)),
        max(1, math.ceil(height * ratio)),
        QImage.Format.Format_ARGB32_Premultiplied,
    )
    image.setDevicePixelRatio(ratio)
    image.fill(Qt.GlobalColor.transparent)
    renderer = QSvgRenderer(QByteArray(formula.svg))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, top, width, ascent + depth))
    # Drawn in one colour, the text's, so it reads in either theme (a \color is dropped).
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
    painter.fillRect(QRectF(0, 0, width, height), color)
    painter.end()
    return image


def formula_image(
    url: QUrl,
    font: QFont,
    color: QColor,
    ratio: float,
    box: tuple[float, float] | None = None,
) -> QImage | None:
    """The image a formula URL names, drawn for ``font`` (size), ``color`` and pixel ``ratio``.

    Cached by formula, size, colour, ratio and ``box`` (the ascent and depth, in ems, that the
    formulas sharing its paragraph reach: it is padded to them). A formula dropped from the
    layout cache since its message was rendered is laid out again here (the URL holds its source).
    """
    parsed = _parse_url(url)
    if parsed is None:
        return None
    tex, display, adjustment, cjk = parsed[:4]
    scale = _SIZE_ADJUSTMENTS.get(adjustment, 1.0)
    sized = QFont(font)
    pixels = QFontInfo(font).pixelSize() * scale
    sized.setPixelSize(max(1, round(pixels)))
    line = _line_metrics(sized, cjk)
    key = (tex, display, pixels, color.rgba(), ratio, line, box)
    image = _IMAGES.get(key)
    if image is not None:
        _IMAGES.move_to_end(key)
        return image
    formula = _STORE.layout_now(tex, display)
    if formula is None:
        return None
    image = _rasterise(formula, pixels * _MATH_SCALE, color, ratio, line, box)
    _IMAGES[key] = image
    while len(_IMAGES) > _IMAGES_KEPT:
        _IMAGES.popitem(last=False)
    return image


# --- the message view's side -----------------------------------------------------------------------


def formula_sources(cursor: QTextCursor) -> list[str]:
    """The sources (with delimiters) of the formula images in ``cursor``'s selection, in order."""
    start, end = cursor.selectionStart(), cursor.selectionEnd()
    document = cursor.document()
    sources: list[str] = []
    block = document.findBlock(start)
    while block.isValid() and block.position() < end:
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            first = max(start, fragment.position())
            last = min(end, fragment.position() + fragment.length())
            fmt = fragment.charFormat()
            if last > first and fmt.isImageFormat():
                name = fmt.toImageFormat().name()
                if name.startswith(MATH_SCHEME + ":"):
                    sources.extend([fmt.toolTip()] * (last - first))
            iterator += 1
        block = block.next()
    return sources


def _is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.WindowText).lightness() > 128


class MathBrowserMixin:
    """Mixed into a ``QTextBrowser`` (before it in the bases): formulas in its documents.

    Loads ``etos-math:`` images at the view's font size, text colour and pixel ratio; copies a
    selection's formulas as their LaTeX source; and, when the layout thread has finished formulas
    its document shows as pending source text, puts them in place.
    """

    math_watching = False
    _math_connected = False

    # The Qt methods it calls (font, palette, document…) are the browser's it is mixed into.

    def loadResource(self, kind: int, url: QUrl) -> Any:
        """Draw a formula the document refers to by name; other resources as Qt does."""
        # Only for a formula that was not added by _add_formula_images (a pasted fragment).
        if url.scheme() == MATH_SCHEME:
            return self._formula_image(url)
        return super().loadResource(kind, url)  # type: ignore[misc]

    def _formula_image(self, url: QUrl, box: tuple[float, float] | None = None) -> QImage | None:
        color = self.palette().color(QPalette.ColorRole.Text)  # type: ignore[attr-defined]
        ratio = self.devicePixelRatioF()  # type: ignore[attr-defined]
        return formula_image(url, self.font(), color, ratio, box)  # type: ignore[attr-defined]

    def _add_formula_images(self, names: Iterable[str]) -> bool:
        """Give the document its formula images (``names``) before it is laid out.

        So the layout finds them among the document's resources instead of calling back into
        Python for each (which, while the layout thread holds the GIL, waits for it every time).
        The inline formulas of a paragraph are padded to one box, so the other images of a
        paragraph that gains a taller one are drawn again.

        Returns:
            Whether images already in the document were drawn again (it must be laid out again).
        """
        document: QTextDocument = self.document()  # type: ignore[attr-defined]
        shown: dict[str, Any] = self.__dict__.setdefault("_math_names", {})
        new = [name for name in names if name not in shown]
        for name in new:
            shown[name] = _parse_url(QUrl(name))
        touched = {shown[name][4] for name in new if shown[name] and shown[name][4]}
        boxes = {paragraph: _paragraph_box(shown, paragraph) for paragraph in touched}
        redrawn = False
        for name, parsed in shown.items():
            if parsed is None:
                continue
            paragraph = parsed[4]
            if name not in new and paragraph not in touched:
                continue
            url = QUrl(name)
            image = self._formula_image(url, boxes.get(paragraph))
            if image is None:
                continue
            kind = QTextDocument.ResourceType.ImageResource
            if name not in new:
                old = document.resource(kind, url)
                if isinstance(old, QImage) and old.cacheKey() == image.cacheKey():
                    continue
                redrawn = True
            document.addResource(kind, url, image)
        return redrawn

    def take_formula_images(self, source: MathBrowserMixin) -> None:
        """Before ``source``'s document is appended to this one: give this one its formula images."""
        names = source.__dict__.get("_math_names")
        if names:
            self._add_formula_images(list(names))

    def changeEvent(self, event: QEvent) -> None:
        """Draw the formulas again at a new font size or in a new text colour."""
        super().changeEvent(event)  # type: ignore[misc]
        names = self.__dict__.get("_math_names")
        kinds = (QEvent.Type.FontChange, QEvent.Type.PaletteChange)
        if names and event.type() in kinds:
            # Drawn again at the new size or in the new text colour.
            self.__dict__["_math_names"] = {}
            self._add_formula_images(list(names))
            document: QTextDocument = self.document()  # type: ignore[attr-defined]
            document.markContentsDirty(0, document.characterCount())

    def createMimeDataFromSelection(self) -> QMimeData:
        """Copy a selection with its formulas as their source text."""
        mime: QMimeData = super().createMimeDataFromSelection()  # type: ignore[misc]
        cursor = self.textCursor()
        sources = formula_sources(cursor)
        if not sources:
            return mime
        parts = cursor.selection().toPlainText().split("\ufffc")
        if len(parts) != len(sources) + 1:
            return mime
        text = parts[0] + "".join(s + part for s, part in zip(sources, parts[1:], strict=True))
        # Only text: the HTML would name images no other program can load.
        plain = QMimeData()
        plain.setText(text)
        return plain

    def setHtml(self, html: str) -> None:
        """Show ``html`` with its formulas drawn as images."""
        self.__dict__["_math_names"] = {}
        super().setHtml(html)  # type: ignore[misc]
        if MATH_SCHEME + ":" in html:
            self._add_formula_images(unescape(name) for name in _IMAGE_SRC_RE.findall(html))
        if PENDING_ANCHOR in html:
            self.watch_pending_math()

    def watch_pending_math(self) -> None:
        """Put pending formulas of this document in place once they are laid out."""
        self.math_watching = True
        if not self._math_connected:
            # Never disconnected (Qt drops it with the view); a view not watching returns at once.
            self._math_connected = True
            _STORE.notifier().laid_out.connect(self._on_formulas_laid_out)  # type: ignore[attr-defined]
        # Those laid out between the render and now were announced before this view listened.
        self._on_formulas_laid_out()

    def _on_formulas_laid_out(self) -> None:
        if self.math_watching:
            dark = _is_dark(self.palette())  # type: ignore[attr-defined]
            self.math_watching, more = _fill_pending(
                self.document(),  # type: ignore[attr-defined]
                dark,
                self._add_formula_images,
            )
            if more:  # the rest in the next turn of the event loop, so none stalls it long
                QTimer.singleShot(0, self, self._on_formulas_laid_out)  # type: ignore[call-overload]


def _pending_name(fmt: QTextCharFormat) -> str | None:
    if fmt.isAnchor():
        for name in fmt.anchorNames():
            if name.startswith(PENDING_ANCHOR):
                return name
    return None


def _pending_fragments(document: QTextDocument) -> list[tuple[int, int, str, QTextCharFormat]]:
    """Where pending formulas are: (start, end, anchor name, format) for each.

    Qt gives an ``<a name>`` to the first character only; the rest of the source is the run of
    characters after it with the same tooltip (the ``title``, which is the source as written).
    """
    found: list[tuple[int, int, str, QTextCharFormat]] = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        current: list[Any] | None = None
        while not iterator.atEnd():
            fragment = iterator.fragment()
            fmt = fragment.charFormat()
            name = _pending_name(fmt)
            end = fragment.position() + fragment.length()
            if name is not None:
                current = [fragment.position(), end, name, fmt]
                found.append(current)  # type: ignore[arg-type]
            elif current is not None and fmt.toolTip() == current[3].toolTip():
                current[1] = end
            else:
                current = None
            iterator += 1
        block = block.next()
    return [(start, end, name, fmt) for start, end, name, fmt in found]


def _paragraph_box(shown: dict[str, Any], paragraph: int) -> tuple[float, float] | None:
    """The ascent and depth (ems) that the laid-out inline formulas of ``paragraph`` reach."""
    ascent = depth = 0.0
    for parsed in shown.values():
        if parsed is None or parsed[4] != paragraph or parsed[1]:
            continue
        known, formula = _STORE.known((parsed[0], False))
        if known and formula is not None:
            ascent, depth = max(ascent, formula.ascent), max(depth, formula.depth)
    return (ascent, depth) if ascent or depth else None


def _fill_pending(
    document: QTextDocument, dark: bool, add_images: Callable[[list[str]], bool]
) -> tuple[bool, bool]:
    """Replace the pending formulas that are laid out, for about ``_FILL_BUDGET_S``.

    ``add_images`` gives the document the images first (and says whether images already there
    were drawn again, for their paragraph's new box).

    Returns:
        Whether any are still pending, and whether laid-out ones were left for another turn.
    """
    from etos_desktop.ui.theme import code_palette

    still_pending = more = False
    deadline = time.perf_counter() + _FILL_BUDGET_S
    edits: list[tuple[int, int, QTextCharFormat | QTextImageFormat]] = []
    # Last first, so the positions of the earlier ones stay valid.
    for position, end, name, fmt in reversed(_pending_fragments(document)):
        written = _STORE.anchored(name)
        if written is None:
            continue  # forgotten (thousands of formulas later): it stays source text
        tex, display, source, cjk, paragraph = written
        known, formula = _STORE.known((tex, display))
        if not known:
            still_pending = True
            continue
        if time.perf_counter() > deadline or len(edits) >= _FILL_MAX:
            still_pending = more = True
            break
        if formula is None:
            code = QTextCharFormat(fmt)
            code.setAnchor(False)
            code.setAnchorNames([])
            code.setFontFamilies(list(CODE_FONTS))
            code.setBackground(QColor(code_palette(dark=dark).inline_code_background))
            edits.append((position, end, code))
        else:
            edits.append((position, end, image_format(tex, display, source, fmt, cjk, paragraph)))
    if not edits:
        return still_pending, more
    redrawn = add_images([f.name() for _, _, f in edits if isinstance(f, QTextImageFormat)])
    # One edit block: the document is laid out again once, not once per formula.
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    for position, end, fmt in edits:
        cursor.setPosition(position)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        if isinstance(fmt, QTextImageFormat):
            cursor.insertImage(fmt)
        else:
            cursor.insertText(cursor.selectedText(), fmt)
    cursor.endEditBlock()
    if redrawn:
        document.markContentsDirty(0, document.characterCount())
    return still_pending, more


def image_format(
    tex: str,
    display: bool,
    source: str,
    around: QTextCharFormat,
    cjk: bool = False,
    paragraph: int = 0,
) -> QTextImageFormat:
    """The format of a formula image, as the HTML importer makes it from the renderer's HTML."""
    image = QTextImageFormat()
    adjustment = around.intProperty(QTextFormat.Property.FontSizeAdjustment)
    image.setName(image_url(tex, display, adjustment, cjk, paragraph))
    image.setToolTip(source)
    image.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignMiddle)
    image.setMaximumWidth(QTextLength(QTextLength.Type.PercentageLength, 100))
    return image
