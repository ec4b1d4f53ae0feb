"""The profile's Markdown sections and its pinned lines, enforced by the program.

A profile is Markdown with a heading per section (identity, communication style, expertise,
interests, work style, goals, constraints). A heading is recognised in English or Chinese and
in a few common wordings, so a pinned line stays with its section when a refresh writes the
profile in the other language. A pinned line is kept as its exact text and the key of its
section; :func:`apply_pins` puts back every pinned line a refresh dropped or rewrote, at the top
of its section, or of the profile when the section is gone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Final

from etos_desktop.core.context.language import Language
from etos_desktop.core.profile.records import PinnedLine
from etos_desktop.core.text.cleaning import clean_text

#: The longest profile, in characters (pinned lines included).
MAX_PROFILE_CHARS: Final = 4000
#: The most characters all pinned lines together may hold.
MAX_PINNED_CHARS: Final = 1000

#: The section keys, in the order a profile lists them.
SECTION_KEYS: Final = (
    "identity",
    "communication_style",
    "expertise",
    "interests",
    "work_style",
    "goals",
    "constraints",
)

SECTION_TITLES: Final[Mapping[Language, Mapping[str, str]]] = MappingProxyType(
    {
        "en": MappingProxyType(
            {
                "identity": "Identity",
                "communication_style": "Communication style",
                "expertise": "Expertise",
                "interests": "Interests",
                "work_style": "Work style",
                "goals": "Goals",
                "constraints": "Constraints",
            }
        ),
        "zh": MappingProxyType(
            {
                "identity": "身份",
                "communication_style": "沟通风格",
                "expertise": "专业领域",
                "interests": "兴趣",
                "work_style": "工作方式",
                "goals": "目标",
                "constraints": "约束",
            }
        ),
    }
)

# Other wordings a model (or a person) uses for the same sections.
_ALIASES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "about": "identity",
        "background": "identity",
        "who": "identity",
        "身份信息": "identity",
        "基本信息": "identity",
        "背景": "identity",
        "communication": "communication_style",
        "communication preferences": "communication_style",
        "style": "communication_style",
        "沟通方式": "communication_style",
        "交流风格": "communication_style",
        "交流方式": "communication_style",
        "skills": "expertise",
        "expertise and skills": "expertise",
        "knowledge": "expertise",
        "专业": "expertise",
        "专长": "expertise",
        "技能": "expertise",
        "专业知识": "expertise",
        "hobbies": "interests",
        "interests and hobbies": "interests",
        "兴趣爱好": "interests",
        "爱好": "interests",
        "working style": "work_style",
        "how they work": "work_style",
        "工作风格": "work_style",
        "工作习惯": "work_style",
        "goal": "goals",
        "current goals": "goals",
        "目标与计划": "goals",
        "计划": "goals",
        "limits": "constraints",
        "limitations": "constraints",
        "constraints and boundaries": "constraints",
        "限制": "constraints",
        "约束与限制": "constraints",
        "限制与约束": "constraints",
        "禁忌": "constraints",
    }
)

_HEADING_RE: Final = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_DECORATION_RE: Final = re.compile(r"^[\d.、)\s*_]+|[\s*_:：]+$")


def _normal(title: str) -> str:
    return " ".join(_DECORATION_RE.sub("", title).replace("&", "and").lower().split())


_KNOWN: Final[Mapping[str, str]] = MappingProxyType(
    {
        **{_normal(t): key for titles in SECTION_TITLES.values() for key, t in titles.items()},
        **{_normal(a): key for a, key in _ALIASES.items()},
        **{key.replace("_", " "): key for key in SECTION_KEYS},
    }
)


def heading(line: str) -> str | None:
    """The text of a Markdown heading line, or ``None`` when ``line`` is no heading."""
    match = _HEADING_RE.match(line)
    return match.group(2) if match else None


def section_key(title: str) -> str:
    """The key of the section a heading names (``"identity"``…), else the heading itself."""
    normal = _normal(title)
    return _KNOWN.get(normal, normal)


def line_sections(text: str) -> list[str]:
    """The section of each line of ``text`` (a heading line belongs to its own section)."""
    current = ""
    sections = []
    for line in text.splitlines():
        title = heading(line)
        if title is not None:
            current = section_key(title)
        sections.append(current)
    return sections


def known_sections(text: str) -> list[str]:
    """The keys of the known sections whose headings ``text`` has, in order."""
    keys = [section_key(t) for t in (heading(line) for line in text.splitlines()) if t]
    return [k for k in keys if k in SECTION_KEYS]


def section_line_numbers(text: str, line_number: int) -> list[int]:
    """The lines a pin on line ``line_number`` (0-based) of ``text`` holds.

    A heading holds its whole section: itself and every non-blank line under it up to the next
    heading of the same or a higher level (subsections included). Pinning a heading alone kept
    an empty heading and let a refresh drop its lines (issue 19). Any other line holds itself.

    Returns:
        The line numbers, in order (``[line_number]`` for a line that is no heading; ``[]``
        for one out of range).
    """
    lines = text.splitlines()
    if not 0 <= line_number < len(lines):
        return []
    match = _HEADING_RE.match(lines[line_number])
    if match is None:
        return [line_number]
    level = len(match.group(1))
    numbers = [line_number]
    for number in range(line_number + 1, len(lines)):
        below = _HEADING_RE.match(lines[number])
        if below is not None and len(below.group(1)) <= level:
            break
        if lines[number].strip():
            numbers.append(number)
    return numbers


def pins_for_lines(text: str, line_numbers: Iterable[int]) -> tuple[PinnedLine, ...]:
    """Pin the lines ``line_numbers`` (0-based) of ``text``; blank lines are skipped.

    Returns:
        The pins, in the order of the lines, duplicates removed.
    """
    lines = text.splitlines()
    sections = line_sections(text)
    pins: dict[str, PinnedLine] = {}
    for number in sorted(set(line_numbers)):
        if 0 <= number < len(lines) and lines[number].strip():
            line = lines[number].strip()
            pins.setdefault(line, PinnedLine(line, sections[number]))
    return tuple(pins.values())


def pin_line_numbers(text: str, pins: Sequence[PinnedLine]) -> list[int]:
    """Where each pin is in ``text``: the first equal line in its section, else anywhere.

    Pins not found are left out.
    """
    lines = [line.strip() for line in text.splitlines()]
    sections = line_sections(text)
    taken: set[int] = set()
    found = []
    for pin in pins:
        candidates = [i for i, line in enumerate(lines) if line == pin.text and i not in taken]
        same = [i for i in candidates if sections[i] == pin.section]
        if not candidates and heading(pin.text) is not None:
            # A pinned heading a refresh wrote in other words (or the other language).
            same = [
                i
                for i, line in enumerate(lines)
                if i not in taken and heading(line) is not None and sections[i] == pin.section
            ]
        chosen = same or candidates
        if chosen:
            taken.add(chosen[0])
            found.append(chosen[0])
    return sorted(found)


def pinned_chars(pins: Iterable[PinnedLine]) -> int:
    """The characters all pinned lines hold together."""
    return sum(len(p.text) for p in pins)


def _heading_keys(lines: Iterable[str]) -> dict[str, int]:
    """The first heading line of each section key."""
    heading_at: dict[str, int] = {}
    for index, line in enumerate(lines):
        title = heading(line)
        if title is not None:
            heading_at.setdefault(section_key(title), index)
    return heading_at


def missing_pins(text: str, pins: Sequence[PinnedLine]) -> list[PinnedLine]:
    """The pins ``text`` lacks.

    A line is present when it is there word for word (surrounding spaces aside); a pinned
    heading also when its section is there under a heading in other words (a refresh in the
    other language writes "## 沟通风格" for "## Communication style").
    """
    lines = text.splitlines()
    present = {line.strip() for line in lines}
    headed = _heading_keys(lines)
    return [
        pin
        for pin in pins
        if pin.text not in present and not (heading(pin.text) is not None and pin.section in headed)
    ]


def apply_pins(text: str, pins: Sequence[PinnedLine]) -> str:
    """Put back every pinned line ``text`` lacks (dropped or rewritten by a refresh).

    A missing line goes to the top of its section (right under the heading), or to the top of
    the profile when its section is not in ``text``; lines present word for word (surrounding
    spaces aside) are left where they are. A pinned section (its heading pinned) that is gone
    comes back whole at the top, after the loose lines, so no other line looks like its own.

    Returns:
        The text with every pinned line in it.
    """
    lines = text.strip("\n").splitlines() if text.strip() else []
    missing = missing_pins("\n".join(lines), pins)
    if not missing:
        return "\n".join(lines)
    heading_at = _heading_keys(lines)
    into_section: dict[int, list[str]] = {}
    loose: list[str] = []
    # Sections whose pinned heading comes back, with their lines, in the pins' order.
    returning: dict[str, list[str]] = {
        pin.section: [] for pin in missing if heading(pin.text) is not None
    }
    for pin in missing:
        at = heading_at.get(pin.section) if pin.section else None
        if at is not None:
            into_section.setdefault(at, []).append(pin.text)
        elif pin.section in returning:
            returning[pin.section].append(pin.text)
        else:
            loose.append(pin.text)
    on_top = list(loose)
    for block in returning.values():
        if on_top:
            on_top.append("")
        on_top.extend(block)
    out: list[str] = []
    if on_top:
        out.extend(on_top)
        if lines and lines[0].strip():
            out.append("")
    for index, line in enumerate(lines):
        out.append(line)
        out.extend(into_section.get(index, []))
    return "\n".join(out)


def normalised(text: str) -> str:
    """``text`` cleaned, with line ends, trailing spaces and runs of blank lines made uniform.

    Two profiles that differ only in these are the same profile. Every profile that is stored
    passes here (the user's edit, an import, the model's refresh), so this is where its text is
    cleaned as all incoming text is (``core.text.cleaning``).
    """
    lines = [line.rstrip() for line in clean_text(text).strip().split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def same_profile(a: str, b: str) -> bool:
    """Whether two profiles say the same: equal lines in the same order, spacing aside.

    Blank lines and indentation are layout (a list written loose or tight reads the same).
    """

    def lines(text: str) -> list[str]:
        return [" ".join(line.split()) for line in text.splitlines() if line.strip()]

    return lines(a) == lines(b)
