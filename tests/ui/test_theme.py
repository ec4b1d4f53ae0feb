"""The theme's colours as numbers: every text colour against the backgrounds it is drawn on.

The rendered-window test (``test_contrast.py``) measures glyph pixels; small anti-aliased text
reads fainter than its colour (black on white, 21:1, measures about 13:1), so the colours
themselves are held to 7:1 here (WCAG AAA), which is what passing the rendered test takes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from etos_desktop.ui import theme
from tests.helpers.contrast import contrast_ratio

UI = Path(theme.__file__).parent
HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def _rgb(value: str) -> tuple[int, int, int]:
    value = value.lstrip("#")
    return (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16))


def _ratio(text: str, background: str) -> float:
    return contrast_ratio(_rgb(text), _rgb(background))


@pytest.mark.parametrize("name", ["light", "dark"])
def test_palette_text_colours_reach_aaa(name: str) -> None:
    roles = theme.THEME_BY_NAME[name].roles
    pairs = {
        "text on base": (roles.text, roles.base),
        "text on alternate rows": (roles.text, roles.alternate_base),
        "window text": (roles.window_text, roles.window),
        "button text": (roles.button_text, roles.button),
        "selected text": (roles.highlighted_text, roles.highlight),
        "links": (roles.link, roles.base),
        "placeholders and help": (roles.placeholder, roles.base),
        "help on the window": (roles.placeholder, roles.window),
        "tooltips": (roles.tooltip_text, roles.tooltip_base),
    }
    low = {what: round(_ratio(*pair), 2) for what, pair in pairs.items() if _ratio(*pair) < 7}
    assert not low, low


@pytest.mark.parametrize("name", ["light", "dark"])
def test_state_colours_read_on_the_window_and_the_base(name: str) -> None:
    chosen = theme.THEME_BY_NAME[name]
    for what in ("ok", "error", "warning", "muted"):
        colour = getattr(chosen.colors, what)
        for background in (chosen.roles.window, chosen.roles.base):
            assert _ratio(colour, background) >= 7, (what, background)


@pytest.mark.parametrize("dark", [False, True])
def test_code_colours_read_on_the_code_background(dark: bool) -> None:
    palette = theme.code_palette(dark=dark)
    colours = {"text": palette.code_text}
    colours.update({token: m.group(0) for token, spec in palette.tokens if (m := HEX.search(spec))})
    low = {
        what: round(_ratio(colour, palette.code_background), 2)
        for what, colour in colours.items()
        if _ratio(colour, palette.code_background) < 7
    }
    assert not low, low
    assert _ratio(palette.header_text, palette.header_background) >= 7
    # A dark theme's code is highlighted by its own Pygments style.
    style = palette.pygments_style
    assert style.background_color == palette.code_background


def test_the_system_theme_follows_the_colour_scheme() -> None:
    assert theme.resolve_theme("system", Qt.ColorScheme.Dark) == "dark"
    assert theme.resolve_theme("system", Qt.ColorScheme.Light) == "light"
    assert theme.resolve_theme("system", Qt.ColorScheme.Unknown) == "light"
    assert theme.resolve_theme("dark", Qt.ColorScheme.Light) == "dark"


def test_colour_values_live_in_the_theme_module_only() -> None:
    offenders = [
        f"{path.relative_to(UI)}:{number}"
        for path in UI.rglob("*.py")
        if path.name != "theme.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HEX.search(line)
    ]
    assert not offenders, offenders
