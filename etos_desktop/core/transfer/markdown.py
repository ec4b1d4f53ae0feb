"""The readable Markdown export of every memory layer (not meant to be imported back).

One heading, then the memories (active ones grouped by kind, then the archived, superseded and
expired ones: ``core/memory/transfer.py``), the session summaries (``core/summaries/transfer.py``)
and the user profile (``core/profile/transfer.py``), each layer writing its own section with the
words and the escaping given here. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from etos_desktop.core.memory import transfer as memory_transfer
from etos_desktop.core.memory.records import Memory
from etos_desktop.core.profile import transfer as profile_transfer
from etos_desktop.core.profile.records import Profile
from etos_desktop.core.summaries import transfer as summary_transfer
from etos_desktop.core.summaries.records import Summary


@dataclass(frozen=True)
class MarkdownLabels(memory_transfer.MemoryMarkdownLabels):
    """The words of a Markdown export; the UI passes translated ones.

    The memories' words (``kinds``, ``archived``, ``empty``…) are the memory layer's
    (:class:`~etos_desktop.core.memory.transfer.MemoryMarkdownLabels`).

    Attributes:
        title: The document's heading.
        exported: The line under it; ``{date}`` and ``{count}`` (of memories) are filled in.
        summaries: The heading of the session summaries' section.
        untitled: The title of a summary's conversation that has none.
        earlier_summary: The note on an earlier version of a conversation's summary.
        archived_summary: The note on an archived summary.
        profile: The heading of the user profile's section.
    """

    title: str = "Memories"
    exported: str = "Exported {date} · {count} memories"
    summaries: str = "Session summaries"
    untitled: str = "Untitled conversation"
    earlier_summary: str = "earlier version"
    archived_summary: str = "archived"
    profile: str = "User profile"


_MARKDOWN_SPECIAL_RE = re.compile(r"([\\`*_\[\]<>#|~])")


def escape(text: str) -> str:
    """Escape what Markdown would interpret in ``text``; line breaks stay inside a list item."""
    escaped = _MARKDOWN_SPECIAL_RE.sub(r"\\\1", text.strip())
    return "  \n  ".join(line.rstrip() for line in escaped.splitlines() or [""])


def export_markdown(
    memories: Iterable[Memory],
    *,
    exported_at: datetime,
    labels: MarkdownLabels | None = None,
    tz: tzinfo = UTC,
    summaries: Sequence[Summary] = (),
    profile: Profile | None = None,
) -> str:
    """A readable Markdown export: active memories grouped by kind, then the archived ones.

    Session summaries and the user profile, if given, follow in sections of their own.

    Not meant to be imported back (use ``document.export_json``).

    Args:
        memories: The memories.
        exported_at: When the export was made.
        labels: The words to use (default English).
        tz: The time zone dates are written in.
        summaries: The session summaries.
        profile: The user profile (its headings are moved one level down).

    Returns:
        The Markdown text.
    """
    words = labels or MarkdownLabels()
    items = list(memories)
    date = exported_at.astimezone(tz).strftime("%Y-%m-%d %H:%M")
    lines = [f"# {words.title}", "", words.exported.format(date=date, count=len(items)), ""]
    lines += memory_transfer.markdown_lines(
        items, now=exported_at, words=words, tz=tz, escape=escape
    )
    lines += summary_transfer.markdown_lines(
        summaries,
        heading=words.summaries,
        untitled=words.untitled,
        earlier=words.earlier_summary,
        archived=words.archived_summary,
        tz=tz,
        escape=escape,
    )
    lines += profile_transfer.markdown_lines(profile, words.profile)
    return "\n".join(lines)
