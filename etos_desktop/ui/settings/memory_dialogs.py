"""The Memory page's dialogs: the memory editor, the import preview and a memory's history.

Every memory text shown here has its invisible and control characters spelled out and its
markup shown as typed (``memory_text``). The editor and the preview are opened with ``open()``
and awaited (``ui.dialogs.await_dialog``), their fields read as they finish: no modal loop runs
inside a coroutine on the qasync loop, and closing Settings while one is open ends the wait.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QCoreApplication,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.memory.records import Memory, MemoryKind, Revision
from etos_desktop.core.memory.transfer import InvalidEntry
from etos_desktop.core.storage.lookups import is_active_at
from etos_desktop.core.text.checks import MemoryRejected, check_content
from etos_desktop.core.transfer.document import ImportPreview
from etos_desktop.core.transfer.foreign import LeftOut
from etos_desktop.ui.dialogs import await_dialog
from etos_desktop.ui.markdown_render import escape_invisible
from etos_desktop.ui.memory_text import (
    kind_name,
    local_time,
    memory_error_text,
    one_line,
    rich_escaped,
    source_name,
)
from etos_desktop.ui.settings.history_dialog import HistoryDialog
from etos_desktop.ui.settings.page import error_label, help_label, set_state
from etos_desktop.ui.theme import colors


def entry_problem_text(problem: InvalidEntry) -> str:
    """Why one entry of an import file is skipped."""
    field_names = {
        "content": QCoreApplication.translate("MemoryDialogs", "text"),
        "kind": QCoreApplication.translate("MemoryDialogs", "kind"),
        "source": QCoreApplication.translate("MemoryDialogs", "source"),
        "importance": QCoreApplication.translate("MemoryDialogs", "importance"),
        "confidence": QCoreApplication.translate("MemoryDialogs", "confidence"),
        "tags": QCoreApplication.translate("MemoryDialogs", "tags"),
        "trigger_context": QCoreApplication.translate("MemoryDialogs", "recall when"),
        "created_at": QCoreApplication.translate("MemoryDialogs", "created"),
        "updated_at": QCoreApplication.translate("MemoryDialogs", "updated"),
        "valid_from": QCoreApplication.translate("MemoryDialogs", "valid from"),
        "valid_until": QCoreApplication.translate("MemoryDialogs", "valid until"),
        "archived": QCoreApplication.translate("MemoryDialogs", "archived"),
        "archived_at": QCoreApplication.translate("MemoryDialogs", "archived"),
        "id": QCoreApplication.translate("MemoryDialogs", "number"),
        "superseded_by": QCoreApplication.translate("MemoryDialogs", "superseded by"),
    }
    field = field_names.get(problem.field or "", problem.field or "")
    reason = problem.reason
    if reason == "not_an_object":
        return QCoreApplication.translate("MemoryDialogs", "not a memory entry")
    if reason == "empty":
        return QCoreApplication.translate("MemoryDialogs", "no text")
    if reason == "too_long":
        return QCoreApplication.translate("MemoryDialogs", "{field} too long").format(field=field)
    if reason == "secret":
        return QCoreApplication.translate(
            "MemoryDialogs", "{field} looks like a password, key or ID number"
        ).format(field=field)
    if reason == "too_many_tags":
        return QCoreApplication.translate("MemoryDialogs", "too many tags")
    return QCoreApplication.translate("MemoryDialogs", "invalid {field}").format(field=field)


# -- values the dialogs exchange --------------------------------------------------------------


@dataclass(frozen=True)
class MemoryFields:
    """What the memory editor edits.

    Attributes:
        content: The text.
        kind: A ``MemoryKind`` value.
        importance: 0–1.
        tags: Labels.
        trigger_context: When it should be recalled (``None``: no hint).
    """

    content: str = ""
    kind: str = MemoryKind.FACT
    importance: float = 0.5
    tags: tuple[str, ...] = ()
    trigger_context: str | None = None

    @classmethod
    def of(cls, memory: Memory) -> MemoryFields:
        """The editable fields of a memory."""
        return cls(
            memory.content, memory.kind, memory.importance, memory.tags, memory.trigger_context
        )


# -- the editor -------------------------------------------------------------------------------


class MemoryEditorDialog(QDialog):
    """Add or edit one memory: text, kind, importance, tags and when to recall it.

    The text is checked like a new memory (empty, too long, secrets) before the dialog closes,
    so a refused text is corrected in place. Invisible characters are spelled out under it.
    """

    def __init__(
        self, fields: MemoryFields, title: str, *, max_chars: int, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryEditor")
        self.setWindowTitle(title)
        self._max_chars = max_chars
        self.content_edit = QPlainTextEdit(self)
        self.content_edit.setPlainText(fields.content)
        # Editing usually adds to the text: start at its end.
        self.content_edit.moveCursor(QTextCursor.MoveOperation.End)
        self.content_edit.setTabChangesFocus(True)
        self.content_edit.textChanged.connect(self._on_content_edit_text_changed)
        self.invisible_label = QLabel(self)
        self.invisible_label.setWordWrap(True)
        self.invisible_label.setTextFormat(Qt.TextFormat.PlainText)
        self.invisible_label.hide()
        self.error_label = error_label(self)
        self.kind_combo = QComboBox(self)
        for kind in MemoryKind:
            self.kind_combo.addItem(kind_name(kind), kind.value)
        self.kind_combo.setCurrentIndex(max(self.kind_combo.findData(fields.kind), 0))
        self.importance_spin = QDoubleSpinBox(self)
        self.importance_spin.setRange(0.0, 1.0)
        self.importance_spin.setSingleStep(0.1)
        self.importance_spin.setDecimals(2)
        self.importance_spin.setValue(fields.importance)
        self.tags_edit = QLineEdit(self)
        self.tags_edit.setText(", ".join(fields.tags))
        self.trigger_edit = QLineEdit(self)
        self.trigger_edit.setText(fields.trigger_context or "")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        # Enter in the text is a new line; Ctrl+Enter saves (in the other fields Enter does).
        self.content_edit.installEventFilter(self)

        form = QFormLayout()
        self._labels = [QLabel(self) for _ in range(5)]
        form.addRow(self._labels[0], self.content_edit)
        form.addRow("", self.invisible_label)
        form.addRow(self._labels[1], self.kind_combo)
        form.addRow(self._labels[2], self.importance_spin)
        form.addRow(self._labels[3], self.tags_edit)
        form.addRow(self._labels[4], self.trigger_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.retranslate()
        self._on_content_edit_text_changed()
        self.resize(520, 360)

    def retranslate(self) -> None:
        """Set every text in the current language."""
        for label, text in zip(
            self._labels,
            (
                self.tr("Text"),
                self.tr("Kind"),
                self.tr("Importance"),
                self.tr("Tags"),
                self.tr("Recall when"),
            ),
            strict=True,
        ):
            label.setText(text)
        self.content_edit.setPlaceholderText(
            self.tr("One or a few self-contained sentences, e.g. “I use pnpm for JavaScript.”")
        )
        self.tags_edit.setPlaceholderText(self.tr("Comma-separated, e.g. tools, javascript"))
        self.trigger_edit.setPlaceholderText(
            self.tr("Optional: when this should come up, e.g. installing dependencies")
        )
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setText(self.tr("Save"))
        save.setToolTip(self.tr("Save (Ctrl+Enter)"))
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(self.tr("Cancel"))
        for index in range(self.kind_combo.count()):
            self.kind_combo.setItemText(index, kind_name(str(self.kind_combo.itemData(index))))
        self._on_content_edit_text_changed()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            set_state(self.error_label, "error")
        super().changeEvent(event)

    @override
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.content_edit
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.accept()
            return True
        return super().eventFilter(watched, event)

    def fields(self) -> MemoryFields:
        """The values in the editor now."""
        tags = tuple(
            dict.fromkeys(t.strip() for t in self.tags_edit.text().split(",") if t.strip())
        )
        return MemoryFields(
            content=self.content_edit.toPlainText().strip(),
            kind=str(self.kind_combo.currentData()),
            importance=round(self.importance_spin.value(), 2),
            tags=tags,
            trigger_context=self.trigger_edit.text().strip() or None,
        )

    @override
    def accept(self) -> None:
        try:
            check_content(self.content_edit.toPlainText(), max_chars=self._max_chars)
        except MemoryRejected as exc:
            self.error_label.setText(memory_error_text(exc))
            self.error_label.show()
            self.content_edit.setFocus()
            return
        super().accept()

    def _on_content_edit_text_changed(self) -> None:
        text = self.content_edit.toPlainText()
        shown = escape_invisible(text)
        if shown != text:
            self.invisible_label.setText(
                self.tr("Contains invisible characters: {text}").format(text=shown)
            )
            self.invisible_label.show()
        else:
            self.invisible_label.hide()
        self.error_label.hide()


async def open_editor(
    parent: QWidget, fields: MemoryFields, title: str, *, max_chars: int = 1000
) -> MemoryFields | None:
    """Show the memory editor and return what was saved, or ``None`` when cancelled."""
    dialog = MemoryEditorDialog(fields, title, max_chars=max_chars, parent=parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await await_dialog(
        dialog,
        lambda result: dialog.fields() if result == QDialog.DialogCode.Accepted else None,
        None,
    )


# -- import preview ---------------------------------------------------------------------------


_ROOT = QModelIndex()


def list_kind_name(kind: str) -> str:
    """What a list of facts from another app is, in the user's words."""
    return {
        "chatgpt": QCoreApplication.translate("MemoryDialogs", "ChatGPT memory list"),
        "claude": QCoreApplication.translate("MemoryDialogs", "Claude memory"),
        "markdown": QCoreApplication.translate("MemoryDialogs", "Markdown list"),
    }.get(kind, QCoreApplication.translate("MemoryDialogs", "Text list"))


def left_out_text(item: LeftOut) -> str:
    """Why a line of a list is not imported."""
    if item.reason == "repeat":
        return QCoreApplication.translate(
            "MemoryDialogs", "Line {n}: the same as line {first}"
        ).format(n=item.line, first=item.of_line)
    if item.reason == "table":
        return QCoreApplication.translate("MemoryDialogs", "Line {n}: a table row").format(
            n=item.line
        )
    return QCoreApplication.translate("MemoryDialogs", "Line {n}: a heading or a note").format(
        n=item.line
    )


class ImportFactsModel(QAbstractListModel):
    """The new facts of a list's import, each to tick or untick.

    Holds the entries and the set of unticked ones; a row's words are made when the view asks
    for them, so a list of 100,000 facts opens and ticks as fast as one of ten.

    Signals:
        ticks_changed(): a fact was ticked or unticked.
    """

    ticks_changed = Signal()

    def __init__(
        self, preview: ImportPreview, now: datetime, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        source = preview.source
        assert source is not None
        self._source = source
        self._entries = preview.to_add
        self._unticked = {e.index for e in self._entries if e.index in source.unticked}
        # Facts from a list are active unless a date put them in the past (they carry none).
        self._active = {
            e.index for e in self._entries if is_active_at(e.archived_at, e.valid_until, now)
        }
        self._texts: dict[int, str] = {}

    @override
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._entries)

    @override
    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemIsUserCheckable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    @override
    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            text = self._texts.get(entry.index)
            if text is None:
                parts = [self.tr("Line {n}").format(n=self._source.line_of(entry.index))]
                if entry.index in self._source.dated:
                    parts.append(local_time(entry.created_at))
                parts.append(one_line(entry.content))
                text = self._texts[entry.index] = " · ".join(parts)
            return text
        if role == Qt.ItemDataRole.ToolTipRole:
            return escape_invisible(entry.content)
        if role == Qt.ItemDataRole.CheckStateRole:
            return (
                Qt.CheckState.Unchecked if entry.index in self._unticked else Qt.CheckState.Checked
            )
        if role == Qt.ItemDataRole.UserRole:
            return entry.index
        return None

    @override
    def setData(
        self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = 2
    ) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or not index.isValid():
            return False
        entry = self._entries[index.row()]
        checked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value)
        if checked == (entry.index not in self._unticked):
            return True
        if checked:
            self._unticked.discard(entry.index)
        else:
            self._unticked.add(entry.index)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
        self.ticks_changed.emit()
        return True

    def ticked(self) -> list[int]:
        """The entry indices ticked now."""
        return [e.index for e in self._entries if e.index not in self._unticked]

    def ticked_count(self) -> int:
        """How many facts are ticked."""
        return len(self._entries) - len(self._unticked)

    def unticked_active(self) -> int:
        """How many unticked facts would have been active memories."""
        return len(self._unticked & self._active)

    def retranslate(self) -> None:
        """Make the rows' words again (the language changed)."""
        self._texts.clear()
        if self._entries:
            self.dataChanged.emit(
                self.index(0), self.index(len(self._entries) - 1), [Qt.ItemDataRole.DisplayRole]
            )


class ImportPreviewDialog(QDialog):
    """What an import would add, update and skip, with Import and Cancel.

    For a list of facts from another app (``preview.source``) it says what the list is, offers
    each new fact in a list to tick or untick (a remark about the list comes unticked), marks
    the facts already among the memories and the lines left out, and imports what is ticked
    (:meth:`chosen`).
    """

    def __init__(
        self, preview: ImportPreview, now: datetime | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryImportPreview")
        self.preview = preview
        self._now = now or datetime.now(UTC)
        self.source_label = QLabel(self)
        self.source_label.setObjectName("memoryImportSource")
        self.source_label.setTextFormat(Qt.TextFormat.PlainText)
        font = self.source_label.font()
        font.setBold(True)
        self.source_label.setFont(font)
        self.summary_label = QLabel(self)
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        self.summary_label.setWordWrap(True)
        self.hint_label = help_label(self)
        self.facts_list = QListView(self)
        self.facts_list.setObjectName("memoryImportFacts")
        self.facts_list.setUniformItemSizes(True)
        self.facts_list.setSpacing(1)
        self.facts: ImportFactsModel | None = None
        self.details = QTextBrowser(self)
        self.buttons = QDialogButtonBox(self)
        self.import_button = self.buttons.addButton("", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.source_label)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.hint_label)
        layout.addWidget(self.facts_list, 3)
        layout.addWidget(self.details, 2)
        layout.addWidget(self.buttons)
        source = preview.source
        self.source_label.setVisible(source is not None)
        self.hint_label.setVisible(source is not None)
        self.facts_list.setVisible(source is not None)
        if source is not None:
            self.facts = ImportFactsModel(preview, self._now, self)
            self.facts_list.setModel(self.facts)
            self.facts.ticks_changed.connect(self._on_facts_ticks_changed)
        self.retranslate()
        if source is not None:
            self.resize(640, 480)
        else:
            self.resize(560, 420)

    def ticked(self) -> list[int]:
        """The entry indices of the facts ticked now (a list's import)."""
        return self.facts.ticked() if self.facts is not None else []

    def chosen(self) -> ImportPreview:
        """The preview as it would be applied: for a list, with only the ticked facts."""
        if self.facts is None:
            return self.preview
        return self.preview.keeping(self.facts.ticked(), now=self._now)

    def retranslate(self) -> None:
        """Set every text in the current language."""
        p = self.preview
        source = p.source
        self.setWindowTitle(self.tr("Import memories"))
        self.import_button.setText(self.tr("Import"))
        self.cancel_button.setText(self.tr("Cancel"))
        self.facts_list.setAccessibleName(self.tr("Facts to import"))
        self.hint_label.setText(
            self.tr(
                "Untick what should not be kept. A line that reads like a remark about the list "
                "comes unticked; facts you already have are listed below and not imported again."
            )
        )
        if source is not None:
            self.source_label.setText(
                self.tr("{kind} · {facts}").format(
                    kind=list_kind_name(source.kind),
                    facts=self.tr("%n facts", "", source.facts),
                )
            )
        if self.facts is not None:
            self.facts.retranslate()
        self._render_summary()
        self._render_details()

    def _tally(self) -> tuple[int, int]:
        """The memories to add and the active count after, as ticked now."""
        p = self.preview
        if self.facts is None:
            return len(p.to_add), p.active_after
        return self.facts.ticked_count(), p.active_after - self.facts.unticked_active()

    def _render_summary(self) -> None:
        p = self.preview
        to_add, active_after = self._tally()
        changes = bool(to_add or p.to_update) or p.summaries.has_changes or p.profile.has_changes
        over = active_after > p.max_active and active_after > p.active_before
        self.summary_label.setText(self.summary())
        self.import_button.setEnabled(changes and not over)

    def _render_details(self) -> None:
        p = self.preview
        source = p.source
        parts: list[str] = []

        shown = 500  # the rest is counted: a 100,000-line list would take seconds to lay out

        def section(title: str, items: list[str], total: int | None = None) -> None:
            total = len(items) if total is None else total
            if total:
                parts.append(f"<h4>{html.escape(title)}</h4><ul>")
                parts.extend(f"<li>{item}</li>" for item in items[:shown])
                if total > shown:
                    more = self.tr("%n more", "", total - shown)
                    parts.append(f"<li>… {html.escape(more)}</li>")
                parts.append("</ul>")

        if source is None:
            section(
                self.tr("To add"),
                [
                    f"{rich_escaped(one_line(e.content))} <i>({html.escape(kind_name(e.kind))})</i>"
                    for e in p.to_add[:shown]
                ],
                len(p.to_add),
            )
        section(
            self.tr("To update"),
            [
                f"#{u.memory.id} {rich_escaped(one_line(u.entry.content))}"
                f" <i>({html.escape(', '.join(_field_name(c) for c in u.changes))})</i>"
                for u in p.to_update[:shown]
            ],
            len(p.to_update),
        )
        if source is not None:
            section(
                self.tr("Already in your memories (not imported again)"),
                [
                    html.escape(self.tr("Line {n}").format(n=source.line_of(u.entry.index)))
                    + f" — #{u.memory.id} {rich_escaped(one_line(u.memory.content))}"
                    for u in p.unchanged[:shown]
                ],
                len(p.unchanged),
            )
        section(
            self.tr("Session summaries to add"),
            [
                f"{rich_escaped(one_line(e.content))}"
                + (
                    f" <i>({rich_escaped(e.conversation_title)})</i>"
                    if e.conversation_title
                    else ""
                )
                for e in p.summaries.to_add
            ],
        )

        def skipped(problem: InvalidEntry) -> str:
            why = entry_problem_text(problem)
            if source is None:
                text = self.tr("Entry {n}: {why}").format(n=problem.index + 1, why=why)
            else:
                text = self.tr("Line {n}: {why}").format(n=source.line_of(problem.index), why=why)
            return html.escape(text) + (
                f" — {rich_escaped(problem.excerpt)}" if problem.excerpt else ""
            )

        section(
            self.tr("Skipped"),
            [skipped(i) for i in p.invalid[:shown]] + [""] * max(0, len(p.invalid) - 500),
        )
        if source is not None:
            section(
                self.tr("Left out"),
                [
                    html.escape(left_out_text(item)) + f" — {rich_escaped(one_line(item.text))}"
                    for item in source.left_out[:shown]
                ],
                len(source.left_out),
            )
        self.details.setHtml("".join(parts))

    def summary(self) -> str:
        """One paragraph saying what the import would do."""
        preview = self.preview
        to_add, active_after = self._tally()
        # Punctuation differs by language ("，" and "。" in Chinese), so it is translated too.
        comma = self.tr(", ", "between the parts of a list")
        stop = self.tr(". ", "between two sentences")

        def counts(to_add: int, to_update: int, unchanged: int, skipped: int) -> str:
            # Plurals go through self.tr(): lupdate misses them in QCoreApplication.translate().
            return comma.join(
                [
                    self.tr("%n to add", "", to_add),
                    self.tr("%n to update", "", to_update),
                    self.tr("%n already here", "", unchanged),
                    self.tr("%n skipped", "", skipped),
                ]
            )

        text = counts(
            to_add,
            len(preview.to_update),
            len(preview.unchanged),
            len(preview.invalid),
        )
        summaries = preview.summaries
        if summaries.to_add or summaries.to_update or summaries.unchanged or summaries.invalid:
            text += stop + self.tr("Session summaries: {parts}").format(
                parts=counts(
                    len(summaries.to_add),
                    len(summaries.to_update),
                    summaries.unchanged,
                    len(summaries.invalid),
                )
            )
        profile = preview.profile
        if profile.replace:
            text += stop + self.tr(
                "The file's user profile replaces yours (yours stays in the profile's history)"
            )
        elif profile.invalid:
            text += stop + self.tr("The file's user profile is skipped: it cannot be used")
        changes = (
            bool(to_add or preview.to_update)
            or preview.summaries.has_changes
            or preview.profile.has_changes
        )
        if active_after > preview.max_active and active_after > preview.active_before:
            text += stop + self.tr(
                "This would make {count} memories active, more than the {limit} allowed. Archive or delete some first."
            ).format(count=active_after, limit=preview.max_active)
        elif not changes:
            text += stop + self.tr("Nothing to import.")
        return text

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _on_facts_ticks_changed(self) -> None:
        self._render_summary()


async def choose_import(
    parent: QWidget, preview: ImportPreview, now: datetime
) -> ImportPreview | None:
    """Show the import preview; what to apply (a list: the ticked facts), or ``None``."""
    dialog = ImportPreviewDialog(preview, now, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await await_dialog(
        dialog,
        lambda result: dialog.chosen() if result == QDialog.DialogCode.Accepted else None,
        None,
    )


# -- history ----------------------------------------------------------------------------------


def _field_name(name: str) -> str:
    return {
        "content": QCoreApplication.translate("MemoryDialogs", "Text"),
        "kind": QCoreApplication.translate("MemoryDialogs", "Kind"),
        "source": QCoreApplication.translate("MemoryDialogs", "Source"),
        "importance": QCoreApplication.translate("MemoryDialogs", "Importance"),
        "confidence": QCoreApplication.translate("MemoryDialogs", "Confidence"),
        "tags": QCoreApplication.translate("MemoryDialogs", "Tags"),
        "trigger_context": QCoreApplication.translate("MemoryDialogs", "Recall when"),
        "valid_from": QCoreApplication.translate("MemoryDialogs", "Valid from"),
        "valid_until": QCoreApplication.translate("MemoryDialogs", "Valid until"),
        "superseded_by": QCoreApplication.translate("MemoryDialogs", "Superseded by"),
        "archived_at": QCoreApplication.translate("MemoryDialogs", "Archived"),
    }.get(name, name)


def _action_name(action: str) -> str:
    return {
        "create": QCoreApplication.translate("MemoryDialogs", "Created"),
        "edit": QCoreApplication.translate("MemoryDialogs", "Edited"),
        "merge": QCoreApplication.translate("MemoryDialogs", "Restated (merged)"),
        "archive": QCoreApplication.translate("MemoryDialogs", "Archived"),
        "restore": QCoreApplication.translate("MemoryDialogs", "Restored"),
        "supersede": QCoreApplication.translate("MemoryDialogs", "Superseded"),
        "delete": QCoreApplication.translate("MemoryDialogs", "Deleted"),
        "undelete": QCoreApplication.translate("MemoryDialogs", "Delete undone"),
    }.get(action, action)


def _actor_name(actor: str) -> str:
    return {
        "user": QCoreApplication.translate("MemoryDialogs", "you"),
        "assistant": QCoreApplication.translate("MemoryDialogs", "the assistant"),
        "import": QCoreApplication.translate("MemoryDialogs", "import"),
        "consolidation": QCoreApplication.translate("MemoryDialogs", "consolidation"),
        "system": QCoreApplication.translate("MemoryDialogs", "the app"),
    }.get(actor, actor)


def _snapshot_value(name: str, value: Any) -> str:
    if value is None or value == []:
        return "—"
    if name == "tags" and isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if name == "kind":
        return kind_name(str(value))
    if name == "source":
        return source_name(str(value))
    if name == "superseded_by":
        return f"#{value}"
    if isinstance(value, float):
        return f"{value:.2f}"
    if name in {"valid_from", "valid_until", "archived_at"} and isinstance(value, str):
        with contextlib.suppress(ValueError):
            return local_time(datetime.fromisoformat(value), "%Y-%m-%d %H:%M")
    return str(value)


def history_html(memory: Memory | None, revisions: Sequence[Revision], *, muted: str) -> str:
    """A memory's history as HTML: each change, newest first, with its fields before and after.

    Every text is escaped (markup shown as typed, invisible characters spelled out).

    Args:
        memory: The memory now (``None`` once deleted).
        revisions: Its recorded changes, oldest first.
        muted: The colour of the values before a change (``theme.colors().muted``).
    """
    parts: list[str] = []
    if memory is not None:
        parts.append(f"<p><b>#{memory.id}</b> {rich_escaped(memory.content)}</p>")
    for revision in reversed(revisions):
        when = local_time(revision.created_at, "%Y-%m-%d %H:%M")
        head = QCoreApplication.translate("MemoryDialogs", "{action} by {actor}").format(
            action=_action_name(revision.action), actor=_actor_name(revision.actor)
        )
        parts.append(f"<h4>{html.escape(when)} · {html.escape(head)}</h4>")
        before = revision.before or {}
        after = revision.after or {}
        table = '<table cellspacing="0" cellpadding="3" width="100%">'
        if revision.action in {"create", "undelete"} and after:
            # A new memory has no "before": show what it was created with.
            parts.append(table)
            for name in ("content", "kind", "source", "importance", "tags", "trigger_context"):
                if after.get(name) not in (None, []):
                    parts.append(
                        f"<tr><td width='20%' valign='top'>{html.escape(_field_name(name))}</td>"
                        f"<td valign='top'>{rich_escaped(_snapshot_value(name, after[name]))}"
                        "</td></tr>"
                    )
            parts.append("</table>")
            continue
        rows = [
            (k, before.get(k), after.get(k))
            for k in dict.fromkeys([*before, *after])
            if before.get(k) != after.get(k)
        ]
        if not rows:
            continue
        parts.append(table)
        # Outside the f-string: lupdate does not read calls inside one.
        field = html.escape(QCoreApplication.translate("MemoryDialogs", "Field"))
        before_head = html.escape(QCoreApplication.translate("MemoryDialogs", "Before"))
        after_head = html.escape(QCoreApplication.translate("MemoryDialogs", "After"))
        parts.append(
            f"<tr><th width='20%' align='left'>{field}</th>"
            f"<th width='40%' align='left'>{before_head}</th>"
            f"<th width='40%' align='left'>{after_head}</th></tr>"
        )
        for name, old, new in rows:
            parts.append(
                f"<tr><td valign='top'>{html.escape(_field_name(name))}</td>"
                f"<td valign='top' style='color:{muted}'>{rich_escaped(_snapshot_value(name, old))}"
                f"</td><td valign='top'>{rich_escaped(_snapshot_value(name, new))}</td></tr>"
            )
        parts.append("</table>")
    if not revisions:
        nothing = QCoreApplication.translate("MemoryDialogs", "No recorded changes.")
        parts.append(f"<p>{html.escape(nothing)}</p>")
    return "".join(parts)


class MemoryHistoryDialog(HistoryDialog):
    """A memory's history: every change with its fields before and after (non-modal)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("memoryHistory", 600, 440, parent)
        self.memory: Memory | None = None
        self.revisions: list[Revision] = []
        self.retranslate()

    def set_history(self, memory: Memory | None, revisions: Sequence[Revision]) -> None:
        """Show the history of ``memory``."""
        self.memory = memory
        self.revisions = list(revisions)
        self.retranslate()

    @override
    def title(self) -> str:
        memory_id = self.memory.id if self.memory is not None else ""
        return self.tr("History of memory #{id}").format(id=memory_id)

    @override
    def body(self) -> str:
        return history_html(self.memory, self.revisions, muted=colors(self).muted)
