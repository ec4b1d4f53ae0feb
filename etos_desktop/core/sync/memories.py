"""The SQLite side of memory sync: rows read as document records, remote records written back.

Runs on the DB thread inside the caller's transaction. Writes go through the memory layer's own
store functions (``core/memory/store.py``), so a synced memory has its keyword-index entry and
history like any other; its vectors are dropped when its text changed and recomputed by the
engine's re-embedding (the vector cache never syncs).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from sqlmodel import Session, col, select

from etos_desktop.core.memory import store
from etos_desktop.core.storage import traces
from etos_desktop.core.storage.tables import MemoryRevisionRow, MemoryRow, RevisionAction
from etos_desktop.core.sync.document import FIELDS, MemoryDocument, Record
from etos_desktop.core.text.segmentation import duplicate_key

#: The namespace of conflict revisions' gids: uuid5 of the change entry, the same everywhere.
_CONFLICT_NAMESPACE: Final = uuid.UUID("3f1c7b52-7a2e-4d2b-9a51-5c0e9f1f4e21")
_TIMES: Final = ("valid_from", "valid_until", "archived_at", "created_at", "updated_at")
_TEXT_FIELDS: Final = ("content", "tags", "trigger_context")


def iso(value: datetime | None) -> str | None:
    """A datetime as the document holds it: ISO 8601 in UTC."""
    return None if value is None else value.astimezone(UTC).isoformat()


def parse_time(value: Any) -> datetime | None:
    """A document time (ISO) as an aware datetime in UTC, ``None`` for ``None``."""
    if value is None:
        return None
    parsed = datetime.fromisoformat(str(value))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


@dataclass
class Applied:
    """What writing the document into SQLite did.

    Attributes:
        inserted: Memories that came from other devices.
        updated: Memories another device changed.
        deleted: Memories another device deleted.
        conflicts: Lost values newly recorded in histories.
        changed_ids: Local ids whose rows changed (for the engine's vector cache).
        invalid: ``(gid, reason)`` of records that were not written.
    """

    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    conflicts: int = 0
    changed_ids: list[int] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)


def _record(row: MemoryRow, gids: Mapping[int, str]) -> Record:
    values: Record = {
        "content": row.content,
        "kind": row.kind,
        "source": row.source,
        "importance": float(row.importance),
        "confidence": float(row.confidence),
        "tags": list(json.loads(row.tags_json)),
        "trigger_context": row.trigger_context,
        "superseded_by": gids.get(row.superseded_by) if row.superseded_by is not None else None,
    }
    for name in _TIMES:
        values[name] = iso(getattr(row, name))
    return values


def _rows(session: Session) -> list[MemoryRow]:
    return list(session.exec(select(MemoryRow).order_by(col(MemoryRow.id))).all())


def records(session: Session) -> dict[str, Record]:
    """Every memory in SQLite as a document record, by gid."""
    rows = _rows(session)
    gids = {row.id: row.gid for row in rows if row.id is not None}
    return {row.gid: _record(row, gids) for row in rows}


def _checked(record: Record) -> Record:
    """The record with its values checked and times parsed; ``ValueError`` when it is not valid."""
    content = record.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("no content")
    for name in ("kind", "source"):
        if not isinstance(record.get(name), str):
            raise ValueError(f"{name} is not text")
    for name in ("importance", "confidence"):
        value = record.get(name)
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
            raise ValueError(f"{name} is not between 0 and 1")
    tags = record.get("tags")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError("tags are not a list of text")
    trigger = record.get("trigger_context")
    if trigger is not None and not isinstance(trigger, str):
        raise ValueError("trigger_context is not text")
    out = dict(record)
    for name in _TIMES:
        out[name] = parse_time(record.get(name))
    for name in ("valid_from", "created_at", "updated_at"):
        if out[name] is None:
            raise ValueError(f"{name} is missing")
    return out


def _fill(row: MemoryRow, values: Record) -> None:
    row.content = str(values["content"])
    row.content_key = duplicate_key(row.content)
    row.kind = str(values["kind"])
    row.source = str(values["source"])
    row.importance = float(values["importance"])
    row.confidence = float(values["confidence"])
    row.tags_json = json.dumps(list(values["tags"]), ensure_ascii=False)
    row.trigger_context = values["trigger_context"]
    for name in _TIMES:
        setattr(row, name, values[name])


def _action(before: Record, after: Record) -> RevisionAction:
    differs = {name for name in FIELDS if before.get(name) != after.get(name)} - {"updated_at"}
    if differs <= {"archived_at"} and after.get("archived_at") is not None:
        return RevisionAction.ARCHIVE
    if differs <= {"archived_at", "valid_until", "superseded_by"} and (
        after.get("archived_at") is None and after.get("superseded_by") is None
    ):
        return RevisionAction.RESTORE
    if differs <= {"archived_at", "valid_until", "superseded_by"}:
        return RevisionAction.SUPERSEDE
    return RevisionAction.EDIT


def apply(session: Session, doc: MemoryDocument, gids: Iterable[str], *, now: datetime) -> Applied:
    """Write the document's state of ``gids`` into SQLite (the caller commits).

    New memories are inserted, changed ones updated (re-indexed, vectors dropped when the text
    changed), tombstones deleted for real (rows, vectors, index entries, revision texts and
    their texts in context traces), and the lost values of concurrent changes recorded as
    ``conflict`` revisions, once each.

    Args:
        session: A session on the DB thread.
        doc: The merged document.
        gids: The memories to look at (the ones remote changes reached).
        now: The revisions' time.

    Returns:
        What was written.
    """
    result = Applied()
    rows = _rows(session)
    by_gid = {row.gid: row for row in rows}
    local_gids = {row.id: row.gid for row in rows if row.id is not None}
    wanted = sorted(set(gids))
    inserts: list[tuple[str, Record]] = []
    updates: list[tuple[MemoryRow, Record, Record]] = []
    deletes: list[int] = []
    for gid in wanted:
        row = by_gid.get(gid)
        if doc.is_deleted(gid):
            if row is not None and row.id is not None:
                deletes.append(row.id)
            continue
        record = doc.record(gid)
        if record is None:
            continue
        try:
            values = _checked(record)
        except ValueError as exc:
            result.invalid.append((gid, str(exc)))
            continue
        if row is None:
            inserts.append((gid, values))
        else:
            before = _record(row, local_gids)
            if before != record:
                updates.append((row, before, values))
    actor_of = {gid: sync_actor(", ".join(doc.sources(gid))) for gid in wanted}
    if inserts:
        for actor in sorted({actor_of[gid] for gid, _ in inserts}):
            batch = [(gid, values) for gid, values in inserts if actor_of[gid] == actor]
            new_rows = []
            for gid, values in batch:
                new_row = MemoryRow(gid=gid, content="", content_key="", **_times(values))
                _fill(new_row, values)
                new_rows.append(new_row)
            ids = store.insert(session, new_rows, actor=actor)
            for (gid, _), new_row, memory_id in zip(batch, new_rows, ids, strict=True):
                by_gid[gid] = new_row
                local_gids[memory_id] = gid
            result.changed_ids.extend(ids)
        result.inserted = len(inserts)
    id_of = {gid: row.id for gid, row in by_gid.items()}
    for row, before, values in updates:
        assert row.id is not None
        _fill(row, values)
        target = values.get("superseded_by")
        row.superseded_by = id_of.get(target) if isinstance(target, str) else None
        session.add(row)
        after = doc.record(row.gid) or {}
        if any(before.get(name) != after.get(name) for name in _TEXT_FIELDS):
            store.reindex(session, row)
        if before.get("content") != after.get("content"):
            # The old vectors describe the old text; the engine's reembed() makes new ones.
            store.drop_vectors(session, row.id)
        store.add_revision(
            session,
            row.id,
            _action(before, after),
            actor=actor_of[row.gid],
            now=now,
            before=_snapshot(before, id_of),
            after=_snapshot(after, id_of),
        )
        result.changed_ids.append(row.id)
    result.updated = len(updates)
    for gid, _values in inserts:
        target = doc.record(gid) or {}
        link = target.get("superseded_by")
        row = by_gid[gid]
        if isinstance(link, str) and id_of.get(link) is not None:
            row.superseded_by = id_of[link]
            session.add(row)
    if deletes:
        traces.erase_from_traces(session, deletes)
        store.erase_many(session, deletes, actor="sync", now=now)
        result.deleted = len(deletes)
        result.changed_ids.extend(deletes)
    session.flush()
    result.conflicts = _record_conflicts(session, doc, wanted, id_of, set(deletes), now)
    return result


def _times(values: Record) -> dict[str, Any]:
    return {name: values[name] for name in ("valid_from", "created_at", "updated_at")}


def conflict_gid(edit_id: str) -> str:
    """The gid of the revision that keeps a lost value: the same on every device."""
    return str(uuid.uuid5(_CONFLICT_NAMESPACE, edit_id))


def sync_actor(device_name: str) -> str:
    """Who a revision says made a change that came by sync."""
    return f"sync:{device_name}" if device_name else "sync"


def _snapshot(record: Record, id_of: Mapping[str, int | None]) -> dict[str, Any]:
    """A revision snapshot (``store.SNAPSHOT_FIELDS``) from a record, links as local ids."""
    out = {name: record.get(name) for name in store.SNAPSHOT_FIELDS}
    link = out.get("superseded_by")
    out["superseded_by"] = id_of.get(link) if isinstance(link, str) else None
    return out


def _record_conflicts(
    session: Session,
    doc: MemoryDocument,
    gids: Iterable[str],
    id_of: Mapping[str, int | None],
    deleted: set[int],
    now: datetime,
) -> int:
    recorded = 0
    for gid in gids:
        memory_id = id_of.get(gid)
        if memory_id is None or memory_id in deleted:
            continue
        for lost in doc.lost_values(gid):
            revision_gid = conflict_gid(lost.edit_id)
            exists = session.exec(
                select(MemoryRevisionRow.id).where(MemoryRevisionRow.gid == revision_gid)
            ).first()
            if exists is not None:
                continue
            session.add(
                MemoryRevisionRow(
                    gid=revision_gid,
                    memory_id=memory_id,
                    created_at=now,
                    action=RevisionAction.CONFLICT,
                    actor=sync_actor(lost.device_name),
                    after_json=json.dumps(
                        {lost.field: lost.value, "written_at": lost.at}, ensure_ascii=False
                    ),
                )
            )
            recorded += 1
    return recorded
