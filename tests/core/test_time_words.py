"""Relative dates resolve against the injected clock into windows (issue 10)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from etos_desktop.core.time_words import resolve_time_window, without_time_words

# A Wednesday.
NOW = datetime(2026, 6, 17, 20, 0, tzinfo=UTC)


def day(month: int, d: int, year: int = 2026) -> datetime:
    return datetime(year, month, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("what did we talk about yesterday?", day(6, 16), day(6, 17)),
        ("昨天我们聊到哪了", day(6, 16), day(6, 17)),
        ("前天那个菜谱", day(6, 15), day(6, 16)),
        ("What did we talk about last week?", day(6, 8), day(6, 15)),
        ("上周我们聊了些什么？", day(6, 8), day(6, 15)),
        ("上个星期说的那本书", day(6, 8), day(6, 15)),
        ("what did I cook last weekend", day(6, 13), day(6, 15)),
        ("上周末聊宠物的时候我说了什么？", day(6, 13), day(6, 15)),
        ("this week", day(6, 15), day(6, 22)),
        ("last month", day(5, 1), day(6, 1)),
        ("上个月", day(5, 1), day(6, 1)),
        ("去年我们都聊过什么？", day(1, 1, 2025), day(1, 1)),
        ("last year", day(1, 1, 2025), day(1, 1)),
        # the latest March not in the future: this year's
        ("三月份我们聊花园的时候说了什么？", day(3, 1), day(4, 1)),
        ("What did we discuss in March?", day(3, 1), day(4, 1)),
        # a month that has not come yet this year: last year's
        ("十一月份去了哪里", day(11, 1, 2025), day(12, 1, 2025)),
        ("in September", day(9, 1, 2025), day(10, 1, 2025)),
        # the current month has begun: this year's
        ("6月", day(6, 1), day(7, 1)),
        ("3 days ago", day(6, 14), day(6, 15)),
        ("三天前", day(6, 14), day(6, 15)),
        ("two weeks ago", day(6, 1), day(6, 8)),
        ("前几天", day(6, 11), day(6, 16)),
    ],
)
def test_windows(text: str, start: datetime, end: datetime) -> None:
    window = resolve_time_window(text, NOW)
    assert window is not None
    assert (window.start, window.end) == (start, end)


def test_last_weekend_on_a_sunday_is_the_one_before() -> None:
    sunday = datetime(2026, 6, 14, 12, 0, tzinfo=UTC)
    window = resolve_time_window("last weekend", sunday)
    assert window is not None
    assert (window.start, window.end) == (day(6, 6), day(6, 8))


def test_march_in_january_is_last_years() -> None:
    january = datetime(2027, 1, 10, tzinfo=UTC)
    window = resolve_time_window("三月份", january)
    assert window is not None
    assert window.start == day(3, 1, 2026)


@pytest.mark.parametrize(
    "text",
    [
        "What is the capital of France?",
        "I use pnpm for JavaScript projects",
        "我每月定投一千欧",
        "May I ask you something?",
        "这个月饼很好吃",
    ],
)
def test_no_window(text: str) -> None:
    assert resolve_time_window(text, NOW) is None


def test_describe_and_strip() -> None:
    window = resolve_time_window("What did we talk about last week?", NOW)
    assert window is not None
    assert window.describe() == "2026-06-08 – 2026-06-14"
    assert window.phrase == "last week"
    assert without_time_words("What did we talk about last week?", window) == (
        "What did we talk about ?"
    )
    yesterday = resolve_time_window("yesterday", NOW)
    assert yesterday is not None
    assert yesterday.describe() == "2026-06-16"
