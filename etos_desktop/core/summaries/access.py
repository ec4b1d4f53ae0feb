"""Async access to session summaries for code on the event loop (the UI and the jobs).

Database work runs on the DB worker thread (``Database.run``); embedding and vector math for
recall run in this object's own worker thread, so the event loop (the UI thread) never waits on
the disk or an embedder.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final, TypeVar

import numpy

from etos_desktop.core.changes import ChangeHub, SummariesChanged
from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import InvalidInput, ProviderError
from etos_desktop.core.providers.embedding import Embedder
from etos_desktop.core.retrieval.tuning import Tuning, tuning_for
from etos_desktop.core.retrieval.vectors import FloatArray, from_blob, to_blob
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.windows import PAGE_SIZE, Cursor, ListCounts, ListOrder, ListWindow
from etos_desktop.core.summaries import listing, store, transfer
from etos_desktop.core.summaries.listing import SummaryFilters
from etos_desktop.core.summaries.recall import RECALL_COUNT, SummaryHit, rank_summaries
from etos_desktop.core.summaries.records import DeletedSummary, Summary, SummaryActivity
from etos_desktop.core.text.checks import check_content
from etos_desktop.core.time_words import resolve_time_window

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The longest summary text a user may save from the editor.
MAX_EDIT_CHARS: Final = 2000

#: Gives the embedder memory search uses now, with its tuning (``None``: keywords only).
EmbeddingSource = Callable[[], tuple[Embedder | None, Tuning]]


def _no_embedder() -> tuple[Embedder | None, Tuning]:
    return None, tuning_for(None)


class SummaryAccess:
    """Summaries and their bookkeeping, off the event loop.

    Args:
        db: The open database (schema v4 or later).
        clock: The current time.
        embedding: The memory embedder and its tuning, asked at each recall (it can change).
        changes: The app's change hub, where the user's changes (edit, archive, restore, delete,
            undo) are published (``None``: nobody hears them).
    """

    def __init__(
        self,
        db: Database,
        *,
        clock: Clock | None = None,
        embedding: EmbeddingSource | None = None,
        changes: ChangeHub | None = None,
    ) -> None:
        self._db = db
        self._changes = changes
        self.clock: Clock = clock or SystemClock()
        self._embedding = embedding or _no_embedder
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="etos-summaries"
        )

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await self._db.run(lambda session: fn(session, *args, **kwargs))

    # -- the rule's inputs and the job's writes -------------------------------------------------

    async def activity(self, conversation_id: int) -> SummaryActivity | None:
        """One conversation's turns and summary bookkeeping."""
        return await self._run(store.activity, conversation_id)

    async def recent_activity(self, since: datetime) -> list[SummaryActivity]:
        """Every conversation changed since ``since`` (one query)."""
        return await self._run(store.recent_activity, since)

    async def all_activity(self) -> list[SummaryActivity]:
        """Every conversation's activity (the Summaries page's status)."""
        return await self._run(store.all_activity)

    async def current(self, conversation_id: int) -> Summary | None:
        """A conversation's current summary."""

        def read(session: Any) -> Summary | None:
            row = store.current_row(session, conversation_id)
            return None if row is None else store.get(session, row.id or 0)

        return await self._db.run(read)

    async def messages_after(
        self, conversation_id: int, after_id: int | None
    ) -> list[store.Spoken]:
        """What was said in the conversation after message ``after_id``."""
        return await self._run(store.messages_after, conversation_id, after_id)

    async def write_summary(self, **values: Any) -> Summary:
        """Store a summary and what it covered in one transaction (``store.write_summary``)."""

        def write(session: Any) -> Summary:
            row = store.write_summary(session, now=self.clock.now(), **values)
            summary = store.get(session, row.id or 0)
            assert summary is not None
            return summary

        return await self._db.run(write)

    async def record_skip(self, conversation_id: int, covers_until: int) -> None:
        """A SKIP: what it covered and when, nothing stored."""
        await self._run(store.record_skip, conversation_id, covers_until, self.clock.now())

    async def record_error(self, conversation_id: int, code: str, retry_at: datetime) -> int:
        """A failed attempt, retried at ``retry_at``; returns the errors in a row."""
        return await self._run(
            store.record_error, conversation_id, code, self.clock.now(), retry_at
        )

    async def error_count(self, conversation_id: int) -> int:
        """Errors in a row of a conversation's attempts."""
        return await self._run(store.error_count, conversation_id)

    # -- reading --------------------------------------------------------------------------------

    async def summaries(self) -> list[Summary]:
        """Every summary, newest first."""
        return await self._run(store.list_all)

    async def window(
        self,
        filters: SummaryFilters,
        order: ListOrder,
        *,
        after: Cursor | None = None,
        limit: int = PAGE_SIZE,
        with_counts: bool = False,
    ) -> ListWindow[Summary]:
        """One window of the summary list (``listing.window``), read on the DB thread.

        Args:
            filters: What the list shows.
            order: How it is sorted.
            after: Start after this row (the previous window's cursor); ``None``: the first.
            limit: At most this many summaries.
            with_counts: Read the list's counts too, in the same transaction.
        """
        return await self._run(
            listing.window, filters, order, after=after, limit=limit, with_counts=with_counts
        )

    async def counts(self, filters: SummaryFilters) -> ListCounts:
        """The summary list's counts: all, matching ``filters``, current, not archived."""
        return await self._run(listing.counts, filters)

    async def matching_ids(
        self, filters: SummaryFilters, *, archivable: bool | None = None
    ) -> list[int]:
        """The ids of every summary ``filters`` let through (``listing.matching_ids``)."""
        return await self._run(listing.matching_ids, filters, archivable=archivable)

    async def of_conversation(self, conversation_id: int) -> list[Summary]:
        """One conversation's summaries (its history), newest first."""
        return await self._run(store.of_conversation, conversation_id)

    async def get(self, summary_id: int) -> Summary | None:
        """One summary."""
        return await self._run(store.get, summary_id)

    async def for_injection(self, exclude_conversation_id: int | None, count: int) -> list[Summary]:
        """The current summaries of the ``count`` most recently summarised other conversations."""
        return await self._run(store.for_injection, exclude_conversation_id, count)

    async def conversations(self) -> list[tuple[int, str, datetime]]:
        """``(id, title, updated_at)`` of the conversations that can be summarised."""
        return await self._run(store.conversations)

    def transfer_state(self) -> tuple[list[Summary], dict[int, datetime]]:
        """Every summary and when its conversation was created, for the export and import.

        Blocking (it waits for the DB thread): for worker threads, never the UI thread.
        """
        return self._db.call(transfer.local_summaries)

    # -- changes by the user --------------------------------------------------------------------

    async def edit(self, summary_id: int, text: str) -> Summary:
        """Give a summary new text.

        Raises:
            MemoryEmpty, MemoryTooLong, MemorySecret: The text was refused (nothing changed).
            InvalidInput: The summary no longer exists.
        """
        content = check_content(text, max_chars=MAX_EDIT_CHARS)
        edited = await self._run(store.edit, summary_id, content, self.clock.now())
        if edited is None:
            raise InvalidInput(f"no summary {summary_id}", reason="missing")
        self._published(edited.conversation_id)
        return edited

    async def archive(self, summary_ids: Sequence[int]) -> int:
        """Archive summaries (never sent again until restored); returns how many changed."""
        changed = await self._run(store.set_archived, list(summary_ids), True, self.clock.now())
        self._published(changed=changed)
        return changed

    async def restore(self, summary_ids: Sequence[int]) -> int:
        """Restore archived summaries; returns how many changed."""
        changed = await self._run(store.set_archived, list(summary_ids), False, self.clock.now())
        self._published(changed=changed)
        return changed

    async def delete_many(self, summary_ids: Sequence[int]) -> list[DeletedSummary]:
        """Delete summaries for real in one transaction; keep the snapshots for Undo only."""
        deleted = await self._run(store.delete_many, list(summary_ids))
        self._published(changed=len(deleted))
        return deleted

    async def undo_delete_many(self, deleted: Sequence[DeletedSummary]) -> list[int]:
        """Put deleted summaries back from their snapshots."""
        restored = await self._run(store.undo_delete_many, list(deleted))
        self._published(changed=len(restored))
        return restored

    def _published(self, conversation_id: int | None = None, *, changed: int = 1) -> None:
        # After the transaction committed, on the loop (the hub's contract).
        if self._changes is not None and changed:
            self._changes.publish(SummariesChanged(conversation_id))

    # -- recall ---------------------------------------------------------------------------------

    async def recall(
        self, query: str, exclude_conversation_id: int | None, k: int = RECALL_COUNT
    ) -> list[SummaryHit]:
        """Search other conversations' summaries for a recall question.

        By meaning (the memory embedder; summaries without a vector of it are embedded now and
        the vectors stored), by keywords, and by the period the question names.

        Returns:
            The eligible summaries, best first (possibly none).
        """
        candidates = await self._run(store.recall_candidates, exclude_conversation_id)
        if not candidates:
            return []
        embedder, tuning = self._embedding()
        vectors: dict[int, FloatArray] = {}
        query_vector: FloatArray | None = None
        if embedder is not None:
            ids = [s.id for s in candidates]
            stored = await self._run(store.vectors, embedder.key, ids)
            missing = [s for s in candidates if s.id not in stored]
            try:
                embedded = await self._in_pool(
                    _embed,
                    embedder,
                    [query, *[f"{s.conversation_title}\n{s.content}" for s in missing]],
                )
            except ProviderError as exc:
                # Recall is a help: an embedder failure falls back to keywords and dates.
                log.warning("summary recall without vectors: %s", exc.code)
                embedded = None
            if embedded is not None:
                query_vector = embedded[0]
                fresh = list(zip((s.id for s in missing), embedded[1:], strict=True))
                if fresh:
                    await self._run(
                        store.store_vectors,
                        embedder.key,
                        embedder.dimension,
                        [(i, to_blob(v)) for i, v in fresh],
                    )
                vectors = {i: from_blob(b, embedder.dimension) for i, b in stored.items()}
                vectors.update(fresh)
        window = resolve_time_window(query, self.clock.now().astimezone())
        if window is not None and window.soft:
            # "Recently" names no period (issue 18): no summary is recalled for being recent.
            window = None
        return await self._in_pool(
            functools.partial(
                rank_summaries,
                query,
                candidates,
                vectors=vectors,
                query_vector=query_vector,
                tuning=tuning,
                window=window,
                k=k,
            )
        )

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args))

    def close(self) -> None:
        """Stop the worker thread (blocking; waits for a running recall)."""
        self._pool.shutdown(wait=True)


def _embed(embedder: Embedder, texts: Sequence[str]) -> FloatArray:
    vectors = numpy.asarray(embedder.embed(list(texts)), dtype=numpy.float32)
    if vectors.shape != (len(texts), embedder.dimension):
        raise ValueError(f"embedder {embedder.key} returned shape {vectors.shape}")
    return vectors
