"""The text chunks of a PNG file, read and written with ``struct`` and ``zlib`` (no image decoding).

A PNG is an 8-byte signature and chunks: a 4-byte big-endian length, a 4-byte type, the data
and a CRC-32 of type and data. Character cards (``core/transfer/cards.py``) keep their JSON in a
text chunk: ``tEXt`` (keyword, NUL, Latin-1 text), ``zTXt`` (keyword, NUL, method 0, zlib data)
or ``iTXt`` (keyword, NUL, compression flag and method, language tag, NUL, translated keyword,
NUL, UTF-8 text, compressed or not).

Reading is strict, since the file is the user's but its maker is not: the signature, every
chunk's length (within the file), type (four ASCII letters) and CRC are checked, ``IHDR`` must
come first and ``IEND`` must be there; compressed text is inflated with a ceiling, so a
decompression bomb costs at most that ceiling (plus one byte) of memory before it is refused.
Pure functions.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Final, Literal

#: Every PNG file starts with these bytes.
SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
#: The chunk types that hold text.
TEXT_TYPES: Final = frozenset({b"tEXt", b"zTXt", b"iTXt"})
#: The most chunks read from one file (a real PNG has a few dozen; a hostile one could hold
#: millions of empty chunks).
MAX_CHUNKS: Final = 100_000

#: Why a PNG's chunks could not be read (``PngProblem.reason``).
PngReason = Literal[
    "not_png",  # no PNG signature
    "damaged",  # a length past the end, a bad type, a CRC mismatch, no IHDR first, no IEND
    "text_too_large",  # a text chunk inflates (or is) larger than the ceiling asked for
]


class PngProblem(ValueError):
    """The bytes are not a readable PNG, or a text chunk is too large.

    Attributes:
        reason: A :data:`PngReason`.
    """

    def __init__(self, reason: PngReason, detail: str) -> None:
        super().__init__(detail)
        self.reason: PngReason = reason


@dataclass(frozen=True)
class Chunk:
    """One chunk of a PNG file.

    Attributes:
        type: Its four-letter type (``b"IHDR"``, ``b"tEXt"``…).
        data: Its data.
    """

    type: bytes
    data: bytes


def _chunk_bytes(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data))
        + kind
        + data
        + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def chunks(data: bytes) -> Iterator[Chunk]:
    """The chunks of a PNG file in order, up to and including ``IEND``, each one checked.

    Raises:
        PngProblem: ``not_png`` without the signature; ``damaged`` for a chunk that runs past
            the end, a type that is not four ASCII letters, a CRC mismatch, a first chunk other
            than ``IHDR``, more than :data:`MAX_CHUNKS` chunks, or no ``IEND``.
    """
    if not data.startswith(SIGNATURE):
        raise PngProblem("not_png", "no PNG signature")
    offset = len(SIGNATURE)
    count = 0
    while True:
        if offset + 12 > len(data):
            raise PngProblem("damaged", "the file ends before IEND")
        (length,) = struct.unpack_from(">I", data, offset)
        kind = data[offset + 4 : offset + 8]
        end = offset + 12 + length
        if length > 0x7FFFFFFF or end > len(data):
            raise PngProblem("damaged", f"chunk at {offset} runs past the end")
        if not kind.isalpha() or not kind.isascii():
            raise PngProblem("damaged", f"bad chunk type at {offset}")
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack_from(">I", data, offset + 8 + length)
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise PngProblem("damaged", f"CRC mismatch in {kind.decode('ascii')} at {offset}")
        if count == 0 and kind != b"IHDR":
            raise PngProblem("damaged", "the first chunk is not IHDR")
        count += 1
        if count > MAX_CHUNKS:
            raise PngProblem("damaged", "too many chunks")
        yield Chunk(kind, body)
        if kind == b"IEND":
            return
        offset = end


def image_size(data: bytes) -> tuple[int, int]:
    """The width and height a PNG's ``IHDR`` states (nothing is decoded).

    Raises:
        PngProblem: Not a readable PNG.
    """
    first = next(chunks(data))
    if len(first.data) != 13:
        raise PngProblem("damaged", "IHDR is not 13 bytes")
    width, height = struct.unpack_from(">II", first.data)
    return int(width), int(height)


def _inflate(compressed: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(compressed, limit + 1)
    except zlib.error as exc:
        raise PngProblem("damaged", f"compressed text cannot be read: {exc}") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise PngProblem("text_too_large", f"compressed text inflates past {limit} bytes")
    return out


def _text_of(chunk: Chunk, limit: int) -> tuple[str, str] | None:
    """``(keyword, text)`` of a text chunk; ``None`` when its layout is broken."""
    keyword, sep, rest = chunk.data.partition(b"\x00")
    if not sep or not 1 <= len(keyword) <= 79:
        return None
    name = keyword.decode("latin-1")
    if chunk.type == b"tEXt":
        if len(rest) > limit:
            raise PngProblem("text_too_large", f"tEXt {name} is larger than {limit} bytes")
        return name, rest.decode("latin-1")
    if chunk.type == b"zTXt":
        if not rest or rest[0] != 0:
            return None
        return name, _inflate(rest[1:], limit).decode("latin-1")
    # iTXt: compression flag, method, language tag NUL, translated keyword NUL, text.
    if len(rest) < 2:
        return None
    flag, method, tail = rest[0], rest[1], rest[2:]
    _language, sep1, tail = tail.partition(b"\x00")
    _translated, sep2, text = tail.partition(b"\x00")
    if not (sep1 and sep2) or flag not in (0, 1) or (flag == 1 and method != 0):
        return None
    if flag == 1:
        text = _inflate(text, limit)
    elif len(text) > limit:
        raise PngProblem("text_too_large", f"iTXt {name} is larger than {limit} bytes")
    try:
        return name, text.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_texts(data: bytes, keywords: Collection[str], *, limit: int) -> dict[str, str]:
    """The text of the chunks with these keywords (case-sensitive), the first of each.

    Args:
        data: A PNG file.
        keywords: The keywords wanted (``{"chara", "ccv3"}``).
        limit: The largest text accepted, in bytes (compressed text: inflated).

    Returns:
        Keyword → text, for the keywords found; a text chunk whose own layout is broken is
        passed over.

    Raises:
        PngProblem: Not a readable PNG, or a wanted text chunk larger than ``limit``.
    """
    found: dict[str, str] = {}
    for chunk in chunks(data):
        if chunk.type not in TEXT_TYPES:
            continue
        keyword = chunk.data.partition(b"\x00")[0].decode("latin-1")
        if keyword not in keywords or keyword in found:
            continue
        text = _text_of(chunk, limit)
        if text is not None:
            found[text[0]] = text[1]
    return found


def with_text(data: bytes, keyword: str, text: str) -> bytes:
    """The PNG with one ``tEXt`` chunk ``keyword`` holding ``text`` (ASCII), before ``IEND``.

    Every other text chunk is dropped (an earlier card, or metadata an image editor wrote):
    the file carries exactly the text given.

    Raises:
        PngProblem: ``data`` is not a readable PNG.
        ValueError: ``keyword`` or ``text`` is not ASCII.
    """
    body = keyword.encode("ascii") + b"\x00" + text.encode("ascii")
    out = [SIGNATURE]
    for chunk in chunks(data):
        if chunk.type in TEXT_TYPES:
            continue
        if chunk.type == b"IEND":
            out.append(_chunk_bytes(b"tEXt", body))
        out.append(_chunk_bytes(chunk.type, chunk.data))
    return b"".join(out)


def without_text(data: bytes) -> bytes:
    """The PNG without any text chunk (what an avatar file keeps of a card: the image).

    Raises:
        PngProblem: ``data`` is not a readable PNG.
    """
    out = [SIGNATURE]
    out.extend(_chunk_bytes(c.type, c.data) for c in chunks(data) if c.type not in TEXT_TYPES)
    return b"".join(out)


def chunk_bytes(kind: bytes, data: bytes) -> bytes:
    """One chunk as it is written: length, type, data, CRC (tests make odd files with it)."""
    return _chunk_bytes(kind, data)
