"""When a conversation is summarised (DESIGN §6): a pure function of conversation, settings, time.

Tested exhaustively without a loop, a database or a model.

A conversation is *due* when summaries (and memory) are on, it is not temporary, it has at
least ``min_user_turns`` user turns in its current history, at least one of them after what the
latest summary or SKIP covered, the last successful attempt is ``min_gap`` ago or there was
none, and any error backoff has passed. When everything but the time holds, it is due *at* the
moment the gap (or the backoff) ends, so the job is scheduled for then and does not wait for
another message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.summaries.records import SummaryActivity

#: Wait before retrying after the first error; each further error triples it, up to the cap.
FIRST_RETRY_DELAY: Final = timedelta(minutes=10)
RETRY_FACTOR: Final = 3
MAX_RETRY_DELAY: Final = timedelta(hours=24)
#: Conversations changed within this long are checked at start-up.
STARTUP_LOOKBACK: Final = timedelta(days=7)


@dataclass(frozen=True)
class RuleSettings:
    """The rule's settings (``summaries.*`` and ``memory.enabled``).

    Attributes:
        enabled: Memory and summaries are both on.
        min_user_turns: ``summaries.min_user_turns`` (default 6).
        min_gap: ``summaries.min_gap_minutes`` (default 120 minutes).
    """

    enabled: bool = True
    min_user_turns: int = 6
    min_gap: timedelta = timedelta(minutes=120)

    @classmethod
    def from_settings(cls, settings: SettingsStore) -> RuleSettings:
        """The rule's settings as ``settings`` holds them now."""
        return cls(
            enabled=settings.get_bool("memory.enabled") and settings.get_bool("summaries.enabled"),
            min_user_turns=settings.get_int("summaries.min_user_turns"),
            min_gap=timedelta(minutes=settings.get_int("summaries.min_gap_minutes")),
        )


NotDueReason = Literal["disabled", "temporary", "too_few_turns", "nothing_new"]


@dataclass(frozen=True)
class Due:
    """Summarise now."""


@dataclass(frozen=True)
class DueAt:
    """Summarise at ``when`` (the gap or the backoff ends then); nothing else is missing."""

    when: datetime
    #: ``"gap"`` or ``"backoff"``: which wait ends last.
    waiting_for: Literal["gap", "backoff"]


@dataclass(frozen=True)
class NotDue:
    """Not due, and no time will make it due: something else must change first."""

    reason: NotDueReason


Decision = Due | DueAt | NotDue


def summary_due(activity: SummaryActivity, settings: RuleSettings, now: datetime) -> Decision:
    """Decide whether a conversation is due for a summary.

    Args:
        activity: The conversation's turns and its summary bookkeeping.
        settings: The rule's settings.
        now: The current time (from the injected clock).

    Returns:
        ``Due``, ``DueAt(when)`` or ``NotDue(reason)``.
    """
    if not settings.enabled:
        return NotDue("disabled")
    if activity.temporary:
        return NotDue("temporary")
    if activity.user_turns < settings.min_user_turns:
        return NotDue("too_few_turns")
    if activity.new_user_turns <= 0:
        return NotDue("nothing_new")
    gap_end = activity.succeeded_at + settings.min_gap if activity.succeeded_at else None
    waits = [(w, kind) for w, kind in ((gap_end, "gap"), (activity.retry_at, "backoff")) if w]
    if not waits:
        return Due()
    when, kind = max(waits, key=lambda item: item[0])
    if when <= now:
        return Due()
    return DueAt(when, "gap" if kind == "gap" else "backoff")


def decisions(
    activities: Iterable[SummaryActivity], settings: RuleSettings, now: datetime
) -> list[tuple[int, Decision]]:
    """The decision for each conversation, by conversation id (the start-up derivation)."""
    return [(a.conversation_id, summary_due(a, settings, now)) for a in activities]


def retry_delay(error_count: int) -> timedelta:
    """The backoff after the ``error_count``-th error in a row (1-based).

    Args:
        error_count: Errors since the last successful attempt, this one included.

    Returns:
        10 minutes after the first, tripled for each further one, at most 24 hours.
    """
    steps = max(error_count, 1) - 1
    # Capped before multiplying: 3**n overflows timedelta for a long run of errors.
    if steps >= 8:
        return MAX_RETRY_DELAY
    return min(FIRST_RETRY_DELAY * int(RETRY_FACTOR**steps), MAX_RETRY_DELAY)
