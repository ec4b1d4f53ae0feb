r"""Dialogs of memory in the chat: approving a model's save, and writing or editing a memory.

All of them are non-modal to the event loop (shown with ``open()``, never ``exec()``) and report
through signals. Texts are shown *exactly*: invisible and control characters appear as
``\u200b``-style escapes (DESIGN §5.1, §9), and an escape the user leaves in place is stored as
the character it stands for. (The Memory page in Settings has its own dialogs in
``settings.memory_dialogs``.)
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import Final

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.memory.records import MemoryKind
from etos_desktop.core.memory.tools import SaveRequest
from etos_desktop.ui import theme
from etos_desktop.ui.markdown_render import escape_invisible
from etos_desktop.ui.memory_text import kind_name

__all__ = [
    "ApprovalDialog",
    "EscapeHighlighter",
    "MemoryTextDialog",
    "bind_approval",
    "exact_text",
    "invisible_count",
    "kind_names",
    "unescape_invisible",
]

_ESCAPE_RE: Final = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")


def invisible_count(text: str) -> int:
    """How many characters of ``text`` are shown as escapes (invisible or control characters)."""
    return len(_ESCAPE_RE.findall(escape_invisible(text))) - len(_ESCAPE_RE.findall(text))


def _stands_for_invisible(match: re.Match[str]) -> bool:
    code = int(match.group(1) or match.group(2), 16)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return False
    char = chr(code)
    return escape_invisible(char) != char


def unescape_invisible(text: str) -> str:
    r"""Turn the escapes ``escape_invisible`` writes back into the characters they stand for.

    Only escapes of characters ``escape_invisible`` would escape are decoded, so a visible
    character spelled ``\u0041`` stays as typed. Surrogates are never produced.
    """

    def replace(match: re.Match[str]) -> str:
        if _stands_for_invisible(match):
            return chr(int(match.group(1) or match.group(2), 16))
        return match.group(0)

    return _ESCAPE_RE.sub(replace, text)


def exact_text(shown: str, original: str) -> str:
    """The text to store for an editor that was filled with ``escape_invisible(original)``.

    Unchanged: ``original`` itself, byte for byte. Edited: the escapes left in are decoded.
    """
    if shown == escape_invisible(original):
        return original
    return unescape_invisible(shown)


def kind_names() -> dict[str, str]:
    """The memory kinds in words, by value (the same words as the Memory page)."""
    return {kind.value: kind_name(kind) for kind in MemoryKind}


class EscapeHighlighter(QSyntaxHighlighter):
    """Marks the escapes of invisible characters in an editor, so they stand out from text."""

    def __init__(self, document: QTextDocument | QObject) -> None:
        super().__init__(document)
        self._format = QTextCharFormat()
        self._format.setForeground(QColor(theme.colors().invisible))
        self._format.setBackground(QColor(245, 158, 11, 50))

    @override
    def highlightBlock(self, text: str) -> None:
        for match in _ESCAPE_RE.finditer(text):
            if _stands_for_invisible(match):
                self.setFormat(match.start(), match.end() - match.start(), self._format)


def _exact_label(parent: QWidget, text: str, name: str) -> QLabel:
    label = QLabel(parent)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setText(text)
    return label


class ApprovalDialog(QDialog):
    """Asks whether to save what the model wants to remember (approval "ask every time").

    Every field of the request is shown as it would be stored; the content can be edited. Shown
    with ``open()``; closing it in any way other than Save declines.

    Args:
        request: The model's ``save_memory`` call, parsed.
        parent: The window it belongs to.

    Signals:
        decided(object): The ``SaveRequest`` to save (its content possibly edited), or ``None``
            to decline. Emitted once.
        superseded_shown(): The text of the memory it would replace was filled in.
    """

    decided = Signal(object)
    superseded_shown = Signal()

    def __init__(self, request: SaveRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryApprovalDialog")
        self.request = request
        self._decided = False
        self.setWindowTitle(self.tr("Save to memory?"))
        self.resize(560, 420)
        intro = QLabel(
            self.tr(
                "The assistant wants to save this to your long-term memory. It will be sent with "
                "future messages it is relevant to. You can change the text before saving."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.content_edit = QPlainTextEdit(self)
        self.content_edit.setObjectName("approvalContent")
        self.content_edit.setPlainText(escape_invisible(request.content))
        self.content_edit.setTabChangesFocus(True)
        self._highlighter = EscapeHighlighter(self.content_edit.document())
        self.content_edit.textChanged.connect(self._on_content_changed)
        hidden = sum(
            invisible_count(text)
            for text in (request.content, *request.tags, request.trigger_context or "")
        )
        self.invisible_warning = QLabel(self)
        self.invisible_warning.setObjectName("invisibleWarning")
        self.invisible_warning.setWordWrap(True)
        self.invisible_warning.setStyleSheet(theme.state_style("warning", self))
        self.invisible_warning.setText(
            self.tr(
                "⚠ This contains %n invisible or control character(s), shown as \\u escapes. "
                "Delete an escape to leave that character out.",
                "",
                hidden,
            )
        )
        self.invisible_warning.setVisible(hidden > 0)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        kinds = kind_names()
        self.kind_label = _exact_label(self, kinds.get(request.kind, request.kind), "approvalKind")
        self.importance_label = _exact_label(
            self, f"{request.importance:.2f}", "approvalImportance"
        )
        self.tags_label = _exact_label(
            self,
            ", ".join(escape_invisible(t) for t in request.tags) or self.tr("none"),
            "approvalTags",
        )
        self.trigger_label = _exact_label(
            self,
            escape_invisible(request.trigger_context)
            if request.trigger_context
            else self.tr("none"),
            "approvalTrigger",
        )
        self.supersedes_label = _exact_label(
            self,
            self.tr("#{id} — loading…").format(id=request.supersedes)
            if request.supersedes is not None
            else self.tr("nothing"),
            "approvalSupersedes",
        )
        # The assistant proposed it either way: say so, and whether you said it (issue 19).
        if request.inferred:
            certainty = self.tr(
                "proposed by the assistant as an observation, low confidence ({confidence:.1f}) "
                "— inferred, you never said it"
            )
        else:
            certainty = self.tr(
                "proposed by the assistant from what you said (confidence {confidence:.1f})"
            )
        self.source_label = _exact_label(
            self, certainty.format(confidence=request.confidence), "approvalSource"
        )
        form.addRow(self.tr("Kind:"), self.kind_label)
        form.addRow(self.tr("Importance:"), self.importance_label)
        form.addRow(self.tr("Tags:"), self.tags_label)
        form.addRow(self.tr("Recall when:"), self.trigger_label)
        form.addRow(self.tr("Replaces:"), self.supersedes_label)
        form.addRow(self.tr("Certainty:"), self.source_label)

        self.buttons = QDialogButtonBox(self)
        self.save_button = QPushButton(self.tr("Save"), self)
        self.save_button.setObjectName("approvalSave")
        self.decline_button = QPushButton(self.tr("Don't save"), self)
        self.decline_button.setObjectName("approvalDecline")
        self.buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(self.decline_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.save_button.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(QLabel(self.tr("Memory:"), self))
        layout.addWidget(self.content_edit, 1)
        layout.addWidget(self.invisible_warning)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.finished.connect(self._on_finished)

    @property
    def is_decided(self) -> bool:
        """Whether the dialog has answered (``decided`` was emitted)."""
        return self._decided

    def set_superseded(self, text: str | None) -> None:
        """Show the text of the memory this one would replace (``None``: it does not exist)."""
        memory_id = self.request.supersedes
        if text is None:
            shown = self.tr("#{id} — no such memory (saving will fail)").format(id=memory_id)
        else:
            shown = self.tr("#{id} — {text}").format(id=memory_id, text=escape_invisible(text))
        self.supersedes_label.setText(shown)
        self.superseded_shown.emit()

    def edited_request(self) -> SaveRequest:
        """The request with the content as it is in the editor (exact when unchanged)."""
        content = exact_text(self.content_edit.toPlainText(), self.request.content).strip()
        if content == self.request.content:
            return self.request
        return dataclasses.replace(self.request, content=content)

    def _on_content_changed(self) -> None:
        self.save_button.setEnabled(bool(self.content_edit.toPlainText().strip()))

    def _on_finished(self, result: int) -> None:
        if self._decided:
            return
        self._decided = True
        accepted = result == QDialog.DialogCode.Accepted
        self.decided.emit(self.edited_request() if accepted else None)


def bind_approval(dialog: ApprovalDialog, future: asyncio.Future[SaveRequest | None]) -> None:
    """Resolve ``future`` from the dialog, and close the dialog when the future ends first.

    The reply being stopped cancels the future (the controller's task awaits it): the dialog then
    goes away and nothing is saved.
    """

    def on_decided(request: SaveRequest | None) -> None:
        if not future.done():
            future.set_result(request)

    def on_future_done(_future: asyncio.Future[SaveRequest | None]) -> None:
        if not dialog.is_decided:
            dialog.reject()

    dialog.decided.connect(on_decided)
    future.add_done_callback(on_future_done)


class MemoryTextDialog(QDialog):
    """Write a new memory (the Remember… action) or change one's wording (a note's Edit).

    Save does not close the dialog: the owner runs the save and calls :meth:`saved` or
    :meth:`show_error`, so a refused text (a secret, too long…) stays for the user to fix.

    Args:
        text: The text to start from (a message to trim, or the memory's current text).
        title: The window title.
        intro: One sentence saying what happens on Save.
        kind: The kind preselected in the kind chooser; ``None`` hides the chooser.
        max_chars: The longest text accepted (setting ``memory.max_content_chars``), for the
            counter; 0 shows no limit.

    Signals:
        submitted(str, str): Save was clicked: the exact text and the kind ("" without chooser).
    """

    submitted = Signal(str, str)

    def __init__(
        self,
        text: str,
        *,
        title: str,
        intro: str,
        kind: str | None = MemoryKind.FACT,
        max_chars: int = 0,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryTextDialog")
        self.setWindowTitle(title)
        self.resize(520, 320)
        self._original = text
        self._max_chars = max_chars
        self._with_kind = kind is not None
        intro_label = QLabel(intro, self)
        intro_label.setWordWrap(True)
        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setObjectName("memoryText")
        self.text_edit.setPlainText(escape_invisible(text.strip()))
        self.text_edit.setTabChangesFocus(True)
        self._highlighter = EscapeHighlighter(self.text_edit.document())
        self.counter = QLabel(self)
        self.counter.setObjectName("memoryCounter")
        self.counter.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.kind_combo = QComboBox(self)
        self.kind_combo.setObjectName("memoryKind")
        for value, name in kind_names().items():
            self.kind_combo.addItem(name, str(value))
        if kind is not None:
            self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(str(kind))))
        self.error_label = QLabel(self)
        self.error_label.setObjectName("memoryError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setStyleSheet(theme.state_style("error", self))
        self.error_label.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        assert save is not None
        self.save_button = save
        self.save_button.setObjectName("memorySave")
        self.buttons.accepted.connect(self._on_save_clicked)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow(self.tr("Kind:"), self.kind_combo)
        layout = QVBoxLayout(self)
        layout.addWidget(intro_label)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.counter)
        if kind is not None:
            layout.addLayout(form)
        else:
            self.kind_combo.hide()
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.text_edit.textChanged.connect(self._on_text_changed)
        self._on_text_changed()
        self.text_edit.setFocus()

    def text(self) -> str:
        """The text to save, exactly (escapes left in the editor decoded)."""
        return exact_text(self.text_edit.toPlainText(), self._original.strip()).strip()

    def kind(self) -> str:
        """The chosen kind ("" when the chooser is hidden)."""
        return str(self.kind_combo.currentData()) if self._with_kind else ""

    def saved(self) -> None:
        """The save worked: close."""
        self.accept()

    def show_error(self, text: str) -> None:
        """The save was refused: say why and let the user change the text."""
        self.error_label.setText(text)
        self.error_label.show()
        self.save_button.setEnabled(True)
        self.text_edit.setEnabled(True)

    def _on_text_changed(self) -> None:
        length = len(self.text())
        if self._max_chars:
            self.counter.setText(
                self.tr("{n} / {limit} characters").format(n=length, limit=self._max_chars)
            )
        else:
            self.counter.setText(self.tr("{n} characters").format(n=length))
        too_long = bool(self._max_chars) and length > self._max_chars
        self.counter.setStyleSheet(theme.state_style("error" if too_long else "", self))
        self.save_button.setEnabled(length > 0 and not too_long)

    def _on_save_clicked(self) -> None:
        if not self.text():
            return
        self.error_label.hide()
        self.save_button.setEnabled(False)
        self.submitted.emit(self.text(), self.kind())
