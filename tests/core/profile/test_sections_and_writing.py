"""Sections, pinned lines and the refresh reply's rules: pure functions, tested without a loop."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from etos_desktop.core.profile import rule, sections, writing
from etos_desktop.core.profile.records import Material, MaterialItem, PinnedLine, Profile

PROFILE = """## Identity
- Engineer in Berlin

## Communication style
- Always call me Mia
- Short answers

## Goals
- Run a marathon"""


@pytest.mark.parametrize(
    ("title", "key"),
    [
        ("Identity", "identity"),
        ("身份", "identity"),
        ("**Communication style:**", "communication_style"),
        ("沟通风格", "communication_style"),
        ("3. Work style", "work_style"),
        ("工作方式", "work_style"),
        ("Constraints & boundaries", "constraints"),
        ("约束", "constraints"),
        ("Favourite films", "favourite films"),
    ],
)
def test_headings_in_either_language_name_the_same_section(title: str, key: str):
    assert sections.section_key(title) == key


def test_pins_know_their_section_and_are_found_again():
    pins = sections.pins_for_lines(PROFILE, [4, 5, 99, 2])
    assert pins == (
        PinnedLine("- Always call me Mia", "communication_style"),
        PinnedLine("- Short answers", "communication_style"),
    )
    assert sections.pin_line_numbers(PROFILE, pins) == [4, 5]
    assert sections.pin_line_numbers("nothing here", pins) == []


def test_a_dropped_pin_goes_to_the_top_of_its_section_even_in_the_other_language():
    pins = (PinnedLine("- Always call me Mia", "communication_style"),)
    rewritten = "## 身份\n- 柏林的工程师\n\n## 沟通风格\n- 回答简短"
    assert sections.apply_pins(rewritten, pins) == (
        "## 身份\n- 柏林的工程师\n\n## 沟通风格\n- Always call me Mia\n- 回答简短"
    )


def test_a_pin_whose_section_is_gone_goes_to_the_top_and_present_pins_stay_put():
    pins = (
        PinnedLine("- Run a marathon", "goals"),
        PinnedLine("- Engineer in Berlin", "identity"),
    )
    text = "## Identity\n- Student\n- Engineer in Berlin"
    assert sections.apply_pins(text, pins) == (
        "- Run a marathon\n\n## Identity\n- Student\n- Engineer in Berlin"
    )
    assert sections.apply_pins("", pins) == "- Run a marathon\n- Engineer in Berlin"


def test_a_heading_holds_its_section_and_its_subsections():
    text = "## Identity\n- Engineer\n\n### Family\n- Two kids\n## Goals\n- Marathon"
    assert sections.section_line_numbers(text, 0) == [0, 1, 3, 4]
    assert sections.section_line_numbers(text, 3) == [3, 4]
    assert sections.section_line_numbers(text, 1) == [1]
    assert sections.section_line_numbers(text, 99) == []


#: Pins of a whole section (its heading pinned, issue 19).
STYLE_PINS = (
    PinnedLine("## Communication style", "communication_style"),
    PinnedLine("- Always call me Mia", "communication_style"),
    PinnedLine("- Short answers", "communication_style"),
)


def test_a_pinned_section_emptied_by_a_refresh_gets_its_lines_back():
    emptied = "## Identity\n- Engineer in Berlin\n\n## Communication style\n\n## Goals\n- Run"
    assert sections.apply_pins(emptied, STYLE_PINS) == (
        "## Identity\n- Engineer in Berlin\n\n## Communication style\n- Always call me Mia\n"
        "- Short answers\n\n## Goals\n- Run"
    )


def test_a_pinned_section_written_in_the_other_language_is_not_doubled():
    rewritten = "## 身份\n- 柏林的工程师\n\n## 沟通风格\n- 回答简短"
    assert sections.apply_pins(rewritten, STYLE_PINS) == (
        "## 身份\n- 柏林的工程师\n\n## 沟通风格\n- Always call me Mia\n- Short answers\n- 回答简短"
    )
    assert sections.missing_pins(rewritten, STYLE_PINS) == list(STYLE_PINS[1:])
    # The editor marks the heading under its new words, so a save keeps the section pinned.
    with_pins = sections.apply_pins(rewritten, STYLE_PINS)
    assert sections.pin_line_numbers(with_pins, STYLE_PINS) == [3, 4, 5]


def test_a_pinned_section_that_is_gone_comes_back_whole_after_the_loose_lines():
    pins = (PinnedLine("- Likes tea", "interests"), *STYLE_PINS)
    assert sections.apply_pins("## Goals\n- Run", pins) == (
        "- Likes tea\n\n## Communication style\n- Always call me Mia\n- Short answers\n\n"
        "## Goals\n- Run"
    )


def test_a_refresh_that_drops_a_pinned_section_is_repaired_and_counted():
    pins = sections.pins_for_lines(PROFILE, sections.section_line_numbers(PROFILE, 3))
    assert pins == STYLE_PINS
    reply = "## Identity\n- Engineer in Berlin\n\n## Communication style\n\n## Goals\n- Swim"
    outcome = _finish(reply, pins=pins)
    assert isinstance(outcome, writing.Accepted)
    assert outcome.restored_pins == 2
    assert "## Communication style\n- Always call me Mia\n- Short answers" in outcome.text


def test_normalised_ignores_line_ends_trailing_spaces_and_blank_runs():
    assert sections.normalised("a  \r\n\r\n\r\nb\n\n") == "a\n\nb"


def _finish(raw: str, reason: str | None = "stop", current: str = PROFILE, pins=()):
    return writing.finish_profile(raw, reason, current=current, pinned=pins)


def test_the_reply_rules():
    assert _finish("") == writing.Rejected("empty")
    assert _finish("  \n ") == writing.Rejected("empty")
    assert _finish(PROFILE + "\n- more", "length") == writing.Rejected("incomplete")
    assert _finish("I could not find anything new.") == writing.Rejected("no_sections")
    assert _finish("## Recipes\n- soup") == writing.Rejected("no_sections")
    assert _finish(PROFILE.replace("\n", "\n\n") + "  ") == writing.Unchanged()
    assert _finish("```markdown\n" + PROFILE + "\n```") == writing.Unchanged()
    big = "## Identity\n" + "- " + "x" * 3990
    assert _finish(big) == writing.Rejected("too_long")
    # Pinned lines count: a reply that fits alone but not with its pins put back is refused.
    near = "## Identity\n- " + "y" * 3900
    pins = (PinnedLine("- " + "p" * 200, "goals"),)
    assert _finish(near, pins=pins) == writing.Rejected("too_long")


def test_an_accepted_reply_loses_its_preface_and_its_secrets():
    outcome = _finish(
        "Here is the updated profile:\n## Identity\n- Engineer, key sk-abcdefghijklmnopqrstuvwx1234\n"
    )
    assert isinstance(outcome, writing.Accepted)
    assert outcome.text == "## Identity\n- Engineer, key [redacted]"
    assert outcome.redacted


def test_an_accepted_reply_is_stored_without_control_characters():
    """Issue 19: NUL and control characters in the model's profile were stored as written."""
    outcome = _finish("## Identity\r\n- Engineer\x00 in\x1b Berlin\x85\n- Likes 👨\u200d👩\u200d👧")
    assert isinstance(outcome, writing.Accepted)
    assert outcome.text == "## Identity\n- Engineer in Berlin\n- Likes 👨\u200d👩\u200d👧"


def _item(kind: str, i: int, text: str, days: int) -> MaterialItem:
    when = datetime(2026, 1, 10, tzinfo=UTC) - timedelta(days=days)
    return MaterialItem(kind, i, when, text, "fact" if kind == "memory" else "Chat")


def test_the_request_holds_the_newest_material_that_fits():
    items = tuple(_item("memory", i, f"memory number {i} " + "w " * 200, i) for i in range(30))
    built = writing.build_request(
        writing.ProfileInput(PROFILE, (), Material(items), "en", "2026-01-10"), budget=1000
    )
    assert 0 < len(built.sent) < 30
    assert built.sent == items[: len(built.sent)]
    assert built.left_out == 30 - len(built.sent)
    user = built.messages[1]["content"]
    assert f"<profile>\n{PROFILE}\n</profile>" in user
    assert "memory number 0 " in user
    assert "memory number 29 " not in user
    assert f"[{built.left_out} older item(s) left out for length]" in user


def test_the_chinese_prompt():
    built = writing.build_request(
        writing.ProfileInput(
            "", (PinnedLine("- 叫我小米", "identity"),), Material(), "zh", "2026-01-10"
        )
    )
    system, user = (m["content"] for m in built.messages)
    assert "身份、" not in system  # titles are joined with ", "
    assert "身份, 沟通风格, 专业领域, 兴趣, 工作方式, 目标, 约束" in system
    assert "还没有画像" in user
    assert "- [身份] - 叫我小米" in user


NOW = datetime(2026, 1, 10, 12, tzinfo=UTC)
DAILY = datetime(2026, 1, 11, 4, tzinfo=UTC)


def test_next_run():
    delay = timedelta(minutes=2)
    never = Profile()
    assert rule.next_run(never, NOW, DAILY, startup=True, startup_delay=delay) == NOW + delay
    assert rule.next_run(never, NOW, DAILY) == DAILY
    fresh = Profile(checked_at=NOW - timedelta(hours=3))
    assert rule.next_run(fresh, NOW, DAILY, startup=True, startup_delay=delay) == DAILY
    stale = Profile(checked_at=NOW - timedelta(days=3))
    assert rule.next_run(stale, NOW, DAILY, startup=True, startup_delay=delay) == NOW + delay
    failed = Profile(checked_at=NOW, error_count=2, retry_at=NOW + timedelta(minutes=90))
    assert rule.next_run(failed, NOW, DAILY) == NOW + timedelta(minutes=90)
    overdue = Profile(checked_at=NOW, error_count=1, retry_at=NOW - timedelta(hours=1))
    assert rule.next_run(overdue, NOW, DAILY, startup=True, startup_delay=delay) == NOW + delay
    late = Profile(checked_at=NOW, error_count=6, retry_at=NOW + timedelta(hours=24))
    assert rule.next_run(late, NOW, DAILY) == DAILY


def test_a_stated_change_the_last_refresh_has_not_seen_runs_ten_minutes_after_it():
    delay = timedelta(minutes=2)
    checked = Profile(checked_at=NOW - timedelta(hours=3))
    changed = NOW - timedelta(minutes=1)
    assert timedelta(minutes=10) == rule.CHANGE_REFRESH_DELAY
    assert rule.next_run(checked, NOW, DAILY, changed_at=changed) == changed + timedelta(minutes=10)
    # Seen by the last refresh, or none: the daily run.
    assert rule.next_run(checked, NOW, DAILY, changed_at=NOW - timedelta(hours=4)) == DAILY
    assert rule.next_run(checked, NOW, DAILY, changed_at=None) == DAILY
    # Long past (the app was closed): soon after start-up, never during it.
    old = NOW - timedelta(hours=2)
    assert (
        rule.next_run(
            Profile(checked_at=old - timedelta(hours=1)),
            NOW,
            DAILY,
            startup=True,
            startup_delay=delay,
            changed_at=old,
        )
        == NOW + delay
    )
    # A pending retry is not brought forward: a failing server is not asked again at once.
    failed = Profile(
        checked_at=changed - timedelta(hours=1), error_count=1, retry_at=NOW + timedelta(minutes=30)
    )
    assert rule.next_run(failed, NOW, DAILY, changed_at=changed) == NOW + timedelta(minutes=30)
    # Never before the daily run if that comes first.
    soon = NOW + timedelta(minutes=5)
    assert rule.next_run(checked, NOW, soon, changed_at=changed) == soon
