"""A database as schema version 9 left it (before the message index), holding messages."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from etos_desktop.core.storage.migrations import MIGRATIONS, migrate

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
V10 = next(i for i, m in enumerate(MIGRATIONS) if m.version == 10)


def _stamp(moment: datetime) -> str:
    # How SQLAlchemy stores a datetime in SQLite (naive UTC text).
    return moment.astimezone(UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")


def make_v9_database(path: Path, conversations: int, per_conversation: int) -> list[int]:
    """A database as version 9 left it, with messages; returns the message ids, oldest first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, None, now=NOW, migrations=MIGRATIONS[:V10])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 9
    ids = []
    moment = NOW - timedelta(days=400)
    for c in range(conversations):
        cid = conn.execute(
            "INSERT INTO conversation (title, created_at, updated_at) VALUES (?, ?, ?)",
            (f"Old conversation {c}", _stamp(moment), _stamp(moment)),
        ).lastrowid
        for m in range(per_conversation):
            moment += timedelta(minutes=7)
            if c == 0 and m == 3:
                text = "很久以前我们聊过那台咖啡机的 zebracorn 故事"
            elif m % 2:
                text = f"Reply {m} about gardening and the weather in conversation {c}."
            else:
                text = f"第{m}条消息：今天的天气不错，我们去公园散步吧。"
            ids.append(
                conn.execute(
                    "INSERT INTO message (conversation_id, role, content, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (cid, "assistant" if m % 2 else "user", text, _stamp(moment)),
                ).lastrowid
            )
    conn.close()
    return ids
