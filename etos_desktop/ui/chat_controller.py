"""The controller between the chat widgets and the Qt-free chat service.

It owns the async work (every task it starts is kept referenced until it ends, and carries the
words for its failure), the busy state, and the mapping of core events to Qt signals. Widgets
call its methods; they never await.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QLocale, QObject, Signal

from etos_desktop.core.chat.attachments import PreparedAttachment
from etos_desktop.core.chat.events import (
    ChatEvent,
    MemorySaved,
    ReplyDelta,
    ReplyFailed,
    ReplyFinished,
    ReplyRetrying,
    ReplyStarted,
    UserMessageSaved,
)
from etos_desktop.core.chat.export import (
    ExportedAttachment,
    conversation_to_json,
    conversation_to_markdown,
    markdown_files,
)
from etos_desktop.core.chat.service import ChatService
from etos_desktop.core.context.prompts import companion_name
from etos_desktop.core.errors import EtosError, InvalidInput, UserFacingError
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.errors import MemoryNotFound
from etos_desktop.core.memory.tools import SaveRequest
from etos_desktop.core.storage.attachments import AttachmentRecord, AttachmentRepository
from etos_desktop.core.storage.files import write_private_text
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.storage.tables import ConversationRow, MessageRow
from etos_desktop.ui import attachments as attached
from etos_desktop.ui.conversation_list import PAGE_SIZE as CONVERSATION_PAGE
from etos_desktop.ui.error_text import status_text
from etos_desktop.ui.task_set import Reporter, TaskSet

log = logging.getLogger(__name__)

#: Messages shown when a conversation opens: about a window's height of them. Each message is a
#: widget built on the UI thread (5-20 ms each), so opening costs what this page costs, whatever
#: the conversation's length: 40 made a 5,000-message conversation open 2.5-3.6x slower than a
#: 10-message one (tests/bench/open_long.py).
FIRST_PAGE_SIZE = 12
#: Messages loaded at a time as the user scrolls up (or clicks "Load earlier messages").
PAGE_SIZE = 20


@dataclass
class Draft:
    """A new conversation not written yet: it gets its row with its first message.

    So "New" never leaves an empty conversation behind, and what the user chose for it before
    the first message (temporary, provider, model) is carried into that row.
    """

    temporary: bool = False
    provider_id: str | None = None
    model: str | None = None


class ChatController(QObject):
    """Runs chat actions on the event loop and reports them as signals.

    Signals:
        conversations_loaded(list): ConversationRow list for the sidebar (after any change): its
            first window, as far as it was scrolled.
        conversations_appended(list): the window of the sidebar after its last row.
        conversation_previews_loaded(object): the start of the last message of conversations
            about to be listed (a dict by conversation id), sent just before their rows.
        conversation_loading(int): a conversation is being opened (the view may clear at once).
        conversation_opened(object, list, bool): the conversation (``None``: a new one not
            written yet), its newest page of messages, and whether older messages exist.
        older_messages_loaded(list, bool): an older page, and whether still older ones exist.
        conversation_changed(object): a conversation's row changed (title, model, flags).
        conversation_closed(): the open conversation was deleted or archived.
        messages_hidden(int): an edit hid this user message and everything after it.
        user_message_saved(object): the user's message is stored (the composer may clear).
        reply_started(object): an assistant reply row exists.
        reply_delta(int, str): message id and the whole text so far.
        reply_retrying(int, float, str): message id, seconds until the retry, reason code.
        reply_finished(object): the final row (complete, interrupted or stopped).
        reply_failed(object, object): the row and the ``UserFacingError``.
        busy_changed(bool): a reply is (not) in progress.
        task_failed(str, object): an action failed: the words of what was not done, and the
            exception (an ``EtosError``, or anything else for a bug — already logged).
        versions_changed(int, int, int): user message id, current version index, version count.
        memory_saved(object): a ``MemorySaved`` event (the model's save_memory, or /remember).
        saved_memories_loaded(list): ``MemorySaved`` events for the active memories saved from
            the messages just shown (their notes come back when a conversation is reopened).
        memory_changed(): a memory was undone, edited or added from the chat (panels refresh).
        approval_requested(object, int, object): a ``SaveRequest``, the reply's message id and
            an ``asyncio.Future`` the view resolves with the request to save (maybe edited) or
            ``None`` to decline ("ask every time" mode).
        message_room_changed(object): how long a message the open conversation takes.
        attachments_loaded(object): the attachments of messages just shown, by message id (lists
            of ``ui.attachments.Shown``: record and thumbnail).
    """

    conversations_loaded = Signal(list)
    conversations_appended = Signal(list)
    conversation_previews_loaded = Signal(object)
    conversation_loading = Signal(int)
    conversation_opened = Signal(object, list, bool)
    older_messages_loaded = Signal(list, bool)
    conversation_changed = Signal(object)
    conversation_closed = Signal()
    messages_hidden = Signal(int)
    user_message_saved = Signal(object)
    reply_started = Signal(object)
    reply_delta = Signal(int, str)
    reply_retrying = Signal(int, float, str)
    reply_finished = Signal(object)
    reply_failed = Signal(object, object)
    busy_changed = Signal(bool)
    task_failed = Signal(str, object)
    versions_changed = Signal(int, int, int)
    memory_saved = Signal(object)
    saved_memories_loaded = Signal(list)
    memory_changed = Signal()
    approval_requested = Signal(object, int, object)
    #: How long a message the open conversation takes (a ``MessageRoom``, or ``None``).
    message_room_changed = Signal(object)
    attachments_loaded = Signal(object)

    def __init__(
        self,
        repo: ChatRepository,
        chat: ChatService,
        *,
        attachments: AttachmentRepository | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._repo = repo
        self.attachments = attachments
        self.repo = repo
        self._chat = chat
        self._tasks = TaskSet(report=self._on_task_failed)
        self._reply_task: asyncio.Task[Any] | None = None
        self._room_task: asyncio.Task[Any] | None = None
        self.current: ConversationRow | None = None
        self.draft = Draft()
        chat.approver = self._approve
        self.search_text = ""
        self.show_archived = False
        # The sidebar's rows: read a window at a time, and again as far as it was scrolled; a
        # window read for an earlier search (or before a change) is dropped.
        self._conversations_held = 0
        self._conversations_read = 0
        #: The persona name set in Settings ("" for none) and the UI language ("zh"/"en"),
        #: set by the app: with a conversation's messages they give the companion's name.
        self.persona_choice: tuple[str, str] = ("", "en")

    # -- task plumbing ------------------------------------------------------------------------

    def spawn(
        self, coro: Coroutine[Any, Any, Any], failure: str = "", report: Reporter | None = None
    ) -> asyncio.Task[Any]:
        """Run ``coro`` as a task kept referenced until it ends.

        Args:
            coro: The work.
            failure: What was not done if it fails (translated); shown with the reason.
            report: Shows the failure somewhere else than the chat (a dialog, a note).
        """
        return self._tasks.spawn(coro, failure, report)

    def _on_task_failed(self, what: str, error: BaseException) -> None:
        self.task_failed.emit(what, error)

    @property
    def busy(self) -> bool:
        """Whether a reply is being produced."""
        return self._reply_task is not None and not self._reply_task.done()

    async def wait_idle(self) -> None:
        """Wait until every task this controller started has ended (used by tests and quit)."""
        await self._tasks.wait_idle()

    # -- conversations ------------------------------------------------------------------------

    def refresh_conversations(self) -> asyncio.Task[Any]:
        """Reload the sidebar with the current search text and archive filter."""
        return self.spawn(self._refresh(), self.tr("The conversation list was not refreshed."))

    async def _refresh(self) -> None:
        self._conversations_read += 1
        rows, previews = await self._repo.list_conversations_with_previews(
            archived=None if self.show_archived else False,
            search=self.search_text,
            limit=max(CONVERSATION_PAGE, self._conversations_held),
        )
        self._conversations_held = len(rows)
        self.conversation_previews_loaded.emit(previews)
        self.conversations_loaded.emit(rows)

    def load_more_conversations(self, after: ConversationRow) -> asyncio.Task[Any]:
        """Read the sidebar's next window of conversations, those after ``after``."""
        return self.spawn(
            self._more_conversations(after), self.tr("The conversation list was not refreshed.")
        )

    async def _more_conversations(self, after: ConversationRow) -> None:
        read = self._conversations_read
        rows, previews = await self._repo.list_conversations_with_previews(
            archived=None if self.show_archived else False,
            search=self.search_text,
            limit=CONVERSATION_PAGE,
            after=after,
        )
        if read == self._conversations_read:
            self._conversations_held += len(rows)
            self.conversation_previews_loaded.emit(previews)
            self.conversations_appended.emit(rows)

    def refresh_message_room(self) -> asyncio.Task[Any]:
        """Measure again how long a message the open conversation takes (for the composer)."""
        if self._room_task is not None and not self._room_task.done():
            self._room_task.cancel()  # A burst of settings changes measures once.
        self._room_task = self.spawn(
            self._refresh_room(), self.tr("The message length limit was not read.")
        )
        return self._room_task

    async def _refresh_room(self) -> None:
        current = self.current
        try:
            room = await self._chat.message_room(
                current.id if current is not None else None, new=self._draft_row()
            )
        except UserFacingError:
            room = None  # Not set up yet: sending says so.
        if current is self.current:
            self.message_room_changed.emit(room)

    def _draft_row(self) -> ConversationRow:
        now = datetime.now(UTC)
        draft = self.draft
        return ConversationRow(
            created_at=now,
            updated_at=now,
            temporary=draft.temporary,
            provider_id=draft.provider_id,
            model=draft.model,
        )

    def open_conversation(self, conversation_id: int) -> asyncio.Task[Any]:
        """Show a conversation: its newest page of messages."""
        return self.spawn(self._open(conversation_id), self.tr("The conversation was not opened."))

    async def _open(self, conversation_id: int) -> None:
        self.conversation_loading.emit(conversation_id)
        conversation = await self._repo.get_conversation(conversation_id)
        if conversation is None:
            raise InvalidInput(f"no conversation {conversation_id}", reason="missing")
        page = await self._repo.history_page(conversation_id, limit=FIRST_PAGE_SIZE + 1)
        has_more = len(page) > FIRST_PAGE_SIZE
        shown = page[-FIRST_PAGE_SIZE:]
        self.current = conversation
        self.conversation_opened.emit(conversation, shown, has_more)
        await self._emit_attachments(shown)
        await self._emit_versions(shown)
        await self._emit_saved_memories(shown)
        await self._refresh_room()

    def reopen(self) -> asyncio.Task[Any] | None:
        """Show the open conversation again from the database (what a fresh open shows)."""
        if self.current is None or self.current.id is None:
            return None
        return self.open_conversation(self.current.id)

    def load_older(self, before_id: int) -> asyncio.Task[Any]:
        """Load the page of messages before ``before_id`` in the open conversation."""
        return self.spawn(self._load_older(before_id), self.tr("Earlier messages were not loaded."))

    async def _load_older(self, before_id: int) -> None:
        if self.current is None or self.current.id is None:
            return
        page = await self._repo.history_page(
            self.current.id, before_id=before_id, limit=PAGE_SIZE + 1
        )
        has_more = len(page) > PAGE_SIZE
        self.older_messages_loaded.emit(page[-PAGE_SIZE:], has_more)
        await self._emit_attachments(page[-PAGE_SIZE:])
        await self._emit_versions(page[-PAGE_SIZE:])
        await self._emit_saved_memories(page[-PAGE_SIZE:])

    async def _emit_versions(self, rows: list[MessageRow]) -> None:
        replies = {
            row.reply_to_id: row.id
            for row in rows
            if row.role == "assistant" and row.reply_to_id is not None
        }
        versions = await self._repo.reply_version_ids(list(replies))
        for user_id, ids in versions.items():
            if len(ids) > 1 and replies[user_id] in ids:
                self.versions_changed.emit(user_id, ids.index(replies[user_id]), len(ids))

    async def _emit_attachments(self, rows: list[MessageRow]) -> None:
        """Read the attachments of messages shown, with their thumbnails (off the UI thread)."""
        if self.attachments is None:
            return
        records = await self.attachments.for_messages(
            [row.id for row in rows if row.id is not None and row.role == "user"]
        )
        if not records:
            return
        shown: dict[int, list[attached.Shown]] = {}
        for message_id, items in records.items():
            shown[message_id] = [
                attached.Shown(item, await self._thumbnail(item)) for item in items
            ]
        self.attachments_loaded.emit(shown)

    async def _thumbnail(self, record: AttachmentRecord) -> Any:
        from PySide6.QtGui import QImage

        if record.kind != "image" or self.attachments is None:
            return QImage()
        try:
            data = await self.attachments.read(record.sha256)
        except EtosError:
            return QImage()  # removed by hand: the strip shows a file icon
        return await asyncio.to_thread(attached.thumbnail, data)

    async def read_attachment(self, sha256: str) -> bytes:
        """The stored bytes of an attachment (to open it full size)."""
        if self.attachments is None:
            raise InvalidInput("attachments are not available", reason="missing")
        return await self.attachments.read(sha256)

    async def _emit_saved_memories(self, rows: list[MessageRow]) -> None:
        memory = self._chat.memory
        ids = [row.id for row in rows if row.id is not None]
        if memory is None or not ids:
            return
        saved = await memory.saved_from_messages(ids)
        if saved:
            self.saved_memories_loaded.emit(
                [MemorySaved(m.origin_message_id, m.id, False, None, m.content) for m in saved]
            )

    def new_conversation(self, *, temporary: bool = False) -> None:
        """Show a new, empty conversation; its row is written with its first message."""
        if self.busy:
            self.stop()
        self.current = None
        self.draft = Draft(temporary=temporary)
        self.conversation_opened.emit(None, [], False)
        self.refresh_conversations()
        self.refresh_message_room()

    def update_draft(self, **values: Any) -> None:
        """Change what the new conversation will be created with (temporary, provider, model)."""
        for name, value in values.items():
            setattr(self.draft, name, value)
        self.refresh_message_room()

    def update_conversation(self, conversation_id: int, **values: Any) -> asyncio.Task[Any]:
        """Rename, pin, archive, or change a conversation's model/persona."""
        return self.spawn(
            self._update(conversation_id, values), self.tr("The conversation was not changed.")
        )

    async def _update(self, conversation_id: int, values: dict[str, Any]) -> None:
        row = await self._repo.update_conversation(conversation_id, **values)
        if self.current is not None and self.current.id == conversation_id:
            self.current = row
            if values.get("archived") and not self.show_archived:
                self.current = None
                self.draft = Draft()
                self.conversation_closed.emit()
            else:
                self.conversation_changed.emit(row)
                if "model" in values or "provider_id" in values:
                    await self._refresh_room()
        await self._refresh()

    def delete_conversation(self, conversation_id: int) -> asyncio.Task[Any]:
        """Delete a conversation for good (the view asks for confirmation first)."""
        return self.spawn(
            self._delete_conversation(conversation_id),
            self.tr("The conversation was not deleted."),
        )

    async def _delete_conversation(self, conversation_id: int) -> None:
        if self.current is not None and self.current.id == conversation_id:
            self.stop()
            self.current = None
            self.draft = Draft()
            self.conversation_closed.emit()
        files = (
            await self.attachments.of_conversation(conversation_id)
            if self.attachments is not None
            else set()
        )
        await self._repo.delete_conversation(conversation_id)
        if self.attachments is not None:
            # Delete means gone: the conversation's files too, unless another message names one.
            await self.attachments.remove_unused(files)
        await self._refresh()

    # -- messages -----------------------------------------------------------------------------

    def send(self, text: str, attachments: Sequence[PreparedAttachment] = ()) -> asyncio.Task[Any]:
        """Send ``text`` in the open conversation (creating the new one on its first message).

        Args:
            text: The message (may be empty with attachments).
            attachments: Files attached to it, prepared by the composer.
        """
        files = tuple(attachments)
        return self._start_reply(
            lambda cid: self._chat.send(cid, text, files),
            self.tr("The message was not sent."),
            create=True,
            text=text,
            attachments=files,
        )

    def regenerate(self, user_message_id: int) -> asyncio.Task[Any]:
        """Produce a new version of the reply to a user message (also retries a failure)."""
        return self._start_reply(
            lambda _cid: self._chat.regenerate(user_message_id),
            self.tr("The reply was not regenerated."),
        )

    def edit_and_resend(self, user_message_id: int, text: str) -> asyncio.Task[Any]:
        """Replace a user message, drop what followed it, and reply anew."""
        return self._start_reply(
            lambda _cid: self._chat.edit_and_resend(user_message_id, text),
            self.tr("The edited message was not sent."),
            replaces=user_message_id,
        )

    def stop(self) -> None:
        """Stop the reply being streamed; what arrived stays, marked stopped."""
        if self._reply_task is not None and not self._reply_task.done():
            self._reply_task.cancel()

    def _start_reply(
        self,
        events: Callable[[int], Any],
        failure: str,
        *,
        create: bool = False,
        replaces: int | None = None,
        text: str | None = None,
        attachments: Sequence[PreparedAttachment] = (),
    ) -> asyncio.Task[Any]:
        if self.busy:
            return self.spawn(
                self._fail(InvalidInput("a reply is in progress", reason="busy")), failure
            )
        task = self.spawn(self._run_reply(events, create, replaces, text, attachments), failure)
        self._reply_task = task
        self.busy_changed.emit(True)
        task.add_done_callback(lambda _t: self.busy_changed.emit(False))
        return task

    async def _fail(self, error: Exception) -> None:
        raise error

    async def _create_from_draft(self) -> ConversationRow:
        draft = self.draft
        row = await self._repo.create_conversation(
            temporary=draft.temporary, provider_id=draft.provider_id, model=draft.model
        )
        self.current = row
        self.draft = Draft()
        self.conversation_changed.emit(row)
        return row

    async def _run_reply(
        self,
        events: Callable[[int], Any],
        create: bool,
        replaces: int | None,
        text: str | None = None,
        attachments: Sequence[PreparedAttachment] = (),
    ) -> None:
        if self.current is None:
            if not create:
                return
            if text is not None:
                # A first message the model cannot take leaves no empty conversation behind.
                await self._chat.check_fits(
                    None, text, new=self._draft_row(), attachments=attachments
                )
            await self._create_from_draft()
        assert self.current is not None
        conversation_id = self.current.id or 0
        started: MessageRow | None = None
        ended: list[MessageRow] = []
        try:
            async for event in events(conversation_id):
                if isinstance(event, UserMessageSaved) and replaces is not None:
                    self.messages_hidden.emit(replaces)
                if isinstance(event, UserMessageSaved):
                    # Its thumbnails, read as a reopen reads them (the reply does not wait).
                    self.spawn(self._emit_attachments([event.message]))
                if isinstance(event, ReplyStarted):
                    started = event.message
                self._dispatch(event)
                if isinstance(event, ReplyFinished | ReplyFailed):
                    ended.append(event.message)
        finally:
            if started is not None and not ended:
                # Stopped (cancelled): the service has stored what arrived, marked stopped; the
                # view shows that row now, as a reopen would.
                self.spawn(self._show_final(started.id or 0))
            if ended:
                # A regenerated reply is one more version: the switcher shows "2/2" at once.
                self.spawn(self._emit_versions(ended))
            # Outside the reply task, so the composer is free again the moment the reply ends.
            self.spawn(self._refresh())
            # The profile, the summaries or the model may have changed with the reply.
            self.refresh_message_room()

    async def _show_final(self, message_id: int) -> None:
        row = await self._repo.get_message(message_id)
        if row is not None:
            self.reply_finished.emit(row)
            await self._emit_versions([row])

    def _dispatch(self, event: ChatEvent) -> None:
        match event:
            case UserMessageSaved(message=row):
                self.user_message_saved.emit(row)
            case ReplyStarted(message=row):
                self.reply_started.emit(row)
            case ReplyDelta(message_id=mid, text=text):
                self.reply_delta.emit(mid, text)
            case ReplyRetrying(message_id=mid, seconds=seconds, reason=reason):
                self.reply_retrying.emit(mid, seconds, reason)
            case ReplyFinished(message=row):
                self.reply_finished.emit(row)
            case ReplyFailed(message=row, error=error):
                self.reply_failed.emit(row, error)
            case MemorySaved():
                self.memory_saved.emit(event)

    def conversation_updated(self, conversation_id: int) -> asyncio.Task[Any]:
        """A background job changed a conversation's row (its title): show the change."""
        return self.spawn(
            self._conversation_updated(conversation_id),
            self.tr("The conversation list was not refreshed."),
        )

    async def _conversation_updated(self, conversation_id: int) -> None:
        row = await self._repo.get_conversation(conversation_id)
        if row is not None and self.current is not None and self.current.id == row.id:
            self.current = row
            self.conversation_changed.emit(row)
        await self._refresh()

    def switch_version(self, user_message_id: int, index: int) -> asyncio.Task[Any]:
        """Make version ``index`` of the reply to a user message the current one."""
        return self.spawn(
            self._switch_version(user_message_id, index),
            self.tr("The other version was not shown."),
        )

    async def _switch_version(self, user_message_id: int, index: int) -> None:
        versions = await self._repo.reply_versions(user_message_id)
        if not 0 <= index < len(versions):
            return
        await self._repo.set_current_reply(versions[index].id or 0)
        if self.current is not None:
            await self._open(self.current.id or 0)

    def delete_message(self, message_id: int) -> asyncio.Task[Any]:
        """Delete one message (a user message takes its replies with it)."""
        return self.spawn(self._delete_message(message_id), self.tr("The message was not deleted."))

    async def _delete_message(self, message_id: int) -> None:
        files = (
            await self.attachments.of_message(message_id) if self.attachments is not None else set()
        )
        await self._repo.delete_message(message_id)
        if self.attachments is not None:
            await self.attachments.remove_unused(files)
        if self.current is not None:
            await self._open(self.current.id or 0)

    # -- memory -------------------------------------------------------------------------------

    async def _approve(self, request: SaveRequest, message_id: int) -> SaveRequest | None:
        """Ask the view whether to save (the "ask every time" approval mode)."""
        future: asyncio.Future[SaveRequest | None] = asyncio.get_running_loop().create_future()
        self.approval_requested.emit(request, message_id, future)
        return await future

    def remember(
        self,
        text: str,
        kind: str = "fact",
        *,
        message_id: int | None = None,
        report: Reporter | None = None,
    ) -> asyncio.Task[Any]:
        """Save a memory the user wrote (``/remember``, or Remember… under ``message_id``)."""
        return self.spawn(
            self._remember(text, kind, message_id), self.tr("Nothing was saved to memory."), report
        )

    async def _remember(self, text: str, kind: str, message_id: int | None) -> MemorySaved:
        if self.current is None and self.draft.temporary:
            # A new temporary conversation (no message yet) writes nothing to memory either.
            raise InvalidInput("temporary conversation", reason="temporary")
        event = await self._chat.remember(self.current, text, kind, message_id=message_id)
        self.memory_saved.emit(event)
        self.memory_changed.emit()
        return event

    def undo_memory(
        self, memory_id: int, superseded: int | None, *, report: Reporter | None = None
    ) -> asyncio.Task[Any]:
        """Undo a save: delete the new memory and restore the one it superseded."""
        return self.spawn(
            self._undo_memory(memory_id, superseded), self.tr("The save was not undone."), report
        )

    async def _undo_memory(self, memory_id: int, superseded: int | None) -> None:
        memory = self._chat.memory
        if memory is None:
            return
        await memory.delete(memory_id, actor="user")
        if superseded is not None:
            await memory.restore(superseded, actor="user")
        self.memory_changed.emit()

    @property
    def memory(self) -> MemoryAccess | None:
        """The long-term memory the chat uses (``None`` when the app runs without it)."""
        return self._chat.memory

    def undo_merge(self, memory_id: int, *, report: Reporter | None = None) -> asyncio.Task[Any]:
        """Undo a save that was merged into an existing memory: give it back its old wording.

        Deleting would lose a memory the user had before; the merge's revision holds what it was.
        """
        return self.spawn(self._undo_merge(memory_id), self.tr("The save was not undone."), report)

    async def _undo_merge(self, memory_id: int) -> None:
        memory = self._chat.memory
        if memory is None:
            return
        merges = [r for r in await memory.history(memory_id) if r.action == "merge" and r.before]
        if not merges:
            raise MemoryNotFound(f"no merge to undo on #{memory_id}", memory_id=memory_id)
        before = merges[-1].before or {}
        await memory.edit(
            memory_id,
            text=str(before["content"]),
            importance=float(before["importance"]),
            confidence=float(before["confidence"]),
            tags=list(before.get("tags") or []),
            trigger_context=before.get("trigger_context"),
        )
        self.memory_changed.emit()

    def edit_memory(
        self, memory_id: int, text: str, *, report: Reporter | None = None
    ) -> asyncio.Task[Any]:
        """Give a memory new wording (it is re-embedded)."""
        return self.spawn(
            self._edit_memory(memory_id, text), self.tr("The memory was not changed."), report
        )

    async def _edit_memory(self, memory_id: int, text: str) -> None:
        memory = self._chat.memory
        if memory is not None:
            await memory.edit(memory_id, text=text)
            self.memory_changed.emit()

    def companion_name(self, conversation: ConversationRow, messages: list[MessageRow]) -> str:
        """The companion's name in ``conversation``: the one its prompt gives (DESIGN §4)."""
        chosen, ui_language = self.persona_choice
        user_texts = [m.content for m in messages if m.role == "user"]
        return companion_name(user_texts, ui_language, conversation.persona_name, chosen)

    # -- export -------------------------------------------------------------------------------

    def export(self, conversation_id: int, path: Path, fmt: str) -> asyncio.Task[Any]:
        """Write a conversation to ``path`` as ``"markdown"`` or ``"json"``."""
        return self.spawn(
            self._export(conversation_id, path, fmt), self.tr("The conversation was not exported.")
        )

    async def _export(self, conversation_id: int, path: Path, fmt: str) -> Path:
        conversation = await self._repo.get_conversation(conversation_id)
        if conversation is None:
            raise InvalidInput(f"no conversation {conversation_id}", reason="missing")
        messages = await self._repo.current_history(conversation_id)
        attached = await self._exported_attachments(messages)
        if fmt == "json":
            text = json.dumps(
                conversation_to_json(conversation, messages, attached),
                ensure_ascii=False,
                indent=2,
            )
        else:
            folder = f"{path.stem}_files"
            locale = QLocale()
            text = conversation_to_markdown(
                conversation,
                messages,
                you=self.tr("You"),
                assistant=self.companion_name(conversation, messages),
                untitled=self.tr("Conversation"),
                empty=self.tr("(empty)"),
                status=status_text,
                attachments=attached,
                files_folder=folder,
                tokens=lambda n: self.tr("about {tokens} tokens").format(tokens=locale.toString(n)),
            )
            images = markdown_files(attached)
            if images:
                # The images go beside the Markdown, private like it, before it is written.
                data = {
                    item.record.id: item.data
                    for items in attached.values()
                    for item in items
                    if item.data is not None
                }
                files = {name: data[record_id] for record_id, name in images.items()}
                await asyncio.to_thread(_write_files, path.parent / folder, files)
        await asyncio.to_thread(write_private_text, path, text)
        return path

    async def _exported_attachments(self, messages: list[MessageRow]) -> dict[int, list[Any]]:
        if self.attachments is None:
            return {}
        records = await self.attachments.for_messages(
            [m.id for m in messages if m.id is not None and m.role == "user"]
        )
        exported: dict[int, list[Any]] = {}
        for message_id, items in records.items():
            exported[message_id] = []
            for record in items:
                try:
                    data: bytes | None = await self.attachments.read(record.sha256)
                except EtosError:
                    data = None  # removed by hand: the export says it is missing
                exported[message_id].append(ExportedAttachment(record, data))
        return exported


def _write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Write exported attachments into ``folder`` (made ``0700``), each ``0600``, atomically."""
    from etos_desktop.core.settings.paths import atomic_write_private, make_private_dir

    make_private_dir(folder)
    for name, data in files.items():
        atomic_write_private(folder / name, data)
