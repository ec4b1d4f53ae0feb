"""The Memory page's Qt models: the memories as table rows, and the filters over them.

Search is a substring filter (case-insensitive) over the text, tags, trigger context and ``#id``
of every memory, archived ones included; the engine's relevance search is deliberately not used
here because it never returns archived memories and may return nothing by design.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QPalette

from etos_desktop.core.clock import Clock
from etos_desktop.core.memory.records import Memory
from etos_desktop.ui.memory_text import (
    kind_name,
    local_time,
    one_line,
    rich_escaped,
    source_name,
    status_name,
    status_of,
)

#: Table columns, in order.
COLUMNS: Final = ("id", "content", "kind", "source", "confidence", "created", "last_used", "status")
#: Columns the table hides until the user shows them (the header's context menu): at the
#: dialog's default width they would leave the memory's text no room. The text's tooltip
#: shows their values.
HIDDEN_COLUMNS: Final = ("confidence", "created")


class MemoryTableModel(QAbstractTableModel):
    """The memories as table rows: ids plus a cache of ``Memory`` values, no business logic.

    ``MEMORY_ROLE`` gives the ``Memory`` of a row, ``SORT_ROLE`` a value that sorts the column
    naturally (numbers as numbers, dates as timestamps).
    """

    MEMORY_ROLE: Final = Qt.ItemDataRole.UserRole + 1
    SORT_ROLE: Final = Qt.ItemDataRole.UserRole + 2

    def __init__(self, clock: Clock, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._clock = clock
        self._ids: list[int] = []
        self._rows: dict[int, Memory] = {}

    # -- contents -------------------------------------------------------------------------------

    def set_memories(self, memories: Sequence[Memory]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._ids = [m.id for m in memories]
        self._rows = {m.id: m for m in memories}
        self.endResetModel()

    def memories(self) -> list[Memory]:
        """Every memory, in row order."""
        return [self._rows[i] for i in self._ids]

    def memory(self, row: int) -> Memory:
        """The memory of a row."""
        return self._rows[self._ids[row]]

    def row_of(self, memory_id: int) -> int | None:
        """The row of a memory, if it is shown."""
        try:
            return self._ids.index(memory_id)
        except ValueError:
            return None

    def retranslate(self) -> None:
        """Re-read translated texts (headers and cells)."""
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS) - 1)
        if self._ids:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._ids) - 1, len(COLUMNS) - 1)
            )

    # -- Qt model interface ---------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.column_title(COLUMNS[section])
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section] == "last_used":
            return self.tr("When the memory was last sent with a message")
        return None

    def column_title(self, column: str) -> str:
        """The translated title of a column."""
        return {
            "id": self.tr("#"),
            "content": self.tr("Memory"),
            "kind": self.tr("Kind"),
            "source": self.tr("Source"),
            "confidence": self.tr("Confidence"),
            "created": self.tr("Created"),
            "last_used": self.tr("Last used"),
            "status": self.tr("Status"),
        }[column]

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._ids):
            return None
        memory = self._rows[self._ids[index.row()]]
        column = COLUMNS[index.column()]
        if role == self.MEMORY_ROLE:
            return memory
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(memory, column)
        if role == self.SORT_ROLE:
            return self._sort_value(memory, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(memory, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in {"id", "confidence"}:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and not memory.is_active(self._clock.now()):
            return QBrush(QPalette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    # -- cells ----------------------------------------------------------------------------------

    def _display(self, memory: Memory, column: str) -> str:
        if column == "id":
            return str(memory.id)
        if column == "content":
            return one_line(memory.content)
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

    def _sort_value(self, memory: Memory, column: str) -> Any:
        if column == "id":
            return memory.id
        if column == "content":
            return memory.content.casefold()
        if column == "confidence":
            return memory.confidence
        if column == "created":
            return memory.created_at.timestamp()
        if column == "last_used":
            return memory.last_accessed_at.timestamp() if memory.last_accessed_at else -1.0
        if column == "status":
            order = {"active": 0, "expired": 1, "archived": 2, "superseded": 3}
            return order[status_of(memory, self._clock.now())]
        return self._display(memory, column).casefold()

    def _tooltip(self, memory: Memory, column: str) -> str | None:
        if column == "content":
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


class MemoryFilterModel(QSortFilterProxyModel):
    """Filters the memory table by text, kind, status and source; sorts by ``SORT_ROLE``."""

    def __init__(self, clock: Clock, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._clock = clock
        self._text = ""
        self._kind: str | None = None
        self._status = "all"
        self._source: str | None = None
        self.setSortRole(MemoryTableModel.SORT_ROLE)
        self.setDynamicSortFilter(True)

    def set_filters(
        self,
        *,
        text: str | None = None,
        kind: str | bool | None = False,
        status: str | None = None,
        source: str | bool | None = False,
    ) -> None:
        """Change some filters (``False`` leaves a kind/source filter as it is; ``None`` clears it).

        Args:
            text: Substring to look for in text, tags, trigger context and ``#id``.
            kind: Only this kind.
            status: ``"all"``, ``"active"`` or ``"inactive"`` (archived, superseded, expired).
            source: Only this source.
        """
        if text is not None:
            self._text = text.strip().casefold()
        if kind is not False:
            self._kind = kind if isinstance(kind, str) else None
        if status is not None:
            self._status = status
        if source is not False:
            self._source = source if isinstance(source, str) else None
        if hasattr(self, "endFilterChange"):  # Qt 6.10+; invalidateRowsFilter is deprecated there
            self.beginFilterChange()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    def filterAcceptsRow(
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        model = self.sourceModel()
        assert isinstance(model, MemoryTableModel)
        memory = model.memory(source_row)
        if self._kind is not None and memory.kind != self._kind:
            return False
        if self._source is not None and memory.source != self._source:
            return False
        if self._status != "all":
            active = memory.is_active(self._clock.now())
            if active != (self._status == "active"):
                return False
        if self._text:
            text = self._text
            if text.startswith("#") and text[1:].isdigit():
                return memory.id == int(text[1:])
            haystack = " ".join(
                [memory.content, " ".join(memory.tags), memory.trigger_context or ""]
            ).casefold()
            return text in haystack
        return True
