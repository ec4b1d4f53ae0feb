"""The one cleaning rule for text that comes in, and the one for text that is shown (issue 19)."""

from __future__ import annotations

import pytest

from etos_desktop.core.text.cleaning import clean_text, neutralise_bidi

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧: three emoji joined by ZWJ
ARABIC = "مرحبا"
HEBREW = "שלום"
BIDI_CONTROLS = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


def test_nul_is_dropped() -> None:
    assert clean_text("tea\x00 with milk\x00") == "tea with milk"


@pytest.mark.parametrize("code", [c for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)])
def test_every_c0_control_but_tab_newline_and_cr_is_dropped(code: int) -> None:
    assert clean_text(f"a{chr(code)}b") == "ab"


@pytest.mark.parametrize("code", [0x7F, *range(0x80, 0xA0)])
def test_del_and_every_c1_control_is_dropped(code: int) -> None:
    assert clean_text(f"a{chr(code)}b") == "ab"


def test_line_ends_become_newlines() -> None:
    assert clean_text("one\r\ntwo\rthree\n") == "one\ntwo\nthree\n"


def test_tab_newline_and_surrounding_space_are_kept() -> None:
    assert clean_text("  a\tb\n\nc  ") == "  a\tb\n\nc  "


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    cleaned = clean_text("a\ud800b")

    assert cleaned == "a\ufffdb"
    cleaned.encode("utf-8")


def test_an_emoji_zwj_sequence_is_intact() -> None:
    assert clean_text(f"family {FAMILY}!") == f"family {FAMILY}!"
    assert neutralise_bidi(FAMILY) == FAMILY


@pytest.mark.parametrize("text", [ARABIC, HEBREW, f"{ARABIC} and {HEBREW}\u200f, ok"])
def test_arabic_and_hebrew_text_is_intact(text: str) -> None:
    assert clean_text(text) == text
    assert neutralise_bidi(text) == text


def test_text_past_the_c1_range_is_kept() -> None:
    # U+00A0 and above are text: no-break space, Latin-1 letters, CJK.
    assert clean_text("\xa0café 中文 ü") == "\xa0café 中文 ü"


def test_bidi_controls_are_stored_as_given() -> None:
    text = "\u202egnp.exe \u2066x\u2069"

    assert clean_text(text) == text


@pytest.mark.parametrize("control", BIDI_CONTROLS)
def test_every_bidi_embedding_override_and_isolate_is_shown_as_its_code_point(
    control: str,
) -> None:
    shown = neutralise_bidi(f"a{control}b")

    assert shown == f"a⟨U+{ord(control):04X}⟩b"
    assert not any(c in shown for c in BIDI_CONTROLS)


def test_an_override_no_longer_reorders_what_follows() -> None:
    assert neutralise_bidi("photo\u202egnp.exe") == "photo⟨U+202E⟩gnp.exe"


def test_text_without_bidi_controls_is_shown_unchanged() -> None:
    text = "plain, 中文\n\tand \u200b zero width"

    assert neutralise_bidi(text) == text
