"""Character cards: V1/V2/V3 from PNG chunks and JSON, the persona they make, and hostile files."""

from __future__ import annotations

import base64
import json
import struct
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from etos_desktop.core.text.secrets import secret_reason
from etos_desktop.core.transfer import cards, png_text
from etos_desktop.core.transfer.cards import CardInvalid, parse_card, persona_from_card
from tests.helpers.cards import (
    card_png,
    encoded,
    png_image,
    text_chunk,
    v2_card,
    v3_card,
    with_chunks,
)

SECRET = "sk-" + "Q9w8E7r6T5y4U3i2O1p0"


def draft(card: cards.CharacterCard, *, max_prompt: int = 10_000) -> cards.PersonaDraft:
    return persona_from_card(card, max_name=64, max_prompt=max_prompt)


# -- happy paths ----------------------------------------------------------------------------------


def test_a_v2_png_card_becomes_a_persona_with_its_picture() -> None:
    image = png_image(7, 9)
    card = parse_card(card_png(v2_card(), image=image))
    assert (card.spec, card.container) == ("v2", "png")
    assert card.name == "Mira"
    assert card.tags == ("calm", "sea")
    assert card.alternate_greetings == ("Back again?",)
    assert card.image_size == (7, 9)
    assert card.image is not None
    assert png_text.without_text(card.image) == image  # the picture is the PNG itself
    persona = draft(card)
    assert persona.name == "Mira"
    assert persona.prompt == (
        "Mira is a lighthouse keeper who writes letters to the user.\n\n"
        "Personality: patient, dry-humoured, curious\n\n"
        "Scenario: A stormy night at the lighthouse."
    )
    assert persona.unused == ("first_mes", "alternate_greetings", "mes_example")
    assert persona.redacted == ()
    assert not persona.prompt_cut


def test_a_v3_png_prefers_its_ccv3_chunk_over_the_v2_fallback() -> None:
    png = with_chunks(
        png_image(),
        text_chunk("chara", encoded(v2_card(name="Old Mira"))),
        text_chunk("ccv3", encoded(v3_card(name="Mira", system_prompt="{{original}} Stay kind."))),
    )
    card = parse_card(png)
    assert (card.spec, card.name) == ("v3", "Mira")
    assert draft(card).prompt.startswith("Stay kind.\n\nMira is a lighthouse keeper")


def test_a_v3_chunk_the_app_cannot_read_falls_back_to_chara() -> None:
    png = with_chunks(
        png_image(),
        text_chunk("ccv3", "!!! not base64 !!!"),
        text_chunk("chara", encoded(v2_card())),
    )
    assert parse_card(png).spec == "v2"


@pytest.mark.parametrize("kind", ["zTXt", "iTXt", "iTXt-z"])
def test_compressed_and_international_text_chunks_are_read(kind: str) -> None:
    card = parse_card(card_png(v2_card(name="小雨"), kind=kind))
    assert card.name == "小雨"


def test_a_chinese_card_gets_chinese_labels_and_words() -> None:
    card = parse_card(
        card_png(
            v2_card(
                name="小雨",
                description="{{char}}是一位温柔的图书管理员，常给{{user}}推荐书。",
                personality="安静、细心",
                scenario="",
            )
        )
    )
    assert draft(card).prompt == "小雨是一位温柔的图书管理员，常给用户推荐书。\n\n性格：安静、细心"


def test_json_cards_v2_v3_and_v1_are_read() -> None:
    assert parse_card(json.dumps(v2_card()).encode()).container == "json"
    assert parse_card(b"\xef\xbb\xbf" + json.dumps(v3_card()).encode()).spec == "v3"
    v1 = {"name": "Bo", "description": "A bard.", "personality": "loud", "first_mes": "Hi!"}
    card = parse_card(json.dumps(v1).encode())
    assert (card.spec, card.name, card.description, card.first_mes) == (
        "v1",
        "Bo",
        "A bard.",
        "Hi!",
    )
    old = {"char_name": "Ann", "char_persona": "shy", "char_greeting": "Hello."}
    card = parse_card(json.dumps(old).encode())
    assert (card.name, card.personality, card.first_mes) == ("Ann", "shy", "Hello.")


@pytest.mark.parametrize(
    ("name", "prompt"),
    [
        ("Mira", "You are Mira.\n\nYou keep a lighthouse."),
        ("小忆", "你是一位温暖、可靠的陪伴者。"),
        ("Zoë 🌊", "Speaks softly.\tUses tabs\nand lines."),
    ],
)
def test_round_trip_a_persona_through_a_v2_png_and_json(name: str, prompt: str) -> None:
    document = cards.card_document(name, prompt, creator_notes="test")
    assert document["spec"] == "chara_card_v2"
    assert document["spec_version"] == "2.0"
    assert set(document["data"]) == {
        "name",
        "description",
        "personality",
        "scenario",
        "first_mes",
        "mes_example",
        "creator_notes",
        "system_prompt",
        "post_history_instructions",
        "alternate_greetings",
        "tags",
        "creator",
        "character_version",
        "extensions",
    }
    image = png_image(5, 5)
    png = cards.card_png(image, document)
    assert png_text.read_texts(png, {"chara"}, limit=10**6).keys() == {"chara"}
    for data in (png, cards.card_json(document).encode("utf-8")):
        back = draft(parse_card(data))
        assert (back.name, back.prompt) == (name, prompt)
        assert back.unused == ()
    assert png_text.without_text(png) == image


def test_writing_a_card_replaces_any_text_the_picture_had() -> None:
    image = with_chunks(png_image(), text_chunk("chara", encoded(v2_card(name="Old"))))
    image = with_chunks(image, text_chunk("Comment", "made with an editor"))
    png = cards.card_png(image, cards.card_document("New", "prompt"))
    assert parse_card(png).name == "New"
    assert png_text.read_texts(png, {"Comment", "chara"}, limit=10**6).keys() == {"chara"}


# -- cleaning, secrets, limits --------------------------------------------------------------------


def test_control_characters_are_cleaned_and_invisible_ones_kept_as_written() -> None:
    card = parse_card(
        card_png(
            v2_card(
                name="  Mi\x00ra\x1b \n  Bell\u200b ",
                description="Line one\r\nline\x07 two\u202e\x85 end",
                personality="",
                scenario="",
            )
        )
    )
    # The project's one cleaning rule (text.cleaning.clean_text): NUL, C0/C1 controls and DEL
    # dropped, CRLF folded; zero-width and bidi characters are kept as written (the preview
    # shows them escaped), and a name is one line.
    assert card.name == "Mira Bell\u200b"
    assert card.description == "Line one\nline two\u202e end"


def test_a_secret_in_the_card_is_redacted_and_named() -> None:
    card = parse_card(
        card_png(v2_card(description=f"Knows the key {SECRET} by heart.", scenario=""))
    )
    persona = draft(card)
    assert persona.redacted == ("description",)
    assert SECRET not in persona.prompt
    assert "[redacted]" in persona.prompt
    assert secret_reason(persona.prompt) is None
    # A written card never carries one either.
    document = cards.card_document("Mira", f"my password: hunter2hunter {SECRET}")
    assert SECRET not in json.dumps(document)
    assert "hunter2hunter" not in json.dumps(document)


def test_a_long_card_is_cut_at_a_paragraph_and_says_so() -> None:
    paragraph = "A sentence about the sea. " * 20
    card = parse_card(
        json.dumps(
            v2_card(description="\n\n".join([paragraph.strip()] * 30), personality="", scenario="")
        ).encode()
    )
    persona = draft(card, max_prompt=2_000)
    assert persona.prompt_cut
    assert len(persona.prompt) <= 2_000
    assert persona.prompt.endswith("sea.")
    assert persona.prompt_length > 10_000


def test_a_long_name_is_cut() -> None:
    persona = draft(parse_card(json.dumps(v2_card(name="N" * 100)).encode()))
    assert persona.name == "N" * 64
    assert persona.name_cut


# -- hostile files --------------------------------------------------------------------------------


def _broken_crc() -> bytes:
    png = bytearray(card_png(v2_card()))
    png[40] ^= 0xFF  # inside the chunk after IHDR
    return bytes(png)


def _huge_image() -> bytes:
    # A 100,000 × 100,000 IHDR in front of a tiny image: decoding it would take 40 GB.
    ihdr = png_text.chunk_bytes(b"IHDR", struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0))
    small = png_image()
    rest = small[len(png_text.SIGNATURE) + 25 :]
    return with_chunks(png_text.SIGNATURE + ihdr + rest, text_chunk("chara", encoded(v2_card())))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


#: Each file is made when its test runs (a few are megabytes).
HOSTILE: list[tuple[str, Callable[[], bytes], str]] = [
    ("jpeg", lambda: b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 64, "not_a_card"),
    ("text", lambda: b"Mira is a lighthouse keeper.", "not_a_card"),
    ("png without a card", lambda: png_image(), "no_card"),
    (
        "png with other text",
        lambda: with_chunks(png_image(), text_chunk("Comment", "hi")),
        "no_card",
    ),
    ("broken crc", lambda: _broken_crc(), "damaged"),
    ("truncated", lambda: card_png(v2_card())[:-20], "damaged"),
    (
        "bad base64",
        lambda: with_chunks(png_image(), text_chunk("chara", "%%% not base64 %%%")),
        "bad_base64",
    ),
    (
        "base64 of no json",
        lambda: with_chunks(png_image(), text_chunk("chara", base64.b64encode(b"hello").decode())),
        "not_json",
    ),
    (
        "base64 of no utf-8",
        lambda: with_chunks(
            png_image(), text_chunk("chara", base64.b64encode(b"\xff\xfe{").decode())
        ),
        "not_json",
    ),
    ("json array", lambda: card_png(["name", "Mira"]), "not_an_object"),
    ("json string", lambda: card_png("Mira"), "not_an_object"),
    ("nan", lambda: b'{"name": "Mira", "description": NaN}', "not_json"),
    ("repeated key", lambda: b'{"name": "Mira", "name": "Eve"}', "not_json"),
    ("wrong spec", lambda: card_png({**v2_card(), "spec": "chara_card_v9"}), "unsupported_spec"),
    ("wrong version", lambda: card_png({**v2_card(), "spec_version": "3.0"}), "unsupported_spec"),
    (
        "no spec, no fields",
        lambda: json.dumps({"format": "etos-desktop.memories"}).encode(),
        "not_a_card",
    ),
    (
        "deep json",
        lambda: f'{{"name": "Mira", "extensions": {_nested(100_000)}}}'.encode(),
        "too_nested",
    ),
    (
        "deep enough json",
        lambda: card_png(v2_card(extensions={"a": json.loads(_nested(40))})),
        "too_nested",
    ),
    ("name a number", lambda: card_png(v2_card(name=42)), "bad_field"),
    ("description an object", lambda: card_png(v2_card(description={"text": "x"})), "bad_field"),
    ("tags a string", lambda: card_png(v2_card(tags="calm, sea")), "bad_field"),
    ("greetings of numbers", lambda: card_png(v2_card(alternate_greetings=[1, 2])), "bad_field"),
    ("data a list", lambda: card_png({**v2_card(), "data": []}), "bad_field"),
    ("extensions a string", lambda: card_png(v2_card(extensions="none")), "bad_field"),
    ("blank name", lambda: card_png(v2_card(name=" \u3000\n ")), "no_name"),
    (
        "ten megabyte description",
        lambda: card_png(v2_card(description="x" * (10 * 1024 * 1024))),
        "text_too_large",
    ),
    (
        "ten megabyte json",
        lambda: json.dumps(v2_card(description="x" * (10 * 1024 * 1024))).encode(),
        "text_too_large",
    ),
    ("huge image", lambda: _huge_image(), "image_too_large"),
]


@pytest.mark.parametrize(("data", "reason"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_hostile_card_is_refused_with_a_reason(data: Callable[[], bytes], reason: str) -> None:
    with pytest.raises(CardInvalid) as caught:
        parse_card(data())
    assert caught.value.code == "card_invalid"
    assert caught.value.params["reason"] == reason
    assert SECRET not in str(caught.value)


def test_bad_field_names_the_field() -> None:
    with pytest.raises(CardInvalid) as caught:
        parse_card(card_png(v2_card(tags="calm")))
    assert caught.value.params == {"reason": "bad_field", "field": "tags"}


def test_a_decompression_bomb_in_ztxt_is_refused_without_inflating_it() -> None:
    bomb = zlib.compress(b"A" * (16 * 1024 * 1024), 9)  # 16 MB in ~16 kB
    png = with_chunks(png_image(), png_text.chunk_bytes(b"zTXt", b"chara\x00\x00" + bomb))
    assert len(png) < 100_000
    started = time.perf_counter()
    with pytest.raises(CardInvalid) as caught:
        parse_card(png)
    assert caught.value.params["reason"] == "text_too_large"
    assert time.perf_counter() - started < 2  # stopped at the ceiling, not inflated whole


def test_a_50_mb_file_is_refused_by_its_size_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.png"
    with path.open("wb") as out:
        out.truncate(50 * 1024 * 1024)  # sparse: nothing is written
    reads: list[Path] = []
    original = Path.read_bytes

    def recording(self: Path) -> bytes:
        reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", recording)
    with pytest.raises(CardInvalid) as caught:
        cards.read_card_file(path)
    assert caught.value.params["reason"] == "too_large"
    assert reads == []


def test_a_path_with_odd_characters_is_read(tmp_path: Path) -> None:
    path = tmp_path / "my card 'Mira' $(rm -rf) ; \u202egnp.json \u5361.png"
    path.write_bytes(card_png(v2_card()))
    assert cards.parse_card(cards.read_card_file(path)).name == "Mira"
