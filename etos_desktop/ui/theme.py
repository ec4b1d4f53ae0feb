"""The app's colours, for the light and the dark theme: the one place colour values live.

A theme is a full ``QPalette`` (drawn by the Fusion style, which honours every palette role on
every platform), colours by meaning (an error, a success, a muted note) for the widgets that
colour a text themselves, the Markdown view's palette (code blocks with their own Pygments
style, tables, quotes) and the accents in ``resources/themes/<name>.qss`` (the chat's
background, the bubbles, the banner). ``apply_look`` puts one on the application at run time,
with the UI font: every widget gets a ``PaletteChange`` and recolours itself.

Text colours reach at least 7:1 against the backgrounds they are drawn on (WCAG AAA), because
small anti-aliased text reads fainter than its colour: the contrast test
(``tests/ui/test_contrast.py``) measures the glyph pixels and holds them to 4.5:1.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QDir, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QToolTip, QWidget

from etos_desktop.resources import resource_path

log = logging.getLogger(__name__)

#: The themes there are; "system" follows the platform's light or dark mode.
THEMES = ("light", "dark")


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
    #: Search matches marked in a text (snippets, messages), the current one of a find, and
    #: the text on both (at least 5:1 on either; the opened message's border is in the QSS).
    mark: str
    mark_current: str
    mark_text: str
    #: The user's message bubbles: a tint of the accent on the chat's background.
    bubble: str


LIGHT = Colors(
    ok="#145518",
    error="#8c1c16",
    warning="#5c3200",
    muted="#33363c",
    invisible="#5c3200",
    accent_tint="rgba(91, 79, 214, 0.09)",
    accent_border="rgba(91, 79, 214, 0.40)",
    added="#145518",
    removed="#8c1c16",
    mark="#ffe58a",
    mark_current="#ffb84d",
    mark_text="#1c1c22",
    bubble="#ecebfa",
)
DARK = Colors(
    ok="#8ee89a",
    error="#ffa198",
    warning="#f5d27a",
    muted="#c0c4cb",
    invisible="#f5d27a",
    accent_tint="rgba(160, 150, 255, 0.12)",
    accent_border="rgba(160, 150, 255, 0.45)",
    added="#8ee89a",
    removed="#ffa198",
    mark="#5c4d12",
    mark_current="#8f4a00",
    mark_text="#f4f4f6",
    bubble="#2a2840",
)


@dataclass(frozen=True)
class CodePalette:
    """Colours of rendered Markdown: code blocks, inline code, quotes and tables.

    ``tokens`` maps Pygments token types (``"Keyword"``, ``"Literal.String"``) to style strings
    (``"bold #9a1a2a"``); :attr:`pygments_style` is the Pygments style built from them. The rest
    are ``#rrggbb`` strings.
    """

    name: str
    code_background: str
    code_text: str
    #: A code block's language-and-Copy bar, and table header cells.
    header_background: str
    header_text: str
    border: str
    inline_code_background: str
    quote_text: str
    #: The bar beside a block quote.
    quote_bar: str
    tokens: tuple[tuple[str, str], ...]

    @property
    def pygments_style(self) -> Any:
        """The Pygments style class that highlights code in these colours."""
        return _pygments_style(self)


LIGHT_CODE = CodePalette(
    name="light",
    code_background="#f6f8fa",
    code_text="#1f2328",
    header_background="#eaeef2",
    header_text="#24292f",
    border="#c8d1da",
    inline_code_background="#eceff3",
    quote_text="#2f343b",
    quote_bar="#8c959f",
    tokens=(
        ("Comment", "italic #474d56"),
        ("Comment.Preproc", "noitalic #7a3000"),
        ("Keyword", "#9a1a2a"),
        ("Keyword.Type", "#7a3000"),
        ("Operator.Word", "#9a1a2a"),
        ("Name.Builtin", "#7a3000"),
        ("Name.Function", "#5a2fa0"),
        ("Name.Class", "bold #5a2fa0"),
        ("Name.Decorator", "#5a2fa0"),
        ("Name.Exception", "#7a3000"),
        ("Name.Namespace", "#0a3069"),
        ("Name.Tag", "#0f5a25"),
        ("Name.Attribute", "#0a3f8a"),
        ("Name.Constant", "#0a3f8a"),
        ("Name.Variable", "#7a3000"),
        ("Literal.String", "#0a3069"),
        ("Literal.String.Escape", "#0f5a25"),
        ("Literal.String.Regex", "#0f5a25"),
        ("Literal.Number", "#0a3f8a"),
        ("Generic.Heading", "bold #0a3069"),
        ("Generic.Subheading", "bold #0a3069"),
        ("Generic.Inserted", "#0f5a25"),
        ("Generic.Deleted", "#82071e"),
        ("Generic.Emph", "italic"),
        ("Generic.Strong", "bold"),
        ("Generic.Prompt", "#474d56"),
        ("Generic.Output", "#474d56"),
        ("Error", "#82071e"),
    ),
)
DARK_CODE = CodePalette(
    name="dark",
    code_background="#0d1117",
    code_text="#e6edf3",
    header_background="#1c2128",
    header_text="#c0c8d2",
    border="#3d444d",
    inline_code_background="#2b3038",
    quote_text="#c0c6ce",
    quote_bar="#6e7681",
    tokens=(
        ("Comment", "italic #a3acb8"),
        ("Comment.Preproc", "noitalic #ffa657"),
        ("Keyword", "#ff9b94"),
        ("Keyword.Type", "#ffa657"),
        ("Operator.Word", "#ff9b94"),
        ("Name.Builtin", "#ffa657"),
        ("Name.Function", "#d2a8ff"),
        ("Name.Class", "bold #d2a8ff"),
        ("Name.Decorator", "#d2a8ff"),
        ("Name.Exception", "#ffa657"),
        ("Name.Namespace", "#a5d6ff"),
        ("Name.Tag", "#7ee787"),
        ("Name.Attribute", "#79c0ff"),
        ("Name.Constant", "#79c0ff"),
        ("Name.Variable", "#ffa657"),
        ("Literal.String", "#a5d6ff"),
        ("Literal.String.Escape", "#7ee787"),
        ("Literal.String.Regex", "#7ee787"),
        ("Literal.Number", "#79c0ff"),
        ("Generic.Heading", "bold #79c0ff"),
        ("Generic.Subheading", "bold #79c0ff"),
        ("Generic.Inserted", "#7ee787"),
        ("Generic.Deleted", "#ffa198"),
        ("Generic.Emph", "italic"),
        ("Generic.Strong", "bold"),
        ("Generic.Prompt", "#a3acb8"),
        ("Generic.Output", "#a3acb8"),
        ("Error", "#ffa198"),
    ),
)


@functools.cache
def _pygments_style(palette: CodePalette) -> Any:
    # Built on first use: Pygments loads after the first frame (see app.HEAVY_MODULES).
    from pygments.style import Style
    from pygments.token import Token, string_to_tokentype

    styles = {Token: palette.code_text}
    styles.update({string_to_tokentype(name): spec for name, spec in palette.tokens})
    return type(
        f"Etos{palette.name.capitalize()}Style",
        (Style,),
        {
            "name": f"etos-{palette.name}",
            "background_color": palette.code_background,
            "highlight_color": palette.inline_code_background,
            "styles": styles,
        },
    )


def code_palette(*, dark: bool) -> CodePalette:
    """The Markdown code palette for a dark or a light background."""
    return DARK_CODE if dark else LIGHT_CODE


@dataclass(frozen=True)
class Roles:
    """The palette roles of a theme, as ``#rrggbb`` strings."""

    window: str
    window_text: str
    base: str
    alternate_base: str
    text: str
    button: str
    button_text: str
    bright_text: str
    highlight: str
    highlighted_text: str
    link: str
    link_visited: str
    tooltip_base: str
    tooltip_text: str
    placeholder: str
    light: str
    midlight: str
    mid: str
    dark: str
    shadow: str
    #: Text of disabled controls (WCAG exempts them; still kept legible).
    disabled_text: str
    accent: str


LIGHT_ROLES = Roles(
    window="#f1f1f5",
    window_text="#1c1c22",
    base="#ffffff",
    alternate_base="#f4f4f8",
    text="#1c1c22",
    button="#f7f7fa",
    button_text="#1c1c22",
    bright_text="#ffffff",
    highlight="#3f3699",
    highlighted_text="#ffffff",
    link="#2e2496",
    link_visited="#6a24b8",
    tooltip_base="#ffffff",
    tooltip_text="#1c1c22",
    placeholder="#33363c",
    light="#ffffff",
    midlight="#e6e6ed",
    mid="#b9b9c6",
    dark="#8b8b99",
    shadow="#55555f",
    disabled_text="#85858f",
    accent="#5b4fd6",
)
DARK_ROLES = Roles(
    window="#1e1f25",
    window_text="#e8e8ed",
    base="#16171c",
    alternate_base="#1b1c22",
    text="#e8e8ed",
    button="#2b2c34",
    button_text="#e8e8ed",
    bright_text="#ffffff",
    highlight="#3f3699",
    highlighted_text="#ffffff",
    link="#b8afff",
    link_visited="#d7b3ff",
    tooltip_base="#2b2c34",
    tooltip_text="#e8e8ed",
    placeholder="#c0c4cb",
    light="#3b3c46",
    midlight="#33343d",
    mid="#4a4b56",
    dark="#101114",
    shadow="#000000",
    disabled_text="#7b7d87",
    accent="#a096ff",
)


@dataclass(frozen=True)
class Theme:
    """Everything that colours the app in one theme."""

    name: str
    dark: bool
    roles: Roles
    colors: Colors
    code: CodePalette


THEME_BY_NAME = {
    "light": Theme("light", False, LIGHT_ROLES, LIGHT, LIGHT_CODE),
    "dark": Theme("dark", True, DARK_ROLES, DARK, DARK_CODE),
}


def resolve_theme(setting: str, scheme: Qt.ColorScheme) -> str:
    """The theme to show for the ``ui.theme`` setting ("system" follows ``scheme``)."""
    if setting in THEMES:
        return setting
    return "dark" if scheme == Qt.ColorScheme.Dark else "light"


def palette_for(theme: Theme) -> QPalette:
    """The full palette of ``theme``, every role in every colour group."""
    r = theme.roles
    role = QPalette.ColorRole
    palette = QPalette()
    pairs = {
        role.Window: r.window,
        role.WindowText: r.window_text,
        role.Base: r.base,
        role.AlternateBase: r.alternate_base,
        role.Text: r.text,
        role.Button: r.button,
        role.ButtonText: r.button_text,
        role.BrightText: r.bright_text,
        role.Highlight: r.highlight,
        role.HighlightedText: r.highlighted_text,
        role.Link: r.link,
        role.LinkVisited: r.link_visited,
        role.ToolTipBase: r.tooltip_base,
        role.ToolTipText: r.tooltip_text,
        role.PlaceholderText: r.placeholder,
        role.Light: r.light,
        role.Midlight: r.midlight,
        role.Mid: r.mid,
        role.Dark: r.dark,
        role.Shadow: r.shadow,
        role.Accent: r.accent,
    }
    for color_role, value in pairs.items():
        palette.setColor(color_role, QColor(value))
    disabled = QPalette.ColorGroup.Disabled
    for color_role in (role.WindowText, role.Text, role.ButtonText, role.PlaceholderText):
        palette.setColor(disabled, color_role, QColor(r.disabled_text))
    palette.setColor(disabled, role.Highlight, QColor(r.mid))
    palette.setColor(disabled, role.Base, QColor(r.window))
    return palette


def style_sheet(theme: Theme) -> str:
    """The accents of ``theme`` (``resources/themes/<name>.qss``); ``""`` when it is missing."""
    path = resource_path("themes", f"{theme.name}.qss")
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        log.warning("theme %s not found", path)
        return ""


def apply_look(app: QApplication, name: str, font: QFont) -> Theme:
    """Put the theme called ``name`` ("light" or "dark") and ``font`` on ``app``.

    The palette, the font and the style sheet (the theme's accents and the title sizes) go on
    together: with a style sheet in place, ``QApplication.setFont`` and ``setPalette`` reach
    the widgets only when the sheet is set again (Qt re-polishes them then), so it is.
    """
    theme = THEME_BY_NAME[name]
    if not app.property("etosFusion"):
        # The platform styles of Windows and macOS draw many controls in their own colours,
        # whatever the palette says; Fusion draws every role. Set once, and only when another
        # style is in use (a new style object costs ~8 ms and re-polishes every widget).
        if app.style().name().lower() != "fusion":
            app.setStyle("Fusion")
        app.setProperty("etosFusion", True)
    palette = palette_for(theme)
    changed = False
    if app.palette() != palette:
        app.setPalette(palette)
        QToolTip.setPalette(palette)
        changed = True
    if app.font() != font:
        app.setFont(font)
        changed = True
    # The sheets name their images (check marks, the Close icon) as ``url(themes:…)``.
    QDir.setSearchPaths("themes", [str(resource_path("themes"))])
    sheet = style_sheet(theme) + "\n" + font_rules(font)
    if changed or app.styleSheet() != sheet:
        app.setStyleSheet(sheet)
    return theme


def font_rules(font: QFont) -> str:
    """The style sheet rules that size titles relative to ``font`` (the UI font).

    Sizes are set here rather than with ``setFont`` on the labels: a style sheet's re-polish
    puts a label's earlier font back.
    """
    rules = []
    for name, factor in _TITLE_SIZES.items():
        if font.pointSizeF() > 0:
            size = f"{font.pointSizeF() * factor:.1f}pt"
        else:
            size = f"{round(font.pixelSize() * factor)}px"
        rules.append(f"QLabel#{name} {{ font-size: {size}; font-weight: 600; }}")
    return "\n".join(rules)


#: Titles, by object name, and their size relative to the UI font.
_TITLE_SIZES = {"conversationTitle": 1.25, "welcomeTitle": 1.5, "aboutTitle": 1.3}


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
