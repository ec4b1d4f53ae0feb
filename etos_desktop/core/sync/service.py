"""One sync pass: publish this device's changes, merge every other device's, write SQLite.

:meth:`SyncService.sync_once` is blocking (scrypt, file I/O, the DB thread): the app will run it
in a worker thread, the command line directly. It touches no Qt object.

A pass, in order:

1. Read (or, on first use, create) the folder's ``sync.json`` and derive the key; a wrong
   passphrase stops here (:class:`WrongPassphrase`) before anything is read or written.
2. Load the memory document from the ``sync_state`` table and merge this device's own files
   that a killed pass wrote but did not record.
3. Write SQLite's memories into the document (creates, edits, archives, deletes as
   tombstones) and publish what changed since the last publication as ``<seq>.update``.
4. Merge every other device's new files; a file that cannot be read is skipped and reported,
   and changes nothing.
5. In one transaction: write the memories the merged files changed into SQLite and save the
   document with the seqs dealt with. A pass killed before this commit leaves SQLite and the
   bookkeeping as they were; the next pass does the work again (merging twice is harmless).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from sqlmodel import Session

from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.storage.database import Database, checkpoint
from etos_desktop.core.sync import memories, state
from etos_desktop.core.sync.crypto import FolderHeader, KdfParams, SyncKey
from etos_desktop.core.sync.document import Device, MemoryDocument, Record
from etos_desktop.core.sync.errors import SyncFileRejected, SyncFolderInvalid, SyncTransportError
from etos_desktop.core.sync.layers import LayerStore, with_links
from etos_desktop.core.sync.profile import ProfileStore
from etos_desktop.core.sync.summaries import SummaryStateStore, SummaryStore
from etos_desktop.core.sync.transport import Transport, update_name, update_seq

log = logging.getLogger(__name__)

#: Reasons a file may read well later (a sync service still copying it, a flaky server): the
#: file is tried again next pass instead of being passed over for good.
_TRANSIENT: Final = frozenset({"truncated", "missing", "unreachable", "io"})
#: The layers synced besides the memories (which keep their own path: held gids, conflicts).
_LAYERS: Final[tuple[LayerStore, ...]] = (SummaryStore(), SummaryStateStore(), ProfileStore())


@dataclass(frozen=True)
class SkippedFile:
    """A file a pass could not use.

    Attributes:
        device: The device folder it is in.
        name: Its name.
        reason: ``SyncFileRejected``'s or ``SyncTransportError``'s reason.
        detail: What went wrong, in technical words (no secret, no memory text).
        retried: Whether the next pass tries it again.
    """

    device: str
    name: str
    reason: str
    detail: str
    retried: bool


@dataclass
class SyncReport:
    """What one pass did.

    Attributes:
        device_id: This device.
        published: The file this pass wrote (``None``: nothing to publish).
        exported: Memories whose local changes went into the document.
        applied: Other devices' files merged.
        skipped: Files that could not be used, with their reasons.
        inserted: Memories that arrived from other devices.
        updated: Memories another device changed.
        deleted: Memories another device deleted.
        conflicts: Lost values of concurrent changes newly kept in histories.
        held_back: ``(gid, reason)`` of remote memories not written (failed checks).
        devices: The other devices seen in the folder.
        device_names: Their names, as they gave them (their id where one has not said yet).
    """

    device_id: str
    published: str | None = None
    exported: int = 0
    applied: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    conflicts: int = 0
    held_back: list[tuple[str, str]] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    device_names: dict[str, str] = field(default_factory=dict)
    layers: dict[str, memories.Applied] = field(default_factory=dict)


@dataclass
class _Snapshot:
    sync: state.SyncState
    local: dict[str, Record]
    layers: dict[str, dict[str, Record]] = field(default_factory=dict)


class SyncService:
    """Syncs this data folder's memories through one transport.

    Args:
        db: The open database.
        transport: The sync folder or server.
        passphrase: The sync passphrase (from the keyring or the ``ETOS_SYNC_PASSPHRASE``
            environment variable); never logged or written anywhere.
        clock: Source of the current time.
        kdf: scrypt parameters for a folder this device creates (tests use cheap ones).
        device_name: Rename this device first (``None``: keep its name, the host name at first).
        on_memories_changed: Called with the local ids of memories a pass changed, so a
            running engine can drop them from its vector cache and re-embed them.
    """

    def __init__(
        self,
        db: Database,
        transport: Transport,
        passphrase: str,
        *,
        clock: Clock | None = None,
        kdf: KdfParams | None = None,
        device_name: str | None = None,
        on_memories_changed: Callable[[Sequence[int]], None] | None = None,
    ) -> None:
        self._db = db
        self._transport = transport
        self._passphrase = passphrase
        self._clock: Clock = clock or SystemClock()
        self._kdf = kdf
        self._device_name = device_name
        self._on_memories_changed = on_memories_changed
        self._key: SyncKey | None = None

    def __repr__(self) -> str:
        return f"<SyncService {self._transport!r}>"

    # -- the key ------------------------------------------------------------------------------

    def key(self) -> SyncKey:
        """The folder's key: derived once per service, creating ``sync.json`` on first use.

        Raises:
            WrongPassphrase: The passphrase does not open the folder.
            SyncFolderInvalid: ``sync.json`` is damaged, foreign or newer.
            SyncTransportError: The folder or server failed.
        """
        if self._key is not None:
            return self._key
        raw = self._transport.read_header()
        if raw is None:
            header, key = FolderHeader.create(self._passphrase, self._kdf)
            if self._transport.create_header(header.to_json()):
                log.info("sync folder set up (folder id %s)", header.folder_id)
                self._key = key
                return key
            # Another device was first: use its header.
            raw = self._transport.read_header()
            if raw is None:
                raise SyncFolderInvalid("sync.json vanished while it was created", reason="missing")
        self._key = SyncKey.derive(self._passphrase, FolderHeader.from_json(raw))
        return self._key

    # -- a pass -------------------------------------------------------------------------------

    def sync_once(self) -> SyncReport:
        """Publish local changes and merge every other device's (see the module docstring).

        Returns:
            What the pass did, files skipped included.

        Raises:
            WrongPassphrase: The passphrase does not open the folder (nothing changed).
            SyncFolderInvalid: The folder's header cannot be used (nothing changed).
            SyncTransportError: Publishing failed (nothing changed locally; listing or reading
                other devices' files failing is reported per file instead).
            StorageError: The database could not be read or written.
        """
        key = self.key()
        snapshot: _Snapshot = self._db.call(self._read)
        sync = snapshot.sync
        me = Device(sync.device_id, sync.device_name)
        device_uuid = uuid.UUID(hex=sync.device_id)
        report = SyncReport(device_id=sync.device_id)
        doc = MemoryDocument(sync.doc, sync.pending)
        now = memories.iso(self._clock.now()) or ""

        # Files of this device that a killed pass wrote but did not record.
        for name in self._transport.files(sync.device_id):
            seq = update_seq(name)
            if seq is not None and seq > sync.own_seq:
                blob = self._transport.read(sync.device_id, name)
                doc.apply(key.open(blob, device_id=device_uuid, seq=seq))
                sync.own_seq = seq

        doc.name_device(me)
        held = set(sync.held)
        for gid, record in snapshot.local.items():
            report.exported += doc.put(gid, record, device=me, now=now)
        for gid in doc.gids():
            if gid not in snapshot.local and gid not in held and not doc.is_deleted(gid):
                report.exported += doc.delete(gid, device=me, now=now)
        for store in _LAYERS:
            report.exported += _export(doc, store, snapshot.layers[store.spec.root], me, now)
        self._publish(doc, key, sync, sync.published, report)
        after_publish = doc.state_vector()

        self._merge_others(doc, key, sync, report)
        # Where two devices created a newest-wins item offline, the CRDT kept one of them by
        # its own rule: the device whose item is newer writes it again now, so every device
        # has the newer one after its next pass (not one pass later still).
        again = 0
        for store in _LAYERS:
            if store.spec.newer_by is not None:
                again += _export(doc, store, snapshot.layers[store.spec.root], me, now)
        if again:
            report.exported += again
            # The file carries the merged updates too (the CRDT merges them as no-ops).
            self._publish(doc, key, sync, after_publish, report)
        report.device_names = {device: doc.device_name(device) for device in report.devices}
        published = doc.state_vector()
        remote = doc.touched_by_remote() | held
        doc.scrub_tombstones(remote)
        remote_of: dict[str, set[str]] = {}
        for store in _LAYERS:
            remote_of[store.spec.root] = doc.touched_by_remote(store.spec)
            doc.layer(store.spec).scrub_tombstones(remote_of[store.spec.root])

        deleted_any = False

        def write(session: Session) -> memories.Applied:
            nonlocal deleted_any
            try:
                current = memories.records(session)
                # A memory changed locally during the pass keeps its change; the next pass
                # publishes it (the document already holds the remote value it starts from).
                busy = {gid for gid in remote if current.get(gid) != snapshot.local.get(gid)}
                applied = memories.apply(session, doc, remote - busy, now=self._clock.now())
                for store in _LAYERS:
                    root = store.spec.root
                    here = store.records(session)
                    was = snapshot.layers[root]
                    touched = remote_of[root]
                    busy_here = {gid for gid in touched if here.get(gid) != was.get(gid)}
                    done = store.apply(session, doc, touched - busy_here, now=self._clock.now())
                    report.layers[root] = done
                    deleted_any = deleted_any or done.deleted > 0
                sync.doc = doc.state()
                sync.pending = doc.pending()
                sync.published = published
                sync.held = sorted({gid for gid, _ in applied.invalid} | (held & busy))
                state.save(session, sync)
                session.commit()
            except BaseException:
                session.rollback()
                raise
            if applied.deleted or deleted_any:
                checkpoint(session)
            return applied

        applied: memories.Applied = self._db.call(write)
        report.inserted = applied.inserted
        report.updated = applied.updated
        report.deleted = applied.deleted
        report.conflicts = applied.conflicts
        report.held_back = applied.invalid
        for gid, reason in applied.invalid:
            log.warning("sync: memory %s from another device was not written: %s", gid, reason)
        for root, done in report.layers.items():
            for gid, reason in done.invalid:
                log.warning("sync: %s item %s was not written: %s", root, gid, reason)
        if applied.changed_ids and self._on_memories_changed is not None:
            self._on_memories_changed(applied.changed_ids)
        return report

    def _publish(
        self,
        doc: MemoryDocument,
        key: SyncKey,
        sync: state.SyncState,
        since: bytes,
        report: SyncReport,
    ) -> None:
        """Write what the document has beyond ``since`` as this device's next file."""
        update = doc.changes_since(since)
        if update is None:
            return
        seq = sync.own_seq + 1
        name = update_name(seq)
        device_uuid = uuid.UUID(hex=sync.device_id)
        self._transport.write(
            sync.device_id, name, key.seal(update, device_id=device_uuid, seq=seq)
        )
        sync.own_seq = seq
        report.published = name

    def _read(self, session: Session) -> _Snapshot:
        sync = state.load(session)
        if self._device_name:
            sync.device_name = self._device_name
        layers = {store.spec.root: store.records(session) for store in _LAYERS}
        return _Snapshot(sync, memories.records(session), layers)

    def _merge_others(
        self, doc: MemoryDocument, key: SyncKey, sync: state.SyncState, report: SyncReport
    ) -> None:
        try:
            devices = [d for d in self._transport.devices() if d != sync.device_id]
        except SyncTransportError as exc:
            report.skipped.append(
                SkippedFile("", "", str(exc.params.get("reason")), exc.detail, True)
            )
            return
        report.devices = devices
        for device in devices:
            done = sync.applied.get(device, 0)
            contiguous = True
            try:
                names = self._transport.files(device)
            except SyncTransportError as exc:
                reason = str(exc.params.get("reason", "io"))
                report.skipped.append(SkippedFile(device, "", reason, exc.detail, True))
                continue
            for name in names:
                seq = update_seq(name)
                if seq is None or seq <= done:
                    continue
                failure = self._merge_one(doc, key, device, name, seq)
                if failure is None:
                    report.applied += 1
                else:
                    transient = failure[0] in _TRANSIENT
                    report.skipped.append(
                        SkippedFile(device, name, failure[0], failure[1], transient)
                    )
                    log.warning(
                        "sync: skipped %s/%s (%s): %s", device, name, failure[0], failure[1]
                    )
                    if transient:
                        contiguous = False
                if contiguous:
                    sync.applied[device] = seq

    def _merge_one(
        self, doc: MemoryDocument, key: SyncKey, device: str, name: str, seq: int
    ) -> tuple[str, str] | None:
        try:
            blob = self._transport.read(device, name)
            update = key.open(blob, device_id=uuid.UUID(hex=device), seq=seq)
        except (SyncFileRejected, SyncTransportError) as exc:
            return str(exc.params.get("reason", "unreadable")), exc.detail
        try:
            doc.apply(update, source=device)
        except ValueError as exc:
            return "unreadable", f"not an update: {exc}"
        return None


def _export(
    doc: MemoryDocument, store: LayerStore, local: dict[str, Record], me: Device, now: str
) -> int:
    """Write one layer's SQLite records into its root map; returns how many items changed."""
    items = doc.layer(store.spec)
    changed = 0
    for gid, record in local.items():
        changed += items.put(
            gid, with_links(record, items.record(gid), store.links), device=me, now=now
        )
    if store.tombstones:
        for gid in items.gids():
            if gid not in local and not items.is_deleted(gid):
                changed += items.delete(gid, device=me, now=now)
    return changed
