"""Domain values of long-term memory: frozen dataclasses handed out by the engine."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from etos_desktop.core.storage.lookups import is_active_at
from etos_desktop.core.storage.tables import MemoryRevisionRow, MemoryRow


class MemoryKind(StrEnum):
    """What a memory is about (DESIGN §3)."""

    FACT = "fact"
    PREFERENCE = "preference"
    INSTRUCTION = "instruction"
    EPISODE = "episode"
    INSIGHT = "insight"


class MemorySource(StrEnum):
    """Where a memory came from (DESIGN §3)."""

    USER_STATEMENT = "user_statement"
    ASSISTANT_ACTION = "assistant_action"
    MANUAL = "manual"
    IMPORTED = "imported"
    CONSOLIDATION = "consolidation"


@dataclass(frozen=True)
class Memory:
    """One memory as stored.

    Attributes:
        id: The memory's id (shown to the user and the model as ``#id``).
        content: The text.
        kind: A ``MemoryKind`` value.
        source: A ``MemorySource`` value.
        importance: 0–1; ranks slightly higher when higher.
        confidence: 0–1; an inferred observation has low confidence and ranks lower.
        tags: Free labels.
        trigger_context: When this memory should be recalled.
        valid_from: Since when the statement holds (a restatement moves it).
        valid_until: When it stopped holding (set by supersede), or ``None``.
        superseded_by: The memory that replaced it, or ``None``.
        archived_at: When it was archived, or ``None`` (archived memories are never retrieved).
        created_at: When it was first saved.
        updated_at: When it last changed.
        access_count: How often it was retrieved into a conversation.
        last_accessed_at: When it was last retrieved.
    """

    id: int
    content: str
    kind: str
    source: str
    importance: float
    confidence: float
    tags: tuple[str, ...]
    trigger_context: str | None
    valid_from: datetime
    valid_until: datetime | None
    superseded_by: int | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
    access_count: int = 0
    last_accessed_at: datetime | None = None
    #: The message it was saved from (a reply's save_memory, or a Remember… action).
    origin_message_id: int | None = None

    def is_active(self, now: datetime) -> bool:
        """Whether the memory can be retrieved at ``now`` (not archived, not expired)."""
        return is_active_at(self.archived_at, self.valid_until, now)

    @classmethod
    def from_row(cls, row: MemoryRow) -> Memory:
        """Build the value from a table row."""
        assert row.id is not None
        return cls(
            id=row.id,
            content=row.content,
            kind=row.kind,
            source=row.source,
            importance=row.importance,
            confidence=row.confidence,
            tags=tuple(json.loads(row.tags_json)),
            trigger_context=row.trigger_context,
            valid_from=row.valid_from,
            valid_until=row.valid_until,
            superseded_by=row.superseded_by,
            archived_at=row.archived_at,
            created_at=row.created_at,
            updated_at=row.updated_at,
            access_count=row.access_count,
            last_accessed_at=row.last_accessed_at,
            origin_message_id=row.origin_message_id,
        )


@dataclass(frozen=True)
class Revision:
    """One entry of a memory's history.

    Attributes:
        id: The revision's id.
        memory_id: The memory it belongs to.
        created_at: When the change happened.
        action: A ``RevisionAction`` value.
        actor: Who or what made the change (user, assistant, import, consolidation, system).
        before: The memory's fields before the change (``None`` for create and tombstones).
        after: The fields after the change (``None`` for tombstones).
    """

    id: int
    memory_id: int
    created_at: datetime
    action: str
    actor: str
    before: dict[str, Any] | None = field(default=None, compare=False)
    after: dict[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def from_row(cls, row: MemoryRevisionRow) -> Revision:
        """Build the value from a table row."""
        assert row.id is not None
        return cls(
            id=row.id,
            memory_id=row.memory_id,
            created_at=row.created_at,
            action=row.action,
            actor=row.actor,
            before=None if row.before_json is None else json.loads(row.before_json),
            after=None if row.after_json is None else json.loads(row.after_json),
        )


@dataclass(frozen=True)
class SaveResult:
    """What ``MemoryEngine.save`` did.

    Attributes:
        id: The memory that now holds the text.
        merged: ``True`` when an active near-duplicate took the new wording instead of a new
            memory being created.
        superseded: The memory this one ended, if any.
    """

    id: int
    merged: bool = False
    superseded: int | None = None


@dataclass(frozen=True)
class DeletedMemory:
    """Everything a delete removed, held in memory only so the user can undo it.

    Never write this anywhere: a delete is a real delete (DESIGN §3).

    Attributes:
        row: The memory's columns.
        revisions: Its revisions' columns (without ids), oldest first.
        vectors: Its vectors as ``(embedder_key, chunk_no, dim, blob)``.
        superseded_ids: Memories whose ``superseded_by`` pointed at it (the link is restored).
        deleted_at: When it was deleted.
        trace_lines: Its lines in stored context traces as ``(message_id, original line, erased
            line)``; an undo puts the originals back.
        indexed: Its full-text index entry (an undo of 10k memories would otherwise spend a
            third of its time segmenting the texts again).
    """

    row: dict[str, Any] = field(compare=False)
    revisions: tuple[dict[str, Any], ...] = field(compare=False)
    vectors: tuple[tuple[str, int, int, bytes], ...] = field(compare=False)
    superseded_ids: tuple[int, ...]
    deleted_at: datetime
    trace_lines: tuple[tuple[int, str, str], ...] = field(default=(), compare=False)
    indexed: str = field(default="", compare=False)

    @property
    def memory_id(self) -> int:
        """The deleted memory's id."""
        return int(self.row["id"])


@dataclass(frozen=True)
class MemoryDraft:
    """A memory to add in bulk (``MemoryEngine.add_many``); fields mirror ``MemoryEngine.save``."""

    text: str
    kind: str = MemoryKind.FACT
    created_at: datetime | None = None
    source: str = MemorySource.MANUAL
    importance: float = 0.5
    confidence: float = 1.0
    tags: tuple[str, ...] = ()
    trigger_context: str | None = None
    valid_until: datetime | None = None
