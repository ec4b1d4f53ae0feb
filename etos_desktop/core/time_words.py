"""Relative dates in what people write ("last weekend", "上周", "三月份") as concrete time windows.

One resolver for the whole core: memory search boosts memories from the window a question
names ("what did we talk about last week?"), and summary recall uses the same windows. A pure
function of the text and "now" (from the injected clock), so it is tested without waiting.

Calendar rules, in the time zone of ``now``:

* days run from midnight to midnight; weeks from Monday; "last week" / "上周" is the calendar
  week before the current one;
* "last weekend" / "上周末" is the most recent Saturday–Sunday that is over (on a Saturday or
  Sunday, the one before); "this weekend" / "这周末" is the current or coming one;
* a month name without a year ("in March", "三月份", "3月") is the latest such month that is not
  in the future — this March if March has begun, otherwise last year's;
* "N days ago" / "N天前" is that day; "a few days ago" / "前几天" is the 2–6 days before today;
  "recently" / "最近" is the last 14 days, marked ``soft``: a preference for recent things,
  not a period (searches treat it so).

Windows end at the end of their period (not at "now"), so ``end`` may be in the future for
"this week"; nothing can be dated there anyway.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

_EN_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_ZH_NUMBERS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
    "十一": 11,
    "十二": 12,
}
_EN_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


@dataclass(frozen=True)
class TimeWindow:
    """A period a text refers to.

    Attributes:
        start: The first moment in the window (inclusive).
        end: The moment after the window (exclusive).
        phrase: The words that named it, as written ("last weekend", "上周").
        rule: Which rule matched (``"last_week"``, ``"month"``…), for traces and tests.
    """

    start: datetime
    end: datetime
    phrase: str
    rule: str

    @property
    def soft(self) -> bool:
        """Whether the words only prefer recent things ("recently", "最近") without naming a period.

        "What workshop did Caroline attend recently?" asks about a workshop; a window of the
        last 14 days would lift every turn from them over the answer (issue 18). Memory search
        weighs recency more for such a query, and summary recall ignores it.
        """
        return self.rule == "recently"

    def contains(self, when: datetime) -> bool:
        """Whether ``when`` falls in the window."""
        return self.start <= when < self.end

    def overlaps(self, start: datetime, end: datetime | None) -> bool:
        """Whether the period ``[start, end)`` (``end`` ``None``: open) meets the window."""
        return start < self.end and (end is None or end > self.start)

    def describe(self) -> str:
        """The window as dates, e.g. ``"2026-06-08 – 2026-06-14"`` (one date for one day)."""
        first = self.start.date()
        last = (self.end - timedelta(microseconds=1)).date()
        return first.isoformat() if first == last else f"{first.isoformat()} – {last.isoformat()}"


def _day(now: datetime, offset_days: int = 0) -> datetime:
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight + timedelta(days=offset_days)


def _week_start(now: datetime, weeks_back: int = 0) -> datetime:
    return _day(now, -now.weekday() - 7 * weeks_back)


def _month_start(year: int, month: int, like: datetime) -> datetime:
    while month < 1:
        month, year = month + 12, year - 1
    while month > 12:
        month, year = month - 12, year + 1
    return like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)


def _month_window(now: datetime, month: int) -> tuple[datetime, datetime]:
    """The latest ``month`` that has begun by ``now``."""
    year = now.year if month <= now.month else now.year - 1
    start = _month_start(year, month, now)
    return start, _month_start(year, month + 1, now)


def _number(text: str) -> int | None:
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    return _EN_NUMBERS.get(text) or _ZH_NUMBERS.get(text)


def _last_weekend(now: datetime) -> tuple[datetime, datetime]:
    # The previous week's Saturday: on Monday–Friday that weekend has just ended; on Saturday
    # or Sunday the current one is not over yet, so "last weekend" is still the one before.
    saturday = _week_start(now, 1) + timedelta(days=5)
    return saturday, saturday + timedelta(days=2)


def _this_weekend(now: datetime) -> tuple[datetime, datetime]:
    saturday = _week_start(now) + timedelta(days=5)
    return saturday, saturday + timedelta(days=2)


# Order matters: longer phrases before the words they contain ("last weekend" before "last
# week", "上周末" before "上周", "前天" before "天前").
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("day_before_yesterday", r"\bthe day before yesterday\b|前天"),
    ("yesterday", r"\byesterday\b|\blast night\b|昨天|昨晚|昨日"),
    ("today", r"\btoday\b|\bthis morning\b|\btonight\b|今天|今早|今晚"),
    ("last_weekend", r"\blast weekend\b|\bover the weekend\b|上(个)?周末|上个?礼拜六日"),
    ("this_weekend", r"\bthis weekend\b|这(个)?周末|本周末"),
    (
        "last_week",
        r"\blast week\b|\bthe week before\b|上(个)?(周|星期|礼拜)(?![一二三四五六日天])",
    ),
    ("this_week", r"\bthis week\b|这(个)?(周|星期|礼拜)(?![一二三四五六日天末])|本周(?!末)"),
    ("last_month", r"\blast month\b|上(个)?月(?![饼光亮球])"),
    ("this_month", r"\bthis month\b|(这(个)?|本)月(?![饼光亮球])"),
    ("year_before_last", r"\bthe year before last\b|前年"),
    ("last_year", r"\blast year\b|去年"),
    ("this_year", r"\bthis year\b|今年"),
    (
        "days_ago",
        r"\b(?P<n1>\d+|one|two|three|four|five|six|seven|eight|nine|ten) days? ago\b"
        r"|(?P<n2>\d+|[一二两三四五六七八九十]+)天(之)?前",
    ),
    (
        "weeks_ago",
        r"\b(?P<n3>\d+|one|two|three|four|five|six|seven|eight|nine|ten) weeks? ago\b"
        r"|(?P<n4>\d+|[一二两三四五六七八九十]+)(个)?(周|星期|礼拜)(之)?前",
    ),
    ("few_days_ago", r"\ba (few|couple of) days ago\b|前几天|这几天"),
    ("recently", r"\brecently\b|\blately\b|最近|近来"),
    (
        "month",
        r"\b(in|during|back in|since) (?P<en_month>" + "|".join(_EN_MONTHS) + r")\b"
        r"|\b(?P<en_month2>" + "|".join(m for m in _EN_MONTHS if m != "may") + r")\b"
        r"|(?P<zh_month>十[一二]|[一二三四五六七八九十]|1[0-2]|[1-9])月(份)?"
        r"(?![0-9一二三四五六七八九十]+[日号])(?![饼光亮球])",
    ),
)
_COMPILED = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _PATTERNS)


def resolve_time_window(text: str, now: datetime) -> TimeWindow | None:
    """The period ``text`` refers to, if it names one.

    Args:
        text: A message or query, Chinese or English.
        now: The current time (its time zone decides where days begin).

    Returns:
        The window of the first time expression found (in the rule order above), or ``None``.
    """
    normalized = unicodedata.normalize("NFKC", text)
    for name, pattern in _COMPILED:
        match = pattern.search(normalized)
        if match is None:
            continue
        window = _window(name, match, now)
        if window is not None:
            return TimeWindow(
                start=window[0], end=window[1], phrase=match.group(0).strip(), rule=name
            )
    return None


def without_time_words(text: str, window: TimeWindow) -> str:
    """``text`` with the phrase that named ``window`` removed (for keyword matching)."""
    normalized = unicodedata.normalize("NFKC", text)
    return " ".join(normalized.replace(window.phrase, " ").split())


def _window(name: str, match: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    if name == "day_before_yesterday":
        return _day(now, -2), _day(now, -1)
    if name == "yesterday":
        return _day(now, -1), _day(now)
    if name == "today":
        return _day(now), _day(now, 1)
    if name == "last_weekend":
        return _last_weekend(now)
    if name == "this_weekend":
        return _this_weekend(now)
    if name == "last_week":
        return _week_start(now, 1), _week_start(now)
    if name == "this_week":
        return _week_start(now), _week_start(now) + timedelta(days=7)
    if name == "last_month":
        return _month_start(now.year, now.month - 1, now), _month_start(now.year, now.month, now)
    if name == "this_month":
        return _month_start(now.year, now.month, now), _month_start(now.year, now.month + 1, now)
    if name in ("last_year", "year_before_last", "this_year"):
        back = {"this_year": 0, "last_year": 1, "year_before_last": 2}[name]
        start = _month_start(now.year - back, 1, now)
        return start, _month_start(now.year - back + 1, 1, now)
    if name == "days_ago":
        n = _number(match.group("n1") or match.group("n2") or "")
        return None if n is None else (_day(now, -n), _day(now, -n + 1))
    if name == "weeks_ago":
        n = _number(match.group("n3") or match.group("n4") or "")
        return None if n is None else (_week_start(now, n), _week_start(now, n - 1))
    if name == "few_days_ago":
        return _day(now, -6), _day(now, -1)
    if name == "recently":
        return _day(now, -14), _day(now, 1)
    # name == "month"
    word = match.group("en_month") or match.group("en_month2")
    if word is not None:
        month = _EN_MONTHS.index(word.lower()) + 1
    else:
        month = _number(match.group("zh_month") or "") or 0
    if not 1 <= month <= 12:
        return None
    return _month_window(now, month)
