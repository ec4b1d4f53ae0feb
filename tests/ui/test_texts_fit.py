"""Every visible text fits its widget at 800×600 with 130 % text, in English and in Chinese.

The walk covers the main window with a conversation in it, each Settings page, the context
inspector and About: a label that does not wrap, a button or a check box narrower than its own
size hint shows its text cut (issue 19: "Packa…", the keyring notice, the inspector's headers).
Texts that elide on purpose (a conversation's title) are the exceptions, named below.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QHeaderView,
    QLabel,
    QToolButton,
    QWidget,
)

from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.message_widget import MessageWidget
from tests.helpers import showcase
from tests.helpers.chat_app import idle, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.ui_driver import click

#: Widgets that elide their text by design (the full text is in their tooltip).
ELIDED = frozenset({"conversationTitle"})


def _needed_width(widget: QWidget) -> int:
    """How wide ``widget`` must be to show its whole text on one line."""
    if isinstance(widget, QLabel):
        text = widget.text()
        metrics = widget.fontMetrics()
        margins = widget.contentsMargins()
        extra = margins.left() + margins.right() + 2 * widget.margin() + widget.indent()
        if widget.textFormat() != 0 and ("<" in text):  # rich text: its document lays it out
            return widget.sizeHint().width()
        return max(metrics.horizontalAdvance(line) for line in text.split("\n")) + extra
    return widget.sizeHint().width()


def cut_texts(root: QWidget, where: str) -> list[str]:
    """The visible labels and buttons under ``root`` whose text is wider than the widget."""
    found = []
    widgets: list[QWidget] = [*root.findChildren(QLabel), *root.findChildren(QAbstractButton)]
    for widget in widgets:
        if not widget.isVisible() or widget.objectName() in ELIDED:
            continue
        text = widget.text().replace("&", "")
        if not text.strip() or (isinstance(widget, QLabel) and widget.wordWrap()):
            continue
        if isinstance(widget, QToolButton) and widget.toolButtonStyle() == 0:  # icon only
            continue
        need = _needed_width(widget)
        if need > widget.width():
            found.append(
                f"{where}: {type(widget).__name__} {widget.objectName() or '?'} "
                f"{text[:60]!r} needs {need} px, has {widget.width()}"
            )
    for header in root.findChildren(QHeaderView):
        if not header.isVisible():
            continue
        model = header.model()
        if model is None:
            continue
        for section in range(header.count()):
            if header.isSectionHidden(section):
                continue
            title = str(model.headerData(section, header.orientation()) or "")
            # What the style needs for the title (margins, sort arrow included).
            need = header.sectionSizeFromContents(section).width()
            if title and header.sectionSize(section) < need:
                found.append(
                    f"{where}: header {title!r} needs {need} px, has {header.sectionSize(section)}"
                )
    return found


async def _settle() -> None:
    for _ in range(3):
        QApplication.processEvents()
        await asyncio.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("language", ["en", "zh"])
async def test_every_text_fits_at_800_by_600_with_130_percent_text(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path, language: str
) -> None:
    app = await start_app(qapp, server, isolated_environment)
    app.settings.set("ui.language", language)
    app.settings.set("ui.font_size", 130)
    try:
        app.window.resize(800, 600)
        await showcase.fill(app, server, language)
        await idle(app)
        await _settle()
        problems = cut_texts(app.window, "main window")

        replies = [
            w
            for w in app.window.findChildren(MessageWidget)
            if w.isVisible() and w.role == "assistant"
        ]
        await click(replies[-1].findChild(QToolButton, "contextButton"))
        await idle(app)
        inspector = next(d for d in app.window.findChildren(ContextDialog) if d.isVisible())
        inspector.resize(800, 600)
        await _settle()
        problems += cut_texts(inspector, "inspector")
        inspector.close()

        about = app.window.show_about()
        await asyncio.wait_for(about.loaded, 30)  # its list of parts is read on a worker
        await _settle()
        problems += cut_texts(about, "About")
        about.close()

        dialog = app.open_settings()
        dialog.resize(800, 600)
        for name in dialog.page_names():
            dialog.show_page(name)
            await dialog.wait_idle()
            await _settle()
            problems += cut_texts(dialog, f"Settings › {name}")
        dialog.reject()
        await dialog.wait_idle()
        assert not problems, "texts cut at 800×600, 130 %:\n" + "\n".join(sorted(set(problems)))
    finally:
        await stop_app(app)
