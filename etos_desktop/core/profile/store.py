"""Profile rows and bookkeeping on the DB thread: plain functions of a session.

Each function runs on the database's one worker thread (called through ``Database.run`` by
:class:`~etos_desktop.core.profile.access.ProfileAccess`); the writers commit themselves, so a
new text and its revision are written in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import and_
from sqlalchemy import func as sa_func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from etos_desktop.core.profile.errors import ProfileStale, RevisionNotFound
from etos_desktop.core.profile.records import (
    Material,
    MaterialItem,
    PinnedLine,
    Profile,
    ProfileRevision,
    RefreshOutcome,
    id_list,
    pins_to_json,
)
from etos_desktop.core.storage.lookups import (
    active_memory,
    conversation_titles,
    current_summary_ids,
)
from etos_desktop.core.storage.tables import (
    ConversationRow,
    MemoryRevisionRow,
    MemoryRow,
    MessageRow,
    ProfileRevisionRow,
    RevisionAction,
    SessionSummaryRow,
    UserProfileRow,
)

#: The id of the one profile row.
PROFILE_ID = 1
#: Sentinel for "do not check what the profile was based on".
ANY_BASE = -1
#: Who supersedes a memory when the user states a change: the user (``/remember``, Settings,
#: "this replaces…") or the model acting on what the user said (``save_memory``). Not
#: ``consolidation`` or ``import``: the user said nothing new then.
STATED_ACTORS = ("user", "assistant")


def _row(session: Session) -> UserProfileRow:
    return session.get(UserProfileRow, PROFILE_ID) or UserProfileRow(id=PROFILE_ID)


def get(session: Session) -> Profile:
    """The current profile (an empty one before the first)."""
    return Profile.from_row(session.get(UserProfileRow, PROFILE_ID))


def revisions(session: Session) -> list[ProfileRevision]:
    """Every revision, newest first."""
    rows = session.exec(
        select(ProfileRevisionRow).order_by(
            col(ProfileRevisionRow.created_at).desc(), col(ProfileRevisionRow.id).desc()
        )
    ).all()
    return [ProfileRevision.from_row(r) for r in rows]


def revision(session: Session, revision_id: int) -> ProfileRevision:
    """One revision.

    Raises:
        RevisionNotFound: There is none with that id.
    """
    row = session.get(ProfileRevisionRow, revision_id)
    if row is None:
        raise RevisionNotFound(f"no profile revision {revision_id}", revision_id=revision_id)
    return ProfileRevision.from_row(row)


def write_version(
    session: Session,
    *,
    content: str,
    pinned: Sequence[PinnedLine],
    source: str,
    now: datetime,
    base_revision_id: int | None = ANY_BASE,
    summary_ids: Sequence[int] = (),
    memory_ids: Sequence[int] = (),
    restored_from: int | None = None,
    commit: bool = True,
) -> Profile:
    """Make ``content`` the profile and keep it as a revision, in one transaction.

    Args:
        session: A session on the DB thread.
        content: The new text.
        pinned: The new pinned lines.
        source: A ``ProfileSource`` value.
        now: The current time.
        base_revision_id: The revision the text was edited from; the write is refused when the
            profile has moved on since (``ANY_BASE``: no check).
        summary_ids: The summaries a refresh built it from.
        memory_ids: The memories a refresh built it from.
        restored_from: For a restore, the revision brought back.
        commit: Commit (``False``: the caller's transaction, an import).

    Returns:
        The profile as it is now.

    Raises:
        ProfileStale: ``base_revision_id`` is not the current revision.
    """
    row = _row(session)
    if base_revision_id != ANY_BASE and row.revision_id != base_revision_id:
        raise ProfileStale(
            f"profile is at revision {row.revision_id}, not {base_revision_id}",
            revision_id=row.revision_id,
        )
    pinned_json = pins_to_json(pinned)
    revision_row = ProfileRevisionRow(
        created_at=now,
        source=source,
        content=content,
        pinned_json=pinned_json,
        summary_ids_json=id_list(summary_ids),
        memory_ids_json=id_list(memory_ids),
        restored_from=restored_from,
    )
    session.add(revision_row)
    session.flush()
    row.content = content
    row.pinned_json = pinned_json
    row.revision_id = revision_row.id
    row.updated_at = now
    session.add(row)
    if commit:
        session.commit()
        session.refresh(row)
    return Profile.from_row(row)


def write_refresh(
    session: Session,
    *,
    content: str,
    pinned: Sequence[PinnedLine],
    source: str,
    now: datetime,
    base_revision_id: int | None,
    material_until: datetime,
    summary_ids: Sequence[int],
    memory_ids: Sequence[int],
) -> Profile:
    """Store a refreshed profile and its bookkeeping, in one transaction.

    Raises:
        ProfileStale: The user changed the profile while the refresh ran (nothing is written;
            the material stays new, so the next run uses the user's text as its base).
    """
    write_version(
        session,
        content=content,
        pinned=pinned,
        source=source,
        now=now,
        base_revision_id=base_revision_id,
        summary_ids=summary_ids,
        memory_ids=memory_ids,
        commit=False,
    )
    row = _row(session)
    _succeeded(row, now, material_until, RefreshOutcome.CHANGED)
    session.add(row)
    session.commit()
    session.refresh(row)
    return Profile.from_row(row)


def _succeeded(
    row: UserProfileRow, now: datetime, material_until: datetime | None, outcome: str
) -> None:
    if material_until is not None:
        row.material_until = material_until
    row.checked_at = now
    row.attempted_at = now
    row.retry_at = None
    row.error_count = 0
    row.last_error = None
    row.last_outcome = outcome


def record_outcome(
    session: Session, outcome: str, now: datetime, material_until: datetime | None
) -> Profile:
    """A refresh ended without a new text (nothing new, or the reply was the same profile).

    Args:
        session: A session on the DB thread.
        outcome: ``RefreshOutcome.UNCHANGED`` or ``NOTHING_NEW``.
        now: The current time.
        material_until: What the refresh read up to (``None``: leave it).
    """
    row = _row(session)
    _succeeded(row, now, material_until, outcome)
    session.add(row)
    session.commit()
    session.refresh(row)
    return Profile.from_row(row)


def record_error(session: Session, code: str, now: datetime, retry_at: datetime) -> int:
    """A refresh failed: remember it and when to try again.

    Returns:
        Failed refreshes in a row, this one included.
    """
    row = _row(session)
    row.attempted_at = now
    row.retry_at = retry_at
    row.error_count = (row.error_count or 0) + 1
    row.last_error = code[:200]
    row.last_outcome = RefreshOutcome.ERROR
    session.add(row)
    session.commit()
    return row.error_count


# -- what a refresh reads ----------------------------------------------------------------------


def material(session: Session, since: datetime | None, now: datetime) -> Material:
    """The current summaries and active memories written or changed after ``since``.

    Archived summaries, earlier versions of a conversation's summary, and archived, superseded
    or expired memories are not material. Newest first.
    """
    items: list[MaterialItem] = []
    current = current_summary_ids(session)
    if current:
        query = select(SessionSummaryRow).where(col(SessionSummaryRow.id).in_(current))
        if since is not None:
            query = query.where(col(SessionSummaryRow.updated_at) > since)
        rows = session.exec(query).all()
        titles = conversation_titles(session, (r.conversation_id for r in rows))
        for row in rows:
            title = (
                titles.get(row.conversation_id, row.conversation_title)
                if row.conversation_id is not None
                else row.conversation_title
            )
            items.append(
                MaterialItem("summary", row.id or 0, row.updated_at, row.content, title or "")
            )
    memories = select(MemoryRow).where(active_memory(now))
    if since is not None:
        memories = memories.where(col(MemoryRow.updated_at) > since)
    for memory in session.exec(memories).all():
        items.append(
            MaterialItem("memory", memory.id or 0, memory.updated_at, memory.content, memory.kind)
        )
    items.sort(key=lambda i: (i.when, i.kind == "summary", i.id), reverse=True)
    return Material(tuple(items))


def last_stated_change(session: Session) -> datetime | None:
    """When a memory was last superseded because of what the user said, or ``None``.

    Read from the memories' histories (a ``supersede`` revision by a ``STATED_ACTORS`` actor),
    so the profile's early refresh is derived from data like its daily run.
    """
    query = sa_select(sa_func.max(col(MemoryRevisionRow.created_at))).where(
        and_(
            col(MemoryRevisionRow.action) == RevisionAction.SUPERSEDE.value,
            col(MemoryRevisionRow.actor).in_(STATED_ACTORS),
        )
    )
    when = session.execute(query).scalar_one_or_none()
    return when if isinstance(when, datetime) else None


def recent_user_texts(session: Session, limit: int = 40) -> list[str]:
    """The user's most recent messages in conversations that are not temporary, newest first."""
    query = (
        sa_select(col(MessageRow.content))
        .join(ConversationRow, col(ConversationRow.id) == col(MessageRow.conversation_id))
        .where(
            and_(
                col(MessageRow.role) == "user",
                col(MessageRow.hidden_at).is_(None),
                col(ConversationRow.temporary).is_(False),
            )
        )
        .order_by(col(MessageRow.id).desc())
        .limit(limit)
    )
    return [str(text) for (text,) in session.execute(query).all()]
