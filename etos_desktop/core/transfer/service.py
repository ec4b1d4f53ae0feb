"""Export and import of every memory layer for code on the event loop (the Memory page).

:class:`TransferService` is built from the layers' access objects by whoever offers export and
import (the Settings dialog); no layer knows it. Its work runs in the memory access's worker
threads (``MemoryAccess.run``), where the engine embeds and waits for the DB thread, so the event
loop never waits on the disk, an embedder or a large document. An import is published on the
memory access's change hub, one change for each layer it wrote.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from pathlib import Path

from sqlmodel import Session

from etos_desktop.core.changes import (
    MemoriesChanged,
    MemoryChange,
    ProfileChanged,
    SummariesChanged,
)
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.records import Memory, MemorySource
from etos_desktop.core.profile import transfer as profile_transfer
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.profile.records import Profile
from etos_desktop.core.summaries import transfer as summary_transfer
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.summaries.records import Summary
from etos_desktop.core.transfer import document, foreign, markdown


class TransferService:
    """Reads and previews import files, applies them, and builds export documents.

    Args:
        memory: The memory access (its workers run this service's work).
        summaries: The session summaries, which travel in the same file and transaction
            (``None``: exports hold none, and a file's summaries are all new).
        profile: The user profile, which travels there too (``None``: exports hold none, and an
            import leaves the profile alone).
    """

    def __init__(
        self,
        memory: MemoryAccess,
        *,
        summaries: SummaryAccess | None = None,
        profile: ProfileAccess | None = None,
    ) -> None:
        self._memory = memory
        self._summaries = summaries
        self._profile = profile

    def _local_summaries(self) -> tuple[list[Summary], dict[int, datetime]]:
        return self._summaries.transfer_state() if self._summaries is not None else ([], {})

    def _local_profile(self) -> Profile | None:
        return self._profile.transfer_state() if self._profile is not None else None

    async def preview_import_file(self, path: Path, *, now: datetime) -> document.ImportPreview:
        """Read, validate and preview an import file; nothing is written.

        The file is told by its content: JSON is an export of this app
        (``document.export_json``; other JSON is refused), text is a list of facts from another
        app (``foreign.py``: ChatGPT's or Claude's memory, a Markdown or text list), whose
        preview adds new memories only and says what the list is (``ImportPreview.source``).

        Args:
            path: An export, or a list of facts.
            now: The current time (what counts as active).

        Returns:
            What importing it would add, update and skip, layer by layer.

        Raises:
            ImportInvalid: The file is not a usable export or list.
            OSError: The file cannot be read.
        """

        def read(engine: MemoryEngine) -> document.ImportPreview:
            data = document.read_import_file(path)
            if not _is_export(data):
                return self._preview_list(engine, data, now)
            parsed = document.parse_import(
                data, now=now, max_content_chars=engine.max_content_chars
            )
            memories = engine.preview_import(parsed)
            local, _created = self._local_summaries()
            summaries = summary_transfer.plan(parsed.summaries, parsed.invalid_summaries, local)
            profile = (
                profile_transfer.plan(parsed.profile, self._local_profile())
                if self._profile is not None
                else None
            )
            return document.ImportPreview.of(memories, summaries=summaries, profile=profile)

        return await self._memory.run(read)

    @staticmethod
    def _preview_list(engine: MemoryEngine, data: bytes, now: datetime) -> document.ImportPreview:
        text = foreign.decode_text(data)
        listing = foreign.parse_list(text, now=now, max_chars=engine.max_content_chars)
        entries, source = foreign.entries_of(
            listing, now=now, max_content_chars=engine.max_content_chars
        )
        plan = foreign.additions_only(engine.preview_import(entries))
        return document.ImportPreview.of(plan, source=source)

    async def apply_import(self, preview: document.ImportPreview) -> document.ImportResult:
        """Apply a preview in one transaction: every layer's part, or on any error nothing.

        Raises:
            ImportStale: A matched memory changed or was deleted since the preview (the
                summaries' and the profile's staleness carry the same code).
            MemoryLimitReached: The import would exceed the limit of active memories.
            StorageError: The database failed.
        """

        def write(engine: MemoryEngine) -> document.ImportResult:
            written: list[tuple[list[int], bool]] = []

            def alongside(session: Session, now: datetime) -> None:
                added = summary_transfer.write(session, preview.summaries, now)
                written.append((added, profile_transfer.write(session, preview.profile, now)))

            memories = engine.import_memories(preview, alongside=alongside)
            [(summaries_added, profile_replaced)] = written
            return document.ImportResult.of(
                memories,
                summaries_added=summaries_added,
                summaries_updated=len(preview.summaries.to_update),
                profile_replaced=profile_replaced,
            )

        result = await self._memory.run(write)
        changes = self._memory.changes
        ids = result.added + result.updated
        changes.publish(MemoriesChanged(ids, MemoryChange.IMPORTED, MemorySource.IMPORTED.value))
        if result.summaries_added or result.summaries_updated:
            changes.publish(SummariesChanged())
        if result.profile_replaced:
            changes.publish(ProfileChanged())
        return result

    async def export_json(self, *, now: datetime, app_version: str) -> tuple[str, int]:
        """Every memory, session summary (archived ones too) and the profile as an export document.

        Returns:
            The JSON text and how many memories it holds.
        """

        def build(engine: MemoryEngine) -> tuple[str, int]:
            memories = _all_by_id(engine)
            summaries, created = self._local_summaries()
            text = document.export_json(
                memories,
                exported_at=now,
                app_version=app_version,
                summaries=summaries,
                conversations_created=created,
                profile=self._local_profile(),
            )
            return text, len(memories)

        return await self._memory.run(build)

    async def export_markdown(
        self, *, now: datetime, labels: markdown.MarkdownLabels, tz: tzinfo
    ) -> tuple[str, int]:
        """Every memory (archived ones too), summary and the profile as Markdown with these words.

        Returns:
            The Markdown text and how many memories it holds.
        """

        def build(engine: MemoryEngine) -> tuple[str, int]:
            memories = _all_by_id(engine)
            summaries, _created = self._local_summaries()
            text = markdown.export_markdown(
                memories,
                exported_at=now,
                labels=labels,
                tz=tz,
                summaries=summaries,
                profile=self._local_profile(),
            )
            return text, len(memories)

        return await self._memory.run(build)


def _is_export(data: bytes) -> bool:
    """Whether a file is JSON: an export, or JSON that ``parse_import`` refuses; else a list.

    A list may start with ``[2024-05-01]``, so text starting with ``[`` is JSON only if it parses.
    """
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"{"):
        return True
    if stripped.startswith(b"["):
        return foreign.is_json(stripped.decode("utf-8", "replace"))
    return False


def _all_by_id(engine: MemoryEngine) -> list[Memory]:
    return sorted(engine.memories(include_inactive=True), key=lambda m: m.id)
