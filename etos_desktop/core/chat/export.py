"""Conversation export to Markdown and JSON (pure functions; the caller writes the file)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from etos_desktop import __version__
from etos_desktop.core.storage.tables import ConversationRow, MessageRow

#: Bumped when the JSON export's shape changes.
EXPORT_FORMAT = 1


def conversation_to_json(
    conversation: ConversationRow, messages: Sequence[MessageRow]
) -> dict[str, Any]:
    """A JSON-ready dict of a conversation's current history (no keys, no traces)."""
    return {
        "format": "etos-desktop-conversation",
        "format_version": EXPORT_FORMAT,
        "app_version": __version__,
        "conversation": {
            "id": conversation.id,
            "title": conversation.title,
            "created_at": conversation.created_at.isoformat(),
            "updated_at": conversation.updated_at.isoformat(),
            "model": conversation.model,
        },
        "messages": [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "created_at": m.created_at.isoformat(),
                "status": m.status,
                "model": m.model,
                "usage": json.loads(m.usage_json) if m.usage_json else None,
            }
            for m in messages
        ],
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
    """
    title = conversation.title or untitled
    lines = [f"# {title}", "", f"*{conversation.created_at:%Y-%m-%d %H:%M} UTC*", ""]
    for message in messages:
        if message.role not in ("user", "assistant"):
            continue
        who = you if message.role == "user" else assistant
        lines.append(f"## {who} — {message.created_at:%Y-%m-%d %H:%M}")
        lines.append("")
        lines.append(message.content.rstrip() or f"*{empty}*")
        if message.status not in ("complete",):
            words = status(message.status, message.error_code) if status else message.status
            lines.append("")
            lines.append(f"*({words or message.status})*")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
