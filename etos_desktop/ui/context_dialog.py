"""The context inspector: exactly what was sent with one reply, and why (DESIGN §1.5, §8).

It reads the trace the chat service stored with the reply: every block with its token estimate
and exact text, the history kept and what was left out, where the memories went, and for each
memory its id, kind, date, confidence, score, every score part and the reason it was chosen.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.context.assembler import (
    SYSTEM_PROMPT_LABEL,
    ContextTrace,
    TraceAttachment,
    TraceMemory,
)
from etos_desktop.core.memory.standing import ALL_THAT_FIT_REASON
from etos_desktop.core.providers.base import Usage
from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.core.usage.prices import ModelPrice
from etos_desktop.core.usage.records import message_usage
from etos_desktop.ui.markdown_render import escape_invisible
from etos_desktop.ui.memory_text import kind_name
from etos_desktop.ui.usage_text import conversation_usage_text, reply_usage_text

if TYPE_CHECKING:
    from etos_desktop.core.usage.store import UsageRepository
    from etos_desktop.ui.chat_controller import ChatController

#: Score parts in the order they are explained, with what each one is.
_PART_ORDER = (
    "directed",
    "vector",
    "floor",
    "keyword",
    "vector_weight",
    "relevance",
    "recency",
    "importance",
    "confidence",
    "time_window",
    "newer_first",
    "eligible_vector",
    "eligible_keyword",
    "eligible_time",
)


def _unsigned_zero(value: float) -> float:
    """``value``, with anything that rounds to -0.000 shown as 0."""
    return 0.0 if abs(value) < 0.0005 else value


def _number(value: float) -> str:
    return f"{_unsigned_zero(value):.3f}"


class ContextDialog(QDialog):
    """Shows one stored context trace.

    Args:
        trace: The trace of the reply (``None``: nothing was recorded).
        temporary: The reply belongs to a temporary conversation (memory is off there).
        user_text: The user's message the reply answers, as stored (shown with its tokens).
        reply_usage: The model and the tokens the server reported for this reply (``None``:
            it reported none).
        conversation_usage: The model and usage of every reply of its conversation with usage.
        prices: The prices per million tokens by model (Settings → Providers), for the costs.
        parent: The window it belongs to.
    """

    def __init__(
        self,
        trace: ContextTrace | None,
        *,
        temporary: bool = False,
        user_text: str | None = None,
        reply_usage: tuple[str | None, Usage] | None = None,
        conversation_usage: Sequence[tuple[str | None, Usage]] = (),
        prices: Mapping[str, ModelPrice] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("contextDialog")
        self.resize(860, 620)
        self.trace = trace
        self._temporary = temporary
        self._user_text = user_text
        self._copied = False
        self._reply_usage = reply_usage
        self._conversation_usage = list(conversation_usage)
        self._prices = dict(prices or {})
        self.summary = QLabel(self)
        self.summary.setObjectName("contextSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # The server's counts, not estimates: this reply's and the conversation's.
        self.usage = QLabel(self)
        self.usage.setObjectName("contextUsage")
        self.usage.setWordWrap(True)
        self.usage.setTextFormat(Qt.TextFormat.PlainText)
        self.usage.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.memory_status = QLabel(self)
        self.memory_status.setObjectName("memoryStatus")
        self.memory_status.setWordWrap(True)
        self.memory_status.setTextFormat(Qt.TextFormat.PlainText)
        self.memory_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("contextTree")
        self.tree.setColumnWidth(0, 500)
        self.tree.setColumnWidth(1, 100)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("contextText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setTabChangesFocus(True)
        # Fixed width keeps the score parts in columns; CJK falls back to a CJK font. Only the
        # families are set, so the size follows the UI font (Settings → General → Font size).
        mono = QFont()
        mono.setFamilies(
            [QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family(), "monospace"]
        )
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        self.text.setFont(mono)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.text)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 340])
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton(self)
        self.copy_button.setObjectName("copyJsonButton")
        self.buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self._on_copy_clicked)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.usage)
        layout.addWidget(self.memory_status)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.buttons)
        self.tree.currentItemChanged.connect(self._on_tree_current_changed)
        self._texts: dict[int, str] = {}
        self._items: list[QTreeWidgetItem] = []
        self.retranslate()

    def retranslate(self) -> None:
        """Set every text in the current language; the rows are built again."""
        self.setWindowTitle(self.tr("What was sent"))
        self.tree.setHeaderLabels([self.tr("Part"), self.tr("Tokens (est.)"), self.tr("Score")])
        # The numbers' column is as wide as its title needs in this language and text size.
        header = self.tree.header()
        header.resizeSection(1, max(100, header.sectionSizeFromContents(1).width()))
        self.tree.setAccessibleName(self.tr("Parts of the request"))
        self.text.setAccessibleName(self.tr("Exact text of the selected part"))
        self.buttons.button(QDialogButtonBox.StandardButton.Close).setText(self.tr("Close"))
        self.copy_button.setText(self.tr("Copied") if self._copied else self.tr("Copy as JSON"))
        self.copy_button.setToolTip(self.tr("Copy the whole record of this request as JSON"))
        selected = self._items.index(self.tree.currentItem()) if self.tree.currentItem() else 0
        self.tree.clear()
        self._texts.clear()
        self._items.clear()
        self.usage.setText(self._usage_text())
        if self.trace is None:
            self.summary.setText(self.tr("Nothing was recorded for this message."))
            self.memory_status.hide()
            self.copy_button.setEnabled(False)
            return
        self._fill(self.trace, self._temporary)
        if 0 <= selected < len(self._items):
            self.tree.setCurrentItem(self._items[selected])

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        super().changeEvent(event)

    def _usage_text(self) -> str:
        if self._reply_usage is None:
            reply = self.tr("This reply: the server reported no token usage.")
        else:
            model, usage = self._reply_usage
            reply = self.tr("This reply: {usage}").format(
                usage=reply_usage_text(usage, self._prices.get(model or ""))
            )
        return reply + "\n" + conversation_usage_text(self._conversation_usage, self._prices)

    # -- building -----------------------------------------------------------------------------

    def _add(
        self,
        parent: QTreeWidget | QTreeWidgetItem,
        title: str,
        tokens: int | None,
        text: str,
        score: str = "",
    ) -> QTreeWidgetItem:
        item = QTreeWidgetItem([title, "" if tokens is None else str(tokens), score])
        item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if isinstance(parent, QTreeWidget):
            parent.addTopLevelItem(item)
        else:
            parent.addChild(item)
        # Shown exactly: invisible characters spelled out, as in the approval dialog.
        self._texts[id(item)] = escape_invisible(text)
        self._items.append(item)
        return item

    def _fill(self, trace: ContextTrace, temporary: bool) -> None:
        self.summary.setText(
            self.tr(
                "Model {model}: about {total} of {budget} tokens used (context window {window}, "
                "{reserve} kept for the reply, {margin} for estimate error). History: {kept} of "
                "{all} messages sent; older turns left out: {turns}."
            ).format(
                model=trace.model,
                total=self.locale().toString(trace.total_tokens),
                budget=self.locale().toString(trace.budget),
                window=self.locale().toString(trace.context_window),
                reserve=self.locale().toString(trace.max_output_tokens),
                margin=trace.safety_margin,
                kept=trace.history_kept,
                all=trace.history_total,
                turns=trace.dropped_turns,
            )
        )
        self.memory_status.setText(self._memory_status(trace, temporary))

        system_blocks = [b for b in trace.blocks if b.kind != "memories"]
        memory_blocks = [b for b in trace.blocks if b.kind == "memories"]
        if system_blocks:
            system = self._add(
                self.tree,
                self.tr("System message (the stable prefix)"),
                sum(b.tokens for b in system_blocks),
                "\n\n".join(b.text for b in system_blocks),
            )
            for block in system_blocks:
                text = block.text
                if block.label == SYSTEM_PROMPT_LABEL:
                    title = self.tr("System prompt: persona and rules")
                elif block.kind == "summaries":
                    title, text = self._summaries_block(trace, block.text)
                elif block.kind == "profile":
                    title, text = self._profile_block(trace, block.text)
                elif block.kind == "standing_memories":
                    self._standing_block(system, trace, block.text, block.tokens)
                    continue
                else:
                    title = f"{block.kind}: {block.label}"
                self._add(system, title, block.tokens, text)
            system.setExpanded(True)

        self._add(
            self.tree,
            self.tr(
                "Conversation history: {kept} of %n message(s)", "", trace.history_total
            ).format(kept=trace.history_kept),
            trace.history_tokens,
            self._history_text(trace),
        )
        if trace.dropped_turns:
            self._add(
                self.tree,
                self.tr(
                    "Left out to fit: %n older turn(s), {n} messages", "", trace.dropped_turns
                ).format(n=len(trace.dropped_message_indexes)),
                trace.dropped_tokens,
                self._history_text(trace),
            )

        if memory_blocks:
            block = memory_blocks[0]
            if trace.placement == "user":
                title = self.tr("Memories — at the top of your message (compatibility mode)")
            else:
                title = self.tr("Memories — a system message right before your message")
            details = [block.text, "", self._retrieval_text(trace)]
            group = self._add(self.tree, title, block.tokens, "\n".join(details))
            for recalled in trace.recalled_summaries:
                self._add(
                    group,
                    self.tr("Summary of “{title}” · {date}").format(
                        title=recalled.title or self.tr("(untitled)"), date=recalled.date
                    ),
                    None,
                    self.tr(
                        "A summary of another conversation, added because the message asks about "
                        "the past.\nWhy it was chosen: {reason}"
                    ).format(reason=self._reason_text(recalled.reason)),
                    f"{recalled.score:.3f}",
                )
            for memory in self._retrieved(trace):
                self._add(
                    group,
                    self._memory_title(memory),
                    None,
                    self._memory_text(memory, block.text, trace),
                    f"{memory.score:.3f}",
                )
            group.setExpanded(True)
        elif trace.retrieval_query:
            self._add(
                self.tree,
                self.tr("Memories — none sent"),
                0,
                self.memory_status.text() + "\n\n" + self._retrieval_text(trace),
            )

        mine = self._add(
            self.tree,
            self.tr("The app's request (not written by you)")
            if trace.app_request
            else self.tr("Your message"),
            trace.current_tokens,
            self._current_text(trace),
        )
        for attachment in trace.attachments:
            self._add(
                mine,
                self._attachment_title(attachment),
                attachment.tokens if attachment.sent != "note" else None,
                self._attachment_text(attachment),
            )
        if trace.attachments:
            mine.setExpanded(True)
        first = self.tree.topLevelItem(0)
        if first is not None:
            self.tree.setCurrentItem(first)

    @staticmethod
    def _retrieved(trace: ContextTrace) -> tuple[TraceMemory, ...]:
        """The memories of the per-turn block (none when the whole store was sent)."""
        return tuple(m for m in trace.memories if m.reason != ALL_THAT_FIT_REASON)

    @staticmethod
    def _standing(trace: ContextTrace) -> tuple[TraceMemory, ...]:
        """The memories of the "all that fit" block in the system message."""
        return tuple(m for m in trace.memories if m.reason == ALL_THAT_FIT_REASON)

    def _standing_block(
        self, system: QTreeWidgetItem, trace: ContextTrace, text: str, tokens: int
    ) -> None:
        """The "all that fit" block: its rule, then one row per memory it holds."""
        memories = self._standing(trace)
        title = self.tr("All your memories: %n, all that fit", "", len(memories))
        group = self._add(system, title, tokens, f"{self._rule_text(trace)}\n\n{text}")
        for memory in memories:
            self._add(
                group, self._memory_title(memory), None, self._memory_text(memory, text, trace)
            )
        group.setExpanded(True)

    def _memory_title(self, memory: TraceMemory) -> str:
        return self.tr("#{id} {kind} · {date} · confidence {confidence:.1f}").format(
            id=memory.id,
            kind=kind_name(memory.kind),
            date=memory.date,
            confidence=memory.confidence,
        )

    def _rule_text(self, trace: ContextTrace) -> str:
        """Which rule chose the memories, in words ("" for traces from before the rule)."""
        tokens = self.locale().toString(trace.memory_store_tokens)
        budget = self.locale().toString(trace.memory_fit_budget)
        if trace.memory_rule == "all_that_fit" and not trace.memory_store_count:
            return ""  # "No memory is saved yet" says it all
        if trace.memory_rule == "all_that_fit":
            return self.tr(
                "Chosen by: all that fit — all %n memories, about {tokens} of the {budget}-token "
                "budget, sent in the system message as standing background, in a stable order, "
                "so the message stays the same from turn to turn and servers can cache it.",
                "",
                trace.memory_store_count,
            ).format(tokens=tokens, budget=budget)
        if trace.memory_rule == "retrieval":
            return self.tr(
                "Chosen by: retrieval — the store of %n memories is over the {budget}-token budget "
                "for sending them all, so the ones relevant to this message were chosen.",
                "",
                trace.memory_store_count,
            ).format(budget=budget)
        if trace.memory_rule == "fixed":
            return self.tr(
                "Chosen by: retrieval — a fixed number per message (Settings → Memory), so the "
                "ones relevant to this message were chosen."
            )
        return ""

    def _profile_block(self, trace: ContextTrace, text: str) -> tuple[str, str]:
        """The title and the detail text of the user profile block."""
        when = trace.profile_updated_at
        if when:
            when = datetime.fromisoformat(when).astimezone().strftime("%Y-%m-%d %H:%M")
        title = self.tr("Your profile, as of {time}").format(time=when or "—")
        note = self.tr(
            "Read at every message: edit it in Settings → Profile and the next message carries "
            "the edit. It is refreshed once a day from new summaries and memories."
        )
        return title, f"{note}\n\n{text}"

    def _summaries_block(self, trace: ContextTrace, text: str) -> tuple[str, str]:
        """The title and the detail text of the recent-summaries block."""
        count = sum(1 for line in text.splitlines() if line.startswith("- "))
        taken = trace.summaries_snapshot_at
        when = ""
        if taken:
            try:
                when = datetime.fromisoformat(taken).astimezone().strftime("%Y-%m-%d %H:%M")
            except ValueError:
                when = taken
        title = self.tr(
            "Summaries of other conversations: %n, snapshot of {time}", "", count
        ).format(time=when or "—")
        note = self.tr(
            "Taken at this conversation's first message of the session ({time}) and sent "
            "unchanged with every message of the session, so the system message stays the same; "
            "a session ends after 30 minutes without a message or when the app restarts."
        ).format(time=when or "—")
        return title, f"{note}\n\n{text}"

    def _attachment_title(self, attachment: TraceAttachment) -> str:
        name = neutralise_bidi(attachment.name)
        if attachment.message == "history":
            return self.tr("Earlier attachment: {name}").format(name=name)
        return self.tr("Attachment: {name}").format(name=name)

    def _attachment_text(self, attachment: TraceAttachment) -> str:
        words = {
            "image": self.tr("Sent as an image (an image_url part with a data URL)."),
            "document": self.tr(
                "Sent as a fenced document block before the message's words, labelled as "
                "material and not instructions."
            ),
            "note": self.tr(
                "Not sent: a one-line note names it (an image older than the last three of your "
                "messages, or a model that takes no images)."
            ),
            "missing": self.tr("Not sent: its file is missing from the data folder."),
        }
        return words.get(attachment.sent, attachment.sent)

    def _current_text(self, trace: ContextTrace) -> str:
        if trace.app_request:
            note = self.tr("Sent last, in your place, by the app that asked for the check-in:")
            return f"{note}\n\n{trace.app_request}"
        if self._user_text is None:
            return self.tr("Your message, sent last.")
        if trace.placement == "user" and self._retrieved(trace):
            note = self.tr("Sent last, after the memories that were put at its top (see Memories):")
        elif any(a.message == "current" for a in trace.attachments):
            note = self.tr("Sent last, with its attachments (below) before your words:")
        else:
            note = self.tr("Sent last, exactly as you wrote it:")
        return f"{note}\n\n{self._user_text}"

    def _memory_status(self, trace: ContextTrace, temporary: bool) -> str:
        if trace.app_request:
            return self.tr(
                "A check-in: your companion started this conversation. This is the background "
                "request that wrote its first message, with the profile and recent summaries it "
                "was written from; memories are not sent with a check-in."
            )
        if temporary:
            return self.tr(
                "Memory was off: this is a temporary conversation, so nothing was read from or "
                "saved to memory."
            )
        if trace.memory_rule == "all_that_fit":
            if not trace.memory_store_count:
                text = self.tr("No memory is saved yet, so none was sent.")
            else:
                text = self.tr(
                    "All %n saved memories were sent, fenced and labelled as standing background, "
                    "in the system message after the summaries.",
                    "",
                    trace.memory_store_count,
                )
            if trace.recalled_summaries:
                text += " " + self.tr(
                    "%n summaries of earlier conversations were added before your message, for "
                    "a question about the past.",
                    "",
                    len(trace.recalled_summaries),
                )
            rule = self._rule_text(trace)
            return f"{text}\n{rule}" if rule else text
        rule = self._rule_text(trace)
        status = self._retrieval_status(trace)
        return f"{status}\n{rule}" if rule and trace.retrieval_query else status

    def _retrieval_status(self, trace: ContextTrace) -> str:
        if not trace.retrieval_query:
            return self.tr(
                "Memory was not used for this reply (memory is turned off, or the search failed)."
            )
        if trace.memory_dropped:
            return self.tr(
                "Relevant memories were found but left out: they did not fit in the model's "
                "context window."
            )
        if not trace.memories and trace.recalled_summaries:
            return self.tr(
                "No saved memory was relevant, but %n summaries of earlier conversations were "
                "sent, fenced and labelled as reference data, for a question about the past.",
                "",
                len(trace.recalled_summaries),
            )
        if not trace.memories:
            return self.tr("No saved memory was relevant to this message, so none was sent.")
        if trace.placement == "user":
            text = self.tr(
                "Memories sent: %n, fenced and labelled as reference data, at the top of your "
                "message (compatibility mode: the server takes one system message).",
                "",
                len(trace.memories),
            )
        else:
            text = self.tr(
                "Memories sent: %n, fenced and labelled as reference data, as a system message "
                "right before your message.",
                "",
                len(trace.memories),
            )
        return text

    def _retrieval_text(self, trace: ContextTrace) -> str:
        lines = [self.tr("Searched with: {query}").format(query=trace.retrieval_query or "—")]
        if trace.recall_cue:
            lines.append(
                self.tr(
                    "Recall cue: {cue} (the message asks about the past, so more memories were "
                    "considered)"
                ).format(cue=trace.recall_cue)
            )
        else:
            lines.append(self.tr("Recall cue: none"))
        if trace.retrieval_window:
            lines.append(
                self.tr("Time window: {window} (memories from it ranked higher)").format(
                    window=trace.retrieval_window
                )
            )
        return "\n".join(lines)

    def _memory_text(self, memory: TraceMemory, block_text: str, trace: ContextTrace) -> str:
        # "- #12 (…)" in English blocks, "- #12（…）" in Chinese ones.
        prefixes = (f"- #{memory.id} ", f"- #{memory.id}（")
        sent = next((line for line in block_text.splitlines() if line.startswith(prefixes)), "")
        parts = dict(memory.parts)
        lines = [
            self.tr("Memory #{id} — {kind}, saved {date}, confidence {confidence:.2f}").format(
                id=memory.id,
                kind=kind_name(memory.kind),
                date=memory.date,
                confidence=memory.confidence,
            ),
            self.tr("Sent as: {line}").format(line=sent or "—"),
        ]
        if sent.endswith(f"[deleted memory #{memory.id}]"):
            lines.append(
                self.tr(
                    "This memory was deleted after the reply: its text was removed from this "
                    "record too."
                )
            )
        if memory.reason == ALL_THAT_FIT_REASON:
            lines.append(self._rule_text(trace))
            return "\n".join(lines)
        lines.append(
            self.tr("Why it was chosen: {reason}").format(reason=self._reason_text(memory.reason))
        )
        if "relevance" in parts:
            lines.append(
                self.tr(
                    "Score {score:.3f} = relevance {relevance:.3f} + recency {recency:.3f} + "
                    "importance {importance:.3f} + confidence {confidence:.3f}{newer}"
                ).format(
                    score=memory.score + 0.0,
                    relevance=parts.get("relevance", 0.0) + 0.0,
                    recency=_unsigned_zero(parts.get("recency", 0.0)),
                    importance=_unsigned_zero(parts.get("importance", 0.0)),
                    confidence=_unsigned_zero(parts.get("confidence", 0.0)),
                    newer=(
                        self.tr(" + newer first {v:.3f}").format(v=parts["newer_first"])
                        if "newer_first" in parts
                        else ""
                    ),
                )
            )
        else:
            lines.append(self.tr("Score {score:.3f}").format(score=memory.score))
        lines.append(self.tr("Score parts:"))
        labels = self._part_labels()
        descriptions = self._part_descriptions()
        names = [n for n in _PART_ORDER if n in parts] + sorted(set(parts) - set(_PART_ORDER))
        for name in names:
            value = parts[name]
            if name == "directed":
                shown = self._directed_text(value)
            elif name.startswith("eligible_"):
                shown = self.tr("yes") if value else self.tr("no")
            else:
                shown = _number(value)
            description = descriptions.get(name, "")
            label = labels.get(name, name)
            lines.append(f"  {label} = {shown}" + (f"  ({description})" if description else ""))
        lines.append("")
        lines.append(self._retrieval_text(trace))
        return "\n".join(lines)

    def _reason_text(self, reason: str) -> str:
        """Why a memory or a summary was chosen, in words.

        The trace keeps it as stable English parts joined by "; " (``trace_memories`` in
        ``core/memory/retrieval.py``, ``RecalledSummary.reason`` in ``core/summaries/recall.py``):
        "vector 0.41 ≥ floor 0.15", "vector 0.41", "keyword 0.30", "from the period the message
        names" or "ranked". A part it does not know is shown as it is.
        """
        words = []
        for part in reason.split("; "):
            if found := re.fullmatch(r"vector (\S+) ≥ floor (\S+)", part):
                words.append(
                    self.tr("meaning {similarity} ≥ floor {floor}").format(
                        similarity=found[1], floor=found[2]
                    )
                )
            elif found := re.fullmatch(r"vector (\S+)", part):
                words.append(self.tr("meaning {similarity}").format(similarity=found[1]))
            elif found := re.fullmatch(r"keyword (\S+)", part):
                words.append(self.tr("keywords {score}").format(score=found[1]))
            elif part == "from the period the message names":
                words.append(self.tr("from the period the message names"))
            elif part == "ranked":
                words.append(self.tr("ranked among the most relevant"))
            else:
                words.append(part)
        return self.tr("; ", "between the reasons a memory was chosen").join(words)

    def _directed_text(self, value: float) -> str:
        """What the relevance gate decided (``search.rank``: 1 the message, 0.5 shared, 0 no)."""
        if value >= 1.0:
            return self.tr("yes, by the message itself")
        if value > 0.0:
            return self.tr("yes, by a name or rare word it shares with a memory")
        return self.tr("no, a general question")

    def _part_labels(self) -> dict[str, str]:
        return {
            "directed": self.tr("about your memory"),
            "vector": self.tr("meaning"),
            "floor": self.tr("floor"),
            "keyword": self.tr("keywords"),
            "vector_weight": self.tr("weight of meaning"),
            "relevance": self.tr("relevance"),
            "recency": self.tr("recency"),
            "importance": self.tr("importance"),
            "confidence": self.tr("confidence"),
            "time_window": self.tr("time window"),
            "newer_first": self.tr("newer first"),
            "eligible_vector": self.tr("eligible by meaning"),
            "eligible_keyword": self.tr("eligible by keywords"),
            "eligible_time": self.tr("eligible by period"),
        }

    def _part_descriptions(self) -> dict[str, str]:
        return {
            "directed": self.tr("general questions need a closer match before a memory is sent"),
            "vector": self.tr("similarity of meaning to the search text"),
            "floor": self.tr("the similarity a memory needs to count as relevant"),
            "keyword": self.tr("share of the search words the memory contains"),
            "vector_weight": self.tr("how much meaning counts against words for this query"),
            "relevance": self.tr("meaning and words blended"),
            "recency": self.tr("newer memories rank a little higher"),
            "importance": self.tr("from the memory's importance"),
            "confidence": self.tr("inferred observations rank lower"),
            "time_window": self.tr("from the period the message names"),
            "newer_first": self.tr(
                "a newer statement of the same thing (it says what changed) was put first"
            ),
            "eligible_time": self.tr("chosen for being from that period"),
            "eligible_vector": self.tr("whether the similarity reached the floor"),
            "eligible_keyword": self.tr("whether the word match reached the keyword floor"),
        }

    def _history_text(self, trace: ContextTrace) -> str:
        total, kept = trace.history_total, trace.history_kept
        if total == 0:
            return self.tr("This was the first message of the conversation: no history was sent.")
        lines = []
        if kept and trace.oversized_message_indexes:
            # Not the newest run of messages: a turn too long to send sits among them.
            dropped = set(trace.dropped_message_indexes)
            lines.append(
                self.tr(
                    "Sent: {kept} of %n message(s) before yours (messages {span}), about "
                    "{tokens} tokens, exactly as stored.",
                    "",
                    total,
                ).format(
                    kept=kept,
                    span=_span([i + 1 for i in range(total) if i not in dropped]),
                    tokens=trace.history_tokens,
                )
            )
        elif kept:
            lines.append(
                self.tr(
                    "Sent: the newest {kept} of %n message(s) before yours (messages "
                    "{first}–{total}), about {tokens} tokens, exactly as stored.",
                    "",
                    total,
                ).format(
                    kept=kept, total=total, first=total - kept + 1, tokens=trace.history_tokens
                )
            )
        else:
            lines.append(self.tr("No earlier message was sent."))
        oversized = set(trace.oversized_message_indexes)
        if oversized:
            lines.append(
                self.tr(
                    "Too long to send with any context: message(s) {span}, left out on their "
                    "own. The messages before them are still sent while they fit."
                ).format(span=_span(sorted(i + 1 for i in oversized)))
            )
        older = [i for i in trace.dropped_message_indexes if i not in oversized]
        if older:
            span = _span([i + 1 for i in older])
            lines.append(
                self.tr(
                    "Left out to fit the context window: %n older turn(s), messages {span}, "
                    "about {tokens} tokens. Whole turns are left out, oldest first.",
                    "",
                    trace.dropped_turns - trace.oversized_turns,
                ).format(span=span, tokens=trace.dropped_tokens)
            )
        elif not oversized:
            lines.append(self.tr("Nothing was left out."))
        return "\n".join(lines)

    # -- reading ------------------------------------------------------------------------------

    def item_titles(self) -> list[str]:
        """Every row's title, depth first (for tests and accessibility checks)."""
        return [item.text(0) for item in self._items]

    def item_text(self, title_start: str) -> str:
        """The detail text of the first row whose title starts with ``title_start``."""
        for item in self._items:
            if item.text(0).startswith(title_start):
                return self._texts[id(item)]
        raise KeyError(title_start)

    def select(self, title_start: str) -> None:
        """Select the first row whose title starts with ``title_start``."""
        for item in self._items:
            if item.text(0).startswith(title_start):
                self.tree.setCurrentItem(item)
                return
        raise KeyError(title_start)

    def json_text(self) -> str:
        """The trace as indented JSON (what "Copy as JSON" copies)."""
        if self.trace is None:
            return ""
        return json.dumps(json.loads(self.trace.to_json()), ensure_ascii=False, indent=2)

    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.json_text())
        self._copied = True
        self.copy_button.setText(self.tr("Copied"))

    def _on_tree_current_changed(self, item: QTreeWidgetItem | None, _old: object) -> None:
        self.text.setPlainText(self._texts.get(id(item), "") if item is not None else "")


def show_context(
    parent: QWidget,
    controller: ChatController,
    message_id: int,
    *,
    usage: UsageRepository | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
) -> asyncio.Task[ContextDialog | None]:
    """Load the trace of ``message_id`` and show it in a non-modal dialog.

    With ``usage``, the dialog also shows the tokens of the reply and of its conversation,
    costed at ``prices``. The task's result is the dialog (``None`` if loading failed; the
    controller reports why).
    """

    async def load() -> ContextDialog:
        raw = await controller.repo.get_trace(message_id)
        message = await controller.repo.get_message(message_id)
        conversation = (
            await controller.repo.get_conversation(message.conversation_id)
            if message is not None
            else None
        )
        user = (
            await controller.repo.get_message(message.reply_to_id)
            if message is not None and message.reply_to_id is not None
            else None
        )
        replies = (
            await usage.conversation_replies(message.conversation_id)
            if usage is not None and message is not None
            else []
        )
        reply = message_usage(message) if message is not None else None
        trace: ContextTrace | None = None
        if raw:
            try:
                trace = ContextTrace.from_json(raw)
            except ValueError:
                trace = None
        dialog = ContextDialog(
            trace,
            temporary=conversation is not None and conversation.temporary,
            user_text=user.content if user is not None else None,
            reply_usage=(message.model, reply) if message is not None and reply else None,
            conversation_usage=replies,
            prices=prices,
            parent=parent,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    return controller.spawn(load())


def _span(indexes: list[int]) -> str:
    """Message numbers as a range ("3–9") when they run on, else listed ("1, 2, 5")."""
    if not indexes:
        return ""
    if indexes == list(range(indexes[0], indexes[-1] + 1)):
        return f"{indexes[0]}–{indexes[-1]}" if len(indexes) > 1 else str(indexes[0])
    return ", ".join(map(str, indexes))
