"""Async access to the long-term memory engine for code on the event loop.

The engine is synchronous: its database work runs on the DB thread and its vector math in the
caller's thread. This facade runs every call in a small worker pool, so the event loop (the UI
thread) never waits on embedding, vector search or the disk.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.records import DeletedMemory, Memory, Revision, SaveResult
from etos_desktop.core.memory.search import Hit

T = TypeVar("T")


class MemoryAccess:
    """Runs ``MemoryEngine`` calls off the event loop.

    Args:
        engine: The engine (sharing the app's database).
        workers: Worker threads; two let a search run while a save embeds.
    """

    def __init__(self, engine: MemoryEngine, *, workers: int = 2) -> None:
        self.engine = engine
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="etos-memory"
        )

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    async def search(
        self, query: str, k: int = 5, mode: str = "hybrid", **options: Any
    ) -> list[Hit]:
        """``MemoryEngine.search`` off the loop."""
        return await self._call(self.engine.search, query, k, mode, **options)

    async def save(self, text: str, kind: str = "fact", **options: Any) -> SaveResult:
        """``MemoryEngine.save`` off the loop (write checks, duplicate merge, supersede)."""
        return await self._call(self.engine.save, text, kind, **options)

    async def edit(self, memory_id: int, **changes: Any) -> Memory:
        """``MemoryEngine.edit`` off the loop (re-embeds when the text changes)."""
        return await self._call(self.engine.edit, memory_id, **changes)

    async def archive(self, memory_id: int, *, actor: str = "user") -> Memory:
        """Archive one memory (kept, never retrieved; undoable)."""
        return await self._call(self.engine.archive, memory_id, actor=actor)

    async def restore(self, memory_id: int, *, actor: str = "user") -> Memory:
        """Restore an archived memory."""
        return await self._call(self.engine.restore, memory_id, actor=actor)

    async def delete(self, memory_id: int, *, actor: str = "user") -> DeletedMemory:
        """Delete for real; the returned snapshot allows an in-memory undo."""
        return await self._call(self.engine.delete, memory_id, actor=actor)

    async def delete_many(
        self, memory_ids: Sequence[int], *, actor: str = "user"
    ) -> list[DeletedMemory]:
        """Delete several memories in one transaction; one undo snapshot each."""
        return await self._call(self.engine.delete_many, list(memory_ids), actor=actor)

    async def undo_delete(self, deleted: DeletedMemory, *, actor: str = "user") -> Memory:
        """Put a deleted memory back from its snapshot."""
        return await self._call(self.engine.undo_delete, deleted, actor=actor)

    async def undo_delete_many(
        self, deleted: Sequence[DeletedMemory], *, actor: str = "user"
    ) -> list[Memory]:
        """Put the memories of a bulk delete back, in one transaction."""
        return await self._call(self.engine.undo_delete_many, list(deleted), actor=actor)

    async def get(self, memory_id: int) -> Memory | None:
        """One memory, or ``None``."""
        return await self._call(self.engine.get, memory_id)

    async def memories(self, *, include_inactive: bool = False) -> list[Memory]:
        """All memories (active only unless asked)."""
        return await self._call(self.engine.memories, include_inactive=include_inactive)

    async def saved_from_messages(self, message_ids: Sequence[int]) -> list[Memory]:
        """The active memories saved from these messages."""
        return await self._call(self.engine.saved_from_messages, list(message_ids))

    async def history(self, memory_id: int) -> list[Revision]:
        """Every recorded change of one memory."""
        return await self._call(self.engine.history, memory_id)

    async def count_active(self) -> int:
        """How many active memories exist."""
        return await self._call(self.engine.count_active)

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

    def close(self) -> None:
        """Stop the worker threads (blocking; waits for running calls)."""
        self._pool.shutdown(wait=True)
