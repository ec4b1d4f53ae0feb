"""The Summaries page's list: the summaries' columns, and the filters over them.

Search is a substring filter (case-insensitive) over the text and the conversation title of
every summary, archived ones and earlier versions included (``core.summaries.listing`` holds the
rule, in SQL and over loaded summaries).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from PySide6.QtCore import QObject
from typing_extensions import override

from etos_desktop.core.summaries import listing
from etos_desktop.core.summaries.listing import SummaryFilters
from etos_desktop.core.summaries.records import Summary
from etos_desktop.ui.job_text import local_time
from etos_desktop.ui.memory_text import one_line, rich_escaped
from etos_desktop.ui.settings.record_list import Column, RecordFilterModel, RecordTableModel

#: Table columns, in order.
COLUMNS: Final = ("conversation", "time", "content", "status")
#: How the status column sorts.
_STATES: Final = ("current", "earlier", "archived")


def summary_state(summary: Summary) -> str:
    """``"current"``, ``"earlier"`` or ``"archived"``."""
    if summary.archived:
        return "archived"
    return "current" if summary.current else "earlier"


class SummaryTableModel(RecordTableModel[Summary]):
    """Summaries as table rows: ``RecordTableModel`` with the summary columns.

    ``SUMMARY_ROLE`` gives the ``Summary`` of a row; earlier versions and archived ones are
    greyed.
    """

    SUMMARY_ROLE: Final = RecordTableModel.ITEM_ROLE

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(
            [
                Column(
                    "conversation",
                    lambda: self.tr("Conversation"),
                    self.title_text,
                    tooltip=self._tooltip,
                    samples=lambda: ["M" * 14],
                ),
                Column(
                    "time",
                    lambda: self.tr("Written"),
                    lambda s: local_time(s.created_at),
                    sort=lambda s: s.created_at.timestamp(),
                    samples=lambda: ["2026-12-31 23:59"],
                ),
                Column(
                    "content",
                    lambda: self.tr("Summary"),
                    lambda s: one_line(s.content),
                    tooltip=self._tooltip,
                    stretch=True,
                ),
                Column(
                    "status",
                    lambda: self.tr("Status"),
                    self.status_text,
                    sort=lambda s: _STATES.index(summary_state(s)),
                    samples=lambda: [self.status_text(_sample_edited())],
                ),
            ],
            muted=lambda summary: summary_state(summary) != "current",
            parent=parent,
        )

    def set_summaries(self, summaries: Sequence[Summary]) -> None:
        """Replace every row."""
        self.set_records(summaries)

    def summaries(self) -> list[Summary]:
        """Every summary, in row order."""
        return self.records()

    def summary(self, row: int) -> Summary:
        """The summary of a row."""
        return self.record(row)

    def status_text(self, summary: Summary) -> str:
        """The translated status of a summary."""
        text = {
            "current": self.tr("Current"),
            "earlier": self.tr("Earlier version"),
            "archived": self.tr("Archived"),
        }[summary_state(summary)]
        if summary.edited_by_user:
            text += " · " + self.tr("edited")
        return text

    def title_text(self, summary: Summary) -> str:
        """The conversation's title, or words for a missing one."""
        title = one_line(summary.conversation_title)
        if title:
            return title
        if summary.conversation_id is None:
            return self.tr("(imported)")
        return self.tr("(untitled)")

    def _tooltip(self, summary: Summary) -> str:
        return f"<qt><p>{rich_escaped(summary.content)}</p><p><i>{html.escape(self.title_text(summary))}</i></p></qt>"


def _sample_edited() -> Summary:
    """A summary whose status text is the longest (for column widths)."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return Summary(0, 0, "", "", "en", now, now, None, 0, "scheduled", True, None, current=False)


__all__ = ["COLUMNS", "SummaryFilterModel", "SummaryFilters", "SummaryTableModel", "summary_state"]


class SummaryFilterModel(RecordFilterModel[Summary, SummaryFilters]):
    """Filters the summaries by text, conversation and status (``set_filters``)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(SummaryFilters(), parent)

    @override
    def accepts(self, summary: Summary, filters: SummaryFilters) -> bool:
        return listing.accepts(summary, filters)
