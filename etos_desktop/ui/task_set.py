"""Keeping the asyncio tasks a widget starts referenced until they end, and their failures seen."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from etos_desktop.core.errors import EtosError

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

#: Shows a failure where it happened: the words of what was not done, and the exception.
Reporter = Callable[[str, BaseException], None]


class TaskSet:
    """Tasks kept referenced until they end (a dropped task can be collected mid-flight).

    Each task carries the words for its failure — what was not done ("The memory was not
    added.") — and a failure is shown once, in the place it happened, by ``report``. An
    ``EtosError`` is an expected outcome (disk full, server down) and is logged at INFO; any other
    exception is a bug and is logged once at ERROR with its traceback. Without a ``report``, a
    failure takes the route an exception in an ``@asyncSlot`` takes: ``sys.excepthook``, where
    the app's one hook logs it and shows the error dialog (STYLE recipe 4).

    Args:
        report: Shows failures in place (a page's status line, a banner…).
    """

    def __init__(self, report: Reporter | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._failures: dict[asyncio.Task[Any], tuple[str, Reporter | None]] = {}
        self._report = report

    def spawn(
        self, coro: Coroutine[Any, Any, Any], failure: str = "", report: Reporter | None = None
    ) -> asyncio.Task[Any]:
        """Start ``coro`` as a task and keep it until it ends.

        Args:
            coro: The work.
            failure: What was not done if it fails, already translated.
            report: Shows this task's failure instead of the set's reporter (e.g. in the dialog
                the action was started from).
        """
        # Imported here: widgets holding a TaskSet are built before the first frame, and asyncio
        # (with ssl, socket, subprocess) cost ~40-60 ms of start-up there.
        import asyncio

        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        self._failures[task] = (failure, report)
        task.add_done_callback(self._on_done)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def _on_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        failure, report = self._failures.pop(task, ("", None))
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        report = report or self._report
        if report is None:
            sys.excepthook(type(exc), exc, exc.__traceback__)
            return
        if isinstance(exc, EtosError):
            log.info("%s %s: %s", failure or "task failed:", exc.code, exc.detail)
        else:
            log.error("%s unexpected error", failure or "task failed:", exc_info=exc)
        report(failure, exc)

    def cancel_all(self) -> None:
        """Cancel every task still running."""
        for task in list(self._tasks):
            task.cancel()

    async def wait_idle(self) -> None:
        """Wait until every task has ended (tests, closing)."""
        import asyncio

        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
