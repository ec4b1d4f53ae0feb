"""The memory list of Settings in SQL: what its filters let through, in its order, a window at a time.

Search here is a substring filter (case-insensitive, as ``str.casefold`` compares) over the text,
tags, trigger context and ``#id`` of every memory, archived ones included; the engine's relevance
search is deliberately not used because it never returns archived memories and may return
nothing by design. The filters and sorts run on the DB thread (``storage.windows``); the UI holds
only the windows it was given. The rule is written here twice, side by side: in SQL
(:func:`conditions`) and over a loaded memory (:func:`accepts`, for a list that holds every
record and filters it in place); the text both search is :func:`searched_text`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import String, case, collate, func, not_, type_coerce
from sqlalchemy import select as sa_select
from sqlmodel import Session, col

from etos_desktop.core.memory.records import Memory
from etos_desktop.core.storage.lookups import active_memory
from etos_desktop.core.storage.tables import MemoryRow
from etos_desktop.core.storage.windows import (
    PAGE_SIZE,
    Cursor,
    ListCounts,
    ListOrder,
    ListWindow,
    contains_folded,
    ranked,
    read_window,
    register_function,
)

#: The columns a memory list sorts by (the Memory page's column keys).
ORDER_KEYS: Final = frozenset(
    {"id", "content", "kind", "source", "confidence", "created", "last_used", "status"}
)
#: How the status column sorts: active, expired, archived, superseded.
STATUS_RANKS: Final = ("active", "expired", "archived", "superseded")

_HAYSTACK: Final = "etos_memory_text"


@dataclass(frozen=True)
class MemoryFilters:
    """What a memory list shows.

    Attributes:
        text: Substring to look for in text, tags and trigger context (case-insensitive);
            ``"#12"`` shows memory 12 only.
        kind: Only this kind (``None``: every kind).
        status: ``"all"``, ``"active"`` or ``"inactive"`` (archived, superseded, expired).
        source: Only this source (``None``: every source).
    """

    text: str = ""
    kind: str | None = None
    status: str = "all"
    source: str | None = None


def searched_text(content: str, tags: Sequence[str], trigger_context: str | None) -> str:
    """What the text filter searches in a memory, case-folded: its text, tags and trigger."""
    return " ".join([content, " ".join(tags), trigger_context or ""]).casefold()


def _searched(content: object, tags_json: object, trigger_context: object) -> str:
    # Called by SQLite for each row the text filter looks at.
    tags = json.loads(tags_json) if isinstance(tags_json, str) and tags_json != "[]" else []
    return searched_text(
        str(content or ""),
        [str(tag) for tag in tags],
        trigger_context if isinstance(trigger_context, str) else None,
    )


def accepts(memory: Memory, filters: MemoryFilters, now: datetime) -> bool:
    """Whether ``filters`` let a loaded memory through: :func:`conditions` over plain values."""
    if filters.kind is not None and memory.kind != filters.kind:
        return False
    if filters.source is not None and memory.source != filters.source:
        return False
    if filters.status != "all" and memory.is_active(now) != (filters.status == "active"):
        return False
    text = filters.text.strip().casefold()
    if not text:
        return True
    memory_id = id_query(text)
    if memory_id is not None:
        return memory.id == memory_id
    return text in searched_text(memory.content, memory.tags, memory.trigger_context)


def id_query(text: str) -> int | None:
    """The memory a filter text names as ``#12``, if it names one."""
    text = text.strip()
    if text.startswith("#") and text[1:].isdecimal():
        return int(text[1:])
    return None


def conditions(filters: MemoryFilters, now: datetime) -> list[Any]:
    """The SQL conditions of ``filters`` (active means active at ``now``).

    A text filter calls the ``etos_memory_text`` function: :func:`prepare` the session first.
    """
    out: list[Any] = []
    if filters.kind is not None:
        out.append(col(MemoryRow.kind) == filters.kind)
    if filters.source is not None:
        out.append(col(MemoryRow.source) == filters.source)
    if filters.status == "active":
        out.append(active_memory(now))
    elif filters.status == "inactive":
        out.append(not_(active_memory(now)))
    text = filters.text.strip().casefold()
    if text:
        memory_id = id_query(text)
        if memory_id is not None:
            out.append(col(MemoryRow.id) == memory_id)
        else:
            folded = getattr(func, _HAYSTACK)(
                col(MemoryRow.content), col(MemoryRow.tags_json), col(MemoryRow.trigger_context)
            )
            # Without tags, the searched text is plain SQL; tags (JSON) go to Python.
            plain_text = (
                col(MemoryRow.content) + "  " + func.coalesce(col(MemoryRow.trigger_context), "")
            )
            untagged = col(MemoryRow.tags_json) == "[]"
            out.append(contains_folded(plain_text, text, folded, plain=untagged))
    return out


def prepare(session: Session) -> None:
    """Register the SQL function the text filter calls on the session's connection."""
    register_function(session, _HAYSTACK, 3, _searched)


def sort_key(order: ListOrder, now: datetime) -> Any:
    """The SQL expression a column sorts by (never NULL; ties are broken by id).

    Raises:
        ValueError: ``order.key`` is not one of :data:`ORDER_KEYS`.
    """
    key = order.key
    if key == "id":
        return col(MemoryRow.id)
    if key == "content":
        return collate(col(MemoryRow.content), "NOCASE")
    if key in ("kind", "source"):
        return ranked(col(MemoryRow.kind if key == "kind" else MemoryRow.source), order.ranks)
    if key == "confidence":
        return col(MemoryRow.confidence)
    if key in ("created", "last_used"):
        # The stored text: it sorts as the times do, and a window's cursor keeps it as it is.
        column = col(MemoryRow.created_at if key == "created" else MemoryRow.last_accessed_at)
        return func.coalesce(type_coerce(column, String()), "")
    if key == "status":
        return case(
            (col(MemoryRow.superseded_by).is_not(None), STATUS_RANKS.index("superseded")),
            (col(MemoryRow.archived_at).is_not(None), STATUS_RANKS.index("archived")),
            (not_(active_memory(now)), STATUS_RANKS.index("expired")),
            else_=STATUS_RANKS.index("active"),
        )
    raise ValueError(f"a memory list does not sort by {key!r}")


def window(
    session: Session,
    filters: MemoryFilters,
    order: ListOrder,
    now: datetime,
    *,
    after: Cursor | None = None,
    limit: int = PAGE_SIZE,
    with_counts: bool = False,
) -> ListWindow[Memory]:
    """One window of the memories ``filters`` let through, in ``order``.

    Args:
        session: A session on the DB thread.
        filters: What the list shows.
        order: How it is sorted.
        now: The current time (what is active).
        after: Start after this row (the cursor of the window before); ``None``: the first.
        limit: At most this many memories.
        with_counts: Read the list's counts too, in the same transaction.

    Returns:
        The memories, the cursor of the next window, and the counts when asked for.
    """
    prepare(session)
    key = sort_key(order, now)
    statement = sa_select(col(MemoryRow.id), MemoryRow, key.label("sort_key")).where(
        *conditions(filters, now)
    )
    rows, cursor = read_window(
        session,
        statement,
        key=key,
        id_column=col(MemoryRow.id),
        order=order,
        after_cursor=after,
        limit=limit,
    )
    memories = [Memory.from_row(row[1]) for row in rows]
    return ListWindow(memories, cursor, counts(session, filters, now) if with_counts else None)


def counts(session: Session, filters: MemoryFilters, now: datetime) -> ListCounts:
    """Every memory, those ``filters`` let through, and how many of each are active."""
    prepare(session)
    active = func.coalesce(func.sum(case((active_memory(now), 1), else_=0)), 0)
    total, lead = session.execute(sa_select(func.count(), active).select_from(MemoryRow)).one()
    where = conditions(filters, now)
    if not where:
        return ListCounts(int(total), int(total), int(lead), int(lead))
    # The filters in WHERE: each row's text is looked at once.
    statement = sa_select(func.count(), active).select_from(MemoryRow).where(*where)
    matching, archivable = session.execute(statement).one()
    return ListCounts(int(total), int(matching), int(lead), int(archivable))


def matching_ids(
    session: Session, filters: MemoryFilters, now: datetime, *, archivable: bool | None = None
) -> list[int]:
    """The ids of the memories ``filters`` let through, in id order.

    Args:
        session: A session on the DB thread.
        filters: What the list shows.
        now: The current time.
        archivable: Only those Archive applies to (active: ``True``), or only those Restore
            applies to (``False``); ``None``: all of them.
    """
    prepare(session)
    where = conditions(filters, now)
    if archivable is True:
        where.append(active_memory(now))
    elif archivable is False:
        where.append(not_(active_memory(now)))
    statement = sa_select(col(MemoryRow.id)).where(*where).order_by(col(MemoryRow.id))
    return [int(memory_id) for memory_id in session.execute(statement).scalars()]
