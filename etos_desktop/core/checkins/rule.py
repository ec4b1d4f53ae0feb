"""When the companion checks in: pure functions of the settings, the data, the clock and the zone.

The rule (issue 23), all in the user's local time:

* **Off** unless ``checkins.enabled``; never while memory is off, without a configured provider,
  or when every persona's switch is off.
* **Silence** mode: due ``after_days`` days after the later of the user's last message and the
  last shown check-in (so a user who stays away hears from the companion every ``after_days``
  days, not every day). Never before a first conversation.
* **Daily** mode: due at ``time`` every day. A greeting up to ``LATE_GRACE`` late still goes
  (the app started, the computer woke up); a later one waits for the next day.
* **Quiet hours**: a check-in due inside them waits until they end (22:00–08:00 crosses
  midnight: one due at 23:00 comes at 08:00 the next morning). Checked at the moment it would
  be shown, so one overdue since yesterday still waits when the app starts at night.
* **Not mid-conversation**: never within ``BUSY_GAP`` of the user's last message.
* **At most one a day**, across personas (and devices, once the check-ins sync): after a check-in
  — shown or failed — the next is on a later local day. A failed one (server down, rate limit)
  shows nothing and is tried again at the next due time: the next day's time in daily mode, a
  day later in silence mode. Never in a loop.
* **A clock that jumps backwards**: a check-in or message "in the future" counts as now, so it
  blocks the rest of today, never longer, and never lets a second one through today.

The scheduler (``services/checkin_jobs.py``) schedules the time :func:`decide` returns and asks
again when it fires: whatever changed meanwhile (a message, a setting, the clock) decides then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Final, Literal

from etos_desktop.core.checkins.records import CheckinSettings, CheckinState, QuietHours

#: A daily greeting this late is still shown; later, it waits for the next day.
LATE_GRACE: Final = timedelta(hours=2)
#: No check-in within this long after the user's last message (they are talking already).
BUSY_GAP: Final = timedelta(minutes=30)
#: In silence mode a failed check-in is tried again this much later.
RETRY_AFTER_FAILURE: Final = timedelta(days=1)
_DAY: Final = timedelta(days=1)
#: Days a daily slot is looked for (more than enough: one of the next two always fits).
_SEARCH_DAYS: Final = 8

Reason = Literal["waiting", "off", "memory_off", "no_provider", "no_persona", "no_conversation"]


@dataclass(frozen=True)
class Decision:
    """When the next check-in is due, or why there is none.

    Attributes:
        at: The time (aware UTC; at or after ``now``), or ``None``.
        reason: ``"waiting"`` with a time; else why none is due: ``"off"``, ``"memory_off"``,
            ``"no_provider"``, ``"no_persona"`` (every persona's switch is off) or
            ``"no_conversation"`` (silence mode before a first conversation).
    """

    at: datetime | None
    reason: Reason

    def due(self, now: datetime) -> bool:
        """Whether the check-in is due at ``now``."""
        return self.at is not None and self.at <= now


def minute_of_day(moment: datetime, zone: tzinfo) -> int:
    """The local minutes after midnight of ``moment``."""
    local = moment.astimezone(zone)
    return local.hour * 60 + local.minute


def local_date(moment: datetime, zone: tzinfo) -> date:
    """The local calendar day of ``moment``."""
    return moment.astimezone(zone).date()


def at_local(day: date, minute: int, zone: tzinfo) -> datetime:
    """The moment the local clock shows ``minute`` on ``day``.

    A time a daylight-saving change skipped is taken with the offset before it, which lands
    just after the change.
    """
    hour, rest = divmod(minute, 60)
    return datetime(day.year, day.month, day.day, hour, rest, tzinfo=zone).astimezone(UTC)


def in_quiet_hours(quiet: QuietHours | None, moment: datetime, zone: tzinfo) -> bool:
    """Whether ``moment`` is inside the quiet hours."""
    return quiet is not None and quiet.contains(minute_of_day(moment, zone))


def after_quiet_hours(quiet: QuietHours | None, moment: datetime, zone: tzinfo) -> datetime:
    """``moment``, or the end of the quiet hours it is in."""
    if quiet is None or not in_quiet_hours(quiet, moment, zone):
        return moment
    day = local_date(moment, zone)
    if quiet.start > quiet.end and minute_of_day(moment, zone) >= quiet.start:
        day += _DAY  # late evening: they end tomorrow morning
    end = at_local(day, quiet.end, zone)
    return end if end > moment else moment


def _not_after(moment: datetime | None, now: datetime) -> datetime | None:
    # A time after now was written before the clock went back: it counts as now.
    return None if moment is None else min(moment, now)


def next_checkin(
    settings: CheckinSettings, state: CheckinState, now: datetime, zone: tzinfo
) -> datetime | None:
    """When the next check-in is due by time alone (the switches aside).

    Args:
        settings: The check-in settings (``enabled`` is not looked at).
        state: The last check-ins and the user's last message.
        now: The current time.
        zone: The user's local time zone.

    Returns:
        The time, at or after ``now`` (``now``: due now), or ``None`` in silence mode before
        a first conversation.
    """
    last_attempt = _not_after(state.last_attempt_at, now)
    last_day = local_date(last_attempt, zone) if last_attempt is not None else None
    last_user = _not_after(state.last_user_message_at, now)
    quiet = settings.quiet
    if settings.mode == "daily":
        today = local_date(now, zone)
        candidate = None
        for offset in range(-1, _SEARCH_DAYS):
            shown = after_quiet_hours(
                quiet, at_local(today + timedelta(days=offset), settings.time, zone), zone
            )
            if shown < now - LATE_GRACE:
                continue
            if last_day is not None and local_date(shown, zone) <= last_day:
                continue
            candidate = shown
            break
        if candidate is None:  # pragma: no cover - one of the next two days always fits
            return None
        candidate = max(candidate, now)
    else:
        last_shown = _not_after(state.last_shown_at, now)
        since = [t for t in (last_user, last_shown) if t is not None]
        if not since:
            return None
        candidate = max(max(since) + timedelta(days=settings.after_days), now)
        if last_attempt is not None:
            candidate = max(candidate, last_attempt + RETRY_AFTER_FAILURE)
    if last_user is not None:
        candidate = max(candidate, last_user + BUSY_GAP)
    # Both only move it later, so it stays on a day after the last check-in.
    return after_quiet_hours(quiet, candidate, zone)


def decide(
    settings: CheckinSettings,
    state: CheckinState,
    now: datetime,
    zone: tzinfo,
    *,
    memory_enabled: bool,
    provider_configured: bool,
    persona_available: bool = True,
) -> Decision:
    """The next check-in: when, or why there is none.

    Args:
        settings: The check-in settings.
        state: The last check-ins and the user's last message.
        now: The current time.
        zone: The user's local time zone.
        memory_enabled: ``memory.enabled`` (never a check-in without memory).
        provider_configured: A model provider is set up.
        persona_available: Some persona's switch is on.

    Returns:
        The decision.
    """
    if not settings.enabled:
        return Decision(None, "off")
    if not memory_enabled:
        return Decision(None, "memory_off")
    if not provider_configured:
        return Decision(None, "no_provider")
    if not persona_available:
        return Decision(None, "no_persona")
    at = next_checkin(settings, state, now, zone)
    if at is None:
        return Decision(None, "no_conversation")
    return Decision(at, "waiting")
