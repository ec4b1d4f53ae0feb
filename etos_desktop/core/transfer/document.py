"""The export document of every memory layer: one versioned JSON file, strict to read (DESIGN §9).

The file holds the long-term memories (``"memories"``), the session summaries (``"summaries"``)
and the user profile with its pinned lines (``"profile"``). Each layer writes and reads its own
part — ``core/memory/transfer.py``, ``core/summaries/transfer.py``, ``core/profile/transfer.py``
— and this module holds what is about the file: its format and version, its limits, reading JSON
safely, and the whole-file document, preview and result made of the layers' parts.

Import is strict: :func:`parse_import` refuses a file that is not an export of this app (or is
too big, malformed or hostile) with :class:`ImportInvalid`, and each layer checks its entries and
says why it skips the ones it refuses. The preview says what each layer would change;
``TransferService.apply_import`` writes all of it in one transaction, or on any error nothing.

The whole-file types extend the memory layer's own: the file began as a memory export, and its
memories are still its main list (the format is ``etos-desktop.memories``), so
``ImportPreview.to_add`` are the memories to add and ``ImportPreview.summaries`` the summaries'
plan. Pure functions apart from :func:`read_import_file`, which reads the disk.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.memory import transfer as memory_transfer
from etos_desktop.core.memory.records import Memory
from etos_desktop.core.profile import transfer as profile_transfer
from etos_desktop.core.profile.records import Profile
from etos_desktop.core.storage.lookups import is_active_at
from etos_desktop.core.summaries import transfer as summary_transfer
from etos_desktop.core.summaries.records import Summary

if TYPE_CHECKING:
    from etos_desktop.core.transfer.foreign import ListSource

#: The ``format`` value of an export.
FORMAT: Final = "etos-desktop.memories"
#: The export format version this code writes and the newest it reads.
VERSION: Final = 1
#: The largest import file read, in bytes (an export of 100k long memories is about 60 MB).
MAX_IMPORT_BYTES: Final = 64 * 1024 * 1024
#: The most entries one import may hold (memories; summaries apart).
MAX_IMPORT_ENTRIES: Final = 100_000

#: Why a whole file was refused (``ImportInvalid.params["reason"]``).
FileProblem = Literal[
    "too_large",  # over MAX_IMPORT_BYTES
    "not_json",  # not UTF-8 JSON, or nested too deep to read safely
    "not_an_export",  # valid JSON, but not a memory export of this app
    "unsupported_version",  # written by a newer version of the app
    "bad_structure",  # the export's own structure is broken (``memories`` not a list…)
    "too_many",  # over MAX_IMPORT_ENTRIES entries
    "duplicate_id",  # two entries claim the same id
    "not_text",  # neither JSON nor text: binary data, or no known text encoding (a list)
    "no_facts",  # a text file in which no line is a fact (a list)
]


class ImportInvalid(InvalidInput):
    """The import file cannot be used at all; nothing was changed.

    ``params["reason"]`` is a :data:`FileProblem`; ``params["version"]`` is set for
    ``unsupported_version``.
    """

    code = "memory_import_invalid"


@dataclass(frozen=True)
class ImportDocument(memory_transfer.MemoryEntries):
    """A parsed import file: its memories (``entries``, ``invalid``) and the other layers' parts.

    Attributes:
        exported_at: When the file says it was exported, if it says.
        summaries: The valid session summary entries.
        invalid_summaries: The refused summary entries.
        profile: The file's ``"profile"`` as read (checked when it is planned against the
            local one).
    """

    exported_at: datetime | None = None
    summaries: tuple[summary_transfer.SummaryEntry, ...] = ()
    invalid_summaries: tuple[summary_transfer.SummaryProblem, ...] = ()
    profile: Any = None


@dataclass(frozen=True)
class ImportPreview(memory_transfer.MemoryPlan):
    """What importing a file would do: the memories' plan, and the summaries' and profile's.

    Attributes:
        summaries: What happens to the session summaries of the file.
        profile: What happens to the user profile.
        source: For a list of facts from another app (``foreign.py``): what it is and where
            each entry came from; ``None`` for an export of this app.
    """

    summaries: summary_transfer.SummaryPlan = field(default_factory=summary_transfer.SummaryPlan)
    profile: profile_transfer.ProfilePlan = field(default_factory=profile_transfer.ProfilePlan)
    source: ListSource | None = None

    @classmethod
    def of(
        cls,
        memories: memory_transfer.MemoryPlan,
        *,
        summaries: summary_transfer.SummaryPlan | None = None,
        profile: profile_transfer.ProfilePlan | None = None,
        source: ListSource | None = None,
    ) -> ImportPreview:
        """The preview made of each layer's plan (none given: that layer is left alone)."""
        return cls(
            **_fields_of(memories, memory_transfer.MemoryPlan),
            summaries=summary_transfer.SummaryPlan() if summaries is None else summaries,
            profile=profile_transfer.ProfilePlan() if profile is None else profile,
            source=source,
        )

    def keeping(self, indices: Iterable[int], *, now: datetime) -> ImportPreview:
        """The preview with only the new memories whose entry index is in ``indices``.

        What the user unticked in the preview is left out; the active count follows.

        Args:
            indices: The entry indices (``ImportEntry.index``) of the memories to add.
            now: The time the preview was made for (what counts as active).
        """
        kept = frozenset(indices)
        dropped = [e for e in self.to_add if e.index not in kept]
        if not dropped:
            return self
        active = sum(1 for e in dropped if is_active_at(e.archived_at, e.valid_until, now))
        return dataclasses.replace(
            self,
            to_add=tuple(e for e in self.to_add if e.index in kept),
            active_after=self.active_after - active,
        )

    @property
    def has_changes(self) -> bool:
        """Whether applying would change anything (memories, summaries or the profile)."""
        return super().has_changes or self.summaries.has_changes or self.profile.has_changes


@dataclass(frozen=True)
class ImportResult(memory_transfer.MemoryImportResult):
    """What an import wrote: the memories (``added``, ``updated``) and the other layers.

    Attributes:
        summaries_added: The ids of the new session summaries.
        summaries_updated: How many local summaries changed.
        profile_replaced: The file's profile became the profile.
    """

    summaries_added: tuple[int, ...] = ()
    summaries_updated: int = 0
    profile_replaced: bool = False

    @classmethod
    def of(
        cls,
        memories: memory_transfer.MemoryImportResult,
        *,
        summaries_added: Iterable[int] = (),
        summaries_updated: int = 0,
        profile_replaced: bool = False,
    ) -> ImportResult:
        """The result made of what each layer wrote."""
        return cls(
            **_fields_of(memories, memory_transfer.MemoryImportResult),
            summaries_added=tuple(summaries_added),
            summaries_updated=summaries_updated,
            profile_replaced=profile_replaced,
        )


def _fields_of(part: object, kind: type) -> dict[str, Any]:
    # The memory layer's part of a whole-file value, field by field.
    return {f.name: getattr(part, f.name) for f in dataclasses.fields(kind)}


# -- export -----------------------------------------------------------------------------------


def export_document(
    memories: Iterable[Memory],
    *,
    exported_at: datetime,
    app_version: str = "",
    summaries: Iterable[Summary] = (),
    conversations_created: Mapping[int, datetime] | None = None,
    profile: Profile | None = None,
) -> dict[str, Any]:
    """The export document of some memories (usually all of them, archived ones included).

    Args:
        memories: The memories, in the order they should appear (ascending id is usual).
        exported_at: When the export was made.
        app_version: The version of the app writing it (informational).
        summaries: The session summaries (every one).
        conversations_created: When each summary's conversation was created, by id.
        profile: The user profile with its pinned lines.

    Returns:
        ``{"format", "version", "exported_at", "app_version", "memories": [...],
        "summaries": [...], "profile": {...} or null}``.
    """
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at.astimezone(UTC).isoformat(),
        "app_version": app_version,
        "memories": memory_transfer.export_records(memories),
        "summaries": summary_transfer.export_records(summaries, conversations_created or {}),
        "profile": profile_transfer.export_record(profile),
    }


def export_json(
    memories: Iterable[Memory],
    *,
    exported_at: datetime,
    app_version: str = "",
    summaries: Iterable[Summary] = (),
    conversations_created: Mapping[int, datetime] | None = None,
    profile: Profile | None = None,
) -> str:
    """The export document as indented UTF-8 JSON text (see :func:`export_document`)."""
    document = export_document(
        memories,
        exported_at=exported_at,
        app_version=app_version,
        summaries=summaries,
        conversations_created=conversations_created,
        profile=profile,
    )
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


# -- reading ----------------------------------------------------------------------------------


def read_import_file(path: Path) -> bytes:
    """Read an import file, refusing a huge one before reading it (blocking).

    Raises:
        ImportInvalid: The file is larger than any export could be.
        OSError: The file cannot be read.
    """
    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise ImportInvalid("file too large", reason="too_large")
    return path.read_bytes()


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Python would accept them.
    raise ValueError(f"{name} is not allowed")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            # Two values for one field: which one a reader uses differs between programs.
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def loads_strict(text: str) -> Any:
    """Parse JSON text as strictly as an import needs: no NaN or Infinity, no repeated key.

    Raises:
        ValueError: Not JSON, or one of those.
        RecursionError: Nested too deep for the parser.
    """
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)


def _load_json(data: bytes | str) -> Any:
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportInvalid(f"larger than {MAX_IMPORT_BYTES} bytes", reason="too_large")
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        return loads_strict(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ImportInvalid(f"not readable JSON: {exc}"[:300], reason="not_json") from exc


def _exported_at(value: object) -> datetime | None:
    # Read like the entries' dates (core/memory/transfer.py); nothing acts on it, but a file
    # whose own header is broken is not trusted.
    if value is None:
        return None
    try:
        if not isinstance(value, str) or len(value) > 64:
            raise ValueError("not a date")
        parsed = datetime.fromisoformat(value)
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    except (OverflowError, ValueError) as exc:
        raise ImportInvalid("bad exported_at", reason="bad_structure") from exc


def parse_import(data: bytes | str, *, now: datetime, max_content_chars: int) -> ImportDocument:
    """Read and check an import file.

    Args:
        data: The file's bytes (UTF-8, a BOM is allowed) or text.
        now: The time given to entries without dates.
        max_content_chars: The longest memory content (and trigger context) accepted.

    Returns:
        The valid entries of each layer and the refused ones with their reasons.

    Raises:
        ImportInvalid: The file as a whole cannot be used (``params["reason"]`` says why).
    """
    document = _load_json(data)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ImportInvalid("not a memory export of ETOS Desktop", reason="not_an_export")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ImportInvalid(f"bad version {version!r}"[:100], reason="not_an_export")
    if version > VERSION:
        raise ImportInvalid(
            f"version {version} is newer than {VERSION}",
            reason="unsupported_version",
            version=version,
        )
    raw_entries = document.get("memories")
    if not isinstance(raw_entries, list):
        raise ImportInvalid("'memories' is not a list", reason="bad_structure")
    if len(raw_entries) > MAX_IMPORT_ENTRIES:
        raise ImportInvalid(
            f"{len(raw_entries)} entries > {MAX_IMPORT_ENTRIES}",
            reason="too_many",
            count=len(raw_entries),
            limit=MAX_IMPORT_ENTRIES,
        )
    exported_at = _exported_at(document.get("exported_at"))
    try:
        memories = memory_transfer.parse_entries(
            raw_entries, now=now, max_content_chars=max_content_chars
        )
    except memory_transfer.DuplicateEntryId as exc:
        raise ImportInvalid(str(exc), reason="duplicate_id", id=exc.entry_id) from exc
    try:
        summaries, invalid_summaries = summary_transfer.parse_entries(
            document.get("summaries"), now
        )
    except ValueError as exc:
        raise ImportInvalid("'summaries' is not a list", reason="bad_structure") from exc
    if len(summaries) + len(invalid_summaries) > MAX_IMPORT_ENTRIES:
        raise ImportInvalid("too many summaries", reason="too_many", limit=MAX_IMPORT_ENTRIES)
    return ImportDocument(
        entries=memories.entries,
        invalid=memories.invalid,
        exported_at=exported_at,
        summaries=summaries,
        invalid_summaries=invalid_summaries,
        profile=document.get("profile"),
    )
