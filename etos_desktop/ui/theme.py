"""The app's colours by meaning, for light and dark palettes: the one place colour values live.

Widgets ask for a colour by what it says (an error, a success, a muted note) and get the variant
that reads on the palette in use; the QSS themes in ``resources/themes`` style the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget


@dataclass(frozen=True)
class Colors:
    """Colours by meaning, as ``#rrggbb`` strings (or ``rgba(…)`` for tints)."""

    ok: str
    error: str
    warning: str
    muted: str
    #: Invisible characters spelled out in a text the user reviews.
    invisible: str
    #: The memory colour: notes under replies, memory markers.
    accent_tint: str
    accent_border: str
    #: Diffs: added and removed text.
    added: str
    removed: str


LIGHT = Colors(
    ok="#1b6e20",
    error="#b3261e",
    warning="#8a4b00",
    muted="#5f6368",
    invisible="#8a4b00",
    accent_tint="rgba(124, 108, 242, 0.10)",
    accent_border="rgba(124, 108, 242, 0.35)",
    added="#1b6e20",
    removed="#b3261e",
)
DARK = Colors(
    ok="#7ee787",
    error="#ff8a80",
    warning="#f2cc60",
    muted="#a8adb4",
    invisible="#f2cc60",
    accent_tint="rgba(150, 138, 255, 0.16)",
    accent_border="rgba(150, 138, 255, 0.45)",
    added="#7ee787",
    removed="#ff8a80",
)


@dataclass(frozen=True)
class CodePalette:
    """Colours of rendered Markdown: code blocks, inline code, quotes and tables.

    ``pygments_style`` names the Pygments style whose inline colours highlight the code; the rest are
    ``#rrggbb`` strings.
    """

    pygments_style: str
    code_background: str
    code_text: str
    #: A code block's language-and-Copy bar, and table header cells.
    header_background: str
    header_text: str
    border: str
    inline_code_background: str
    quote_text: str


LIGHT_CODE = CodePalette(
    pygments_style="default",
    code_background="#f6f8fa",
    code_text="#1f2328",
    header_background="#eaeef2",
    header_text="#57606a",
    border="#d0d7de",
    inline_code_background="#eff1f3",
    quote_text="#57606a",
)
DARK_CODE = CodePalette(
    pygments_style="github-dark",
    code_background="#0d1117",
    code_text="#e6edf3",
    header_background="#1c2128",
    header_text="#8d96a0",
    border="#30363d",
    inline_code_background="#2d333b",
    quote_text="#9198a1",
)


def code_palette(*, dark: bool) -> CodePalette:
    """The Markdown code palette for a dark or a light background."""
    return DARK_CODE if dark else LIGHT_CODE


def is_dark(widget: QWidget | None = None) -> bool:
    """Whether ``widget`` (or the application) draws light text on a dark background."""
    palette = widget.palette() if widget is not None else QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.WindowText).lightness() > 128


def colors(widget: QWidget | None = None) -> Colors:
    """The colours that read on ``widget``'s palette (the application's when ``None``)."""
    return DARK if is_dark(widget) else LIGHT


def state_color(state: str, widget: QWidget | None = None) -> str:
    """The text colour of a status line: ``"ok"``, ``"error"``, ``"warning"`` or ``""``."""
    palette = colors(widget)
    return {"ok": palette.ok, "error": palette.error, "warning": palette.warning}.get(state, "")


def state_style(state: str, widget: QWidget | None = None) -> str:
    """A style sheet colouring a status label for ``state`` (``""`` for the palette's text)."""
    color = state_color(state, widget)
    return f"color: {color};" if color else ""
