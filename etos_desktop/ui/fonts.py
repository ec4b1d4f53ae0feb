"""The UI font: which families, in which order, for the UI language, and at which size.

Qt draws each character with the first family in the list that has it. A CJK font has Latin
letters and punctuation too, so whichever family comes first decides how English looks: with
the CJK font first, “quotes” and — dashes in English text come out full width (measured on
Debian: “ is 12 px wide in Noto Sans CJK SC at 9 pt, 6.2 px in DejaVu Sans, the width of 中 is
12 px). So a Latin family comes first in every UI language, and the CJK families after it give
Chinese text its glyphs. Without the list, Qt's own fallback chose Noto Sans CJK **JP** for
Chinese (Japanese glyph forms for characters such as 直 and 骨); the CJK families are ordered
by the UI locale's script instead: Simplified Chinese first for English and Simplified Chinese,
Traditional for zh_TW/zh_HK, Japanese for ja.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QLocale
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo

#: Latin UI families by platform, best first; ones that are not installed are skipped by Qt.
LATIN_FAMILIES = (
    "Noto Sans",
    "DejaVu Sans",
    "Cantarell",
    "Ubuntu",
    "Segoe UI",
    ".AppleSystemUIFont",
    "Helvetica Neue",
    "Liberation Sans",
    "Arial",
)
_SIMPLIFIED = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Microsoft YaHei UI",
    "Microsoft YaHei",
    "PingFang SC",
    "Hiragino Sans GB",
    "WenQuanYi Micro Hei",
)
_TRADITIONAL = (
    "Noto Sans CJK TC",
    "Source Han Sans TC",
    "Microsoft JhengHei UI",
    "Microsoft JhengHei",
    "PingFang TC",
)
_HONG_KONG = ("Noto Sans CJK HK", "Source Han Sans HK", "PingFang HK")
_JAPANESE = ("Noto Sans CJK JP", "Source Han Sans", "Yu Gothic UI", "Hiragino Sans", "Meiryo UI")
_KOREAN = ("Noto Sans CJK KR", "Source Han Sans K", "Malgun Gothic", "Apple SD Gothic Neo")


def cjk_families(locale: QLocale) -> tuple[str, ...]:
    """The CJK families for ``locale``, its own script's first, the other scripts after."""
    language = locale.language()
    if language == QLocale.Language.Japanese:
        first = _JAPANESE
    elif language == QLocale.Language.Korean:
        first = _KOREAN
    elif language == QLocale.Language.Chinese and (
        locale.script() == QLocale.Script.TraditionalChineseScript
        or locale.territory() in (QLocale.Country.Taiwan, QLocale.Country.Macau)
    ):
        first = _TRADITIONAL
    elif language == QLocale.Language.Chinese and locale.territory() == QLocale.Country.HongKong:
        first = _HONG_KONG + _TRADITIONAL
    else:
        # English too: the app's users write Simplified Chinese most.
        first = _SIMPLIFIED
    rest = [f for f in (*_SIMPLIFIED, *_TRADITIONAL, *_JAPANESE, *_KOREAN) if f not in first]
    return (*first, *rest)


def _covers_cjk(family: str) -> bool:
    systems = QFontDatabase.writingSystems(family)
    return any(
        s in systems
        for s in (
            QFontDatabase.WritingSystem.SimplifiedChinese,
            QFontDatabase.WritingSystem.TraditionalChinese,
            QFontDatabase.WritingSystem.Japanese,
            QFontDatabase.WritingSystem.Korean,
        )
    )


def ui_families(locale: QLocale, system_font: QFont) -> list[str]:
    """The UI's families in order: Latin first (the system's own if it is one), then CJK.

    Args:
        locale: The UI locale (it orders the CJK families).
        system_font: The platform's UI font; its family leads when it is a Latin font (a CJK
            font that a Chinese desktop sets as its UI font goes with the CJK ones instead).
    """
    system = QFontInfo(system_font).family()
    latin: list[str] = [system] if system and not _covers_cjk(system) else []
    latin += [f for f in LATIN_FAMILIES if f not in latin]
    return _unique([*latin, *cjk_families(locale), system])


def _unique(families: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(f for f in families if f))


def ui_font(locale: QLocale, system_font: QFont, percent: int) -> QFont:
    """The application font: ``system_font`` at ``percent`` of its size, in the UI's families."""
    font = QFont(system_font)
    font.setFamilies(ui_families(locale, system_font))
    size = system_font.pointSizeF()
    if size > 0:
        font.setPointSizeF(round(size * percent / 100, 1))
    else:  # a font sized in pixels
        font.setPixelSize(max(6, round(system_font.pixelSize() * percent / 100)))
    return font
