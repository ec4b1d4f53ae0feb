"""What the UI benchmarks share: a tick recorder for loop stalls, and running on qasync."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: The stall probe's timer interval.
TICK_MS = 5


class TickRecorder:
    """Records the intervals between ticks of a 5 ms timer on the Qt event loop."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.intervals: list[float] = []
        self._last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._on_tick)

    def _on_tick(self) -> None:
        now = time.perf_counter()
        self.intervals.append(now - self._last)
        self._last = now

    def start(self) -> None:
        self.intervals.clear()
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> list[float]:
        self.timer.stop()
        return list(self.intervals)


def worst_ms(intervals: list[float]) -> float:
    """The longest stall: the longest interval minus the timer's own interval."""
    return max(0.0, max(intervals) - TICK_MS / 1000) * 1000


def p99_ms(intervals: list[float]) -> float:
    return sorted(intervals)[int(len(intervals) * 0.99)] * 1000


def run_on_qasync(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run ``main()`` on a qasync loop (offscreen unless DISPLAY is set), as the app does."""
    sys.path.insert(0, str(ROOT))
    if not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        return loop.run_until_complete(main())
