"""The Summaries page's Qt models: summaries as table rows, and the filters over them.

Search is a substring filter (case-insensitive) over the text and the conversation title of
every summary, archived ones and earlier versions included.
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

from etos_desktop.core.summaries.records import Summary
from etos_desktop.ui.job_text import local_time
from etos_desktop.ui.memory_text import one_line, rich_escaped

#: Table columns, in order.
COLUMNS: Final = ("conversation", "time", "content", "status")


def summary_state(summary: Summary) -> str:
    """``"current"``, ``"earlier"`` or ``"archived"``."""
    if summary.archived:
        return "archived"
    return "current" if summary.current else "earlier"


class SummaryTableModel(QAbstractTableModel):
    """Summaries as table rows: ids plus a cache of ``Summary`` values, no business logic.

    ``SUMMARY_ROLE`` gives the ``Summary`` of a row, ``SORT_ROLE`` a value that sorts the column
    naturally (times as timestamps).
    """

    SUMMARY_ROLE: Final = Qt.ItemDataRole.UserRole + 1
    SORT_ROLE: Final = Qt.ItemDataRole.UserRole + 2

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ids: list[int] = []
        self._rows: dict[int, Summary] = {}

    def set_summaries(self, summaries: Sequence[Summary]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._ids = [s.id for s in summaries]
        self._rows = {s.id: s for s in summaries}
        self.endResetModel()

    def summaries(self) -> list[Summary]:
        """Every summary, in row order."""
        return [self._rows[i] for i in self._ids]

    def summary(self, row: int) -> Summary:
        """The summary of a row."""
        return self._rows[self._ids[row]]

    def row_of(self, summary_id: int) -> int | None:
        """The row of a summary, if it is shown."""
        try:
            return self._ids.index(summary_id)
        except ValueError:
            return None

    def retranslate(self) -> None:
        """Re-read translated texts (headers and cells)."""
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS) - 1)
        if self._ids:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._ids) - 1, len(COLUMNS) - 1)
            )

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
        return None

    def column_title(self, column: str) -> str:
        """The translated title of a column."""
        return {
            "conversation": self.tr("Conversation"),
            "time": self.tr("Written"),
            "content": self.tr("Summary"),
            "status": self.tr("Status"),
        }[column]

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

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._ids):
            return None
        summary = self._rows[self._ids[index.row()]]
        column = COLUMNS[index.column()]
        if role == self.SUMMARY_ROLE:
            return summary
        if role == Qt.ItemDataRole.DisplayRole:
            if column == "conversation":
                return self.title_text(summary)
            if column == "time":
                return local_time(summary.created_at)
            if column == "content":
                return one_line(summary.content)
            return self.status_text(summary)
        if role == self.SORT_ROLE:
            if column == "time":
                return summary.created_at.timestamp()
            if column == "status":
                return ("current", "earlier", "archived").index(summary_state(summary))
            return str(self.data(index)).casefold()
        if role == Qt.ItemDataRole.ToolTipRole and column in {"content", "conversation"}:
            return f"<qt><p>{rich_escaped(summary.content)}</p><p><i>{html.escape(self.title_text(summary))}</i></p></qt>"
        if role == Qt.ItemDataRole.ForegroundRole and summary_state(summary) != "current":
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


class SummaryFilterModel(QSortFilterProxyModel):
    """Filters the summaries by text, conversation and status; sorts by ``SORT_ROLE``."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._conversation: int | None = None
        self._status = "all"
        self.setSortRole(SummaryTableModel.SORT_ROLE)
        self.setDynamicSortFilter(True)

    def set_filters(
        self,
        *,
        text: str | None = None,
        conversation: int | bool | None = False,
        status: str | None = None,
    ) -> None:
        """Change some filters (``False`` leaves the conversation filter; ``None`` clears it).

        Args:
            text: Substring to look for in the text and the conversation's title.
            conversation: Only this conversation's summaries.
            status: ``"all"``, ``"current"`` or ``"archived"``.
        """
        if text is not None:
            self._text = text.strip().casefold()
        if conversation is not False:
            self._conversation = conversation if isinstance(conversation, int) else None
        if status is not None:
            self._status = status
        if hasattr(self, "endFilterChange"):  # Qt 6.10+; invalidateRowsFilter is deprecated there
            self.beginFilterChange()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    def filterAcceptsRow(
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        model = self.sourceModel()
        assert isinstance(model, SummaryTableModel)
        summary = model.summary(source_row)
        if self._conversation is not None and summary.conversation_id != self._conversation:
            return False
        if self._status != "all" and summary_state(summary) != self._status:
            return False
        if self._text:
            haystack = f"{summary.conversation_title} {summary.content}".casefold()
            return self._text in haystack
        return True
