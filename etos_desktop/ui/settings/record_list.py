"""The one list of Settings: records as rows, the filters over them, and the view that shows them.

Every layer list is one of these (the memories, the summaries, the profile's history, and the
lists still to come: attachments, sync conflicts): a sequence of records that each have an
``id``. A layer says which columns it shows (``Column``) and which records its filters let
through (a ``RecordFilterModel`` subclass); the model holds ids plus a cache of the records
and no business logic.

A list is filled one of two ways. Handed its records whole (``RecordTableModel.set_records``:
the profile's history), it filters and sorts them in place. Given a ``RecordSource`` (the
layer's access object, which reads on the DB thread), it *fetches as it scrolls*: it reads the
first window of the records the filters let through, in the table's order, and the next window
when the view nears its end (``canFetchMore``/``fetchMore``); a filter typed or a column
clicked asks the source again (debounced), and the counts ("Showing 37 of 10,000") come from
the source's SQL. Nothing on the UI thread then grows with the store, only with what was
scrolled to. A store that fits in one window is read whole and filtered and sorted in place,
as a handed list is: every keystroke narrows it at once, without a query.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
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
from typing_extensions import override

from etos_desktop.core.storage.windows import PAGE_SIZE, Cursor, ListCounts, ListOrder, ListWindow
from etos_desktop.ui.task_set import TaskSet

#: How long typing pauses before the list asks its source again (a word is typed in one go).
QUERY_DELAY_S: Final = 0.15


class Record(Protocol):
    """What a list shows: anything with an ``id``."""

    @property
    def id(self) -> int:
        """The record's database id."""
        ...


R = TypeVar("R", bound=Record)
F = TypeVar("F")


class RecordSource(Protocol[R]):
    """Where a list that fetches as it scrolls reads its records (off the UI thread).

    The layer's access object: ``MemoryAccess``, ``SummaryAccess`` (``core.storage.windows``).
    """

    async def window(
        self,
        filters: Any,
        order: ListOrder,
        *,
        after: Cursor | None = None,
        limit: int = PAGE_SIZE,
        with_counts: bool = False,
    ) -> ListWindow[R]:
        """One window of the records ``filters`` let through, in ``order``."""
        ...

    async def matching_ids(self, filters: Any, *, archivable: bool | None = None) -> list[int]:
        """The ids of every record ``filters`` let through (or of those Archive applies to)."""
        ...


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
        ranks: For a column of stored values shown by their names: the values in the order
            their names sort now (a list that fetches as it scrolls sorts in SQL by them).
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
    ranks: Callable[[], Sequence[str]] | None = None


class RecordTableModel(QAbstractTableModel, Generic[R]):
    """Records as table rows: ids plus a cache of the records, no business logic.

    ``ITEM_ROLE`` gives the record of a row, ``SORT_ROLE`` a value that sorts the column
    naturally (``Column.sort``). Filled whole (:meth:`set_records`) or from a source, a window
    at a time (:meth:`set_source`, then :meth:`reload`; see the module docstring).

    Args:
        columns: The columns, in order.
        muted: Whether a record is drawn in the disabled text colour (archived, ended).
        parent: The parent object.

    Signals:
        loaded(): the rows were read again from the source (and the counts with them).
        fetched(): rows of the next window were added at the end.
        holds_everything_changed(): the list now holds every record (filtered and sorted in
            place) or no longer does (the source filters and sorts); emitted before the rows
            change.
        failed(object): reading from the source failed (the exception).
    """

    ITEM_ROLE: Final = Qt.ItemDataRole.UserRole + 1
    SORT_ROLE: Final = Qt.ItemDataRole.UserRole + 2

    loaded = Signal()
    fetched = Signal()
    holds_everything_changed = Signal()
    failed = Signal(object)

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
        self._positions: dict[int, int] = {}
        self._brush: tuple[int, QBrush] | None = None
        # Filled from a source: what it reads and where the next window starts.
        self._source: RecordSource[R] | None = None
        self._filters: Callable[[], Any] = lambda: None
        self._everything: Any = None
        self._order = ListOrder("id")
        self._shown: tuple[Any, ListOrder] = (None, self._order)
        self._cursor: Cursor | None = None
        self._counts: ListCounts | None = None
        self._whole = True
        self._generation = 0
        self._fetching = False
        self._query_task: asyncio.Task[Any] | None = None
        self._tasks = TaskSet(report=lambda _failure, error: self.failed.emit(error))
        #: Windows read from the source since it was set (what the tests count).
        self.windows_read = 0

    # -- contents -------------------------------------------------------------------------------

    def set_records(self, records: Sequence[R]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self._replace(records)
        self.endResetModel()

    def _replace(self, records: Sequence[R]) -> None:
        self._ids = [r.id for r in records]
        self._rows = {r.id: r for r in records}
        self._positions = {record_id: row for row, record_id in enumerate(self._ids)}

    def records(self) -> list[R]:
        """Every record held, in row order."""
        return [self._rows[i] for i in self._ids]

    def record(self, row: int) -> R:
        """The record of a row."""
        return self._rows[self._ids[row]]

    def row_of(self, record_id: int) -> int | None:
        """The row of a record, if it is held."""
        return self._positions.get(record_id)

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

    # -- filled from a source -------------------------------------------------------------------

    def set_source(
        self, source: RecordSource[R], filters: Callable[[], Any], everything: Any
    ) -> None:
        """Read the records from ``source`` from now on (:meth:`reload` reads the first window).

        Args:
            source: Reads the windows and the matching ids on the DB thread.
            filters: Gives the filters the list applies now (the filter model's).
            everything: The filters that let every record through.
        """
        self._source = source
        self._filters = filters
        self._everything = everything

    @property
    def source(self) -> RecordSource[R] | None:
        """Where the records are read, if they are read from a source."""
        return self._source

    def counts(self) -> ListCounts | None:
        """The counts read with the rows (``None`` before the first read, or without a source)."""
        return self._counts

    def order(self) -> ListOrder:
        """The order the source is asked for."""
        return self._order

    def holds_everything(self) -> bool:
        """Whether the rows are every record (filtered and sorted in place, not by the source)."""
        return self._source is None or self._whole

    def set_order(self, order: ListOrder) -> None:
        """Sort by another column: the source is asked again (unless every record is held)."""
        if order == self._order:
            return
        self._order = order
        if self._source is not None and not self._whole and self._counts is not None:
            self.query_again(delay=0.0)

    def query_again(self, *, delay: float = QUERY_DELAY_S) -> None:
        """Read the first window again after ``delay`` (the filters or the order changed).

        A request made meanwhile replaces this one: typing a word reads once, after its last
        key. The rows shown stay until the new ones are there.
        """
        if self._source is None:
            return
        if self._query_task is not None:
            self._query_task.cancel()
        self._query_task = self._tasks.spawn(self._query_after(delay))

    async def _query_after(self, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        await self.reload()

    async def reload(self, keep: int = 0) -> None:
        """Read the first window again (at least ``keep`` rows: those scrolled to stay).

        When the store fits in one window, every record is read and the filter model filters
        and sorts them in place; otherwise the source is asked for the matching ones, in order.
        """
        source = self._source
        if source is None:
            return
        pending = self._query_task
        if pending is not None and pending is not asyncio.current_task():
            pending.cancel()  # this read is the newer one
        self._generation += 1
        generation = self._generation
        limit = max(PAGE_SIZE, keep)
        filters, order = self._filters(), self._order
        read = functools.partial(self._read, order=order, with_counts=True)
        window: ListWindow[R] | None = None
        whole = self._whole
        if whole:
            first = await read(self._everything, limit=PAGE_SIZE)
            whole = first.cursor is None
            if whole or (filters == self._everything and limit == PAGE_SIZE):
                window = first  # every record, or already the first window asked for
        if window is None:
            window = await read(filters, limit=limit)
            counts = window.counts
            if counts is not None and counts.total <= PAGE_SIZE:
                # Shrunk to one window: held whole again, filtered in place.
                whole = True
                if filters != self._everything:
                    window = await read(self._everything, limit=PAGE_SIZE)
        if generation != self._generation:
            return  # a newer read is under way
        self._fetching = False
        if whole != self._whole:
            self._whole = whole
            self.holds_everything_changed.emit()
        self._counts = window.counts
        self._cursor = window.cursor
        # The next windows continue these rows: the same filters and order, whatever changes
        # before the list is read again.
        self._shown = (filters, order)
        self.set_records(window.records)
        self.loaded.emit()

    async def _read(
        self,
        filters: Any,
        *,
        order: ListOrder,
        after: Cursor | None = None,
        limit: int = PAGE_SIZE,
        with_counts: bool = False,
    ) -> ListWindow[R]:
        source = self._source
        assert source is not None
        self.windows_read += 1
        return await source.window(
            filters, order, after=after, limit=limit, with_counts=with_counts
        )

    @override
    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        return not parent.isValid() and self._source is not None and self._cursor is not None

    @override
    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self.canFetchMore(parent) and not self._fetching:
            self._fetching = True
            self._tasks.spawn(self._fetch(self._generation, self._cursor))

    async def _fetch(self, generation: int, cursor: Cursor | None) -> None:
        source = self._source
        assert source is not None
        try:
            filters, order = self._shown
            window = await self._read(filters, order=order, after=cursor)
        finally:
            if generation == self._generation:
                self._fetching = False
        if generation != self._generation:
            return  # read again meanwhile: this window belongs to the rows before
        fresh = [r for r in window.records if r.id not in self._positions]
        self._cursor = window.cursor
        if fresh:
            first = len(self._ids)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            for offset, record in enumerate(fresh):
                self._ids.append(record.id)
                self._rows[record.id] = record
                self._positions[record.id] = first + offset
            self.endInsertRows()
        self.fetched.emit()

    async def wait_idle(self) -> None:
        """Wait until every read this model started has ended (tests, closing)."""
        await self._tasks.wait_idle()

    def reading(self) -> bool:
        """Whether a read this model started is under way."""
        return bool(len(self._tasks))

    def stop(self) -> None:
        """Stop reading (the page is closing): what is under way is dropped."""
        self._generation += 1
        self._tasks.cancel_all()

    # -- Qt model interface ---------------------------------------------------------------------

    @override
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    @override
    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    @override
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

    @override
    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        # Called for every role of every visible cell at each repaint (about 1,600 calls when
        # the table scrolls): the roles the model has nothing for return first.
        if role not in _ROLES:
            return None
        row = index.row()
        if not 0 <= row < len(self._ids) or not index.isValid():
            return None
        record = self._rows[self._ids[row]]
        column = self._columns[index.column()]
        if role == _DISPLAY:
            return column.display(record)
        if role == _FOREGROUND:
            return self._muted_brush() if self._muted and self._muted(record) else None
        if role == _ALIGNMENT:
            return _RIGHT if column.right else None
        if role == _ITEM:
            return record
        if role == _SORT:
            if column.sort is not None:
                return column.sort(record)
            return column.display(record).casefold()
        # The tooltip.
        return column.tooltip(record) if column.tooltip is not None else None

    def _muted_brush(self) -> QBrush:
        palette = QPalette()
        if self._brush is None or self._brush[0] != palette.cacheKey():
            brush = QBrush(palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
            self._brush = (palette.cacheKey(), brush)
        return self._brush[1]

    @override
    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags


#: The roles ``RecordTableModel.data`` answers, as the ints Qt passes.
_DISPLAY: Final = int(Qt.ItemDataRole.DisplayRole)
_FOREGROUND: Final = int(Qt.ItemDataRole.ForegroundRole)
_ALIGNMENT: Final = int(Qt.ItemDataRole.TextAlignmentRole)
_ITEM: Final = int(RecordTableModel.ITEM_ROLE)
_SORT: Final = int(RecordTableModel.SORT_ROLE)
_ROLES: Final = frozenset(
    {_DISPLAY, _FOREGROUND, _ALIGNMENT, _ITEM, _SORT, int(Qt.ItemDataRole.ToolTipRole)}
)
_RIGHT: Final = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
#: Every cell's flags (computed once: an enum ``|`` costs microseconds, per cell, per paint).
_FLAGS: Final = (
    Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
)


class RecordFilterModel(QSortFilterProxyModel, Generic[R, F]):
    """Filters a record list by a layer's filters and sorts it by ``SORT_ROLE``.

    A layer's subclass holds its filters as a frozen dataclass (``F``) and decides in
    :meth:`accepts` which records they let through. Over a list that fetches as it scrolls
    (and does not hold every record), it filters and sorts nothing itself: a change of the
    filters or of the sorted column asks the list's source again, which filters and sorts in
    SQL by the same rule.

    Args:
        filters: The filters at the start (all records shown).
        parent: The parent object.
    """

    def __init__(self, filters: F, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._filters = filters
        self._everything = filters
        self._sorted = (-1, Qt.SortOrder.AscendingOrder)
        self.setSortRole(RecordTableModel.SORT_ROLE)
        self.setDynamicSortFilter(True)

    @property
    def filters(self) -> F:
        """The filters now."""
        return self._filters

    @property
    def everything(self) -> F:
        """The filters that let every record through (those at the start)."""
        return self._everything

    @override
    def setSourceModel(self, model: Any) -> None:
        previous = self.sourceModel()
        if isinstance(previous, RecordTableModel):
            previous.holds_everything_changed.disconnect(self._on_source_holds_everything_changed)
        super().setSourceModel(model)
        if isinstance(model, RecordTableModel):
            model.holds_everything_changed.connect(self._on_source_holds_everything_changed)

    def _windowed(self) -> RecordTableModel[R] | None:
        """The source model, when it fetches as it scrolls and does not hold every record."""
        model = self.sourceModel()
        if isinstance(model, RecordTableModel) and not model.holds_everything():
            return model
        return None

    def set_filters(self, **changes: Any) -> None:
        """Change some filters; those not named stay as they are (``None`` clears one).

        A ``text`` filter is kept case-folded, without the spaces around it.
        """
        if isinstance(changes.get("text"), str):
            changes["text"] = changes["text"].strip().casefold()
        filters = dataclasses.replace(self._filters, **changes)  # type: ignore[type-var]
        if filters == self._filters:
            return
        self._filters = filters
        windowed = self._windowed()
        if windowed is not None:
            windowed.query_again()
            return
        self._refilter()

    def _refilter(self) -> None:
        if hasattr(self, "endFilterChange"):  # Qt 6.10+; invalidateRowsFilter is deprecated there
            self.beginFilterChange()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    @override
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sorted = (column, order)
        model = self.sourceModel()
        if isinstance(model, RecordTableModel) and 0 <= column < model.columnCount():
            chosen = model.columns()[column]
            ranks = tuple(chosen.ranks()) if chosen.ranks is not None else ()
            descending = order == Qt.SortOrder.DescendingOrder
            model.set_order(ListOrder(chosen.key, descending, ranks))
        if self._windowed() is not None:
            super().sort(-1)  # the rows come sorted
        else:
            super().sort(column, order)

    def _on_source_holds_everything_changed(self) -> None:
        # Before the rows change: sort and filter in place again, or leave both to the source.
        if self._windowed() is not None:
            super().sort(-1)
        else:
            super().sort(*self._sorted)
        self._refilter()

    def accepts(self, record: R, filters: F) -> bool:
        """Whether ``filters`` let ``record`` through (a layer's subclass decides)."""
        return True

    @override
    def filterAcceptsRow(
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        model = self.sourceModel()
        assert isinstance(model, RecordTableModel)
        if not model.holds_everything():
            return True
        return self.accepts(model.record(source_row), self._filters)


class RecordTableView(QTableView):
    """A table of records that tells when the user selected every row (Ctrl+A).

    Over a list that fetches as it scrolls, "every row" means every record the filters let
    through, also those not read yet: the page acts on them in SQL.

    Signals:
        every_row_selected(): Select all selected every row.
    """

    every_row_selected = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.selecting_all = False

    @override
    def selectAll(self) -> None:
        self.selecting_all = True
        try:
            super().selectAll()
        finally:
            self.selecting_all = False
        self.every_row_selected.emit()


class RecordList(QObject, Generic[R]):
    """A record model, its filter and the view showing them, with what a page asks of a list.

    Made as a table (:meth:`table`: columns with a header, several rows selected at once) or
    as a list (:meth:`entries`: one column of entries that wrap, one chosen). The page puts
    ``view`` in its layout.

    Signals:
        activated(object): a record was double-clicked.
        selection_changed(): the selected rows changed (or "every row" began or ended).
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
        # "Every row" stays true while rows are fetched and the list is read again; any other
        # change of the selection ends it.
        self._every = False
        self._quiet = False
        self._kept: list[int] = []
        if proxy.sourceModel() is not model:
            proxy.setSourceModel(model)
        view.setModel(proxy)
        view.doubleClicked.connect(self._on_view_double_clicked)
        view.selectionModel().selectionChanged.connect(self._on_selection_model_changed)
        view.selectionModel().currentRowChanged.connect(self.current_changed)
        if isinstance(view, RecordTableView):
            view.every_row_selected.connect(self._on_view_every_row_selected)
        proxy.rowsInserted.connect(self._on_proxy_rows_inserted)
        model.modelAboutToBeReset.connect(self._on_model_about_to_be_reset)
        model.loaded.connect(self._on_model_loaded)

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
        table = RecordTableView(parent)
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
        # One height for every row: the table never measures rows (thousands are fetched).
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
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
        # Entries of varying height are measured a batch at a time, between events: a profile
        # with years of daily versions (1,000 entries) stalled the loop 134 ms laid out at once.
        view.setLayoutMode(QListView.LayoutMode.Batched)
        view.setBatchSize(50)
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return cls(model, QSortFilterProxyModel(parent), view, parent)

    # -- selection ------------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """The ids of the selected records, in the view's order."""
        # From the selection's ranges (whole rows): selectedRows() asks every cell's flags.
        rows: set[int] = set()
        for selected in self.view.selectionModel().selection():
            rows.update(range(selected.top(), selected.bottom() + 1))
        proxy = self.proxy
        return [proxy.index(row, 0).data(RecordTableModel.ITEM_ROLE).id for row in sorted(rows)]

    def select_ids(self, record_ids: Sequence[int]) -> None:
        """Select these records (those the filter shows)."""
        rows = sorted(
            index.row()
            for index in (self._shown_index(record_id) for record_id in record_ids)
            if index.isValid()
        )
        selection = QItemSelection()
        # Runs of rows as one range each: selecting 10,000 rows one by one takes seconds.
        start = previous = None
        for row in [*rows, None]:
            if row is not None and previous is not None and row == previous + 1:
                previous = row
                continue
            if start is not None and previous is not None:
                selection.select(self.proxy.index(start, 0), self.proxy.index(previous, 0))
            start = previous = row
        self.view.selectionModel().select(
            selection,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def every_row_selected(self) -> bool:
        """Whether Select all chose every row the filters let through (fetched or not)."""
        return self._every and self.proxy.rowCount() > 0

    def select_every_row(self) -> None:
        """Select every row the filters let through (as Ctrl+A does)."""
        if isinstance(self.view, RecordTableView):
            self.view.selectAll()

    async def reload(self) -> None:
        """Read the list again from its source, keeping the selection and the scroll position.

        As many rows as were fetched are read again, so what the user scrolled to stays.
        """
        every = self._every
        selected = [] if every else self.selected_ids()
        scroll = self.view.verticalScrollBar().value()
        self._quiet = True
        try:
            await self.model.reload(keep=self.model.rowCount())
        finally:
            self._quiet = False
        if every:
            self.select_every_row()
        else:
            self.select_ids(selected)
        self.view.verticalScrollBar().setValue(scroll)

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

    def _on_selection_model_changed(self) -> None:
        view = self.view
        if isinstance(view, RecordTableView) and view.selecting_all:
            return  # every_row_selected follows: the page looks at the selection once
        if not self._quiet:
            self._every = False
        self.selection_changed.emit()

    def _on_view_every_row_selected(self) -> None:
        self._every = True
        self.selection_changed.emit()

    def _on_proxy_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        # Rows fetched while every row is selected are selected too.
        if self._every:
            self._quiet = True
            try:
                self.view.selectionModel().select(
                    QItemSelection(self.proxy.index(first, 0), self.proxy.index(last, 0)),
                    QItemSelectionModel.SelectionFlag.Select
                    | QItemSelectionModel.SelectionFlag.Rows,
                )
            finally:
                self._quiet = False

    def _on_model_about_to_be_reset(self) -> None:
        # Read again for other filters or another order: the rows still shown stay selected.
        if not self._quiet and self.model.source is not None:
            self._kept = [] if self._every else self.selected_ids()
            self._every = False

    def _on_model_loaded(self) -> None:
        if not self._quiet:
            kept, self._kept = self._kept, []
            if kept:
                self.select_ids(kept)

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
