"""Events the chat service yields while it handles one send; plain Python, no Qt.

Besides the events of one send, the service publishes every reply that finished on the app's
change hub (``core.changes.ReplyCompleted``): that is how the background jobs learn that a
conversation may be due for a title or a summary, without a UI controller in between.
"""

from __future__ import annotations

from dataclasses import dataclass

from etos_desktop.core.errors import UserFacingError
from etos_desktop.core.storage.tables import MessageRow


@dataclass(frozen=True)
class UserMessageSaved:
    """The user's message is in the database (the composer may be cleared now)."""

    message: MessageRow


@dataclass(frozen=True)
class ReplyStarted:
    """An assistant reply row exists (status streaming) and a request is about to go out."""

    message: MessageRow


@dataclass(frozen=True)
class ReplyDelta:
    """More text arrived; ``text`` is the whole reply so far."""

    message_id: int
    delta: str
    text: str


@dataclass(frozen=True)
class ReplyRetrying:
    """The request failed in a retryable way; the provider waits ``seconds`` and tries again."""

    message_id: int
    seconds: float
    reason: str


@dataclass(frozen=True)
class ReplyFinished:
    """The reply ended: complete, or interrupted (stream ended early, or stopped by the user)."""

    message: MessageRow


@dataclass(frozen=True)
class ReplyFailed:
    """The reply failed; ``message`` holds any partial text and the error code."""

    message: MessageRow
    error: UserFacingError


@dataclass(frozen=True)
class MemorySaved:
    """A memory was saved.

    By the model's ``save_memory`` (``message_id`` is the reply), or by the user's
    ``/remember`` (``message_id`` is ``None``).
    """

    message_id: int | None
    memory_id: int
    merged: bool
    superseded: int | None
    content: str


ChatEvent = (
    UserMessageSaved
    | ReplyStarted
    | ReplyDelta
    | ReplyRetrying
    | ReplyFinished
    | ReplyFailed
    | MemorySaved
)
