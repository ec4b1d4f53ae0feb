"""A first context inspector: what was sent with one reply (blocks, token estimates, drops).

The full inspector with memories and their score parts comes with the memory engine.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from etos_desktop.core.context.assembler import ContextTrace
    from etos_desktop.ui.chat_controller import ChatController


class ContextDialog(QDialog):
    """Shows one stored context trace: each block with its tokens and text, and what was dropped."""

    def __init__(self, trace: ContextTrace | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("What was sent"))
        self.resize(720, 520)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels([self.tr("Part"), self.tr("Tokens (est.)")])
        self.tree.setColumnWidth(0, 460)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.tree.currentItemChanged.connect(self._on_tree_current_changed)
        self._texts: dict[int, str] = {}
        if trace is None:
            self.summary.setText(self.tr("Nothing was recorded for this message."))
            return
        self.summary.setText(
            self.tr(
                "Model {model}: {total} of {budget} tokens used (window {window}, {reserve} kept "
                "for the reply). History: {kept} of {all} messages sent, {turns} older turn(s) "
                "left out."
            ).format(
                model=trace.model,
                total=trace.total_tokens,
                budget=trace.budget,
                window=trace.context_window,
                reserve=trace.max_output_tokens,
                kept=trace.history_kept,
                all=trace.history_total,
                turns=trace.dropped_turns,
            )
        )
        for block in trace.blocks:
            item = QTreeWidgetItem([f"{block.kind}: {block.label}", str(block.tokens)])
            self._texts[id(item)] = block.text
            self.tree.addTopLevelItem(item)
        history = QTreeWidgetItem(
            [
                self.tr("Conversation history ({n} messages)").format(n=trace.history_kept),
                str(trace.history_tokens),
            ]
        )
        self.tree.addTopLevelItem(history)
        if trace.dropped_turns:
            dropped = QTreeWidgetItem(
                [
                    self.tr("Left out: {n} older turn(s)").format(n=trace.dropped_turns),
                    str(trace.dropped_tokens),
                ]
            )
            self.tree.addTopLevelItem(dropped)
        current = QTreeWidgetItem([self.tr("Your message"), str(trace.current_tokens)])
        self.tree.addTopLevelItem(current)
        self.tree.setCurrentItem(self.tree.topLevelItem(0))

    def _on_tree_current_changed(self, item: QTreeWidgetItem | None, _old: object) -> None:
        self.text.setPlainText(self._texts.get(id(item), "") if item is not None else "")


def show_context(
    parent: QWidget, controller: ChatController, message_id: int
) -> asyncio.Task[None]:
    """Load the trace of ``message_id`` and show it in a non-modal dialog."""

    async def load() -> None:
        from etos_desktop.core.context.assembler import ContextTrace

        raw = await controller.repo.get_trace(message_id)
        dialog = ContextDialog(ContextTrace.from_json(raw) if raw else None, parent)
        dialog.setObjectName("contextDialog")
        dialog.show()

    return controller.spawn(load())
