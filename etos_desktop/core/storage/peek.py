"""A read-only first look at the conversation list, for the first frame.

It uses only the standard ``sqlite3`` module, so it runs before SQLAlchemy and SQLModel are
imported, and it never writes (the file is opened read-only): the real start-up (migrations,
recovery) happens right after and replaces what this shows.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from etos_desktop.core.storage.migrations import LATEST_VERSION


@dataclass(frozen=True)
class SidebarRow:
    """What the sidebar shows of one conversation."""

    id: int
    title: str
    updated_at: datetime
    pinned: bool
    archived: bool
    temporary: bool
    #: ``"companion"`` for a check-in (``None``: the user started it).
    started_by: str | None = None


def _parse_time(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def peek_conversations(path: Path, limit: int = 5000) -> list[SidebarRow] | None:
    """Read the newest active conversations, or ``None`` when that is not safely possible.

    ``None`` means: no file yet, a schema this version would migrate, or any read error. The
    caller then simply waits for the full start-up.
    """
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return None
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != LATEST_VERSION:
            return None
        rows = conn.execute(
            "SELECT id, title, updated_at, pinned, archived, temporary, started_by FROM conversation "
            "WHERE archived = 0 ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [
            SidebarRow(
                id=int(r[0]),
                title=str(r[1]),
                updated_at=_parse_time(str(r[2])),
                pinned=bool(r[3]),
                archived=bool(r[4]),
                temporary=bool(r[5]),
                started_by=None if r[6] is None else str(r[6]),
            )
            for r in rows
        ]
    except (sqlite3.Error, ValueError):
        return None
    finally:
        conn.close()
