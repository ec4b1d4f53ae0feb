"""Session summaries in the export document and its import (DESIGN §9).

The export of all memory layers (``core/transfer/document.py``) carries a ``"summaries"`` list
beside ``"memories"``: every summary, archived ones and earlier versions too, with the title of
its conversation and, to find that conversation again in the same database, the conversation's
id and creation time. Import is strict like the memories' import: every entry is checked (types,
length, secrets), matched against the local summaries, previewed, and written in the same
transaction as the memories — all of it or nothing.

Matching an entry to a local summary, in this order:

1. the same id *and* the same ``created_at`` (an earlier export of this database): the local
   summary takes the entry's text and archived state if they differ;
2. the same text (up to case, width, spacing and punctuation) written at the same time: it is
   here already.

Everything else is added (source ``imported``), linked to its conversation only when a local
conversation has the entry's conversation id *and* creation time; otherwise it stands alone,
with its conversation's title.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from sqlmodel import Session, col, select

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.storage.tables import ConversationRow, SessionSummaryRow
from etos_desktop.core.summaries import store
from etos_desktop.core.summaries.records import Summary, SummarySource
from etos_desktop.core.text.checks import check_content
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.segmentation import duplicate_key

#: The longest summary text accepted from a file (the editor's limit).
MAX_SUMMARY_CHARS: Final = 2000
#: The longest conversation title accepted from a file.
MAX_TITLE_CHARS: Final = 500

SummaryProblemReason = Literal["not_an_object", "bad_field", "empty", "too_long", "secret"]


@dataclass(frozen=True)
class SummaryEntry:
    """One valid summary entry of an import file."""

    index: int
    id: int | None
    conversation_id: int | None
    conversation_created_at: datetime | None
    conversation_title: str
    content: str
    language: str
    created_at: datetime
    updated_at: datetime
    covers_until_message_id: int | None
    user_turns_covered: int
    edited_by_user: bool
    archived_at: datetime | None


@dataclass(frozen=True)
class SummaryProblem:
    """A summary entry that will not be imported, and why."""

    index: int
    reason: SummaryProblemReason
    field: str | None = None


@dataclass(frozen=True)
class SummaryPlan:
    """What an import does to the summaries.

    Attributes:
        to_add: Entries that become new summaries.
        to_update: Entries matched by id that change their local summary (text or archived).
        unchanged: Entries that are here already.
        invalid: Entries that are skipped, with reasons.
    """

    to_add: tuple[SummaryEntry, ...] = ()
    to_update: tuple[tuple[SummaryEntry, Summary], ...] = ()
    unchanged: int = 0
    invalid: tuple[SummaryProblem, ...] = ()

    @property
    def has_changes(self) -> bool:
        """Whether applying would change anything."""
        return bool(self.to_add or self.to_update)


# -- export -----------------------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def export_records(
    summaries: Iterable[Summary], conversations_created: Mapping[int, datetime]
) -> list[dict[str, Any]]:
    """Summaries as export entries (JSON-ready), oldest first.

    Args:
        summaries: Every summary.
        conversations_created: When each linked conversation was created, by id.
    """
    records = []
    for summary in sorted(summaries, key=lambda s: (s.created_at, s.id)):
        conversation = summary.conversation_id
        records.append(
            {
                "id": summary.id,
                "conversation_id": conversation,
                "conversation_created_at": _iso(conversations_created.get(conversation))
                if conversation is not None
                else None,
                "conversation_title": summary.conversation_title,
                "content": summary.content,
                "language": summary.language,
                "created_at": _iso(summary.created_at),
                "updated_at": _iso(summary.updated_at),
                "covers_until_message_id": summary.covers_until_message_id,
                "user_turns_covered": summary.user_turns_covered,
                "source": summary.source,
                "edited_by_user": summary.edited_by_user,
                "archived": summary.archived_at is not None,
                "archived_at": _iso(summary.archived_at),
                "current": summary.current,
            }
        )
    return records


def local_summaries(session: Session) -> tuple[list[Summary], dict[int, datetime]]:
    """Every summary, and the creation times of their conversations (on the DB thread)."""
    summaries = store.list_all(session)
    ids = {s.conversation_id for s in summaries if s.conversation_id is not None}
    created: dict[int, datetime] = {}
    if ids:
        rows = session.exec(
            select(ConversationRow.id, ConversationRow.created_at).where(
                col(ConversationRow.id).in_(ids)
            )
        ).all()
        created = {int(i): c for i, c in rows if i is not None}
    return summaries, created


# -- parsing ----------------------------------------------------------------------------------


class _Bad(Exception):
    def __init__(self, reason: SummaryProblemReason, field: str | None = None) -> None:
        super().__init__(reason)
        self.reason: SummaryProblemReason = reason
        self.field = field


def _datetime(raw: Mapping[str, Any], name: str, *, optional: bool) -> datetime | None:
    value = raw.get(name)
    if value is None:
        if optional:
            return None
        raise _Bad("bad_field", name)
    if not isinstance(value, str):
        raise _Bad("bad_field", name)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise _Bad("bad_field", name) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _int(raw: Mapping[str, Any], name: str, *, default: int | None = None) -> int | None:
    value = raw.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**62:
        raise _Bad("bad_field", name)
    return value


def _entry(index: int, raw: Mapping[str, Any], now: datetime) -> SummaryEntry:
    content = raw.get("content")
    if not isinstance(content, str):
        raise _Bad("bad_field", "content")
    try:
        content = check_content(content, max_chars=MAX_SUMMARY_CHARS)
    except InvalidInput as exc:
        reasons: dict[str, SummaryProblemReason] = {
            "memory_empty": "empty",
            "memory_too_long": "too_long",
            "memory_secret": "secret",
        }
        raise _Bad(reasons.get(exc.code, "bad_field"), "content") from exc
    title = raw.get("conversation_title", "")
    if not isinstance(title, str):
        raise _Bad("bad_field", "conversation_title")
    if len(title) > MAX_TITLE_CHARS:
        raise _Bad("too_long", "conversation_title")
    language = raw.get("language", "en")
    if language not in ("en", "zh"):
        raise _Bad("bad_field", "language")
    archived = raw.get("archived", raw.get("archived_at") is not None)
    edited = raw.get("edited_by_user", False)
    if not isinstance(archived, bool) or not isinstance(edited, bool):
        raise _Bad("bad_field", "archived" if not isinstance(archived, bool) else "edited_by_user")
    created = _datetime(raw, "created_at", optional=True) or now
    archived_at = _datetime(raw, "archived_at", optional=True) if archived else None
    return SummaryEntry(
        index=index,
        id=_int(raw, "id"),
        conversation_id=_int(raw, "conversation_id"),
        conversation_created_at=_datetime(raw, "conversation_created_at", optional=True),
        conversation_title=clean_text(title).strip(),
        content=content,
        language=str(language),
        created_at=created,
        updated_at=_datetime(raw, "updated_at", optional=True) or created,
        covers_until_message_id=_int(raw, "covers_until_message_id"),
        user_turns_covered=_int(raw, "user_turns_covered", default=0) or 0,
        edited_by_user=edited,
        archived_at=(archived_at or now) if archived else None,
    )


def parse_entries(
    raw_entries: object, now: datetime
) -> tuple[tuple[SummaryEntry, ...], tuple[SummaryProblem, ...]]:
    """Check the ``"summaries"`` list of an import file.

    Args:
        raw_entries: The list (``None``: a file without summaries).
        now: The time given to entries without dates.

    Returns:
        The valid entries and the refused ones.

    Raises:
        ValueError: ``raw_entries`` is present but not a list (the caller refuses the file).
    """
    if raw_entries is None:
        return (), ()
    if not isinstance(raw_entries, list):
        raise ValueError("'summaries' is not a list")
    entries: list[SummaryEntry] = []
    problems: list[SummaryProblem] = []
    for index, raw in enumerate(raw_entries):
        if not isinstance(raw, dict):
            problems.append(SummaryProblem(index, "not_an_object"))
            continue
        try:
            entries.append(_entry(index, raw, now))
        except _Bad as bad:
            problems.append(SummaryProblem(index, bad.reason, bad.field))
    return tuple(entries), tuple(problems)


# -- planning and writing -----------------------------------------------------------------------


def plan(
    entries: Sequence[SummaryEntry],
    problems: Sequence[SummaryProblem],
    local: Sequence[Summary],
) -> SummaryPlan:
    """Match the entries against the local summaries (see the module docstring)."""
    by_id = {s.id: s for s in local}
    by_text = {(duplicate_key(s.content), s.created_at) for s in local}
    to_add: list[SummaryEntry] = []
    to_update: list[tuple[SummaryEntry, Summary]] = []
    unchanged = 0
    claimed: set[int] = set()
    for entry in entries:
        same = by_id.get(entry.id) if entry.id is not None else None
        if same is not None and same.id not in claimed and same.created_at == entry.created_at:
            claimed.add(same.id)
            if same.content != entry.content or same.archived != (entry.archived_at is not None):
                to_update.append((entry, same))
            else:
                unchanged += 1
        elif (duplicate_key(entry.content), entry.created_at) in by_text:
            unchanged += 1
        else:
            to_add.append(entry)
    return SummaryPlan(tuple(to_add), tuple(to_update), unchanged, tuple(problems))


class SummariesStale(InvalidInput):
    """A summary changed between the preview and the import; nothing was changed."""

    code = "memory_import_stale"


def write(session: Session, summary_plan: SummaryPlan, now: datetime) -> list[int]:
    """Write a plan in the caller's transaction (on the DB thread; the caller commits).

    Returns:
        The ids of the new summaries.

    Raises:
        SummariesStale: A matched summary was changed or deleted since the preview.
    """
    for entry, local in summary_plan.to_update:
        row = session.get(SessionSummaryRow, local.id)
        if row is None or row.updated_at != local.updated_at:
            raise SummariesStale(f"summary {local.id} changed", summary_id=local.id)
        row.content = entry.content
        row.archived_at = (row.archived_at or entry.archived_at) if entry.archived_at else None
        row.edited_by_user = row.edited_by_user or entry.edited_by_user
        row.updated_at = now
        session.add(row)
    added: list[SessionSummaryRow] = []
    for entry in summary_plan.to_add:
        conversation_id = None
        covers = None
        if entry.conversation_id is not None and entry.conversation_created_at is not None:
            conversation = session.get(ConversationRow, entry.conversation_id)
            if (
                conversation is not None
                and conversation.created_at == entry.conversation_created_at
            ):
                conversation_id = conversation.id
                covers = entry.covers_until_message_id
        row = SessionSummaryRow(
            conversation_id=conversation_id,
            conversation_title=entry.conversation_title,
            content=entry.content,
            language=entry.language,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
            covers_until_message_id=covers,
            user_turns_covered=entry.user_turns_covered,
            source=SummarySource.IMPORTED,
            edited_by_user=entry.edited_by_user,
            archived_at=entry.archived_at,
        )
        session.add(row)
        added.append(row)
    session.flush()
    return [row.id for row in added if row.id is not None]


# -- Markdown ---------------------------------------------------------------------------------


def markdown_lines(
    summaries: Sequence[Summary],
    *,
    heading: str,
    untitled: str,
    earlier: str,
    archived: str,
    tz: Any,
    escape: Any,
) -> list[str]:
    """The summaries section of the Markdown export: newest first, current ones marked by nothing.

    Args:
        summaries: Every summary.
        heading: The section heading.
        untitled: The title of a conversation without one.
        earlier: The note on an earlier version.
        archived: The note on an archived summary.
        tz: The time zone dates are written in.
        escape: Escapes text for Markdown (the document's).
    """
    if not summaries:
        return []
    lines = [f"## {heading}", ""]
    for summary in sorted(summaries, key=lambda s: (s.created_at, s.id), reverse=True):
        title = summary.conversation_title.strip() or untitled
        notes = [summary.created_at.astimezone(tz).strftime("%Y-%m-%d %H:%M")]
        if summary.archived:
            notes.append(archived)
        elif not summary.current:
            notes.append(earlier)
        lines.append(f"- **{escape(title)}** *({' · '.join(notes)})*")
        lines.append(f"  {escape(summary.content)}")
    lines.append("")
    return lines
