"""ChatService: send → assemble → stream → persist.

Runs on the event loop; every database call goes through the repository (DB worker thread).
The service yields :mod:`events <etos_desktop.core.chat.events>` so any front end can follow a
reply; the Qt controller re-emits them as signals.

Guarantees (DESIGN §4):
- the user's message is saved before anything is sent, so no failure can lose it;
- a streaming reply is persisted as it grows (throttled), so a crash keeps what arrived;
- a stream that ends without ``finish_reason``, a Stop, or a failure after some text leaves the
  partial reply saved with status *interrupted*; a failure before any text leaves status *error*
  with the error code, and the reply can be regenerated.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from etos_desktop.core.changes import ChangeHub, ReplyCompleted
from etos_desktop.core.chat import attachments as attaching
from etos_desktop.core.chat.attachments import PreparedAttachment, SentAttachment
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
from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.context.assembler import (
    SAFETY_MARGIN,
    ContextBlock,
    ContextInput,
    ContextTrace,
    MemoryRule,
    TraceAttachment,
    TraceSummary,
    assemble_context,
    head_tokens,
)
from etos_desktop.core.context.language import (
    RECENT_USER_TEXTS,
    Language,
    conversation_language,
)
from etos_desktop.core.context.model_limits import accepts_images, context_window_for
from etos_desktop.core.context.prompts import (
    DEFAULT_PERSONA_PROMPT,
    persona_name,
    system_prompt,
)
from etos_desktop.core.context.tokens import estimate_message_tokens
from etos_desktop.core.errors import (
    AttachmentRefused,
    BadRequest,
    ImagesNotAccepted,
    InvalidInput,
    MessageTooLong,
    StorageError,
    UserFacingError,
)
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.retrieval import (
    Retrieval,
    memory_block,
    retrieve,
    trace_memories,
)
from etos_desktop.core.memory.standing import StandingChoice, effective_budget, trace_standing
from etos_desktop.core.memory.tools import (
    REFUSAL_TEXT,
    SAVE_MEMORY,
    SEARCH_MEMORY,
    SaveRequest,
    ToolArgumentError,
    parse_save,
    parse_search,
    saved_text,
    search_results_text,
    tool_definitions,
)
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.profile.injection import profile_block
from etos_desktop.core.profile.records import Profile
from etos_desktop.core.providers.base import ChatRequest, Message, ToolCallDelta, Usage
from etos_desktop.core.providers.registry import ProviderSource, ResolvedProvider
from etos_desktop.core.retrieval.gating import RecallCue, recall_cue
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.attachments import AttachmentRecord, AttachmentRepository
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.storage.tables import ConversationRow, MessageRow, MessageStatus
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.summaries.injection import SessionSnapshots, SummarySnapshot, summaries_block
from etos_desktop.core.summaries.recall import SummaryHit, with_recalled
from etos_desktop.core.summaries.writing import summary_date
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.secrets import redact_tool_calls
from etos_desktop.core.usage.records import usage_columns

log = logging.getLogger(__name__)

#: Seconds between database writes of a growing reply (a crash loses at most this much).
PERSIST_INTERVAL = 0.25
#: Longest message the app accepts at all (characters); longer input is refused, not cut.
MAX_MESSAGE_CHARS = 2_000_000
#: Tool rounds per reply; the last round is asked without acting on further tool calls.
MAX_TOOL_ROUNDS = 4
#: ``/remember <text>`` in the composer saves a memory instead of sending a message.
REMEMBER_COMMAND = re.compile(r"^/remember(\s+|$)", re.IGNORECASE)

Approver = Callable[[SaveRequest, int], Awaitable[SaveRequest | None]]


def clean_user_text(text: str, *, allow_empty: bool = False) -> str:
    """Normalise a message the user typed or pasted.

    Cleans it as all incoming text is (``core.text.cleaning``: NUL and friends break some
    servers' JSON parsers) and strips surrounding blank space.

    Args:
        text: The message.
        allow_empty: An empty message is fine (it carries attachments).

    Raises:
        InvalidInput: The message is empty after cleaning, or longer than ``MAX_MESSAGE_CHARS``.
    """
    cleaned = clean_text(text).strip()
    if not cleaned and not allow_empty:
        raise InvalidInput("empty message", reason="empty")
    if len(cleaned) > MAX_MESSAGE_CHARS:
        raise InvalidInput("message too large", reason="too_large", limit=MAX_MESSAGE_CHARS)
    return cleaned


def message_to_wire(row: MessageRow) -> Message:
    """Turn a stored message into the OpenAI-format dict that is sent."""
    wire: Message = {"role": row.role, "content": row.content}
    if row.tool_calls_json:
        wire["tool_calls"] = json.loads(row.tool_calls_json)
    if row.tool_call_id:
        wire["tool_call_id"] = row.tool_call_id
    return wire


@dataclass(frozen=True)
class MessageRoom:
    """How long the next user message of a conversation may be (the composer shows it).

    Attributes:
        tokens: The most a user message may cost (``estimate_message_tokens``): the model's
            budget less the system message that goes with every request (persona, profile,
            summaries, standing memories). History and retrieved memories give way to it.
        model: The model it was measured for.
        images: Whether that model accepts images (its "vision" flag, or the user's answer).
    """

    tokens: int
    model: str
    images: bool = False


class ChatService:
    """Sends messages and streams, persists and reports replies.

    Args:
        repo: Conversations and messages.
        providers: Resolves a conversation's provider and model.
        settings: Chat settings (output tokens, temperature, persona, UI language).
        memory: Long-term memory (``None``: the app runs without it).
        approver: Asked before a ``save_memory`` call is carried out when the approval setting
            is "ask"; returns the request to save (possibly edited) or ``None`` to decline.
        loop_time: Monotonic seconds (``loop.time``); injectable for tests.
        summaries: Session summaries: injected into the system message (a snapshot per
            session) and searched by recall questions (``None``: the app runs without them).
        clock: The wall-clock time (sessions end after 30 minutes without a message).
        profile: The user profile, read at every request and sent first of the labelled blocks
            of the system message (``None``: the app runs without it).
        ui_language: The language the window shows ("zh"/"en"), for a conversation with no
            words of its own yet (its default companion name and prompt language). The app
            passes the installed language, which resolves "Automatic" by the system locale as
            the window does; ``None`` reads ``ui.language`` and takes "Automatic" as English.
        changes: The app's change hub: every reply that finished is published there
            (``ReplyCompleted``, on the event loop once the reply's row is written).
        attachments: Where the files attached to messages are kept (``None``: the app runs
            without attachments, and a message that carries some is refused).
    """

    def __init__(
        self,
        repo: ChatRepository,
        providers: ProviderSource,
        settings: SettingsStore,
        *,
        memory: MemoryAccess | None = None,
        approver: Approver | None = None,
        loop_time: Callable[[], float] | None = None,
        persist_interval: float = PERSIST_INTERVAL,
        summaries: SummaryAccess | None = None,
        clock: Clock | None = None,
        profile: ProfileAccess | None = None,
        ui_language: Callable[[], str] | None = None,
        changes: ChangeHub,
        attachments: AttachmentRepository | None = None,
    ) -> None:
        self._repo = repo
        self.attachments = attachments
        self._ui_language_of = ui_language
        self._providers = providers
        self._settings = settings
        self.memory = memory
        self.approver = approver
        self._loop_time = loop_time
        self._persist_interval = persist_interval
        # (base URL, model) pairs whose server refused the tools parameter: memory still works
        # there through automatic retrieval and the user's Remember action.
        self._no_tools: set[tuple[str, str]] = set()
        self.summaries = summaries
        self.profile = profile
        self._clock: Clock = clock or SystemClock()
        self._snapshots = SessionSnapshots()
        self._changes = changes

    # -- public API ---------------------------------------------------------------------------

    async def send(
        self,
        conversation_id: int,
        text: str,
        attachments: Sequence[PreparedAttachment] = (),
    ) -> AsyncIterator[ChatEvent]:
        """Save the user's message (with its attachments), then stream the reply.

        Yields:
            ``UserMessageSaved`` first, then the reply's events.

        Raises:
            InvalidInput: The text is empty (and nothing is attached) or absurdly large
                (nothing was saved).
            AttachmentRefused: Too many attachments (``too_many``), or the app runs without
                attachments.
            ImagesNotAccepted: Images for a model that takes none (nothing was saved).
            MessageTooLong: The message with its documents is too long for the model.
            StorageError: The message could not be saved (disk full…); nothing was sent.
        """
        content = clean_user_text(text, allow_empty=bool(attachments))
        conversation = await self._conversation(conversation_id)
        if REMEMBER_COMMAND.match(content):
            # Not a user turn: nothing is sent to the model and nothing enters the history.
            yield await self.remember(conversation, REMEMBER_COMMAND.sub("", content, count=1))
            return
        await self._check_fits(conversation, content, attachments)
        user = await self._repo.add_message(conversation_id, "user", content)
        if attachments:
            await self._attach(user, attachments)
        yield UserMessageSaved(user)
        async for event in self._reply(conversation, user):
            yield event

    async def message_room(
        self,
        conversation_id: int | None,
        draft: str = "",
        *,
        new: ConversationRow | None = None,
    ) -> MessageRoom | None:
        """How long a message the conversation can take (``None``: no model is set up yet).

        Args:
            conversation_id: The conversation, or ``None`` for a new one.
            draft: The text being written (it decides the prompt's language).
            new: For a new one, the row it will be created with (temporary, provider, model).
        """
        return await self._room(await self._row_or_new(conversation_id, new), draft)

    async def check_fits(
        self,
        conversation_id: int | None,
        text: str,
        *,
        new: ConversationRow | None = None,
        attachments: Sequence[PreparedAttachment] = (),
    ) -> None:
        """Refuse a message the model cannot take with the conversation's context.

        ``send`` checks this before it saves anything; the window checks it before it creates
        the conversation a first message opens.

        Raises:
            MessageTooLong: With ``needed`` and ``budget`` (tokens) and ``model``.
            ImagesNotAccepted: ``attachments`` hold images and the model takes none.
            InvalidInput: The text is empty or absurdly large.
        """
        content = clean_user_text(text, allow_empty=bool(attachments))
        await self._check_fits(await self._row_or_new(conversation_id, new), content, attachments)

    async def _row_or_new(
        self, conversation_id: int | None, new: ConversationRow | None
    ) -> ConversationRow:
        if conversation_id is not None:
            return await self._conversation(conversation_id)
        now = self._clock.now()
        return new or ConversationRow(created_at=now, updated_at=now)

    async def _room(self, conversation: ConversationRow, draft: str) -> MessageRoom | None:
        try:
            resolved = await self._providers.resolve(conversation.provider_id, conversation.model)
        except UserFacingError:
            return None
        lang = conversation_language([draft] if draft.strip() else [], self._ui_language())
        context_window = context_window_for(
            resolved.model, self._settings.model_context_overrides()
        )
        blocks: list[ContextBlock | None] = [
            profile_block(await self._current_profile(conversation), lang)
        ]
        if self.summaries is not None and self._summaries_on(conversation):
            # The session's snapshot when there is one; else what its first request would take.
            snapshot = self._snapshots.current(conversation.id or 0, self._clock.now())
            if snapshot is not None:
                blocks.append(snapshot.block)
            else:
                count = self._settings.get_int("summaries.inject_count")
                with contextlib.suppress(UserFacingError):
                    recent = await self.summaries.for_injection(conversation.id or 0, count)
                    blocks.append(summaries_block(recent, lang))
        if self._memory_on(conversation):
            standing = await self._standing(lang, context_window)
            if standing is not None and standing.fits:
                blocks.append(standing.block)
        head = head_tokens(
            system_prompt(lang, *self._persona(conversation, lang)),
            [b for b in blocks if b is not None],
        )
        budget = context_window - self._settings.get_int("chat.max_output_tokens") - SAFETY_MARGIN
        images = accepts_images(resolved.model, self._settings.model_vision_overrides())
        return MessageRoom(tokens=budget - head, model=resolved.model, images=images)

    async def _check_fits(
        self,
        conversation: ConversationRow,
        content: str,
        attachments: Sequence[PreparedAttachment] = (),
    ) -> None:
        """Refuse, before it is saved, a message the model cannot take with its context."""
        if attachments and self.attachments is None:
            raise AttachmentRefused("attachments are not available", name="", reason="unavailable")
        if len(attachments) > attaching.MAX_ATTACHMENTS:
            raise AttachmentRefused(
                "too many attachments",
                name="",
                reason="too_many",
                limit=attaching.MAX_ATTACHMENTS,
            )
        room = await self._room(conversation, content)
        if room is not None and attaching.has_images(attachments) and not room.images:
            raise ImagesNotAccepted(f"{room.model} takes no images", model=room.model)
        message: Message = {"role": "user", "content": content}
        if attachments:
            lang = conversation_language([content] if content.strip() else [], self._ui_language())
            sent = [SentAttachment.of(a, a.data) for a in attachments]
            message = attaching.user_message(content, sent, lang)
        needed = estimate_message_tokens(message)
        if room is not None and needed > room.tokens:
            raise MessageTooLong(
                f"the message needs {needed} tokens; the model takes {room.tokens} with its context",
                needed=needed,
                budget=room.tokens,
                model=room.model,
            )

    async def remember(
        self,
        conversation: ConversationRow | None,
        text: str,
        kind: str = "fact",
        *,
        message_id: int | None = None,
    ) -> MemorySaved:
        """Save a memory the user wrote (``/remember``, the Remember… action).

        Args:
            conversation: The conversation it was written in, if any.
            text: The memory text.
            kind: Its kind.
            message_id: The message the Remember… action was used on (its note is shown under
                that message again when the conversation is reopened).

        Raises:
            InvalidInput: Memory is off, the conversation is temporary, or a write check
                refused the text (``MemoryRejected`` codes).
        """
        if self.memory is None or not self._settings.get_bool("memory.enabled"):
            raise InvalidInput("memory is turned off", reason="memory_off")
        if conversation is not None and conversation.temporary:
            raise InvalidInput("temporary conversation", reason="temporary")
        content = text.strip()
        if not content:
            raise InvalidInput("empty memory", reason="empty")
        result = await self.memory.save(
            content,
            kind,
            source="user_statement",
            origin_conversation_id=conversation.id if conversation is not None else None,
            origin_message_id=message_id,
        )
        return MemorySaved(None, result.id, result.merged, result.superseded, content)

    async def regenerate(self, user_message_id: int) -> AsyncIterator[ChatEvent]:
        """Stream a new version of the reply to a user message (earlier versions are kept).

        This is also how a failed or interrupted reply is retried.
        """
        user = await self._repo.get_message(user_message_id)
        if user is None or user.role != "user":
            raise InvalidInput(f"no user message {user_message_id}", reason="missing")
        conversation = await self._conversation(user.conversation_id)
        async for event in self._reply(conversation, user):
            yield event

    async def edit_and_resend(self, user_message_id: int, text: str) -> AsyncIterator[ChatEvent]:
        """Replace a user message with new text, hide everything after it, and reply anew."""
        content = clean_user_text(text)
        old = await self._repo.get_message(user_message_id)
        if old is None or old.role != "user":
            raise InvalidInput(f"no user message {user_message_id}", reason="missing")
        conversation = await self._conversation(old.conversation_id)
        kept = await self._attachments_of([user_message_id])
        await self._check_fits(conversation, content, await self._prepared(kept.get(old.id or 0)))
        await self._repo.hide_after(user_message_id, inclusive=True)
        user = await self._repo.add_message(old.conversation_id, "user", content)
        if kept and self.attachments is not None:
            # The edited message keeps the files of the one it replaces.
            await self.attachments.copy(user_message_id, user.id or 0)
        yield UserMessageSaved(user)
        async for event in self._reply(conversation, user):
            yield event

    # -- attachments --------------------------------------------------------------------------

    async def _attach(self, user: MessageRow, attachments: Sequence[PreparedAttachment]) -> None:
        """Store a new message's attachments; if that fails, the message goes too."""
        assert self.attachments is not None
        try:
            await self.attachments.attach(user.id or 0, [a.to_new() for a in attachments])
        except BaseException:
            # Without its files the message is not what the user sent: nothing is kept.
            await asyncio.shield(self._repo.delete_message(user.id or 0))
            raise

    async def _attachments_of(
        self, message_ids: Sequence[int]
    ) -> dict[int, list[AttachmentRecord]]:
        if self.attachments is None or not message_ids:
            return {}
        return await self.attachments.for_messages(message_ids)

    async def _prepared(
        self, records: Sequence[AttachmentRecord] | None
    ) -> list[PreparedAttachment]:
        """Stored attachments as a draft's, bytes and all (for the checks of an edited message)."""
        if not records or self.attachments is None:
            return []
        return [
            PreparedAttachment(
                r.kind,
                r.name,
                r.mime,
                r.size,
                b"" if r.kind == attaching.IMAGE else await self.attachments.read(r.sha256),
                r.tokens,
                r.width,
                r.height,
            )
            for r in records
        ]

    async def _sent(
        self, records: Sequence[AttachmentRecord], images: bool
    ) -> list[SentAttachment]:
        """The attachments of a stored message as a request carries them.

        ``images``: its images go as images (else each is a note). A file that is missing from
        the data folder (removed by hand) becomes a note too, and the reply still goes.
        """
        assert self.attachments is not None
        sent = []
        for record in records:
            data: bytes | None = None
            if record.kind == attaching.DOCUMENT or images:
                try:
                    data = await self.attachments.read(record.sha256)
                except StorageError as exc:
                    log.warning("attachment %s is missing: %s", record.id, exc.code)
            sent.append(SentAttachment.of(record, data))
        return sent

    # -- the reply ----------------------------------------------------------------------------

    async def _conversation(self, conversation_id: int) -> ConversationRow:
        conversation = await self._repo.get_conversation(conversation_id)
        if conversation is None:
            raise InvalidInput(f"no conversation {conversation_id}", reason="missing")
        return conversation

    def _ui_language(self) -> str:
        if self._ui_language_of is not None:
            return self._ui_language_of()
        language = self._settings.get_str("ui.language")
        return language if language in ("zh", "en") else "en"

    def _now(self) -> float:
        if self._loop_time is not None:
            return self._loop_time()
        return asyncio.get_running_loop().time()

    def _memory_on(self, conversation: ConversationRow) -> bool:
        return (
            self.memory is not None
            and not conversation.temporary
            and self._settings.get_bool("memory.enabled")
        )

    def _summaries_on(self, conversation: ConversationRow) -> bool:
        return (
            self.summaries is not None
            and not conversation.temporary
            and self._settings.get_bool("memory.enabled")
            and self._settings.get_bool("summaries.enabled")
        )

    def _profile_on(self, conversation: ConversationRow) -> bool:
        return (
            self.profile is not None
            and not conversation.temporary
            and self._settings.get_bool("memory.enabled")
            and self._settings.get_bool("profile.enabled")
        )

    def _persona(self, conversation: ConversationRow, lang: Language) -> tuple[str, str]:
        """The persona's name and prompt for a conversation (its own, the global, the default)."""
        name = persona_name(lang, conversation.persona_name, self._settings.get_str("persona.name"))
        prompt = (
            conversation.persona_prompt
            or self._settings.get_str("persona.prompt")
            or DEFAULT_PERSONA_PROMPT[lang]
        )
        return name, prompt

    async def _current_profile(self, conversation: ConversationRow) -> Profile | None:
        """The profile to send: read at every request, so an edit is carried by the next one."""
        if self.profile is None or not self._profile_on(conversation):
            return None
        try:
            profile = await self.profile.current()
        except UserFacingError as exc:
            # The profile is a help, never a reason the reply fails.
            log.warning("the profile was not read: %s", exc.code)
            return None
        return None if profile.empty else profile

    async def _summaries_snapshot(
        self, conversation: ConversationRow, lang: Language
    ) -> SummarySnapshot | None:
        """The summaries block of the conversation's session: taken at its first request."""
        if self.summaries is None or not self._summaries_on(conversation):
            return None
        conversation_id = conversation.id or 0
        now = self._clock.now()
        snapshot = self._snapshots.current(conversation_id, now)
        if snapshot is None:
            count = self._settings.get_int("summaries.inject_count")
            try:
                recent = await self.summaries.for_injection(conversation_id, count)
            except UserFacingError as exc:
                log.warning("summaries were not read: %s", exc.code)
                return None
            snapshot = SummarySnapshot(
                taken_at=now,
                block=summaries_block(recent, lang),
                summary_ids=tuple(s.id for s in recent),
            )
            self._snapshots.start(conversation_id, snapshot, now)
        return snapshot

    async def _standing(self, lang: Language, context_window: int) -> StandingChoice | None:
        """The "All that fit" decision, or ``None`` in fixed-number mode or when it failed."""
        if self.memory is None or self._settings.get_str("memory.per_message") != "auto":
            return None
        budget = effective_budget(
            self._settings.get_int("memory.all_that_fit_tokens"), context_window
        )
        try:
            return await self.memory.standing(budget, lang)
        except UserFacingError as exc:
            # Retrieval chooses instead; memory is never a reason the reply fails.
            log.warning("the memory store was not read: %s", exc.code)
            return None

    async def _recall_summaries(
        self, conversation: ConversationRow, cue: RecallCue | None, text: str
    ) -> list[SummaryHit]:
        """Summaries of other conversations for a question about the shared past."""
        if self.summaries is None or cue is None:
            return []
        if not self._summaries_on(conversation):
            return []
        try:
            return await self.summaries.recall(text, conversation.id)
        except UserFacingError as exc:
            log.warning("summary recall failed: %s", exc.code)
            return []

    async def _with_attachments(
        self,
        history: list[Message],
        user_rows: Sequence[tuple[int, MessageRow]],
        user: MessageRow,
        resolved: ResolvedProvider,
        lang: Language,
    ) -> tuple[Message, list[TraceAttachment]]:
        """Put the attachments into the history's user messages; return the current message.

        Returns:
            The current user message, and how each attachment was sent (for the trace).

        Documents go with every message that has them; images as images only with the last
        ``REPLAYED_IMAGE_TURNS`` user messages and only to a model that takes images.

        Raises:
            ImagesNotAccepted: The current message has images and the model takes none (a
                regenerate after the conversation's model was changed).
        """
        traced: list[TraceAttachment] = []
        ids = [row.id or 0 for _, row in user_rows] + [user.id or 0]
        attached = await self._attachments_of(ids)
        if not attached:
            return {"role": "user", "content": user.content}, traced
        images = accepts_images(resolved.model, self._settings.model_vision_overrides())
        own = attached.get(user.id or 0, [])
        if attaching.has_images(own) and not images:
            raise ImagesNotAccepted(f"{resolved.model} takes no images", model=resolved.model)
        replayed = set(ids[-attaching.REPLAYED_IMAGE_TURNS :])
        for position, row in user_rows:
            records = attached.get(row.id or 0)
            if records:
                sent = await self._sent(records, images and (row.id or 0) in replayed)
                history[position] = attaching.user_message(row.content, sent, lang)
                traced.extend(_traced("history", sent))
        current = await self._sent(own, images)
        traced.extend(_traced("current", current))
        return attaching.user_message(user.content, current, lang), traced

    async def _build_request(
        self, conversation: ConversationRow, user: MessageRow, resolved: ResolvedProvider
    ) -> tuple[ChatRequest, ContextTrace]:
        history_rows = await self._repo.current_history(conversation.id or 0)
        history: list[Message] = []
        user_texts: list[str] = []
        # User messages of the history, by position in ``history``: their attachments go in
        # once the prompt language is known.
        user_rows: list[tuple[int, MessageRow]] = []
        for row in history_rows:
            if row.id is not None and row.id >= (user.id or 0):
                break
            if row.role == "user":
                user_texts.append(row.content)
                user_rows.append((len(history), row))
            # Failed replies hold no answer, and empty interrupted ones say nothing.
            if row.role == "assistant" and (row.status == MessageStatus.ERROR or not row.content):
                continue
            history.extend(messages_to_wire(row))
        previous_user = user_texts[-1] if user_texts else None
        user_texts.append(user.content)
        lang = conversation_language(user_texts[-RECENT_USER_TEXTS:], self._ui_language())
        current, traced = await self._with_attachments(history, user_rows, user, resolved, lang)
        persona_name, persona_prompt = self._persona(conversation, lang)
        context_window = context_window_for(
            resolved.model, self._settings.model_context_overrides()
        )
        retrieved: Retrieval | None = None
        standing: StandingChoice | None = None
        rule: MemoryRule = ""
        memory_on = self._memory_on(conversation)
        if memory_on and self.memory is not None:
            standing = await self._standing(lang, context_window)
            if standing is not None and standing.fits:
                rule = "all_that_fit"
            else:
                fixed = self._settings.get_str("memory.per_message") == "fixed"
                rule = "fixed" if fixed else "retrieval"
                try:
                    retrieved = await retrieve(
                        self.memory,
                        user.content,
                        previous_user,
                        self._settings.get_int("memory.retrieval_top_k"),
                    )
                except UserFacingError as exc:
                    # Memory is a help, never a reason the reply fails (e.g. an embedder error).
                    log.warning("memory retrieval failed: %s", exc.code)
        profile = await self._current_profile(conversation)
        snapshot = await self._summaries_snapshot(conversation, lang)
        system_blocks = [
            block
            for block in (
                profile_block(profile, lang),
                snapshot.block if snapshot is not None else None,
                # After the summaries: the stable prefix grows by a block that changes only
                # when a memory does (DESIGN §8 as amended).
                standing.block if standing is not None and standing.fits else None,
            )
            if block is not None
        ]
        # Without retrieval ("all that fit") a question about the past still brings summaries.
        cue = retrieved.cue if retrieved is not None else None
        if rule == "all_that_fit":
            cue = recall_cue(user.content)
        recalled = await self._recall_summaries(conversation, cue, user.content)
        block: ContextBlock | None = (
            memory_block(retrieved.hits, lang, retrieved.memories) if retrieved else None
        )
        block = with_recalled(block, recalled, lang)
        max_output = self._settings.get_int("chat.max_output_tokens")
        assembled = assemble_context(
            ContextInput(
                system_prompt=system_prompt(lang, persona_name, persona_prompt),
                history=history,
                current=current,
                model=resolved.model,
                context_window=context_window,
                max_output_tokens=max_output,
                system_blocks=tuple(system_blocks),
                memory_block=block,
                memory_placement="user" if resolved.config.single_system_message else "system",
                language=lang,
            )
        )
        trace = assembled.trace
        if traced:
            trace = dataclasses.replace(trace, attachments=tuple(traced))
        if snapshot is not None and snapshot.block is not None:
            trace = dataclasses.replace(
                trace, summaries_snapshot_at=snapshot.taken_at.isoformat(timespec="seconds")
            )
        if profile is not None and profile.updated_at is not None:
            trace = dataclasses.replace(
                trace, profile_updated_at=profile.updated_at.isoformat(timespec="seconds")
            )
        if recalled and not trace.memory_dropped:
            trace = dataclasses.replace(
                trace,
                recalled_summaries=tuple(
                    TraceSummary(
                        id=hit.summary.id,
                        title=hit.summary.conversation_title,
                        date=summary_date(hit.summary.created_at),
                        score=hit.score,
                        reason=hit.reason,
                    )
                    for hit in recalled
                ),
            )
        if retrieved is not None:
            trace = dataclasses.replace(
                trace,
                memories=()
                if trace.memory_dropped
                else trace_memories(retrieved.hits, retrieved.memories),
                retrieval_query=retrieved.query,
                recall_cue=retrieved.cue.rule if retrieved.cue else "",
                retrieval_window=retrieved.window_text(),
            )
            if retrieved.hits and not trace.memory_dropped and self.memory is not None:
                await self.memory.mark_accessed([h.id for h in retrieved.hits])
        if rule == "all_that_fit" and standing is not None:
            # Not counted as accesses: every memory goes with every message, so the count
            # would say nothing about which memories matter.
            trace = dataclasses.replace(
                trace,
                memories=trace_standing(standing.memories),
                recall_cue=cue.rule if cue is not None else "",
            )
        if standing is not None or rule == "fixed":
            trace = dataclasses.replace(
                trace,
                memory_rule=rule,
                memory_store_count=standing.count if standing is not None else 0,
                memory_store_tokens=standing.tokens if standing is not None else 0,
                memory_fit_budget=standing.budget if standing is not None else 0,
            )
        tools_on = memory_on and (resolved.config.base_url, resolved.model) not in self._no_tools
        request = ChatRequest(
            model=resolved.model,
            messages=assembled.messages,
            temperature=self._settings.get_float("chat.temperature"),
            max_tokens=max_output,
            tools=tool_definitions(lang) if tools_on else None,
        )
        return request, trace

    async def _reply(
        self, conversation: ConversationRow, user: MessageRow
    ) -> AsyncIterator[ChatEvent]:
        reply = await self._repo.add_message(
            conversation.id or 0,
            "assistant",
            "",
            status=MessageStatus.STREAMING,
            model=conversation.model,
            reply_to_id=user.id,
        )
        reply_id = reply.id or 0
        yield ReplyStarted(reply)
        text = ""
        round_text = ""
        rounds: list[dict[str, Any]] = []
        last_persist = self._now()
        finish_reason: str | None = None
        usage: Usage | None = None
        try:
            resolved = await self._providers.resolve(conversation.provider_id, conversation.model)
            request, trace = await self._build_request(conversation, user, resolved)
            await self._repo.update_message(reply_id, model=resolved.model)
            await self._repo.save_trace(reply_id, trace.to_json())
            messages = list(request.messages)
            for round_no in range(MAX_TOOL_ROUNDS + 1):
                calls: dict[int, dict[str, Any]] = {}
                round_text, finish_reason = "", None
                if round_no == MAX_TOOL_ROUNDS and request.tools is not None:
                    # The last round must answer in words: tools stay declared (the history
                    # holds tool calls) but may not be called.
                    request = dataclasses.replace(
                        request, extra={**request.extra, "tool_choice": "none"}
                    )
                try:
                    # aclosing: a Stop (cancellation) hangs up on the server at once.
                    stream = resolved.provider.stream_chat(
                        dataclasses.replace(request, messages=messages)
                    )
                    async with contextlib.aclosing(stream) as events:
                        async for event in events:
                            if event.retry_in is not None:
                                yield ReplyRetrying(
                                    reply_id, event.retry_in, event.retry_reason or ""
                                )
                                continue
                            for delta in event.tool_calls:
                                _merge_tool_delta(calls, delta)
                            if event.usage is not None:
                                # Each tool round is a request of its own: the reply
                                # used them all.
                                usage = event.usage if usage is None else usage + event.usage
                            if event.finish_reason is not None:
                                finish_reason = event.finish_reason
                            if event.text:
                                text += event.text
                                round_text += event.text
                                yield ReplyDelta(reply_id, event.text, text)
                                if self._now() - last_persist >= self._persist_interval:
                                    await self._repo.update_message(reply_id, content=text)
                                    last_persist = self._now()
                except BadRequest as error:
                    if request.tools is None or round_no > 0 or "tool" not in error.detail.lower():
                        raise
                    # The server does not take tools: remember, and ask again without them.
                    log.info("%s refuses tools; continuing without", resolved.model)
                    self._no_tools.add((resolved.config.base_url, resolved.model))
                    request = dataclasses.replace(request, tools=None)
                    continue
                if not calls or round_no == MAX_TOOL_ROUNDS:
                    break
                tool_calls = [calls[i] for i in sorted(calls)]
                results: list[dict[str, str]] = []
                for call in tool_calls:
                    result_text, saved = await self._run_tool(call, conversation, reply_id)
                    if saved is not None:
                        yield saved
                    results.append({"tool_call_id": call["id"], "content": result_text})
                # The calls are stored and sent on (this round and every later request) with
                # their secrets redacted: a refused save_memory still holds one (issue 19).
                rounds.append(
                    {
                        "content": round_text,
                        "tool_calls": redact_tool_calls(tool_calls),
                        "results": results,
                    }
                )
                messages.extend(_round_messages(rounds[-1]))
        except asyncio.CancelledError:
            # Stop: keep what arrived. Shielded so the write survives the cancellation.
            await asyncio.shield(
                self._repo.update_message(
                    reply_id,
                    content=text,
                    status=MessageStatus.INTERRUPTED,
                    error_code="stopped",
                    tool_calls_json=_transcript(rounds, round_text),
                )
            )
            raise
        except UserFacingError as error:
            status = MessageStatus.INTERRUPTED if text else MessageStatus.ERROR
            row = await self._repo.update_message(
                reply_id,
                content=text,
                status=status,
                error_code=error.code,
                error_detail=error.detail[:2000],
                tool_calls_json=_transcript(rounds, round_text),
            )
            log.info("reply %s failed: %s", reply_id, error.code)
            yield ReplyFailed(row, error)
            return
        interrupted = finish_reason is None
        values: dict[str, Any] = {
            "content": text,
            "status": MessageStatus.INTERRUPTED if interrupted else MessageStatus.COMPLETE,
            **usage_columns(usage),
            "error_code": "stream_ended" if interrupted else None,
            "tool_calls_json": _transcript(rounds, round_text),
        }
        row = await self._repo.update_message(reply_id, **values)
        self._changes.publish(ReplyCompleted(conversation, row))
        yield ReplyFinished(row)

    async def _run_tool(
        self, call: dict[str, Any], conversation: ConversationRow, reply_id: int
    ) -> tuple[str, MemorySaved | None]:
        """Carry out one tool call; return the tool result text and any save to report."""
        name = call["function"]["name"]
        arguments = call["function"]["arguments"]
        if self.memory is None or not self._memory_on(conversation):
            return f"error: the tool {name!r} is not available now", None
        try:
            if name == SEARCH_MEMORY:
                search = parse_search(arguments)
                hits = await self.memory.search(
                    search.query, search.count, search.mode, from_user=False
                )
                return search_results_text(hits), None
            if name != SAVE_MEMORY:
                return f"error: there is no tool named {name!r}", None
            save = parse_save(arguments)
        except ToolArgumentError as exc:
            return str(exc), None
        approval = self._settings.get_str("memory.approval")
        if approval == "never":
            return REFUSAL_TEXT["disabled"], None
        if approval == "ask":
            decided = await self.approver(save, reply_id) if self.approver is not None else None
            if decided is None:
                return REFUSAL_TEXT["declined"], None
            save = decided
        try:
            result = await self.memory.save(
                save.content,
                save.kind,
                source="assistant_action",
                importance=save.importance,
                confidence=save.confidence,
                tags=save.tags,
                trigger_context=save.trigger_context,
                supersedes=save.supersedes,
                origin_conversation_id=conversation.id,
                origin_message_id=reply_id,
            )
        except InvalidInput as exc:
            return REFUSAL_TEXT.get(exc.code, f"not saved: {exc.code}"), None
        event = MemorySaved(reply_id, result.id, result.merged, result.superseded, save.content)
        return saved_text(result), event


def _traced(message: str, sent: Sequence[SentAttachment]) -> list[TraceAttachment]:
    """How each of a message's attachments went into a request (its trace's entries)."""
    entries = []
    for item in sent:
        how = item.kind if item.data is not None else "note"
        if item.data is None and item.kind == attaching.DOCUMENT:
            how = "missing"
        entries.append(TraceAttachment(message, item.kind, item.name, item.tokens, how))
    return entries


def _merge_tool_delta(calls: dict[int, dict[str, Any]], delta: ToolCallDelta) -> None:
    call = calls.setdefault(
        delta.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
    )
    call["id"] = delta.id or call["id"] or f"call_{delta.index}"
    call["function"]["name"] += delta.name or ""
    call["function"]["arguments"] += delta.arguments


def _round_messages(round_: dict[str, Any]) -> list[Message]:
    messages: list[Message] = [
        {
            "role": "assistant",
            "content": round_["content"] or None,
            "tool_calls": round_["tool_calls"],
        }
    ]
    messages.extend(
        {"role": "tool", "tool_call_id": r["tool_call_id"], "content": r["content"]}
        for r in round_["results"]
    )
    return messages


def _transcript(rounds: list[dict[str, Any]], final_text: str) -> str | None:
    """The tool rounds of a reply, stored with it so the history can be sent again exactly."""
    if not rounds:
        return None
    return json.dumps({"rounds": rounds, "final": final_text}, ensure_ascii=False)


def messages_to_wire(row: MessageRow) -> list[Message]:
    """The OpenAI-format messages a stored message stands for.

    A reply that used tools expands to its tool rounds (assistant tool calls + tool results)
    followed by its final text, so the model sees the history exactly as it happened.
    """
    if row.role == "assistant" and row.tool_calls_json:
        data = json.loads(row.tool_calls_json)
        if isinstance(data, dict) and "rounds" in data:
            messages: list[Message] = []
            for round_ in data["rounds"]:
                messages.extend(_round_messages(round_))
            if data.get("final"):
                messages.append({"role": "assistant", "content": data["final"]})
            return messages
    return [message_to_wire(row)]


__all__ = [
    "ChatService",
    "MessageRoom",
    "clean_user_text",
    "message_to_wire",
    "messages_to_wire",
]
