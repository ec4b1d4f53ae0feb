"""The summary list of Settings in SQL: what its filters let through, in its order, a window at a time.

Search is a substring filter (case-insensitive, as ``str.casefold`` compares) over the text and
the conversation title of every summary, archived ones and earlier versions included. Which
summary is its conversation's current one is decided in the query (the newest non-archived one,
as ``storage.lookups.current_summary_ids`` decides it), so a window never reads the others.
The rule is written twice, side by side: in SQL (:func:`conditions`) and over a loaded summary
(:func:`accepts`, for a list that holds every record and filters it in place).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import (
    String,
    and_,
    case,
    collate,
    exists,
    func,
    literal,
    not_,
    or_,
    type_coerce,
)
from sqlalchemy import select as sa_select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from etos_desktop.core.storage.tables import ConversationRow, SessionSummaryRow
from etos_desktop.core.storage.windows import (
    CASEFOLD,
    PAGE_SIZE,
    Cursor,
    ListCounts,
    ListOrder,
    ListWindow,
    casefolded,
    read_window,
    register_function,
)
from etos_desktop.core.summaries.records import Summary

#: The columns a summary list sorts by (the Summaries page's column keys).
ORDER_KEYS: Final = frozenset({"conversation", "time", "content", "status"})
#: How the status column sorts.
STATUS_RANKS: Final = ("current", "earlier", "archived")


@dataclass(frozen=True)
class SummaryFilters:
    """What a summary list shows.

    Attributes:
        text: Substring to look for in the text and the conversation's title (case-insensitive).
        conversation: Only this conversation's summaries (``None``: every conversation).
        status: ``"all"``, ``"current"`` or ``"archived"``.
    """

    text: str = ""
    conversation: int | None = None
    status: str = "all"


def accepts(summary: Summary, filters: SummaryFilters) -> bool:
    """Whether ``filters`` let a loaded summary through: :func:`conditions` over plain values."""
    if filters.conversation is not None and summary.conversation_id != filters.conversation:
        return False
    if filters.status == "current" and not summary.current:
        return False
    if filters.status == "archived" and not summary.archived:
        return False
    text = filters.text.strip().casefold()
    return not text or text in f"{summary.conversation_title} {summary.content}".casefold()


_newer = aliased(SessionSummaryRow)


def _is_current() -> Any:
    """A summary is its conversation's current one: not archived, and no newer one is live."""
    newer = exists().where(
        col(_newer.conversation_id) == col(SessionSummaryRow.conversation_id),
        col(_newer.archived_at).is_(None),
        or_(
            col(_newer.created_at) > col(SessionSummaryRow.created_at),
            and_(
                col(_newer.created_at) == col(SessionSummaryRow.created_at),
                col(_newer.id) > col(SessionSummaryRow.id),
            ),
        ),
    )
    return and_(
        col(SessionSummaryRow.archived_at).is_(None),
        or_(col(SessionSummaryRow.conversation_id).is_(None), not_(newer)),
    )


def _title() -> Any:
    """The title a summary shows: its conversation's now, else the one it was written with."""
    return func.coalesce(
        func.nullif(col(ConversationRow.title), ""), col(SessionSummaryRow.conversation_title)
    )


def conditions(filters: SummaryFilters) -> list[Any]:
    """The SQL conditions of ``filters`` (over summaries outer-joined with their conversation).

    A text filter calls ``etos_casefold``: :func:`prepare` the session first.
    """
    out: list[Any] = []
    if filters.conversation is not None:
        out.append(col(SessionSummaryRow.conversation_id) == filters.conversation)
    if filters.status == "current":
        out.append(_is_current())
    elif filters.status == "archived":
        out.append(col(SessionSummaryRow.archived_at).is_not(None))
    text = filters.text.strip().casefold()
    if text:
        searched = getattr(func, CASEFOLD)(_title() + literal(" ") + col(SessionSummaryRow.content))
        out.append(func.instr(searched, text) > 0)
    return out


def prepare(session: Session) -> None:
    """Register the SQL function the text filter calls on the session's connection."""
    register_function(session, CASEFOLD, 1, casefolded)


def sort_key(order: ListOrder) -> Any:
    """The SQL expression a column sorts by (never NULL; ties are broken by id).

    Raises:
        ValueError: ``order.key`` is not one of :data:`ORDER_KEYS`.
    """
    if order.key == "conversation":
        return collate(_title(), "NOCASE")
    if order.key == "time":
        # The stored text: it sorts as the times do, and a window's cursor keeps it as it is.
        return type_coerce(col(SessionSummaryRow.created_at), String())
    if order.key == "content":
        return collate(col(SessionSummaryRow.content), "NOCASE")
    if order.key == "status":
        return case(
            (col(SessionSummaryRow.archived_at).is_not(None), STATUS_RANKS.index("archived")),
            (_is_current(), STATUS_RANKS.index("current")),
            else_=STATUS_RANKS.index("earlier"),
        )
    raise ValueError(f"a summary list does not sort by {order.key!r}")


def _joined(*columns: Any) -> Any:
    return (
        sa_select(*columns)
        .select_from(SessionSummaryRow)
        .outerjoin(
            ConversationRow, col(ConversationRow.id) == col(SessionSummaryRow.conversation_id)
        )
    )


def window(
    session: Session,
    filters: SummaryFilters,
    order: ListOrder,
    *,
    after: Cursor | None = None,
    limit: int = PAGE_SIZE,
    with_counts: bool = False,
) -> ListWindow[Summary]:
    """One window of the summaries ``filters`` let through, in ``order``.

    Args:
        session: A session on the DB thread.
        filters: What the list shows.
        order: How it is sorted.
        after: Start after this row (the cursor of the window before); ``None``: the first.
        limit: At most this many summaries.
        with_counts: Read the list's counts too, in the same transaction.

    Returns:
        The summaries (each saying whether it is current, with its conversation's title), the
        cursor of the next window, and the counts when asked for.
    """
    prepare(session)
    key = sort_key(order)
    statement = _joined(
        col(SessionSummaryRow.id),
        SessionSummaryRow,
        col(ConversationRow.title),
        _is_current(),
        key.label("sort_key"),
    ).where(*conditions(filters))
    rows, cursor = read_window(
        session,
        statement,
        key=key,
        id_column=col(SessionSummaryRow.id),
        order=order,
        after_cursor=after,
        limit=limit,
    )
    summaries = [
        Summary.from_row(row[1], title=row[2] or None, current=bool(row[3])) for row in rows
    ]
    return ListWindow(summaries, cursor, counts(session, filters) if with_counts else None)


def counts(session: Session, filters: SummaryFilters) -> ListCounts:
    """Every summary, those ``filters`` let through, the current ones and the unarchived ones."""
    prepare(session)
    current = func.coalesce(func.sum(case((_is_current(), 1), else_=0)), 0)
    total, lead = session.execute(_joined(func.count(), current)).one()
    where = conditions(filters)
    live = func.coalesce(
        func.sum(case((col(SessionSummaryRow.archived_at).is_(None), 1), else_=0)), 0
    )
    # The filters in WHERE: each row's text is looked at once.
    matching, archivable = session.execute(_joined(func.count(), live).where(*where)).one()
    return ListCounts(int(total), int(matching), int(lead), int(archivable))


def matching_ids(
    session: Session, filters: SummaryFilters, *, archivable: bool | None = None
) -> list[int]:
    """The ids of the summaries ``filters`` let through, in id order.

    Args:
        session: A session on the DB thread.
        filters: What the list shows.
        archivable: Only those not archived (``True``), only the archived ones (``False``),
            or all of them (``None``).
    """
    prepare(session)
    where = conditions(filters)
    if archivable is True:
        where.append(col(SessionSummaryRow.archived_at).is_(None))
    elif archivable is False:
        where.append(col(SessionSummaryRow.archived_at).is_not(None))
    statement = _joined(col(SessionSummaryRow.id)).where(*where).order_by(col(SessionSummaryRow.id))
    return [int(summary_id) for summary_id in session.execute(statement).scalars()]
