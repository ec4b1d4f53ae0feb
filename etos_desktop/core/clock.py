"""Time as an injectable dependency, so time rules are tested without sleeping.

All datetimes are aware UTC; SQLModel stores them as UTC and returns them aware.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Something that tells the time."""

    def now(self) -> datetime:
        """Return the current time as an aware UTC datetime."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """Return the current time as an aware UTC datetime."""
        return datetime.now(UTC)


class FakeClock:
    """A clock that only moves when told to (for tests and benchmarks).

    Args:
        start: The initial time; naive values are taken as UTC.
    """

    def __init__(self, start: datetime | None = None) -> None:
        start = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._now = start if start.tzinfo else start.replace(tzinfo=UTC)

    def now(self) -> datetime:
        """Return the fake current time."""
        return self._now

    def advance(self, **delta: float) -> datetime:
        """Move the clock forward by ``timedelta(**delta)`` and return the new time."""
        self._now += timedelta(**delta)
        return self._now
