"""Long-term memories in the export document: their entries, checked, matched and written.

The export document (``core/transfer/document.py``) holds every memory (active, archived,
superseded, expired) with its fields, never a revision, a vector, an origin conversation or
anything about deleted memories; this module writes and reads that ``"memories"`` list. Every
entry is checked like a new memory (its texts cleaned, then length and secrets):
:func:`parse_entries` keeps the valid ones and says why the others are refused;
:func:`plan_import` matches them against the local memories and says what would be added and
updated (:class:`MemoryPlan`); ``MemoryEngine.import_memories`` then writes the plan in one
transaction — all of it or, on any error, nothing — with whatever the other layers write in it.

Matching an entry to a local memory, in this order:

1. The same id *and* the same ``created_at``: the entry comes from an earlier export of this
   database (ids alone are not enough — another database reuses the same numbers).
2. The same duplicate key (content that differs only in case, width, spacing or punctuation),
   preferring an active memory.

A matched entry whose fields differ from the local memory updates it (an ``edit``,
``archive`` or ``restore`` revision by ``import``); one that equals it is left alone. Everything
else is added with its original dates, kind and source. ``superseded_by`` links between entries
of the file are carried over to the new or matched ids; a link to an entry that is not imported
is dropped for new memories and left as it was for updated ones.

Pure functions apart from :func:`local_memories` and :func:`write_import`, which take a session
and run on the DB thread.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any, Final, Literal

from sqlalchemy import insert as sa_insert
from sqlalchemy import update as sa_update
from sqlmodel import Session, col, select

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.memory import fts, store
from etos_desktop.core.memory.errors import MemoryLimitReached
from etos_desktop.core.memory.records import Memory, MemoryKind, MemorySource
from etos_desktop.core.retrieval.vectors import FloatArray
from etos_desktop.core.storage.lookups import is_active_at
from etos_desktop.core.storage.tables import MemoryRevisionRow, MemoryRow, RevisionAction
from etos_desktop.core.text.checks import MemoryRejected, MemorySecret, MemoryTooLong, check_content
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.secrets import secret_reason
from etos_desktop.core.text.segmentation import duplicate_key

#: The most tags one memory may carry on import, and the longest tag.
MAX_TAGS: Final = 50
MAX_TAG_CHARS: Final = 100
#: The largest id accepted from a file (SQLite's integer range, with room to spare).
_MAX_ID: Final = 2**62

#: Why one entry was skipped (``InvalidEntry.reason``).
EntryProblem = Literal[
    "not_an_object",  # the entry is not a JSON object
    "bad_field",  # a field has the wrong type or an impossible value (``InvalidEntry.field``)
    "empty",  # no content
    "too_long",  # content or trigger longer than the limit, or a tag too long
    "secret",  # looks like a secret (``InvalidEntry.secret``: the kind)
    "too_many_tags",  # more than MAX_TAGS tags
]


class ImportStale(InvalidInput):
    """Memories changed between the preview and the import; nothing was changed.

    Preview again and apply the new preview.
    """

    code = "memory_import_stale"


class DuplicateEntryId(ValueError):
    """Two entries of the file claim the same id (the file is refused: links would be guessed).

    Attributes:
        entry_id: The id.
    """

    def __init__(self, entry_id: int) -> None:
        super().__init__(f"id {entry_id} appears twice")
        self.entry_id = entry_id


# -- export ---------------------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def export_record(memory: Memory) -> dict[str, Any]:
    """One memory as an export entry (JSON-ready).

    Args:
        memory: The memory.

    Returns:
        Its fields; ``archived`` says whether it is archived, ``superseded_by`` names the id of
        the memory that replaced it (an entry of the same export).
    """
    return {
        "id": memory.id,
        "content": memory.content,
        "kind": memory.kind,
        "source": memory.source,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "tags": list(memory.tags),
        "trigger_context": memory.trigger_context,
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
        "valid_from": _iso(memory.valid_from),
        "valid_until": _iso(memory.valid_until),
        "superseded_by": memory.superseded_by,
        "archived": memory.archived_at is not None,
        "archived_at": _iso(memory.archived_at),
        "last_used_at": _iso(memory.last_accessed_at),
    }


def export_records(memories: Iterable[Memory]) -> list[dict[str, Any]]:
    """The memories as the export's ``"memories"`` list (usually all of them, archived ones too).

    Args:
        memories: The memories, in the order they should appear (ascending id is usual).

    Returns:
        One entry each (:func:`export_record`); a ``superseded_by`` link to a memory that is
        not among them is dropped.
    """
    records = [export_record(m) for m in memories]
    known = {r["id"] for r in records}
    for record in records:
        # A link to a memory outside the export would point into someone else's numbers.
        if record["superseded_by"] not in known:
            record["superseded_by"] = None
    return records


@dataclass(frozen=True)
class MemoryMarkdownLabels:
    """The words of the memories' part of a Markdown export; the UI passes translated ones.

    Attributes:
        kinds: Section heading per memory kind.
        archived: Heading of the part holding archived, superseded and expired memories.
        empty: Shown when there are no memories.
        importance: Label of the importance value.
        confidence: Label of the confidence value.
        tags: Label of the tags.
        trigger: Label of the trigger context ("recall when").
        superseded_by: Note on a superseded memory; ``{id}`` is filled in.
        expired: Note on a memory whose validity ended without being archived.
    """

    kinds: Mapping[str, str] = field(
        default_factory=lambda: {
            MemoryKind.FACT: "Facts",
            MemoryKind.PREFERENCE: "Preferences",
            MemoryKind.INSTRUCTION: "Instructions",
            MemoryKind.EPISODE: "Episodes",
            MemoryKind.INSIGHT: "Insights",
        }
    )
    archived: str = "Archived"
    empty: str = "No memories."
    importance: str = "importance"
    confidence: str = "confidence"
    tags: str = "tags"
    trigger: str = "recall when"
    superseded_by: str = "superseded by #{id}"
    expired: str = "expired"


def markdown_lines(
    memories: Sequence[Memory],
    *,
    now: datetime,
    words: MemoryMarkdownLabels,
    tz: tzinfo,
    escape: Callable[[str], str],
) -> list[str]:
    """The memories' part of the Markdown export: active ones grouped by kind, then the others.

    Args:
        memories: The memories.
        now: When the export is made (what counts as active).
        words: The words to use.
        tz: The time zone dates are written in.
        escape: Escapes text for Markdown (the document's).

    Returns:
        The lines, ending with an empty one; ``words.empty`` alone when there are no memories.
    """
    items = list(memories)
    if not items:
        return [words.empty, ""]
    lines: list[str] = []
    active = [m for m in items if m.is_active(now)]
    inactive = [m for m in items if not m.is_active(now)]
    kind_order = [*words.kinds, *sorted({m.kind for m in items} - set(words.kinds))]

    def entry(memory: Memory) -> list[str]:
        meta = [
            f"#{memory.id}",
            memory.created_at.astimezone(tz).strftime("%Y-%m-%d"),
            f"{words.importance} {memory.importance:.2f}",
            f"{words.confidence} {memory.confidence:.2f}",
        ]
        if memory.superseded_by is not None:
            meta.append(words.superseded_by.format(id=memory.superseded_by))
        elif memory.archived_at is None and not memory.is_active(now):
            meta.append(words.expired)
        out = [f"- {escape(memory.content)}", f"  *({' · '.join(meta)})*"]
        if memory.tags:
            out.append(f"  {words.tags}: {', '.join(escape(t) for t in memory.tags)}")
        if memory.trigger_context:
            out.append(f"  {words.trigger}: {escape(memory.trigger_context)}")
        return out

    def section(group: list[Memory], level: str) -> None:
        for kind in kind_order:
            of_kind = [m for m in group if m.kind == kind]
            if not of_kind:
                continue
            lines.extend([f"{level} {words.kinds.get(kind, kind)}", ""])
            for memory in of_kind:
                lines.extend(entry(memory))
            lines.append("")

    section(active, "##")
    if inactive:
        lines.extend([f"## {words.archived}", ""])
        section(inactive, "###")
    return lines


# -- parsing --------------------------------------------------------------------------------

#: The fields an import may change on a memory that exists already.
UPDATABLE: Final = (
    "content",
    "kind",
    "importance",
    "confidence",
    "tags",
    "trigger_context",
    "valid_until",
    "superseded_by",
    "archived",
)


@dataclass(frozen=True)
class ImportEntry:
    """One valid entry of an import file.

    Attributes:
        index: Its position in the file's ``memories`` list (0-based).
        id: The id it had where it was exported, if given.
        content: The text, checked like a new memory.
        kind: A ``MemoryKind`` value.
        source: A ``MemorySource`` value (``imported`` when the file gives none).
        importance: 0–1.
        confidence: 0–1.
        tags: Labels.
        trigger_context: When it should be recalled.
        created_at: When it was first saved (the import time when the file gives none).
        updated_at: When it last changed.
        valid_from: Since when it holds.
        valid_until: When it stopped holding.
        superseded_by: The file id of the entry that replaced it.
        archived_at: When it was archived (``None``: not archived).
        given: The fields the file states (an update changes only these; for a new memory the
            others take their defaults). ``archived`` stands for ``archived_at``.
    """

    index: int
    id: int | None
    content: str
    kind: str
    source: str
    importance: float
    confidence: float
    tags: tuple[str, ...]
    trigger_context: str | None
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    valid_until: datetime | None
    superseded_by: int | None
    archived_at: datetime | None
    given: frozenset[str] = frozenset(UPDATABLE)


@dataclass(frozen=True)
class InvalidEntry:
    """An entry of an import file that will not be imported, and why.

    Attributes:
        index: Its position in the file's ``memories`` list (0-based).
        reason: An :data:`EntryProblem`.
        field: The offending field, when one is to blame.
        secret: For ``secret``: what kind of secret it looks like (``core.text.secrets.SECRET_REASONS``).
        excerpt: The start of its content (empty when the content is the problem: a secret or
            a non-text value is never repeated).
    """

    index: int
    reason: str
    field: str | None = None
    secret: str | None = None
    excerpt: str = ""


@dataclass(frozen=True)
class MemoryEntries:
    """The ``"memories"`` of a parsed file: its valid entries and the entries that were refused.

    Attributes:
        entries: The valid entries, in file order.
        invalid: The refused entries, in file order.
    """

    entries: tuple[ImportEntry, ...]
    invalid: tuple[InvalidEntry, ...]


class _EntryError(Exception):
    def __init__(
        self, reason: EntryProblem, field: str | None = None, secret: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field
        self.secret = secret


def _parse_datetime(value: object, name: str, *, optional: bool) -> datetime | None:
    if value is None:
        if optional:
            return None
        raise _EntryError("bad_field", name)
    if not isinstance(value, str) or len(value) > 64:
        raise _EntryError("bad_field", name)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise _EntryError("bad_field", name) from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except (OverflowError, ValueError) as exc:  # year 1 or 9999 pushed out of range
        raise _EntryError("bad_field", name) from exc


def _parse_unit(value: object, name: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _EntryError("bad_field", name)
    try:
        number = float(value)
    except OverflowError as exc:
        raise _EntryError("bad_field", name) from exc
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise _EntryError("bad_field", name)
    return number


def _parse_id(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_ID:
        raise _EntryError("bad_field", name)
    return value


def _check_side_text(text: str, name: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise _EntryError("too_long", name)
    reason = secret_reason(text)
    if reason is not None:
        raise _EntryError("secret", name, reason)


def _parse_entry(index: int, raw: Mapping[str, Any], now: datetime, max_chars: int) -> ImportEntry:
    content_value = raw.get("content")
    if content_value is None:
        raise _EntryError("empty", "content")
    if not isinstance(content_value, str):
        raise _EntryError("bad_field", "content")
    try:
        content = check_content(content_value, max_chars=max_chars)
    except MemoryTooLong as exc:
        raise _EntryError("too_long", "content") from exc
    except MemorySecret as exc:
        raise _EntryError("secret", "content", str(exc.params.get("reason"))) from exc
    except MemoryRejected as exc:
        raise _EntryError("empty", "content") from exc

    kind = raw.get("kind", MemoryKind.FACT)
    if kind not in MemoryKind.__members__.values():
        raise _EntryError("bad_field", "kind")
    source = raw.get("source", MemorySource.IMPORTED)
    if source not in MemorySource.__members__.values():
        raise _EntryError("bad_field", "source")

    tags_value = raw.get("tags", [])
    if tags_value is None:
        tags_value = []
    if not isinstance(tags_value, list) or not all(isinstance(t, str) for t in tags_value):
        raise _EntryError("bad_field", "tags")
    if len(tags_value) > MAX_TAGS:
        raise _EntryError("too_many_tags", "tags")
    cleaned_tags = (clean_text(t).strip() for t in tags_value)
    tags = tuple(dict.fromkeys(t for t in cleaned_tags if t))
    for tag in tags:
        _check_side_text(tag, "tags", MAX_TAG_CHARS)

    trigger_value = raw.get("trigger_context")
    if trigger_value is not None and not isinstance(trigger_value, str):
        raise _EntryError("bad_field", "trigger_context")
    trigger = clean_text(trigger_value or "").strip() or None
    if trigger is not None:
        _check_side_text(trigger, "trigger_context", max_chars)

    archived = raw.get("archived", False)
    if not isinstance(archived, bool):
        raise _EntryError("bad_field", "archived")
    created_at = _parse_datetime(raw.get("created_at"), "created_at", optional=True) or now
    updated_at = _parse_datetime(raw.get("updated_at"), "updated_at", optional=True) or created_at
    valid_from = _parse_datetime(raw.get("valid_from"), "valid_from", optional=True) or created_at
    valid_until = _parse_datetime(raw.get("valid_until"), "valid_until", optional=True)
    archived_at = _parse_datetime(raw.get("archived_at"), "archived_at", optional=True)
    if archived and archived_at is None:
        archived_at = updated_at
    if not archived:
        archived_at = None
    return ImportEntry(
        index=index,
        id=_parse_id(raw.get("id"), "id"),
        content=content,
        kind=str(kind),
        source=str(source),
        importance=_parse_unit(raw.get("importance"), "importance", 0.5),
        confidence=_parse_unit(raw.get("confidence"), "confidence", 1.0),
        tags=tags,
        trigger_context=trigger,
        created_at=created_at,
        updated_at=updated_at,
        valid_from=valid_from,
        valid_until=valid_until,
        superseded_by=_parse_id(raw.get("superseded_by"), "superseded_by"),
        archived_at=archived_at,
        given=frozenset(name for name in UPDATABLE if name in raw),
    )


def _excerpt(raw: object, reason: str, length: int = 80) -> str:
    if reason == "secret" or not isinstance(raw, Mapping):
        return ""
    content = raw.get("content")
    if not isinstance(content, str):
        return ""
    content = " ".join(content.split())
    return content if len(content) <= length else content[: length - 1] + "…"


def parse_entries(
    raw_entries: Sequence[object], *, now: datetime, max_content_chars: int
) -> MemoryEntries:
    """Check the ``"memories"`` list of an import file.

    Args:
        raw_entries: The list, as read.
        now: The time given to entries without dates.
        max_content_chars: The longest content (and trigger context) accepted.

    Returns:
        The valid entries and the refused ones with their reasons.

    Raises:
        DuplicateEntryId: Two entries claim the same id (the caller refuses the file).
    """
    entries: list[ImportEntry] = []
    invalid: list[InvalidEntry] = []
    seen_ids: set[int] = set()
    for index, raw in enumerate(raw_entries):
        if not isinstance(raw, dict):
            invalid.append(InvalidEntry(index, "not_an_object"))
            continue
        raw_id = raw.get("id")
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):
            if raw_id in seen_ids:
                # Links (superseded_by) could not be resolved: refuse rather than guess.
                raise DuplicateEntryId(raw_id)
            seen_ids.add(raw_id)
        try:
            entries.append(_parse_entry(index, raw, now, max_content_chars))
        except _EntryError as exc:
            invalid.append(
                InvalidEntry(
                    index,
                    exc.reason,
                    field=exc.field,
                    secret=exc.secret,
                    excerpt=_excerpt(raw, exc.reason),
                )
            )
    return MemoryEntries(tuple(entries), tuple(invalid))


# -- planning -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedUpdate:
    """An entry that matched a local memory.

    Attributes:
        entry: The entry.
        memory: The local memory as it was when the preview was made.
        matched_by: ``"id"`` (an earlier export of this database) or ``"content"``.
        changes: The names of the fields the import changes (empty: already equal).
    """

    entry: ImportEntry
    memory: Memory
    matched_by: Literal["id", "content"]
    changes: tuple[str, ...]


@dataclass(frozen=True)
class MemoryPlan:
    """What an import would do to the memories; ``MemoryEngine.import_memories`` applies it.

    Attributes:
        to_add: Entries that become new memories.
        to_update: Matched entries that change their local memory.
        unchanged: Matched entries equal to their local memory (nothing to do).
        invalid: Entries that will not be imported, with reasons.
        active_before: Active memories now.
        active_after: Active memories after the import.
        max_active: The limit of active memories.
    """

    to_add: tuple[ImportEntry, ...]
    to_update: tuple[PlannedUpdate, ...]
    unchanged: tuple[PlannedUpdate, ...]
    invalid: tuple[InvalidEntry, ...]
    active_before: int
    active_after: int
    max_active: int

    @property
    def over_limit(self) -> bool:
        """Whether applying would raise the active count above ``max_active``."""
        return self.active_after > self.max_active and self.active_after > self.active_before

    @property
    def has_changes(self) -> bool:
        """Whether applying would change any memory."""
        return bool(self.to_add or self.to_update)


def _entry_active(entry: ImportEntry, now: datetime) -> bool:
    return is_active_at(entry.archived_at, entry.valid_until, now)


def _target_state(entry: ImportEntry, memory: Memory, successor: int | None) -> dict[str, Any]:
    """The updatable fields the local memory would have after the import.

    Fields the file does not state keep their local values.
    """
    target = _current_state(memory)
    target["content"] = entry.content
    for name in ("kind", "importance", "confidence", "tags", "trigger_context", "valid_until"):
        if name in entry.given:
            target[name] = getattr(entry, name)
    if "superseded_by" in entry.given:
        target["superseded_by"] = successor
    if "archived" in entry.given:
        archived = entry.archived_at is not None
        target["archived_at"] = (memory.archived_at or entry.archived_at) if archived else None
    return target


def _current_state(memory: Memory) -> dict[str, Any]:
    return {
        "content": memory.content,
        "kind": memory.kind,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "tags": memory.tags,
        "trigger_context": memory.trigger_context,
        "valid_until": memory.valid_until,
        "superseded_by": memory.superseded_by,
        "archived_at": memory.archived_at,
    }


def _successor(
    entry: ImportEntry, local_ids: Mapping[int, int], added: set[int], current: int | None
) -> int | None:
    """The local id an entry's ``superseded_by`` resolves to (``-1``: an entry being added)."""
    if entry.superseded_by is None:
        return None
    if entry.superseded_by in local_ids:
        return local_ids[entry.superseded_by]
    if entry.superseded_by in added:
        return -1
    return current


def plan_import(
    document: MemoryEntries,
    local: Sequence[tuple[Memory, str]],
    *,
    now: datetime,
    max_active: int,
) -> MemoryPlan:
    """Match the entries of a parsed file to the local memories (see the module doc).

    Args:
        document: The file's memories.
        local: Every local memory (archived ones too) with its duplicate key.
        now: The current time (for what counts as active).
        max_active: The limit of active memories.

    Returns:
        The plan.
    """
    by_id = {memory.id: memory for memory, _ in local}
    by_key: dict[str, list[Memory]] = {}
    for memory, key in local:
        by_key.setdefault(key, []).append(memory)
    for candidates in by_key.values():
        # Active first, then the newest.
        candidates.sort(key=lambda m: (not m.is_active(now), -m.id))
    claimed: set[int] = set()
    matches: list[tuple[ImportEntry, Memory, Literal["id", "content"]]] = []
    adds: list[ImportEntry] = []
    for entry in document.entries:
        same = by_id.get(entry.id) if entry.id is not None else None
        if same is not None and same.id not in claimed and same.created_at == entry.created_at:
            claimed.add(same.id)
            matches.append((entry, same, "id"))
            continue
        candidate = next(
            (m for m in by_key.get(duplicate_key(entry.content), []) if m.id not in claimed),
            None,
        )
        if candidate is not None:
            claimed.add(candidate.id)
            matches.append((entry, candidate, "content"))
        else:
            adds.append(entry)

    local_ids = {e.id: m.id for e, m, _ in matches if e.id is not None}
    added_file_ids = {e.id for e in adds if e.id is not None}
    updates: list[PlannedUpdate] = []
    unchanged: list[PlannedUpdate] = []
    active_after = sum(1 for memory, _ in local if memory.is_active(now))
    active_before = active_after
    for entry, memory, how in matches:
        successor = _successor(entry, local_ids, added_file_ids, memory.superseded_by)
        target = _target_state(entry, memory, successor)
        current = _current_state(memory)
        changes = tuple(name for name in target if target[name] != current[name])
        planned = PlannedUpdate(entry, memory, how, changes)
        (updates if changes else unchanged).append(planned)
        was = memory.is_active(now)
        until = target["valid_until"]
        becomes = target["archived_at"] is None and (until is None or until > now)
        active_after += int(becomes) - int(was)
    active_after += sum(1 for entry in adds if _entry_active(entry, now))
    return MemoryPlan(
        to_add=tuple(adds),
        to_update=tuple(updates),
        unchanged=tuple(unchanged),
        invalid=document.invalid,
        active_before=active_before,
        active_after=active_after,
        max_active=max_active,
    )


def texts_to_embed(preview: MemoryPlan) -> dict[int, str]:
    """The contents that need vectors, by entry index: new memories and changed texts."""
    texts = {entry.index: entry.content for entry in preview.to_add}
    for update in preview.to_update:
        if "content" in update.changes:
            texts[update.entry.index] = update.entry.content
    return texts


# -- writing (DB thread) --------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryImportResult:
    """What an import wrote to the memories.

    Attributes:
        added: The ids of the new memories, in file order.
        updated: The ids of the changed memories, in file order.
    """

    added: tuple[int, ...]
    updated: tuple[int, ...]


def local_memories(session: Session) -> list[tuple[Memory, str]]:
    """Every memory (archived ones too) with its duplicate key. Runs on the DB thread."""
    rows = session.exec(select(MemoryRow).order_by(col(MemoryRow.id))).all()
    return [(Memory.from_row(row), row.content_key) for row in rows]


def _new_row(entry: ImportEntry) -> MemoryRow:
    return MemoryRow(
        content=entry.content,
        content_key=duplicate_key(entry.content),
        kind=entry.kind,
        source=entry.source,
        importance=entry.importance,
        confidence=entry.confidence,
        tags_json=json.dumps(list(entry.tags), ensure_ascii=False),
        trigger_context=entry.trigger_context,
        valid_from=entry.valid_from,
        valid_until=entry.valid_until,
        archived_at=entry.archived_at,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
    )


def _insert(session: Session, rows: Sequence[MemoryRow], *, actor: str, now: datetime) -> None:
    # Like store.insert, but the history says when the import happened, not when the memory
    # was first saved elsewhere.
    statement = sa_insert(MemoryRow).returning(col(MemoryRow.id), sort_by_parameter_order=True)
    returned = session.scalars(statement, [r.model_dump(exclude={"id"}) for r in rows])
    new_ids = [memory_id for memory_id in returned if memory_id is not None]
    for row, memory_id in zip(rows, new_ids, strict=True):
        row.id = memory_id
    fts.insert_many(
        session,
        [(memory_id, store.body(row)) for row, memory_id in zip(rows, new_ids, strict=True)],
    )
    session.execute(
        sa_insert(MemoryRevisionRow),
        [
            {
                "memory_id": row.id,
                "created_at": now,
                "action": RevisionAction.CREATE.value,
                "actor": actor,
                "before_json": None,
                "after_json": json.dumps(store.snapshot(row), ensure_ascii=False),
            }
            for row in rows
        ],
    )


def write_import(
    session: Session,
    *,
    preview: MemoryPlan,
    vectors: Mapping[int, Sequence[FloatArray]],
    vector_key: str,
    now: datetime,
    actor: str,
    max_active: int,
) -> MemoryImportResult:
    """Write a preview in the caller's transaction (runs on the DB thread; the caller commits).

    Args:
        session: A session on the DB thread.
        preview: What to write.
        vectors: Vectors of the active embedder by entry index (missing: keyword only until
            the next re-embed).
        vector_key: The active embedder's key.
        now: The current time.
        actor: Who is importing, for the histories.
        max_active: The limit of active memories.

    Returns:
        The ids added and updated.

    Raises:
        ImportStale: A matched memory was changed or deleted since the preview.
        MemoryLimitReached: The import would exceed ``max_active`` active memories.
    """
    plans = preview.to_update
    rows = store.rows_by_id(session, [p.memory.id for p in plans])
    for plan in plans:
        row = rows.get(plan.memory.id)
        # updated_at moves on every change (a retrieval's access count is no change).
        if row is None or row.updated_at != plan.memory.updated_at:
            raise ImportStale(f"memory #{plan.memory.id} changed", memory_id=plan.memory.id)
    active_before = store.count_active(session, now)

    new_rows = [_new_row(entry) for entry in preview.to_add]
    if new_rows:
        _insert(session, new_rows, actor=actor, now=now)
    local_ids: dict[int, int] = {}
    for entry, row in zip(preview.to_add, new_rows, strict=True):
        if entry.id is not None and row.id is not None:
            local_ids[entry.id] = row.id
    for plan in (*preview.to_update, *preview.unchanged):
        if plan.entry.id is not None:
            local_ids[plan.entry.id] = plan.memory.id

    vector_items: list[tuple[int, Sequence[FloatArray]]] = []
    for entry, row in zip(preview.to_add, new_rows, strict=True):
        assert row.id is not None
        if entry.superseded_by is not None and entry.superseded_by in local_ids:
            # The new rows were written by a bulk statement: they are not in the session.
            row.superseded_by = local_ids[entry.superseded_by]
            session.execute(
                sa_update(MemoryRow)
                .where(col(MemoryRow.id) == row.id)
                .values(superseded_by=row.superseded_by)
            )
        if entry.index in vectors:
            vector_items.append((row.id, vectors[entry.index]))

    for plan in plans:
        row = rows[plan.memory.id]
        entry = plan.entry
        before = store.snapshot(row)
        was_archived = row.archived_at is not None
        successor = row.superseded_by
        if entry.superseded_by is None:
            successor = None
        elif entry.superseded_by in local_ids:
            successor = local_ids[entry.superseded_by]
        target = _target_state(entry, Memory.from_row(row), successor)
        text_changed = target["content"] != row.content
        row.content = target["content"]
        row.content_key = duplicate_key(target["content"])
        row.kind = target["kind"]
        row.importance = target["importance"]
        row.confidence = target["confidence"]
        row.tags_json = json.dumps(list(target["tags"]), ensure_ascii=False)
        row.trigger_context = target["trigger_context"]
        row.valid_until = target["valid_until"]
        row.superseded_by = target["superseded_by"]
        row.archived_at = target["archived_at"]
        row.updated_at = now
        session.add(row)
        store.reindex(session, row)
        if text_changed:
            store.drop_vectors(session, plan.memory.id)
            if entry.index in vectors:
                store.write_vectors(session, plan.memory.id, vector_key, list(vectors[entry.index]))
        after = store.snapshot(row)
        action = RevisionAction.EDIT
        if set(plan.changes) <= {"archived_at", "superseded_by", "valid_until"}:
            is_archived = row.archived_at is not None
            if is_archived and not was_archived:
                action = RevisionAction.ARCHIVE
            elif was_archived and not is_archived:
                action = RevisionAction.RESTORE
        store.add_revision(
            session, plan.memory.id, action, actor=actor, now=now, before=before, after=after
        )
    if vector_items:
        store.insert_vectors(session, vector_key, vector_items)
    session.flush()
    active_after = store.count_active(session, now)
    if active_after > max_active and active_after > active_before:
        raise MemoryLimitReached(
            f"{active_after} active memories after the import",
            reason="limit",
            limit=max_active,
        )
    return MemoryImportResult(
        added=tuple(row.id for row in new_rows if row.id is not None),
        updated=tuple(plan.memory.id for plan in plans),
    )
