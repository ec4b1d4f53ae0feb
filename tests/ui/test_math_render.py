"""Math, task lists and block quotes in replies, through the real message widget (issue 23, item 2).

Formulas are laid out on math_render's thread and put in place in the message's document; the
tests await that on the running loop.
"""

from __future__ import annotations

import itertools
import logging
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable

import pytest
from PySide6.QtCore import QPoint, QUrl
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QImage,
    QPalette,
    QTextCursor,
    QTextDocument,
    QTextFrame,
    QTextImageFormat,
    QTextTable,
)
from PySide6.QtWidgets import QApplication, QTextBrowser
from pytestqt.qtbot import QtBot

from etos_desktop.ui import math_render, theme
from etos_desktop.ui.markdown_render import render_markdown
from etos_desktop.ui.message_widget import MessageWidget
from tests.helpers.ui_driver import wait_until

_unique = itertools.count()


def _fresh(tex: str) -> str:
    """``tex`` made unique to this run, so it is not in the layout cache yet (it starts pending)."""
    return f"{tex} + u_{{{next(_unique)}{os.getpid()}}}"


@pytest.fixture
def make_widget(qtbot: QtBot) -> Callable[..., MessageWidget]:
    def make(width: int = 520) -> MessageWidget:
        widget = MessageWidget(7, "assistant", author="Aria")
        qtbot.addWidget(widget)
        widget.resize(width, 300)
        widget.show()
        return widget

    return make


def _browser(widget: MessageWidget) -> QTextBrowser:
    browsers = [b for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)]
    assert len(browsers) == 1
    return browsers[0]


def _images(document: QTextDocument) -> list[QTextImageFormat]:
    found = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fmt = iterator.fragment().charFormat()
            if fmt.isImageFormat() and fmt.toImageFormat().name().startswith("etos-math:"):
                found.append(fmt.toImageFormat())
            iterator += 1
        block = block.next()
    return found


def _image_of(document: QTextDocument, fmt: QTextImageFormat) -> QImage:
    resource = document.resource(QTextDocument.ResourceType.ImageResource, QUrl(fmt.name()))
    assert isinstance(resource, QImage)
    assert not resource.isNull()
    return resource


async def _formulas_shown(widget: MessageWidget, count: int) -> list[QTextImageFormat]:
    return await wait_until(
        lambda: (
            (images := _images(_browser(widget).document())) and len(images) >= count and images
        ),
        what=f"{count} formula images",
    )


async def test_a_good_formula_becomes_an_image_and_a_bad_one_stays_code_text(
    make_widget: Callable[..., MessageWidget], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    good = _fresh(r"\pi r^2")
    widget = make_widget()

    # a_ passes the quick checks and fails in the layout: it is pending first, then code.
    widget.set_text(f"Area ${good}$, broken $\\frac{{1}}{{2$ and $a_$.", streaming=False)
    browser = _browser(widget)
    assert f"${good}$" in browser.toPlainText()  # its source until it is laid out

    [image] = await _formulas_shown(widget, 1)
    await wait_until(lambda: not browser.math_watching, what="nothing pending")
    assert image.toolTip() == f"${good}$"
    pixels = _image_of(browser.document(), image)
    assert pixels.width() > 20
    assert pixels.height() > 5
    text = browser.toPlainText()
    assert f"${good}$" not in text
    assert "$\\frac{1}{2$" in text
    assert "$a_$" in text
    for bad in ("$\\frac{1}{2$", "$a_$"):
        cursor = browser.document().find(bad)
        assert not cursor.isNull()
        assert "JetBrains Mono" in (cursor.charFormat().fontFamilies() or [])
    assert [r for r in caplog.records if r.levelno > logging.DEBUG] == []


async def test_inline_formulas_sit_in_the_text_and_display_ones_are_centred_alone(
    make_widget: Callable[..., MessageWidget],
) -> None:
    inline, display = _fresh("x^2"), _fresh(r"\sum_{i=1}^n i")
    widget = make_widget()

    widget.set_text(f"Before ${inline}$ after.\n\n$$\n{display}\n$$\n\nEnd.", streaming=False)

    images = await _formulas_shown(widget, 2)
    document = _browser(widget).document()
    blocks = {}
    block = document.begin()
    while block.isValid():
        blocks[block.text()] = block
        block = block.next()
    assert "Before \ufffc after." in blocks
    alone = blocks["\ufffc"]
    assert alone.blockFormat().alignment() & alone.blockFormat().alignment().AlignHCenter
    assert [i.name().split("?")[0] for i in images] == ["etos-math:inline", "etos-math:display"]
    assert images[1].toolTip() == f"$$\n{display}\n$$"


@pytest.mark.parametrize(
    "text",
    [
        "It costs $5 and $10.",
        "Between $100-$200, or 5$ to 6$.",
        "价格是$5，或者$6。",
        "Escaped \\$x\\$ stays text.",
        "A lone $ sign and $ another $ with spaces.",
        "Open $\\frac{a}{b} never closed",
    ],
)
def test_money_and_unclosed_dollars_are_not_math(qapp: QApplication, text: str) -> None:
    rendered = render_markdown(text)

    assert "etos-math" not in rendered.html
    assert "<code" not in rendered.html
    assert not rendered.math_pending


@pytest.mark.parametrize(
    "text",
    ["Use `$x$` and `\\(y\\)` here.", "```\n$$x$$ and $y$\n```", "    $indented$ code"],
)
def test_code_spans_and_blocks_hold_no_math(qapp: QApplication, text: str) -> None:
    rendered = render_markdown(text)

    assert "etos-math" not in rendered.html
    assert not rendered.math_pending
    assert "$" in rendered.html


def test_all_four_delimiters_are_math(qapp: QApplication) -> None:
    html = render_markdown("$a$ and \\(b\\) and $$c$$ and \\[d\\]").html
    assert html.count("etos-math") == 4
    assert "$5" not in html


async def test_in_the_dark_theme_a_formula_is_drawn_in_the_text_colour(
    qapp: QApplication, make_widget: Callable[..., MessageWidget]
) -> None:
    theme.apply_look(qapp, "dark", QFont(qapp.font()))
    widget = make_widget()
    widget.set_text("Dark $\\mathbf{M}$ here", streaming=False)

    [image] = await _formulas_shown(widget, 1)

    browser = _browser(widget)
    text_colour = browser.palette().color(QPalette.ColorRole.Text)
    assert text_colour.lightness() > 160
    pixels = _image_of(browser.document(), image).convertToFormat(QImage.Format.Format_ARGB32)
    inked = [
        pixels.pixelColor(x, y)
        for x in range(pixels.width())
        for y in range(pixels.height())
        if pixels.pixelColor(x, y).alpha() > 250
    ]
    assert inked
    assert all(abs(c.lightness() - text_colour.lightness()) < 8 for c in inked)


async def test_selecting_and_copying_gives_the_latex_source(
    make_widget: Callable[..., MessageWidget],
) -> None:
    tex = _fresh(r"\frac{a}{b}")
    widget = make_widget()
    widget.set_text(f"Ratio \\({tex}\\) and $$x=1$$ end", streaming=False)
    await _formulas_shown(widget, 2)
    browser = _browser(widget)

    browser.selectAll()
    browser.copy()

    copied = QGuiApplication.clipboard().text()
    # The display formula is a centred block of its own; Qt keeps the space before it.
    assert copied == f"Ratio \\({tex}\\) and \n$$x=1$$\nend"


def test_formula_images_are_cached_by_size_colour_and_ratio(qapp: QApplication) -> None:
    url = QUrl(math_render.image_url("e^{i\\pi}+1=0", display=False))
    font = QFont(qapp.font())
    black, white = QColor("black"), QColor("white")

    first = math_render.formula_image(url, font, black, 1.0)
    again = math_render.formula_image(url, font, black, 1.0)
    other = math_render.formula_image(url, font, white, 1.0)
    sharp = math_render.formula_image(url, font, black, 2.0)

    assert first is not None
    assert again is not None
    assert other is not None
    assert sharp is not None
    assert first.cacheKey() == again.cacheKey()
    assert other.cacheKey() != first.cacheKey()
    assert sharp.devicePixelRatio() == 2.0
    assert abs(sharp.width() - 2 * first.width()) <= 2
    assert sharp.deviceIndependentSize().toSize() == first.deviceIndependentSize().toSize()


async def test_a_formula_wider_than_the_view_does_not_overflow_it(
    make_widget: Callable[..., MessageWidget],
) -> None:
    wide = " + ".join(f"x_{{{i}}}^{{{i}}}" for i in range(40))
    widget = make_widget(width=260)

    widget.set_text(f"$$\n{wide}\n$$", streaming=False)

    await _formulas_shown(widget, 1)
    browser = _browser(widget)
    assert browser.document().size().width() <= browser.viewport().width() + 1


async def test_a_half_typed_formula_streams_as_text_until_it_closes(
    make_widget: Callable[..., MessageWidget],
) -> None:
    tex = _fresh(r"\sum_i x_i")
    widget = make_widget()

    widget.set_text(f"Sum: $${tex[:8]}", streaming=True)
    widget.flush_render()
    browser = _browser(widget)
    assert browser.toPlainText() == f"Sum: $${tex[:8]}"
    assert not browser.math_watching
    widget.set_text(f"Sum: $${tex}$$ done", streaming=True)
    widget.flush_render()

    [image] = await _formulas_shown(widget, 1)
    assert image.toolTip() == f"$${tex}$$"
    widget.set_text(f"Sum: $${tex}$$ done", streaming=False)
    assert len(_images(_browser(widget).document())) == 1


async def test_formulas_in_a_long_streamed_reply_all_end_up_drawn(
    make_widget: Callable[..., MessageWidget],
) -> None:
    # Longer than a streaming piece: the finished pieces are rendered once and joined at the end.
    paragraphs = [f"Paragraph {n} has ${_fresh('y')}$ in it. " + "words " * 60 for n in range(12)]
    reply = "\n\n".join(paragraphs)
    widget = make_widget()
    for end in range(200, len(reply), 400):
        widget.set_text(reply[:end], streaming=True)
        widget.flush_render()
    widget.set_text(reply, streaming=False)

    def joined_and_drawn() -> bool:
        browsers = [b for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)]
        return len(browsers) == 1 and len(_images(browsers[0].document())) == 12

    await wait_until(joined_and_drawn, what="12 formulas in one document")


def test_task_lists_show_check_boxes_not_controls(qapp: QApplication) -> None:
    html = render_markdown("- [ ] todo\n- [x] done\n- [X] also").html
    document = QTextDocument()
    document.setHtml(html)

    assert "<input" not in html
    assert "list-style-type: none" in html
    assert document.toPlainText().split("\n") == ["☐ todo", "☑ done", "☑ also"]


def test_a_list_with_some_tasks_keeps_its_bullets(qapp: QApplication) -> None:
    html = render_markdown("- [ ] todo\n- plain\n\n1. [x] first").html

    assert "list-style-type: none" not in html
    assert "☐" in html
    assert "☑" in html


@pytest.mark.parametrize("dark", [False, True])
def test_a_block_quote_has_a_bar_beside_muted_text(
    qapp: QApplication, make_widget: Callable[..., MessageWidget], dark: bool
) -> None:
    theme.apply_look(qapp, "dark" if dark else "light", QFont(qapp.font()))
    palette = theme.code_palette(dark=dark)
    widget = make_widget()

    widget.set_text("Before\n\n> quoted line one\n> and two\n\nAfter", streaming=False)

    browser = _browser(widget)
    tables = [f for f in browser.document().rootFrame().childFrames() if isinstance(f, QTextTable)]
    assert len(tables) == 1
    table: QTextFrame = tables[0]
    assert isinstance(table, QTextTable)
    cell = table.cellAt(0, 0).format().toTableCellFormat()
    assert table.columns() == 1
    assert cell.leftBorder() == 3
    assert cell.leftBorderBrush().color() == QColor(palette.quote_bar)
    assert cell.topBorder() == cell.rightBorder() == cell.bottomBorder() == 0
    quoted = table.cellAt(0, 0).firstCursorPosition()
    assert quoted.block().text() == "quoted line one and two"
    assert quoted.charFormat().foreground().color() == QColor(palette.quote_text)

    # The bar is drawn: left of the quoted text, all down it, a run of pixels of its colour.
    lines = browser.document().documentLayout().blockBoundingRect(quoted.block())
    picture = widget.grab().toImage()
    scale = picture.devicePixelRatio()
    bar = QColor(palette.quote_bar)
    for fraction in (0.1, 0.5, 0.9):
        start = browser.viewport().mapTo(
            widget, QPoint(0, round(lines.top() + lines.height() * fraction))
        )
        y = round(start.y() * scale)
        row = [
            picture.pixelColor(x, y)
            for x in range(round(start.x() * scale), round((start.x() + lines.left()) * scale))
        ]
        assert sum(colour == bar for colour in row) >= 2 * scale, (
            fraction,
            [c.name() for c in row],
        )


@pytest.mark.parametrize(
    "text",
    ["\\[a\n" * 10_000, "$$a\n" * 10_000, "\\(a " * 10_000, "$x " * 40_000, "$$ a " * 20_000],
    ids=["unclosed-bracket-lines", "dollar-lines", "unclosed-parens", "dollars", "many-formulas"],
)
@pytest.mark.timeout(10)
def test_unclosed_delimiters_do_not_make_rendering_quadratic(qapp: QApplication, text: str) -> None:
    # Each unclosed \[ line scanned to the next blank line: 10,000 of them took minutes.
    rendered = render_markdown(text)

    assert rendered.html
    assert rendered.html.count("etos-math") <= 256  # MAX_FORMULAS: the rest is source text


def _ink_runs(picture: QImage) -> list[tuple[int, int]]:
    """(first column, lowest dark row) of each run of inked columns, left to right."""
    runs: list[tuple[int, int]] = []
    inside = False
    for x in range(picture.width()):
        rows = [y for y in range(picture.height()) if picture.pixelColor(x, y).lightness() < 110]
        if rows and inside:
            runs[-1] = (runs[-1][0], max(runs[-1][1], max(rows)))
        elif rows:
            runs.append((x, max(rows)))
        inside = bool(rows)
    return runs


@pytest.mark.parametrize(
    "before",
    ["", "中文", "$ax^2 + bx + c = 0$ xx", "中文 $b^2 - 4ac$ xx"],
    ids=["latin", "chinese", "after-a-taller-formula", "chinese-after-a-taller-formula"],
)
async def test_an_inline_formula_sits_on_the_text_baseline(
    qapp: QApplication, make_widget: Callable[..., MessageWidget], before: str
) -> None:
    # Qt centres a middle-aligned image in its line, and a line with Chinese in it is taller:
    # the same padding raised a formula 2 px there; a taller formula in the same line moved the
    # centre (the small one sank 2 px) until a paragraph's formulas were padded to one box.
    theme.apply_look(qapp, "light", QFont("DejaVu Sans", 10))
    widget = make_widget()
    widget.set_text(f"xx {before} $a \\neq 0$ xx", streaming=False)
    images = await _formulas_shown(widget, 2 if "$" in before else 1)
    browser = _browser(widget)

    # Where the small formula starts, and the first glyph (its "a") from there.
    text = browser.document().begin().text()
    cursor = QTextCursor(browser.document())
    cursor.setPosition(text.rindex("\ufffc"))
    start = browser.cursorRect(cursor).left()
    runs = _ink_runs(browser.viewport().grab().toImage())
    text_x = next(bottom for x, bottom in runs if x > 2)  # the first "x" (not the caret at 0)
    formula_a = next(bottom for x, bottom in runs if x >= start)

    assert len(images) >= 1
    assert abs(formula_a - text_x) <= 1, (formula_a, text_x, runs)  # whole pixels: ±1 px
