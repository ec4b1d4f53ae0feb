"""The SQLite side of summary sync: session summaries and each conversation's summary state.

Summaries are items of their own (a gid each), so two devices that summarised one conversation
offline both keep both: the newer is the conversation's summary, the other stays in its history.
A summary names its conversation and the last message it covers by global ids; where the
conversation is not on this device (conversations do not sync yet) the summary is kept unlinked,
under the title it was written with, like an imported one.

The summary state (what the latest summary or SKIP covered, when it succeeded) is one item per
conversation gid, and the newest success wins (``SUMMARY_STATE.newer_by``): a summary made on
one device is not made again on the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from sqlmodel import Session, col, delete, select

from etos_desktop.core.storage.tables import SessionSummaryRow, SummaryStateRow, SummaryVectorRow
from etos_desktop.core.summaries import store
from etos_desktop.core.sync.document import SUMMARIES, SUMMARY_STATE, MemoryDocument, Record, newer
from etos_desktop.core.sync.layers import (
    conversation_gids,
    conversation_ids,
    message_gids,
    message_ids,
    with_links,
)
from etos_desktop.core.sync.memories import Applied, iso, parse_time

_TIMES: Final = ("created_at", "updated_at", "archived_at")


def _record(
    row: SessionSummaryRow, conversations: dict[int, str], messages: dict[int, str]
) -> Record:
    return {
        "conversation": conversations.get(row.conversation_id or 0),
        "conversation_title": row.conversation_title,
        "content": row.content,
        "language": row.language,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "covers_until": messages.get(row.covers_until_message_id or 0),
        "user_turns_covered": int(row.user_turns_covered),
        "source": row.source,
        "edited_by_user": bool(row.edited_by_user),
        "archived_at": iso(row.archived_at),
    }


def _checked(record: Record) -> dict[str, Any]:
    content = record.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("no content")
    for name in ("conversation_title", "language", "source"):
        if not isinstance(record.get(name), str):
            raise ValueError(f"{name} is not text")
    # The document keeps numbers as floats (JSON's numbers): a count is a whole one.
    turns = record.get("user_turns_covered")
    if not isinstance(turns, int | float) or isinstance(turns, bool) or turns < 0:
        raise ValueError("user_turns_covered is not a count")
    if turns != int(turns):
        raise ValueError("user_turns_covered is not a count")
    out = dict(record)
    out["user_turns_covered"] = int(turns)
    for name in _TIMES:
        out[name] = parse_time(record.get(name))
    if out["created_at"] is None or out["updated_at"] is None:
        raise ValueError("a time is missing")
    out["edited_by_user"] = bool(record.get("edited_by_user"))
    return out


class SummaryStore:
    """Session summaries: one item per summary, deletes as tombstones."""

    spec = SUMMARIES
    tombstones = True
    links: tuple[str, ...] = ("conversation", "covers_until")

    def records(self, session: Session) -> dict[str, Record]:
        """Every summary as a record."""
        rows = session.exec(select(SessionSummaryRow).order_by(col(SessionSummaryRow.id))).all()
        conversations = conversation_gids(session, (r.conversation_id for r in rows))
        messages = message_gids(session, (r.covers_until_message_id for r in rows))
        return {row.gid: _record(row, conversations, messages) for row in rows}

    def apply(
        self, session: Session, doc: MemoryDocument, gids: Iterable[str], *, now: datetime
    ) -> Applied:
        """Insert, update and delete the summaries the merged files changed."""
        del now
        result = Applied()
        items = doc.layer(SUMMARIES)
        wanted = sorted(set(gids))
        rows = {
            row.gid: row
            for row in session.exec(
                select(SessionSummaryRow).where(col(SessionSummaryRow.gid).in_(wanted))
            ).all()
        }
        records = {gid: items.record(gid) for gid in wanted}
        conversations = conversation_ids(
            session, (r.get("conversation") for r in records.values() if r)
        )
        messages = message_ids(session, (r.get("covers_until") for r in records.values() if r))
        deletes = [
            row.id for gid, row in rows.items() if items.is_deleted(gid) and row.id is not None
        ]
        for gid in wanted:
            record = records[gid]
            if record is None:
                continue
            try:
                values = _checked(record)
            except ValueError as exc:
                result.invalid.append((gid, str(exc)))
                continue
            row = rows.get(gid)
            if row is None:
                row = SessionSummaryRow(
                    gid=gid,
                    content="",
                    created_at=values["created_at"],
                    updated_at=values["updated_at"],
                )
                result.inserted += 1
            else:
                here = _record(
                    row,
                    conversation_gids(session, [row.conversation_id]),
                    message_gids(session, [row.covers_until_message_id]),
                )
                if with_links(here, record, self.links) == record:
                    continue
                result.updated += 1
                if row.content != values["content"] and row.id is not None:
                    # The old vectors describe the old text; recall embeds the new one.
                    session.exec(
                        delete(SummaryVectorRow).where(col(SummaryVectorRow.summary_id) == row.id)
                    )
            row.conversation_id = conversations.get(str(values.get("conversation")))
            row.conversation_title = values["conversation_title"]
            row.content = values["content"]
            row.language = values["language"]
            row.created_at = values["created_at"]
            row.updated_at = values["updated_at"]
            row.covers_until_message_id = messages.get(str(values.get("covers_until")))
            row.user_turns_covered = values["user_turns_covered"]
            row.source = values["source"]
            row.edited_by_user = values["edited_by_user"]
            row.archived_at = values["archived_at"]
            session.add(row)
        if deletes:
            store.delete_many(session, deletes, commit=False)
            result.deleted = len(deletes)
        session.flush()
        return result


class SummaryStateStore:
    """Each conversation's summary bookkeeping, by conversation gid; the newest success wins."""

    spec = SUMMARY_STATE
    tombstones = False
    links: tuple[str, ...] = ("covered_until",)

    def records(self, session: Session) -> dict[str, Record]:
        """The state of every conversation that has succeeded once (a summary or a SKIP)."""
        rows = session.exec(
            select(SummaryStateRow).where(col(SummaryStateRow.succeeded_at).is_not(None))
        ).all()
        conversations = conversation_gids(session, (r.conversation_id for r in rows))
        messages = message_gids(session, (r.covered_until_message_id for r in rows))
        return {
            conversations[row.conversation_id]: {
                "covered_until": messages.get(row.covered_until_message_id or 0),
                "succeeded_at": iso(row.succeeded_at),
                "last_outcome": row.last_outcome,
            }
            for row in rows
            if row.conversation_id in conversations
        }

    def apply(
        self, session: Session, doc: MemoryDocument, gids: Iterable[str], *, now: datetime
    ) -> Applied:
        """Take another device's newer success; a conversation not on this device waits."""
        del now
        result = Applied()
        items = doc.layer(SUMMARY_STATE)
        records = {gid: items.record(gid) for gid in sorted(set(gids))}
        conversations = conversation_ids(session, records)
        messages = message_ids(session, (r.get("covered_until") for r in records.values() if r))
        for gid, record in records.items():
            conversation_id = conversations.get(gid)
            if record is None or conversation_id is None:
                continue
            succeeded = parse_time(record.get("succeeded_at"))
            row = session.get(SummaryStateRow, conversation_id)
            if row is None:
                row = SummaryStateRow(conversation_id=conversation_id)
            if succeeded is None or not newer(record["succeeded_at"], iso(row.succeeded_at)):
                continue
            covered = messages.get(str(record.get("covered_until")))
            row.covered_until_message_id = covered
            row.succeeded_at = succeeded
            if row.attempted_at is None or row.attempted_at < succeeded:
                row.attempted_at = succeeded
                row.retry_at = None
                row.error_count = 0
                row.last_error = None
            outcome = record.get("last_outcome")
            row.last_outcome = outcome if isinstance(outcome, str) else row.last_outcome
            session.add(row)
            result.updated += 1
        session.flush()
        return result
