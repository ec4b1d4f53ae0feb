"""When the profile is refreshed (DESIGN §7): pure functions of its bookkeeping and the time.

The daily run is at ``profile.refresh_hour`` local time (the scheduler service computes that
time with APScheduler's cron trigger). A desktop app is often closed then, so at start-up a
refresh whose last run is more than a day old is caught up, once. A failed refresh is retried
after a backoff (never later than the next daily run). Whether there is new material is checked
when the job runs, so a run without it sends nothing.

A change the user stated ("I switched from coffee to tea") that superseded a memory refreshes
the profile ``CHANGE_REFRESH_DELAY`` after it, not only at the next daily run: until then the
profile still says the old thing, dated earlier. The time comes from the data (the newest such
supersession the last refresh has not seen), so a restart derives it again; the ten minutes let
a few corrections in a row go out in one refresh.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from etos_desktop.core.profile.records import Profile

#: A start-up catches up a refresh whose last run is older than this.
CATCH_UP_AFTER: Final = timedelta(days=1)
#: Wait before retrying after the first error; each further error triples it, up to the cap.
FIRST_RETRY_DELAY: Final = timedelta(minutes=30)
RETRY_FACTOR: Final = 3
MAX_RETRY_DELAY: Final = timedelta(hours=24)
#: A supersession the user stated refreshes the profile this long after it.
CHANGE_REFRESH_DELAY: Final = timedelta(minutes=10)


def catch_up_due(profile: Profile, now: datetime) -> bool:
    """Whether the last refresh that ended without an error is more than a day old (or none)."""
    return profile.checked_at is None or now - profile.checked_at >= CATCH_UP_AFTER


def change_unseen(profile: Profile, changed_at: datetime | None) -> bool:
    """Whether a stated change at ``changed_at`` came after the last refresh that ended well."""
    return changed_at is not None and (
        profile.checked_at is None or changed_at > profile.checked_at
    )


def retry_delay(error_count: int) -> timedelta:
    """The backoff after the ``error_count``-th failed refresh in a row (1-based).

    Returns:
        30 minutes after the first, tripled for each further one, at most 24 hours.
    """
    steps = max(error_count, 1) - 1
    if steps >= 5:  # 30 min × 3**4 is already past the cap
        return MAX_RETRY_DELAY
    return min(FIRST_RETRY_DELAY * int(RETRY_FACTOR**steps), MAX_RETRY_DELAY)


def next_run(
    profile: Profile,
    now: datetime,
    next_daily: datetime,
    *,
    startup: bool = False,
    startup_delay: timedelta = timedelta(0),
    changed_at: datetime | None = None,
) -> datetime:
    """When the refresh job runs next.

    Args:
        profile: The profile's bookkeeping.
        now: The current time.
        next_daily: The next daily run time (``profile.refresh_hour`` local).
        startup: The app is starting: a refresh older than a day is caught up.
        startup_delay: How long after start-up a catch-up or an overdue retry runs.
        changed_at: The newest supersession the user stated (``None``: none).

    Returns:
        The earliest of the next daily run, a pending retry, (at start-up) a catch-up, and
        ``CHANGE_REFRESH_DELAY`` after a stated change the last refresh has not seen — never
        before a pending retry, so a failing server is not asked again at once.
    """
    earliest = now + startup_delay if startup else now
    candidates = [next_daily]
    retry_at = profile.retry_at if profile.error_count else None
    if retry_at is not None:
        candidates.append(max(retry_at, earliest))
    elif startup and catch_up_due(profile, now):
        candidates.append(earliest)
    if changed_at is not None and change_unseen(profile, changed_at):
        after_change = max(changed_at + CHANGE_REFRESH_DELAY, earliest)
        candidates.append(max(after_change, retry_at) if retry_at is not None else after_change)
    return min(candidates)
