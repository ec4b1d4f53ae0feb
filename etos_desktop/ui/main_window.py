"""The main window: menu, sidebar, chat panel and status bar, wired to the chat controller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QMainWindow,
    QSplitter,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.errors import EtosError
from etos_desktop.core.settings import paths
from etos_desktop.ui import dialogs
from etos_desktop.ui.chat_panel import ChatPanel
from etos_desktop.ui.conversation_list import ConversationListPanel
from etos_desktop.ui.error_text import describe, failure_text
from etos_desktop.ui.message_search import MessageSearchUi
from etos_desktop.ui.persona_dialog import PersonaOverrideDialog
from etos_desktop.ui.shortcuts import key_sequences
from etos_desktop.ui.task_set import TaskSet

if TYPE_CHECKING:
    import asyncio

    from etos_desktop.core.chat.events import MemorySaved
    from etos_desktop.core.memory.tools import SaveRequest
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow
    from etos_desktop.ui.chat_controller import ChatController
    from etos_desktop.ui.chat_memory_dialogs import ApprovalDialog, MemoryTextDialog
    from etos_desktop.ui.task_set import Reporter


@dataclass
class _MemoryAction:
    """A memory action started from a dialog or a note, and where its outcome is shown.

    Args:
        kind: "remember" (the Remember… editor), "edit" (a note's editor) or "undo".
        dialog: The editor that started it (remember, edit).
        message_id: The message the Remember… action came from.
        memory_id: The memory edited or undone.
        text: The new text of an edit.
    """

    kind: str
    dialog: MemoryTextDialog | None = None
    message_id: int | None = None
    memory_id: int | None = None
    text: str = ""
    failed: bool = False


TextFactory = Callable[[], str]

#: The narrowest the status bar's notice gets (it takes 2/5 of the window).
_NOTICE_MIN_WIDTH = 160


def _factory(text: str | TextFactory) -> TextFactory:
    return text if callable(text) else (lambda: text)


def is_memory_error(error: EtosError) -> bool:
    """Whether ``error`` is about memory (a write check, memory off, a temporary conversation)."""
    if error.code.startswith("memory_"):
        return True
    reason = error.params.get("reason")
    return error.code == "invalid_input" and (
        reason in ("memory_off", "temporary") or (reason == "empty" and "memory" in error.detail)
    )


class MainWindow(QMainWindow):
    """The application's window.

    Signals:
        settings_requested(str): open Settings at a page ("" = the first page).
        context_requested(int): show what was sent for an assistant message.
        closing(): the window is closing (the app shuts down its services).
    """

    settings_requested = Signal(str)
    context_requested = Signal(int)
    closing = Signal()

    def __init__(
        self,
        *,
        qsettings_path: Path | None = None,
        data_dir: Path | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self._qsettings_path = qsettings_path
        self.data_dir = data_dir
        self._notice: tuple[TextFactory, TextFactory] | None = None
        self._tasks = TaskSet()
        self._counting: Any = None
        self.controller: ChatController | None = None
        self._ready = False
        # Whether the user is being asked about quitting with a message still waiting to be
        # sent, and whether they said to quit.
        self._asking_quit = False
        self._quit_confirmed = False
        # Memory actions in flight, by the controller task running them. A save is reported
        # through memory_saved from inside that task, so asyncio.current_task() in the slot says
        # whose outcome it is; a failure goes to the action's own reporter.
        self._memory_actions: dict[asyncio.Task[Any], _MemoryAction] = {}
        self.approval_dialogs: list[ApprovalDialog] = []
        self.sidebar = ConversationListPanel(self)
        self.chat = ChatPanel(parent=self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.chat)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 740])
        self.setCentralWidget(self.splitter)
        self.message_search = MessageSearchUi(self, self.chat)
        self.provider_label = QLabel(self)
        self.notice_label = QLabel(self)
        self.notice_label.setObjectName("noticeLabel")
        self.statusBar().addPermanentWidget(self.notice_label)
        self.statusBar().addPermanentWidget(self.provider_label)
        self._build_menus()
        self.retranslate()
        self.resize(1000, 700)
        self._restore_geometry()
        self.set_ready(False)

    # -- menus --------------------------------------------------------------------------------

    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.file_menu = bar.addMenu("")
        self.conversation_menu = bar.addMenu("")
        self.help_menu = bar.addMenu("")
        self.new_action = QAction(self)
        self.new_action.setShortcuts(key_sequences("new"))
        self.new_temp_action = QAction(self)
        self.new_temp_action.setShortcuts(key_sequences("new_temporary"))
        self.export_md_action = QAction(self)
        self.export_json_action = QAction(self)
        self.settings_action = QAction(self)
        self.settings_action.setShortcuts(key_sequences("settings"))
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quit_action = QAction(self)
        self.quit_action.setShortcuts(key_sequences("quit"))
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        for action in (self.new_action, self.new_temp_action):
            self.file_menu.addAction(action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.export_md_action)
        self.file_menu.addAction(self.export_json_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.settings_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)

        self.rename_action = QAction(self)
        self.rename_action.setShortcuts(key_sequences("rename"))
        self.pin_action = QAction(self)
        self.archive_action = QAction(self)
        self.delete_action = QAction(self)
        self.persona_action = QAction(self)
        self.stop_action = QAction(self)
        self.stop_action.setShortcuts(key_sequences("stop"))
        self.search_action = QAction(self)
        self.search_action.setShortcuts(key_sequences("search"))
        self.search_messages_action = QAction(self)
        self.search_messages_action.setShortcuts(key_sequences("search_messages"))
        self.find_action = QAction(self)
        self.find_action.setShortcuts(key_sequences("find"))
        self.focus_composer_action = QAction(self)
        self.focus_composer_action.setShortcuts(key_sequences("focus_composer"))
        self.regenerate_action = QAction(self)
        self.regenerate_action.setShortcuts(key_sequences("regenerate"))
        self.copy_reply_action = QAction(self)
        self.copy_reply_action.setShortcuts(key_sequences("copy_reply"))
        for action in (
            self.rename_action,
            self.pin_action,
            self.archive_action,
            self.delete_action,
            self.persona_action,
        ):
            self.conversation_menu.addAction(action)
        self.conversation_menu.addSeparator()
        for action in (
            self.search_action,
            self.search_messages_action,
            self.find_action,
            self.focus_composer_action,
            self.regenerate_action,
            self.copy_reply_action,
            self.stop_action,
        ):
            self.conversation_menu.addAction(action)

        self.shortcuts_action = QAction(self)
        self.shortcuts_action.setShortcuts(key_sequences("shortcuts"))
        self.about_action = QAction(self)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.help_menu.addAction(self.shortcuts_action)
        self.help_menu.addSeparator()
        self.help_menu.addAction(self.about_action)

        self.settings_action.triggered.connect(lambda: self.settings_requested.emit(""))
        self.quit_action.triggered.connect(self.close)
        self.about_action.triggered.connect(self.show_about)
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        self.search_action.triggered.connect(self._on_search_action)
        self.search_messages_action.triggered.connect(self.message_search.open_search)
        self.find_action.triggered.connect(self.message_search.open_find)
        self.focus_composer_action.triggered.connect(self.chat.focus_composer)
        self.regenerate_action.triggered.connect(self._on_regenerate_action)
        self.copy_reply_action.triggered.connect(self._on_copy_reply_action)
        self.chat.settings_requested.connect(lambda: self.settings_requested.emit("providers"))
        self.chat.settings_page_requested.connect(self.settings_requested)
        self.chat.context_requested.connect(self.context_requested)

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setWindowTitle(self.tr("ETOS Desktop"))
        self.file_menu.setTitle(self.tr("&File"))
        self.conversation_menu.setTitle(self.tr("&Conversation"))
        self.help_menu.setTitle(self.tr("&Help"))
        self.new_action.setText(self.tr("&New conversation"))
        self.new_temp_action.setText(self.tr("New &temporary conversation"))
        self.export_md_action.setText(self.tr("Export as &Markdown…"))
        self.export_json_action.setText(self.tr("Export as &JSON…"))
        self.settings_action.setText(self.tr("&Settings…"))
        self.quit_action.setText(self.tr("&Quit"))
        self.rename_action.setText(self.tr("&Rename…"))
        self.persona_action.setText(self.tr("P&ersona for this conversation…"))
        self.pin_action.setText(self.tr("&Pin / unpin"))
        self.archive_action.setText(self.tr("&Archive"))
        self.delete_action.setText(self.tr("&Delete…"))
        self.stop_action.setText(self.tr("&Stop reply"))
        self.search_action.setText(self.tr("Searc&h conversations"))
        self.search_messages_action.setText(self.tr("Search all &messages…"))
        self.find_action.setText(self.tr("&Find in this conversation…"))
        self.focus_composer_action.setText(self.tr("&Write a message"))
        self.regenerate_action.setText(self.tr("Re&generate last reply"))
        self.copy_reply_action.setText(self.tr("&Copy last reply"))
        self.shortcuts_action.setText(self.tr("&Keyboard shortcuts"))
        self.about_action.setText(self.tr("&About ETOS Desktop"))
        self._render_notice()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def show_about(self) -> QDialog:
        """Help → About: version, data folder, the bundled parts' licences (non-modal)."""
        from etos_desktop.ui.about import AboutDialog

        dialog = AboutDialog(self.data_dir, parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_shortcuts(self) -> QDialog:
        """Help → Keyboard shortcuts (non-modal)."""
        from etos_desktop.ui.shortcuts import ShortcutsDialog

        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def _on_search_action(self) -> None:
        self.sidebar.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.sidebar.search.selectAll()

    def _on_regenerate_action(self) -> None:
        if self.controller is not None:
            self.chat.regenerate_last()

    def _on_copy_reply_action(self) -> None:
        if self.chat.copy_last_reply():
            self.statusBar().showMessage(self.tr("The last reply was copied."), 4000)

    def _on_stop_action(self) -> None:
        # Esc: stop a reply; without one, leave the message being edited.
        if self.controller is not None and self.controller.busy:
            self.controller.stop()
        elif self.chat.editing():
            self.chat.cancel_edit()

    # -- state --------------------------------------------------------------------------------

    def set_ready(self, ready: bool) -> None:
        """Enable the actions that need the database and providers (off while starting).

        The composer is never off: what is typed before the services are up is kept, and a
        message sent then waits, shown as queued, until this is called with ``True``.
        """
        self._ready = ready
        # The provider and model pickers have nothing to offer before the providers are read.
        for widget in (self.sidebar, self.chat.provider_combo, self.chat.model_combo):
            widget.setEnabled(ready)
        for action in (self.new_action, self.new_temp_action):
            action.setEnabled(ready)
        self._update_conversation_actions()
        if ready:
            self.chat.set_busy(False)
            self.statusBar().clearMessage()
        else:
            self.statusBar().showMessage(self.tr("Starting…"))
        self.chat.set_starting(not ready)

    def start_failed(self) -> None:
        """The services did not start: nothing can be sent; what was typed stays to be copied."""
        self.chat.discard_queued()
        self.chat.composer.setReadOnly(True)
        self.chat.send_button.setEnabled(False)

    def set_provider_text(self, text: str) -> None:
        """Show which provider and model the chat uses (the status bar's label)."""
        self.provider_label.setText(text)

    def set_notice(self, text: str | TextFactory, tooltip: str | TextFactory = "") -> None:
        """Show a lasting notice in the status bar (functions are called again on a new language)."""
        self._notice = (_factory(text), _factory(tooltip))
        self._render_notice()

    def recovered_replies_text(self, count: int) -> str:
        """The notice that replies cut off by the last exit were kept."""
        return self.tr("%n reply(ies) cut off by the last exit were kept as interrupted", "", count)

    def _render_notice(self) -> None:
        if self._notice is None:
            return
        full = self._notice[0]()
        # At most 2/5 of the window, cut in the middle (the path's start and its end stay):
        # a long notice left no room for the status bar's messages (issue 19). All of it is
        # in the tooltip.
        width = max(_NOTICE_MIN_WIDTH, self.width() * 2 // 5)
        self.notice_label.setMaximumWidth(width)
        metrics = self.notice_label.fontMetrics()
        self.notice_label.setText(metrics.elidedText(full, Qt.TextElideMode.ElideMiddle, width))
        self.notice_label.setToolTip(self._notice[1]() or full)

    @override
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._render_notice()

    # -- wiring -------------------------------------------------------------------------------

    def attach(self, controller: ChatController) -> None:
        """Connect the widgets to the controller (done once the services are up)."""
        self.controller = controller
        c = controller
        side = self.sidebar
        chat = self.chat
        c.conversations_loaded.connect(self._on_controller_conversations_loaded)
        c.conversations_appended.connect(self.sidebar.append_conversations)
        c.conversation_previews_loaded.connect(self.sidebar.set_previews)
        c.conversation_loading.connect(lambda _cid: chat.show_loading())
        c.conversation_opened.connect(self._on_controller_conversation_opened)
        c.older_messages_loaded.connect(
            lambda rows, more: chat.prepend_messages(rows, has_more=more)
        )
        c.conversation_changed.connect(self._on_controller_conversation_changed)
        c.conversation_closed.connect(lambda: chat.show_conversation(None, [], has_more=False))
        c.messages_hidden.connect(chat.drop_from)
        c.user_message_saved.connect(chat.add_user_message)
        c.reply_started.connect(chat.start_reply)
        c.reply_delta.connect(chat.update_reply)
        c.reply_retrying.connect(chat.show_retry)
        c.reply_finished.connect(chat.finish_reply)
        c.reply_failed.connect(chat.fail_reply)
        c.busy_changed.connect(chat.set_busy)
        c.versions_changed.connect(chat.set_versions)
        c.task_failed.connect(self._on_controller_task_failed)
        c.memory_saved.connect(self._on_controller_memory_saved)
        c.saved_memories_loaded.connect(self._on_controller_saved_memories_loaded)
        c.approval_requested.connect(self._on_controller_approval_requested)
        c.message_room_changed.connect(chat.set_message_room)
        c.attachments_loaded.connect(chat.show_attachments)
        chat.attachment_reader = c.read_attachment

        side.new_requested.connect(lambda: self._new_conversation(temporary=False))
        side.open_requested.connect(c.open_conversation)
        side.more_requested.connect(c.load_more_conversations)
        side.search_changed.connect(self._on_sidebar_search_changed)
        side.show_archived_changed.connect(self._on_sidebar_archived_changed)
        side.rename_requested.connect(lambda cid, title: c.update_conversation(cid, title=title))
        side.pin_requested.connect(lambda cid, pinned: c.update_conversation(cid, pinned=pinned))
        side.archive_requested.connect(
            lambda cid, archived: c.update_conversation(cid, archived=archived)
        )
        side.delete_requested.connect(c.delete_conversation)
        side.export_requested.connect(self._on_sidebar_export_requested)

        chat.send_requested.connect(self._on_chat_send_requested)
        chat.send_with_attachments_requested.connect(c.send)
        chat.remember_requested.connect(self._on_chat_remember_requested)
        chat.memory_edit_requested.connect(self._on_chat_memory_edit_requested)
        chat.memory_undo_requested.connect(self._on_chat_memory_undo_requested)
        chat.edit_resend_requested.connect(c.edit_and_resend)
        chat.stop_requested.connect(c.stop)
        chat.regenerate_requested.connect(c.regenerate)
        chat.version_requested.connect(c.switch_version)
        chat.delete_message_requested.connect(c.delete_message)
        chat.load_older_requested.connect(c.load_older)
        chat.model_change_requested.connect(self._on_chat_model_change)
        chat.temporary_toggled.connect(self._on_chat_temporary_toggled)

        self.new_action.triggered.connect(lambda: self._new_conversation(temporary=False))
        self.new_temp_action.triggered.connect(lambda: self._new_conversation(temporary=True))
        self.export_md_action.triggered.connect(lambda: self._export_current("markdown"))
        self.export_json_action.triggered.connect(lambda: self._export_current("json"))
        self.rename_action.triggered.connect(self._on_rename_action)
        self.persona_action.triggered.connect(self.edit_persona_override)
        self.pin_action.triggered.connect(self._on_pin_action)
        self.archive_action.triggered.connect(self._on_archive_action)
        self.delete_action.triggered.connect(self._on_delete_action)
        self.stop_action.triggered.connect(self._on_stop_action)
        # The new conversation shown since the first frame may have been made temporary before
        # the services were up; a message queued then is sent as what the window shows.
        c.update_draft(temporary=chat.temporary.isChecked())

    def _current(self) -> ConversationRow | None:
        return self.controller.current if self.controller is not None else None

    def _new_conversation(self, *, temporary: bool) -> None:
        if self.controller is not None:
            self.controller.new_conversation(temporary=temporary)
            self.chat.composer.setFocus()

    def _on_controller_conversations_loaded(self, rows: list[ConversationRow]) -> None:
        current = self._current()
        self.sidebar.set_conversations(rows, current.id if current is not None else None)

    def _on_controller_conversation_opened(
        self, conversation: ConversationRow | None, rows: list[MessageRow], has_more: bool
    ) -> None:
        self.chat.show_conversation(conversation, rows, has_more=has_more)
        if conversation is None:
            draft = self.controller.draft if self.controller is not None else None
            self.chat.set_draft(temporary=draft.temporary if draft is not None else False)
        if not rows:
            self.refresh_memory_count()
        self.sidebar.select(conversation.id if conversation is not None else None)
        self._update_conversation_actions()

    def _on_controller_conversation_changed(self, conversation: ConversationRow) -> None:
        self.chat.set_conversation_header(conversation)
        self._update_conversation_actions()

    def _update_conversation_actions(self) -> None:
        """Actions on a conversation need one that exists (a new one has no row yet)."""
        exists = self._current() is not None
        for action in (
            self.export_md_action,
            self.export_json_action,
            self.rename_action,
            self.pin_action,
            self.archive_action,
            self.delete_action,
            self.persona_action,
        ):
            action.setEnabled(exists and self._ready)

    def _on_controller_task_failed(self, what: str, error: BaseException) -> None:
        if not isinstance(error, EtosError):
            # A bug (logged with its traceback by the task set): say what was not done.
            self.chat.show_error(error, what=what)
            return
        words = describe(error)
        self.statusBar().showMessage(failure_text(what, error), 15000)
        if is_memory_error(error):
            # E.g. a /remember from the composer was refused: say why; its text stays.
            self.chat.remember_command_failed()
            self.chat.show_error(error, source="remember")
        elif (
            error.code in ("storage", "environment", "message_too_long", "attachment_refused")
            or words.action == "settings"
        ):
            self.chat.show_error(error, what=what)

    # -- memory -------------------------------------------------------------------------------

    #: Whether memory is on (Settings → Memory), for the welcome; set by the app.
    memory_enabled = True

    def refresh_memory_count(self) -> None:
        """Count the active memories off the UI thread, for the welcome of a new conversation."""
        memory = self.controller.memory if self.controller is not None else None
        if memory is None:
            self.chat.set_memory_state(enabled=self.memory_enabled)
            return
        if self._counting is not None and not self._counting.done():
            self._counting.cancel()
        self._counting = self._tasks.spawn(self._count_memories(memory))

    async def _count_memories(self, memory: Any) -> None:
        count = await memory.count_active()
        self.chat.set_memory_state(enabled=self.memory_enabled, count=count)

    def _on_chat_send_requested(self, text: str) -> None:
        if self.controller is None:
            return
        from etos_desktop.core.chat.service import REMEMBER_COMMAND

        stripped = text.strip()
        if REMEMBER_COMMAND.match(stripped):
            # Not a message (nothing is sent to the model; no conversation needs to exist for
            # it): a refusal says that nothing was saved to memory, not that a message was not.
            self.controller.remember(REMEMBER_COMMAND.sub("", stripped, count=1))
            return
        self.controller.send(text)

    def _memory_reporter(self, action: _MemoryAction) -> Reporter:
        """Shows a memory action's failure where it was started: its dialog, or its note."""

        def report(what: str, error: BaseException) -> None:
            action.failed = True
            text = (
                describe(error).message
                if isinstance(error, EtosError)
                else failure_text(what, error)
            )
            if action.dialog is not None and shiboken6.isValid(action.dialog):
                action.dialog.show_error(text)
            elif action.memory_id is not None:
                self.chat.show_memory_error(action.memory_id, text)
            else:
                self.chat.show_error(error, what=what)

        return report

    def _current_memory_action(self) -> _MemoryAction | None:
        # Imported here: asyncio loads after the first frame (see app.run_app).
        import asyncio

        try:
            task = asyncio.current_task()
        except RuntimeError:  # not inside the event loop (a plain Qt callback in a sync test)
            return None
        return self._memory_actions.get(task) if task is not None else None

    def _track(self, task: asyncio.Task[Any], action: _MemoryAction) -> None:
        self._memory_actions[task] = action
        task.add_done_callback(self._on_memory_action_done)

    def _on_memory_action_done(self, task: asyncio.Task[Any]) -> None:
        action = self._memory_actions.pop(task, None)
        if action is None or action.failed or task.cancelled():
            if action is not None and action.memory_id is not None:
                self.chat.set_memory_busy(action.memory_id, False)
            return
        if action.kind == "undo" and action.memory_id is not None:
            self.chat.mark_memory_undone(action.memory_id)
            self.statusBar().showMessage(self.tr("Memory save undone"), 8000)
        elif action.kind == "edit" and action.memory_id is not None:
            self.chat.set_memory_text(action.memory_id, action.text)
            self.statusBar().showMessage(
                self.tr("Memory #{id} updated").format(id=action.memory_id), 8000
            )
        if action.dialog is not None and shiboken6.isValid(action.dialog):
            action.dialog.saved()

    def _on_controller_saved_memories_loaded(self, events: list[MemorySaved]) -> None:
        for event in events:
            if event.message_id is not None and self.chat.widget(event.message_id) is not None:
                self.chat.show_memory_saved(event)

    def _on_controller_memory_saved(self, event: MemorySaved) -> None:
        if event.message_id is not None:
            # The reply may belong to a conversation no longer shown: then only the status bar.
            if self.chat.widget(event.message_id) is not None:
                self.chat.show_memory_saved(event)
        else:
            action = self._current_memory_action()
            if action is not None and action.kind == "remember":
                self.chat.show_memory_saved(event, under=action.message_id)
            else:
                self.chat.remember_command_saved(event)
        if event.merged:
            text = self.tr("Saved to memory (merged into #{id})")
        else:
            text = self.tr("Saved to memory as #{id}")
        self.statusBar().showMessage(text.format(id=event.memory_id), 8000)

    def _on_controller_approval_requested(
        self, request: SaveRequest, message_id: int, future: asyncio.Future[SaveRequest | None]
    ) -> None:
        from etos_desktop.ui.chat_memory_dialogs import ApprovalDialog, bind_approval

        dialog = ApprovalDialog(request, self)
        bind_approval(dialog, future)
        self.approval_dialogs.append(dialog)
        dialog.finished.connect(lambda _result: self._forget_approval(dialog))
        dialog.open()
        if request.supersedes is not None and self.controller is not None:
            self.controller.spawn(self._load_superseded(dialog, request.supersedes))

    def _forget_approval(self, dialog: ApprovalDialog) -> None:
        if dialog in self.approval_dialogs:
            self.approval_dialogs.remove(dialog)
        dialog.deleteLater()

    async def _load_superseded(self, dialog: ApprovalDialog, memory_id: int) -> None:
        memory = self.controller.memory if self.controller is not None else None
        if memory is None:
            return
        old = await memory.get(memory_id)
        if shiboken6.isValid(dialog) and not dialog.is_decided:
            dialog.set_superseded(old.content if old is not None else None)

    def _max_memory_chars(self) -> int:
        memory = self.controller.memory if self.controller is not None else None
        return memory.max_content_chars if memory is not None else 0

    def _on_chat_remember_requested(self, message_id: int, text: str) -> None:
        from etos_desktop.ui.chat_memory_dialogs import MemoryTextDialog

        dialog = MemoryTextDialog(
            text,
            title=self.tr("Remember…"),
            intro=self.tr(
                "Save this to long-term memory. Trim it to what is worth remembering in future "
                "conversations: one or a few self-contained sentences."
            ),
            max_chars=self._max_memory_chars(),
            parent=self,
        )
        dialog.setObjectName("rememberDialog")
        dialog.submitted.connect(
            lambda content, kind: self._remember_from_dialog(dialog, message_id, content, kind)
        )
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _remember_from_dialog(
        self, dialog: MemoryTextDialog, message_id: int, text: str, kind: str
    ) -> None:
        if self.controller is not None:
            action = _MemoryAction("remember", dialog=dialog, message_id=message_id)
            task = self.controller.remember(
                text, kind or "fact", message_id=message_id, report=self._memory_reporter(action)
            )
            self._track(task, action)

    def _on_chat_memory_edit_requested(self, memory_id: int, text: str) -> None:
        from etos_desktop.ui.chat_memory_dialogs import MemoryTextDialog

        dialog = MemoryTextDialog(
            text,
            title=self.tr("Edit memory #{id}").format(id=memory_id),
            intro=self.tr("Change the wording of this memory. It is matched anew from its text."),
            kind=None,
            max_chars=self._max_memory_chars(),
            parent=self,
        )
        dialog.setObjectName("memoryEditDialog")
        dialog.submitted.connect(
            lambda content, _kind: self._edit_from_dialog(dialog, memory_id, content)
        )
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _edit_from_dialog(self, dialog: MemoryTextDialog, memory_id: int, text: str) -> None:
        if self.controller is not None:
            action = _MemoryAction("edit", dialog=dialog, memory_id=memory_id, text=text)
            task = self.controller.edit_memory(
                memory_id, text, report=self._memory_reporter(action)
            )
            self._track(task, action)

    def _on_chat_memory_undo_requested(
        self, memory_id: int, superseded: int | None, merged: bool
    ) -> None:
        if self.controller is None:
            return
        action = _MemoryAction("undo", memory_id=memory_id)
        report = self._memory_reporter(action)
        if merged:
            task = self.controller.undo_merge(memory_id, report=report)
        else:
            task = self.controller.undo_memory(memory_id, superseded, report=report)
        self._track(task, action)

    def _on_sidebar_export_requested(self, conversation_id: int, fmt: str) -> None:
        row = self.sidebar.model.conversation(self.sidebar.model.row_for(conversation_id))
        self.export_conversation(conversation_id, fmt, row.title if row is not None else "")

    def _on_sidebar_search_changed(self, text: str) -> None:
        if self.controller is not None:
            self.controller.search_text = text
            self.controller.refresh_conversations()

    def _on_sidebar_archived_changed(self, archived: bool) -> None:
        if self.controller is not None:
            self.controller.show_archived = archived
            self.controller.refresh_conversations()

    def _on_chat_model_change(self, provider_id: str, model: str) -> None:
        current = self._current()
        if self.controller is None:
            return
        if current is None or current.id is None:
            self.controller.update_draft(provider_id=provider_id or None, model=model or None)
        else:
            self.controller.update_conversation(
                current.id, provider_id=provider_id or None, model=model or None
            )

    def _on_chat_temporary_toggled(self, temporary: bool) -> None:
        current = self._current()
        if self.controller is None:
            return
        if current is None or current.id is None:
            self.controller.update_draft(temporary=temporary)
            self.chat.set_draft(temporary=temporary)
        elif not self.chat.widget_count():
            self.controller.update_conversation(current.id, temporary=temporary)

    #: The Settings persona shown as placeholders (set by the app when settings change).
    global_persona: tuple[str, str] = ("", "")

    def edit_persona_override(self) -> QDialog | None:
        """Open the per-conversation persona dialog (non-modal); returns it for tests."""
        current = self._current()
        if current is None or current.id is None or self.controller is None:
            return None
        conversation_id = current.id
        dialog = PersonaOverrideDialog(
            current.persona_name or "",
            current.persona_prompt or "",
            global_name=self.global_persona[0],
            global_prompt=self.global_persona[1],
            parent=self,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        controller = self.controller
        dialog.override_chosen.connect(
            lambda name, prompt: controller.update_conversation(
                conversation_id, persona_name=name or None, persona_prompt=prompt or None
            )
        )
        dialog.open()
        return dialog

    def _on_rename_action(self) -> None:
        current = self._current()
        if current is not None and current.id is not None:
            self.sidebar.ask_rename(current.id, current.title)

    def _on_pin_action(self) -> None:
        current = self._current()
        if self.controller is not None and current is not None and current.id is not None:
            self.controller.update_conversation(current.id, pinned=not current.pinned)

    def _on_archive_action(self) -> None:
        current = self._current()
        if self.controller is not None and current is not None and current.id is not None:
            self.controller.update_conversation(current.id, archived=not current.archived)

    def _on_delete_action(self) -> None:
        current = self._current()
        if current is not None and current.id is not None:
            self.sidebar.ask_delete(current.id, current.title)

    # -- export -------------------------------------------------------------------------------

    def _export_current(self, fmt: str) -> None:
        current = self._current()
        if current is not None and current.id is not None:
            self.export_conversation(current.id, fmt, current.title)

    def export_conversation(self, conversation_id: int, fmt: str, title: str = "") -> None:
        """Ask where to export a conversation (suggesting its title), then write it."""
        if self.controller is not None:
            self.controller.spawn(
                self._export(conversation_id, fmt, title),
                self.tr("The conversation was not exported."),
            )

    async def _export(self, conversation_id: int, fmt: str, title: str) -> None:
        suffix = ".json" if fmt == "json" else ".md"
        filters = self.tr("JSON (*.json)") if fmt == "json" else self.tr("Markdown (*.md)")
        path = await dialogs.choose_save_path(
            self,
            self.tr("Export conversation"),
            filters,
            dialogs.suggested_file_name(title, suffix, fallback=self.tr("conversation")),
        )
        if not path or self.controller is None:
            return
        if not path.endswith(suffix):
            path += suffix
        await self.controller.export(conversation_id, Path(path), fmt)
        self.statusBar().showMessage(self.tr("Exported to {path}").format(path=path), 8000)

    # -- geometry -----------------------------------------------------------------------------

    def _qsettings(self) -> QSettings | None:
        if self._qsettings_path is None:
            return None
        return QSettings(str(self._qsettings_path), QSettings.Format.IniFormat)

    def _restore_geometry(self) -> None:
        settings = self._qsettings()
        if settings is None:
            return
        paths.make_private_file(Path(settings.fileName()))  # an older version's 0644 file
        geometry = settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)  # type: ignore[arg-type]
        splitter = settings.value("window/splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)  # type: ignore[arg-type]

    @override
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.chat.queued_message() is not None and not self._quit_confirmed:
            # A message the user sent is still waiting (for the services to start, or for a
            # reply to end): quitting would drop it, so ask first; Cancel keeps it queued.
            event.ignore()
            from etos_desktop.ui.tray import show_window

            show_window(self)  # a Quit from the tray: the question must be seen
            if not self._asking_quit:  # Ctrl+Q twice asks once
                self._tasks.spawn(self._confirm_quit())
            return
        settings = self._qsettings()
        if settings is not None:
            settings.setValue("window/geometry", self.saveGeometry())
            settings.setValue("window/splitter", self.splitter.saveState())
            settings.sync()
            # Qt creates the file with the umask's mode (0644) and keeps a file's mode when it
            # rewrites it, so this makes every later write private too (DESIGN §9).
            paths.make_private_file(Path(settings.fileName()))
        # A memory count on its way would read a database that is about to close.
        self._tasks.cancel_all()
        for dialog in list(self.approval_dialogs):
            # Closing the window answers an open approval with "don't save".
            if shiboken6.isValid(dialog):
                dialog.reject()
        self.closing.emit()
        super().closeEvent(event)

    async def _confirm_quit(self) -> None:
        if self._ready:
            text = self.tr(
                "Your message waits for the reply to end and has not been sent yet. "
                "Quit without sending it?"
            )
        else:
            text = self.tr(
                "Your message waits for ETOS Desktop to finish starting and has not been sent "
                "yet. Quit without sending it?"
            )
        self._asking_quit = True
        try:
            quit_anyway = await dialogs.confirm(
                self,
                self.tr("Quit ETOS Desktop"),
                text,
                self.tr("Quit without sending"),
                destructive=True,
            )
        finally:
            self._asking_quit = False
        if not quit_anyway:
            return
        # (If it went out while the question was open, it is saved; quitting stops its reply.)
        self.chat.discard_queued()
        self._quit_confirmed = True
        self.close()
