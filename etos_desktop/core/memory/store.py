"""Reads and writes of memory rows, revisions, vectors and the full-text index.

Every function takes a ``Session`` and runs on the DB thread, inside one transaction the caller
commits, so a memory, its index entry, its vectors and its revision change together or not at all.
The engine decides *what* to write (checks, embeddings, merges); this module only writes it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, text, update
from sqlalchemy import insert as sa_insert
from sqlalchemy import select as sa_select
from sqlmodel import Session, SQLModel, col, delete, select

from etos_desktop.core.memory import fts
from etos_desktop.core.memory.search import CandidateRow
from etos_desktop.core.retrieval.vectors import FloatArray, VectorRow, timestamp, to_blob
from etos_desktop.core.storage.lookups import active_memory, is_active_at
from etos_desktop.core.storage.tables import (
    MemoryRevisionRow,
    MemoryRow,
    MemoryVectorRow,
    RevisionAction,
    new_gid,
)
from etos_desktop.core.storage.traces import chunks
from etos_desktop.core.text.segmentation import index_text

#: The fields a revision's before/after snapshot holds.
SNAPSHOT_FIELDS = (
    "content",
    "kind",
    "source",
    "importance",
    "confidence",
    "tags",
    "trigger_context",
    "valid_from",
    "valid_until",
    "superseded_by",
    "archived_at",
)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return value


def snapshot(row: MemoryRow) -> dict[str, Any]:
    """The revision snapshot of a row (JSON-ready)."""
    return _snapshot(functools.partial(getattr, row))


def _snapshot(get: Callable[[str], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SNAPSHOT_FIELDS:
        value = json.loads(get("tags_json")) if name == "tags" else get(name)
        out[name] = _json_value(value)
    return out


def body(row: MemoryRow) -> str:
    """The segmented text indexed for a memory: content, tags and trigger context."""
    return _body(functools.partial(getattr, row))


def _body(get: Callable[[str], Any]) -> str:
    tags = " ".join(json.loads(get("tags_json")))
    parts = (get("content"), tags, get("trigger_context") or "")
    return index_text(" ".join(p for p in parts if p))


def add_revision(
    session: Session,
    memory_id: int,
    action: RevisionAction,
    *,
    actor: str,
    now: datetime,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    """Record one change in a memory's history."""
    session.add(
        MemoryRevisionRow(
            memory_id=memory_id,
            created_at=now,
            action=action,
            actor=actor,
            before_json=None if before is None else json.dumps(before, ensure_ascii=False),
            after_json=None if after is None else json.dumps(after, ensure_ascii=False),
        )
    )


def get(session: Session, memory_id: int) -> MemoryRow | None:
    """One memory row, or ``None``."""
    return session.get(MemoryRow, memory_id)


def count_active(session: Session, now: datetime) -> int:
    """How many memories are active at ``now``."""
    statement = select(func.count()).select_from(MemoryRow).where(active_memory(now))
    return int(session.exec(statement).one())


def count_all(session: Session) -> int:
    """How many memories exist (active or not): the full-text index's row count."""
    return int(session.exec(select(func.count()).select_from(MemoryRow)).one())


def find_active_by_key(session: Session, key: str, now: datetime) -> MemoryRow | None:
    """The oldest active memory with this duplicate key, if any."""
    statement = (
        select(MemoryRow)
        .where(MemoryRow.content_key == key, active_memory(now))
        .order_by(col(MemoryRow.id))
        .limit(1)
    )
    return session.exec(statement).first()


def insert(session: Session, rows: Sequence[MemoryRow], *, actor: str) -> list[int]:
    """Insert new memories with their index entries and ``create`` revisions.

    One bulk statement per table (bulk loads of 100k memories go through here).

    Args:
        session: A session on the DB thread.
        rows: New rows (without ids); their ``id`` is set.
        actor: Who created them.

    Returns:
        The new ids, in order.
    """
    if not rows:
        return []
    statement = sa_insert(MemoryRow).returning(col(MemoryRow.id), sort_by_parameter_order=True)
    new_ids = session.scalars(statement, [r.model_dump(exclude={"id"}) for r in rows])
    ids = [memory_id for memory_id in new_ids if memory_id is not None]
    for row, memory_id in zip(rows, ids, strict=True):
        row.id = memory_id
    fts.insert_many(
        session, [(memory_id, body(row)) for row, memory_id in zip(rows, ids, strict=True)]
    )
    session.execute(
        sa_insert(MemoryRevisionRow),
        [
            {
                "memory_id": memory_id,
                "created_at": row.created_at,
                "action": RevisionAction.CREATE.value,
                "actor": actor,
                "before_json": None,
                "after_json": json.dumps(snapshot(row), ensure_ascii=False),
            }
            for row, memory_id in zip(rows, ids, strict=True)
        ],
    )
    return ids


def reindex(session: Session, row: MemoryRow) -> None:
    """Refresh a memory's full-text entry after its text, tags or trigger changed."""
    assert row.id is not None
    fts.replace(session, row.id, body(row))


def write_vectors(
    session: Session, memory_id: int, key: str, vectors: Sequence[FloatArray]
) -> None:
    """Replace a memory's vectors for one embedder (one per chunk, chunk 0 = whole text)."""
    session.exec(
        delete(MemoryVectorRow).where(
            col(MemoryVectorRow.memory_id) == memory_id, col(MemoryVectorRow.embedder_key) == key
        )
    )
    for chunk_no, vector in enumerate(vectors):
        session.add(
            MemoryVectorRow(
                embedder_key=key,
                memory_id=memory_id,
                chunk_no=chunk_no,
                dim=int(vector.shape[0]),
                vector=to_blob(vector),
            )
        )


def insert_vectors(
    session: Session, key: str, items: Sequence[tuple[int, Sequence[FloatArray]]]
) -> None:
    """Add vectors for memories that have none for ``key`` yet (one bulk statement)."""
    params = [
        {
            "embedder_key": key,
            "memory_id": memory_id,
            "chunk_no": chunk_no,
            "dim": int(vector.shape[0]),
            "vector": to_blob(vector),
        }
        for memory_id, vectors in items
        for chunk_no, vector in enumerate(vectors)
    ]
    if params:
        session.execute(sa_insert(MemoryVectorRow), params)


def delete_vectors(session: Session, key: str, memory_ids: Sequence[int]) -> None:
    """Remove one embedder's vectors of the given memories."""
    if memory_ids:
        session.exec(
            delete(MemoryVectorRow).where(
                col(MemoryVectorRow.embedder_key) == key,
                col(MemoryVectorRow.memory_id).in_(list(memory_ids)),
            )
        )


def drop_vectors(session: Session, memory_id: int) -> None:
    """Remove all of a memory's vectors (its text changed: every embedder's are stale)."""
    session.exec(delete(MemoryVectorRow).where(col(MemoryVectorRow.memory_id) == memory_id))


def vector_rows(
    session: Session, key: str, dim: int, memory_ids: Iterable[int] | None = None
) -> list[VectorRow]:
    """The vectors of one embedder for non-archived memories, grouped by memory, in chunk order.

    Args:
        session: A session on the DB thread.
        key: The embedder key.
        dim: The expected dimension (rows of another size are skipped).
        memory_ids: Only these memories (``None``: all).

    Returns:
        The rows the vector index is built from.
    """
    statement = (
        select(
            MemoryVectorRow.memory_id,
            MemoryVectorRow.chunk_no,
            MemoryVectorRow.vector,
            MemoryRow.valid_until,
        )
        .join(MemoryRow, col(MemoryRow.id) == col(MemoryVectorRow.memory_id))
        .where(
            MemoryVectorRow.embedder_key == key,
            MemoryVectorRow.dim == dim,
            col(MemoryRow.archived_at).is_(None),
        )
        .order_by(col(MemoryVectorRow.memory_id), col(MemoryVectorRow.chunk_no))
    )
    if memory_ids is not None:
        ids = sorted(set(memory_ids))
        if not ids:
            return []
        statement = statement.where(col(MemoryVectorRow.memory_id).in_(ids))
    return [
        VectorRow(int(memory_id), int(chunk_no), bytes(blob), timestamp(until))
        for memory_id, chunk_no, blob, until in session.exec(statement)
    ]


def count_with_vector(session: Session, key: str) -> int:
    """How many memories have a whole-text vector for ``key``."""
    statement = (
        select(func.count())
        .select_from(MemoryVectorRow)
        .where(MemoryVectorRow.embedder_key == key, MemoryVectorRow.chunk_no == 0)
    )
    return int(session.exec(statement).one())


def rows_by_id(session: Session, memory_ids: Iterable[int]) -> dict[int, MemoryRow]:
    """Memory rows for the given ids (missing ids are left out)."""
    ids = sorted(set(memory_ids))
    if not ids:
        return {}
    rows = session.exec(select(MemoryRow).where(col(MemoryRow.id).in_(ids))).all()
    return {row.id: row for row in rows if row.id is not None}


#: The candidates query, run on the driver's connection: this runs on every search, for a few
#: hundred ids, which go in as one JSON array. The ORM's statement (an expanding IN of ~300
#: parameters, row objects, datetime result processing) took 6 ms at 10k memories, this 1.5.
_CANDIDATES_SQL = (
    f"SELECT {fts.CANDIDATE_COLUMNS} FROM memory "
    "WHERE id IN (SELECT value FROM json_each(:ids)) AND " + fts.ACTIVE_SQL + " ORDER BY id"
)
#: The same with each memory's indexed text (``NULL`` when it has none): the vector candidates'
#: keyword scores. memory stays the outer loop (a LEFT JOIN's left side); the bodies are read
#: by rowid from FTS5's own table (1.2 ms for 100 ids at 10k through memory_fts, 0.6 so).
_CANDIDATES_BODIES_SQL = (
    f"SELECT {fts.CANDIDATE_COLUMNS}, {fts.BODIES_TABLE}.c0 FROM memory "
    f"LEFT JOIN {fts.BODIES_TABLE} ON {fts.BODIES_TABLE}.id = memory.id "
    "WHERE memory.id IN (SELECT value FROM json_each(:ids)) AND "
    + fts.ACTIVE_SQL
    + " ORDER BY memory.id"
)


def candidates(session: Session, memory_ids: Iterable[int], now: datetime) -> list[CandidateRow]:
    """The active memories among ``memory_ids``, as search reads them (not yet scored).

    In id order. Columns are selected directly, not as ORM objects: this runs on every search,
    for a few hundred ids.
    """
    ids = sorted(set(memory_ids))
    if not ids:
        return []
    driver = session.connection().connection.driver_connection
    assert driver is not None
    rows = driver.execute(_CANDIDATES_SQL, {"ids": json.dumps(ids), "now": fts.stored_time(now)})
    return [fts.candidate_row(row) for row in rows]


def candidates_with_bodies(
    session: Session, memory_ids: Iterable[int], now: datetime
) -> list[tuple[CandidateRow, str | None]]:
    """:func:`candidates` with each one's indexed text (``None`` when it is not indexed).

    One statement where a search read the rows and the bodies of its vector candidates apart.
    """
    ids = sorted(set(memory_ids))
    if not ids:
        return []
    driver = session.connection().connection.driver_connection
    assert driver is not None
    params = {"ids": json.dumps(ids), "now": fts.stored_time(now)}
    return [
        (fts.candidate_row(row[:7]), None if row[7] is None else str(row[7]))
        for row in driver.execute(_CANDIDATES_BODIES_SQL, params)
    ]


def contents(session: Session, memory_ids: Iterable[int]) -> dict[int, str]:
    """The content of each existing memory among ``memory_ids``, in id order."""
    return {i: row.content for i, row in sorted(rows_by_id(session, memory_ids).items())}


def revisions(session: Session, memory_id: int) -> list[MemoryRevisionRow]:
    """A memory's history, oldest first."""
    statement = (
        select(MemoryRevisionRow)
        .where(MemoryRevisionRow.memory_id == memory_id)
        .order_by(col(MemoryRevisionRow.created_at), col(MemoryRevisionRow.id))
    )
    return list(session.exec(statement).all())


def columns_by_id(session: Session, memory_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The column values of several memories (missing ids are left out).

    Plain values, not ORM objects: building 10k ``MemoryRow`` objects cost more than reading
    them (measured on a bulk delete).
    """
    table = _table("memory")
    out: dict[int, dict[str, Any]] = {}
    for part in chunks(memory_ids):
        for row in session.execute(sa_select(table).where(table.c.id.in_(part))):
            out[int(row.id)] = dict(row._mapping)
    return out


def revisions_of(session: Session, memory_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """The histories of several memories as column values without ids, each oldest first."""
    table = _table("memory_revision")
    out: dict[int, list[dict[str, Any]]] = {}
    for part in chunks(memory_ids):
        statement = (
            sa_select(table)
            .where(table.c.memory_id.in_(part))
            .order_by(table.c.created_at, table.c.id)
        )
        for row in session.execute(statement):
            values = dict(row._mapping)
            del values["id"]
            out.setdefault(int(row.memory_id), []).append(values)
    return out


def vectors_of(
    session: Session, memory_ids: Sequence[int]
) -> dict[int, list[tuple[str, int, int, bytes]]]:
    """Every stored vector of several memories as ``(embedder_key, chunk_no, dim, blob)``."""
    table = _table("memory_vector")
    out: dict[int, list[tuple[str, int, int, bytes]]] = {}
    for part in chunks(memory_ids):
        statement = sa_select(
            table.c.memory_id, table.c.embedder_key, table.c.chunk_no, table.c.dim, table.c.vector
        ).where(table.c.memory_id.in_(part))
        for memory_id, key, chunk_no, dim, blob in session.execute(statement):
            out.setdefault(int(memory_id), []).append((key, int(chunk_no), int(dim), bytes(blob)))
    return out


def superseded_by_any(session: Session, memory_ids: Sequence[int]) -> dict[int, list[int]]:
    """For each of ``memory_ids``, the memories it superseded (``superseded_by`` points at it)."""
    out: dict[int, list[int]] = {}
    for part in chunks(memory_ids):
        statement = sa_select(col(MemoryRow.id), col(MemoryRow.superseded_by)).where(
            col(MemoryRow.superseded_by).in_(part)
        )
        for old_id, new_id in session.execute(statement):
            out.setdefault(int(new_id), []).append(int(old_id))
    return out


def erase_many(session: Session, memory_ids: Sequence[int], *, actor: str, now: datetime) -> None:
    """Really delete memories: rows, vectors, index entries, revision texts; leave tombstones.

    The full-text index is merged once for all of them, so the deleted tokens leave the file
    too: FTS5 records a delete as a marker and keeps the old segment until a merge. (One
    ``optimize`` per memory made SQLite report a malformed image after about a thousand of them
    in one transaction, and cost ~5 ms each.) ``secure_delete`` (set on every connection by the
    storage module) zeroes the freed pages; the caller checkpoints the WAL after committing.
    The copies of the texts in context traces are the caller's (``traces.erase_from_traces``).

    Args:
        session: A session on the DB thread; the caller commits.
        memory_ids: Existing memories.
        actor: Who deleted them (the tombstones' actor).
        now: The tombstones' time.
    """
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return
    # No ORM session sync: with thousands of rows loaded, matching each statement against the
    # identity map took half of a 10k delete (measured); the caller drops the objects anyway.
    for part in chunks(ids):
        for statement in (
            delete(MemoryRevisionRow).where(col(MemoryRevisionRow.memory_id).in_(part)),
            delete(MemoryVectorRow).where(col(MemoryVectorRow.memory_id).in_(part)),
            delete(MemoryRow).where(col(MemoryRow.id).in_(part)),
        ):
            session.execute(statement.execution_options(synchronize_session=False))
    fts.delete_many(session, ids)
    fts.purge(session)
    session.execute(
        sa_insert(MemoryRevisionRow),
        [
            {
                "memory_id": memory_id,
                "created_at": now,
                "action": RevisionAction.DELETE.value,
                "actor": actor,
                "before_json": None,
                "after_json": None,
            }
            for memory_id in ids
        ],
    )


def write_back(
    session: Session,
    rows: Sequence[Mapping[str, Any]],
    *,
    bodies: Mapping[int, str],
    revisions: Sequence[dict[str, Any]],
    vectors: Sequence[tuple[int, tuple[str, int, int, bytes]]],
    actor: str,
    now: datetime,
) -> None:
    """Write deleted memories back with their ids, index entries, vectors and histories.

    Their tombstones are replaced by the old revisions plus an ``undelete`` revision each. Rows
    are written as column values, not ORM objects (measured: building 10k ``MemoryRow`` objects
    took longer than writing them).

    Args:
        session: A session on the DB thread; the caller commits.
        rows: The memories' columns as they were (with their ids).
        bodies: Their indexed texts as they were, where known (else they are segmented anew).
        revisions: Their old revisions' columns (without ids).
        vectors: ``(memory_id, (embedder_key, chunk_no, dim, blob))`` for each stored vector.
        actor: Who undid the delete.
        now: The ``undelete`` revisions' time.
    """
    ids = [int(row["id"]) for row in rows]
    for part in chunks(ids):
        session.execute(
            delete(MemoryRevisionRow)
            .where(col(MemoryRevisionRow.memory_id).in_(part))
            .execution_options(synchronize_session=False)
        )
    session.execute(_table("memory").insert(), list(rows))
    fts.insert_many(
        session,
        [(int(row["id"]), bodies.get(int(row["id"])) or _body(row.__getitem__)) for row in rows],
    )
    if vectors:
        session.execute(
            _table("memory_vector").insert(),
            [
                {
                    "embedder_key": key,
                    "memory_id": memory_id,
                    "chunk_no": chunk_no,
                    "dim": dim,
                    "vector": blob,
                }
                for memory_id, (key, chunk_no, dim, blob) in vectors
            ],
        )
    undeletes = [
        {
            # Given here: one statement inserts these with the old revisions, which keep theirs.
            "gid": new_gid(),
            "memory_id": int(row["id"]),
            "created_at": now,
            "action": RevisionAction.UNDELETE.value,
            "actor": actor,
            "before_json": None,
            "after_json": json.dumps(_snapshot(row.__getitem__), ensure_ascii=False),
        }
        for row in rows
    ]
    session.execute(_table("memory_revision").insert(), [*revisions, *undeletes])


def set_archived_many(
    session: Session,
    memory_ids: Sequence[int],
    *,
    archive: bool,
    archive_only: bool = False,
    actor: str,
    now: datetime,
) -> tuple[list[int], int, list[int]]:
    """Archive (or restore) several memories in bulk statements, with a revision each.

    Archiving sets ``archived_at`` of those not archived yet. Restoring makes the inactive ones
    active as ``MemoryEngine.restore`` does (``archived_at``, ``valid_until`` and
    ``superseded_by`` cleared), or with ``archive_only`` clears ``archived_at`` alone: the undo
    of an archive, which must not end an expiry the memory had before. A memory already in the
    wanted state is skipped, and so is an id that names no memory (it is returned: the caller
    decides). The caller commits.

    Args:
        session: A session on the DB thread.
        memory_ids: The memories.
        archive: Archive (``True``) or restore.
        archive_only: When restoring, clear only ``archived_at``.
        actor: Who made the change (the revisions' actor).
        now: The time of the change.

    Returns:
        The ids changed, in the order given; how many memories became active (a restore: the
        caller checks the store's limit); the ids that name no memory.
    """
    wanted = list(dict.fromkeys(memory_ids))
    rows = columns_by_id(session, wanted)
    changes: list[tuple[dict[str, Any], dict[str, Any]]] = []
    became_active = 0
    for memory_id in wanted:
        row = rows.get(memory_id)
        if row is None:
            continue
        after = dict(row)
        if archive:
            if row["archived_at"] is not None:
                continue
            after["archived_at"] = now
        elif archive_only:
            if row["archived_at"] is None:
                continue
            after["archived_at"] = None
        else:
            if (
                row["archived_at"] is None
                and row["valid_until"] is None
                and row["superseded_by"] is None
            ):
                continue
            after.update(archived_at=None, valid_until=None, superseded_by=None)
        if not archive and not is_active_at(row["archived_at"], row["valid_until"], now):
            became_active += int(is_active_at(after["archived_at"], after["valid_until"], now))
        after["updated_at"] = now
        changes.append((row, after))
    changed = [int(row["id"]) for row, _ in changes]
    missing = [memory_id for memory_id in wanted if memory_id not in rows]
    values = (
        {"archived_at": now, "updated_at": now}
        if archive
        else {"archived_at": None, "updated_at": now}
        if archive_only
        else {"archived_at": None, "valid_until": None, "superseded_by": None, "updated_at": now}
    )
    for part in chunks(changed):
        session.execute(
            update(MemoryRow)
            .where(col(MemoryRow.id).in_(part))
            .values(**values)
            .execution_options(synchronize_session=False)
        )
    if changes:
        action = RevisionAction.ARCHIVE if archive else RevisionAction.RESTORE
        session.execute(
            sa_insert(MemoryRevisionRow),
            [
                {
                    "memory_id": int(before["id"]),
                    "created_at": now,
                    "action": action.value,
                    "actor": actor,
                    "before_json": json.dumps(_snapshot(before.__getitem__), ensure_ascii=False),
                    "after_json": json.dumps(_snapshot(after.__getitem__), ensure_ascii=False),
                }
                for before, after in changes
            ],
        )
    return changed, became_active, missing


def _table(name: str) -> Any:
    # Core inserts: the ORM's bulk path costs ~25 µs per row in bookkeeping it does not need here.
    return SQLModel.metadata.tables[name]


def relink(session: Session, links: Iterable[tuple[int, int | None]]) -> None:
    """Set ``superseded_by`` of ``(old, new)`` pairs where both exist and old has no successor."""
    pairs = [(old, new) for old, new in links if new is not None]
    if pairs:
        session.execute(
            text(
                "UPDATE memory SET superseded_by = :new WHERE id = :old AND superseded_by IS NULL "
                "AND EXISTS (SELECT 1 FROM memory WHERE id = :new)"
            ),
            [{"old": old, "new": new} for old, new in pairs],
        )
