"""Lookups over the shared tables that more than one layer makes, on the DB thread.

What "an active memory" means in SQL is written here once (:func:`active_memory`): memory
search, its full-text matching (as raw SQL, compiled from the same clause) and the profile's
refresh all read it, and :func:`is_active_at` is the same rule over plain values.

Which summary is each conversation's current one, and what a conversation is called, are asked
by the summaries store (every summary it hands out says whether it is current and carries its
conversation's title) and by the profile (what a refresh reads). They live here, beside the
tables, so that neither layer imports the other for them. Plain functions of a session, run
inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import BindParameter, or_
from sqlmodel import Session, col, select

from etos_desktop.core.storage.tables import ConversationRow, MemoryRow, SessionSummaryRow


def active_memory(now: datetime | BindParameter[Any]) -> Any:
    """The SQL condition for a memory that can be retrieved at ``now``: not archived, not expired.

    ``now`` may be a bound parameter, for raw SQL built from this clause (``memory.fts``).
    """
    return (col(MemoryRow.archived_at).is_(None)) & or_(
        col(MemoryRow.valid_until).is_(None), col(MemoryRow.valid_until) > now
    )


def is_active_at(archived_at: datetime | None, valid_until: datetime | None, now: datetime) -> bool:
    """:func:`active_memory` over plain values (a loaded memory, an import entry)."""
    return archived_at is None and (valid_until is None or valid_until > now)


def current_summary_ids(session: Session) -> set[int]:
    """The ids of every conversation's current summary (imported orphans are each their own)."""
    rows = session.exec(
        select(
            SessionSummaryRow.id, SessionSummaryRow.conversation_id, SessionSummaryRow.created_at
        )
        .where(col(SessionSummaryRow.archived_at).is_(None))
        .order_by(col(SessionSummaryRow.created_at), col(SessionSummaryRow.id))
    ).all()
    newest: dict[int, int] = {}
    ids: set[int] = set()
    for summary_id, conversation_id, _created in rows:
        if summary_id is None:
            continue
        if conversation_id is None:
            ids.add(int(summary_id))
        else:
            newest[int(conversation_id)] = int(summary_id)
    return ids | set(newest.values())


def conversation_titles(session: Session, conversation_ids: Iterable[int | None]) -> dict[int, str]:
    """The titles of these conversations by id (``None`` ids are skipped, missing ones absent)."""
    wanted = {i for i in conversation_ids if i is not None}
    if not wanted:
        return {}
    rows = session.exec(
        select(ConversationRow.id, ConversationRow.title).where(col(ConversationRow.id).in_(wanted))
    ).all()
    return {int(i): str(t or "") for i, t in rows if i is not None}
