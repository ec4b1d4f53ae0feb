"""Domain values of the user profile: frozen dataclasses handed out by the profile store."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from etos_desktop.core.storage.tables import ProfileRevisionRow, UserProfileRow


class ProfileSource(StrEnum):
    """How a version of the profile came to be."""

    #: The daily job, from new summaries and memories.
    SCHEDULED = "scheduled"
    #: The user's "Refresh now" (generated like a scheduled one, on request).
    REQUESTED = "requested"
    #: The user's edit in Settings (text or pins).
    MANUAL = "manual"
    #: The user cleared it.
    CLEARED = "cleared"
    #: The user brought an earlier version back.
    RESTORED = "restored"
    #: An import file.
    IMPORTED = "imported"
    #: Another device's version, merged by sync (``device`` says which).
    SYNCED = "synced"
    #: Another device's concurrent version that did not stay (sync kept it here, flagged).
    CONFLICT = "conflict"


class RefreshOutcome(StrEnum):
    """What the last refresh of the profile ended with."""

    CHANGED = "changed"
    UNCHANGED = "unchanged"
    NOTHING_NEW = "nothing_new"
    ERROR = "error"


@dataclass(frozen=True)
class PinnedLine:
    """A line the user pinned: kept word for word by every refresh.

    Attributes:
        text: The line exactly as it is in the profile (surrounding spaces removed).
        section: The key of the section it belongs to (``"identity"``…), the text of an
            unknown section's heading, or ``""`` for a line above the first heading.
    """

    text: str
    section: str = ""


def pins_to_json(pins: Iterable[PinnedLine]) -> str:
    """Pins as the JSON the tables hold."""
    return json.dumps([{"section": p.section, "text": p.text} for p in pins], ensure_ascii=False)


def pins_from_json(text: str | None) -> tuple[PinnedLine, ...]:
    """Pins from the tables' JSON (anything malformed is skipped)."""
    try:
        raw = json.loads(text or "[]")
    except ValueError:
        return ()
    pins = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            section = item.get("section")
            pins.append(PinnedLine(item["text"], section if isinstance(section, str) else ""))
    return tuple(pins)


def _ids(text: str | None) -> tuple[int, ...]:
    try:
        raw = json.loads(text or "[]")
    except ValueError:
        return ()
    return tuple(int(i) for i in raw if isinstance(i, int)) if isinstance(raw, list) else ()


@dataclass(frozen=True)
class Profile:
    """The current profile and its refresh bookkeeping.

    Attributes:
        content: The Markdown profile ("" when there is none).
        pinned: The pinned lines.
        revision_id: The revision holding this text (``None`` before the first).
        updated_at: When the text or the pins last changed.
        material_until: Summaries and memories changed after this are new material.
        checked_at: The last refresh that ended without an error.
        attempted_at: The last refresh of any outcome.
        retry_at: The end of the backoff after a failed refresh.
        error_count: Failed refreshes in a row.
        last_error: The error code of the last failed refresh.
        last_outcome: A ``RefreshOutcome`` value, or ``None`` before the first refresh.
    """

    content: str = ""
    pinned: tuple[PinnedLine, ...] = ()
    revision_id: int | None = None
    updated_at: datetime | None = None
    material_until: datetime | None = None
    checked_at: datetime | None = None
    attempted_at: datetime | None = None
    retry_at: datetime | None = None
    error_count: int = 0
    last_error: str | None = None
    last_outcome: str | None = None

    @classmethod
    def from_row(cls, row: UserProfileRow | None) -> Profile:
        """Build from the row (``None``: no profile yet)."""
        if row is None:
            return cls()
        return cls(
            content=row.content,
            pinned=pins_from_json(row.pinned_json),
            revision_id=row.revision_id,
            updated_at=row.updated_at,
            material_until=row.material_until,
            checked_at=row.checked_at,
            attempted_at=row.attempted_at,
            retry_at=row.retry_at,
            error_count=row.error_count,
            last_error=row.last_error,
            last_outcome=row.last_outcome,
        )

    @property
    def empty(self) -> bool:
        """Whether there is no profile text."""
        return not self.content.strip()


@dataclass(frozen=True)
class ProfileRevision:
    """One version of the profile.

    Attributes:
        id: The revision's id.
        created_at: When it was written.
        source: A ``ProfileSource`` value.
        content: Its text.
        pinned: Its pinned lines.
        summary_ids: The summaries a refresh built it from.
        memory_ids: The memories a refresh built it from.
        restored_from: For a restore, the revision it brought back.
        device: For a synced or conflict version, the device it came from.
    """

    id: int
    created_at: datetime
    source: str
    content: str
    pinned: tuple[PinnedLine, ...] = ()
    summary_ids: tuple[int, ...] = ()
    memory_ids: tuple[int, ...] = ()
    restored_from: int | None = None
    device: str | None = None

    @classmethod
    def from_row(cls, row: ProfileRevisionRow) -> ProfileRevision:
        """Build from a row."""
        return cls(
            id=row.id or 0,
            created_at=row.created_at,
            source=row.source,
            content=row.content,
            pinned=pins_from_json(row.pinned_json),
            summary_ids=_ids(row.summary_ids_json),
            memory_ids=_ids(row.memory_ids_json),
            restored_from=row.restored_from,
            device=row.device,
        )


@dataclass(frozen=True)
class MaterialItem:
    """One new summary or memory a refresh reads.

    Attributes:
        kind: ``"summary"`` or ``"memory"``.
        id: Its id.
        when: When it was written or last changed.
        text: Its text.
        title: A summary's conversation title; a memory's kind.
    """

    kind: str
    id: int
    when: datetime
    text: str
    title: str = ""


@dataclass(frozen=True)
class Material:
    """What a refresh is built from: the new summaries and memories, newest first."""

    items: tuple[MaterialItem, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether there is nothing new."""
        return not self.items

    def ids(self, kind: str) -> tuple[int, ...]:
        """The ids of the items of ``kind``."""
        return tuple(i.id for i in self.items if i.kind == kind)


def id_list(ids: Sequence[int]) -> str:
    """Ids as the JSON the revision rows hold."""
    return json.dumps([int(i) for i in ids])


def as_dict(pin: PinnedLine) -> dict[str, Any]:
    """A pin as a JSON-ready dict (exports)."""
    return {"section": pin.section, "text": pin.text}
