"""Check-in rows and the conversations they start, on the DB thread: functions of a session.

Each runs on the database's one worker thread (through :class:`~.access.CheckinAccess`). A
shown check-in is written in one transaction — the conversation, its first message (and its
entry in the message search index), the trace of the request behind it and the check-in's row — so a crash never leaves a greeting that does
not count, nor a counted one that is not there.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func as sa_func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from etos_desktop.core.checkins.records import (
    SETTINGS_PERSONA,
    STARTED_BY_COMPANION,
    Checkin,
    CheckinState,
    Persona,
    persona_key,
)
from etos_desktop.core.storage import message_fts, traces
from etos_desktop.core.storage.tables import (
    CheckinRow,
    ContextTraceRow,
    ConversationRow,
    MessageRow,
    MessageStatus,
)


def _aware(moment: object) -> datetime | None:
    if not isinstance(moment, datetime):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def state(session: Session) -> CheckinState:
    """The newest check-ins and the user's last message (what the rule reads)."""
    last_attempt = session.execute(sa_select(sa_func.max(col(CheckinRow.created_at)))).scalar()
    last_shown = session.execute(
        sa_select(sa_func.max(col(CheckinRow.created_at))).where(col(CheckinRow.outcome) == "shown")
    ).scalar()
    # Newest by id, which walks the primary key backwards and stops at the first one found
    # (a max over created_at would read every message).
    last_user = session.execute(
        sa_select(col(MessageRow.created_at))
        .where(col(MessageRow.role) == "user")
        .order_by(col(MessageRow.id).desc())
        .limit(1)
    ).scalar()
    return CheckinState(
        last_attempt_at=_aware(last_attempt),
        last_shown_at=_aware(last_shown),
        last_user_message_at=_aware(last_user),
    )


def personas(session: Session) -> list[Persona]:
    """Every persona, the most recently used first: Settings' and the conversations' own ones.

    Temporary conversations name none (nothing about them is kept for later). A name used by
    several conversations is one persona, with the personality of the newest of them. The
    persona of Settings comes last when no conversation used it yet.
    """
    rows = session.execute(
        sa_select(
            col(ConversationRow.persona_name),
            col(ConversationRow.persona_prompt),
            col(ConversationRow.updated_at),
        )
        .where(col(ConversationRow.temporary).is_(False))
        .order_by(col(ConversationRow.updated_at).desc(), col(ConversationRow.id).desc())
    ).all()
    found: dict[str, Persona] = {}
    counts: dict[str, int] = {}
    for name, prompt, updated_at in rows:
        key = persona_key(name)
        counts[key] = counts.get(key, 0) + 1
        if key in found:
            continue
        found[key] = (
            Persona(key, last_used_at=_aware(updated_at))
            if key == SETTINGS_PERSONA
            else Persona(key, name=key, prompt=prompt or None, last_used_at=_aware(updated_at))
        )
    found.setdefault(SETTINGS_PERSONA, Persona(SETTINGS_PERSONA))
    return [
        Persona(p.key, p.name, p.prompt, p.last_used_at, counts.get(p.key, 0))
        for p in found.values()
    ]


def write_shown(
    session: Session,
    *,
    now: datetime,
    reason: str,
    persona: Persona,
    text: str,
    model: str,
    trace_json: str,
) -> tuple[int, int]:
    """Start the conversation of a check-in and count the check-in, in one transaction.

    Args:
        session: A session on the DB thread.
        now: The time of the check-in.
        reason: ``"daily"`` or ``"silence"``.
        persona: Who speaks (a conversation's own persona is carried into the new one).
        text: The first message.
        model: The model that wrote it.
        trace_json: The request behind it (``ContextTrace.to_json``), for the inspector.

    Returns:
        The new conversation's id and its message's id.
    """
    conversation = ConversationRow(
        title="",
        created_at=now,
        updated_at=now,
        persona_name=persona.name,
        persona_prompt=persona.prompt,
        started_by=STARTED_BY_COMPANION,
    )
    session.add(conversation)
    session.flush()
    assert conversation.id is not None
    message = MessageRow(
        conversation_id=conversation.id,
        role="assistant",
        content=text,
        created_at=now,
        status=MessageStatus.COMPLETE,
        model=model,
    )
    session.add(message)
    session.flush()
    assert message.id is not None
    # Found by message search like any message (the repositories' writes do the same).
    message_fts.add(session, [(message.id, text)])
    session.add(ContextTraceRow(message_id=message.id, created_at=now, trace_json=trace_json))
    session.flush()
    traces.link(session, message.id, trace_json)
    session.add(
        CheckinRow(
            created_at=now,
            outcome="shown",
            reason=reason,
            persona=persona.key,
            conversation_id=conversation.id,
        )
    )
    session.commit()
    return conversation.id, message.id


def record_failure(
    session: Session, *, now: datetime, reason: str, persona: str, error: str
) -> None:
    """Count a check-in that showed nothing (the day is used: it is not tried again at once)."""
    session.add(
        CheckinRow(
            created_at=now, outcome="failed", reason=reason, persona=persona, error=error[:300]
        )
    )
    session.commit()


def recent(session: Session, limit: int = 50) -> list[Checkin]:
    """The newest check-ins, newest first."""
    rows = session.exec(
        select(CheckinRow)
        .order_by(col(CheckinRow.created_at).desc(), col(CheckinRow.id).desc())
        .limit(limit)
    ).all()
    return [
        Checkin(
            id=row.id or 0,
            created_at=_aware(row.created_at) or row.created_at,
            outcome=row.outcome,
            reason=row.reason,
            persona=row.persona,
            conversation_id=row.conversation_id,
            error=row.error,
        )
        for row in rows
    ]
