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
  app-wide error dialog. An action the user starts runs through ``start``: one at a time, with
  the page's buttons off meanwhile.
- **It edits copies**: ``is_modified``, ``validate`` and ``apply`` let the dialog's Save write
  them (``SettingEditors`` makes a page's editors from the schema and does the three); actions
  that take effect at once (delete a memory, remove a provider) say so.
- **Text the app did not write** (a server's reply, a file name, a URL) is shown as plain text;
  tooltips of such text go through ``labels.plain_tooltip``.

The pages that are a list of records (Memory, Summaries) are built on ``list_page.ListPage``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QObject,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSpinBox,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.settings.schema import spec_for, validate
from etos_desktop.core.settings.store import SettingsStore
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

_Editor = TypeVar("_Editor", QCheckBox, QSpinBox, QComboBox)


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


def form_columns(*columns: Sequence[tuple[QWidget, QWidget]]) -> QHBoxLayout:
    """Label–field columns side by side, for the settings at the top of a page.

    A translation too long for its column puts the field under its label instead of squeezing
    either (and the dialog never grows).
    """
    layout = QHBoxLayout()
    layout.setSpacing(16)
    for pairs in columns:
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.setVerticalSpacing(4)
        for label, field in pairs:
            form.addRow(label, field)
        layout.addLayout(form)
    layout.addStretch(1)
    return layout


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


class SettingEditors:
    """The editors of a page's settings, one a key, made from the schema; Save writes them.

    Each editor is named ``setting:<key>``, starts at the stored value, takes the schema's range
    or choices, and reports every edit through ``edited`` (the page's ``changed`` signal).

    Args:
        settings: The store the values are read from and written to.
        edited: Called on every edit.
    """

    def __init__(self, settings: SettingsStore, edited: Callable[[], None]) -> None:
        self._settings = settings
        self._edited = edited
        self._editors: dict[str, QCheckBox | QSpinBox | QComboBox] = {}

    def check(self, key: str, parent: QWidget) -> QCheckBox:
        """A check box for a yes/no setting."""
        box = self._add(key, QCheckBox(parent))
        box.setChecked(self._settings.get_bool(key))
        box.toggled.connect(self._on_edited)
        return box

    def spin(self, key: str, parent: QWidget, *, step: int = 1) -> QSpinBox:
        """A spin box for a whole-number setting."""
        spec = spec_for(key)
        spin = self._add(key, QSpinBox(parent))
        if spec.minimum is not None:
            spin.setMinimum(int(spec.minimum))
        if spec.maximum is not None:
            spin.setMaximum(int(spec.maximum))
        spin.setSingleStep(step)
        spin.setValue(self._settings.get_int(key))
        spin.valueChanged.connect(self._on_edited)
        return spin

    def combo(self, key: str, parent: QWidget) -> QComboBox:
        """A combo box of a setting's choices (the page names the items)."""
        combo = self._add(key, QComboBox(parent))
        for choice in spec_for(key).choices or ():
            combo.addItem(str(choice), choice)
        combo.setCurrentIndex(max(combo.findData(self._settings.get(key)), 0))
        combo.currentIndexChanged.connect(self._on_edited)
        return combo

    def retranslate(self) -> None:
        """Give each editor its setting's description as its tooltip, translated."""
        for key, editor in self._editors.items():
            editor.setToolTip(schema_tr(spec_for(key).description))

    def invalid_key(self) -> str | None:
        """The first setting (in the order of its editors) whose value the schema refuses."""
        for key in self._editors:
            try:
                validate(spec_for(key), self.value(key))
            except InvalidInput:
                return key
        return None

    def value(self, key: str) -> object:
        """The value a setting's editor holds now."""
        editor = self._editors[key]
        if isinstance(editor, QCheckBox):
            return editor.isChecked()
        if isinstance(editor, QSpinBox):
            return editor.value()
        return editor.currentData()

    def is_modified(self) -> bool:
        """Whether an editor holds a value that is not stored."""
        return any(self.value(key) != self._settings.get(key) for key in self._editors)

    def apply(self) -> None:
        """Write every editor's value into the store."""
        for key in self._editors:
            self._settings.set(key, self.value(key))

    def _add(self, key: str, editor: _Editor) -> _Editor:
        editor.setObjectName(f"setting:{key}")
        self._editors[key] = editor
        return editor

    def _on_edited(self, *_args: object) -> None:
        self._edited()


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

    @override
    def setWidget(self, widget: QWidget) -> None:
        super().setWidget(widget)
        widget.installEventFilter(self)

    @override
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)

    @override
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
        self._busy = False
        self._alive = True
        self._status: tuple[str, TextFactory] | None = None
        self.status_label = plain_label(self)
        self.status_label.setObjectName("pageStatus")
        self.status_label.hide()

    # -- the conventions ------------------------------------------------------------------------

    def retranslate(self) -> None:
        """Set every text the page shows in the current language."""
        raise NotImplementedError

    @override
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

    # -- work -----------------------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], failure: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a task of this page.

        Args:
            coro: The work.
            failure: What was not done if it fails, translated ("The memory was not added.").
        """
        return self._tasks.spawn(coro, failure)

    def start(self, coro: Coroutine[Any, Any, Any], failure: str) -> None:
        """Run an action the user started, one at a time: the buttons are off while it runs.

        Another action asked for meanwhile is dropped (its coroutine closed unrun).

        Args:
            coro: The work.
            failure: What was not done if it fails, translated.
        """
        if self._busy:
            coro.close()
            return
        self._busy = True
        self._update_actions()
        self.spawn(self._busy_while(coro), failure)

    async def _busy_while(self, coro: Coroutine[Any, Any, Any]) -> None:
        try:
            await coro
        finally:
            self._busy = False
            if self._alive:
                self._update_actions()

    def _update_actions(self) -> None:
        """Turn the page's buttons on or off for what it shows and whether it is busy."""

    async def wait_idle(self) -> None:
        """Wait until every task this page started has ended (tests, closing)."""
        await self._tasks.wait_idle()

    def close_page(self) -> None:
        """The dialog is closing: stop the page's work and close the dialogs it opened.

        What a worker thread already does finishes there; the page no longer waits for it.
        """
        self._alive = False
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
