"""Files a user attaches to a message: reading them, and what the model is sent for them.

DESIGN §12. Two kinds:

- **Images** (PNG, JPEG, GIF, WebP, BMP) go to models that accept images as OpenAI
  ``image_url`` content parts with a base64 ``data:`` URL. They are decoded, turned upright
  (EXIF orientation), reduced to their first frame (an animated GIF), scaled down to at most
  ``MAX_IMAGE_SIDE`` pixels on the longest side and ``MAX_IMAGE_PIXELS`` in all, and encoded
  again (JPEG, or PNG for a picture with transparency or a lossless source that stays small),
  which also drops their metadata (a photo's GPS position). Decoding needs an image library:
  the caller passes an ``ImageCodec`` (the app's is Qt's, ``ui.attachments``), so this module
  stays Qt-free.
- **Documents** (text, Markdown, code, CSV, JSON… by extension, and PDFs, whose text ``pypdf``
  extracts) go as labelled, fenced ``<document name="…" tokens="…">`` blocks in the message's
  text (``text.fencing.fence``, the one fence of user data). Text is read as UTF-8, UTF-16 with
  a byte-order mark, GB18030 (Chinese files from Windows), then Windows-1252, and cleaned by
  ``text.cleaning.clean_text``.

Anything else is refused with the reason (``AttachmentRefused``), and so is a file larger than
its kind's limit — judged by its size on disk before it is read, so a huge file costs nothing.

What is stored and sent is the prepared form: the re-encoded image, the extracted text. Replayed
history (``user_content``) sends the documents of every earlier message that still fits the
budget, and the images of the last ``REPLAYED_IMAGE_TURNS`` user messages only; older images
(and every image, for a model that takes none) are a one-line ``[image: name]`` note.

Nothing here goes into a background prompt: titles, summaries, the profile and consolidation
read ``MessageRow.content``, the user's own words, which never holds an attachment.
"""

from __future__ import annotations

import base64
import codecs
import io
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from etos_desktop.core.context.language import Language
from etos_desktop.core.context.prompts import ATTACHED_DOCUMENTS_NOTE, IMAGE_NOT_SENT
from etos_desktop.core.context.tokens import IMAGE_PART_TOKENS, count_cjk, estimate_tokens
from etos_desktop.core.errors import AttachmentRefused
from etos_desktop.core.providers.base import Message
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.fencing import fence

if TYPE_CHECKING:
    # Not at run time: the composer imports this module before the first frame, and storage
    # pulls in SQLAlchemy (the start-up test in tests/test_core_imports.py keeps it so).
    from etos_desktop.core.storage.attachments import AttachmentRecord, NewAttachment

IMAGE: Final = "image"
DOCUMENT: Final = "document"

#: Attachments one message may carry.
MAX_ATTACHMENTS: Final = 10
#: Largest files read, by kind (bytes on disk). A 20 MB photo is a 50-megapixel JPEG; 5 MB of
#: text is over a million tokens, more than any model takes; a PDF carries fonts and images.
MAX_IMAGE_FILE_BYTES: Final = 20 * 1024 * 1024
MAX_TEXT_FILE_BYTES: Final = 5 * 1024 * 1024
MAX_PDF_FILE_BYTES: Final = 50 * 1024 * 1024
#: An image is sent at most this large: Anthropic's and OpenAI's vision models scale anything
#: bigger down on the server anyway (1568 px long side, ~1.15-1.5 MP), so more only costs upload.
MAX_IMAGE_SIDE: Final = 1568
MAX_IMAGE_PIXELS: Final = 1_500_000
#: Images with more pixels than this are refused before decoding (a "decompression bomb").
MAX_SOURCE_PIXELS: Final = 64_000_000
#: A PNG larger than this after scaling is sent as JPEG instead (unless it has transparency).
MAX_PNG_BYTES: Final = 1_500_000
#: The user messages (the current one included) whose images are sent as images.
REPLAYED_IMAGE_TURNS: Final = 3

IMAGE_TYPES: Final = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "jpe": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "bmp": "image/bmp",
}
PDF_TYPE: Final = "application/pdf"
#: Text files by extension, with the type shown and exported for them.
TEXT_TYPES: Final = {
    **{
        ext: "text/plain"
        for ext in [
            "txt",
            "text",
            "log",
            "rst",
            "adoc",
            "org",
            "tex",
            "bib",
            "srt",
            "vtt",
            "ini",
            "cfg",
            "conf",
            "properties",
            "toml",
            "py",
            "pyi",
            "pyw",
            "ipynb",
            "js",
            "mjs",
            "cjs",
            "ts",
            "tsx",
            "jsx",
            "java",
            "kt",
            "kts",
            "scala",
            "groovy",
            "gradle",
            "c",
            "h",
            "cc",
            "cpp",
            "cxx",
            "hpp",
            "hh",
            "hxx",
            "cs",
            "go",
            "rs",
            "rb",
            "php",
            "swift",
            "m",
            "mm",
            "dart",
            "lua",
            "pl",
            "pm",
            "r",
            "jl",
            "hs",
            "ml",
            "ex",
            "exs",
            "erl",
            "clj",
            "elm",
            "zig",
            "nim",
            "v",
            "sv",
            "vhd",
            "sh",
            "bash",
            "zsh",
            "fish",
            "ps1",
            "psm1",
            "bat",
            "cmd",
            "sql",
            "graphql",
            "proto",
            "vue",
            "svelte",
            "astro",
            "css",
            "scss",
            "sass",
            "less",
            "diff",
            "patch",
        ]
    },
    "md": "text/markdown",
    "markdown": "text/markdown",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "json": "application/json",
    "jsonl": "application/json",
    "ndjson": "application/json",
    "geojson": "application/json",
    "yaml": "application/yaml",
    "yml": "application/yaml",
    "xml": "application/xml",
    "svg": "image/svg+xml",
    "html": "text/html",
    "htm": "text/html",
}
#: Text files known by their whole name.
TEXT_FILE_NAMES: Final = frozenset(
    {
        "makefile",
        "dockerfile",
        "containerfile",
        "readme",
        "license",
        "copying",
        "changelog",
        "authors",
        "gemfile",
        "rakefile",
        "procfile",
        "cmakelists.txt",
        ".gitignore",
        ".editorconfig",
    }
)

# Control characters (not tab, newline, carriage return, form feed, nor the escape of a
# coloured log's ANSI codes): many of them mean a binary file that happened to decode.
_CONTROL_RE: Final = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")
#: Share (and least number) of control characters above which decoded bytes are binary.
_BINARY_SHARE: Final = 0.05
_BINARY_LEAST: Final = 8


@dataclass(frozen=True)
class PreparedImage:
    """An image as it is stored and sent.

    Args:
        data: The encoded bytes.
        mime: ``image/jpeg`` or ``image/png``.
        width: Its width in pixels.
        height: Its height in pixels.
    """

    data: bytes
    mime: str
    width: int
    height: int


#: Decodes image bytes, turns them upright, takes the first frame, scales them down to
#: ``scaled_size`` and encodes them again. Raises ``ValueError`` whose text is the reason
#: (``"not_image"``, ``"too_many_pixels"``). Runs in a worker thread.
ImageCodec = Callable[[bytes], PreparedImage]


@dataclass(frozen=True)
class PreparedAttachment:
    """A file read and ready to be stored and sent with the next message.

    Args:
        kind: ``IMAGE`` or ``DOCUMENT``.
        name: The file's name (for a pasted image, one the app made up).
        mime: The prepared image's type, or the original document's.
        size: The original's size in bytes.
        data: The bytes stored and sent: the prepared image, or the document's UTF-8 text.
        tokens: A document's token estimate (its text); an image's estimate per image part.
        width: An image's width as sent, else ``None``.
        height: An image's height as sent, else ``None``.
    """

    kind: str
    name: str
    mime: str
    size: int
    data: bytes
    tokens: int
    width: int | None = None
    height: int | None = None

    @property
    def text(self) -> str:
        """A document's text ("" for an image)."""
        return self.data.decode("utf-8") if self.kind == DOCUMENT else ""

    def to_new(self) -> NewAttachment:
        """What the repository stores for it."""
        from etos_desktop.core.storage.attachments import NewAttachment

        return NewAttachment(
            kind=self.kind,
            name=self.name,
            mime=self.mime,
            size=self.size,
            data=self.data,
            tokens=self.tokens,
            width=self.width,
            height=self.height,
        )


@dataclass(frozen=True)
class SentAttachment:
    """One attachment as a request carries it (from a draft or from the store).

    Args:
        kind: ``IMAGE`` or ``DOCUMENT``.
        name: The file's name.
        mime: An image's type (its data URL's), or the document's.
        tokens: Its token estimate.
        data: An image's bytes or a document's UTF-8 text; ``None`` when it is not sent (an
            image outside ``REPLAYED_IMAGE_TURNS``, or a file that is missing).
    """

    kind: str
    name: str
    mime: str
    tokens: int
    data: bytes | None

    @classmethod
    def of(cls, item: PreparedAttachment | AttachmentRecord, data: bytes | None) -> SentAttachment:
        """The sent form of a draft's or a stored attachment, with its bytes (or none)."""
        return cls(item.kind, item.name, item.mime, item.tokens, data)


def kind_of(name: str) -> str | None:
    """``IMAGE``, ``DOCUMENT`` or ``None`` (not a kind the app attaches) for a file name."""
    lowered = name.strip().lower()
    if lowered in TEXT_FILE_NAMES:
        return DOCUMENT
    extension = lowered.rsplit(".", 1)[-1] if "." in lowered else ""
    if extension in IMAGE_TYPES:
        return IMAGE
    if extension == "pdf" or extension in TEXT_TYPES:
        return DOCUMENT
    return None


def size_limit(name: str) -> int:
    """The largest file of this name's kind that is read, in bytes."""
    kind = kind_of(name)
    if kind == IMAGE:
        return MAX_IMAGE_FILE_BYTES
    return MAX_PDF_FILE_BYTES if name.lower().endswith(".pdf") else MAX_TEXT_FILE_BYTES


def _refused(name: str, reason: str, **params: object) -> AttachmentRefused:
    return AttachmentRefused(f"{reason}: {name}", name=name, reason=reason, **params)


def read_attachment(path: Path, codec: ImageCodec) -> PreparedAttachment:
    """Read a file the user chose, dropped or pasted, and prepare it (call from a worker thread).

    Args:
        path: The file.
        codec: Prepares images (see ``ImageCodec``).

    Returns:
        The prepared attachment.

    Raises:
        AttachmentRefused: Not a kind the app attaches (``unsupported``), not a regular file or
            unreadable (``unreadable``), empty (``empty``), larger than its kind's limit
            (``too_large``, ``limit`` in bytes: judged by the size on disk, before reading), or
            see ``prepare_attachment``.
    """
    name = path.name
    if kind_of(name) is None:
        raise _refused(name, "unsupported")
    limit = size_limit(name)
    try:
        info = path.stat()
        if not path.is_file():
            raise _refused(name, "unreadable")
        if info.st_size > limit:
            raise _refused(name, "too_large", limit=limit, size=info.st_size)
        with path.open("rb") as handle:
            # At most one byte past the limit: a file that grew after stat() is refused too.
            data = handle.read(limit + 1)
    except OSError as exc:
        raise _refused(name, "unreadable") from exc
    if len(data) > limit:
        raise _refused(name, "too_large", limit=limit, size=len(data))
    return prepare_attachment(name, data, codec)


def prepare_attachment(name: str, data: bytes, codec: ImageCodec) -> PreparedAttachment:
    """Prepare the bytes of a file named ``name`` (a pasted image has a made-up name).

    Raises:
        AttachmentRefused: ``unsupported``, ``empty``, ``too_large``, ``not_image`` (the bytes
            are not an image this app can read, whatever the name says), ``too_many_pixels``,
            ``binary`` (a "text" file that is not text), ``encrypted`` or ``no_text`` (a PDF
            with no text to extract: scanned pages) or ``unreadable`` (a damaged PDF).
    """
    kind = kind_of(name)
    if kind is None:
        raise _refused(name, "unsupported")
    if not data:
        raise _refused(name, "empty")
    limit = size_limit(name)
    if len(data) > limit:
        raise _refused(name, "too_large", limit=limit, size=len(data))
    if kind == IMAGE:
        try:
            image = codec(data)
        except ValueError as exc:
            raise _refused(name, str(exc) or "not_image") from exc
        return PreparedAttachment(
            IMAGE,
            name,
            image.mime,
            len(data),
            image.data,
            IMAGE_PART_TOKENS,
            image.width,
            image.height,
        )
    if name.lower().endswith(".pdf"):
        text, mime = pdf_text(name, data), PDF_TYPE
    else:
        try:
            text = decode_text(data)
        except ValueError as exc:
            raise _refused(name, "binary") from exc
        mime = TEXT_TYPES.get(name.lower().rsplit(".", 1)[-1], "text/plain")
    text = clean_text(text).strip("\n")
    if not text.strip():
        raise _refused(name, "no_text" if mime == PDF_TYPE else "empty")
    return PreparedAttachment(
        DOCUMENT, name, mime, len(data), text.encode("utf-8"), estimate_tokens(text)
    )


def decode_text(data: bytes) -> str:
    """The text of a file's bytes: UTF-8 (with or without BOM), UTF-16 with a BOM, GB18030, cp1252.

    GB18030 is taken only when what it decodes is mostly CJK (else a Windows-1252 file that
    happens to be valid GB18030 would turn into Chinese).

    Raises:
        ValueError: The bytes are not text (NUL bytes or many control characters).
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _checked(data.decode("utf-16", errors="replace"))
    if data.startswith(codecs.BOM_UTF8):
        return _checked(data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace"))
    if b"\x00" in data:
        raise ValueError("binary")
    try:
        return _checked(data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        pass
    else:
        wide = sum(1 for char in text if ord(char) > 0x7F)
        if wide and count_cjk(text) >= 0.6 * wide:
            return _checked(text)
    try:
        return _checked(data.decode("cp1252"))
    except UnicodeDecodeError:
        return _checked(data.decode("latin-1"))


def _checked(text: str) -> str:
    controls = len(_CONTROL_RE.findall(text))
    if controls > max(_BINARY_LEAST, _BINARY_SHARE * len(text)):
        raise ValueError("binary")
    return text


def pdf_text(name: str, data: bytes) -> str:
    """The text of a PDF's pages, a blank line apart (``pypdf``; call from a worker thread).

    Raises:
        AttachmentRefused: ``encrypted`` (it needs a password), ``unreadable`` (damaged, or not
            a PDF at all).
    """
    # Imported here: pypdf is needed only when a PDF is attached.
    import pypdf
    from pypdf.errors import PyPdfError

    # Its warnings describe the flaws of a file the user chose ("EOF marker not found"): the
    # refusal says what matters, and the log stays the app's.
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            # Many PDFs are "encrypted" with an empty user password (print restrictions).
            try:
                opened = reader.decrypt("")
            except (PyPdfError, NotImplementedError) as exc:
                raise _refused(name, "encrypted") from exc
            if not opened:
                raise _refused(name, "encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
    except AttachmentRefused:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise _refused(name, "unreadable") from exc
    return "\n\n".join(page.strip() for page in pages if page.strip())


def scaled_size(width: int, height: int) -> tuple[int, int]:
    """The size an image of ``width`` × ``height`` is sent at (never larger than it is).

    At most ``MAX_IMAGE_SIDE`` on the longest side and ``MAX_IMAGE_PIXELS`` in all, the aspect
    ratio kept, each side at least 1.
    """
    if width <= 0 or height <= 0:
        raise ValueError("an image has positive sides")
    scale = min(
        1.0, MAX_IMAGE_SIDE / max(width, height), (MAX_IMAGE_PIXELS / (width * height)) ** 0.5
    )
    return max(1, int(width * scale)), max(1, int(height * scale))


def document_block(name: str, text: str, tokens: int) -> str:
    """The fenced block a document is sent as: ``<document name="…" tokens="…">…</document>``."""
    return fence("document", text, {"name": name, "tokens": str(tokens)})


def document_cost(name: str, tokens: int) -> int:
    """What a document's block costs in a request: its text's ``tokens`` and the fence's."""
    return tokens + estimate_tokens(document_block(name, "", tokens)) + 1


def draft_cost(attachments: Sequence[PreparedAttachment], language: Language = "en") -> int:
    """The tokens ``attachments`` add to a message (the composer's count), without reading them.

    The same estimate ``estimate_message_tokens`` makes of ``user_content`` (to a token or two).
    """
    if not attachments:
        return 0
    documents = [a for a in attachments if a.kind == DOCUMENT]
    cost = sum(document_cost(a.name, a.tokens) for a in documents)
    if documents:
        cost += estimate_tokens(ATTACHED_DOCUMENTS_NOTE[language]) + 1
    return cost + IMAGE_PART_TOKENS * sum(1 for a in attachments if a.kind == IMAGE)


def data_url(mime: str, data: bytes) -> str:
    """A ``data:`` URL of ``data``: how an image part carries its image."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def user_content(
    text: str, attachments: Sequence[SentAttachment], language: Language
) -> str | list[dict[str, object]]:
    """The ``content`` of a user message with its attachments.

    The documents come first, under a note that they are material and not instructions, each
    fenced with its name and token count; then a note for each image not sent; then the user's
    words. With images to send, the content is a list of parts: that text (if any), then one
    ``image_url`` part per image; without, it stays a string (which every server takes).

    Args:
        text: What the user wrote (may be empty when they sent only files).
        attachments: The message's attachments in order; an image with ``data=None`` is noted,
            not sent.
        language: The conversation's prompt language (for the notes).
    """
    pieces: list[str] = []
    documents = [a for a in attachments if a.kind == DOCUMENT]
    if documents:
        pieces.append(ATTACHED_DOCUMENTS_NOTE[language])
        for item in documents:
            if item.data is None:
                pieces.append(f"[{item.name}]")
            else:
                pieces.append(document_block(item.name, item.data.decode("utf-8"), item.tokens))
    images = [a for a in attachments if a.kind == IMAGE]
    pieces.extend(IMAGE_NOT_SENT[language].format(name=a.name) for a in images if a.data is None)
    if text.strip():
        pieces.append(text)
    body = "\n\n".join(pieces)
    sent = [a for a in images if a.data is not None]
    if not sent:
        return body
    parts: list[dict[str, object]] = [{"type": "text", "text": body}] if body else []
    parts.extend(
        {"type": "image_url", "image_url": {"url": data_url(a.mime, a.data or b"")}} for a in sent
    )
    return parts


def user_message(text: str, attachments: Sequence[SentAttachment], language: Language) -> Message:
    """The OpenAI-format user message of ``text`` with ``attachments`` (see ``user_content``)."""
    return {"role": "user", "content": user_content(text, attachments, language)}


def has_images(attachments: Sequence[PreparedAttachment | AttachmentRecord]) -> bool:
    """Whether any of ``attachments`` is an image."""
    return any(a.kind == IMAGE for a in attachments)


__all__ = [
    "DOCUMENT",
    "IMAGE",
    "MAX_ATTACHMENTS",
    "REPLAYED_IMAGE_TURNS",
    "ImageCodec",
    "PreparedAttachment",
    "PreparedImage",
    "SentAttachment",
    "data_url",
    "decode_text",
    "document_block",
    "document_cost",
    "draft_cost",
    "has_images",
    "kind_of",
    "pdf_text",
    "prepare_attachment",
    "read_attachment",
    "scaled_size",
    "size_limit",
    "user_content",
    "user_message",
]
