"""Windows of a table for lists that fetch as they scroll: keyset pages, counts, text matches.

A list of records in Settings (the memories, the summaries) never reads every row: it reads the
first window of the rows its filters let through, in its order, and the next window when the
user scrolls near the end. A window is read *after* the last row of the one before (a keyset:
the last row's sort value and id), not at an offset, so a row saved or deleted meanwhile never
makes a row appear twice or be skipped. The counts the list shows ("Showing 37 of 10,000") are
``COUNT`` queries of the same filters.

A layer says what its filters mean in SQL and which expression sorts each column; this module
holds what they share. Plain functions of a session, run on the DB thread.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from sqlalchemy import and_, case, func, or_
from sqlmodel import Session

T = TypeVar("T")

#: Rows a list reads at a time: a screenful many times over, a few milliseconds of SQL.
PAGE_SIZE: Final = 200

#: Where a window ends: the last row's sort value and id (the next window starts after it).
Cursor = tuple[Any, int]


@dataclass(frozen=True)
class ListOrder:
    """How a list is sorted: a column's key, the direction, and the order of named values.

    Attributes:
        key: The column (the layer's name for it: ``"id"``, ``"content"``, ``"created"``…).
        descending: Largest (newest) first.
        ranks: For a column of stored values shown by their names (a memory's kind): the
            values in the order their names sort in the user's language; values not listed
            come last. Empty: sorted by the stored value.
    """

    key: str
    descending: bool = True
    ranks: tuple[str, ...] = ()


@dataclass(frozen=True)
class ListCounts:
    """The numbers a list shows about its records, from ``COUNT`` queries.

    Attributes:
        total: Every record.
        matching: Those the filters let through.
        lead: The number the count line names beside the total (active memories, current
            summaries).
        archivable: Of the matching ones, those Archive applies to (Restore applies to the
            others).
    """

    total: int
    matching: int
    lead: int
    archivable: int

    @property
    def restorable(self) -> int:
        """Of the matching records, those Restore applies to."""
        return self.matching - self.archivable


@dataclass(frozen=True)
class ListWindow(Generic[T]):
    """Some rows of a list, in its order, and where the next window starts.

    Attributes:
        records: The rows.
        cursor: After which row the next window starts; ``None`` when these are the last.
        counts: The list's counts, read in the same transaction (``None``: not asked for).
    """

    records: list[T]
    cursor: Cursor | None
    counts: ListCounts | None = field(default=None)


def ranked(expression: Any, ranks: Sequence[str]) -> Any:
    """``expression`` as its position in ``ranks`` (values not listed: after all of them)."""
    if not ranks:
        return expression
    return case(
        {value: rank for rank, value in enumerate(ranks)}, value=expression, else_=len(ranks)
    )


def after(key: Any, id_column: Any, cursor: Cursor, descending: bool) -> Any:
    """The rows after ``cursor`` in the order ``key, id`` (both descending or both ascending).

    ``key`` must never be NULL (wrap a nullable column in ``coalesce``): NULL compares to
    nothing, and its rows would be skipped.
    """
    value, last_id = cursor
    if descending:
        return or_(key < value, and_(key == value, id_column < last_id))
    return or_(key > value, and_(key == value, id_column > last_id))


def ordered(key: Any, id_column: Any, descending: bool) -> tuple[Any, Any]:
    """The ``ORDER BY`` of a window: the key, then the id to break ties, the same way."""
    if descending:
        return key.desc(), id_column.desc()
    return key.asc(), id_column.asc()


def read_window(
    session: Session,
    statement: Any,
    *,
    key: Any,
    id_column: Any,
    order: ListOrder,
    after_cursor: Cursor | None,
    limit: int,
) -> tuple[list[Any], Cursor | None]:
    """Run one window of ``statement``: a select of ``(id, …, key)``, filtered.

    Args:
        session: A session on the DB thread.
        statement: The select; its first column is ``id_column``, its last ``key``.
        key: The sort expression (never NULL).
        id_column: The table's id column (the tie-break).
        order: The direction.
        after_cursor: Start after this row (``None``: from the first).
        limit: At most this many rows.

    Returns:
        The result rows, and the cursor after the last one (``None``: no row follows).
    """
    if after_cursor is not None:
        statement = statement.where(after(key, id_column, after_cursor, order.descending))
    statement = statement.order_by(*ordered(key, id_column, order.descending)).limit(limit + 1)
    rows = list(session.execute(statement).all())
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, (rows[-1][-1], int(rows[-1][0]))


def register_function(session: Session, name: str, arguments: int, fn: Any) -> None:
    """Make a Python function callable from SQL on the session's connection (deterministic).

    Registering again replaces it and costs microseconds, so callers do it before each query
    instead of tracking which pooled connection has it.
    """
    raw = session.connection().connection.dbapi_connection
    assert raw is not None
    raw.create_function(name, arguments, fn, deterministic=True)


def casefolded(value: object) -> object:
    """``str.casefold`` for SQL (``NULL`` stays ``NULL``): matches as Python's filters do."""
    return value.casefold() if isinstance(value, str) else value


#: The SQL name of :func:`casefolded` (:func:`register_function` it first).
CASEFOLD: Final = "etos_casefold"


@functools.cache
def _folding_outputs() -> frozenset[str]:
    """Every character that is (part of) the case-folding of another ("a" of "A", "s" of "ß")."""
    outputs: set[str] = set()
    for code in range(0x1F000):  # no character above Adlam (U+1E900) has a case
        char = chr(code)
        folded = char.casefold()
        if folded != char:
            outputs.update(folded)
    return frozenset(outputs)


def contains_folded(text: Any, needle: str, folded_text: Any, *, plain: Any = None) -> Any:
    """SQL for ``needle.casefold() in text.casefold()``: in plain SQL where that is exact.

    A needle of characters without case that are no other's folding (Chinese) is found in the
    text as it is stored: ``instr`` runs in SQLite without the GIL, which the UI thread needs
    to paint. Any other needle is looked for in the text case-folded by Python
    (``folded_text``, about 2 µs a row; SQLite's ``lower`` folds ASCII only, and "Straße" holds
    "strasse").

    Args:
        text: The searched text as stored, before folding (an SQL expression).
        needle: What is looked for.
        folded_text: The searched text case-folded by Python (a registered function's call).
        plain: Rows whose ``text`` is the whole searched text (the others, with tags kept as
            JSON, go to ``folded_text``); ``None``: every row.
    """
    folded = needle.casefold()
    in_python = func.instr(folded_text, folded) > 0
    outputs = _folding_outputs()
    if not all(char.casefold() == char and char not in outputs for char in folded):
        return in_python
    in_sql = func.instr(text, folded) > 0
    return in_sql if plain is None else case((plain, in_sql), else_=in_python)
