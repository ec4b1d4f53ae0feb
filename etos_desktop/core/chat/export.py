"""Conversation export to Markdown and JSON (pure functions; the caller writes the files).

Attachments go with their messages: the JSON holds each one whole (an image as base64, a
document as its text), so the file stands alone; the Markdown shows a document's text in a
fenced block and links each image to a file the caller writes beside it, in a folder named
after the export (``markdown_files``: ``Trip.md`` → ``Trip_files/1-photo.jpg``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from etos_desktop import __version__
from etos_desktop.core.storage.attachments import AttachmentRecord
from etos_desktop.core.storage.tables import ConversationRow, MessageRow
from etos_desktop.core.usage.records import message_usage, usage_json


@dataclass(frozen=True)
class ExportedAttachment:
    """An attachment to export: its record and its bytes (``None``: the file is missing)."""

    record: AttachmentRecord
    data: bytes | None


#: The attachments of the exported messages, by message id.
Attached = Mapping[int, Sequence[ExportedAttachment]]

_UNSAFE_NAME = re.compile(r'[\\/:*?"<>|\x00-\x1f\u200b-\u200f\u202a-\u202e\u2066-\u2069]')


def markdown_files(attachments: Attached) -> dict[int, str]:
    """The file name each exported image gets in the Markdown's folder, by attachment id.

    Numbered in order (``1-photo.jpg``), so two images of one name stay apart; characters file
    systems refuse, and bidi controls, become ``_``.
    """
    names: dict[int, str] = {}
    for message_id in sorted(attachments):
        for item in attachments[message_id]:
            if item.record.kind == "image" and item.data is not None:
                safe = _UNSAFE_NAME.sub("_", item.record.name).strip(". ") or "image"
                names[item.record.id] = f"{len(names) + 1}-{safe[:80]}"
    return names


def _attachment_json(item: ExportedAttachment) -> dict[str, Any]:
    record = item.record
    entry: dict[str, Any] = {
        "name": record.name,
        "kind": record.kind,
        "mime": record.mime,
        "size": record.size,
        "sha256": record.sha256,
        "tokens": record.tokens,
    }
    if record.kind == "image":
        entry["width"], entry["height"] = record.width, record.height
        if item.data is not None:
            entry["data_base64"] = base64.b64encode(item.data).decode("ascii")
    elif item.data is not None:
        entry["text"] = item.data.decode("utf-8", errors="replace")
    if item.data is None:
        entry["missing"] = True
    return entry


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


#: Bumped when the JSON export's shape changes.
EXPORT_FORMAT = 1


def conversation_to_json(
    conversation: ConversationRow,
    messages: Sequence[MessageRow],
    attachments: Attached | None = None,
) -> dict[str, Any]:
    """A JSON-ready dict of a conversation's current history (no keys, no traces).

    A message with attachments has ``attachments``: name, kind, mime, size, sha256, tokens,
    an image's ``width``/``height``/``data_base64``, a document's ``text``.
    """
    attached = attachments or {}
    entries: list[dict[str, Any]] = [
        {
            "id": m.id,
            "role": m.role,
            "content": m.content,
            "created_at": m.created_at.isoformat(),
            "status": m.status,
            "model": m.model,
            "usage": usage_json(message_usage(m)),
        }
        for m in messages
    ]
    for entry in entries:
        items = attached.get(entry["id"])
        if items:
            entry["attachments"] = [_attachment_json(item) for item in items]
    about: dict[str, Any] = {
        "id": conversation.id,
        "title": conversation.title,
        "created_at": conversation.created_at.isoformat(),
        "updated_at": conversation.updated_at.isoformat(),
        "model": conversation.model,
    }
    if conversation.started_by:
        about["started_by"] = conversation.started_by  # "companion": a check-in started it
    return {
        "format": "etos-desktop-conversation",
        "format_version": EXPORT_FORMAT,
        "app_version": __version__,
        "conversation": about,
        "messages": entries,
    }


def conversation_to_markdown(
    conversation: ConversationRow,
    messages: Sequence[MessageRow],
    *,
    you: str = "You",
    assistant: str = "Assistant",
    untitled: str = "Conversation",
    empty: str = "(empty)",
    status: Callable[[str, str | None], str] | None = None,
    attachments: Attached | None = None,
    files_folder: str = "",
    tokens: Callable[[int], str] = str,
) -> str:
    """A readable Markdown transcript of a conversation's current history.

    The words around the messages are the UI's (core has no translations): the UI passes them
    in its language.

    Args:
        conversation: The conversation.
        messages: Its current history, in order.
        you: Heading for the user's messages (the UI passes a translated word).
        assistant: Heading for replies (the UI passes the companion's name).
        untitled: The title of a conversation that has none.
        empty: Shown for a message with no text.
        status: Words for a message's status and error code (default: the status itself).
        attachments: The messages' attachments (images are linked into ``files_folder``, under
            the names ``markdown_files`` gives; documents are shown in fenced blocks).
        files_folder: The folder, beside the Markdown file, the caller writes the images to.
        tokens: Words for a document's token count (the UI's: "about 1,234 tokens").
    """
    attached = attachments or {}
    files = markdown_files(attached)
    title = conversation.title or untitled
    lines = [f"# {title}", "", f"*{conversation.created_at:%Y-%m-%d %H:%M} UTC*", ""]
    for message in messages:
        if message.role not in ("user", "assistant"):
            continue
        who = you if message.role == "user" else assistant
        lines.append(f"## {who} — {message.created_at:%Y-%m-%d %H:%M}")
        lines.append("")
        items = attached.get(message.id or 0, ())
        for item in items:
            record = item.record
            if record.kind == "image" and record.id in files:
                target = quote(f"{files_folder}/{files[record.id]}")
                lines.extend([f"![{_md_text(record.name)}]({target})", ""])
            elif record.kind == "image":
                lines.extend([f"*[{_md_text(record.name)}]*", ""])
            else:
                lines.append(f"**📎 {_md_text(record.name)}** ({tokens(record.tokens)})")
                lines.append("")
                text = item.data.decode("utf-8", errors="replace") if item.data else ""
                lines.extend([_fenced(text), ""])
        if message.content.strip() or not items:
            lines.append(message.content.rstrip() or f"*{empty}*")
        if message.status not in ("complete",):
            words = status(message.status, message.error_code) if status else message.status
            lines.append("")
            lines.append(f"*({words or message.status})*")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _md_text(text: str) -> str:
    """A file name as Markdown text: its markup characters escaped, on one line."""
    return re.sub(r"([\\`*_\[\]()<>#!|])", r"\\\1", " ".join(text.split()))
