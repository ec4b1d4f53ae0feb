"""Async access to the long-term memory engine for code on the event loop.

The engine is synchronous: its database work runs on the DB thread and its vector math in the
caller's thread. This facade runs every call in a small worker pool, so the event loop (the UI
thread) never waits on embedding, vector search or the disk. It is the only way the UI reaches
the engine: besides the engine's own calls it describes the active embedder in parts the UI can
put into words, and :meth:`MemoryAccess.run` runs composed work on the engine in the same pool
(the export and import of every layer, ``core.transfer``). Every write publishes one
``MemoriesChanged`` on the app's change hub, back on the event loop once it committed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urlsplit

from etos_desktop.core.changes import ChangeHub, MemoriesChanged, MemoryChange
from etos_desktop.core.memory import listing
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.listing import MemoryFilters
from etos_desktop.core.memory.records import (
    DeletedMemory,
    Memory,
    MemorySource,
    Revision,
    SaveResult,
)
from etos_desktop.core.memory.search import Hit
from etos_desktop.core.providers.embedding import Embedder
from etos_desktop.core.retrieval.tuning import Tuning
from etos_desktop.core.storage.windows import PAGE_SIZE, Cursor, ListCounts, ListOrder, ListWindow

if TYPE_CHECKING:
    from etos_desktop.core.context.language import Language
    from etos_desktop.core.memory.standing import StandingChoice

T = TypeVar("T")

#: Key prefixes of the embedders the app builds (``core/providers/embedders.py``).
_BUILTIN_PREFIX = "use-m3:"
_ENDPOINT_PREFIX = "openai:"


@dataclass(frozen=True)
class EmbedderInfo:
    """The active embedder in parts the UI can put into words (its key is jargon).

    Attributes:
        kind: ``"builtin"`` (the embedded multilingual model), ``"endpoint"`` (an embeddings
            model on the user's server) or ``"other"`` (an embedder of a script or a test).
        model: The model: the endpoint's model id, else the key's name part (``"use-m3"``).
        dimension: The length of its vectors.
        host: The endpoint's ``host[:port]``; ``""`` for the others.
    """

    kind: Literal["builtin", "endpoint", "other"]
    model: str
    dimension: int
    host: str = ""


@dataclass(frozen=True)
class EmbeddingState:
    """Which embedder matches memories by meaning, and how many memories it has vectors for.

    Attributes:
        embedder: The active embedder; ``None`` when memories are matched by keywords only.
        embedded: Memories with a vector of the active embedder.
        total: All memories, archived ones included.
    """

    embedder: EmbedderInfo | None
    embedded: int
    total: int


def describe_embedder(embedder: Embedder | None) -> EmbedderInfo | None:
    """Describe ``embedder`` from its key (``"use-m3:512"``, ``"openai:<url>:<model>:<dim>"``).

    Returns:
        The description, or ``None`` for no embedder (keyword matching only).
    """
    if embedder is None:
        return None
    key = embedder.key
    if key.startswith(_BUILTIN_PREFIX):
        return EmbedderInfo("builtin", key.split(":", 1)[0], embedder.dimension)
    model = getattr(embedder, "model", None)
    suffix = f":{model}:{embedder.dimension}"
    if key.startswith(_ENDPOINT_PREFIX) and isinstance(model, str) and key.endswith(suffix):
        # The URL and the model id may both hold colons; the model id is known, so cut it off.
        base_url = key[len(_ENDPOINT_PREFIX) : -len(suffix)]
        return EmbedderInfo("endpoint", model, embedder.dimension, urlsplit(base_url).netloc)
    return EmbedderInfo("other", key.rsplit(":", 1)[0], embedder.dimension)


class MemoryAccess:
    """Runs ``MemoryEngine`` calls off the event loop.

    Args:
        engine: The engine (sharing the app's database).
        workers: Worker threads; two let a search run while a save embeds.
        changes: The app's change hub, where every write is published (``None``: a hub of its
            own, which nobody hears unless they subscribe to :attr:`changes`).
    """

    def __init__(
        self, engine: MemoryEngine, *, workers: int = 2, changes: ChangeHub | None = None
    ) -> None:
        self.engine = engine
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="etos-memory"
        )
        #: Where the writes are published (``MemoriesChanged``).
        self.changes = changes if changes is not None else ChangeHub()

    def _published(self, ids: Sequence[int], reason: MemoryChange, actor: str) -> None:
        self.changes.publish(MemoriesChanged(tuple(ids), reason, actor))

    @property
    def max_content_chars(self) -> int:
        """The longest memory text accepted (setting ``memory.max_content_chars``)."""
        return self.engine.max_content_chars

    def set_embedder(self, embedder: Embedder | None, tuning: Tuning | None = None) -> None:
        """Switch the active embedder and its tuning (``MemoryEngine.set_embedder``; cheap)."""
        self.engine.set_embedder(embedder, tuning)

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    async def run(self, fn: Callable[[MemoryEngine], T]) -> T:
        """Run ``fn(engine)`` in this object's worker threads, off the loop.

        For work that composes several engine calls with blocking reads of its own (the export
        and import of every layer, ``core.transfer``): like every call here, it may embed and
        wait for the DB thread, and must not touch the event loop or Qt.
        """
        return await self._call(fn, self.engine)

    async def search(
        self, query: str, k: int = 5, mode: str = "hybrid", **options: Any
    ) -> list[Hit]:
        """``MemoryEngine.search`` off the loop."""
        return await self._call(self.engine.search, query, k, mode, **options)

    async def save(self, text: str, kind: str = "fact", **options: Any) -> SaveResult:
        """``MemoryEngine.save`` off the loop (write checks, duplicate merge, supersede).

        Published as ``MemoriesChanged`` with the save's ``source``; a save that ended an older
        memory (``supersedes=``, or a stated change of the same slot) names it in
        ``superseded``.
        """
        result = await self._call(self.engine.save, text, kind, **options)
        source = str(options.get("source", MemorySource.MANUAL))
        superseded = () if result.superseded is None else (result.superseded,)
        self.changes.publish(MemoriesChanged((result.id,), MemoryChange.SAVED, source, superseded))
        return result

    async def edit(self, memory_id: int, **changes: Any) -> Memory:
        """``MemoryEngine.edit`` off the loop (re-embeds when the text changes)."""
        memory = await self._call(self.engine.edit, memory_id, **changes)
        self._published([memory_id], MemoryChange.EDITED, str(changes.get("actor", "user")))
        return memory

    async def archive(self, memory_id: int, *, actor: str = "user") -> Memory:
        """Archive one memory (kept, never retrieved; undoable)."""
        memory = await self._call(self.engine.archive, memory_id, actor=actor)
        self._published([memory_id], MemoryChange.ARCHIVED, actor)
        return memory

    async def restore(self, memory_id: int, *, actor: str = "user") -> Memory:
        """Restore an archived memory."""
        memory = await self._call(self.engine.restore, memory_id, actor=actor)
        self._published([memory_id], MemoryChange.RESTORED, actor)
        return memory

    async def delete(self, memory_id: int, *, actor: str = "user") -> DeletedMemory:
        """Delete for real; the returned snapshot allows an in-memory undo."""
        deleted = await self._call(self.engine.delete, memory_id, actor=actor)
        self._published([memory_id], MemoryChange.DELETED, actor)
        return deleted

    async def delete_many(
        self, memory_ids: Sequence[int], *, actor: str = "user"
    ) -> list[DeletedMemory]:
        """Delete several memories in one transaction; one undo snapshot each."""
        deleted = await self._call(self.engine.delete_many, list(memory_ids), actor=actor)
        self._published(memory_ids, MemoryChange.DELETED, actor)
        return deleted

    async def undo_delete(self, deleted: DeletedMemory, *, actor: str = "user") -> Memory:
        """Put a deleted memory back from its snapshot."""
        memory = await self._call(self.engine.undo_delete, deleted, actor=actor)
        self._published([memory.id], MemoryChange.BROUGHT_BACK, actor)
        return memory

    async def undo_delete_many(
        self, deleted: Sequence[DeletedMemory], *, actor: str = "user"
    ) -> list[Memory]:
        """Put the memories of a bulk delete back, in one transaction."""
        memories = await self._call(self.engine.undo_delete_many, list(deleted), actor=actor)
        self._published([m.id for m in memories], MemoryChange.BROUGHT_BACK, actor)
        return memories

    async def get(self, memory_id: int) -> Memory | None:
        """One memory, or ``None``."""
        return await self._call(self.engine.get, memory_id)

    async def get_many(self, memory_ids: Sequence[int]) -> dict[int, Memory]:
        """The memories with these ids that exist, by id (one worker call)."""

        def read() -> dict[int, Memory]:
            found = (self.engine.get(memory_id) for memory_id in dict.fromkeys(memory_ids))
            return {memory.id: memory for memory in found if memory is not None}

        return await self._call(read)

    async def memories(self, *, include_inactive: bool = False) -> list[Memory]:
        """All memories (active only unless asked)."""
        return await self._call(self.engine.memories, include_inactive=include_inactive)

    async def window(
        self,
        filters: MemoryFilters,
        order: ListOrder,
        *,
        after: Cursor | None = None,
        limit: int = PAGE_SIZE,
        with_counts: bool = False,
    ) -> ListWindow[Memory]:
        """One window of the memory list (``listing.window``), read on the DB thread.

        Args:
            filters: What the list shows.
            order: How it is sorted.
            after: Start after this row (the previous window's cursor); ``None``: the first.
            limit: At most this many memories.
            with_counts: Read the list's counts too, in the same transaction.
        """
        return await self._call(
            self._read,
            lambda s, now: listing.window(
                s, filters, order, now, after=after, limit=limit, with_counts=with_counts
            ),
        )

    async def counts(self, filters: MemoryFilters) -> ListCounts:
        """The memory list's counts: all, matching ``filters``, and the active ones of each."""
        return await self._call(self._read, lambda s, now: listing.counts(s, filters, now))

    async def matching_ids(
        self, filters: MemoryFilters, *, archivable: bool | None = None
    ) -> list[int]:
        """The ids of every memory ``filters`` let through (``listing.matching_ids``)."""
        return await self._call(
            self._read,
            lambda s, now: listing.matching_ids(s, filters, now, archivable=archivable),
        )

    def _read(self, fn: Callable[[Any, datetime], T]) -> T:
        # On a worker thread. The engine has no public read-a-query call (engine.py is not this
        # module's); its DB-thread runner and clock are what every engine read uses, so active
        # means the same here as in search.
        engine = self.engine
        now = engine._now()
        result: T = engine._call(lambda session: fn(session, now))
        return result

    async def archive_many(self, memory_ids: Sequence[int], *, actor: str = "user") -> list[int]:
        """Archive several memories in one transaction; returns the ids archived now."""
        return await self._call(self.engine.archive_many, list(memory_ids), actor=actor)

    async def restore_many(
        self, memory_ids: Sequence[int], *, actor: str = "user", archive_only: bool = False
    ) -> list[int]:
        """Restore several memories in one transaction (``MemoryEngine.restore_many``)."""
        return await self._call(
            self.engine.restore_many, list(memory_ids), actor=actor, archive_only=archive_only
        )

    async def saved_from_messages(self, message_ids: Sequence[int]) -> list[Memory]:
        """The active memories saved from these messages."""
        return await self._call(self.engine.saved_from_messages, list(message_ids))

    async def history(self, memory_id: int) -> list[Revision]:
        """Every recorded change of one memory."""
        return await self._call(self.engine.history, memory_id)

    async def count_active(self) -> int:
        """How many active memories exist."""
        return await self._call(self.engine.count_active)

    async def standing(self, budget: int, lang: Language) -> StandingChoice:
        """Decide "All that fit" for one request (``standing.choose``), off the loop.

        One ``COUNT`` on the DB thread; the rows (at most ``standing.row_limit(budget)``, in id
        order) are read only when the count allows them to fit.

        Args:
            budget: The effective budget in tokens (``standing.effective_budget``).
            lang: The conversation's language (the block's words).
        """
        # Imported here: standing.py builds on retrieval.py, which imports this module.
        from etos_desktop.core.memory import standing

        engine = self.engine

        def decide() -> StandingChoice:
            # The engine has no public read-a-query call yet (engine.py is not this module's);
            # its DB-thread runner and clock are what every engine read uses, so active means
            # the same here as in search.
            now = engine._now()
            count, memories = engine._call(lambda s: standing.read_store(s, now, budget))
            return standing.choose(count, budget, memories, lang)

        return await self._call(decide)

    async def mark_accessed(self, memory_ids: Sequence[int]) -> None:
        """Count a retrieval of these memories."""
        await self._call(self.engine.mark_accessed, list(memory_ids))

    async def reembed(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> int:
        """Re-embed every memory for the active embedder (cancellable)."""
        return await self._call(self.engine.reembed, progress, cancel)

    async def embedding_state(self) -> EmbeddingState:
        """The active embedder and how many memories have its vectors."""
        embedder = self.engine.embedder
        embedded, total = await self._call(self.engine.embedding_status)
        return EmbeddingState(describe_embedder(embedder), embedded, total)

    def close(self) -> None:
        """Stop the worker threads (blocking; waits for running calls)."""
        self._pool.shutdown(wait=True)
