"""The bridge from the data's change hub to Qt: one signal for every change.

The code that changes data (the chat service, the memory access, the background jobs) is Qt-free:
it publishes a typed ``DataChange`` on the app's ``ChangeHub`` (``core/changes.py``), on the
event loop's thread, which is the Qt thread. This object hears every change and re-emits it, so
pages and windows connect to one signal and refresh when a change touches their layer
(``change.touches(Layer.MEMORIES)``).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from etos_desktop.core.changes import ChangeHub, DataChange


class ChangesBridge(QObject):
    """Re-emits every change published on the hub as a signal (on the GUI thread).

    Args:
        changes: The app's change hub.
        parent: The Qt parent.

    Signals:
        changed(object): a ``DataChange`` was published (its type and ``layers`` say what).
    """

    changed = Signal(object)

    def __init__(self, changes: ChangeHub, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe = changes.subscribe(self._on_hub_change)

    def detach(self) -> None:
        """Stop listening (the app is shutting down)."""
        self._unsubscribe()

    def _on_hub_change(self, change: DataChange) -> None:
        self.changed.emit(change)
