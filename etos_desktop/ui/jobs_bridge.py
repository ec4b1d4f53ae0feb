"""The bridge from the background jobs' plain callbacks to Qt signals.

The jobs service (``services/jobs.py``) is Qt-free: it tells listeners what changed
(``services/runs.py``). This object
listens on the event loop's thread (the Qt thread) and re-emits each change as a signal, so
widgets connect to signals as they do everywhere else.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from etos_desktop.services.jobs import BackgroundJobs
from etos_desktop.services.runs import Change


class JobsBridge(QObject):
    """Re-emits the background jobs' changes as signals.

    Args:
        jobs: The jobs service.
        parent: The Qt parent.

    Signals:
        conversation_changed(int): a job changed a conversation's row (its title).
        summaries_changed(): a summary was written, or an attempt recorded.
        profile_changed(): the profile was refreshed, or a refresh recorded.
        jobs_changed(): a job started, ended or was scheduled.
    """

    conversation_changed = Signal(int)
    summaries_changed = Signal()
    profile_changed = Signal()
    jobs_changed = Signal()

    def __init__(self, jobs: BackgroundJobs, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        jobs.add_listener(self._on_jobs_change)

    def detach(self) -> None:
        """Stop listening (the app is shutting down)."""
        self.jobs.remove_listener(self._on_jobs_change)

    def _on_jobs_change(self, change: Change) -> None:
        kind, conversation_id = change
        if kind == "conversation" and conversation_id is not None:
            self.conversation_changed.emit(conversation_id)
        elif kind == "summaries":
            self.summaries_changed.emit()
        elif kind == "profile":
            self.profile_changed.emit()
        else:
            self.jobs_changed.emit()
