"""What the chat view shows, read off the real widgets, and the "view equals reopen" check.

After any chat action (send, stop, regenerate, edit, delete, switch version…) the view must show
what closing and reopening the conversation shows: the same messages in the same order, with the
same texts, status lines, enabled actions and version switchers. ``assert_view_equals_reopen``
captures the view, reopens the conversation through the controller (which reads the database),
captures again and compares.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QLabel, QToolButton, QWidget

from etos_desktop.ui.attachments import MessageAttachments
from etos_desktop.ui.message_widget import MemoryNote, MessageWidget
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click

TIMEOUT = 15

_BUTTONS = (
    "retryButton",
    "copyButton",
    "regenerateButton",
    "editButton",
    "deleteButton",
    "contextButton",
    "rememberButton",
    "previousVersionButton",
    "nextVersionButton",
)


@dataclass(frozen=True)
class MessageView:
    """One message as the user sees it."""

    id: int
    role: str
    author: str
    text: str
    status: str
    #: name → (visible, enabled) of each action button.
    buttons: tuple[tuple[str, bool, bool], ...]
    versions: str
    #: ids of the memory notes shown under it that still stand (not undone).
    notes: tuple[int, ...]
    #: the names of its attachments, each with whether a thumbnail picture shows for it.
    attachments: tuple[tuple[str, bool], ...] = ()
    #: the line with the tokens (and cost) the server reported for a reply ("": none shown).
    usage: str = ""


@dataclass(frozen=True)
class ChatView:
    """The conversation as the user sees it."""

    title: str
    temporary: bool
    load_earlier: bool
    messages: tuple[MessageView, ...]


def _visible_text(widget: QWidget, name: str) -> str:
    label = widget.findChild(QLabel, name)
    if label is None or not label.isVisibleTo(widget):
        return ""
    return label.text()


def message_view(widget: MessageWidget) -> MessageView:
    """Read one message widget as the user sees it."""
    buttons = []
    for name in _BUTTONS:
        button = widget.findChild(QToolButton, name)
        if button is not None:
            buttons.append((name, button.isVisibleTo(widget), button.isEnabled()))
    notes = tuple(
        note.memory_id
        for note in widget.findChildren(MemoryNote)
        if not note.undone and note.isVisibleTo(widget)
    )
    strip = widget.findChild(MessageAttachments)
    attachments = (
        tuple((item.record.name, not item.thumbnail.isNull()) for item in strip.shown)
        if strip is not None and strip.isVisibleTo(widget)
        else ()
    )
    return MessageView(
        id=widget.message_id,
        role=widget.role,
        author=_visible_text(widget, "messageRole"),
        text=widget.text(),
        status=_visible_text(widget, "messageStatus"),
        buttons=tuple(buttons),
        versions=_visible_text(widget, "versionLabel"),
        notes=notes,
        attachments=attachments,
        usage=_visible_text(widget, "messageUsage"),
    )


def chat_view(chat: Any) -> ChatView:
    """Read the chat panel: the messages in the order they are laid out."""
    layout = chat.message_layout
    messages = []
    for index in range(layout.count()):
        item = layout.itemAt(index)
        widget = item.widget() if item is not None else None
        if isinstance(widget, MessageWidget) and not widget.isHidden():
            messages.append(message_view(widget))
    full_text = getattr(chat.title, "full_text", chat.title.text)
    return ChatView(
        title=full_text(),
        temporary=chat.temporary.isChecked(),
        load_earlier=chat.older_button.isVisibleTo(chat),
        messages=tuple(messages),
    )


def _diff(live: ChatView, reopened: ChatView) -> str:
    lines = []
    if (live.title, live.temporary, live.load_earlier) != (
        reopened.title,
        reopened.temporary,
        reopened.load_earlier,
    ):
        lines.append(
            f"header: live {live.title!r}/{live.temporary}/{live.load_earlier} "
            f"reopened {reopened.title!r}/{reopened.temporary}/{reopened.load_earlier}"
        )
    live_ids = [m.id for m in live.messages]
    reopened_ids = [m.id for m in reopened.messages]
    if live_ids != reopened_ids:
        lines.append(f"messages: live {live_ids} reopened {reopened_ids}")
    for a, b in zip(live.messages, reopened.messages, strict=False):
        if a != b:
            for field in (
                "role",
                "author",
                "text",
                "status",
                "buttons",
                "versions",
                "notes",
                "attachments",
                "usage",
            ):
                if getattr(a, field) != getattr(b, field):
                    lines.append(
                        f"#{a.id} {field}: live {getattr(a, field)!r} "
                        f"reopened {getattr(b, field)!r}"
                    )
    return "\n".join(lines)


async def assert_view_equals_reopen(app: Any) -> ChatView:
    """Assert the chat view equals what reopening the conversation shows; return the view."""
    controller = app.controller
    chat = app.window.chat
    await asyncio.wait_for(controller.wait_idle(), TIMEOUT)
    for widget in chat.findChildren(MessageWidget):
        widget.flush_render()
    live = chat_view(chat)
    assert controller.current is not None, "no conversation is open"
    await asyncio.wait_for(controller.open_conversation(controller.current.id), TIMEOUT)
    await asyncio.wait_for(controller.wait_idle(), TIMEOUT)
    # A reopen shows the newest page; the earlier messages the live view shows are those that
    # scrolling back up loads (clicked here, as a person may).
    while len(chat_view(chat).messages) < len(live.messages) and chat.older_button.isVisible():
        older = expect_signal(controller.older_messages_loaded)
        await click(chat.older_button)
        await asyncio.wait_for(older, TIMEOUT)
        await asyncio.wait_for(controller.wait_idle(), TIMEOUT)
    # Let deleteLater of the replaced widgets run, so only the new ones are read.
    await asyncio.sleep(0)
    reopened = chat_view(chat)
    difference = _diff(live, reopened)
    assert not difference, "the view differs from a reopen:\n" + difference
    return reopened
