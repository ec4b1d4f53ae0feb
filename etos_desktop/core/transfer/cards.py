"""Character cards (SillyTavern, Character Card V1/V2/V3) read as the companion's persona, and written.

A card is a JSON object, in a ``.json`` file or base64-encoded in a PNG text chunk whose image is
the character's picture: keyword ``chara`` (V2, often a V3 object too) or ``ccv3`` (V3, preferred
when both are there). V2 and V3 are ``{"spec": "chara_card_v2" | "chara_card_v3",
"spec_version": "2.0" | "3.0", "data": {...}}``; V1 is the bare ``data`` object. The persona of
this app has a name, a personality prompt (``persona.prompt``, sent in the system message) and an
avatar, so :func:`persona_from_card` composes the prompt from the card's system prompt,
description, personality and scenario, and says which of the card's other parts it leaves out
(the first message, example dialogue, other greetings, the lorebook…).

Reading is strict and bounded, like the memory import (``document.py``): the file's size is
checked before it is read, the PNG's chunks with ``png_text``, the card's text against
:data:`MAX_CARD_TEXT` (a compressed chunk is inflated no further), the JSON by the import's strict
parser and for depth, every field for its type; anything else is refused with
:class:`CardInvalid` and a reason. What is kept passes the project's cleaning rule
(``text.cleaning.clean_text``); a secret in it (a key, a password, an ID number) is replaced by
``[redacted]`` — a persona is prose, where refusing the whole card for one token would lose
the rest — and the draft says in which fields. Pure functions apart from
:func:`read_card_file`, which reads the disk.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from etos_desktop.core.context.language import Language, conversation_language
from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.secrets import redact_secrets, secret_reason
from etos_desktop.core.transfer import png_text
from etos_desktop.core.transfer.document import loads_strict

#: The largest card file read, in bytes (checked before reading). A card PNG is an image of a
#: few hundred kilobytes to a few megabytes with its text.
MAX_CARD_BYTES: Final = 32 * 1024 * 1024
#: The largest card JSON accepted, in bytes (as stored or inflated): a long card is ~50 kB.
MAX_CARD_TEXT: Final = 2 * 1024 * 1024
#: The deepest nesting of the card's JSON accepted (a card's own structure is 3–4 deep).
MAX_DEPTH: Final = 32
#: The largest image a card may carry: decoding a bigger one would take hundreds of megabytes.
MAX_IMAGE_SIDE: Final = 8192
MAX_IMAGE_PIXELS: Final = 40_000_000
#: The most tags or greetings read.
MAX_LIST_ITEMS: Final = 1000

#: What a card written here says it is.
V2_SPEC: Final = "chara_card_v2"
V3_SPEC: Final = "chara_card_v3"

#: The card's text fields, in the order of the spec.
TEXT_FIELDS: Final = (
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
    "creator_notes",
    "system_prompt",
    "post_history_instructions",
    "creator",
    "character_version",
)
#: The card's lists of texts.
LIST_FIELDS: Final = ("alternate_greetings", "tags")
#: The fields of TavernAI's first cards, and the V1 field each one is.
_OLD_NAMES: Final = {
    "char_name": "name",
    "char_persona": "personality",
    "world_scenario": "scenario",
    "char_greeting": "first_mes",
    "example_dialogue": "mes_example",
}
#: The fields with content the persona does not take, in the order the preview lists them.
_UNUSED_ORDER: Final = (
    "first_mes",
    "alternate_greetings",
    "mes_example",
    "post_history_instructions",
    "character_book",
)

#: Why a card was refused (``CardInvalid.params["reason"]``).
CardReason = Literal[
    "too_large",  # the file is larger than MAX_CARD_BYTES
    "not_a_card",  # neither a PNG nor a JSON object's text
    "damaged",  # a PNG whose chunks are broken (length, type, CRC, no IEND)
    "no_card",  # a PNG without a ``chara`` or ``ccv3`` text chunk
    "text_too_large",  # the card's text is larger than MAX_CARD_TEXT (or inflates past it)
    "bad_base64",  # the chunk's text is not base64
    "not_json",  # not UTF-8 JSON, or JSON with NaN or a repeated key
    "too_nested",  # nested deeper than MAX_DEPTH
    "not_an_object",  # JSON, but not an object
    "unsupported_spec",  # a ``spec`` other than V2 or V3 (``params["spec"]``)
    "bad_field",  # a field of the wrong type (``params["field"]``)
    "no_name",  # no name, or a blank one
    "image_too_large",  # the PNG's image is larger than MAX_IMAGE_SIDE / MAX_IMAGE_PIXELS
]


class CardInvalid(InvalidInput):
    """The file cannot be used as a character card; nothing was changed.

    ``params["reason"]`` is a :data:`CardReason`; ``params["field"]`` names the field for
    ``bad_field``, ``params["spec"]`` the spec for ``unsupported_spec``.
    """

    code = "card_invalid"


@dataclass(frozen=True)
class CharacterCard:
    """A character card as read: every field cleaned, nothing redacted yet.

    Attributes:
        spec: ``"v1"``, ``"v2"`` or ``"v3"``.
        container: ``"png"`` or ``"json"``: what the file was.
        name: The character's name (one line).
        description: Who the character is.
        personality: A short summary of the character's personality.
        scenario: The situation of the conversation.
        first_mes: The character's first message.
        mes_example: Example dialogue.
        creator_notes: Notes for whoever uses the card (never sent to a model).
        system_prompt: The card's system prompt (``{{original}}`` stands for the app's own).
        post_history_instructions: Instructions meant to follow the chat history.
        creator: Who made the card.
        character_version: The card's version.
        alternate_greetings: Other first messages.
        tags: Labels.
        has_character_book: The card carries a lorebook (not read).
        image: The PNG the card came in (the character's picture), if it was one.
        image_size: That image's width and height.
    """

    spec: Literal["v1", "v2", "v3"]
    container: Literal["png", "json"]
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    creator: str = ""
    character_version: str = ""
    alternate_greetings: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    has_character_book: bool = False
    image: bytes | None = None
    image_size: tuple[int, int] | None = None


# -- reading ----------------------------------------------------------------------------------


def read_card_file(path: Path) -> bytes:
    """Read a card file, refusing one larger than any card before reading it (blocking).

    Raises:
        CardInvalid: ``too_large``.
        OSError: The file cannot be read.
    """
    if path.stat().st_size > MAX_CARD_BYTES:
        raise CardInvalid("file too large", reason="too_large")
    return path.read_bytes()


def _too_deep(value: Any) -> bool:
    # Breadth-first with the depth of each container; stops at the first one too deep.
    level: list[Any] = [value]
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        nxt: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                nxt.extend(v for v in item.values() if isinstance(v, dict | list))
            elif isinstance(item, list):
                nxt.extend(v for v in item if isinstance(v, dict | list))
        level = nxt
    return False


def _json_object(text: str) -> dict[str, Any]:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_CARD_TEXT:
        raise CardInvalid("card text too large", reason="text_too_large")
    try:
        value = loads_strict(text)
    except RecursionError as exc:
        raise CardInvalid("nested too deep", reason="too_nested") from exc
    except ValueError as exc:
        raise CardInvalid(f"not readable JSON: {exc}"[:300], reason="not_json") from exc
    if _too_deep(value):
        raise CardInvalid("nested too deep", reason="too_nested")
    if not isinstance(value, dict):
        raise CardInvalid("the card is not a JSON object", reason="not_an_object")
    return value


def _decode_chunk(text: str) -> dict[str, Any]:
    compact = re.sub(r"\s+", "", text)
    compact += "=" * (-len(compact) % 4)
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CardInvalid("the card's chunk is not base64", reason="bad_base64") from exc
    if len(raw) > MAX_CARD_TEXT:
        raise CardInvalid("card text too large", reason="text_too_large")
    try:
        decoded = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CardInvalid("the card's text is not UTF-8", reason="not_json") from exc
    return _json_object(decoded)


def _text(raw: Mapping[str, Any], name: str) -> str:
    value = raw.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise CardInvalid(f"{name} is not text", reason="bad_field", field=name)
    return clean_text(value).strip()


def _texts(raw: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = raw.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CardInvalid(f"{name} is not a list of texts", reason="bad_field", field=name)
    cleaned = (clean_text(v).strip() for v in value[:MAX_LIST_ITEMS])
    return tuple(v for v in cleaned if v)


def card_from_object(
    value: Mapping[str, Any],
    *,
    container: Literal["png", "json"] = "json",
    image: bytes | None = None,
    image_size: tuple[int, int] | None = None,
) -> CharacterCard:
    """Check a card's JSON object (V1, V2 or V3) and read its fields.

    Raises:
        CardInvalid: ``unsupported_spec``, ``bad_field``, ``no_name``, or ``not_a_card`` for
            an object with neither a ``spec`` nor a card's fields.
    """
    spec: Literal["v1", "v2", "v3"] = "v1"
    data: Mapping[str, Any] = value
    if "spec" in value:
        given, version = value.get("spec"), value.get("spec_version")
        if given == V2_SPEC and isinstance(version, str) and version.startswith("2"):
            spec = "v2"
        elif given == V3_SPEC and isinstance(version, str) and version.startswith("3"):
            spec = "v3"
        else:
            shown = given if isinstance(given, str) else type(given).__name__
            raise CardInvalid(
                "unsupported card spec", reason="unsupported_spec", spec=f"{shown}"[:40]
            )
        inner = value.get("data")
        if not isinstance(inner, dict):
            raise CardInvalid("data is not an object", reason="bad_field", field="data")
        data = inner
    elif "name" not in value:
        if not any(old in value for old in _OLD_NAMES):
            raise CardInvalid("no card fields", reason="not_a_card")
        data = {_OLD_NAMES.get(k, k): v for k, v in value.items()}
    extensions = data.get("extensions")
    if extensions is not None and not isinstance(extensions, dict):
        raise CardInvalid("extensions is not an object", reason="bad_field", field="extensions")
    book = data.get("character_book")
    if book is not None and not isinstance(book, dict):
        raise CardInvalid(
            "character_book is not an object", reason="bad_field", field="character_book"
        )
    fields = {name: _text(data, name) for name in TEXT_FIELDS}
    lists = {name: _texts(data, name) for name in LIST_FIELDS}
    name = " ".join(fields.pop("name").split())
    if not name:
        raise CardInvalid("the card has no name", reason="no_name")
    return CharacterCard(
        spec=spec,
        container=container,
        name=name,
        **fields,
        alternate_greetings=lists["alternate_greetings"],
        tags=lists["tags"],
        has_character_book=bool(book and book.get("entries")),
        image=image,
        image_size=image_size,
    )


def parse_card(data: bytes) -> CharacterCard:
    """Read a character card: a PNG with a ``ccv3`` or ``chara`` chunk, or a card's JSON.

    Args:
        data: The file's bytes.

    Returns:
        The card (from a PNG: with the PNG as its image).

    Raises:
        CardInvalid: The file cannot be used (``params["reason"]`` says why).
    """
    if len(data) > MAX_CARD_BYTES:
        raise CardInvalid("file too large", reason="too_large")
    if data.startswith(png_text.SIGNATURE):
        return _parse_png(data)
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        raise CardInvalid("neither a PNG nor a card's JSON", reason="not_a_card")
    if len(data) > MAX_CARD_TEXT:
        raise CardInvalid("card text too large", reason="text_too_large")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CardInvalid("not UTF-8", reason="not_json") from exc
    return card_from_object(_json_object(text))


def _parse_png(data: bytes) -> CharacterCard:
    limit = MAX_CARD_TEXT * 4 // 3 + 16  # base64 of MAX_CARD_TEXT bytes
    try:
        width, height = png_text.image_size(data)
        texts = png_text.read_texts(data, ("ccv3", "chara"), limit=limit)
    except png_text.PngProblem as exc:
        reason = "text_too_large" if exc.reason == "text_too_large" else "damaged"
        raise CardInvalid(str(exc), reason=reason) from exc
    if not width or not height:
        raise CardInvalid("the image has no pixels", reason="damaged")
    if max(width, height) > MAX_IMAGE_SIDE or width * height > MAX_IMAGE_PIXELS:
        raise CardInvalid(f"image {width}×{height}", reason="image_too_large")
    if not texts:
        raise CardInvalid("no chara or ccv3 chunk", reason="no_card")
    problem: CardInvalid | None = None
    for keyword in ("ccv3", "chara"):
        if keyword not in texts:
            continue
        try:
            value = _decode_chunk(texts[keyword])
            return card_from_object(value, container="png", image=data, image_size=(width, height))
        except CardInvalid as exc:
            # A V3 chunk the app cannot read may sit beside a V2 one it can.
            problem = problem or exc
    assert problem is not None
    raise problem


# -- the persona --------------------------------------------------------------------------------

_LABELS: Final[Mapping[Language, tuple[str, str]]] = {
    "en": ("Personality: ", "Scenario: "),
    "zh": ("性格：", "场景："),
}
_USER_WORD: Final[Mapping[Language, str]] = {"en": "the user", "zh": "用户"}
_CHAR_MACRO: Final = re.compile(r"\{\{\s*char\s*\}\}|<BOT>", re.IGNORECASE)
_USER_MACRO: Final = re.compile(r"\{\{\s*user\s*\}\}|<USER>", re.IGNORECASE)
_ORIGINAL_MACRO: Final = re.compile(r"\{\{\s*original\s*\}\}", re.IGNORECASE)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?。！？…])\s*")


@dataclass(frozen=True)
class PersonaDraft:
    """What a card becomes as the companion's persona, with what the preview should say.

    Attributes:
        name: The companion's name (at most the persona name's limit).
        prompt: The personality prompt (at most the prompt's limit).
        prompt_length: The composed prompt's length before it was cut.
        redacted: The card fields in which a secret was replaced by ``[redacted]``.
        unused: The card's fields with content the persona does not take, in a fixed order
            (``first_mes``, ``alternate_greetings``, ``mes_example``,
            ``post_history_instructions``, ``character_book``).
        name_cut: The name was longer than the limit and was cut.
    """

    name: str
    prompt: str
    prompt_length: int
    redacted: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    name_cut: bool = False

    @property
    def prompt_cut(self) -> bool:
        """Whether the composed prompt was longer than the limit and was cut."""
        return self.prompt_length > len(self.prompt)


def _cut(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters, ending at a paragraph or sentence when one is near."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    floor = limit * 4 // 5
    paragraph = head.rfind("\n\n")
    if paragraph >= floor:
        return head[:paragraph].rstrip()
    ends = [m.start() for m in _SENTENCE_END.finditer(head) if m.start() >= floor]
    return (head[: ends[-1]] if ends else head).rstrip()


def persona_from_card(card: CharacterCard, *, max_name: int, max_prompt: int) -> PersonaDraft:
    """The persona a card makes: its name and a prompt composed of its texts, secrets redacted.

    The prompt is the card's system prompt, description, personality and scenario, in that
    order (SillyTavern's), with ``{{char}}`` and ``{{user}}`` filled in.

    Args:
        card: The card.
        max_name: The longest name the persona takes (``persona.name``'s maximum).
        max_prompt: The longest prompt (``persona.prompt``'s maximum).

    Returns:
        The draft to preview; nothing is written.
    """
    redacted: list[str] = []

    def safe(field: str, text: str) -> str:
        if secret_reason(text) is None:
            return text
        if field not in redacted:
            redacted.append(field)
        return redact_secrets(text)

    name = safe("name", card.name)
    lang = conversation_language([card.description, card.personality, card.first_mes], "en")

    def filled(text: str) -> str:
        text = _CHAR_MACRO.sub(lambda _m: name, text)
        return _USER_MACRO.sub(lambda _m: _USER_WORD[lang], text)

    personality_label, scenario_label = _LABELS[lang]
    system = _ORIGINAL_MACRO.sub("", card.system_prompt).strip()
    parts = [
        safe("system_prompt", filled(system)),
        safe("description", filled(card.description)),
        personality_label + safe("personality", filled(card.personality))
        if card.personality
        else "",
        scenario_label + safe("scenario", filled(card.scenario)) if card.scenario else "",
    ]
    prompt = "\n\n".join(p for p in parts if p)
    present = {
        "first_mes": bool(card.first_mes),
        "alternate_greetings": bool(card.alternate_greetings),
        "mes_example": bool(card.mes_example),
        "post_history_instructions": bool(card.post_history_instructions),
        "character_book": card.has_character_book,
    }
    return PersonaDraft(
        name=name[:max_name].rstrip(),
        prompt=_cut(prompt, max_prompt),
        prompt_length=len(prompt),
        redacted=tuple(redacted),
        unused=tuple(f for f in _UNUSED_ORDER if present[f]),
        name_cut=len(name) > max_name,
    )


# -- writing ------------------------------------------------------------------------------------


def card_document(name: str, prompt: str, *, creator_notes: str = "") -> dict[str, Any]:
    """A V2 card of the persona: the prompt as its description, secrets redacted.

    The V1 fields are repeated at the top level, as SillyTavern writes them, for older readers.

    Args:
        name: The companion's name.
        prompt: The personality prompt.
        creator_notes: A note for whoever imports it.

    Returns:
        The card's JSON object.
    """
    name = redact_secrets(clean_text(name).strip())
    prompt = redact_secrets(clean_text(prompt).strip())
    data: dict[str, Any] = {
        "name": name,
        "description": prompt,
        "personality": "",
        "scenario": "",
        "first_mes": "",
        "mes_example": "",
        "creator_notes": creator_notes,
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": [],
        "creator": "",
        "character_version": "",
        "extensions": {},
    }
    flat = {k: data[k] for k in ("name", "description", "personality", "scenario")}
    flat |= {"first_mes": "", "mes_example": ""}
    return {"spec": V2_SPEC, "spec_version": "2.0", "data": data, **flat}


def card_json(document: Mapping[str, Any]) -> str:
    """A card's JSON object as the text of a ``.json`` card file."""
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def card_png(image: bytes, document: Mapping[str, Any]) -> bytes:
    """A V2 card PNG: ``image`` (a PNG) with the card in a ``chara`` ``tEXt`` chunk.

    Raises:
        png_text.PngProblem: ``image`` is not a readable PNG.
    """
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return png_text.with_text(image, "chara", encoded)
