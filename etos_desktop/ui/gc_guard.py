"""Python's garbage collector runs only on the GUI thread.

A cyclic Qt wrapper collected on a worker thread (the DB thread allocates a lot) would destroy a
QObject off its thread and crash. As qutebrowser does, automatic collection is turned off and a
timer on the GUI thread collects instead.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: How often the GUI thread checks whether a collection is due (ms). Measured while a reply
#: streams at 100 chunks/s: checking every 500 ms let gen-0 grow until one collection took
#: 51 ms; every 50 ms the worst was 10 ms (tests/bench/stall.py).
CHECK_INTERVAL_MS = 50


class GarbageCollector(QObject):
    """Runs ``gc.collect`` for the generations whose thresholds were passed, on the GUI thread."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_INTERVAL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        """Turn automatic collection off and start collecting young objects on the timer."""
        gc.disable()
        self._timer.start()

    def freeze_startup_objects(self) -> None:
        """Exempt everything alive now (modules, widgets, caches) from future collections.

        Called once the app has started: later collections then only walk objects created
        since, which keeps each pause short while a reply streams.
        """
        gc.collect()
        gc.freeze()

    def stop(self) -> None:
        """Stop the timer and give collection back to Python."""
        self._timer.stop()
        gc.enable()

    def _on_timer_timeout(self) -> None:
        threshold = gc.get_threshold()
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > threshold[generation]:
                gc.collect(generation)
                break
