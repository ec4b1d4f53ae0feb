"""Character cards made in the tests: tiny PNGs built byte by byte, with the card's text chunks.

No card here comes from anyone else: each is written by these functions, so a test says exactly
what its file holds (a V2 ``chara`` chunk, a V3 ``ccv3`` one, compressed text, a broken CRC…).
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

from etos_desktop.core.transfer.png_text import SIGNATURE, chunk_bytes


def png_image(width: int = 4, height: int = 6, rgb: tuple[int, int, int] = (200, 80, 40)) -> bytes:
    """A valid RGB PNG of one colour, with no text chunk."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    row = b"\x00" + bytes(rgb) * width
    return (
        SIGNATURE
        + chunk_bytes(b"IHDR", ihdr)
        + chunk_bytes(b"IDAT", zlib.compress(row * height))
        + chunk_bytes(b"IEND", b"")
    )


def text_chunk(keyword: str, text: str | bytes, kind: str = "tEXt") -> bytes:
    """A ``tEXt``, ``zTXt`` or ``iTXt`` chunk (``iTXt`` compressed when ``kind`` is ``iTXt-z``)."""
    raw = text.encode("latin-1") if isinstance(text, str) else text
    key = keyword.encode("latin-1") + b"\x00"
    if kind == "tEXt":
        return chunk_bytes(b"tEXt", key + raw)
    if kind == "zTXt":
        return chunk_bytes(b"zTXt", key + b"\x00" + zlib.compress(raw))
    if kind == "iTXt":
        return chunk_bytes(b"iTXt", key + b"\x00\x00" + b"\x00" + b"\x00" + raw)
    if kind == "iTXt-z":
        return chunk_bytes(b"iTXt", key + b"\x01\x00" + b"\x00" + b"\x00" + zlib.compress(raw))
    raise ValueError(kind)


def with_chunks(png: bytes, *chunks: bytes) -> bytes:
    """``png`` with ``chunks`` inserted before its ``IEND`` (the last 12 bytes)."""
    return png[:-12] + b"".join(chunks) + png[-12:]


def encoded(card: Any) -> str:
    """A card object as a chunk holds it: base64 of its UTF-8 JSON."""
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")


def v2_card(**data: Any) -> dict[str, Any]:
    """A Character Card V2 object: Mira unless ``data`` says otherwise."""
    fields: dict[str, Any] = {
        "name": "Mira",
        "description": "{{char}} is a lighthouse keeper who writes letters to {{user}}.",
        "personality": "patient, dry-humoured, curious",
        "scenario": "A stormy night at the lighthouse.",
        "first_mes": "*The lamp turns.* Oh — a visitor, at this hour?",
        "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Hello there.",
        "creator_notes": "Made for the tests.",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": ["Back again?"],
        "tags": ["calm", "sea"],
        "creator": "etos-tests",
        "character_version": "1.2",
        "extensions": {"depth_prompt": {"depth": 4, "prompt": ""}},
    }
    fields.update(data)
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": fields}


def v3_card(**data: Any) -> dict[str, Any]:
    """A Character Card V3 object."""
    card = v2_card(**data)
    card["spec"], card["spec_version"] = "chara_card_v3", "3.0"
    card["data"].setdefault("group_only_greetings", [])
    return card


def card_png(card: Any, *, keyword: str = "chara", kind: str = "tEXt", image: bytes = b"") -> bytes:
    """A card PNG: ``image`` (a small orange one) with the card in one text chunk."""
    return with_chunks(image or png_image(), text_chunk(keyword, encoded(card), kind))
