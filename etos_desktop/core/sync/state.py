"""Sync's bookkeeping in the ``sync_state`` table: who this device is and what it has done.

Runs on the DB thread inside the caller's transaction, so a pass's changes to the memories and
the record that they were applied are committed together.
"""

from __future__ import annotations

import json
import socket
import uuid
from dataclasses import dataclass, field
from typing import Final

from sqlalchemy import text
from sqlmodel import Session

_DEVICE_ID: Final = "device.id"
_DEVICE_NAME: Final = "device.name"
_DOC: Final = "memory.doc"
_PENDING: Final = "memory.pending"
_PUBLISHED: Final = "memory.published"
_OWN_SEQ: Final = "own.seq"
_HELD: Final = "memory.held"
_APPLIED: Final = "applied."


@dataclass
class SyncState:
    """What this device remembers between passes.

    Attributes:
        device_id: This device's id (32 hex digits; its folder's name).
        device_name: The name other devices show in a memory's history.
        doc: The memory document's state after the last pass.
        pending: Remote updates that were waiting for their dependencies.
        published: The document's state vector when this device last published.
        own_seq: The last seq this device wrote.
        applied: Per other device, the last seq up to which every file was dealt with.
        held: Gids the document has that were not written to SQLite (their record did not
            pass the checks): never taken for local deletes, tried again each pass.
    """

    device_id: str
    device_name: str
    doc: bytes = b""
    pending: bytes = b""
    published: bytes = b""
    own_seq: int = 0
    applied: dict[str, int] = field(default_factory=dict)
    held: list[str] = field(default_factory=list)


def default_device_name() -> str:
    """The computer's name, as the first name of this device."""
    return socket.gethostname() or "device"


def load(session: Session) -> SyncState:
    """Read the bookkeeping; a device id (and name) are made on first use and saved by :func:`save`."""
    rows = {
        str(key): bytes(value)
        for key, value in session.execute(text("SELECT key, value FROM sync_state"))
    }
    applied = {
        key[len(_APPLIED) :]: int(value.decode("ascii"))
        for key, value in rows.items()
        if key.startswith(_APPLIED)
    }
    return SyncState(
        device_id=rows[_DEVICE_ID].decode("ascii") if _DEVICE_ID in rows else uuid.uuid4().hex,
        device_name=(
            rows[_DEVICE_NAME].decode("utf-8") if _DEVICE_NAME in rows else default_device_name()
        ),
        doc=rows.get(_DOC, b""),
        pending=rows.get(_PENDING, b""),
        published=rows.get(_PUBLISHED, b""),
        own_seq=int(rows[_OWN_SEQ].decode("ascii")) if _OWN_SEQ in rows else 0,
        applied=applied,
        held=[str(g) for g in json.loads(rows[_HELD].decode("utf-8"))] if _HELD in rows else [],
    )


def save(session: Session, state: SyncState) -> None:
    """Write the bookkeeping (the caller commits)."""
    values = {
        _DEVICE_ID: state.device_id.encode("ascii"),
        _DEVICE_NAME: state.device_name.encode("utf-8"),
        _DOC: state.doc,
        _PENDING: state.pending,
        _PUBLISHED: state.published,
        _OWN_SEQ: str(state.own_seq).encode("ascii"),
        _HELD: json.dumps(sorted(state.held)).encode("utf-8"),
        **{f"{_APPLIED}{d}": str(seq).encode("ascii") for d, seq in state.applied.items()},
    }
    session.execute(
        text("INSERT OR REPLACE INTO sync_state (key, value) VALUES (:key, :value)"),
        [{"key": key, "value": value} for key, value in values.items()],
    )


def set_device_name(session: Session, name: str) -> None:
    """Rename this device (shown in the other devices' histories from the next pass on)."""
    session.execute(
        text("INSERT OR REPLACE INTO sync_state (key, value) VALUES (:key, :value)"),
        {"key": _DEVICE_NAME, "value": name.encode("utf-8")},
    )


_FOLDER_ID: Final = "folder.id"
#: What a device keeps about itself whatever folder it syncs with.
_OWN_KEYS: Final = (_DEVICE_ID, _DEVICE_NAME, _FOLDER_ID)


def bind_folder(session: Session, folder_id: str) -> bool:
    """Record which sync folder this device syncs with; the caller commits.

    The bookkeeping (what was published, which files were applied, the document) belongs to
    one folder: a device set up again with another folder would otherwise believe the new one
    has everything it published to the old one. So for a folder other than the recorded one —
    or any, when no folder was recorded but passes were (an older version, the command line) —
    everything but the device's id and name is forgotten, and the next pass publishes the whole
    memory store there and reads every file. Nothing of the memories themselves changes.

    Args:
        session: A session on the DB thread.
        folder_id: The folder's id (``SyncKey.folder_id``, from its ``sync.json``).

    Returns:
        Whether the bookkeeping started over.
    """
    rows = {
        str(key): bytes(value)
        for key, value in session.execute(text("SELECT key, value FROM sync_state"))
    }
    recorded = rows.get(_FOLDER_ID)
    if recorded is not None and recorded.decode("ascii", "replace") == folder_id:
        return False
    stale = [key for key in rows if key not in _OWN_KEYS]
    if stale:
        session.execute(
            text("DELETE FROM sync_state WHERE key = :key"), [{"key": key} for key in stale]
        )
    session.execute(
        text("INSERT OR REPLACE INTO sync_state (key, value) VALUES (:key, :value)"),
        {"key": _FOLDER_ID, "value": folder_id.encode("ascii")},
    )
    return bool(stale)
