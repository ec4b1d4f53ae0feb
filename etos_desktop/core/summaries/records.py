"""Domain values of session summaries: frozen dataclasses handed out by the summary store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from etos_desktop.core.storage.tables import SessionSummaryRow


class SummarySource(StrEnum):
    """How a summary came to be."""

    #: The background job, after the rule said the conversation was due.
    SCHEDULED = "scheduled"
    #: The user's "Summarise now".
    MANUAL = "manual"
    #: An import file.
    IMPORTED = "imported"


class AttemptOutcome(StrEnum):
    """What the last attempt to summarise a conversation ended with."""

    SUMMARY = "summary"
    SKIP = "skip"
    ERROR = "error"


@dataclass(frozen=True)
class Summary:
    """One stored summary.

    Attributes:
        id: The summary's id.
        conversation_id: Its conversation (``None``: imported, the conversation is not here).
        conversation_title: The conversation's title now (or, without one, when it was written).
        content: The paragraph.
        language: The prompt language it was written for.
        created_at: When it was written.
        updated_at: When it last changed (an edit, an archive).
        covers_until_message_id: The last message it covers.
        user_turns_covered: The user turns of its conversation up to that message.
        source: A ``SummarySource`` value.
        edited_by_user: The user changed its text.
        archived_at: When it was archived (never injected or recalled then).
        current: It is its conversation's newest non-archived summary.
    """

    id: int
    conversation_id: int | None
    conversation_title: str
    content: str
    language: str
    created_at: datetime
    updated_at: datetime
    covers_until_message_id: int | None
    user_turns_covered: int
    source: str
    edited_by_user: bool
    archived_at: datetime | None
    current: bool = False

    @classmethod
    def from_row(
        cls, row: SessionSummaryRow, *, title: str | None = None, current: bool = False
    ) -> Summary:
        """Build from a row; ``title`` is the conversation's title now, if it still exists."""
        return cls(
            id=row.id or 0,
            conversation_id=row.conversation_id,
            conversation_title=title if title else row.conversation_title,
            content=row.content,
            language=row.language,
            created_at=row.created_at,
            updated_at=row.updated_at,
            covers_until_message_id=row.covers_until_message_id,
            user_turns_covered=row.user_turns_covered,
            source=row.source,
            edited_by_user=row.edited_by_user,
            archived_at=row.archived_at,
            current=current,
        )

    @property
    def archived(self) -> bool:
        """Whether the summary is archived."""
        return self.archived_at is not None


@dataclass(frozen=True)
class DeletedSummary:
    """Everything needed to put a deleted summary back (held in memory only: it has the text).

    Attributes:
        row: The summary's row, field by field.
        trace_lines: ``(message_id, original line, erased line)`` for each context trace line
            its text was erased from.
    """

    row: dict[str, Any]
    trace_lines: tuple[tuple[int, str, str], ...] = ()

    @property
    def summary_id(self) -> int:
        """The deleted summary's id."""
        value = self.row["id"]
        assert isinstance(value, int)
        return value

    @property
    def conversation_id(self) -> int | None:
        """The conversation the deleted summary was of (``None``: imported, unlinked)."""
        value = self.row.get("conversation_id")
        return value if isinstance(value, int) else None


@dataclass(frozen=True)
class SummaryActivity:
    """What the rule needs to know about one conversation.

    Attributes:
        conversation_id: The conversation.
        title: Its title.
        temporary: A temporary conversation is never summarised.
        user_turns: User messages in its current history.
        new_user_turns: Those after ``covered_until_message_id``.
        covered_until_message_id: The last message the latest summary or SKIP covered.
        succeeded_at: The last successful attempt (a summary or a SKIP).
        attempted_at: The last attempt of any outcome.
        retry_at: The end of the backoff after an error.
        error_count: Errors since the last successful attempt.
        last_outcome: An ``AttemptOutcome`` value, or ``None`` before the first attempt.
        last_error: The error code of the last failed attempt.
        updated_at: When the conversation last changed.
    """

    conversation_id: int
    title: str
    temporary: bool
    user_turns: int
    new_user_turns: int
    covered_until_message_id: int | None = None
    succeeded_at: datetime | None = None
    attempted_at: datetime | None = None
    retry_at: datetime | None = None
    error_count: int = 0
    last_outcome: str | None = None
    last_error: str | None = None
    updated_at: datetime | None = None
