"""The SQLite-only part of keyword search: the FTS5 statements (the DDL is migration v2).

``memory_fts`` holds one row per memory (``rowid`` = memory id) whose ``body`` is the memory's
pre-segmented text (``segmentation.index_text``). Every function here runs on the DB thread
inside the caller's transaction, so the index changes in the same transaction as the memory. A
server database would replace this module (PostgreSQL full-text search), not its callers.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects import sqlite
from sqlmodel import Session

from etos_desktop.core.memory.search import CandidateRow
from etos_desktop.core.storage.lookups import active_memory
from etos_desktop.core.storage.tables import MemoryRow

#: How the ``memory`` table stores datetimes, so raw SQL compares like the ORM does.
TIME_TYPE: Any = MemoryRow.__table__.c.valid_until.type  # type: ignore[attr-defined]

#: ``lookups.active_memory`` as raw SQL over the ``memory`` table, with the parameter ``:now``
#: (bind it with ``TIME_TYPE``, or pass ``stored_time(now)`` to the driver).
ACTIVE_SQL = str(
    active_memory(bindparam("now", type_=TIME_TYPE)).compile(
        dialect=sqlite.dialect(paramstyle="named")
    )
)

_TIME_BIND: Any = TIME_TYPE.dialect_impl(sqlite.dialect()).bind_processor(sqlite.dialect())


def stored_time(moment: datetime) -> str:
    """``moment`` as the ``memory`` table stores it, for SQL run on the driver's connection."""
    return str(_TIME_BIND(moment))


def read_time(value: str) -> datetime:
    """A datetime the ``memory`` table stores, read on the driver's connection (aware, UTC)."""
    # Stored as naive UTC "YYYY-MM-DD HH:MM:SS.ffffff"; the ORM reads it back as an aware UTC
    # datetime, and so does this (the same value, several times faster). Parsing it with the
    # offset appended is 4× faster than parsing and then replacing tzinfo (~600 values a search).
    try:
        return datetime.fromisoformat(value + "+00:00")
    except ValueError:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)


#: The table FTS5 keeps the indexed texts in (a plain rowid table, ``id`` and ``c0``): reading a
#: body from it is a b-tree lookup, through ``memory_fts`` (an FTS5 cursor per row) ~6 µs.
#: Reads only; the index is written through ``memory_fts``.
BODIES_TABLE = "memory_fts_content"

#: The ``memory`` columns a search candidate is made of (:func:`candidate_row`), as raw SQL.
CANDIDATE_COLUMNS = (
    "memory.id, memory.content, memory.kind, memory.created_at, memory.valid_from, "
    "memory.importance, memory.confidence"
)


def candidate_row(columns: Sequence[Any]) -> CandidateRow:
    """A :class:`CandidateRow` from a raw row's ``CANDIDATE_COLUMNS``."""
    memory_id, content, kind, created_at, valid_from, importance, confidence = columns
    created = read_time(created_at)
    # Most memories hold from when they were saved: one value, parsed once.
    valid = created if valid_from == created_at else read_time(valid_from)
    return CandidateRow(memory_id, content, kind, created, valid, importance, confidence)


def _driver(session: Session) -> Any:
    driver = session.connection().connection.driver_connection
    assert driver is not None
    return driver


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query that ORs ``terms``, each quoted so no character has syntax meaning.

    Inside an FTS5 string a double quote is escaped by doubling it; ``*``, ``:``, ``^``, ``-``,
    parentheses, ``NEAR``, ``AND``/``OR``/``NOT`` are literal there.

    Args:
        terms: Query terms (from ``segmentation.query_terms``).

    Returns:
        The expression, or ``""`` when there are no terms (callers then skip the query).
    """
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms if term)


def insert(session: Session, memory_id: int, body: str) -> None:
    """Index a memory's segmented text."""
    session.execute(
        text("INSERT INTO memory_fts (rowid, body) VALUES (:id, :body)"),
        {"id": memory_id, "body": body},
    )


def insert_many(session: Session, rows: Sequence[tuple[int, str]]) -> None:
    """Index many memories at once (bulk loads)."""
    if rows:
        session.execute(
            text("INSERT INTO memory_fts (rowid, body) VALUES (:id, :body)"),
            [{"id": memory_id, "body": body} for memory_id, body in rows],
        )


def replace(session: Session, memory_id: int, body: str) -> None:
    """Replace a memory's indexed text (after an edit or a merge)."""
    delete(session, memory_id)
    insert(session, memory_id, body)


def delete(session: Session, memory_id: int) -> None:
    """Remove a memory from the index."""
    session.execute(text("DELETE FROM memory_fts WHERE rowid = :id"), {"id": memory_id})


def delete_many(session: Session, memory_ids: Sequence[int]) -> None:
    """Remove several memories from the index (one statement per rowid: FTS5 looks each up)."""
    if memory_ids:
        session.execute(
            text("DELETE FROM memory_fts WHERE rowid = :id"),
            [{"id": memory_id} for memory_id in memory_ids],
        )


def purge(session: Session) -> None:
    """Merge the index's segments so deleted rows' tokens are gone from the file, not just hidden.

    FTS5 records a delete as a marker in a newer segment; the old segment keeps the tokens until
    segments merge. A real delete (DESIGN §3) needs them gone, so a delete calls this once per
    transaction, after all its rows are gone (never per row: see ``store.erase_many``).
    """
    session.execute(text("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')"))


#: The best ``:ranked`` rows by BM25, from the index alone (rowids: no row is read for the
#: ranking, 2,800 matches on average at 100k memories). Equal scores keep the order they had
#: when the joined rows were sorted again by score (SQLite's sorter is stable): the same lists
#: for all 428 match expressions of the two benchmark query sets at 10k and 100k memories, with
#: 80,000-110,000 tied scores among them.
_RANKED_IDS = (
    "SELECT rowid, bm25(memory_fts) AS score FROM memory_fts WHERE memory_fts MATCH :q "
    "ORDER BY score LIMIT :ranked"
)

#: Some of those rows as ``_ranked`` returns them: id, body, whether it is active, and the
#: memory columns. The bodies come from ``BODIES_TABLE`` (b-tree lookups: through memory_fts
#: an FTS5 cursor per row, ~6 µs each).
_RANKED_ROWS = (
    f"SELECT memory.id, {BODIES_TABLE}.c0, ({ACTIVE_SQL}), {CANDIDATE_COLUMNS} FROM memory "
    f"CROSS JOIN {BODIES_TABLE} ON {BODIES_TABLE}.id = memory.id "
    "WHERE memory.id IN (SELECT value FROM json_each(:ids))"
)

#: Every matching active row ranked: when most of the best ones are archived or expired.
_RANKED_ALL = (
    f"SELECT memory_fts.rowid, memory_fts.body, 1, {CANDIDATE_COLUMNS} FROM memory_fts "
    "JOIN memory ON memory.id = memory_fts.rowid "
    f"WHERE memory_fts MATCH :q AND {ACTIVE_SQL} "
    "ORDER BY bm25(memory_fts) LIMIT :limit"
)


def _ranked(session: Session, terms: Sequence[str], now: datetime, limit: int) -> list[Any]:
    """The raw rows of the best ``limit`` active matches (``_RANKED_ROWS``' columns), best first.

    The best ``2 × limit`` by BM25 are ranked first, and rows are read down that order only
    until ``limit`` are active (one statement when they all are): the rows and bodies of the
    other half were read for nothing (~2 ms of a 10k-memory search whose terms match many).
    When more than ``limit`` of them are archived or expired, every match is ranked.
    """
    expression = match_expression(terms)
    if not expression:
        return []
    driver = _driver(session)
    ranked_limit = 2 * limit
    ids = [
        int(r[0]) for r in driver.execute(_RANKED_IDS, {"q": expression, "ranked": ranked_limit})
    ]
    moment = stored_time(now)
    rows: list[Any] = []
    read = 0  # ranked rows that have a memory (all of them, unless the index lost one)
    start = 0
    while start < len(ids) and len(rows) < limit:
        chunk = ids[start : start + limit - len(rows)]
        start += len(chunk)
        found = {
            r[0]: r for r in driver.execute(_RANKED_ROWS, {"ids": json.dumps(chunk), "now": moment})
        }
        for memory_id in chunk:
            row = found.get(memory_id)
            if row is not None:
                read += 1
                if row[2]:
                    rows.append(row)
    if len(rows) < limit and read >= ranked_limit:
        # More than ``limit`` of the best-ranked rows were inactive: rank every match.
        params = {"q": expression, "now": moment, "limit": limit}
        rows = driver.execute(_RANKED_ALL, params).fetchall()
    return rows


def ranked_candidates(
    session: Session, terms: Sequence[str], *, now: datetime, limit: int
) -> list[tuple[CandidateRow, str]]:
    """:func:`matches` with each match's row as search reads it (no candidates query after it).

    Args:
        session: A session on the DB thread.
        terms: Query terms.
        now: Memories whose ``valid_until`` is not after this are expired and skipped.
        limit: At most this many rows.

    Returns:
        ``(candidate row, indexed body)`` pairs, best BM25 first.
    """
    return [(candidate_row(r[3:]), str(r[1])) for r in _ranked(session, terms, now, limit)]


def matches(
    session: Session,
    terms: Sequence[str],
    *,
    now: datetime,
    limit: int,
    only_ids: Collection[int] | None = None,
) -> list[tuple[int, str]]:
    """Active memories containing any of ``terms``, best BM25 first.

    BM25 only pre-selects here (its IDF is zero for terms in half the rows, which makes its
    values useless as an absolute measure in a small store); ``search.keyword_score`` scores.

    Args:
        session: A session on the DB thread.
        terms: Query terms.
        now: Memories whose ``valid_until`` is not after this are expired and skipped.
        limit: At most this many rows.
        only_ids: Return these memories' bodies instead, whether or not they contain a term
            (keyword scores for vector candidates).

    Returns:
        ``(memory_id, indexed body)`` pairs.
    """
    expression = match_expression(terms)
    if not expression or (only_ids is not None and not only_ids):
        return []
    if only_ids is not None:
        # The bodies of known candidates, read by rowid: a MATCH would rank every row that
        # contains a term first (measured: ~12 ms of a 10k-memory hybrid search). A body
        # without any query term simply scores 0 in ``search.keyword_score``.
        # CROSS JOIN keeps memory_fts the outer loop (rowid lookups, 0.7 ms for 100 ids at
        # 10k memories); SQLite otherwise led with memory's archived_at index and scanned the
        # FTS table per row: 25 ms for 100 ids, 144 ms for 291.
        # The ids go in as one JSON array (an expanding IN costs ~3 µs a parameter).
        by_id = text(
            "SELECT memory_fts.rowid, memory_fts.body FROM memory_fts "
            "CROSS JOIN memory ON memory.id = memory_fts.rowid "
            "WHERE memory_fts.rowid IN (SELECT value FROM json_each(:ids)) "
            f"AND {ACTIVE_SQL} LIMIT :limit"
        ).bindparams(bindparam("now", type_=TIME_TYPE))
        ids = json.dumps(list(only_ids))
        found = session.execute(by_id, {"ids": ids, "now": now, "limit": limit})
        return [(int(row[0]), str(row[1])) for row in found]
    return [(int(r[0]), str(r[1])) for r in _ranked(session, terms, now, limit)]


def document_frequencies(session: Session, terms: Sequence[str]) -> dict[str, int]:
    """How many indexed memories contain each term (absent terms are missing from the result)."""
    if not terms:
        return {}
    statement = text("SELECT term, doc FROM memory_fts_vocab WHERE term IN :terms").bindparams(
        bindparam("terms", expanding=True)
    )
    return {str(t): int(n) for t, n in session.execute(statement, {"terms": list(terms)})}


def term_statistics(session: Session, terms: Sequence[str]) -> tuple[dict[str, int], int]:
    """:func:`document_frequencies` and the number of memories (``store.count_all``).

    On the driver's connection: through SQLAlchemy the two statements cost ~1 ms more per
    search at 10k memories. Two statements, not a ``UNION ALL``: inside a compound select
    ``count(*)`` reads every row (2.8 ms at 100k memories) instead of counting the b-tree.

    Returns:
        How many memories contain each term (absent terms are missing), and how many memories
        there are (active or not).
    """
    driver = _driver(session)
    marks = ", ".join("?" * len(terms))
    frequencies = {
        str(term): int(n)
        for term, n in driver.execute(
            f"SELECT term, doc FROM memory_fts_vocab WHERE term IN ({marks})", list(terms)
        )
    }
    (total,) = driver.execute("SELECT count(*) FROM memory").fetchone()
    return frequencies, int(total)


def bodies_of(session: Session, memory_ids: Sequence[int]) -> dict[int, str]:
    """The indexed texts of several memories (ids not indexed are left out)."""
    statement = text("SELECT rowid, body FROM memory_fts WHERE rowid IN :ids").bindparams(
        bindparam("ids", expanding=True)
    )
    out: dict[int, str] = {}
    for start in range(0, len(memory_ids), 500):
        part = list(memory_ids[start : start + 500])
        out.update((int(r[0]), str(r[1])) for r in session.execute(statement, {"ids": part}))
    return out


def body_of(session: Session, memory_id: int) -> str | None:
    """The indexed text of one memory (``None`` when it is not indexed)."""
    row = session.execute(
        text("SELECT body FROM memory_fts WHERE rowid = :id"), {"id": memory_id}
    ).first()
    return None if row is None else str(row[0])
