"""What a sync pass needs of each layer's SQLite side, and the memories' adapter.

A pass (``core/sync/service.py``) treats every layer alike: it reads the layer's records from
SQLite, writes them into the layer's root map of the document (and tombstones for the items that
are gone, where absence means a delete), merges the other devices' files, and hands the items
the merged files changed back to the layer to write into SQLite, in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from sqlmodel import Session, col, select

from etos_desktop.core.storage.tables import ConversationRow, MessageRow
from etos_desktop.core.sync import memories
from etos_desktop.core.sync.document import MEMORIES, LayerSpec, MemoryDocument, Record
from etos_desktop.core.sync.memories import Applied


class LayerStore(Protocol):
    """One layer's SQLite side.

    Attributes:
        spec: The layer's root map.
        tombstones: Whether an item missing from SQLite is a delete (memories, summaries);
            otherwise it is only not here yet (a summary state whose conversation is elsewhere).
        links: Fields holding another item's gid: where SQLite cannot name it (the item is not
            on this device), the document's value is kept rather than cleared.
    """

    spec: LayerSpec
    tombstones: bool
    links: tuple[str, ...]

    def records(self, session: Session) -> dict[str, Record]:
        """Every item of the layer in SQLite as a document record, by gid."""

    def apply(
        self, session: Session, doc: MemoryDocument, gids: Iterable[str], *, now: datetime
    ) -> Applied:
        """Write the document's state of ``gids`` into SQLite (the caller commits)."""


class MemoryStore:
    """The memories (``core/sync/memories.py``)."""

    spec = MEMORIES
    tombstones = True
    links: tuple[str, ...] = ()

    def records(self, session: Session) -> dict[str, Record]:
        """Every memory as a record."""
        return memories.records(session)

    def apply(
        self, session: Session, doc: MemoryDocument, gids: Iterable[str], *, now: datetime
    ) -> Applied:
        """Write remote memories (looked up at call time: tests stop a pass there)."""
        return memories.apply(session, doc, gids, now=now)


def with_links(record: Record, stored: Record | None, links: Iterable[str]) -> Record:
    """``record`` with the links SQLite could not name taken from the document's ``stored``."""
    if stored is None:
        return record
    missing = [name for name in links if record.get(name) is None and stored.get(name)]
    if not missing:
        return record
    return {**record, **{name: stored[name] for name in missing}}


def conversation_gids(session: Session, ids: Iterable[int | None]) -> dict[int, str]:
    """The gids of these conversations by local id."""
    return _gids(session, ConversationRow, ids)


def message_gids(session: Session, ids: Iterable[int | None]) -> dict[int, str]:
    """The gids of these messages by local id."""
    return _gids(session, MessageRow, ids)


def conversation_ids(session: Session, gids: Iterable[Any]) -> dict[str, int]:
    """The local ids of the conversations with these gids (the ones on this device)."""
    return _ids(session, ConversationRow, gids)


def message_ids(session: Session, gids: Iterable[Any]) -> dict[str, int]:
    """The local ids of the messages with these gids (the ones on this device)."""
    return _ids(session, MessageRow, gids)


def _gids(
    session: Session, table: type[ConversationRow] | type[MessageRow], ids: Iterable[int | None]
) -> dict[int, str]:
    wanted = sorted({i for i in ids if i is not None})
    found: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = session.exec(select(table.id, table.gid).where(col(table.id).in_(chunk))).all()
        found.update({int(i): str(g) for i, g in rows if i is not None})
    return found


def _ids(
    session: Session, table: type[ConversationRow] | type[MessageRow], gids: Iterable[Any]
) -> dict[str, int]:
    wanted = sorted({str(g) for g in gids if isinstance(g, str) and g})
    found: dict[str, int] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = session.exec(select(table.gid, table.id).where(col(table.gid).in_(chunk))).all()
        found.update({str(g): int(i) for g, i in rows if i is not None})
    return found
