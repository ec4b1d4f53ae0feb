"""The memory document: the user's memory layers as a CRDT (pycrdt, the Yrs bindings).

One root map per layer (:data:`LAYERS`: memories, session summaries, the conversations' summary
state, the profile and its refresh bookkeeping) holds one map per item under its global id; a
memory, for example::

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

The other layers follow the same rules (:class:`LayerSpec` says which fields each has, which
keep their lost values, and whether an item is only written when it is newer by one field).

The vector cache is never here: every device embeds the texts itself.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
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
#: Root map of device names by device id (each device writes only its own entry).
_DEVICES: Final = "devices"
_META_KEYS: Final = frozenset({"by", "edits", "deleted", "deleted_at"})
_EMPTY_STATE: Final = b"\x00"

#: An item's synced fields by name (a memory's: :data:`FIELDS`).
Record = dict[str, Any]


@dataclass(frozen=True)
class LayerSpec:
    """The shape of one layer's root map.

    Attributes:
        root: The root map's name.
        fields: The synced fields of an item, as plain JSON values.
        conflict_fields: The fields whose concurrent changes keep their lost values.
        newer_by: A time field (ISO) by which a whole item is ordered: a device writes its
            item only when it is newer than the document's, and takes the document's only when
            that one is newer (bookkeeping such as a summary's state, where the newest wins).
    """

    root: str
    fields: tuple[str, ...]
    conflict_fields: tuple[str, ...] = ()
    newer_by: str | None = None


MEMORIES: Final = LayerSpec("memories", FIELDS, CONFLICT_FIELDS)
#: A conversation's summaries; ``conversation`` and ``covers_until`` are global ids.
SUMMARIES: Final = LayerSpec(
    "summaries",
    (
        "conversation",
        "conversation_title",
        "content",
        "language",
        "created_at",
        "updated_at",
        "covers_until",
        "user_turns_covered",
        "source",
        "edited_by_user",
        "archived_at",
    ),
)
#: Per conversation gid, what its summaries (or SKIPs) covered: the rule's input.
SUMMARY_STATE: Final = LayerSpec(
    "summary_state",
    ("covered_until", "succeeded_at", "last_outcome"),
    newer_by="succeeded_at",
)
#: The profile, one item (:data:`PROFILE_ITEM`): its text and pinned lines.
PROFILE: Final = LayerSpec(
    "profile", ("content", "pinned", "updated_at"), conflict_fields=("content", "pinned")
)
#: The profile's refresh bookkeeping, one item (:data:`PROFILE_ITEM`): the newest refresh wins.
PROFILE_REFRESH: Final = LayerSpec(
    "profile_refresh", ("material_until", "checked_at", "last_outcome"), newer_by="checked_at"
)
#: The gid of the one item of the profile layers.
PROFILE_ITEM: Final = "profile"
#: Every layer of the document, memories first.
LAYERS: Final = (MEMORIES, SUMMARIES, SUMMARY_STATE, PROFILE, PROFILE_REFRESH)


def newer(value: Any, than: Any) -> bool:
    """Whether ISO time ``value`` is later than ``than`` (``None`` is earlier than any time)."""
    if value is None:
        return False
    if than is None:
        return True
    return _when(value) > _when(than)


def _when(value: Any) -> datetime:
    parsed = datetime.fromisoformat(str(value))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


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


class ItemMap:
    """One layer's root map: its items by gid, tombstones and change entries included."""

    def __init__(self, owner: MemoryDocument, spec: LayerSpec) -> None:
        self.spec = spec
        self._owner = owner
        self._map: Map[Any] = owner.doc.get(spec.root, type=Map)

    def observe(self, callback: Any) -> Any:
        """Subscribe ``callback`` to the deep events of the root map."""
        return self._map.observe_deep(callback)

    def gids(self) -> list[str]:
        """Every item's gid, tombstones included."""
        return list(self._map.keys())

    def _entry(self, gid: str) -> Map[Any] | None:
        entry = self._map.get(gid)
        return entry if isinstance(entry, Map) else None

    def record(self, gid: str) -> Record | None:
        """The fields of one item, ``None`` for a tombstone or an unknown gid."""
        entry = self._entry(gid)
        if entry is None or entry.get("deleted"):
            return None
        return {name: _plain(entry.get(name)) for name in self.spec.fields}

    def is_deleted(self, gid: str) -> bool:
        """Whether ``gid`` is a tombstone."""
        entry = self._entry(gid)
        return entry is not None and bool(entry.get("deleted"))

    def lost_values(self, gid: str) -> list[LostValue]:
        """The values concurrent changes of this item lost (the same on every device)."""
        entry = self._entry(gid)
        edits = entry.get("edits") if entry is not None else None
        if entry is None or not isinstance(edits, Array):
            return []
        items = [e for e in edits.to_py() or [] if isinstance(e, dict)]
        lost: list[LostValue] = []
        for field in self.spec.conflict_fields:
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

    def put(self, gid: str, record: Mapping[str, Any], *, device: Device, now: str) -> bool:
        """Write an item's fields as this device has them (only the ones that differ).

        Args:
            gid: The item.
            record: All of the layer's fields.
            device: Who writes.
            now: The change entries' time (ISO, UTC).

        Returns:
            Whether anything changed (``False`` too when the layer orders items by a time and
            the document's is as new or newer).
        """
        fields = self.spec.fields
        entry = self._entry(gid)
        newer_by = self.spec.newer_by
        if (
            newer_by is not None
            and entry is not None
            and not entry.get("deleted")
            and not newer(record.get(newer_by), _plain(entry.get(newer_by)))
        ):
            return False
        with self._owner.doc.transaction():
            if entry is None or entry.get("deleted"):
                if entry is not None:
                    # An undone delete: the item comes back with every field.
                    entry["deleted"] = False
                    entry.pop("deleted_at", None)
                    for name in fields:
                        entry[name] = record[name]
                    entry["by"] = device.name
                    return True
                fresh: dict[str, Any] = {name: record[name] for name in fields}
                fresh["by"] = device.name
                fresh["edits"] = Array()
                self._map[gid] = Map(fresh)
                return True
            changed = [name for name in fields if _plain(entry.get(name)) != record[name]]
            if not changed:
                return False
            edits = entry.get("edits")
            if not isinstance(edits, Array):
                edits = Array()
                entry["edits"] = edits
            for name in changed:
                if name in self.spec.conflict_fields:
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
        """Turn an item into a tombstone; ``False`` when it is one already or unknown."""
        entry = self._entry(gid)
        if entry is None or entry.get("deleted"):
            return False
        with self._owner.doc.transaction():
            for key in list(entry.keys()):
                entry.pop(key)
            entry["deleted"] = True
            entry["deleted_at"] = now
            entry["by"] = device.name
        self._owner.deleted_here = True
        return True

    def scrub_tombstones(self, gids: Iterable[str] | None = None) -> int:
        """Remove what concurrent edits left on tombstones; returns how many were scrubbed."""
        scrubbed = 0
        with self._owner.doc.transaction():
            for gid in list(self._map.keys()) if gids is None else gids:
                entry = self._entry(gid)
                if entry is None or not entry.get("deleted"):
                    continue
                keys = list(entry.keys())
                extra = [key for key in keys if key not in _META_KEYS or key == "edits"]
                for key in extra:
                    entry.pop(key)
                scrubbed += bool(extra)
        self._owner.deleted_here = self._owner.deleted_here or scrubbed > 0
        return scrubbed


class MemoryDocument:
    """The memory document of this device, loaded from its saved state.

    A new client id is drawn for each load (Yjs's rule: a client id must never write from two
    places), so an old copy of the data folder can never reuse one. The methods without a
    layer argument are the memories layer's; :meth:`layer` gives any layer's :class:`ItemMap`.

    Args:
        state: The saved document state (``state()`` of the last pass), or empty.
        pending: Saved remote updates whose dependencies had not arrived (``pending()``).

    Raises:
        ValueError: A saved state does not decode.
    """

    def __init__(self, state: bytes = b"", pending: bytes = b"") -> None:
        self.doc: Doc[Any] = Doc()
        self._pending: list[bytes] = []
        #: A local delete happened (a diff always carries the delete set: see changes_since).
        self.deleted_here = False
        self._remote: dict[str, set[str]] = {}
        self._sources: dict[tuple[str, str], set[str]] = {}
        self._applying: str | None = None
        self._devices: Map[Any] = self.doc.get(_DEVICES, type=Map)
        self._layers = {spec.root: ItemMap(self, spec) for spec in LAYERS}
        self._memories = self._layers[MEMORIES.root]
        self._subscriptions = [
            items.observe(self._observer(root)) for root, items in self._layers.items()
        ]
        if state:
            self.doc.apply_update(state)
        if pending:
            self.apply(pending)

    def layer(self, spec: LayerSpec) -> ItemMap:
        """One layer's items."""
        return self._layers[spec.root]

    # -- state --------------------------------------------------------------------------------

    def state(self) -> bytes:
        """The whole integrated state as one update (what the next load starts from)."""
        return self.doc.get_update()

    def state_vector(self) -> bytes:
        """The document's state vector."""
        return self.doc.get_state()

    def changes_since(self, state_vector: bytes) -> bytes | None:
        """The update from ``state_vector`` to now, or ``None`` when nothing changed."""
        update = self.doc.get_update(state_vector or _EMPTY_STATE)
        # A diff always carries the whole delete set, so only a local delete says it is news.
        if get_state(update) == _EMPTY_STATE and not self.deleted_here:
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
            self.doc.apply_update(update)
        finally:
            self._applying = None
        vector = self.doc.get_state()
        self._pending = [u for u in [*self._pending, update] if not _covered(u, vector)]

    def _observer(self, root: str) -> Callable[[list[Any]], None]:
        # One parameter only: pycrdt passes the transaction too to a callback that takes two.
        def observe(events: list[Any]) -> None:
            self._on_events(root, events)

        return observe

    def _on_events(self, root: str, events: list[Any]) -> None:
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
        self._remote.setdefault(root, set()).update(gids)
        for gid in gids:
            self._sources.setdefault((root, gid), set()).add(source)

    def touched_by_remote(self, spec: LayerSpec = MEMORIES) -> set[str]:
        """The gids of a layer that updates merged by :meth:`apply` changed since the load."""
        return set(self._remote.get(spec.root, ()))

    # -- reading ------------------------------------------------------------------------------

    def gids(self) -> list[str]:
        """Every memory's gid, tombstones included."""
        return self._memories.gids()

    def record(self, gid: str) -> Record | None:
        """The fields of one memory, ``None`` for a tombstone or an unknown gid."""
        return self._memories.record(gid)

    def is_deleted(self, gid: str) -> bool:
        """Whether ``gid`` is a tombstone."""
        return self._memories.is_deleted(gid)

    def sources(self, gid: str, spec: LayerSpec = MEMORIES) -> list[str]:
        """The names of the devices whose merged files changed ``gid`` since the load."""
        ids = self._sources.get((spec.root, gid), set())
        return sorted(self.device_name(device) for device in ids if device)

    def device_name(self, device_id: str) -> str:
        """The name a device gave itself, or its id when it has not said."""
        name = self._devices.get(device_id)
        return str(name) if isinstance(name, str) and name else device_id

    def name_device(self, device: Device) -> None:
        """Record this device's name for the others' histories (written when it changed)."""
        if self._devices.get(device.id) != device.name:
            self._devices[device.id] = device.name

    def lost_values(self, gid: str) -> list[LostValue]:
        """The values concurrent changes of this memory lost (the same on every device)."""
        return self._memories.lost_values(gid)

    # -- writing ------------------------------------------------------------------------------

    def put(self, gid: str, record: Mapping[str, Any], *, device: Device, now: str) -> bool:
        """Write a memory's fields as this device has them (see :meth:`ItemMap.put`)."""
        return self._memories.put(gid, record, device=device, now=now)

    def delete(self, gid: str, *, device: Device, now: str) -> bool:
        """Turn a memory into a tombstone; ``False`` when it is one already or unknown."""
        return self._memories.delete(gid, device=device, now=now)

    def scrub_tombstones(self, gids: Iterable[str] | None = None) -> int:
        """Remove what concurrent edits left on memory tombstones; returns how many."""
        return self._memories.scrub_tombstones(gids)
