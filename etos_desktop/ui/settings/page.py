"""What every Settings page is built from: the ``SettingsPage`` base and small form parts.

The conventions each page follows (the Memory, Summaries and Profile pages alike):

- **It retranslates itself.** ``retranslate()`` sets every text the page shows and runs on
  ``LanguageChange``; a message on screen is kept as a function that produces its text
  (``TextFactory``), so it is translated again too.
- **Colours come from palette roles or** ``ui.theme``, never literals. A status line carries its
  state (``"ok"``, ``"error"``, ``"warning"``, ``"muted"``) as the ``state`` property, and states
  are coloured again on ``PaletteChange``, so a theme switch recolours them.
- **Async work runs through** ``spawn(coro, failure)``: the page's ``TaskSet`` keeps the task
  referenced, and a failure nobody handled is logged once (by the ``TaskSet``) and shown in the
  page's own status line, naming what was not done ("The memory was not added. …") — never the
  app-wide error dialog.
- **It edits copies**: ``is_modified``, ``validate`` and ``apply`` let the dialog's Save write
  them; actions that take effect at once (delete a memory, remove a provider) say so.
- **Text the app did not write** (a server's reply, a file name, a URL) is shown as plain text;
  tooltips of such text go through ``labels.plain_tooltip``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QSize,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.ui.error_text import failure_text
from etos_desktop.ui.task_set import TaskSet
from etos_desktop.ui.theme import state_style

#: Produces a translated text when called, so a shown message can be translated again.
TextFactory = Callable[[], str]

#: Controls a form label can name (``label_form_fields``).
_FIELDS = (
    QLineEdit,
    QComboBox,
    QAbstractSpinBox,
    QPlainTextEdit,
    QTextEdit,
    QAbstractItemView,
    QAbstractButton,
)

#: The style of help and secondary text: a palette role, so it follows the theme.
MUTED_STYLE = "color: palette(placeholder-text);"


def schema_tr(text: str) -> str:
    """Translate a text of the settings schema (English source text, ``schema.py``)."""
    return QCoreApplication.translate("SettingsSchema", text)


def set_state(label: QWidget, state: str) -> None:
    """Colour a status line for ``state``: "ok", "error", "warning", "muted" or "" (plain).

    The state is kept as the ``state`` property, for style sheets, tests and re-colouring.
    """
    label.setProperty("state", state)
    # The parent's palette decides light or dark: the label's own holds its old colour.
    owner = label.parentWidget() or label
    label.setStyleSheet(MUTED_STYLE if state == "muted" else state_style(state, owner))


def plain_label(parent: QWidget, *, wrap: bool = True) -> QLabel:
    """A label for text the app may not have written: plain text, selectable, wrapping."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def error_label(parent: QWidget) -> QLabel:
    """A hidden error line for under a field."""
    label = plain_label(parent)
    set_state(label, "error")
    label.hide()
    return label


def help_label(parent: QWidget) -> QLabel:
    """A line of help text in the muted colour."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    # Under its field: a form may give it more height than its lines need.
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    set_state(label, "muted")
    return label


def label_form_fields(root: QWidget) -> None:
    """Name each form field under ``root`` after its label, for screen readers.

    A row whose field is a box of widgets (a field with its help line, a row of buttons) names
    the box's first control. Qt reads a buddy label only when it is the field's sibling, so a
    field inside a box gets the label's text as its accessible name; pages run this again after
    retranslating.
    """
    for form in root.findChildren(QFormLayout):
        for index in range(form.rowCount()):
            label_item = form.itemAt(index, QFormLayout.ItemRole.LabelRole)
            field_item = form.itemAt(index, QFormLayout.ItemRole.FieldRole)
            label = label_item.widget() if label_item is not None else None
            field = field_item.widget() if field_item is not None else None
            if not isinstance(label, QLabel) or field is None or not label.text():
                continue
            target = field if isinstance(field, _FIELDS) else None
            if target is None:
                target = next(
                    (w for w in field.findChildren(QWidget) if isinstance(w, _FIELDS)), None
                )
            if target is None:
                continue
            label.setBuddy(target)
            if target.parentWidget() is not label.parentWidget():
                target.setAccessibleName(label.text().replace("&", "").rstrip(":："))


def stacked(parent: QWidget, *widgets: QWidget) -> QWidget:
    """A column of widgets used as one form field (a field with its error line under it)."""
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for widget in widgets:
        layout.addWidget(widget)
    return box


def row(parent: QWidget, *widgets: QWidget, stretch: bool = False) -> QWidget:
    """A row of widgets used as one form field."""
    box = QWidget(parent)
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    if stretch:
        layout.addStretch(1)
    return box


class _RowsById(Protocol):
    def row_of(self, item_id: int) -> int | None: ...

    def index(self, row: int, column: int) -> QModelIndex: ...


def selected_item_ids(
    table: QAbstractItemView, proxy: QSortFilterProxyModel, role: int
) -> list[int]:
    """The ids of a list page's selected rows, in the table's order (``role`` holds the item)."""
    rows = sorted(index.row() for index in table.selectionModel().selectedRows())
    return [proxy.index(row, 0).data(role).id for row in rows]


def select_item_ids(
    table: QAbstractItemView,
    proxy: QSortFilterProxyModel,
    model: _RowsById,
    item_ids: Sequence[int],
) -> None:
    """Select these items of a list page (those the filter shows)."""
    selection = QItemSelection()
    for item_id in item_ids:
        source_row = model.row_of(item_id)
        if source_row is None:
            continue
        index = proxy.mapFromSource(model.index(source_row, 0))
        if index.isValid():
            selection.select(index, index)
    table.selectionModel().select(
        selection,
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )


class VerticalScrollArea(QScrollArea):
    """A scroll area for a column of fields: it scrolls down, never sideways.

    It asks for at least its content's minimum width, so a layout never squeezes the content
    (a long translation makes the dialog's minimum wider instead of cutting text at the right).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def setWidget(self, widget: QWidget) -> None:
        super().setWidget(widget)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        widget = self.widget()
        if widget is None:
            return hint
        width = (
            widget.minimumSizeHint().width()
            + self.verticalScrollBar().sizeHint().width()
            + 2 * self.frameWidth()
        )
        return QSize(max(hint.width(), width), hint.height())


class SettingsPage(QWidget):
    """The base of every Settings page (see the module docstring for the conventions).

    A subclass builds its widgets, places ``status_label`` in its layout and implements
    :meth:`retranslate`; it overrides :meth:`is_modified`, :meth:`validate` and :meth:`apply`
    when it edits settings that Save writes.

    Signals:
        changed(): an edit that Save would write (or undo).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tasks = TaskSet(report=self._on_task_failed)
        self._status: tuple[str, TextFactory] | None = None
        self.status_label = plain_label(self)
        self.status_label.setObjectName("pageStatus")
        self.status_label.hide()

    # -- the conventions ------------------------------------------------------------------------

    def retranslate(self) -> None:
        """Set every text the page shows in the current language."""
        raise NotImplementedError

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
            label_form_fields(self)
        elif event.type() == QEvent.Type.PaletteChange:
            self._recolour()
        super().changeEvent(event)

    def is_modified(self) -> bool:
        """Whether Save would change anything this page holds."""
        return False

    def validate(self) -> bool:
        """Check the edits; mark the first problem on the page. True when Save may proceed."""
        return True

    def apply(self) -> None:
        """Write the edits into the settings store (the dialog then writes its file)."""

    async def save_pending(self) -> bool:
        """Save what the page keeps outside the settings file (the profile's text).

        Called by the dialog's Save after every page validated. Returns False (with the reason
        shown on the page) when it could not be saved.
        """
        return True

    # -- parts of the list pages (Memory, Summaries) -------------------------------------------

    def action_button(self, slot: Callable[[], None]) -> QToolButton:
        """A text-only button of the row under a list."""
        button = QToolButton(self)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.clicked.connect(slot)
        return button

    def action_row(self, buttons: list[QAbstractButton], count_label: QLabel) -> QHBoxLayout:
        """The row under a list: its buttons on the left, the count on the right."""
        layout = QHBoxLayout()
        for button in buttons:
            layout.addWidget(button)
        layout.addStretch(1)
        layout.addWidget(count_label)
        return layout

    def make_undo_bar(
        self, name: str, on_undo: Callable[[], None]
    ) -> tuple[QFrame, QLabel, QPushButton]:
        """The hidden bar that says what was just deleted, with its Undo button.

        Returns:
            The bar (object name ``name``), its label and its button.
        """
        bar = QFrame(self)
        bar.setObjectName(name)
        bar.setFrameShape(QFrame.Shape.StyledPanel)
        label = QLabel(bar)
        label.setWordWrap(True)
        button = QPushButton(bar)
        button.clicked.connect(on_undo)
        row = QHBoxLayout(bar)
        row.setContentsMargins(8, 2, 4, 2)
        row.addWidget(label, 1)
        row.addWidget(button)
        bar.hide()
        return bar, label, button

    # -- work -----------------------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], failure: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a task of this page.

        Args:
            coro: The work.
            failure: What was not done if it fails, translated ("The memory was not added.").
        """
        return self._tasks.spawn(coro, failure)

    async def wait_idle(self) -> None:
        """Wait until every task this page started has ended (tests, closing)."""
        await self._tasks.wait_idle()

    def close_page(self) -> None:
        """The dialog is closing: stop the page's work and close the dialogs it opened.

        What a worker thread already does finishes there; the page no longer waits for it.
        """
        # Cancelled first, so the closing dialogs answer nobody.
        self._tasks.cancel_all()
        for dialog in self.findChildren(QDialog):
            if dialog.isVisible():
                dialog.reject()

    # -- the status line ------------------------------------------------------------------------

    def status(self) -> tuple[str, str]:
        """The status line: ``(state, text)``; state "ok", "error", "warning" or ""."""
        return (self._status[0], self._status[1]()) if self._status else ("", "")

    def set_status(self, state: str, text: TextFactory) -> None:
        """Show a message in the page's status line (``text`` is called on every language)."""
        if not shiboken6.isValid(self):  # work that ended after the page was deleted
            return
        self._status = (state, text)
        self._render_status()

    def clear_status(self) -> None:
        """Hide the status line."""
        self._status = None
        self._render_status()

    def failure_message(self, failure: str, error: BaseException) -> str:
        """The words for a failed task: what was not done, then why."""
        return failure_text(failure, error)

    def _render_status(self) -> None:
        state, text = self.status()
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))
        set_state(self.status_label, state)

    def _on_task_failed(self, failure: str, error: BaseException) -> None:
        self.set_status("error", lambda: self.failure_message(failure, error))

    def _recolour(self) -> None:
        # Children only: a style sheet set on the page itself would send it another PaletteChange.
        for widget in self.findChildren(QWidget):
            state = widget.property("state")
            if isinstance(state, str) and state:
                set_state(widget, state)
