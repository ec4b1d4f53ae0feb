"""The summary rule is a pure function: every branch, every boundary, no loop, DB or model."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.summaries.records import SummaryActivity
from etos_desktop.core.summaries.rule import (
    FIRST_RETRY_DELAY,
    MAX_RETRY_DELAY,
    Due,
    DueAt,
    NotDue,
    RuleSettings,
    decisions,
    retry_delay,
    summary_due,
)

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
SETTINGS = RuleSettings(enabled=True, min_user_turns=6, min_gap=timedelta(minutes=120))


def activity(**values: object) -> SummaryActivity:
    base: dict[str, object] = {
        "conversation_id": 1,
        "title": "t",
        "temporary": False,
        "user_turns": 6,
        "new_user_turns": 6,
    }
    base.update(values)
    return SummaryActivity(**base)  # type: ignore[arg-type]


def test_sixth_turn_without_any_attempt_is_due():
    assert summary_due(activity(), SETTINGS, NOW) == Due()


@pytest.mark.parametrize("turns", [0, 1, 5])
def test_fewer_than_six_turns_is_not_due(turns: int):
    assert summary_due(activity(user_turns=turns, new_user_turns=turns), SETTINGS, NOW) == NotDue(
        "too_few_turns"
    )


def test_the_number_of_turns_is_the_setting():
    settings = RuleSettings(min_user_turns=3)
    assert summary_due(activity(user_turns=3, new_user_turns=3), settings, NOW) == Due()
    assert summary_due(activity(user_turns=2, new_user_turns=2), settings, NOW) == NotDue(
        "too_few_turns"
    )


def test_nothing_after_what_was_covered_is_not_due():
    decision = summary_due(
        activity(user_turns=9, new_user_turns=0, succeeded_at=NOW - timedelta(days=3)),
        SETTINGS,
        NOW,
    )
    assert decision == NotDue("nothing_new")


def test_disabled_and_temporary_win_over_everything():
    assert summary_due(activity(), RuleSettings(enabled=False), NOW) == NotDue("disabled")
    assert summary_due(activity(temporary=True), SETTINGS, NOW) == NotDue("temporary")


@pytest.mark.parametrize(
    ("minutes_ago", "expected"),
    [
        (10, DueAt(NOW + timedelta(minutes=110), "gap")),
        (119, DueAt(NOW + timedelta(minutes=1), "gap")),
        (120, Due()),  # the boundary: exactly the gap
        (121, Due()),
        (60 * 24 * 30, Due()),
    ],
)
def test_gap_since_the_last_success(minutes_ago: int, expected: object):
    succeeded = NOW - timedelta(minutes=minutes_ago)
    decision = summary_due(activity(succeeded_at=succeeded, new_user_turns=1), SETTINGS, NOW)
    assert decision == expected


def test_the_gap_is_the_setting():
    settings = RuleSettings(min_gap=timedelta(minutes=30))
    decision = summary_due(activity(succeeded_at=NOW - timedelta(minutes=10)), settings, NOW)
    assert decision == DueAt(NOW + timedelta(minutes=20), "gap")


def test_backoff_after_an_error_postpones():
    retry = NOW + timedelta(minutes=10)
    assert summary_due(activity(retry_at=retry), SETTINGS, NOW) == DueAt(retry, "backoff")
    assert summary_due(activity(retry_at=NOW), SETTINGS, NOW) == Due()


def test_the_later_of_gap_and_backoff_decides():
    gap_end = NOW + timedelta(minutes=30)
    retry = NOW + timedelta(minutes=50)
    both = activity(succeeded_at=gap_end - timedelta(minutes=120), retry_at=retry)
    assert summary_due(both, SETTINGS, NOW) == DueAt(retry, "backoff")
    earlier_retry = activity(
        succeeded_at=gap_end - timedelta(minutes=120), retry_at=NOW + timedelta(minutes=5)
    )
    assert summary_due(earlier_retry, SETTINGS, NOW) == DueAt(gap_end, "gap")


def test_an_error_does_not_restart_the_gap():
    # An error after a success: the gap still counts from the success (only the backoff waits).
    decision = summary_due(
        activity(
            succeeded_at=NOW - timedelta(minutes=200),
            attempted_at=NOW - timedelta(minutes=1),
            retry_at=NOW - timedelta(seconds=1),
        ),
        SETTINGS,
        NOW,
    )
    assert decision == Due()


@pytest.mark.parametrize(
    ("temporary", "enabled", "turns", "new", "gap_over", "backoff_over"),
    list(
        itertools.product(
            [False, True], [False, True], [5, 6], [0, 1], [False, True], [False, True]
        )
    ),
)
def test_every_combination_agrees_with_the_design(
    temporary: bool, enabled: bool, turns: int, new: int, gap_over: bool, backoff_over: bool
):
    succeeded = NOW - timedelta(minutes=130 if gap_over else 30)
    retry = NOW - timedelta(minutes=1) if backoff_over else NOW + timedelta(minutes=40)
    decision = summary_due(
        activity(
            temporary=temporary,
            user_turns=turns,
            new_user_turns=new,
            succeeded_at=succeeded,
            retry_at=retry,
        ),
        RuleSettings(enabled=enabled),
        NOW,
    )
    ready = enabled and not temporary and turns >= 6 and new >= 1
    if not ready:
        assert isinstance(decision, NotDue)
    elif gap_over and backoff_over:
        assert decision == Due()
    else:
        assert isinstance(decision, DueAt)
        assert decision.when > NOW
        expected = max(
            [
                w
                for w, over in (
                    (succeeded + timedelta(minutes=120), gap_over),
                    (retry, backoff_over),
                )
                if not over
            ]
        )
        assert decision.when == expected


def test_retry_delay_grows_and_is_capped():
    delays = [retry_delay(n) for n in range(1, 12)]
    assert delays[0] == FIRST_RETRY_DELAY
    assert delays[1] == FIRST_RETRY_DELAY * 3
    assert all(a <= b for a, b in itertools.pairwise(delays))
    assert delays[-1] == MAX_RETRY_DELAY
    assert retry_delay(0) == FIRST_RETRY_DELAY
    assert retry_delay(10_000) == MAX_RETRY_DELAY


def test_the_settings_come_from_the_store_and_many_conversations_are_decided_at_once(
    tmp_path: Path,
):
    store = SettingsStore(tmp_path / "settings.json")
    store.load()
    assert RuleSettings.from_settings(store) == SETTINGS
    store.set("summaries.min_user_turns", 3)
    store.set("summaries.min_gap_minutes", 30)
    assert RuleSettings.from_settings(store) == RuleSettings(True, 3, timedelta(minutes=30))
    store.set("memory.enabled", False)
    assert not RuleSettings.from_settings(store).enabled
    many = [activity(conversation_id=1), activity(conversation_id=2, temporary=True)]
    assert decisions(many, SETTINGS, NOW) == [
        (1, summary_due(many[0], SETTINGS, NOW)),
        (2, NotDue("temporary")),
    ]
