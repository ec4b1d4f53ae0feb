"""Records for pure tests: a ``Memory`` as the engine would return it."""

from __future__ import annotations

from datetime import datetime

from etos_desktop.core.memory.records import Memory


def make_memory(mid: int, text: str, when: datetime, kind: str = "fact") -> Memory:
    """An active, manually saved memory created (and valid from) ``when``."""
    return Memory(
        id=mid,
        content=text,
        kind=kind,
        source="manual",
        importance=0.5,
        confidence=1.0,
        tags=(),
        trigger_context=None,
        valid_from=when,
        valid_until=None,
        superseded_by=None,
        archived_at=None,
        created_at=when,
        updated_at=when,
        access_count=0,
        last_accessed_at=None,
        origin_message_id=None,
    )
