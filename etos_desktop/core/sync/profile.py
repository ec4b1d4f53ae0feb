"""The SQLite side of profile sync: the profile's text and pinned lines, one item.

Offline edits on two devices merge field by field (the text and the pins apart, so a pin made
on one device and a refresh on the other both stay); where both changed the same field, the
CRDT's value stays and the other is kept as a ``conflict`` revision with its device's name.
A version that came by sync is a ``synced`` revision, so the profile's history shows it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlmodel import Session, col, select

from etos_desktop.core.profile import store
from etos_desktop.core.profile.records import ProfileSource, pins_from_json, pins_to_json
from etos_desktop.core.storage.tables import ProfileRevisionRow, UserProfileRow
from etos_desktop.core.sync.document import PROFILE, PROFILE_ITEM, MemoryDocument, Record
from etos_desktop.core.sync.memories import Applied, conflict_gid, iso


class ProfileStore:
    """The profile: one item, never deleted (clearing it is an empty text)."""

    spec = PROFILE
    tombstones = False
    links: tuple[str, ...] = ()

    def records(self, session: Session) -> dict[str, Record]:
        """The profile as a record (none before its first version)."""
        row = session.get(UserProfileRow, store.PROFILE_ID)
        if row is None or row.revision_id is None:
            return {}
        return {
            PROFILE_ITEM: {
                "content": row.content,
                "pinned": row.pinned_json,
                "updated_at": iso(row.updated_at),
            }
        }

    def apply(
        self, session: Session, doc: MemoryDocument, gids: Iterable[str], *, now: datetime
    ) -> Applied:
        """Take the merged profile as a ``synced`` version; keep lost values as conflicts."""
        result = Applied()
        if PROFILE_ITEM not in set(gids):
            return result
        items = doc.layer(PROFILE)
        record = items.record(PROFILE_ITEM)
        if record is None:
            return result
        content, pinned = record.get("content"), record.get("pinned")
        if not isinstance(content, str) or not isinstance(pinned, str):
            result.invalid.append((PROFILE_ITEM, "content or pinned is not text"))
            return result
        pins = pins_from_json(pinned)
        here = self.records(session).get(PROFILE_ITEM)
        if here is None or (here["content"], here["pinned"]) != (content, pinned):
            store.write_version(
                session,
                content=content,
                pinned=pins,
                source=ProfileSource.SYNCED,
                now=now,
                commit=False,
            )
            row = session.get(UserProfileRow, store.PROFILE_ID)
            revision = session.get(ProfileRevisionRow, row.revision_id) if row else None
            if revision is not None:
                revision.device = ", ".join(doc.sources(PROFILE_ITEM, PROFILE)) or None
                session.add(revision)
            result.inserted += here is None
            result.updated += here is not None
        current = self.records(session)[PROFILE_ITEM]
        for lost in items.lost_values(PROFILE_ITEM):
            gid = conflict_gid(lost.edit_id)
            exists = session.exec(
                select(col(ProfileRevisionRow.id)).where(ProfileRevisionRow.gid == gid)
            ).first()
            if exists is not None or not isinstance(lost.value, str):
                continue
            lost_content = lost.value if lost.field == "content" else current["content"]
            lost_pins = lost.value if lost.field == "pinned" else current["pinned"]
            session.add(
                ProfileRevisionRow(
                    gid=gid,
                    created_at=now,
                    source=ProfileSource.CONFLICT,
                    content=lost_content,
                    pinned_json=pins_to_json(pins_from_json(lost_pins)),
                    device=lost.device_name or None,
                )
            )
            result.conflicts += 1
        session.flush()
        return result
