"""The check-in rule: pure, on explicit times in a real time zone (never the machine's)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from etos_desktop.core.checkins.records import (
    CheckinSettings,
    CheckinState,
    QuietHours,
    parse_personas_off,
    personas_off_value,
)
from etos_desktop.core.checkins.rule import (
    BUSY_GAP,
    LATE_GRACE,
    Decision,
    after_quiet_hours,
    decide,
    in_quiet_hours,
    next_checkin,
)

BERLIN = ZoneInfo("Europe/Berlin")
DAILY = CheckinSettings(enabled=True, mode="daily", time=9 * 60)
SILENCE = CheckinSettings(enabled=True, mode="silence", after_days=3)


def at(day: int, hour: int, minute: int = 0, month: int = 1) -> datetime:
    """A Berlin wall-clock time in 2026, as aware UTC."""
    return datetime(2026, month, day, hour, minute, tzinfo=BERLIN).astimezone(UTC)


def due_at(settings: CheckinSettings, state: CheckinState, now: datetime) -> datetime | None:
    return next_checkin(settings, state, now, BERLIN)


# -- the switches ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "memory", "provider", "persona", "reason"),
    [
        (CheckinSettings(), True, True, True, "off"),  # off by default
        (DAILY, False, True, True, "memory_off"),
        (DAILY, True, False, True, "no_provider"),
        (DAILY, True, True, False, "no_persona"),
    ],
)
def test_nothing_is_due_while_a_switch_says_no(settings, memory, provider, persona, reason):
    decision = decide(
        settings,
        CheckinState(last_user_message_at=at(1, 10)),
        at(5, 9),
        BERLIN,
        memory_enabled=memory,
        provider_configured=provider,
        persona_available=persona,
    )
    assert decision == Decision(None, reason)
    assert not decision.due(at(5, 9))


def test_decide_gives_the_time_when_every_switch_is_on():
    decision = decide(
        DAILY, CheckinState(), at(5, 7), BERLIN, memory_enabled=True, provider_configured=True
    )
    assert decision == Decision(at(5, 9), "waiting")
    assert not decision.due(at(5, 8, 59))
    assert decision.due(at(5, 9))


# -- daily -----------------------------------------------------------------------------------


def test_daily_fires_at_the_set_local_time():
    assert due_at(DAILY, CheckinState(), at(5, 7)) == at(5, 9)
    assert due_at(DAILY, CheckinState(), at(5, 9)) == at(5, 9)  # due now


def test_a_daily_greeting_up_to_the_grace_late_still_goes_later_waits_for_tomorrow():
    late = at(5, 9) + LATE_GRACE
    assert due_at(DAILY, CheckinState(), late) == late
    assert due_at(DAILY, CheckinState(), late + timedelta(minutes=1)) == at(6, 9)


@pytest.mark.parametrize("outcome", ["shown", "failed"])
def test_after_todays_check_in_shown_or_failed_the_next_is_tomorrow_at_the_time(outcome):
    state = CheckinState(
        last_attempt_at=at(5, 9),
        last_shown_at=at(5, 9) if outcome == "shown" else None,
    )
    for now in (at(5, 9), at(5, 9, 1), at(5, 12), at(5, 23, 59)):
        assert due_at(DAILY, state, now) == at(6, 9), now


def test_daily_time_inside_quiet_hours_comes_when_they_end_each_day():
    settings = dataclasses.replace(DAILY, time=23 * 60)  # quiet 22:00-08:00 by default
    assert due_at(settings, CheckinState(), at(5, 12)) == at(6, 8)
    shown = CheckinState(last_attempt_at=at(6, 8), last_shown_at=at(6, 8))
    assert due_at(settings, shown, at(6, 8, 5)) == at(7, 8)  # every day, not every other


# -- silence ---------------------------------------------------------------------------------


def test_silence_fires_after_n_days_without_a_conversation_not_before():
    state = CheckinState(last_user_message_at=at(1, 14))
    assert due_at(SILENCE, state, at(2, 9)) == at(4, 14)
    assert due_at(SILENCE, state, at(4, 13, 59)) == at(4, 14)  # a minute before: waits
    assert due_at(SILENCE, state, at(4, 14)) == at(4, 14)


def test_silence_needs_a_first_conversation():
    assert due_at(SILENCE, CheckinState(), at(9, 12)) is None
    decision = decide(
        SILENCE, CheckinState(), at(9, 12), BERLIN, memory_enabled=True, provider_configured=True
    )
    assert decision == Decision(None, "no_conversation")


def test_silence_an_overdue_check_in_goes_at_once_outside_quiet_hours():
    state = CheckinState(last_user_message_at=at(1, 14))
    assert due_at(SILENCE, state, at(20, 15)) == at(20, 15)


def test_silence_after_a_shown_check_in_waits_n_more_days_not_one():
    state = CheckinState(
        last_user_message_at=at(1, 14), last_attempt_at=at(4, 14), last_shown_at=at(4, 14)
    )
    assert due_at(SILENCE, state, at(4, 14, 1)) == at(7, 14)


def test_silence_a_failed_check_in_is_tried_a_day_later_not_in_a_loop():
    state = CheckinState(last_user_message_at=at(1, 14), last_attempt_at=at(4, 14))
    for now in (at(4, 14), at(4, 14, 1), at(4, 20)):
        assert due_at(SILENCE, state, now) == at(5, 14), now


def test_the_user_writing_again_restarts_the_silence():
    state = CheckinState(last_user_message_at=at(3, 20))
    assert due_at(SILENCE, state, at(4, 9)) == at(6, 20)


# -- quiet hours -----------------------------------------------------------------------------


def test_quiet_hours_crossing_midnight():
    quiet = QuietHours(22 * 60, 8 * 60)
    assert [quiet.contains(m) for m in (21 * 60 + 59, 22 * 60, 0, 7 * 60 + 59, 8 * 60)] == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert after_quiet_hours(quiet, at(5, 23), BERLIN) == at(6, 8)  # evening: next morning
    assert after_quiet_hours(quiet, at(6, 2), BERLIN) == at(6, 8)  # after midnight: this morning
    assert after_quiet_hours(quiet, at(6, 8), BERLIN) == at(6, 8)  # the end is not quiet
    assert after_quiet_hours(quiet, at(6, 21), BERLIN) == at(6, 21)


def test_quiet_hours_within_a_day_and_none():
    lunch = QuietHours(12 * 60, 14 * 60)
    assert in_quiet_hours(lunch, at(5, 13), BERLIN)
    assert not in_quiet_hours(lunch, at(5, 14), BERLIN)
    assert after_quiet_hours(lunch, at(5, 12, 30), BERLIN) == at(5, 14)
    assert not in_quiet_hours(QuietHours(9 * 60, 9 * 60), at(5, 9), BERLIN)  # same: none
    assert not in_quiet_hours(None, at(5, 23), BERLIN)


def test_a_check_in_due_in_quiet_hours_waits_until_they_end():
    state = CheckinState(last_user_message_at=at(1, 23))  # due on the 4th at 23:00
    assert due_at(SILENCE, state, at(2, 12)) == at(5, 8)
    # Overdue since the afternoon, the app starts at night: still waits for the morning.
    overdue = CheckinState(last_user_message_at=at(1, 14))
    assert due_at(SILENCE, overdue, at(6, 23, 30)) == at(7, 8)
    # Turned off, the same check-in goes at once.
    loud = dataclasses.replace(SILENCE, quiet=None)
    assert due_at(loud, overdue, at(6, 23, 30)) == at(6, 23, 30)


def test_quiet_hours_are_local_time():
    shanghai = ZoneInfo("Asia/Shanghai")
    settings = dataclasses.replace(DAILY, time=23 * 60)
    now = datetime(2026, 1, 5, 12, 0, tzinfo=shanghai).astimezone(UTC)
    assert next_checkin(settings, CheckinState(), now, shanghai) == datetime(
        2026, 1, 6, 8, 0, tzinfo=shanghai
    ).astimezone(UTC)


# -- not mid-conversation, one a day, a clock that jumps ---------------------------------------


def test_never_while_the_user_is_talking():
    state = CheckinState(last_user_message_at=at(5, 8, 50))
    assert due_at(DAILY, state, at(5, 8, 55)) == at(5, 8, 50) + BUSY_GAP


def test_at_most_one_a_day_even_late_at_night_without_quiet_hours():
    loud = dataclasses.replace(SILENCE, quiet=None, after_days=1)
    state = CheckinState(
        last_user_message_at=at(1, 10), last_attempt_at=at(5, 23, 50), last_shown_at=at(5, 23, 50)
    )
    nxt = due_at(loud, state, at(6, 0, 5))
    assert nxt is not None
    assert nxt >= at(6, 23, 50)
    daily = dataclasses.replace(DAILY, quiet=None, time=23 * 60 + 50)
    assert due_at(daily, state, at(6, 0, 5)) == at(6, 23, 50)


def test_a_clock_that_jumps_backwards_blocks_today_only():
    # The last check-in was written at 09:00 on the 6th; the clock then went back to the 5th.
    state = CheckinState(last_attempt_at=at(6, 9), last_shown_at=at(6, 9))
    now = at(5, 8)
    nxt = due_at(DAILY, state, now)
    assert nxt == at(6, 9)  # not today (it may be the same day really), and not the 7th
    # A message "from the future" counts as now: the busy gap, not a day-long wait.
    talk = CheckinState(last_user_message_at=at(6, 9))
    assert due_at(DAILY, talk, now) == at(5, 9)


def test_a_clock_that_jumps_backwards_in_silence_mode():
    state = CheckinState(
        last_user_message_at=at(1, 10), last_attempt_at=at(9, 10), last_shown_at=at(9, 10)
    )
    # Now is the 5th: the check-in "on the 9th" counts as now, so the next is 3 days on.
    assert due_at(SILENCE, state, at(5, 10)) == at(8, 10)


def test_a_daylight_saving_change_keeps_the_wall_clock_time():
    settings = dataclasses.replace(DAILY, time=9 * 60)
    # Europe/Berlin moves to summer time on 2026-03-29.
    before = datetime(2026, 3, 28, 12, tzinfo=BERLIN).astimezone(UTC)
    state = CheckinState(last_attempt_at=before)
    nxt = due_at(settings, state, before)
    assert nxt is not None
    assert nxt.astimezone(BERLIN).replace(tzinfo=None) == datetime(2026, 3, 29, 9, 0)


# -- the persona switches ----------------------------------------------------------------------


def test_persona_switches_round_trip_and_junk_turns_none_off():
    assert parse_personas_off(personas_off_value(["", " Coach  Li ", "Mia"])) == frozenset(
        {"", "Coach Li", "Mia"}
    )
    assert personas_off_value([]) == ""
    assert parse_personas_off("") == frozenset()
    assert parse_personas_off("{not json") == frozenset()
    assert parse_personas_off('{"a": 1}') == frozenset()
