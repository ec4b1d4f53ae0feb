"""Showing text the app did not write in Qt widgets that would guess it is rich text.

A tooltip, like a label in ``AutoText`` format, renders its text as HTML when it looks like HTML
(``Qt.mightBeRichText``), so a URL the user typed or a server's error body could draw images or
styled, spoofed text there. Labels that show such text are set to ``Qt.TextFormat.PlainText``;
tooltips, which have no format setting, get their text escaped inside an explicit rich-text
envelope, so it shows exactly as written.
"""

from __future__ import annotations

import html


def escaped_html(text: str) -> str:
    """``text`` as HTML that shows it literally (markup as typed, line breaks kept)."""
    return html.escape(text).replace("\n", "<br>")


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally (``""`` stays ``""``: no tooltip)."""
    return f"<qt>{escaped_html(text)}</qt>" if text else ""
