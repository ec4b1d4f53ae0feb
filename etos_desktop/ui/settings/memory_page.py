"""The Memory page of Settings: every long-term memory, searchable, editable and under control.

DESIGN §1 principle 5 (the user sees and controls everything), §3 (delete is real; its undo is
held in memory only until Settings closes), §5 (embedder, "All that fit" or top-K, approval) and §9 (imports are
validated and applied in one transaction).

Every memory operation goes through ``MemoryAccess`` (its worker pool): the UI thread never
waits on the disk or an embedder, and nothing here touches the engine. The editor, the import
preview and the confirmations are the app's own dialogs, opened with ``open()`` and awaited
(``ui.dialogs``); the file choosers start in the documents folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop import __version__
from etos_desktop.core.changes import Layer
from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import EtosError, StorageError
from etos_desktop.core.memory.records import DeletedMemory, Memory, MemoryKind, MemorySource
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.files import write_private_text
from etos_desktop.core.storage.windows import ListCounts
from etos_desktop.core.transfer.markdown import MarkdownLabels
from etos_desktop.ui import dialogs
from etos_desktop.ui.error_text import failure_text
from etos_desktop.ui.memory_text import kind_name, memory_error_text, source_name
from etos_desktop.ui.settings.list_page import ListPage, ListWords
from etos_desktop.ui.settings.memory_dialogs import (
    MemoryFields,
    MemoryHistoryDialog,
    choose_import,
    open_editor,
)
from etos_desktop.ui.settings.memory_models import MemoryFilterModel, MemoryTableModel
from etos_desktop.ui.settings.page import SettingEditors, form_columns, plain_label

if TYPE_CHECKING:
    from etos_desktop.core.memory.access import EmbedderInfo, EmbeddingState, MemoryAccess
    from etos_desktop.core.transfer.service import TransferService
    from etos_desktop.ui.changes_bridge import ChangesBridge


def _local_zone() -> tzinfo:
    return datetime.now(UTC).astimezone().tzinfo or UTC


class MemoryPage(ListPage[Memory]):
    """The Memory page: the memory settings, and the memory table with its actions.

    Memory actions (add, edit, archive, delete, import…) take effect at once; the settings at
    the top are saved with the dialog's Save like every other page. Deleted memories can be
    brought back with Undo until :meth:`close_page` (the Settings dialog calls it when it
    closes): the snapshots are held in memory only.

    Args:
        memory: The app's memory access (all work runs off the UI thread).
        settings: The settings store (``memory.*`` keys).
        transfer: Export and import of every memory layer (the Import and Export actions).
        clock: The current time (what counts as active).
        changes: The app's data changes: memories saved elsewhere (the chat) appear at once.
        parent: The parent widget.

    Signals:
        memories_changed(): memories were added, changed, archived, deleted or imported here.
        refreshed(): the table was reloaded from the database.
        reembed_progressed(int, int): re-embedding reached ``(done, total)``.
    """

    memories_changed = Signal()
    reembed_progressed = Signal(int, int)

    def __init__(
        self,
        memory: MemoryAccess,
        settings: SettingsStore,
        *,
        transfer: TransferService,
        clock: Clock | None = None,
        changes: ChangesBridge | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryPage")
        self._memory = memory
        self._transfer = transfer
        self._settings = settings
        self._clock: Clock = clock or SystemClock()
        self._reembed_cancel: threading.Event | None = None
        self._embedding: EmbeddingState | None = None
        self.history_dialog: MemoryHistoryDialog | None = None
        self.setting_editors = SettingEditors(settings, self.changed.emit)
        self.words = self._words()
        self._build()
        self.retranslate()
        self._update_actions()
        self.follow_changes(changes, Layer.MEMORIES)

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        self._build_settings()
        self.import_action = QAction(self)
        self.import_action.triggered.connect(self._on_import_action_triggered)
        self.import_list_action = QAction(self)
        self.import_list_action.triggered.connect(self._on_import_list_action_triggered)
        self.export_json_action = QAction(self)
        self.export_json_action.triggered.connect(self._on_export_json_action_triggered)
        self.export_markdown_action = QAction(self)
        self.export_markdown_action.triggered.connect(self._on_export_markdown_action_triggered)
        self.build_list(
            self.settings_group,
            MemoryTableModel(self._clock, self),
            MemoryFilterModel(self._clock, self),
            name="memory",
            sort_by="id",
            source=self._memory,
            filters=self._build_filters,
            lead=self._build_add_button,
            menu=[
                self.import_action,
                self.import_list_action,
                self.export_json_action,
                self.export_markdown_action,
            ],
        )

    def _build_settings(self) -> None:
        group = self.settings_group = QGroupBox(self)
        editors = self.setting_editors
        self.enabled_check = editors.check("memory.enabled", group)
        self.approval_label = QLabel(group)
        self.approval_combo = editors.combo("memory.approval", group)
        self.top_k_label = QLabel(group)
        self.top_k_spin = editors.spin("memory.retrieval_top_k", group)
        self.per_message_label = QLabel(group)
        self.per_message_combo = editors.combo("memory.per_message", group)
        self.per_message_combo.currentIndexChanged.connect(self._on_per_message_combo_changed)
        self.fit_budget_label = QLabel(group)
        self.fit_budget_spin = editors.spin("memory.all_that_fit_tokens", group, step=100)
        self.embedder_label = QLabel(group)
        self.embedder_combo = editors.combo("memory.embedder", group)
        self.strictness_label = QLabel(group)
        self.strictness_combo = editors.combo("memory.strictness", group)
        self._on_per_message_combo_changed()

        # Left: how the model may save and how memories are matched; right: how many are sent.
        columns = form_columns(
            (
                (self.approval_label, self.approval_combo),
                (self.embedder_label, self.embedder_combo),
                (self.strictness_label, self.strictness_combo),
            ),
            (
                (self.per_message_label, self.per_message_combo),
                (self.fit_budget_label, self.fit_budget_spin),
                (self.top_k_label, self.top_k_spin),
            ),
        )

        self.embedding_label = plain_label(group)
        self.embedding_label.setObjectName("embedderDescription")
        self.embedding_label.setAlignment(
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        )
        self.reembed_button = QPushButton(group)
        self.reembed_button.clicked.connect(self._on_reembed_button_clicked)
        self.reembed_progress = QProgressBar(group)
        self.reembed_progress.setMaximumWidth(140)
        self.reembed_progress.hide()
        self.reembed_cancel_button = QPushButton(group)
        self.reembed_cancel_button.clicked.connect(self.cancel_reembed)
        self.reembed_cancel_button.hide()
        embed_row = QHBoxLayout()
        embed_row.addWidget(self.embedding_label, 1)
        embed_row.addWidget(self.reembed_progress)
        embed_row.addWidget(self.reembed_cancel_button)
        embed_row.addWidget(self.reembed_button)

        box = QVBoxLayout(group)
        box.setContentsMargins(8, 6, 8, 6)
        box.setSpacing(6)
        box.addWidget(self.enabled_check)
        box.addLayout(columns)
        box.addLayout(embed_row)

    def _build_filters(self) -> list[QWidget]:
        self.kind_filter = self.filter_combo([None, *(kind.value for kind in MemoryKind)])
        self.status_filter = self.filter_combo(["all", "active", "inactive"])
        self.source_filter = self.filter_combo([None, *(source.value for source in MemorySource)])
        for combo in (self.kind_filter, self.status_filter, self.source_filter):
            combo.currentIndexChanged.connect(self._on_filter_changed)
        return [self.kind_filter, self.status_filter, self.source_filter]

    def _build_add_button(self) -> list[QAbstractButton]:
        self.add_button = self.action_button(self._on_add_button_clicked)
        return [self.add_button]

    def _words(self) -> ListWords:
        return ListWords(
            count=self._count_text,
            delete_question=self._delete_question,
            nothing_to_delete=lambda: self.tr("There are no memories to delete."),
            deleted=lambda count: self.tr(
                "Deleted %n memories. Undo is possible until you close Settings.", "", count
            ),
            archived=lambda count: self.tr("Archived %n memories.", "", count),
            brought_back=lambda count: self.tr("Brought back %n memories.", "", count),
            not_loaded=lambda: self.tr("The list of memories was not loaded."),
            not_saved=lambda memory_id: self.tr("Memory #{id} was not saved.").format(id=memory_id),
            not_archived=lambda: self.tr("The memories were not archived."),
            not_restored=lambda: self.tr("The memories were not restored."),
            not_deleted=lambda: self.tr("The memories were not deleted."),
            not_brought_back=lambda: self.tr("The deleted memories were not restored."),
        )

    def _count_text(self, counts: ListCounts) -> str:
        return (
            self.tr("%n memories", "", counts.total) + " · " + self.tr("%n active", "", counts.lead)
        )

    def _delete_question(self, ids: Sequence[int], every: bool) -> tuple[str, str]:
        if every:
            title = self.tr("Delete all memories")
            text = self.tr(
                "Delete all %n memories, active and archived? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.\n\nYou can undo this only until you close Settings.",
                "",
                len(ids),
            )
        elif len(ids) == 1:
            title = self.tr("Delete memories")
            text = self.tr(
                "Delete memory #{id}? It is removed from memory and from the records of what was sent. Conversations keep their messages; backups keep it until they rotate.\n\nYou can undo this only until you close Settings."
            ).format(id=ids[0])
        else:
            title = self.tr("Delete memories")
            text = self.tr(
                "Delete %n selected memories? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.\n\nYou can undo this only until you close Settings.",
                "",
                len(ids),
            )
        return title, text

    @override
    def retranslate(self) -> None:
        self.settings_group.setTitle(self.tr("Settings"))
        self.setting_editors.retranslate()
        self.enabled_check.setText(self.tr("Use long-term memory in conversations"))
        self.approval_label.setText(self.tr("When the model saves"))
        self._name_items(
            self.approval_combo,
            {
                "ask": self.tr("Ask every time"),
                "notify": self.tr("Save and notify"),
                "never": self.tr("Never save"),
            },
        )
        self.embedder_label.setText(self.tr("Matching"))
        self._name_items(
            self.embedder_combo,
            {
                "auto": self.tr("Automatic"),
                "builtin": self.tr("Built-in multilingual model"),
                "keywords": self.tr("Keywords only"),
            },
        )
        self.strictness_label.setText(self.tr("Relevance"))
        self._name_items(
            self.strictness_combo,
            {
                "strict": self.tr("Strict — fewer, surer"),
                "balanced": self.tr("Balanced"),
                "broad": self.tr("Broad — more, weaker"),
            },
        )
        self.per_message_label.setText(self.tr("Memories per message"))
        self._name_items(
            self.per_message_combo,
            {
                "auto": self.tr("Automatic — all that fit, else the best matches"),
                "fixed": self.tr("A fixed number of best matches"),
            },
        )
        self.per_message_combo.setAccessibleName(self.tr("Memories per message"))
        self.fit_budget_label.setText(self.tr("All that fit, up to"))
        self.fit_budget_spin.setSuffix(self.tr(" tokens"))
        self.fit_budget_spin.setAccessibleName(self.tr("Token budget for sending all memories"))
        self.top_k_label.setText(self.tr("Best matches, at most"))
        self.top_k_spin.setAccessibleName(self.tr("Most memories chosen by relevance"))
        self.reembed_button.setText(self.tr("Re-embed all"))
        self.reembed_button.setToolTip(
            self.tr("Give every memory a vector from the model in use, in the background.")
        )
        self.reembed_cancel_button.setText(self.tr("Cancel"))
        self.search_edit.setPlaceholderText(self.tr("Filter by text, tag or #number"))
        self.search_edit.setAccessibleName(self.tr("Filter memories"))
        self.table.setAccessibleName(self.tr("Memories"))
        self.kind_filter.setItemText(0, self.tr("All kinds"))
        for index in range(1, self.kind_filter.count()):
            self.kind_filter.setItemText(index, kind_name(str(self.kind_filter.itemData(index))))
        for index, text in enumerate(
            (self.tr("Active and archived"), self.tr("Active"), self.tr("Archived or ended"))
        ):
            self.status_filter.setItemText(index, text)
        self.source_filter.setItemText(0, self.tr("All sources"))
        for index in range(1, self.source_filter.count()):
            self.source_filter.setItemText(
                index, source_name(str(self.source_filter.itemData(index)))
            )
        self.add_button.setText(self.tr("Add…"))
        self.import_action.setText(self.tr("Import from JSON…"))
        self.import_list_action.setText(self.tr("Import a memory list (ChatGPT, Claude, text)…"))
        self.import_list_action.setToolTip(
            self.tr(
                "A list of facts, one per line or bullet: what ChatGPT or Claude gives when "
                "asked to list everything it remembers about you, or a Markdown or text file."
            )
        )
        self.export_json_action.setText(self.tr("Export as JSON…"))
        self.export_markdown_action.setText(self.tr("Export as Markdown…"))
        self.clear_action.setText(self.tr("Delete all memories…"))
        self._render_embedding()
        self.retranslate_list()

    @staticmethod
    def _name_items(combo: QComboBox, names: dict[str, str]) -> None:
        for index in range(combo.count()):
            value = str(combo.itemData(index))
            combo.setItemText(index, names.get(value, value))

    # -- settings (saved with the dialog's Save) ----------------------------------------------

    @override
    def is_modified(self) -> bool:
        return self.setting_editors.is_modified()

    @override
    def apply(self) -> None:
        self.setting_editors.apply()

    def _on_per_message_combo_changed(self, *_args: object) -> None:
        # The budget matters only to Automatic; the number of best matches to both modes
        # (Automatic falls back to it when the memories do not fit).
        self.fit_budget_spin.setEnabled(self.per_message_combo.currentData() == "auto")

    # -- public API -----------------------------------------------------------------------------

    def close_page(self) -> None:
        """Settings is closing: forget the deleted memories held for Undo, stop the work.

        Work already handed to a worker finishes there (an import stays all or nothing);
        re-embedding stops after its batch.
        """
        if self._reembed_cancel is not None:
            self._reembed_cancel.set()
        super().close_page()

    async def refresh(self) -> None:
        """Read the list again (its first rows, as far as it was scrolled) and the embedder state.

        The selection and the scroll position are kept. Only windows of the memories are read
        (``MemoryAccess.window``), never all of them.
        """
        await self.reload_list()
        state = await self._memory.embedding_state()
        if not self._alive:
            return
        self._embedding = state
        self._render_embedding()
        self._update_actions()
        self.refreshed.emit()

    # -- slots that start work ----------------------------------------------------------------

    def _on_add_button_clicked(self) -> None:
        self.start(self._add(), self.tr("The memory was not added."))

    def _on_history_button_clicked(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.spawn(self.show_history(ids[0]), self.tr("The history was not shown."))

    def _on_export_json_action_triggered(self) -> None:
        self.start(self._export("json"), self.tr("The memories were not exported."))

    def _on_export_markdown_action_triggered(self) -> None:
        self.start(self._export("markdown"), self.tr("The memories were not exported."))

    def _on_import_action_triggered(self) -> None:
        self.start(
            self._import(self.tr("Memory exports (*.json)")),
            self.tr("The memories were not imported."),
        )

    def _on_import_list_action_triggered(self) -> None:
        self.start(
            self._import(self.tr("Lists of facts (*.txt *.md *.markdown);;All files (*)")),
            self.tr("The memories were not imported."),
        )

    def _on_reembed_button_clicked(self) -> None:
        if self._reembed_cancel is None:
            self.spawn(self.reembed_all(), self.tr("Re-embedding did not finish."))

    def _on_filter_changed(self, _index: int) -> None:
        self.proxy.set_filters(
            kind=self.kind_filter.currentData(),
            status=str(self.status_filter.currentData()),
            source=self.source_filter.currentData(),
        )
        self._render_count()
        self._update_actions()

    # -- the work -------------------------------------------------------------------------------

    @override
    def failure_message(self, failure: str, error: BaseException) -> str:
        if isinstance(error, EtosError):
            return f"{failure} {memory_error_text(error)}".strip()
        return failure_text(failure, error)

    async def _add(self) -> None:
        fields = await open_editor(
            self, MemoryFields(), self.tr("Add a memory"), max_chars=self._memory.max_content_chars
        )
        if fields is None:
            return
        result = await self._memory.save(
            fields.content,
            fields.kind,
            source=MemorySource.MANUAL,
            importance=fields.importance,
            tags=fields.tags,
            trigger_context=fields.trigger_context,
        )
        await self._after_change([result.id])
        if result.merged:
            self.set_status(
                "ok",
                lambda: self.tr("Merged into memory #{id}, which said the same.").format(
                    id=result.id
                ),
            )
        else:
            self.set_status("ok", lambda: self.tr("Saved as #{id}.").format(id=result.id))

    async def _edit(self, memory_id: int) -> None:
        current = await self._memory.get(memory_id)
        if current is None:
            await self.refresh()
            self.set_status("error", lambda: self.tr("That memory no longer exists."))
            return
        title = self.tr("Edit memory #{id}").format(id=memory_id)
        fields = await open_editor(
            self, MemoryFields.of(current), title, max_chars=self._memory.max_content_chars
        )
        if fields is None or fields == MemoryFields.of(current):
            return
        await self._memory.edit(
            memory_id,
            text=fields.content,
            kind=fields.kind,
            importance=fields.importance,
            tags=fields.tags,
            trigger_context=fields.trigger_context,
        )
        await self._after_change([memory_id])
        self.set_status("ok", lambda: self.tr("Memory #{id} saved.").format(id=memory_id))

    def _is_active(self, memory: Memory) -> bool:
        return memory.is_active(self._clock.now())

    async def _set_archived(self, ids: list[int], archived: bool) -> None:
        # One transaction for all of them (10,000 after Select all take a second, not minutes).
        if archived:
            done = len(await self._memory.archive_many(ids))
        else:
            done = len(await self._memory.restore_many(ids))
        await self._after_change(ids)
        if archived:
            self.set_status("ok", lambda: self.tr("Archived %n memories.", "", done))
        else:
            self.set_status("ok", lambda: self.tr("Restored %n memories.", "", done))

    async def _unarchive(self, ids: list[int]) -> int:
        # Only the archive is undone: a memory that was to expire still expires.
        done = len(await self._memory.restore_many(ids, archive_only=True))
        await self._after_change(ids)
        self.set_status("ok", lambda: self.tr("Restored %n memories.", "", done))
        return done

    async def _delete_records(self, ids: list[int]) -> list[DeletedMemory]:
        if len(ids) > 1:
            self.set_status("", lambda: self.tr("Deleting %n memories…", "", len(ids)))
        return await self._memory.delete_many(ids)

    async def _undelete_records(self, batch: Sequence[DeletedMemory]) -> list[int]:
        # One transaction for the whole batch (10,000 memories come back in seconds).
        return [memory.id for memory in await self._memory.undo_delete_many(batch)]

    def _records_changed(self) -> None:
        self.memories_changed.emit()

    async def show_history(self, memory_id: int) -> None:
        """Show one memory's history in the history dialog (non-modal)."""
        revisions = await self._memory.history(memory_id)
        memory = await self._memory.get(memory_id)
        if not self._alive:
            return
        if self.history_dialog is None:
            self.history_dialog = MemoryHistoryDialog(self)
        self.history_dialog.set_history(memory, revisions)
        self.history_dialog.show()
        self.history_dialog.raise_()

    async def _export(self, kind: str) -> None:
        stamp = self._clock.now().astimezone().strftime("%Y-%m-%d")
        if kind == "json":
            caption = self.tr("Export memories as JSON")
            name_filter = self.tr("JSON files (*.json)")
            suggested = f"etos-memories-{stamp}.json"
        else:
            caption = self.tr("Export memories as Markdown")
            name_filter = self.tr("Markdown files (*.md)")
            suggested = f"etos-memories-{stamp}.md"
        path = await dialogs.choose_save_path(self, caption, name_filter, suggested)
        if not path:
            return
        now = self._clock.now()
        if kind == "json":
            text, count = await self._transfer.export_json(now=now, app_version=__version__)
        else:
            text, count = await self._transfer.export_markdown(
                now=now, labels=self._markdown_labels(), tz=_local_zone()
            )
        try:
            await asyncio.to_thread(write_private_text, Path(path), text)
        except StorageError as exc:
            self.set_status(
                "error",
                lambda e=exc: failure_text(self.tr("The memories were not exported."), e),
            )
            return
        self.set_status(
            "ok",
            lambda: self.tr("Exported %n memories to {path}.", "", count).format(path=path),
        )

    def _markdown_labels(self) -> MarkdownLabels:
        return MarkdownLabels(
            title=self.tr("Memories"),
            exported=self.tr("Exported {date} · {count} memories"),
            kinds={kind.value: self._kind_heading(kind.value) for kind in MemoryKind},
            archived=self.tr("Archived and ended"),
            empty=self.tr("No memories."),
            importance=self.tr("importance"),
            confidence=self.tr("confidence"),
            tags=self.tr("tags"),
            trigger=self.tr("recall when"),
            superseded_by=self.tr("superseded by #{id}"),
            expired=self.tr("expired"),
            summaries=self.tr("Session summaries"),
            untitled=self.tr("Untitled conversation"),
            earlier_summary=self.tr("earlier version"),
            archived_summary=self.tr("archived"),
            profile=self.tr("User profile"),
        )

    def _kind_heading(self, kind: str) -> str:
        return {
            "fact": self.tr("Facts"),
            "preference": self.tr("Preferences"),
            "instruction": self.tr("Instructions"),
            "episode": self.tr("Episodes"),
            "insight": self.tr("Insights"),
        }[kind]

    async def _import(self, name_filter: str) -> None:
        # Either chooser takes either kind of file: what it is, is told by its content.
        path = await dialogs.choose_open_path(self, self.tr("Import memories"), name_filter)
        if not path:
            return
        now = self._clock.now()
        try:
            preview = await self._transfer.preview_import_file(Path(path), now=now)
        except OSError as exc:
            self.set_status(
                "error",
                lambda e=exc: self.tr("The file could not be read: {error}").format(
                    error=e.strerror or e
                ),
            )
            return
        if not preview.has_changes and not preview.invalid:
            self.set_status(
                "ok",
                lambda: self.tr(
                    "Nothing to import: all %n memories are here already.",
                    "",
                    len(preview.unchanged),
                ),
            )
            return
        chosen = await choose_import(self, preview, now)
        if chosen is None or not chosen.has_changes or chosen.over_limit:
            return
        preview = chosen
        result = await self._transfer.apply_import(preview)
        # Undoing an earlier delete now would bring back what the import may have just put
        # back: duplicates that take slots in what is sent (issue 19). The Undo is withdrawn.
        withdrawn = bool(self._undo) and bool(result.added or result.updated)
        if withdrawn:
            self._undo.clear()
            self._render_undo()
        await self._after_change([*result.added, *result.updated])
        counts = {
            "added": len(result.added),
            "updated": len(result.updated),
            "skipped": len(preview.invalid),
        }
        self.set_status(
            "ok",
            (
                lambda: self.tr(
                    "Imported: {added} added, {updated} updated, {skipped} skipped. The earlier "
                    "delete can no longer be undone: the import changed the memories."
                ).format(**counts)
            )
            if withdrawn
            else (
                lambda: self.tr(
                    "Imported: {added} added, {updated} updated, {skipped} skipped."
                ).format(**counts)
            ),
        )

    async def reembed_all(self) -> None:
        """Give every memory a vector from the active embedder, with progress and Cancel."""
        if self._embedding is None or self._embedding.embedder is None:
            return
        if self._reembed_cancel is not None:
            return
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        self._reembed_cancel = cancel

        def progress(done: int, total: int) -> None:  # on a worker thread
            loop.call_soon_threadsafe(self._on_reembed_progress, done, total)

        self.reembed_progress.setRange(0, 0)
        self.reembed_progress.show()
        self.reembed_cancel_button.show()
        self.reembed_cancel_button.setEnabled(True)
        self.reembed_button.setEnabled(False)
        self.set_status("", lambda: self.tr("Embedding memories…"))
        try:
            done = await self._memory.reembed(progress, cancel)
        finally:
            self._reembed_cancel = None
            if self._alive:
                self.reembed_progress.hide()
                self.reembed_cancel_button.hide()
                self._update_actions()
        if not self._alive:
            return
        if cancel.is_set():
            self.set_status(
                "warning",
                lambda: self.tr("Re-embedding cancelled after %n memories.", "", done),
            )
        elif done == 0:
            self.set_status("ok", lambda: self.tr("Every memory has a vector already."))
        else:
            self.set_status("ok", lambda: self.tr("Embedded %n memories.", "", done))
        self._embedding = await self._memory.embedding_state()
        self._render_embedding()

    def cancel_reembed(self) -> None:
        """Stop re-embedding after the current batch (what was done is kept)."""
        if self._reembed_cancel is not None:
            self._reembed_cancel.set()
            self.reembed_cancel_button.setEnabled(False)
            self.set_status("", lambda: self.tr("Cancelling…"))

    def _on_reembed_progress(self, done: int, total: int) -> None:
        if not self._alive:
            return
        with contextlib.suppress(RuntimeError):  # the page was deleted meanwhile
            self.reembed_progress.setRange(0, max(total, 1))
            self.reembed_progress.setValue(done)
            self.reembed_progress.setFormat(f"{done} / {total}")
            self.reembed_progressed.emit(done, total)

    # -- rendering ------------------------------------------------------------------------------

    def _update_actions(self) -> None:
        super()._update_actions()
        idle = not self._busy
        self.add_button.setEnabled(idle)
        self.history_button.setEnabled(self.selected_count() == 1)
        for action in (
            self.import_action,
            self.import_list_action,
            self.export_json_action,
            self.export_markdown_action,
        ):
            action.setEnabled(idle)
        has_embedder = self._embedding is not None and self._embedding.embedder is not None
        self.reembed_button.setEnabled(self._reembed_cancel is None and has_embedder)

    def embedder_text(self, info: EmbedderInfo | None) -> str:
        """Words for the embedder in use (its key is jargon)."""
        if info is None:
            return self.tr("Keywords only: no model for matching by meaning is loaded.")
        if info.kind == "builtin":
            return self.tr("Built-in model (multilingual), {dimension} dimensions").format(
                dimension=info.dimension
            )
        if info.kind == "endpoint":
            return self.tr("“{model}” on {host}, {dimension} dimensions").format(
                model=info.model, host=info.host, dimension=info.dimension
            )
        return self.tr("Model “{model}”, {dimension} dimensions").format(
            model=info.model, dimension=info.dimension
        )

    def _render_embedding(self) -> None:
        state = self._embedding
        if state is None:
            self.embedding_label.setText(self.tr("Matching by meaning: checking…"))
            return
        text = self.tr("Matching by meaning: {embedder}").format(
            embedder=self.embedder_text(state.embedder)
        )
        if state.embedder is None:
            text = self.embedder_text(None)
        else:
            text += " · " + self.tr("{done} of {total} memories indexed").format(
                done=state.embedded, total=state.total
            )
        self.embedding_label.setText(text)
