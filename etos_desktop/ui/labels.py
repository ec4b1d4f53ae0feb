r"""Labels for text the app does not control: the model's, a server's or the user's.

Qt guesses whether a label's or tooltip's text is rich text from its content (``mightBeRichText``),
so a title the model wrote, a server's error body or a memory could render ``<img src="file://…">``
or styled, spoofed text. Labels that show such text are set to plain text; tooltips, which have no
text-format switch, are built here as escaped rich text. Long one-line text is elided, so it can
never widen a window. Bidi overrides in it are shown, not obeyed (``neutralise_bidi``): a title
"\u202egnp.exe" must not read "exe.png".
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget
from typing_extensions import override

from etos_desktop.core.text.cleaning import neutralise_bidi


def escaped_html(text: str) -> str:
    """``text`` as HTML that shows it literally (markup as typed, line breaks kept)."""
    return html.escape(text).replace("\n", "<br>")


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally, bidi overrides neutralised (``""``: no tooltip)."""
    return f"<qt>{escaped_html(neutralise_bidi(text))}</qt>" if text else ""


def make_plain(label: QLabel) -> QLabel:
    """Make ``label`` show its text literally; returns it."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


class ElidedLabel(QLabel):
    """A one-line plain-text label that elides its text to its width ("A long ti…").

    Bidi overrides in the text are neutralised (``neutralise_bidi``), in ``full_text`` too.

    Its size hint does not follow the text, so a long text never pushes its layout wider; the
    whole text is in the tooltip when it is cut.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def full_text(self) -> str:
        """The text before eliding."""
        return self._full

    @override
    def setText(self, text: str) -> None:
        self._full = neutralise_bidi(" ".join(text.split()))
        self._elide()

    @override
    def sizeHint(self) -> QSize:
        return QSize(80, super().sizeHint().height())

    @override
    def minimumSizeHint(self) -> QSize:
        return QSize(40, super().minimumSizeHint().height())

    @override
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = max(0, self.contentsRect().width())
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        super().setText(shown)
        self.setToolTip(plain_tooltip(self._full) if shown != self._full else "")
