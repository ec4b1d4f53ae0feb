"""Async access to the check-ins for code on the event loop (the jobs, Settings).

Every read and write runs on the DB worker thread (``Database.run``).
"""

from __future__ import annotations

from datetime import datetime

from etos_desktop.core.checkins import store
from etos_desktop.core.checkins.records import Checkin, CheckinState, Persona
from etos_desktop.core.profile.store import recent_user_texts
from etos_desktop.core.storage.database import Database


class CheckinAccess:
    """The check-in log and the conversations check-ins start.

    Args:
        db: The open database (schema v12 or later).
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    async def state(self) -> CheckinState:
        """The newest check-ins and the user's last message."""
        return await self._db.run(store.state)

    async def personas(self) -> list[Persona]:
        """Every persona, the most recently used first (``store.personas``)."""
        return await self._db.run(store.personas)

    async def recent_user_texts(self, limit: int) -> list[str]:
        """The user's latest messages outside temporary conversations (the request's language)."""
        return await self._db.run(lambda s: recent_user_texts(s, limit))

    async def write_shown(
        self,
        *,
        now: datetime,
        reason: str,
        persona: Persona,
        text: str,
        model: str,
        trace_json: str,
    ) -> tuple[int, int]:
        """Start a check-in's conversation and count it (``store.write_shown``)."""
        return await self._db.run(
            lambda s: store.write_shown(
                s,
                now=now,
                reason=reason,
                persona=persona,
                text=text,
                model=model,
                trace_json=trace_json,
            )
        )

    async def record_failure(self, *, now: datetime, reason: str, persona: str, error: str) -> None:
        """Count a check-in that showed nothing."""
        await self._db.run(
            lambda s: store.record_failure(s, now=now, reason=reason, persona=persona, error=error)
        )

    async def recent(self, limit: int = 50) -> list[Checkin]:
        """The newest check-ins, newest first."""
        return await self._db.run(lambda s: store.recent(s, limit))
