"""Summary rows and bookkeeping on the DB thread: plain functions of a session.

Each function runs on the database's one worker thread (called through ``Database.run`` by
:class:`~etos_desktop.core.summaries.access.SummaryAccess`); the writers commit themselves, so a
summary and the bookkeeping that says what it covered are written in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import and_, case, func, literal, or_
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, delete, select

from etos_desktop.core.storage import traces
from etos_desktop.core.storage.database import checkpoint
from etos_desktop.core.storage.lookups import conversation_titles, current_summary_ids
from etos_desktop.core.storage.tables import (
    ConversationRow,
    MessageRow,
    MessageStatus,
    SessionSummaryRow,
    SummaryStateRow,
    SummaryVectorRow,
)
from etos_desktop.core.summaries.records import (
    AttemptOutcome,
    DeletedSummary,
    Summary,
    SummaryActivity,
)


class Spoken(NamedTuple):
    """One message as a summary reads it."""

    id: int
    role: str
    content: str


#: The columns of a summary row a delete snapshot keeps (everything).
_ROW_FIELDS = tuple(SessionSummaryRow.model_fields)


def _activity_query(since: datetime | None, conversation_id: int | None) -> Any:
    covered = func.coalesce(col(SummaryStateRow.covered_until_message_id), literal(0))
    user_visible = and_(col(MessageRow.role) == "user", col(MessageRow.hidden_at).is_(None))
    turns = func.sum(case((user_visible, 1), else_=0))
    new_turns = func.sum(case((and_(user_visible, col(MessageRow.id) > covered), 1), else_=0))
    query = (
        sa_select(
            col(ConversationRow.id),
            col(ConversationRow.title),
            col(ConversationRow.temporary),
            col(ConversationRow.updated_at),
            col(SummaryStateRow.covered_until_message_id),
            col(SummaryStateRow.succeeded_at),
            col(SummaryStateRow.attempted_at),
            col(SummaryStateRow.retry_at),
            col(SummaryStateRow.error_count),
            col(SummaryStateRow.last_outcome),
            col(SummaryStateRow.last_error),
            turns,
            new_turns,
        )
        .select_from(ConversationRow)
        .join(
            SummaryStateRow,
            col(SummaryStateRow.conversation_id) == col(ConversationRow.id),
            isouter=True,
        )
        .join(MessageRow, col(MessageRow.conversation_id) == col(ConversationRow.id), isouter=True)
        .group_by(col(ConversationRow.id))
    )
    if since is not None:
        query = query.where(col(ConversationRow.updated_at) >= since)
    if conversation_id is not None:
        query = query.where(col(ConversationRow.id) == conversation_id)
    return query


def _to_activity(row: Any) -> SummaryActivity:
    return SummaryActivity(
        conversation_id=int(row[0]),
        title=str(row[1] or ""),
        temporary=bool(row[2]),
        updated_at=row[3],
        covered_until_message_id=row[4],
        succeeded_at=row[5],
        attempted_at=row[6],
        retry_at=row[7],
        error_count=int(row[8] or 0),
        last_outcome=row[9],
        last_error=row[10],
        user_turns=int(row[11] or 0),
        new_user_turns=int(row[12] or 0),
    )


def activity(session: Session, conversation_id: int) -> SummaryActivity | None:
    """One conversation's turns and bookkeeping, or ``None`` if it does not exist."""
    row = session.execute(_activity_query(None, conversation_id)).first()
    return None if row is None else _to_activity(row)


def recent_activity(session: Session, since: datetime) -> list[SummaryActivity]:
    """The activity of every conversation changed since ``since`` (one query)."""
    return [_to_activity(row) for row in session.execute(_activity_query(since, None)).all()]


def all_activity(session: Session) -> list[SummaryActivity]:
    """The activity of every conversation."""
    return [_to_activity(row) for row in session.execute(_activity_query(None, None)).all()]


def current_row(session: Session, conversation_id: int) -> SessionSummaryRow | None:
    """The conversation's current summary: its newest non-archived one."""
    query = (
        select(SessionSummaryRow)
        .where(col(SessionSummaryRow.conversation_id) == conversation_id)
        .where(col(SessionSummaryRow.archived_at).is_(None))
        .order_by(col(SessionSummaryRow.created_at).desc(), col(SessionSummaryRow.id).desc())
        .limit(1)
    )
    return session.exec(query).first()


def messages_after(session: Session, conversation_id: int, after_id: int | None) -> list[Spoken]:
    """The current history after message ``after_id`` (all of it for ``None``), oldest first.

    Only what was said: user messages and the text of replies that did not fail. Plain tuples,
    not ORM rows: lighter to build, and no cyclic garbage for the GUI thread's collector, which
    frees what a job drops while a reply may be streaming.
    """
    query = (
        sa_select(col(MessageRow.id), col(MessageRow.role), col(MessageRow.content))
        .where(col(MessageRow.conversation_id) == conversation_id)
        .where(col(MessageRow.hidden_at).is_(None))
        .where(col(MessageRow.is_current).is_(True))
        .where(
            or_(
                col(MessageRow.role) == "user",
                and_(
                    col(MessageRow.role) == "assistant",
                    col(MessageRow.status) != MessageStatus.ERROR,
                    col(MessageRow.content) != "",
                ),
            )
        )
        .order_by(col(MessageRow.id))
    )
    if after_id is not None:
        query = query.where(col(MessageRow.id) > after_id)
    return [
        Spoken(int(i), str(role), str(content))
        for i, role, content in session.execute(query).all()
        if role == "user" or str(content).strip()
    ]


def _state(session: Session, conversation_id: int) -> SummaryStateRow:
    state = session.get(SummaryStateRow, conversation_id)
    return state or SummaryStateRow(conversation_id=conversation_id)


def write_summary(
    session: Session,
    *,
    conversation_id: int,
    content: str,
    language: str,
    covers_until: int,
    user_turns: int,
    source: str,
    now: datetime,
) -> SessionSummaryRow:
    """Store a new summary and mark what it covered, in one transaction.

    Returns:
        The new row.
    """
    conversation = session.get(ConversationRow, conversation_id)
    row = SessionSummaryRow(
        conversation_id=conversation_id,
        conversation_title=conversation.title if conversation is not None else "",
        content=content,
        language=language,
        created_at=now,
        updated_at=now,
        covers_until_message_id=covers_until,
        user_turns_covered=user_turns,
        source=source,
    )
    session.add(row)
    state = _state(session, conversation_id)
    state.covered_until_message_id = covers_until
    state.succeeded_at = now
    state.attempted_at = now
    state.retry_at = None
    state.error_count = 0
    state.last_outcome = AttemptOutcome.SUMMARY
    state.last_error = None
    session.add(state)
    session.commit()
    session.refresh(row)
    return row


def record_skip(session: Session, conversation_id: int, covers_until: int, now: datetime) -> None:
    """The model said SKIP: nothing is stored, but what it covered and when are."""
    state = _state(session, conversation_id)
    state.covered_until_message_id = covers_until
    state.succeeded_at = now
    state.attempted_at = now
    state.retry_at = None
    state.error_count = 0
    state.last_outcome = AttemptOutcome.SKIP
    state.last_error = None
    session.add(state)
    session.commit()


def record_error(
    session: Session, conversation_id: int, code: str, now: datetime, retry_at: datetime
) -> int:
    """An attempt failed: remember it and when to try again.

    Returns:
        Errors in a row now, this one included.
    """
    state = _state(session, conversation_id)
    state.attempted_at = now
    state.retry_at = retry_at
    state.error_count = (state.error_count or 0) + 1
    state.last_outcome = AttemptOutcome.ERROR
    state.last_error = code[:200]
    session.add(state)
    session.commit()
    return state.error_count


def error_count(session: Session, conversation_id: int) -> int:
    """Errors in a row of a conversation's summary attempts."""
    state = session.get(SummaryStateRow, conversation_id)
    return 0 if state is None else state.error_count


# -- reading for people and prompts ---------------------------------------------------------


def _summaries(session: Session, rows: Sequence[SessionSummaryRow]) -> list[Summary]:
    current = current_summary_ids(session)
    titles = conversation_titles(session, (r.conversation_id for r in rows))
    return [
        Summary.from_row(
            r,
            title=titles.get(r.conversation_id) if r.conversation_id is not None else None,
            current=r.id in current,
        )
        for r in rows
    ]


def list_all(session: Session) -> list[Summary]:
    """Every summary (archived and earlier ones too), newest first."""
    rows = session.exec(
        select(SessionSummaryRow).order_by(
            col(SessionSummaryRow.created_at).desc(), col(SessionSummaryRow.id).desc()
        )
    ).all()
    return _summaries(session, rows)


def of_conversation(session: Session, conversation_id: int) -> list[Summary]:
    """A conversation's summaries (its history), newest first."""
    rows = session.exec(
        select(SessionSummaryRow)
        .where(col(SessionSummaryRow.conversation_id) == conversation_id)
        .order_by(col(SessionSummaryRow.created_at).desc(), col(SessionSummaryRow.id).desc())
    ).all()
    return _summaries(session, rows)


def get(session: Session, summary_id: int) -> Summary | None:
    """One summary, or ``None``."""
    row = session.get(SessionSummaryRow, summary_id)
    return None if row is None else _summaries(session, [row])[0]


def for_injection(
    session: Session, exclude_conversation_id: int | None, count: int
) -> list[Summary]:
    """The current summaries of the ``count`` most recently summarised other conversations.

    Archived summaries never; temporary conversations have none.
    """
    if count <= 0:
        return []
    ids = current_summary_ids(session)
    if not ids:
        return []
    query = (
        select(SessionSummaryRow)
        .where(col(SessionSummaryRow.id).in_(ids))
        .order_by(col(SessionSummaryRow.created_at).desc(), col(SessionSummaryRow.id).desc())
    )
    if exclude_conversation_id is not None:
        query = query.where(
            or_(
                col(SessionSummaryRow.conversation_id).is_(None),
                col(SessionSummaryRow.conversation_id) != exclude_conversation_id,
            )
        )
    rows = session.exec(query.limit(count)).all()
    return _summaries(session, rows)


def recall_candidates(session: Session, exclude_conversation_id: int | None) -> list[Summary]:
    """Every current summary of another conversation (what a recall question searches)."""
    ids = current_summary_ids(session)
    rows = session.exec(select(SessionSummaryRow).where(col(SessionSummaryRow.id).in_(ids))).all()
    return [
        s
        for s in _summaries(session, rows)
        if exclude_conversation_id is None or s.conversation_id != exclude_conversation_id
    ]


# -- changes by the user ---------------------------------------------------------------------


def edit(session: Session, summary_id: int, content: str, now: datetime) -> Summary | None:
    """Give a summary new text (marked as edited by the user; its vectors are dropped)."""
    row = session.get(SessionSummaryRow, summary_id)
    if row is None:
        return None
    row.content = content
    row.edited_by_user = True
    row.updated_at = now
    session.add(row)
    session.exec(delete(SummaryVectorRow).where(col(SummaryVectorRow.summary_id) == summary_id))
    session.commit()
    session.refresh(row)
    return _summaries(session, [row])[0]


def set_archived(
    session: Session, summary_ids: Sequence[int], archived: bool, now: datetime
) -> int:
    """Archive (or restore) summaries; returns how many changed."""
    changed = 0
    for row in session.exec(
        select(SessionSummaryRow).where(col(SessionSummaryRow.id).in_(list(summary_ids)))
    ).all():
        if (row.archived_at is not None) == archived:
            continue
        row.archived_at = now if archived else None
        row.updated_at = now
        session.add(row)
        changed += 1
    session.commit()
    return changed


def _cover_as_current(session: Session, conversation_ids: Iterable[int]) -> None:
    """Make what each conversation's current summary covers the coverage the rule reads.

    After its current summary is deleted, a conversation is covered only as far as the summary
    that is current now (none: not at all), so it is due again instead of "up to date" with
    nothing to show for it (issue 19). A SKIP recorded after the deleted summary goes with it.
    When the last attempt succeeded is left alone: it did, and the gap counts from it.
    """
    for conversation_id in conversation_ids:
        state = session.get(SummaryStateRow, conversation_id)
        if state is None:
            continue
        row = current_row(session, conversation_id)
        state.covered_until_message_id = row.covers_until_message_id if row is not None else None
        session.add(state)


def _cover_restored(session: Session, rows: Iterable[SessionSummaryRow]) -> None:
    """A restored summary that is its conversation's current one covers what it covered again."""
    for row in rows:
        if row.conversation_id is None or row.covers_until_message_id is None:
            continue
        current = current_row(session, row.conversation_id)
        if current is None or current.id != row.id:
            continue
        state = _state(session, row.conversation_id)
        covered = state.covered_until_message_id
        if covered is None or covered < row.covers_until_message_id:
            state.covered_until_message_id = row.covers_until_message_id
            session.add(state)


def delete_many(
    session: Session, summary_ids: Sequence[int], *, commit: bool = True
) -> list[DeletedSummary]:
    """Delete summaries for real, in one transaction; the snapshots allow an in-memory undo.

    The text leaves the context traces that sent it too, and the WAL is checkpointed, so it
    lingers nowhere in the files (secure_delete zeroes the freed cells). A conversation whose
    current summary is deleted is covered only as far as the summary current after it.
    With ``commit=False`` (a sync pass's transaction) the caller commits and checkpoints.
    """
    rows = session.exec(
        select(SessionSummaryRow).where(col(SessionSummaryRow.id).in_(list(summary_ids)))
    ).all()
    ids = [r.id for r in rows if r.id is not None]
    current = current_summary_ids(session)
    uncovered = {
        r.conversation_id for r in rows if r.id in current and r.conversation_id is not None
    }
    erased = traces.erase_summaries_from_traces(session, {r.id: r.content for r in rows if r.id})
    snapshots = [
        DeletedSummary(
            {name: getattr(r, name) for name in _ROW_FIELDS}, tuple(erased.get(r.id or 0, ()))
        )
        for r in rows
    ]
    if ids:
        session.exec(delete(SummaryVectorRow).where(col(SummaryVectorRow.summary_id).in_(ids)))
        session.exec(delete(SessionSummaryRow).where(col(SessionSummaryRow.id).in_(ids)))
        _cover_as_current(session, uncovered)
    if not commit:
        session.flush()
        return snapshots
    session.commit()
    if ids:
        checkpoint(session)
    return snapshots


def undo_delete_many(session: Session, deleted: Sequence[DeletedSummary]) -> list[int]:
    """Put deleted summaries back from their snapshots (a vanished conversation: unlinked)."""
    restored = []
    rows = []
    for snapshot in deleted:
        values = dict(snapshot.row)
        conversation_id = values.get("conversation_id")
        if (
            isinstance(conversation_id, int)
            and session.get(ConversationRow, conversation_id) is None
        ):
            values["conversation_id"] = None
        row = SessionSummaryRow(**values)
        session.add(row)
        rows.append(row)
        traces.restore_in_traces(session, snapshot.trace_lines, traces.SUMMARY_BLOCK_KIND)
        restored.append(snapshot.summary_id)
    session.flush()
    _cover_restored(session, rows)
    session.commit()
    return restored


def conversations(session: Session) -> list[tuple[int, str, datetime]]:
    """``(id, title, updated_at)`` of every conversation that may be summarised, newest first."""
    rows = session.exec(
        select(ConversationRow.id, ConversationRow.title, ConversationRow.updated_at)
        .where(col(ConversationRow.temporary).is_(False))
        .order_by(col(ConversationRow.updated_at).desc())
    ).all()
    return [(int(i), str(t or ""), u) for i, t, u in rows if i is not None]


# -- vectors (derived data) ------------------------------------------------------------------


def vectors(session: Session, key: str, summary_ids: Sequence[int]) -> dict[int, bytes]:
    """The stored vectors of ``key`` for these summaries."""
    if not summary_ids:
        return {}
    rows = session.exec(
        select(SummaryVectorRow.summary_id, SummaryVectorRow.vector)
        .where(col(SummaryVectorRow.embedder_key) == key)
        .where(col(SummaryVectorRow.summary_id).in_(list(summary_ids)))
    ).all()
    return {int(i): bytes(v) for i, v in rows}


def store_vectors(session: Session, key: str, dim: int, items: Sequence[tuple[int, bytes]]) -> None:
    """Store vectors of ``key`` (summaries deleted meanwhile are skipped)."""
    existing = {
        int(i)
        for i in session.exec(
            select(SessionSummaryRow.id).where(col(SessionSummaryRow.id).in_([i for i, _ in items]))
        ).all()
        if i is not None
    }
    for summary_id, blob in items:
        if summary_id in existing:
            session.merge(
                SummaryVectorRow(embedder_key=key, summary_id=summary_id, dim=dim, vector=blob)
            )
    session.commit()
