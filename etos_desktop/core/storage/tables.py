"""SQLModel tables. Their schema is created and changed only by ``migrations.py``.

Datetimes are aware UTC (SQLModel stores UTC and returns aware values). JSON-valued columns
hold text so the SQL stays portable.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum

from sqlmodel import Field, SQLModel


def new_gid() -> str:
    """A new global id: a random UUID that names a synced item on every device (issue 22)."""
    return str(uuid.uuid4())


class MessageStatus(StrEnum):
    """Life cycle of a message."""

    COMPLETE = "complete"
    STREAMING = "streaming"
    INTERRUPTED = "interrupted"
    ERROR = "error"


class ConversationRow(SQLModel, table=True):
    """One conversation."""

    __tablename__ = "conversation"

    id: int | None = Field(default=None, primary_key=True)
    #: The global id sync names it by (v14); the integer id stays local.
    gid: str = Field(default_factory=new_gid, unique=True, sa_column_kwargs={"default": new_gid})
    title: str = ""
    created_at: datetime
    updated_at: datetime
    pinned: bool = False
    archived: bool = False
    #: A temporary conversation reads and writes no memory, summaries or profile.
    temporary: bool = False
    #: Per-conversation provider and model; ``None`` means the default provider / its chat model.
    provider_id: str | None = None
    model: str | None = None
    #: Per-conversation persona override; ``None`` means the global persona.
    persona_name: str | None = None
    persona_prompt: str | None = None
    #: Who started it: ``None`` the user, ``"companion"`` a check-in (``core/checkins``, v12).
    started_by: str | None = None


class MessageRow(SQLModel, table=True):
    """One message of a conversation.

    Regenerated replies share ``reply_to_id`` (the user message they answer); exactly one of them
    has ``is_current`` set. Messages after an edited user message get ``hidden_at``; the current
    history is the non-hidden messages with current replies.
    """

    __tablename__ = "message"

    id: int | None = Field(default=None, primary_key=True)
    #: The global id sync names it by (v14); the integer id stays local.
    gid: str = Field(default_factory=new_gid, unique=True, sa_column_kwargs={"default": new_gid})
    conversation_id: int = Field(foreign_key="conversation.id", index=True, ondelete="CASCADE")
    role: str
    content: str = ""
    created_at: datetime
    status: str = MessageStatus.COMPLETE
    model: str | None = None
    #: The tokens the server reported for a reply (all its tool rounds together; ``None``: it
    #: reported none). ``cached_tokens`` is the part of ``prompt_tokens`` read from its cache.
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    tool_calls_json: str | None = None
    tool_call_id: str | None = None
    error_code: str | None = None
    error_detail: str | None = None
    reply_to_id: int | None = Field(
        default=None, foreign_key="message.id", index=True, ondelete="SET NULL"
    )
    is_current: bool = True
    hidden_at: datetime | None = None


class ContextTraceRow(SQLModel, table=True):
    """Exactly what was sent for one assistant message (the context inspector's data)."""

    __tablename__ = "context_trace"

    message_id: int = Field(primary_key=True, foreign_key="message.id", ondelete="CASCADE")
    created_at: datetime
    trace_json: str


class ContextTraceMemoryRow(SQLModel, table=True):
    """One memory a stored context trace cites (so a delete finds the copies of its text).

    ``memory_id`` is not a foreign key: the link outlives a deleted memory (ids are never reused)
    so that an undo can put the text back into the trace.
    """

    __tablename__ = "context_trace_memory"

    memory_id: int = Field(primary_key=True)
    message_id: int = Field(
        primary_key=True, foreign_key="context_trace.message_id", index=True, ondelete="CASCADE"
    )


class MemoryRow(SQLModel, table=True):
    """One long-term memory (DESIGN §3, §5).

    Active means ``archived_at`` is unset and ``valid_until`` is unset or in the future. Ids are
    never reused (``AUTOINCREMENT``), because the model and the user see them ("saved as #12")
    and a deleted memory's tombstone keeps its id.
    """

    __tablename__ = "memory"

    id: int | None = Field(default=None, primary_key=True)
    #: The global id sync and the command line name it by; the integer id stays local.
    gid: str = Field(default_factory=new_gid, unique=True, sa_column_kwargs={"default": new_gid})
    content: str
    #: Hash of the normalised content; finds exact duplicates without reading every text.
    content_key: str = Field(index=True)
    kind: str = "fact"
    source: str = "manual"
    importance: float = 0.5
    confidence: float = 1.0
    tags_json: str = "[]"
    #: When this memory should be recalled, in the words of whoever saved it.
    trigger_context: str | None = None
    valid_from: datetime
    valid_until: datetime | None = None
    superseded_by: int | None = Field(
        default=None, foreign_key="memory.id", index=True, ondelete="SET NULL"
    )
    archived_at: datetime | None = Field(default=None, index=True)
    created_at: datetime
    updated_at: datetime
    access_count: int = 0
    last_accessed_at: datetime | None = None
    origin_conversation_id: int | None = Field(
        default=None, foreign_key="conversation.id", ondelete="SET NULL"
    )
    origin_message_id: int | None = Field(
        default=None, foreign_key="message.id", ondelete="SET NULL"
    )


class RevisionAction(StrEnum):
    """What a revision did to its memory (``MemoryRevisionRow.action``).

    Here beside its table, not in ``core/memory``: the profile reads the memories' histories
    too (when the user last stated a change, ``core/profile/store.py``).
    """

    CREATE = "create"
    EDIT = "edit"
    #: A near-duplicate was saved: the memory took the new wording.
    MERGE = "merge"
    ARCHIVE = "archive"
    RESTORE = "restore"
    #: The memory was ended by a newer one (``superseded_by``).
    SUPERSEDE = "supersede"
    #: The tombstone: the memory and its texts are gone.
    DELETE = "delete"
    #: A delete was undone (the snapshot held in memory was written back).
    UNDELETE = "undelete"
    #: Sync: another device's concurrent value that lost to the one kept (its text in
    #: ``after_json``, the device in ``actor``); the memory itself did not change.
    CONFLICT = "conflict"


class MemoryRevisionRow(SQLModel, table=True):
    """One change to a memory: its visible history.

    ``memory_id`` is deliberately not a foreign key: when a memory is deleted, its revisions are
    removed and one ``delete`` revision without texts stays behind as the tombstone.
    """

    __tablename__ = "memory_revision"

    id: int | None = Field(default=None, primary_key=True)
    #: The global id sync and the command line name it by; the integer id stays local.
    gid: str = Field(default_factory=new_gid, unique=True, sa_column_kwargs={"default": new_gid})
    memory_id: int = Field(index=True)
    created_at: datetime
    #: A ``RevisionAction`` value.
    action: str
    #: Who or what made the change: user / assistant / import / consolidation / system.
    actor: str
    #: JSON snapshot of the memory's fields before and after the change (``None`` when absent).
    before_json: str | None = None
    after_json: str | None = None


class MemoryVectorRow(SQLModel, table=True):
    """One embedding of (a chunk of) a memory, tagged with the embedder that made it.

    Vectors of different embedders are never compared; ``vector`` holds ``dim`` little-endian
    float32 values.
    """

    __tablename__ = "memory_vector"

    embedder_key: str = Field(primary_key=True)
    memory_id: int = Field(
        primary_key=True, foreign_key="memory.id", index=True, ondelete="CASCADE"
    )
    chunk_no: int = Field(default=0, primary_key=True)
    dim: int
    vector: bytes


class SessionSummaryRow(SQLModel, table=True):
    """One summary of a conversation (DESIGN §3, §6).

    Every summary is kept: the newest non-archived one is the conversation's summary, the others
    are its history. ``conversation_id`` is ``None`` for a summary imported from another
    database whose conversation is not here; ``conversation_title`` keeps the title it had when
    the summary was written, so such a summary still says where it came from.
    """

    __tablename__ = "session_summary"

    id: int | None = Field(default=None, primary_key=True)
    #: The global id sync and the command line name it by; the integer id stays local.
    gid: str = Field(default_factory=new_gid, unique=True, sa_column_kwargs={"default": new_gid})
    conversation_id: int | None = Field(
        default=None, foreign_key="conversation.id", index=True, ondelete="CASCADE"
    )
    conversation_title: str = ""
    content: str
    #: The prompt language the summary was written for ("zh" or "en").
    language: str = "en"
    created_at: datetime = Field(index=True)
    updated_at: datetime
    #: The last message the summary covers (not a foreign key: a message may be deleted later).
    covers_until_message_id: int | None = None
    user_turns_covered: int = 0
    #: scheduled / manual / imported
    source: str = "scheduled"
    edited_by_user: bool = False
    archived_at: datetime | None = None


class SummaryStateRow(SQLModel, table=True):
    """Per conversation, the summary bookkeeping the rule reads (DESIGN §3, §6).

    ``covered_until_message_id`` is the last message the latest summary *or SKIP* covered;
    ``succeeded_at`` the last successful attempt (a summary or a SKIP); ``retry_at`` the end of
    the backoff after an error.
    """

    __tablename__ = "summary_state"

    conversation_id: int = Field(
        primary_key=True, foreign_key="conversation.id", ondelete="CASCADE"
    )
    covered_until_message_id: int | None = None
    succeeded_at: datetime | None = None
    attempted_at: datetime | None = None
    retry_at: datetime | None = None
    error_count: int = 0
    #: summary / skip / error
    last_outcome: str | None = None
    #: The error code of the last failed attempt (never a server's text: it may hold a key).
    last_error: str | None = None


class SummaryVectorRow(SQLModel, table=True):
    """The embedding of a summary for one embedder (derived data, rebuilt when missing)."""

    __tablename__ = "summary_vector"

    embedder_key: str = Field(primary_key=True)
    summary_id: int = Field(
        primary_key=True, foreign_key="session_summary.id", index=True, ondelete="CASCADE"
    )
    dim: int
    vector: bytes


class JobRunRow(SQLModel, table=True):
    """What Settings shows about one background job (DESIGN §3 ``JobRun``)."""

    __tablename__ = "job_run"

    name: str = Field(primary_key=True)
    last_started_at: datetime | None = None
    last_finished_at: datetime | None = None
    last_success_at: datetime | None = None
    last_error_at: datetime | None = None
    #: An error code with a short, key-free detail.
    last_error: str | None = None
    next_run_at: datetime | None = None
    runs: int = 0
    failures: int = 0


class RequestUsageRow(SQLModel, table=True):
    """The tokens one background request used (``core/usage``, migration v13).

    Titles, summaries, the profile, consolidation and check-ins each send requests of their own;
    Settings shows what each job used in the last 30 days. Chat replies keep theirs on their
    message row.
    """

    __tablename__ = "request_usage"

    id: int | None = Field(default=None, primary_key=True)
    created_at: datetime = Field(index=True)
    #: The job that sent it (a ``JobName`` value).
    job: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


class CheckinRow(SQLModel, table=True):
    """One check-in the companion made or tried (``core/checkins``, migration v12).

    The rule reads the newest rows (at most one check-in a day); a shown one names the
    conversation it started (``None`` once that is deleted: the day still counts). The global
    id lets sync carry the shown ones to the other devices, so the day counts there too.
    """

    __tablename__ = "checkin"

    id: int | None = Field(default=None, primary_key=True)
    gid: str = Field(default_factory=new_gid, unique=True)
    created_at: datetime = Field(index=True)
    #: ``"shown"`` (a conversation was started) or ``"failed"`` (nothing was shown).
    outcome: str
    #: What made it due: ``"daily"`` (the time of day) or ``"silence"`` (days without one).
    reason: str
    #: The persona that spoke: ``""`` the one in Settings, else a conversation's own name.
    persona: str = ""
    conversation_id: int | None = Field(
        default=None, foreign_key="conversation.id", ondelete="SET NULL"
    )
    #: The failure's code (never a server's text).
    error: str | None = None


class UserProfileRow(SQLModel, table=True):
    """The user profile and its refresh bookkeeping: one row, ``id`` 1 (DESIGN §3, §7).

    ``content`` is the Markdown profile injected into every turn; ``pinned_json`` the lines the
    user pinned (``[{"section": …, "text": …}]``), kept verbatim by every refresh. The refresh
    reads summaries and memories changed after ``material_until``; ``checked_at`` is the last
    refresh that ended without an error (with or without a change), and the error columns hold
    the backoff after a failed one.
    """

    __tablename__ = "user_profile"

    id: int = Field(default=1, primary_key=True)
    content: str = ""
    pinned_json: str = "[]"
    #: The revision that holds the current text (``None`` before the first one).
    revision_id: int | None = None
    updated_at: datetime | None = None
    material_until: datetime | None = None
    checked_at: datetime | None = None
    attempted_at: datetime | None = None
    retry_at: datetime | None = None
    error_count: int = 0
    #: The error code of the last failed refresh (never a server's text).
    last_error: str | None = None
    #: changed / unchanged / nothing_new / error
    last_outcome: str | None = None


class ProfileRevisionRow(SQLModel, table=True):
    """One version of the user profile: its text, pins, source and what it was built from."""

    __tablename__ = "profile_revision"

    id: int | None = Field(default=None, primary_key=True)
    #: The global id sync and the command line name it by; the integer id stays local.
    gid: str = Field(default_factory=new_gid, unique=True, sa_column_kwargs={"default": new_gid})
    created_at: datetime = Field(index=True)
    #: scheduled / requested / manual / cleared / restored / imported
    source: str
    content: str
    pinned_json: str = "[]"
    #: The ids of the session summaries and memories a refresh was built from (JSON lists).
    summary_ids_json: str = "[]"
    memory_ids_json: str = "[]"
    #: For ``restored``: the revision brought back.
    restored_from: int | None = None
    #: For ``synced`` and ``conflict``: the device whose version it is (v14).
    device: str | None = None


class SyncStateRow(SQLModel, table=True):
    """One value of sync's bookkeeping (``core/sync/state.py`` names the keys)."""

    __tablename__ = "sync_state"

    key: str = Field(primary_key=True)
    value: bytes


class MessageAttachmentRow(SQLModel, table=True):
    """A file attached to a user message (DESIGN §12): what it was and where its bytes are.

    The bytes are a content-addressed file in the data folder (``storage.attachments``),
    named by ``sha256``: an image as it is sent (oriented, downscaled, re-encoded), a document
    as the text that is sent (UTF-8). Rows go with their message (and so their conversation);
    a file no row names any more is removed.
    """

    __tablename__ = "message_attachment"

    id: int | None = Field(default=None, primary_key=True)
    message_id: int = Field(foreign_key="message.id", index=True, ondelete="CASCADE")
    #: Its place among the message's attachments.
    position: int = 0
    #: ``image`` or ``document``.
    kind: str
    #: The file's name as the user had it (shown, and given to the model).
    name: str
    #: An image: the stored image's type. A document: the original's (``application/pdf``).
    mime: str
    #: The original file's size in bytes.
    size: int
    sha256: str = Field(index=True)
    #: A document's token estimate; an image's is the fixed estimate per image part.
    tokens: int = 0
    width: int | None = None
    height: int | None = None
    created_at: datetime
