"""Async repositories over the DB worker thread.

Every public coroutine runs its query on the database's one worker thread and returns detached
rows. Nothing here touches Qt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, or_, text, update
from sqlmodel import Session, col, delete, select

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.storage import message_fts, traces
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import (
    ContextTraceRow,
    ConversationRow,
    MessageRow,
    MessageStatus,
)

#: Columns that ``update_message`` may change.
_MESSAGE_FIELDS = frozenset(
    {
        "content",
        "status",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "tool_calls_json",
        "error_code",
        "error_detail",
        "is_current",
        "hidden_at",
    }
)
_CONVERSATION_FIELDS = frozenset(
    {
        "title",
        "pinned",
        "archived",
        "temporary",
        "provider_id",
        "model",
        "persona_name",
        "persona_prompt",
    }
)


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class ChatRepository:
    """Conversations, messages and context traces.

    Every write of a message keeps the message search index (``message_fts``) in step, in the
    same transaction: a message is indexed once it is no longer streaming, re-indexed when its
    text changes, and taken out when it (or its conversation) is deleted.

    Args:
        db: The open database.
        after_delete: Called on the event loop after a delete took messages out of the search
            index (the indexer then merges the index, so their words leave the file).
    """

    def __init__(self, db: Database, *, after_delete: Callable[[], None] | None = None) -> None:
        self._db = db
        self._after_delete = after_delete

    def _deleted_indexed(self) -> None:
        if self._after_delete is not None:
            self._after_delete()

    def _now(self) -> datetime:
        return self._db.clock.now()

    # -- conversations ------------------------------------------------------------------------

    async def create_conversation(
        self,
        title: str = "",
        *,
        temporary: bool = False,
        provider_id: str | None = None,
        model: str | None = None,
    ) -> ConversationRow:
        """Create and return a new, empty conversation."""
        now = self._now()

        def work(session: Session) -> ConversationRow:
            row = ConversationRow(
                title=title,
                created_at=now,
                updated_at=now,
                temporary=temporary,
                provider_id=provider_id,
                model=model,
            )
            session.add(row)
            session.commit()
            session.refresh(row)
            return row

        return await self._db.run(work)

    async def get_conversation(self, conversation_id: int) -> ConversationRow | None:
        """Return one conversation, or ``None`` if it does not exist."""
        return await self._db.run(lambda s: s.get(ConversationRow, conversation_id))

    async def list_conversations(
        self,
        *,
        archived: bool | None = False,
        search: str = "",
        limit: int | None = None,
        after: ConversationRow | None = None,
    ) -> list[ConversationRow]:
        """List conversations, pinned first, most recently updated next.

        Args:
            archived: ``False``: the active ones; ``True``: the archived ones; ``None``: both.
            search: Keep conversations whose title or any visible message contains this text.
            limit: At most this many.
            after: Only those after this one in that order (the next window of a list that
                fetches as it scrolls: a conversation changed meanwhile moves no other).
        """
        return await self._db.run(
            lambda session: self._conversations(session, archived, search, limit, after)
        )

    async def list_conversations_with_previews(
        self,
        *,
        archived: bool | None = False,
        search: str = "",
        limit: int | None = None,
        after: ConversationRow | None = None,
        chars: int = 300,
    ) -> tuple[list[ConversationRow], dict[int, str]]:
        """``list_conversations`` and the ``last_messages`` of its rows, in one trip to the DB."""

        def work(session: Session) -> tuple[list[ConversationRow], dict[int, str]]:
            rows = self._conversations(session, archived, search, limit, after)
            ids = [r.id for r in rows if r.id is not None]
            return rows, self._last_messages(session, ids, chars)

        return await self._db.run(work)

    @staticmethod
    def _conversations(
        session: Session,
        archived: bool | None,
        search: str,
        limit: int | None,
        after: ConversationRow | None,
    ) -> list[ConversationRow]:
        """The query of ``list_conversations`` (on the DB thread)."""
        query = select(ConversationRow)
        if archived is not None:
            query = query.where(ConversationRow.archived == archived)
        if after is not None:
            pinned, updated, last = (
                col(ConversationRow.pinned),
                col(ConversationRow.updated_at),
                col(ConversationRow.id),
            )
            # Booleans as 0/1: SQLAlchemy compares a Python bool only with = and IS.
            was_pinned = int(bool(after.pinned))
            query = query.where(
                or_(
                    pinned < was_pinned,
                    and_(
                        pinned == was_pinned,
                        or_(
                            updated < after.updated_at,
                            and_(updated == after.updated_at, last < (after.id or 0)),
                        ),
                    ),
                )
            )
        needle = search.strip()
        if needle:
            pattern = _like_pattern(needle)
            in_messages = (
                select(MessageRow.conversation_id)
                .where(col(MessageRow.content).like(pattern, escape="\\"))
                .where(col(MessageRow.hidden_at).is_(None))
            )
            query = query.where(
                or_(
                    col(ConversationRow.title).like(pattern, escape="\\"),
                    col(ConversationRow.id).in_(in_messages),
                )
            )
        query = query.order_by(
            col(ConversationRow.pinned).desc(),
            col(ConversationRow.updated_at).desc(),
            col(ConversationRow.id).desc(),
        )
        if limit is not None:
            query = query.limit(limit)
        return list(session.exec(query).all())

    async def last_messages(
        self, conversation_ids: Sequence[int], *, chars: int = 300
    ) -> dict[int, str]:
        """The start of each conversation's last visible message (the sidebar's preview).

        A conversation whose history holds no text (only tool calls, or nothing) is left out.

        Args:
            conversation_ids: The conversations (one window of the sidebar).
            chars: How much of each message to read.
        """
        ids = sorted({int(i) for i in conversation_ids})
        return await self._db.run(lambda session: self._last_messages(session, ids, chars))

    @staticmethod
    def _last_messages(session: Session, ids: Sequence[int], chars: int) -> dict[int, str]:
        """The query of ``last_messages`` (on the DB thread)."""
        if not ids:
            return {}
        # One indexed look-up per conversation, newest message first (the index on
        # conversation_id holds the id): a 5,000-message conversation reads one row.
        statement = text(
            "SELECT c.id, (SELECT substr(m.content, 1, :chars) FROM message AS m"
            " WHERE m.conversation_id = c.id AND m.hidden_at IS NULL AND m.is_current = 1"
            " AND m.role IN ('user', 'assistant') AND m.content != ''"
            " ORDER BY m.id DESC LIMIT 1)"
            " FROM conversation AS c WHERE c.id IN :ids"
        ).bindparams(bindparam("ids", expanding=True))
        rows = session.connection().execute(statement, {"ids": ids, "chars": chars})
        return {int(cid): str(content) for cid, content in rows if content}

    async def update_conversation(self, conversation_id: int, **values: Any) -> ConversationRow:
        """Change fields of a conversation (title, pinned, archived, model, persona…).

        Raises:
            InvalidInput: Unknown field or conversation.
        """
        unknown = set(values) - _CONVERSATION_FIELDS
        if unknown:
            raise InvalidInput(f"unknown conversation fields {sorted(unknown)}")
        now = self._now()

        def work(session: Session) -> ConversationRow:
            row = session.get(ConversationRow, conversation_id)
            if row is None:
                raise InvalidInput(f"no conversation {conversation_id}", reason="missing")
            for key, value in values.items():
                setattr(row, key, value)
            if set(values) - {"pinned", "archived"}:
                row.updated_at = now
            session.add(row)
            session.commit()
            session.refresh(row)
            return row

        return await self._db.run(work)

    async def delete_conversation(self, conversation_id: int) -> None:
        """Delete a conversation with all its messages and traces."""

        def work(session: Session) -> int:
            # The cascade deletes the messages in SQL: their index entries go first.
            removed = message_fts.remove(
                session, message_fts.conversation_rows(session, conversation_id)
            )
            session.exec(delete(ConversationRow).where(col(ConversationRow.id) == conversation_id))
            session.commit()
            return removed

        if await self._db.run(work):
            self._deleted_indexed()

    async def delete_empty_conversations(self) -> int:
        """Delete conversations that hold no message at all (left by earlier versions' "New").

        A conversation now gets its row with its first message, so an empty one holds nothing.

        Returns:
            How many were deleted.
        """

        def work(session: Session) -> int:
            has_messages = select(MessageRow.conversation_id).distinct()
            result = session.exec(
                delete(ConversationRow).where(col(ConversationRow.id).not_in(has_messages))
            )
            session.commit()
            return int(result.rowcount or 0)

        return await self._db.run(work)

    # -- messages -----------------------------------------------------------------------------

    async def add_message(
        self,
        conversation_id: int,
        role: str,
        content: str,
        *,
        status: MessageStatus = MessageStatus.COMPLETE,
        model: str | None = None,
        reply_to_id: int | None = None,
        tool_calls: Sequence[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
    ) -> MessageRow:
        """Append a message; a new reply to ``reply_to_id`` becomes its current version."""
        now = self._now()

        def work(session: Session) -> MessageRow:
            conversation = session.get(ConversationRow, conversation_id)
            if conversation is None:
                raise InvalidInput(f"no conversation {conversation_id}", reason="missing")
            if reply_to_id is not None:
                session.exec(
                    update(MessageRow)
                    .where(col(MessageRow.reply_to_id) == reply_to_id)
                    .values(is_current=False)
                )
            row = MessageRow(
                conversation_id=conversation_id,
                role=role,
                content=content,
                created_at=now,
                status=status,
                model=model,
                reply_to_id=reply_to_id,
                tool_calls_json=json.dumps(list(tool_calls)) if tool_calls else None,
                tool_call_id=tool_call_id,
            )
            conversation.updated_at = now
            session.add(row)
            session.add(conversation)
            session.flush()
            if status != MessageStatus.STREAMING and row.id is not None:
                message_fts.add(session, [(row.id, content)])
            session.commit()
            session.refresh(row)
            return row

        return await self._db.run(work)

    async def update_message(self, message_id: int, **values: Any) -> MessageRow:
        """Change fields of a message (content while streaming, status, usage, error…)."""
        unknown = set(values) - _MESSAGE_FIELDS
        if unknown:
            raise InvalidInput(f"unknown message fields {sorted(unknown)}")

        def work(session: Session) -> MessageRow:
            row = session.get(MessageRow, message_id)
            if row is None:
                raise InvalidInput(f"no message {message_id}", reason="missing")
            old_content, was_streaming = row.content, row.status == MessageStatus.STREAMING
            for key, value in values.items():
                setattr(row, key, value)
            session.add(row)
            streaming = row.status == MessageStatus.STREAMING
            if not streaming and (was_streaming or row.content != old_content):
                # A reply is indexed when it ends (not at each throttled save of its growth).
                message_fts.replace(session, message_id, old_content, row.content)
            session.commit()
            session.refresh(row)
            return row

        return await self._db.run(work)

    async def get_message(self, message_id: int) -> MessageRow | None:
        """Return one message, or ``None``."""
        return await self._db.run(lambda s: s.get(MessageRow, message_id))

    async def delete_message(self, message_id: int) -> None:
        """Delete one message; deleting a user message deletes its replies too."""

        def work(session: Session) -> int:
            doomed = session.exec(
                select(MessageRow.id, MessageRow.content).where(
                    or_(
                        col(MessageRow.reply_to_id) == message_id,
                        col(MessageRow.id) == message_id,
                    )
                )
            ).all()
            removed = message_fts.remove(
                session, [(int(mid), content) for mid, content in doomed if mid is not None]
            )
            session.exec(delete(MessageRow).where(col(MessageRow.reply_to_id) == message_id))
            session.exec(delete(MessageRow).where(col(MessageRow.id) == message_id))
            session.commit()
            return removed

        if await self._db.run(work):
            self._deleted_indexed()

    async def current_history(self, conversation_id: int) -> list[MessageRow]:
        """The conversation's current history: visible messages with current replies, in order."""

        def work(session: Session) -> list[MessageRow]:
            query = (
                select(MessageRow)
                .where(MessageRow.conversation_id == conversation_id)
                .where(col(MessageRow.hidden_at).is_(None))
                .where(col(MessageRow.is_current).is_(True))
                .order_by(col(MessageRow.id))
            )
            return list(session.exec(query).all())

        return await self._db.run(work)

    async def history_page(
        self, conversation_id: int, *, before_id: int | None = None, limit: int = 50
    ) -> list[MessageRow]:
        """A page of the current history ending just before ``before_id`` (newest page if None).

        Returned in chronological order; used to open long conversations lazily.
        """

        def work(session: Session) -> list[MessageRow]:
            query = (
                select(MessageRow)
                .where(MessageRow.conversation_id == conversation_id)
                .where(col(MessageRow.hidden_at).is_(None))
                .where(col(MessageRow.is_current).is_(True))
            )
            if before_id is not None:
                query = query.where(col(MessageRow.id) < before_id)
            rows = list(session.exec(query.order_by(col(MessageRow.id).desc()).limit(limit)).all())
            rows.reverse()
            return rows

        return await self._db.run(work)

    async def reply_versions(self, user_message_id: int) -> list[MessageRow]:
        """Every reply to one user message (regenerated versions), oldest first."""

        def work(session: Session) -> list[MessageRow]:
            query = (
                select(MessageRow)
                .where(MessageRow.reply_to_id == user_message_id)
                .order_by(col(MessageRow.id))
            )
            return list(session.exec(query).all())

        return await self._db.run(work)

    async def reply_version_ids(self, user_message_ids: Sequence[int]) -> dict[int, list[int]]:
        """For each user message, the ids of its reply versions, oldest first (one query)."""
        wanted = list(user_message_ids)
        if not wanted:
            return {}

        def work(session: Session) -> dict[int, list[int]]:
            query = (
                select(MessageRow.reply_to_id, MessageRow.id)
                .where(col(MessageRow.reply_to_id).in_(wanted))
                .order_by(col(MessageRow.id))
            )
            versions: dict[int, list[int]] = {}
            for reply_to_id, message_id in session.exec(query).all():
                if reply_to_id is not None and message_id is not None:
                    versions.setdefault(reply_to_id, []).append(message_id)
            return versions

        return await self._db.run(work)

    async def set_current_reply(self, message_id: int) -> None:
        """Make one reply version the current one among its siblings."""

        def work(session: Session) -> None:
            row = session.get(MessageRow, message_id)
            if row is None or row.reply_to_id is None:
                raise InvalidInput(f"message {message_id} is not a reply", reason="missing")
            session.exec(
                update(MessageRow)
                .where(col(MessageRow.reply_to_id) == row.reply_to_id)
                .values(is_current=False)
            )
            row.is_current = True
            session.add(row)
            session.commit()

        await self._db.run(work)

    async def hide_after(self, message_id: int, *, inclusive: bool = False) -> int:
        """Hide every message of the conversation after ``message_id`` (edit-and-resend).

        Args:
            message_id: The last message that stays visible (with ``inclusive``, the first hidden).
            inclusive: Hide ``message_id`` itself too.

        Returns:
            How many messages were hidden.
        """
        now = self._now()

        def work(session: Session) -> int:
            row = session.get(MessageRow, message_id)
            if row is None:
                raise InvalidInput(f"no message {message_id}", reason="missing")
            result = session.exec(
                update(MessageRow)
                .where(col(MessageRow.conversation_id) == row.conversation_id)
                .where(
                    col(MessageRow.id) >= message_id
                    if inclusive
                    else col(MessageRow.id) > message_id
                )
                .where(col(MessageRow.hidden_at).is_(None))
                .values(hidden_at=now)
            )
            session.commit()
            return int(result.rowcount or 0)

        return await self._db.run(work)

    # -- traces -------------------------------------------------------------------------------

    async def save_trace(self, message_id: int, trace_json: str) -> None:
        """Store (or replace) what was sent for an assistant message, and which memories it cites."""
        now = self._now()

        def work(session: Session) -> None:
            existing = session.get(ContextTraceRow, message_id)
            if existing is None:
                existing = ContextTraceRow(message_id=message_id, created_at=now, trace_json="")
            existing.trace_json = trace_json
            session.add(existing)
            session.flush()
            traces.link(session, message_id, trace_json)
            session.commit()

        await self._db.run(work)

    async def get_trace(self, message_id: int) -> str | None:
        """Return the stored trace JSON of an assistant message, if any."""

        def work(session: Session) -> str | None:
            row = session.get(ContextTraceRow, message_id)
            return None if row is None else row.trace_json

        return await self._db.run(work)
