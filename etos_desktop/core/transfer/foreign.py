"""Lists of facts from other apps: ChatGPT's and Claude's memory, a Markdown or a plain text list.

When asked to "list everything you remember about me", or from their memory settings, ChatGPT
and Claude give the user a plain list: one fact per line or bullet (``-``, ``*``, ``•``, ``・``,
``·``, ``1.``, ``1)``, ``１．``, ``（1）``, ``一、``), sometimes dated (``[2024-05-01] - …``),
under headings ("**Work context**", ``## Preferences``) and between a preamble ("Here is what I
remember about you:") and an offer ("Let me know if…"). :func:`decode_text` reads the file's
bytes (UTF-8 with or without a BOM, UTF-16 and UTF-32 with a BOM, UTF-16 without one when it
holds Latin text, GB 18030),
:func:`parse_list` finds the facts and says which lines it left out and why, and
:func:`entries_of` hands the facts to the memory layer's own checks
(``core.memory.transfer.parse_entries``: the cleaning rule, the length limit, the secrets filter),
so a list is refused, cleaned and limited exactly as a JSON export's entries are. The preview of
a list never changes a memory that is already there: :func:`additions_only` turns every match
into "already here".

The kind of list is judged from its content (:data:`ListKind`): Claude's memory has its own
headings ("Work context", "Top of mind"…) or names Claude; a list that names ChatGPT, whose facts
are mostly dated or written "User …", is ChatGPT's; otherwise Markdown (``#`` headings, ``-``,
``*`` or ``1.`` items) or text. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal

from etos_desktop.core.memory import transfer as memory_transfer
from etos_desktop.core.memory.records import MemoryKind, MemorySource
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.segmentation import duplicate_key
from etos_desktop.core.transfer.document import MAX_IMPORT_ENTRIES, ImportInvalid, loads_strict

#: What a list is (the preview names it).
ListKind = Literal["chatgpt", "claude", "markdown", "text"]
#: Why a line is not a fact (``LeftOut.reason``).
LeftOutReason = Literal["heading", "repeat", "table"]

# -- decoding ---------------------------------------------------------------------------------

_BOMS: Final = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _not_text(detail: str) -> ImportInvalid:
    return ImportInvalid(detail, reason="not_text")


def decode_text(data: bytes) -> str:
    """The text of a list file.

    Raises:
        ImportInvalid: ``not_text``: binary data (an image, an archive) or no known encoding.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding)
            except UnicodeDecodeError as exc:
                raise _not_text(f"not {encoding}") from exc
    text: str | None = None
    sample = data[:65536]
    nuls = sample.count(0)
    if nuls and nuls * 100 >= len(sample):
        # Many zero bytes: UTF-16 without a BOM (a Latin letter has one in every other
        # position) or binary data. A stray NUL or two in text is left to the cleaning rule.
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        if odd >= 9 * even:
            encoding = "utf-16-le"
        elif even >= 9 * odd:
            encoding = "utf-16-be"
        else:
            raise _not_text("binary data")
        try:
            text = data[: len(data) // 2 * 2].decode(encoding)
        except UnicodeDecodeError as exc:
            raise _not_text(f"not {encoding}") from exc
        head = text[:4096]
        if sum(1 for c in head if " " <= c < "\x7f" or c in "\t\n\r") * 2 < len(head):
            # What gave UTF-16 away is Latin text; without it, these are other bytes.
            raise _not_text("binary data")
    else:
        for encoding in ("utf-8", "gb18030"):
            try:
                text = data.decode(encoding)
                break
            except UnicodeDecodeError:
                continue
    if text is None:
        raise _not_text("no known encoding")
    if len(_CONTROL.findall(text[:65536])) > max(2, len(text[:65536]) // 100):
        raise _not_text("binary data")
    return text


def is_json(text: str) -> bool:
    """Whether a file's text is JSON (an export, or anything else for its reader to refuse).

    A list may start with ``[2024-05-01]``: text starting with ``[`` is JSON only if it parses.
    """
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        return True
    if not head.startswith("["):
        return False
    try:
        loads_strict(head)
    except RecursionError:
        return True  # JSON too deep to read: its reader says so
    except ValueError:
        return False
    return True


# -- parsing ----------------------------------------------------------------------------------

_SYMBOL_BULLET: Final = re.compile(r"(?:[-*+](?=\s)|[•・·‣◦▪▫●○◆◇■□►▸–—※])\s*")
_NUMBER_BULLET: Final = re.compile(
    r"(?:[(（]\s*\d{1,4}\s*[)）]|\d{1,4}\s*[.．。、)）:：](?!\d)|[一二三四五六七八九十百]{1,4}\s*[、.．])\s*"
)
_ASCII_BULLET: Final = re.compile(r"(?:[-*+]\s|\d{1,4}[.)]\s)")
_CHECKBOX: Final = re.compile(r"\[[ xX✓✔]\]\s+")
_HEADING: Final = re.compile(r"#{1,6}(?:\s+|$)")
_RULE: Final = re.compile(r"(?:[-*_=~]\s*){3,}|`{3,}.*|~{3,}.*")
_BOLD_LINE: Final = re.compile(r"(\*\*|__)([^*_]+?)\1\s*[:：]?")
_TABLE_RULE: Final = re.compile(r"\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?")
_EMPHASIS: Final = re.compile(r"(\*\*|__)(.+?)\1")

_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_DATE: Final = (
    r"(?:(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*日?"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|(?P<mon>[A-Za-z]{3,9})\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{4})"
    r"|(?P<d3>\d{1,2})\s+(?P<mon3>[A-Za-z]{3,9})\.?,?\s+(?P<y3>\d{4}))"
)
_NO_DATE: Final = (
    r"(?:date\s+)?(?:unknown|n/?a|none|no\s+date|not\s+available|未知|日期未知|不详|无)"
)
_DATE_WORD: Final = (
    r"(?:(?:saved|date|added|updated|on|保存于|保存|日期|记录于)\s*(?:on\s*)?[:：]?\s*)?"
)
_BRACKETED: Final = rf"[\[【(（]\s*{_DATE_WORD}(?:{_DATE}|(?P<none>{_NO_DATE}))\s*[\]】)）]"
_LEADING_DATES: Final = (
    re.compile(rf"{_BRACKETED}\s*(?:[-–—:：|·]\s*)?", re.IGNORECASE),
    re.compile(rf"{_DATE}\s*(?:[-–—|]\s+|[:：]\s*)", re.IGNORECASE),
)
_TRAILING_DATES: Final = (
    re.compile(rf"\s*{_BRACKETED}\s*[.。]?$", re.IGNORECASE),
    re.compile(rf"\s+[-–—]\s+{_DATE}$", re.IGNORECASE),
)

#: Lines that talk about the list rather than state a fact, in either language. Only a line
#: that is no item of the list is judged; it is kept as a fact, unticked.
_NOTE: Final = re.compile(
    r"(?:here(?:'s|’s| is| are)\b|sure\b|certainly\b|of course\b|absolutely\b|below (?:is|are)\b"
    r"|let me know\b|if you(?:'d| would)? (?:like|want)\b|feel free\b|hope this\b"
    r"|is there anything\b|would you like\b|that(?:'s|’s| is) (?:all|everything)\b"
    r"|(?:this|these) (?:is|are) (?:all|everything|what)\b"
    r"|以下是|下面是|好的|当然|没问题|如果你|如果您|如需|希望这|还有什么|需要我|以上是|这些是我)",
    re.IGNORECASE,
)
#: The section headings of Claude's memory.
_CLAUDE_HEADINGS: Final = frozenset(
    {
        "work context",
        "personal context",
        "top of mind",
        "brief history",
        "recent months",
        "earlier context",
        "long-term background",
        "long term background",
        "other instructions",
        "工作背景",
        "个人背景",
        "近期关注",
        "简要历史",
        "最近几个月",
        "早期背景",
        "长期背景",
    }
)
_CJK: Final = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]")
_SENTENCE: Final = re.compile(r".+?(?:[.!?。！？…]+[\"'”’)）]*(?=\s|$)|[。！？]+|$)\s*", re.DOTALL)


@dataclass(frozen=True)
class ListFact:
    """A fact found in a list.

    Attributes:
        line: The (1-based) line it starts on.
        text: The fact as written, without its bullet and date.
        date: The date it carried (noon UTC of that day, so it is the same day everywhere).
        ticked: Whether the preview offers it ticked: a line outside the list's items that
            reads like a remark about the list ("Here are…", "Let me know…") is a fact the user
            may tick, not one that is imported unless unticked.
    """

    line: int
    text: str
    date: datetime | None = None
    ticked: bool = True


@dataclass(frozen=True)
class LeftOut:
    """A line of a list that is not a fact.

    Attributes:
        line: Its (1-based) number.
        reason: ``heading`` (a title or a line ending in a colon), ``table`` (a table row), or
            ``repeat`` (the same fact as line ``of_line``).
        text: The line as written (for the preview; a repeat's is the fact).
        of_line: For a repeat, the line it repeats.
    """

    line: int
    reason: LeftOutReason
    text: str
    of_line: int | None = None


@dataclass(frozen=True)
class MemoryList:
    """What :func:`parse_list` found.

    Attributes:
        kind: What list it is.
        facts: The facts, in file order, repeats removed.
        left_out: The lines that are not facts (empty lines and rules aside).
    """

    kind: ListKind
    facts: tuple[ListFact, ...]
    left_out: tuple[LeftOut, ...]


@dataclass(frozen=True)
class ListSource:
    """What the import preview says about a list: what it is, where each entry came from.

    Attributes:
        kind: What list it is.
        facts: How many facts it offers ticked.
        lines: The line of each entry, by entry index (``ImportEntry.index``).
        unticked: The entry indices offered unticked.
        left_out: The lines that are not facts.
        dated: The entry indices whose fact carried a date.
    """

    kind: ListKind
    facts: int
    lines: tuple[int, ...]
    unticked: frozenset[int]
    left_out: tuple[LeftOut, ...]
    dated: frozenset[int] = frozenset()

    def line_of(self, index: int) -> int:
        """The line an entry came from."""
        return self.lines[index] if 0 <= index < len(self.lines) else 0


def _date(match: re.Match[str], now: datetime) -> datetime | None:
    groups = match.groupdict()
    try:
        if groups.get("y"):
            year, month, day = int(groups["y"]), int(groups["m"]), int(groups["d"])
        elif groups.get("y2"):
            month = _MONTHS[groups["mon"].lower()]
            year, day = int(groups["y2"]), int(groups["d2"])
        elif groups.get("y3"):
            month = _MONTHS[groups["mon3"].lower()]
            year, day = int(groups["y3"]), int(groups["d3"])
        else:
            return None
        value = datetime(year, month, day, 12, tzinfo=UTC)
    except (KeyError, ValueError):
        return None
    # A date ahead of the clock is a typo or a wrong clock: the fact is as new as the import.
    return min(value, now) if value.year >= 1900 else None


def _is_date_match(match: re.Match[str]) -> bool:
    groups = match.groupdict()
    if groups.get("y") or groups.get("none"):
        return True
    month = groups.get("mon") or groups.get("mon3")
    return bool(month and month.lower() in _MONTHS)


def _strip_dates(text: str, now: datetime) -> tuple[str, datetime | None, bool]:
    """The text without a leading or trailing date, the date, and whether one was there."""
    date: datetime | None = None
    found = False
    for pattern in _LEADING_DATES:
        match = pattern.match(text)
        if match and _is_date_match(match):
            date, found = _date(match, now), True
            text = text[match.end() :]
            break
    for pattern in _TRAILING_DATES:
        match = pattern.search(text)
        if match and _is_date_match(match) and match.start() > 0:
            date = date or _date(match, now)
            found = True
            text = text[: match.start()]
            break
    return text.strip(), date, found


def _bullet(line: str) -> tuple[str, bool]:
    """The line without its bullet or number, and whether it had one."""
    match = _SYMBOL_BULLET.match(line) or _NUMBER_BULLET.match(line)
    if not match or match.end() == len(line):
        return line, False
    rest = line[match.end() :]
    check = _CHECKBOX.match(rest)
    return (rest[check.end() :] if check else rest), True


def _plain(text: str) -> str:
    return _EMPHASIS.sub(r"\2", text).strip()


def _join(first: str, second: str) -> str:
    if first and second and _CJK.match(first[-1]) and _CJK.match(second[0]):
        return first + second
    return f"{first} {second}"


def _pieces(text: str, max_chars: int) -> list[str]:
    """A paragraph longer than a memory may be, in pieces of whole sentences."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    current = ""
    for match in _SENTENCE.finditer(text):
        sentence = match.group().strip()
        if not sentence:
            continue
        joined = _join(current, sentence) if current else sentence
        if current and len(joined) > max_chars:
            pieces.append(current)
            current = sentence
        else:
            current = joined
    if current:
        pieces.append(current)
    return pieces


def _kind(facts: list[ListFact], headings: list[str], notes: str, markdown: bool) -> ListKind:
    lowered = notes.lower()
    if any(h in _CLAUDE_HEADINGS for h in headings) or "claude" in lowered:
        return "claude"
    if "chatgpt" in lowered or "openai" in lowered:
        return "chatgpt"
    if facts:
        dated = sum(1 for f in facts if f.date is not None)
        users = sum(1 for f in facts if re.match(r"(?:User|User's)\b", f.text))
        if dated * 2 >= len(facts) or users * 2 >= len(facts):
            return "chatgpt"
    return "markdown" if markdown else "text"


def parse_list(text: str, *, now: datetime, max_chars: int) -> MemoryList:
    """Find the facts in a list's text (see the module doc).

    Args:
        text: The file's text.
        now: The current time (a date after it is taken as now).
        max_chars: The longest memory: a longer paragraph is split at sentence ends.

    Returns:
        The facts, the lines left out and the kind of list.

    Raises:
        ImportInvalid: ``no_facts`` when nothing in it is a fact; ``too_many`` over
            ``MAX_IMPORT_ENTRIES`` facts.
    """
    lines = clean_text(text.removeprefix("\ufeff")).split("\n")
    # (line, text, date, is_item, indent) before continuation lines are joined.
    found: list[list[Any]] = []
    left_out: list[LeftOut] = []
    headings: list[str] = []
    notes: list[str] = []
    markdown = False
    items = 0
    previous_blank = True
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        while stripped.startswith(">"):
            stripped = stripped[1:].lstrip()
        if not stripped or _RULE.fullmatch(stripped) or _TABLE_RULE.fullmatch(stripped):
            previous_blank = True
            continue
        if _HEADING.match(stripped):
            markdown = True
            heading = _plain(stripped.lstrip("#").strip())
            headings.append(heading.rstrip(":：").strip().lower())
            left_out.append(LeftOut(number, "heading", stripped))
            previous_blank = True
            continue
        if stripped.startswith("|") and stripped.endswith("|"):
            left_out.append(LeftOut(number, "table", stripped))
            previous_blank = True
            continue
        body, is_item = _bullet(stripped)
        markdown = markdown or bool(is_item and _ASCII_BULLET.match(stripped))
        body, date, dated = _strip_dates(body, now)
        body = _plain(body)
        bold = _BOLD_LINE.fullmatch(stripped)
        colon = body.endswith((":", "：")) and len(body) <= 120 and not dated
        if (bold and not is_item) or colon or not body:
            if body:
                headings.append(_plain(body).rstrip(":：").strip().lower())
                notes.append(body)
                left_out.append(LeftOut(number, "heading", stripped))
            previous_blank = True
            continue
        if (
            not is_item
            and not dated
            and not previous_blank
            and found
            and found[-1][3]
            and indent >= 2
        ):
            # A wrapped item: the indented line goes on the item above.
            found[-1][1] = _join(found[-1][1], body)
            continue
        items += int(is_item or dated)
        found.append([number, body, date, is_item or dated, indent])
        previous_blank = False
    if items * 2 >= len(found) and items:
        # In a list of items, a line outside them is more likely a remark than a fact.
        untick = [not row[3] for row in found]
    else:
        untick = [bool(_NOTE.match(row[1])) for row in found]
    notes.extend(row[1] for row, off in zip(found, untick, strict=True) if off)

    facts: list[ListFact] = []
    first_line: dict[str, int] = {}
    for row, off in zip(found, untick, strict=True):
        number, body, date = row[0], row[1], row[2]
        for piece in _pieces(body, max_chars):
            key = duplicate_key(piece)
            if key in first_line:
                left_out.append(LeftOut(number, "repeat", piece, first_line[key]))
                continue
            first_line[key] = number
            facts.append(ListFact(number, piece, date, ticked=not off))
    if not facts:
        raise ImportInvalid("no facts in the list", reason="no_facts")
    if len(facts) > MAX_IMPORT_ENTRIES:
        raise ImportInvalid(
            f"{len(facts)} facts > {MAX_IMPORT_ENTRIES}",
            reason="too_many",
            count=len(facts),
            limit=MAX_IMPORT_ENTRIES,
        )
    kind = _kind(facts, headings, "\n".join(notes), markdown)
    left_out.sort(key=lambda item: item.line)
    return MemoryList(kind, tuple(facts), tuple(left_out))


def entries_of(
    listing: MemoryList, *, now: datetime, max_content_chars: int
) -> tuple[memory_transfer.MemoryEntries, ListSource]:
    """The list's facts as import entries, checked like a JSON export's, and the preview's source.

    Every fact is a ``fact`` from ``imported``, dated by its date or ``now``.
    """
    raw: list[dict[str, Any]] = [
        {
            "content": fact.text,
            "kind": MemoryKind.FACT.value,
            "source": MemorySource.IMPORTED.value,
            "created_at": fact.date.isoformat() if fact.date is not None else None,
        }
        for fact in listing.facts
    ]
    entries = memory_transfer.parse_entries(raw, now=now, max_content_chars=max_content_chars)
    source = ListSource(
        kind=listing.kind,
        facts=sum(1 for fact in listing.facts if fact.ticked),
        lines=tuple(fact.line for fact in listing.facts),
        unticked=frozenset(i for i, fact in enumerate(listing.facts) if not fact.ticked),
        left_out=listing.left_out,
        dated=frozenset(i for i, fact in enumerate(listing.facts) if fact.date is not None),
    )
    return entries, source


def additions_only(plan: memory_transfer.MemoryPlan) -> memory_transfer.MemoryPlan:
    """A list's plan that changes no memory already there: every match is "already here".

    A list has only texts: a fact matching a local memory (the same words, give or take case,
    width, spacing and punctuation) must not rewrite that memory's wording, kind or dates.
    """
    if not plan.to_update:
        return plan
    return replace(plan, to_update=(), unchanged=(*plan.unchanged, *plan.to_update))
