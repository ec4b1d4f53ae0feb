"""Keeping the asyncio tasks a widget starts referenced until they end."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any


class TaskSet:
    """Tasks kept referenced until they end: a dropped task can be collected mid-flight.

    An exception a task ends with takes the route an exception in an ``@asyncSlot`` takes:
    ``sys.excepthook``, where the app's one hook logs it and shows the error dialog (STYLE
    recipe 4).
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Start ``coro`` as a task and keep it until it ends."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._on_done)
        return task

    def _on_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            sys.excepthook(type(exc), exc, exc.__traceback__)

    def cancel_all(self) -> None:
        """Cancel every task still running."""
        for task in list(self._tasks):
            task.cancel()

    async def wait_idle(self) -> None:
        """Wait until every task has ended (tests, closing)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
