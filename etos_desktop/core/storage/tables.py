"""SQLModel tables. Their schema is created and changed only by ``migrations.py``.

Datetimes are aware UTC (SQLModel stores UTC and returns aware values). JSON-valued columns
hold text so the SQL stays portable.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlmodel import Field, SQLModel


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


class MessageRow(SQLModel, table=True):
    """One message of a conversation.

    Regenerated replies share ``reply_to_id`` (the user message they answer); exactly one of them
    has ``is_current`` set. Messages after an edited user message get ``hidden_at``; the current
    history is the non-hidden messages with current replies.
    """

    __tablename__ = "message"

    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="conversation.id", index=True, ondelete="CASCADE")
    role: str
    content: str = ""
    created_at: datetime
    status: str = MessageStatus.COMPLETE
    model: str | None = None
    usage_json: str | None = None
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
