"""The Memory page's list: the memories' columns, and the filters over them.

Search is a substring filter (case-insensitive) over the text, tags, trigger context and ``#id``
of every memory, archived ones included (``core.memory.listing`` holds the rule, in SQL for the
list that fetches as it scrolls and over loaded memories for one that holds them all); the
engine's relevance search is deliberately not used here because it never returns archived
memories and may return nothing by design.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Final

from PySide6.QtCore import QObject
from typing_extensions import override

from etos_desktop.core.clock import Clock
from etos_desktop.core.memory import listing
from etos_desktop.core.memory.listing import MemoryFilters
from etos_desktop.core.memory.records import Memory, MemoryKind, MemorySource
from etos_desktop.ui.memory_text import (
    kind_name,
    local_time,
    one_line,
    replaced_by_text,
    rich_escaped,
    source_name,
    status_name,
    status_of,
)
from etos_desktop.ui.settings.record_list import Column, RecordFilterModel, RecordTableModel

#: Table columns, in order.
COLUMNS: Final = ("id", "content", "kind", "source", "confidence", "created", "last_used", "status")
#: Columns the table hides until the user shows them (the header's context menu): at the
#: dialog's default width they would leave the memory's text no room. The text's tooltip
#: shows their values.
HIDDEN_COLUMNS: Final = ("source", "confidence", "created")
#: How the status column sorts.
_STATUS_ORDER: Final = {"active": 0, "expired": 1, "archived": 2, "superseded": 3}


class MemoryTableModel(RecordTableModel[Memory]):
    """The memories as table rows: ``RecordTableModel`` with the memory columns.

    ``MEMORY_ROLE`` gives the ``Memory`` of a row; a memory no longer active is greyed. Every
    column but the text can be hidden from the header's context menu.
    """

    MEMORY_ROLE: Final = RecordTableModel.ITEM_ROLE

    def __init__(self, clock: Clock, parent: QObject | None = None) -> None:
        self._clock = clock
        super().__init__(
            [self._column(key) for key in COLUMNS],
            muted=lambda memory: not memory.is_active(clock.now()),
            parent=parent,
        )

    def set_memories(self, memories: Sequence[Memory]) -> None:
        """Replace every row."""
        self.set_records(memories)

    def memories(self) -> list[Memory]:
        """Every memory, in row order."""
        return self.records()

    def memory(self, row: int) -> Memory:
        """The memory of a row."""
        return self.record(row)

    # -- columns --------------------------------------------------------------------------------

    def _column(self, key: str) -> Column[Memory]:
        if key == "content":
            return Column(
                key,
                lambda: self.tr("Memory"),
                lambda m: one_line(m.content),
                sort=lambda m: m.content.casefold(),
                tooltip=self._content_tooltip,
                stretch=True,
            )
        titles = {
            "id": lambda: self.tr("#"),
            "kind": lambda: self.tr("Kind"),
            "source": lambda: self.tr("Source"),
            "confidence": lambda: self.tr("Confidence"),
            "created": lambda: self.tr("Created"),
            "last_used": lambda: self.tr("Last used"),
            "status": lambda: self.tr("Status"),
        }
        return Column(
            key,
            titles[key],
            lambda m: self._display(m, key),
            sort=lambda m: self._sort_value(m, key),
            tooltip=lambda m: self._tooltip(m, key),
            header_tooltip=(
                (lambda: self.tr("When the memory was last sent with a message"))
                if key == "last_used"
                else None
            ),
            right=key in {"id", "confidence"},
            samples=lambda: self._samples(key),
            hideable=True,
            hidden=key in HIDDEN_COLUMNS,
            ranks=self._ranks(key),
        )

    @staticmethod
    def _ranks(column: str) -> Callable[[], Sequence[str]] | None:
        # Kinds and sources sort by their names in the language shown, also in SQL.
        if column == "kind":
            return lambda: sorted(
                (k.value for k in MemoryKind), key=lambda v: kind_name(v).casefold()
            )
        if column == "source":
            return lambda: sorted(
                (s.value for s in MemorySource), key=lambda v: source_name(v).casefold()
            )
        return None

    def _display(self, memory: Memory, column: str) -> str:
        if column == "id":
            return str(memory.id)
        if column == "kind":
            return kind_name(memory.kind)
        if column == "source":
            return source_name(memory.source)
        if column == "confidence":
            return f"{memory.confidence:.2f}"
        if column == "created":
            return local_time(memory.created_at)
        if column == "last_used":
            return local_time(memory.last_accessed_at) if memory.last_accessed_at else "—"
        return status_name(memory, self._clock.now())

    def _sort_value(self, memory: Memory, column: str) -> object:
        if column == "id":
            return memory.id
        if column == "confidence":
            return memory.confidence
        if column == "created":
            return memory.created_at.timestamp()
        if column == "last_used":
            return memory.last_accessed_at.timestamp() if memory.last_accessed_at else -1.0
        if column == "status":
            return _STATUS_ORDER[status_of(memory, self._clock.now())]
        return self._display(memory, column).casefold()

    @staticmethod
    def _samples(column: str) -> Sequence[str]:
        # The widest texts: the columns get fixed widths (ResizeToContents would measure every
        # row, slow with thousands of memories).
        if column == "kind":
            return [kind_name(k) for k in MemoryKind]
        if column == "source":
            return [source_name(s) for s in MemorySource]
        if column == "status":
            return [replaced_by_text("0000")]
        return [{"id": "00000", "confidence": "0.00"}.get(column, "2026-12-31")]

    def _content_tooltip(self, memory: Memory) -> str:
        lines = [f"<p>{rich_escaped(memory.content)}</p>"]
        if memory.tags:
            tags = rich_escaped(", ".join(memory.tags))
            label = html.escape(self.tr("Tags:"))
            lines.append(f"<p><i>{label}</i> {tags}</p>")
        if memory.trigger_context:
            label = html.escape(self.tr("Recall when:"))
            lines.append(f"<p><i>{label}</i> {rich_escaped(memory.trigger_context)}</p>")
        details = [
            (self.tr("Importance"), f"{memory.importance:.2f}"),
            (self.tr("Confidence"), f"{memory.confidence:.2f}"),
            (self.tr("Created"), local_time(memory.created_at, "%Y-%m-%d %H:%M")),
        ]
        lines.append(
            "<p>"
            + " · ".join(f"<i>{html.escape(name)}:</i> {value}" for name, value in details)
            + "</p>"
        )
        return "<qt>" + "".join(lines) + "</qt>"

    def _tooltip(self, memory: Memory, column: str) -> str | None:
        if column in {"created", "last_used"}:
            value = memory.created_at if column == "created" else memory.last_accessed_at
            if value is None:
                return self.tr("Never sent with a message")
            text = local_time(value, "%Y-%m-%d %H:%M")
            if column == "last_used":
                text += " · " + self.tr("used %n time(s)", "", memory.access_count)
            return text
        if column == "status" and memory.valid_until is not None:
            return self.tr("Valid until {date}").format(
                date=local_time(memory.valid_until, "%Y-%m-%d %H:%M")
            )
        return None


__all__ = ["COLUMNS", "HIDDEN_COLUMNS", "MemoryFilterModel", "MemoryFilters", "MemoryTableModel"]


class MemoryFilterModel(RecordFilterModel[Memory, MemoryFilters]):
    """Filters the memory table by text, kind, status and source (``set_filters``)."""

    def __init__(self, clock: Clock, parent: QObject | None = None) -> None:
        super().__init__(MemoryFilters(), parent)
        self._clock = clock

    @override
    def accepts(self, memory: Memory, filters: MemoryFilters) -> bool:
        return listing.accepts(memory, filters, self._clock.now())
