"""The one list of Settings: records as rows, the filters over them, and the view that shows them.

Every layer list is one of these (the memories, the summaries, the profile's history, and the
lists still to come: attachments, sync conflicts): a sequence of records that each have an
``id``. A layer says which columns it shows (``Column``) and which records its filters let
through (a ``RecordFilterModel`` subclass); the model holds ids plus a cache of the records
and no business logic. The page reads the records on the worker thread and hands them over
whole (``RecordList.show_records``): nothing here touches the database.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, Protocol, TypeVar

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QListView,
    QMenu,
    QTableView,
    QWidget,
)


class Record(Protocol):
    """What a list shows: anything with an ``id``."""

    @property
    def id(self) -> int: ...


R = TypeVar("R", bound=Record)
F = TypeVar("F")


@dataclass(frozen=True)
class Column(Generic[R]):
    """One column of a record list: its title, its cells, how it sorts and how wide it is.

    Attributes:
        key: The column's name in code ("content", "status").
        title: Its header, translated.
        display: A record's cell text.
        sort: A value that sorts the column naturally (numbers as numbers, times as
            timestamps); by default the cell text, case-folded.
        tooltip: A record's cell tooltip, or ``None``.
        header_tooltip: The header's tooltip.
        right: Aligned to the right (numbers).
        stretch: Takes the width the other columns leave.
        samples: The widest texts the column shows: it gets a fixed width from them and its
            title (measuring every row would be slow with thousands of records).
        hideable: The header's context menu can hide and show it.
        hidden: Hidden until the header's menu shows it.
    """

    key: str
    title: Callable[[], str]
    display: Callable[[R], str]
    sort: Callable[[R], Any] | None = None
    tooltip: Callable[[R], str | None] | None = None
    header_tooltip: Callable[[], str] | None = None
    right: bool = False
    stretch: bool = False
    samples: Callable[[], Sequence[str]] | None = None
    hideable: bool = False
    hidden: bool = False


class RecordTableModel(QAbstractTableModel, Generic[R]):
    """Records as table rows: ids plus a cache of the records, no business logic.

    ``ITEM_ROLE`` gives the record of a row, ``SORT_ROLE`` a value that sorts the column
    naturally (``Column.sort``).

    Args:
        columns: The columns, in order.
        muted: Whether a record is drawn in the disabled text colour (archived, ended).
        parent: The parent object.
    """

    ITEM_ROLE: Final = Qt.ItemDataRole.UserRole + 1
    SORT_ROLE: Final = Qt.ItemDataRole.UserRole + 2

    def __init__(
        self,
        columns: Sequence[Column[R]],
        *,
        muted: Callable[[R], bool] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._columns = tuple(columns)
        self._muted = muted
        self._ids: list[int] = []
        self._rows: dict[int, R] = {}

    # -- contents -------------------------------------------------------------------------------

    def set_records(self, records: Sequence[R]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._ids = [r.id for r in records]
        self._rows = {r.id: r for r in records}
        self.endResetModel()

    def records(self) -> list[R]:
        """Every record, in row order."""
        return [self._rows[i] for i in self._ids]

    def record(self, row: int) -> R:
        """The record of a row."""
        return self._rows[self._ids[row]]

    def row_of(self, record_id: int) -> int | None:
        """The row of a record, if it is shown."""
        try:
            return self._ids.index(record_id)
        except ValueError:
            return None

    def columns(self) -> tuple[Column[R], ...]:
        """The columns, in order."""
        return self._columns

    def column_index(self, key: str) -> int:
        """The position of a column."""
        return next(i for i, c in enumerate(self._columns) if c.key == key)

    def column_title(self, key: str) -> str:
        """The translated title of a column."""
        return self._columns[self.column_index(key)].title()

    def retranslate(self) -> None:
        """Re-read translated texts (headers and cells)."""
        last = len(self._columns) - 1
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, last)
        if self._ids:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._ids) - 1, last))

    # -- Qt model interface ---------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._columns):
            return None
        column = self._columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.title()
        if role == Qt.ItemDataRole.ToolTipRole and column.header_tooltip is not None:
            return column.header_tooltip()
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._ids):
            return None
        record = self._rows[self._ids[index.row()]]
        column = self._columns[index.column()]
        if role == self.ITEM_ROLE:
            return record
        if role == Qt.ItemDataRole.DisplayRole:
            return column.display(record)
        if role == self.SORT_ROLE:
            if column.sort is not None:
                return column.sort(record)
            return column.display(record).casefold()
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.tooltip(record) if column.tooltip is not None else None
        if role == Qt.ItemDataRole.TextAlignmentRole and column.right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and self._muted and self._muted(record):
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


class RecordFilterModel(QSortFilterProxyModel, Generic[R, F]):
    """Filters a record list by a layer's filters and sorts it by ``SORT_ROLE``.

    A layer's subclass holds its filters as a frozen dataclass (``F``) and decides in
    :meth:`accepts` which records they let through.

    Args:
        filters: The filters at the start (all records shown).
        parent: The parent object.
    """

    def __init__(self, filters: F, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._filters = filters
        self.setSortRole(RecordTableModel.SORT_ROLE)
        self.setDynamicSortFilter(True)

    @property
    def filters(self) -> F:
        """The filters now."""
        return self._filters

    def set_filters(self, **changes: Any) -> None:
        """Change some filters; those not named stay as they are (``None`` clears one).

        A ``text`` filter is kept case-folded, without the spaces around it.
        """
        if isinstance(changes.get("text"), str):
            changes["text"] = changes["text"].strip().casefold()
        self._filters = dataclasses.replace(self._filters, **changes)
        if hasattr(self, "endFilterChange"):  # Qt 6.10+; invalidateRowsFilter is deprecated there
            self.beginFilterChange()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    def accepts(self, record: R, filters: F) -> bool:
        """Whether ``filters`` let ``record`` through (a layer's subclass decides)."""
        return True

    def filterAcceptsRow(
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        model = self.sourceModel()
        assert isinstance(model, RecordTableModel)
        return self.accepts(model.record(source_row), self._filters)


class RecordList(QObject, Generic[R]):
    """A record model, its filter and the view showing them, with what a page asks of a list.

    Made as a table (:meth:`table`: columns with a header, several rows selected at once) or
    as a list (:meth:`entries`: one column of entries that wrap, one chosen). The page puts
    ``view`` in its layout.

    Signals:
        activated(object): a record was double-clicked.
        selection_changed(): the selected rows changed.
        current_changed(): the current row changed.
        delete_requested(): Delete was pressed in the view.
    """

    activated = Signal(object)
    selection_changed = Signal()
    current_changed = Signal()
    delete_requested = Signal()

    def __init__(
        self,
        model: RecordTableModel[R],
        proxy: QSortFilterProxyModel,
        view: QAbstractItemView,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.proxy = proxy
        self.view = view
        if proxy.sourceModel() is not model:
            proxy.setSourceModel(model)
        view.setModel(proxy)
        view.doubleClicked.connect(self._on_view_double_clicked)
        view.selectionModel().selectionChanged.connect(self.selection_changed)
        view.selectionModel().currentRowChanged.connect(self.current_changed)

    @classmethod
    def table(
        cls,
        model: RecordTableModel[R],
        proxy: QSortFilterProxyModel,
        parent: QWidget,
        *,
        name: str,
        sort_by: str,
    ) -> RecordList[R]:
        """A table of records, newest first by ``sort_by``, that the user sorts and resizes.

        Args:
            model: The records.
            proxy: Their filter (sorting by ``SORT_ROLE``).
            parent: The page.
            name: The view's object name.
            sort_by: The column sorted on at first, descending.
        """
        table = QTableView(parent)
        table.setObjectName(name)
        records = cls(model, proxy, table, parent)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        # Rows are chosen with the arrow keys; Tab moves on to the buttons.
        table.setTabKeyNavigation(False)
        table.setSortingEnabled(True)
        table.sortByColumn(model.column_index(sort_by), Qt.SortOrder.DescendingOrder)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.setAlternatingRowColors(True)
        table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(parent.fontMetrics().height() + 8)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setMinimumSectionSize(32)
        header.setHighlightSections(False)
        for section, column in enumerate(model.columns()):
            if column.stretch:
                header.setSectionResizeMode(section, QHeaderView.ResizeMode.Stretch)
            table.setColumnHidden(section, column.hidden)
        if any(column.hideable for column in model.columns()):
            header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            header.customContextMenuRequested.connect(records._on_header_context_menu_requested)
        delete_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), table)
        # Only while the table has focus: Delete in the search box edits the search.
        delete_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete_shortcut.activated.connect(records.delete_requested)
        return records

    @classmethod
    def entries(
        cls,
        model: RecordTableModel[R],
        parent: QWidget,
        *,
        name: str,
    ) -> RecordList[R]:
        """A column of entries in the model's order, each wrapping onto more lines, one chosen.

        For a narrow place (the profile's history beside its editor): entries wrap rather than
        scroll sideways. The first column's text is the entry.
        """
        view = QListView(parent)
        view.setObjectName(name)
        view.setWordWrap(True)
        view.setSpacing(2)
        view.setResizeMode(QListView.ResizeMode.Adjust)
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return cls(model, QSortFilterProxyModel(parent), view, parent)

    # -- selection ------------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """The ids of the selected records, in the view's order."""
        rows = sorted(index.row() for index in self.view.selectionModel().selectedRows())
        return [self.proxy.index(row, 0).data(RecordTableModel.ITEM_ROLE).id for row in rows]

    def select_ids(self, record_ids: Sequence[int]) -> None:
        """Select these records (those the filter shows)."""
        selection = QItemSelection()
        for record_id in record_ids:
            index = self._shown_index(record_id)
            if index.isValid():
                selection.select(index, index)
        self.view.selectionModel().select(
            selection,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def current(self) -> R | None:
        """The record of the current row."""
        return self.view.currentIndex().data(RecordTableModel.ITEM_ROLE)

    def set_current(self, record_id: int) -> None:
        """Make a record the current (and selected) row, if the filter shows it."""
        index = self._shown_index(record_id)
        if index.isValid():
            self.view.setCurrentIndex(index)

    def record_of(self, record_id: int) -> R:
        """A record in the list by its id."""
        row = self.model.row_of(record_id)
        assert row is not None
        return self.model.record(row)

    def show_records(self, records: Sequence[R]) -> None:
        """Show these records, keeping the selection and the scroll position."""
        selected = self.selected_ids()
        scroll = self.view.verticalScrollBar().value()
        self.model.set_records(records)
        self.select_ids(selected)
        self.view.verticalScrollBar().setValue(scroll)

    # -- columns --------------------------------------------------------------------------------

    def size_columns(self) -> None:
        """Give the columns with samples their fixed widths (after a language change too)."""
        metrics = self.view.fontMetrics()
        header = self.header()
        for section, column in enumerate(self.model.columns()):
            if column.samples is None:
                continue
            sample = max(metrics.horizontalAdvance(s) for s in column.samples()) + 16
            # What the style needs for the title, its margins and the sort arrow included.
            title = header.sectionSizeFromContents(section).width()
            header.resizeSection(section, max(sample, title))

    def header(self) -> QHeaderView:
        """The table's column header."""
        assert isinstance(self.view, QTableView)
        return self.view.horizontalHeader()

    def _shown_index(self, record_id: int) -> QModelIndex:
        row = self.model.row_of(record_id)
        if row is None:
            return QModelIndex()
        return self.proxy.mapFromSource(self.model.index(row, 0))

    def _on_view_double_clicked(self, index: QModelIndex) -> None:
        record = index.data(RecordTableModel.ITEM_ROLE)
        if record is not None:
            self.activated.emit(record)

    def _on_header_context_menu_requested(self, position: QPoint) -> None:
        # Which columns show: those the layer lets the user hide.
        assert isinstance(self.view, QTableView)
        table = self.view
        header = self.header()
        menu = QMenu(header)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        for section, column in enumerate(self.model.columns()):
            if not column.hideable:
                continue
            action = menu.addAction(column.title())
            action.setCheckable(True)
            action.setChecked(not table.isColumnHidden(section))
            action.toggled.connect(lambda shown, s=section: table.setColumnHidden(s, not shown))
        menu.popup(header.mapToGlobal(position))
