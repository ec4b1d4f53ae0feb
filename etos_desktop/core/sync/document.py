"""The memory document: the user's long-term memories as a CRDT (pycrdt, the Yrs bindings).

One root map, ``memories``, holds one map per memory under its global id::

    memories[gid] = {content, kind, source, importance, confidence, tags, trigger_context,
                     valid_from, valid_until, superseded_by (a gid), archived_at, created_at,
                     updated_at, by (the device name that wrote last), edits: [...]}

Each field is its own map key, so an edit on one device and an archive on another both hold
after a merge. Two devices that change the *same* field offline end with one value, by the
CRDT's rule, on every device; to keep the other one visible, each change of a text-like field
is also appended to ``edits`` (an array, which keeps every concurrent entry) with a hash of the
value it replaced. Two entries that replaced the same value with different ones are a conflict,
and the entry that did not stay is the lost value (:meth:`MemoryDocument.lost_values`).

A delete is a tombstone: ``{deleted: True, deleted_at, by}`` with every other key removed, so the
text leaves the document state (the files already written keep it until compaction). A device
that merges a tombstone with a concurrent edit removes the edit's keys again
(:meth:`MemoryDocument.scrub_tombstones`): deleted stays deleted.

The vector cache is never here: every device embeds the texts itself.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pycrdt import Array, Doc, Map, get_state, get_update, merge_updates

#: The synced fields of a memory, as plain JSON values (datetimes as ISO strings in UTC).
FIELDS: Final = (
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
    "created_at",
    "updated_at",
)
#: The fields whose concurrent changes are kept as lost values in the memory's history.
CONFLICT_FIELDS: Final = ("content", "kind", "tags", "trigger_context")
#: The newest change entries kept per memory (older ones can no longer be part of a conflict
#: a device still has to see, unless it was offline for that many edits of one memory).
MAX_EDITS: Final = 32
_ROOT: Final = "memories"
#: Root map of device names by device id (each device writes only its own entry).
_DEVICES: Final = "devices"
_META_KEYS: Final = frozenset({"by", "edits", "deleted", "deleted_at"})
_EMPTY_STATE: Final = b"\x00"

#: A memory's synced fields by name (see :data:`FIELDS`).
Record = dict[str, Any]


def value_hash(value: Any) -> str:
    """A short hash of a field value (what a change entry says it replaced)."""
    return hashlib.sha256(repr(value).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Device:
    """The device writing: its id (a folder name) and the name people see."""

    id: str
    name: str


@dataclass(frozen=True)
class LostValue:
    """A value of a field that lost a concurrent change to another device's value.

    Attributes:
        edit_id: The change entry's id (names the conflict revision on every device).
        field: The field.
        value: The value that did not stay.
        device_name: The device that wrote it.
        at: When it was written there (ISO, UTC).
    """

    edit_id: str
    field: str
    value: Any
    device_name: str
    at: str


def _plain(value: Any) -> Any:
    if isinstance(value, Map | Array):
        return value.to_py()
    return value


def _covered(update: bytes, state_vector: bytes) -> bool:
    """Whether every struct of ``update`` is integrated in a document with ``state_vector``."""
    return get_state(get_update(update, state_vector)) == _EMPTY_STATE


class MemoryDocument:
    """The memory document of this device, loaded from its saved state.

    A new client id is drawn for each load (Yjs's rule: a client id must never write from two
    places), so an old copy of the data folder can never reuse one.

    Args:
        state: The saved document state (``state()`` of the last pass), or empty.
        pending: Saved remote updates whose dependencies had not arrived (``pending()``).

    Raises:
        ValueError: A saved state does not decode.
    """

    def __init__(self, state: bytes = b"", pending: bytes = b"") -> None:
        self._doc: Doc[Any] = Doc()
        self._memories: Map[Any] = self._doc.get(_ROOT, type=Map)
        self._pending: list[bytes] = []
        self._deleted_here = False
        self._remote: set[str] = set()
        self._sources: dict[str, set[str]] = {}
        self._applying: str | None = None
        self._devices: Map[Any] = self._doc.get(_DEVICES, type=Map)
        self._subscription = self._memories.observe_deep(self._on_events)
        if state:
            self._doc.apply_update(state)
        if pending:
            self.apply(pending)

    # -- state --------------------------------------------------------------------------------

    def state(self) -> bytes:
        """The whole integrated state as one update (what the next load starts from)."""
        return self._doc.get_update()

    def state_vector(self) -> bytes:
        """The document's state vector."""
        return self._doc.get_state()

    def changes_since(self, state_vector: bytes) -> bytes | None:
        """The update from ``state_vector`` to now, or ``None`` when nothing changed."""
        update = self._doc.get_update(state_vector or _EMPTY_STATE)
        # A diff always carries the whole delete set, so only a local delete says it is news.
        if get_state(update) == _EMPTY_STATE and not self._deleted_here:
            return None
        return update

    def pending(self) -> bytes:
        """Remote updates applied but not yet integrated (their dependencies are missing)."""
        return merge_updates(*self._pending) if self._pending else b""

    def apply(self, update: bytes, source: str = "") -> None:
        """Merge a remote update (applying one twice, or out of order, is harmless).

        Args:
            update: The update.
            source: The id of the device whose file it is (see :meth:`sources`).

        Raises:
            ValueError: It does not decode (nothing was changed).
        """
        self._applying = source
        try:
            self._doc.apply_update(update)
        finally:
            self._applying = None
        vector = self._doc.get_state()
        self._pending = [u for u in [*self._pending, update] if not _covered(u, vector)]

    def _on_events(self, events: list[Any]) -> None:
        source = self._applying
        if source is None:
            return
        gids: set[str] = set()
        for event in events:
            path = list(event.path)
            if path:
                gids.add(str(path[0]))
            else:
                gids.update(str(key) for key in event.keys)
        self._remote.update(gids)
        for gid in gids:
            self._sources.setdefault(gid, set()).add(source)

    def touched_by_remote(self) -> set[str]:
        """The gids that updates merged by :meth:`apply` changed since the document was loaded."""
        return set(self._remote)

    # -- reading ------------------------------------------------------------------------------

    def gids(self) -> list[str]:
        """Every memory's gid, tombstones included."""
        return list(self._memories.keys())

    def record(self, gid: str) -> Record | None:
        """The fields of one memory, ``None`` for a tombstone or an unknown gid."""
        entry = self._entry(gid)
        if entry is None or entry.get("deleted"):
            return None
        return {name: _plain(entry.get(name)) for name in FIELDS}

    def is_deleted(self, gid: str) -> bool:
        """Whether ``gid`` is a tombstone."""
        entry = self._entry(gid)
        return entry is not None and bool(entry.get("deleted"))

    def sources(self, gid: str) -> list[str]:
        """The names of the devices whose merged files changed ``gid`` since the load."""
        ids = self._sources.get(gid, set())
        return sorted(self.device_name(device) for device in ids if device)

    def device_name(self, device_id: str) -> str:
        """The name a device gave itself, or its id when it has not said."""
        name = self._devices.get(device_id)
        return str(name) if isinstance(name, str) and name else device_id

    def name_device(self, device: Device) -> None:
        """Record this device's name for the others' histories (written when it changed)."""
        if self._devices.get(device.id) != device.name:
            self._devices[device.id] = device.name

    def _entry(self, gid: str) -> Map[Any] | None:
        entry = self._memories.get(gid)
        return entry if isinstance(entry, Map) else None

    def lost_values(self, gid: str) -> list[LostValue]:
        """The values concurrent changes of this memory lost (the same on every device)."""
        entry = self._entry(gid)
        edits = entry.get("edits") if entry is not None else None
        if entry is None or not isinstance(edits, Array):
            return []
        items = [e for e in edits.to_py() or [] if isinstance(e, dict)]
        lost: list[LostValue] = []
        for field in CONFLICT_FIELDS:
            mine = [e for e in items if e.get("field") == field]
            groups: dict[str, list[dict[str, Any]]] = {}
            for item in mine:
                groups.setdefault(str(item.get("base")), []).append(item)
            current = value_hash(_plain(entry.get(field)))
            for base, group in groups.items():
                values = {value_hash(item.get("value")) for item in group}
                if len(values) < 2:
                    continue
                # What stayed: the field's value now, or a value a later change started from.
                kept = {current} | {
                    str(item.get("base")) for item in mine if str(item.get("base")) != base
                }
                lost.extend(
                    LostValue(
                        edit_id=str(item.get("id")),
                        field=field,
                        value=item.get("value"),
                        device_name=str(item.get("name") or ""),
                        at=str(item.get("at") or ""),
                    )
                    for item in group
                    if value_hash(item.get("value")) not in kept
                )
        return lost

    # -- writing ------------------------------------------------------------------------------

    def put(self, gid: str, record: Mapping[str, Any], *, device: Device, now: str) -> bool:
        """Write a memory's fields as this device has them (only the ones that differ).

        Args:
            gid: The memory.
            record: All of :data:`FIELDS`.
            device: Who writes.
            now: The change entries' time (ISO, UTC).

        Returns:
            Whether anything changed.
        """
        entry = self._entry(gid)
        with self._doc.transaction():
            if entry is None or entry.get("deleted"):
                if entry is not None:
                    # An undone delete: the memory comes back with every field.
                    entry["deleted"] = False
                    entry.pop("deleted_at", None)
                    for name in FIELDS:
                        entry[name] = record[name]
                    entry["by"] = device.name
                    return True
                fresh: dict[str, Any] = {name: record[name] for name in FIELDS}
                fresh["by"] = device.name
                fresh["edits"] = Array()
                self._memories[gid] = Map(fresh)
                return True
            changed = [name for name in FIELDS if _plain(entry.get(name)) != record[name]]
            if not changed:
                return False
            edits = entry.get("edits")
            if not isinstance(edits, Array):
                edits = Array()
                entry["edits"] = edits
            for name in changed:
                if name in CONFLICT_FIELDS:
                    edits.append(
                        {
                            "id": uuid.uuid4().hex,
                            "field": name,
                            "base": value_hash(_plain(entry.get(name))),
                            "value": record[name],
                            "device": device.id,
                            "name": device.name,
                            "at": now,
                        }
                    )
                entry[name] = record[name]
            if len(edits) > MAX_EDITS:
                del edits[: len(edits) - MAX_EDITS]
            entry["by"] = device.name
        return True

    def delete(self, gid: str, *, device: Device, now: str) -> bool:
        """Turn a memory into a tombstone; ``False`` when it is one already or unknown."""
        entry = self._entry(gid)
        if entry is None or entry.get("deleted"):
            return False
        with self._doc.transaction():
            for key in list(entry.keys()):
                entry.pop(key)
            entry["deleted"] = True
            entry["deleted_at"] = now
            entry["by"] = device.name
        self._deleted_here = True
        return True

    def scrub_tombstones(self, gids: Iterable[str] | None = None) -> int:
        """Remove what concurrent edits left on tombstones; returns how many were scrubbed."""
        scrubbed = 0
        with self._doc.transaction():
            for gid in list(self._memories.keys()) if gids is None else gids:
                entry = self._entry(gid)
                if entry is None or not entry.get("deleted"):
                    continue
                keys = list(entry.keys())
                extra = [key for key in keys if key not in _META_KEYS or key == "edits"]
                for key in extra:
                    entry.pop(key)
                scrubbed += bool(extra)
        self._deleted_here = self._deleted_here or scrubbed > 0
        return scrubbed
