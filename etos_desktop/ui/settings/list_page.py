"""The one list page of Settings: a layer's records in a table, with their actions and Undo.

The Memory and Summaries pages are this page for their layer (and so are the lists still to
come: attachments, sync conflicts). Under the layer's settings it shows a filter row (a search
box and the layer's combo boxes), the table (``record_list.RecordList``), the row of actions —
the layer's own first (Add…), then Edit…, Archive, Restore, Delete, History and More (the
layer's menu actions, then its "Delete all…"), the count at the right — the Undo bar and the
status line.

Edit, archive, restore, delete, delete all and Undo are run here, one at a time
(``SettingsPage.start``); a layer's subclass says how (its ``_edit``, ``_set_archived``,
``_delete_records``… on its access object, which works off the UI thread) and in which words
(``ListWords``). Deleted records are held for Undo in memory only, until :meth:`close_page`
(DESIGN §3: delete is real); an archive can be undone the same way (Undo restores exactly the
records it archived).

The table fetches as it scrolls (``record_list``): the count comes from SQL, and after Select
all (Ctrl+A) Archive, Restore and Delete act on every record the filters let through, also
those not fetched yet: their ids are read in SQL, and the action is one transaction as for
selected rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.changes import DataChange, Layer
from etos_desktop.core.storage.windows import ListCounts
from etos_desktop.ui import dialogs
from etos_desktop.ui.settings.page import SettingsPage
from etos_desktop.ui.settings.record_list import (
    R,
    RecordFilterModel,
    RecordList,
    RecordSource,
    RecordTableModel,
)

if TYPE_CHECKING:
    from etos_desktop.ui.changes_bridge import ChangesBridge


@dataclass(frozen=True)
class ListWords:
    """What a list page says about its records, each a function that gives translated text.

    Attributes:
        count: The count beside the actions, of every record ("7 memories · 5 active").
        delete_question: The title and the text of the question before deleting these ids
            (``True``: they are every record).
        nothing_to_delete: "Delete all" found nothing.
        deleted: The Undo bar after deleting this many.
        archived: The Undo bar after archiving this many.
        brought_back: After Undo brought back this many.
        not_loaded: Reading the list failed.
        not_saved: Editing the record with this id failed.
        not_archived: Archiving failed.
        not_restored: Restoring failed.
        not_deleted: Deleting failed.
        not_brought_back: Undo failed.
    """

    count: Callable[[ListCounts], str]
    delete_question: Callable[[Sequence[int], bool], tuple[str, str]]
    nothing_to_delete: Callable[[], str]
    deleted: Callable[[int], str]
    archived: Callable[[int], str]
    brought_back: Callable[[int], str]
    not_loaded: Callable[[], str]
    not_saved: Callable[[int], str]
    not_archived: Callable[[], str]
    not_restored: Callable[[], str]
    not_deleted: Callable[[], str]
    not_brought_back: Callable[[], str]


@dataclass(frozen=True)
class _Undoable:
    """What Undo brings back: a deleted batch (the layer's snapshots) or the ids archived."""

    kind: Literal["delete", "archive"]
    batch: Sequence[Any]


class ListPage(SettingsPage, Generic[R]):
    """A Settings page around one list of a layer's records (see the module docstring).

    A subclass sets ``words``, builds its settings and calls :meth:`build_list` with its
    access object as the list's source; it implements :meth:`refresh` (reading the list again
    with :meth:`reload_list`, and what else it shows) and the hooks of the actions, and
    extends :meth:`_update_actions` and :meth:`retranslate` for its own parts (calling
    :meth:`retranslate_list`).

    Signals:
        refreshed(): the list was reloaded from the database.
    """

    refreshed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._undo: list[_Undoable] = []
        self.words: ListWords
        self._followed: tuple[Layer, ...] = ()
        self._follow_queued = False

    # -- building -------------------------------------------------------------------------------

    def build_list(
        self,
        settings: QWidget,
        model: RecordTableModel[R],
        proxy: RecordFilterModel[R, Any],
        *,
        name: str,
        sort_by: str,
        source: RecordSource[R],
        filters: Callable[[], Sequence[QWidget]],
        between: Callable[[], Sequence[QWidget]] = tuple,
        body: Callable[[QTableView], QWidget] | None = None,
        lead: Callable[[], Sequence[QAbstractButton]] = tuple,
        menu: Sequence[QAction] = (),
    ) -> None:
        """Make the filter row, the table, the row of actions and the Undo bar; lay out the page.

        The parts are made in the order they stand on the page, which is the order Tab visits
        them in: the layer's own parts are made by the callables, each at its place.

        Args:
            settings: The layer's settings, at the top.
            model: The layer's records.
            proxy: The layer's filter over them.
            name: The start of the parts' object names ("memory": ``memoryTable``,
                ``memoryMoreButton``, ``memoryCount``, ``memoryUndoBar``).
            sort_by: The column the table is sorted on at first, newest first.
            source: Where the list reads its records, a window at a time (the layer's access
                object, on the DB thread).
            filters: Makes the layer's filter controls, after the search box.
            between: Makes what stands between the filters and the table.
            body: Puts the table into what fills the page's middle (a splitter with the
                selected record's details); by default the table alone.
            lead: Makes the layer's buttons before Edit….
            menu: The layer's actions of the More menu, before its "Delete all…".
        """
        self.model = model
        self.proxy = proxy
        model.set_source(source, lambda: proxy.filters, proxy.everything)
        model.loaded.connect(self._on_model_loaded)
        model.failed.connect(self._on_model_failed)
        self.search_edit = QLineEdit(self)
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setMinimumWidth(120)
        self.search_edit.textChanged.connect(self._on_search_edit_text_changed)
        filter_row = QHBoxLayout()
        filter_row.addWidget(self.search_edit, 1)
        for control in filters():
            filter_row.addWidget(control)
        middle = between()

        self.records = RecordList.table(model, proxy, self, name=f"{name}Table", sort_by=sort_by)
        self.table = self.records.view
        self.records.activated.connect(self._on_records_activated)
        self.records.selection_changed.connect(self._render_count)
        self.records.selection_changed.connect(self._on_selection_changed)
        self.records.delete_requested.connect(self.request_delete)
        main = body(self.table) if body is not None else self.table

        actions = QHBoxLayout()
        for button in lead():
            actions.addWidget(button)
        # Tool buttons: as wide as their words (push buttons are at least 80 px each, and seven
        # of them would set the page's minimum width).
        self.edit_button = self.action_button(self._on_edit_button_clicked)
        self.archive_button = self.action_button(self._on_archive_button_clicked)
        self.restore_button = self.action_button(self._on_restore_button_clicked)
        self.delete_button = self.action_button(self.request_delete)
        self.history_button = self.action_button(self._on_history_button_clicked)
        # A push button draws its menu arrow beside the text (a tool button's overlaps it).
        self.more_button = QPushButton(self)
        self.more_button.setObjectName(f"{name}MoreButton")
        self.more_menu = QMenu(self.more_button)
        for action in menu:
            self.more_menu.addAction(action)
        if menu:
            self.more_menu.addSeparator()
        self.clear_action = QAction(self.more_menu)
        self.clear_action.triggered.connect(self.request_clear_all)
        self.more_menu.addAction(self.clear_action)
        self.more_button.setMenu(self.more_menu)
        self.count_label = QLabel(self)
        self.count_label.setObjectName(f"{name}Count")
        for button in (
            self.edit_button,
            self.archive_button,
            self.restore_button,
            self.delete_button,
            self.history_button,
            self.more_button,
        ):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.count_label)
        self._build_undo_bar(f"{name}UndoBar")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(settings)
        layout.addLayout(filter_row)
        for widget in middle:
            layout.addWidget(widget)
        layout.addWidget(main, 1)
        layout.addLayout(actions)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.status_label)

    def action_button(self, slot: Callable[[], None]) -> QToolButton:
        """A text-only button of the row under the list."""
        button = QToolButton(self)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.clicked.connect(slot)
        return button

    def _build_undo_bar(self, name: str) -> None:
        # Hidden until something is deleted: what was, and its Undo button.
        self.undo_bar = QFrame(self)
        self.undo_bar.setObjectName(name)
        self.undo_bar.setFrameShape(QFrame.Shape.StyledPanel)
        self.undo_label = QLabel(self.undo_bar)
        self.undo_label.setWordWrap(True)
        self.undo_button = QPushButton(self.undo_bar)
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        bar = QHBoxLayout(self.undo_bar)
        bar.setContentsMargins(8, 2, 4, 2)
        bar.addWidget(self.undo_label, 1)
        bar.addWidget(self.undo_button)
        self.undo_bar.hide()

    def filter_combo(self, values: Sequence[object]) -> QComboBox:
        """A filter's combo box with an item for each value (named in ``retranslate``)."""
        combo = QComboBox(self)
        for value in values:
            combo.addItem("", value)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        return combo

    def retranslate_list(self) -> None:
        """Set the texts of the list's own parts (a subclass's ``retranslate`` calls it)."""
        self.edit_button.setText(self.tr("Edit…"))
        self.archive_button.setText(self.tr("Archive"))
        self.restore_button.setText(self.tr("Restore"))
        self.delete_button.setText(self.tr("Delete"))
        self.history_button.setText(self.tr("History"))
        self.more_button.setText(self.tr("More"))
        self.undo_button.setText(self.tr("Undo"))
        self.model.retranslate()
        self.records.size_columns()
        self._render_undo()
        self._render_count()
        self._render_status()

    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # Records change outside Settings too (conversations, background jobs): every visit
        # shows the database as it is now.
        if not self._busy and self._alive:
            self.spawn(self.refresh(), self.words.not_loaded())

    # -- public API -----------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """The ids of the selected records, in the table's order."""
        return self.records.selected_ids()

    def selected_records(self) -> list[R]:
        """The selected records, in the table's order."""
        return [self.records.record_of(i) for i in self.selected_ids()]

    def select_ids(self, record_ids: Sequence[int]) -> None:
        """Select these records (those shown)."""
        self.records.select_ids(record_ids)

    def undo_available(self) -> int:
        """How many records Undo would bring back (the last batch deleted or archived)."""
        return len(self._undo[-1].batch) if self._undo else 0

    def every_row_selected(self) -> bool:
        """Whether Select all chose every record the filters let through (fetched or not)."""
        return self.records.every_row_selected() and not self.model.holds_everything()

    def selected_count(self) -> int:
        """How many records are selected (after Select all: every one the filters let through)."""
        counts = self.model.counts()
        if self.every_row_selected() and counts is not None:
            return counts.matching
        return len(self.selected_ids())

    def close_page(self) -> None:
        """Settings is closing: forget the deleted records held for Undo, stop the work.

        Work already handed to a worker finishes there; the page no longer reacts to it, and
        the dialogs it opened close unanswered.
        """
        self._undo.clear()
        self._render_undo()
        self.model.stop()
        super().close_page()

    async def wait_idle(self) -> None:
        """Wait until every task of the page and every read of its list has ended."""
        while True:
            await super().wait_idle()
            await self.model.wait_idle()
            if not len(self._tasks) and not self.model.reading():
                return

    async def refresh(self) -> None:
        """Reload the list (and what the page shows about it) from the database."""
        raise NotImplementedError

    def follow_changes(self, changes: ChangesBridge | None, *layers: Layer) -> None:
        """Reload the list, while it is shown, when a data change touches one of ``layers``.

        Changes made elsewhere (the chat, the background jobs) appear without a new visit.
        """
        if changes is not None:
            self._followed = layers
            changes.changed.connect(self._on_changes_changed_follow)

    def _on_changes_changed_follow(self, change: DataChange) -> None:
        # The page's own actions reload it when they end (busy until then), so a change they
        # made is shown by that reload; several changes in a row reload once.
        if not change.touches(*self._followed) or self._follow_queued:
            return
        if self._alive and self.isVisible() and not self._busy:
            self._follow_queued = True
            self.spawn(self._refresh_followed(), self.words.not_loaded())

    async def _refresh_followed(self) -> None:
        try:
            await self.refresh()
        finally:
            self._follow_queued = False

    async def reload_list(self) -> None:
        """Read the list again from its source, keeping the selection and scroll position."""
        await self.records.reload()
        self._render_count()
        self._update_actions()

    # -- what a layer does ----------------------------------------------------------------------

    def _is_active(self, record: R) -> bool:
        """Whether Archive applies to a record (otherwise Restore does)."""
        raise NotImplementedError

    async def _edit(self, record_id: int) -> None:
        """Edit one record in the layer's editor."""
        raise NotImplementedError

    async def _set_archived(self, ids: list[int], archived: bool) -> None:
        """Archive or restore these records, then say how many."""
        raise NotImplementedError

    async def _delete_records(self, ids: list[int]) -> Sequence[Any]:
        """Delete these records in one transaction; returns what Undo needs to bring them back."""
        raise NotImplementedError

    async def _undelete_records(self, batch: Sequence[Any]) -> list[int]:
        """Bring a deleted batch back in one transaction; returns the ids it has now."""
        raise NotImplementedError

    async def _unarchive(self, ids: list[int]) -> int:
        """Undo an archive: make exactly these records as they were; returns how many changed."""
        raise NotImplementedError

    async def _reconsider(self, batch: Sequence[Any]) -> None:
        """React to a batch that was deleted or brought back (the summaries reschedule)."""

    def _records_changed(self) -> None:
        """Records were changed here: tell the app (the layer's signal)."""

    def _on_history_button_clicked(self) -> None:
        raise NotImplementedError

    # -- slots that start work ------------------------------------------------------------------

    def _on_edit_button_clicked(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.start(self._edit(ids[0]), self.words.not_saved(ids[0]))

    def _on_records_activated(self, record: R) -> None:
        if not self._busy:
            self.start(self._edit(record.id), self.words.not_saved(record.id))

    def _on_archive_button_clicked(self) -> None:
        if self.every_row_selected():
            self.start(self._set_every_archived(True), self.words.not_archived())
            return
        ids = [r.id for r in self.selected_records() if self._is_active(r)]
        if ids:
            self.start(self._archive(ids), self.words.not_archived())

    def _on_restore_button_clicked(self) -> None:
        if self.every_row_selected():
            self.start(self._set_every_archived(False), self.words.not_restored())
            return
        ids = [r.id for r in self.selected_records() if not self._is_active(r)]
        if ids:
            self.start(self._set_archived(ids, False), self.words.not_restored())

    def request_delete(self) -> None:
        """Delete the selected records after a confirmation (Undo until Settings closes)."""
        if self._busy:
            return
        if self.every_row_selected():
            self.start(self._delete_every_match(), self.words.not_deleted())
            return
        ids = self.selected_ids()
        if ids:
            self.start(self._confirm_then_delete(ids, every=False), self.words.not_deleted())

    def request_clear_all(self) -> None:
        """Delete every record, after a confirmation with the count (Undo until Settings closes)."""
        if not self._busy:
            self.start(self._clear_all(), self.words.not_deleted())

    def _on_undo_button_clicked(self) -> None:
        if self._undo and not self._busy:
            self.start(self._undo_delete(), self.words.not_brought_back())

    def _on_search_edit_text_changed(self, text: str) -> None:
        self.proxy.set_filters(text=text)
        self._render_count()

    def _on_selection_changed(self) -> None:
        self._update_actions()

    def _on_model_loaded(self) -> None:
        self._render_count()
        self._update_actions()

    def _on_model_failed(self, error: BaseException) -> None:
        self._on_task_failed(self.words.not_loaded(), error)

    # -- the work -------------------------------------------------------------------------------

    async def _matching_ids(
        self, *, archivable: bool | None = None, every: bool = False
    ) -> list[int]:
        """The ids of the records the filters let through (``every``: of all records), in SQL.

        ``archivable``: only those Archive applies to (``True``) or Restore does (``False``).
        """
        source = self.model.source
        assert source is not None
        filters = self.proxy.everything if every else self.proxy.filters
        return await source.matching_ids(filters, archivable=archivable)

    async def _clear_all(self) -> None:
        ids = await self._matching_ids(every=True)
        if not ids:
            self.set_status("", self.words.nothing_to_delete)
            return
        await self._confirm_then_delete(ids, every=True)

    async def _delete_every_match(self) -> None:
        ids = await self._matching_ids()
        if ids:
            await self._confirm_then_delete(ids, every=False)

    async def _set_every_archived(self, archived: bool) -> None:
        ids = await self._matching_ids(archivable=archived)
        if not ids:
            return
        if archived:
            await self._archive(ids)
        else:
            await self._set_archived(ids, False)

    async def _archive(self, ids: list[int]) -> None:
        # Undo restores exactly the records this archived (not those archived before).
        await self._set_archived(ids, True)
        self._undo.append(_Undoable("archive", ids))
        self._render_undo()

    async def _confirm_then_delete(self, ids: list[int], *, every: bool) -> None:
        title, question = self.words.delete_question(ids, every)
        action = self.tr("Delete all") if every else self.tr("Delete")
        if not await dialogs.confirm(self, title, question, action, destructive=True):
            return
        # One transaction: all of them go, or (one vanished meanwhile) none.
        batch = await self._delete_records(ids)
        self._undo.append(_Undoable("delete", batch))
        self._render_undo()
        self.clear_status()
        await self._reconsider(batch)
        await self._after_change([])

    async def _undo_delete(self) -> None:
        undone = self._undo.pop()
        if undone.kind == "archive":
            try:
                await self._unarchive(list(undone.batch))
            finally:
                self._render_undo()
            return
        batch = undone.batch
        restored: list[int] = []
        try:
            restored = await self._undelete_records(batch)
        finally:
            self._render_undo()
            await self._reconsider(batch)
            await self._after_change(restored)
        self.set_status("ok", lambda: self.words.brought_back(len(restored)))

    async def _after_change(self, select: Sequence[int]) -> None:
        await self.refresh()
        # After Select all, every row stays selected (the list read again keeps it so).
        if select and not self.records.every_row_selected():
            self.select_ids(select)
        self._records_changed()

    # -- rendering ------------------------------------------------------------------------------

    def _update_actions(self) -> None:
        idle = not self._busy
        counts = self.model.counts()
        if self.every_row_selected() and counts is not None:
            single = counts.matching == 1
            archive, restore, delete = (
                counts.archivable > 0,
                counts.restorable > 0,
                counts.matching > 0,
            )
        else:
            records = self.selected_records() if self.model.rowCount() else []
            single = len(records) == 1
            archive = any(self._is_active(r) for r in records)
            restore = any(not self._is_active(r) for r in records)
            delete = bool(records)
        any_record = counts.total > 0 if counts is not None else self.model.rowCount() > 0
        self.edit_button.setEnabled(idle and single)
        self.archive_button.setEnabled(idle and archive)
        self.restore_button.setEnabled(idle and restore)
        self.delete_button.setEnabled(idle and delete)
        self.clear_action.setEnabled(idle and any_record)
        self.undo_button.setEnabled(idle)

    def _render_count(self) -> None:
        counts = self.model.counts()
        if counts is None:
            return
        # Held whole, the rows are filtered in place; otherwise SQL counted the matches.
        shown = self.proxy.rowCount() if self.model.holds_everything() else counts.matching
        if shown == counts.total:
            text = self.words.count(counts)
        else:
            text = self.tr("Showing {shown} of {total}").format(shown=shown, total=counts.total)
        if self.records.every_row_selected():
            text = self.tr("All {shown} selected").format(shown=shown) + " · " + text
        self.count_label.setText(text)

    def _render_undo(self) -> None:
        if not self._undo:
            self.undo_bar.hide()
            return
        last = self._undo[-1]
        words = self.words.archived if last.kind == "archive" else self.words.deleted
        self.undo_label.setText(words(len(last.batch)))
        self.undo_bar.show()
