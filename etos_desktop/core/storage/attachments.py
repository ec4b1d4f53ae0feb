"""Attached files: their bytes, content-addressed in the data folder, and their rows.

The bytes of an attachment live in ``<data>/attachments/<first two hex digits>/<sha256>``
(DESIGN §12): the same file attached twice is stored once, folders are ``0700`` and files
``0600`` like everything else in the data folder, and a file is written atomically under its
final name, so a name that exists holds the whole file. Which message carries which file is
the ``message_attachment`` table. A file no row names any more is removed (``remove_unused``
after a delete, ``sweep`` at start-up for what a crash left behind): deleting a conversation
deletes its files.

``BlobStore`` is plain file work (call it from a worker thread); ``AttachmentRepository`` runs
its queries on the database's one worker thread and its file work in another thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sqlmodel import Session, col, delete, select

from etos_desktop.core.settings.paths import atomic_write_private, make_private_dir, storage_error
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import MessageAttachmentRow, MessageRow

#: The folder inside the data folder.
ATTACHMENTS_DIR: Final = "attachments"
_SHA256_RE: Final = re.compile(r"[0-9a-f]{64}")


def sha256_hex(data: bytes) -> str:
    """The content address of ``data``: its SHA-256 as 64 lower-case hex digits."""
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """Content-addressed files under one folder (runs in the calling thread: not the UI's).

    Args:
        root: The folder, normally ``<data>/attachments`` (created ``0700`` when first written).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        """Where the file named ``sha256`` lives.

        Raises:
            ValueError: ``sha256`` is not 64 lower-case hex digits (a name from outside
                cannot point anywhere else).
        """
        if not _SHA256_RE.fullmatch(sha256):
            raise ValueError(f"not a sha256: {sha256!r}")
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        """Store ``data`` (once) and return its sha256.

        Raises:
            StorageError: It could not be written (disk full, read-only, permission).
        """
        sha = sha256_hex(data)
        target = self.path(sha)
        if target.is_file() and target.stat().st_size == len(data):
            # Touched: a removal that began before this put (``remove(older_than=…)``) spares it.
            with contextlib.suppress(OSError):
                os.utime(target)
            return sha
        make_private_dir(self.root)
        make_private_dir(target.parent)
        atomic_write_private(target, data)
        return sha

    def read(self, sha256: str) -> bytes:
        """The bytes of the file named ``sha256``.

        Raises:
            StorageError: It is missing or unreadable (``reason`` ``io``…).
        """
        path = self.path(sha256)
        try:
            return path.read_bytes()
        except OSError as exc:
            raise storage_error(exc, path) from exc

    def remove(self, sha256: str, *, older_than: float | None = None) -> bool:
        """Delete the file named ``sha256`` (and its folder when empty); whether it was deleted.

        Args:
            sha256: Its name.
            older_than: Keep it if it was written or stored again (``put``) at this time
                (``time.time()``) or later: a message being saved may be about to name it.
        """
        path = self.path(sha256)
        try:
            if older_than is not None and path.stat().st_mtime >= older_than:
                return False
            path.unlink()
        except FileNotFoundError:
            return False
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty
        return True

    def names(self) -> set[str]:
        """The sha256 of every file stored (stray temporary files are not among them)."""
        if not self.root.is_dir():
            return set()
        found: set[str] = set()
        for folder in self.root.iterdir():
            if folder.is_dir() and len(folder.name) == 2:
                found.update(
                    entry.name
                    for entry in folder.iterdir()
                    if _SHA256_RE.fullmatch(entry.name) and entry.name[:2] == folder.name
                )
        return found

    def remove_strays(self) -> int:
        """Remove what an interrupted write left (``.<name>.….tmp``); how many were removed."""
        removed = 0
        if not self.root.is_dir():
            return 0
        for folder in self.root.iterdir():
            if not folder.is_dir():
                continue
            for entry in folder.iterdir():
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        entry.unlink()
                        removed += 1
        return removed


@dataclass(frozen=True)
class AttachmentRecord:
    """A stored attachment as the rest of the app sees it (a row, detached).

    Args:
        id: Its row id.
        message_id: The user message it belongs to.
        position: Its place among that message's attachments.
        kind: ``"image"`` or ``"document"``.
        name: The file's name.
        mime: The stored image's type, or the original document's.
        size: The original file's size in bytes.
        sha256: The name of its bytes in the ``BlobStore``.
        tokens: Its token estimate.
        width: An image's width in pixels (as stored and sent), else ``None``.
        height: An image's height, else ``None``.
    """

    id: int
    message_id: int
    position: int
    kind: str
    name: str
    mime: str
    size: int
    sha256: str
    tokens: int
    width: int | None
    height: int | None

    @classmethod
    def from_row(cls, row: MessageAttachmentRow) -> AttachmentRecord:
        """The record of a row."""
        return cls(
            id=row.id or 0,
            message_id=row.message_id,
            position=row.position,
            kind=row.kind,
            name=row.name,
            mime=row.mime,
            size=row.size,
            sha256=row.sha256,
            tokens=row.tokens,
            width=row.width,
            height=row.height,
        )


@dataclass(frozen=True)
class NewAttachment:
    """What is stored for one attachment of a new message.

    Args:
        kind: ``"image"`` or ``"document"``.
        name: The file's name.
        mime: See ``AttachmentRecord.mime``.
        size: The original file's size in bytes.
        data: The bytes stored and sent (the prepared image, or the document's UTF-8 text).
        tokens: Its token estimate.
        width: An image's width, else ``None``.
        height: An image's height, else ``None``.
    """

    kind: str
    name: str
    mime: str
    size: int
    data: bytes
    tokens: int
    width: int | None = None
    height: int | None = None


class AttachmentRepository:
    """The attachments of messages: rows on the DB thread, bytes in the ``BlobStore``.

    Args:
        db: The open database.
        blobs: Where the bytes are.
    """

    def __init__(self, db: Database, blobs: BlobStore) -> None:
        self._db = db
        self.blobs = blobs

    async def attach(
        self, message_id: int, attachments: Sequence[NewAttachment]
    ) -> list[AttachmentRecord]:
        """Store the bytes of ``attachments`` and link them to a message, in order.

        The files are written first (in a worker thread), then the rows in one transaction:
        a failure leaves no row, and at worst a file that ``sweep`` removes.

        Raises:
            StorageError: A file or the rows could not be written.
        """
        shas = await asyncio.to_thread(lambda: [self.blobs.put(a.data) for a in attachments])
        now = self._db.clock.now()

        def work(session: Session) -> list[AttachmentRecord]:
            rows = [
                MessageAttachmentRow(
                    message_id=message_id,
                    position=position,
                    kind=item.kind,
                    name=item.name,
                    mime=item.mime,
                    size=item.size,
                    sha256=sha,
                    tokens=item.tokens,
                    width=item.width,
                    height=item.height,
                    created_at=now,
                )
                for position, (item, sha) in enumerate(zip(attachments, shas, strict=True))
            ]
            session.add_all(rows)
            session.commit()
            for row in rows:
                session.refresh(row)
            return [AttachmentRecord.from_row(row) for row in rows]

        return await self._db.run(work)

    async def copy(self, from_message_id: int, to_message_id: int) -> list[AttachmentRecord]:
        """Give ``to_message_id`` the attachments of ``from_message_id`` (an edited message)."""
        now = self._db.clock.now()

        def work(session: Session) -> list[AttachmentRecord]:
            query = (
                select(MessageAttachmentRow)
                .where(MessageAttachmentRow.message_id == from_message_id)
                .order_by(col(MessageAttachmentRow.position))
            )
            rows = [
                MessageAttachmentRow(
                    **old.model_dump(exclude={"id", "message_id", "created_at"}),
                    message_id=to_message_id,
                    created_at=now,
                )
                for old in session.exec(query).all()
            ]
            session.add_all(rows)
            session.commit()
            for row in rows:
                session.refresh(row)
            return [AttachmentRecord.from_row(row) for row in rows]

        return await self._db.run(work)

    async def for_messages(self, message_ids: Sequence[int]) -> dict[int, list[AttachmentRecord]]:
        """The attachments of each of ``message_ids`` that has any, in order (one query)."""
        wanted = sorted(set(message_ids))
        if not wanted:
            return {}

        def work(session: Session) -> dict[int, list[AttachmentRecord]]:
            query = (
                select(MessageAttachmentRow)
                .where(col(MessageAttachmentRow.message_id).in_(wanted))
                .order_by(col(MessageAttachmentRow.message_id), col(MessageAttachmentRow.position))
            )
            found: dict[int, list[AttachmentRecord]] = {}
            for row in session.exec(query).all():
                found.setdefault(row.message_id, []).append(AttachmentRecord.from_row(row))
            return found

        return await self._db.run(work)

    async def of_conversation(self, conversation_id: int) -> set[str]:
        """The sha256 of every file the conversation's messages name (before deleting it)."""

        def work(session: Session) -> set[str]:
            query = (
                select(MessageAttachmentRow.sha256)
                .join(MessageRow, col(MessageRow.id) == col(MessageAttachmentRow.message_id))
                .where(MessageRow.conversation_id == conversation_id)
            )
            return set(session.exec(query).all())

        return await self._db.run(work)

    async def of_message(self, message_id: int) -> set[str]:
        """The sha256 of every file a message names (before deleting it)."""

        def work(session: Session) -> set[str]:
            query = select(MessageAttachmentRow.sha256).where(
                MessageAttachmentRow.message_id == message_id
            )
            return set(session.exec(query).all())

        return await self._db.run(work)

    async def remove_unused(self, shas: set[str]) -> int:
        """Delete the files among ``shas`` that no row names any more; how many were removed."""
        if not shas:
            return 0
        started = time.time()

        def work(session: Session) -> set[str]:
            query = select(MessageAttachmentRow.sha256).where(
                col(MessageAttachmentRow.sha256).in_(sorted(shas))
            )
            return set(session.exec(query).all())

        used = await self._db.run(work)
        unused = sorted(shas - used)
        return sum(
            await asyncio.to_thread(
                lambda: [self.blobs.remove(s, older_than=started) for s in unused]
            )
        )

    async def sweep(self) -> int:
        """Remove every stored file no row names, and stray temporary files (at start-up).

        A file written for a message whose save then failed, or left when the app stopped
        between a delete and the file's removal, goes here. Returns how many were removed.
        """
        started = time.time()
        stored = await asyncio.to_thread(self.blobs.names)
        strays = await asyncio.to_thread(self.blobs.remove_strays)
        if not stored:
            return strays

        def work(session: Session) -> set[str]:
            return set(session.exec(select(MessageAttachmentRow.sha256).distinct()).all())

        unused = stored - await self._db.run(work)
        removed = await asyncio.to_thread(
            lambda: [self.blobs.remove(s, older_than=started) for s in sorted(unused)]
        )
        return strays + sum(removed)

    async def read(self, sha256: str) -> bytes:
        """The bytes of one stored file (read in a worker thread).

        Raises:
            StorageError: The file is missing or unreadable.
        """
        return await asyncio.to_thread(self.blobs.read, sha256)

    async def delete_rows(self, message_id: int) -> None:
        """Delete a message's attachment rows (its files are left to ``remove_unused``)."""

        def work(session: Session) -> None:
            session.exec(
                delete(MessageAttachmentRow).where(
                    col(MessageAttachmentRow.message_id) == message_id
                )
            )
            session.commit()

        await self._db.run(work)


def blob_root(data_dir: Path) -> Path:
    """The attachments folder inside ``data_dir`` (not created here)."""
    return data_dir / ATTACHMENTS_DIR


__all__ = [
    "ATTACHMENTS_DIR",
    "AttachmentRecord",
    "AttachmentRepository",
    "BlobStore",
    "NewAttachment",
    "blob_root",
    "sha256_hex",
]
