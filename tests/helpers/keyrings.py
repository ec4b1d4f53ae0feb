"""A keyring backend for tests that remembers on which thread every call ran.

The OS keyring can block for as long as an unlock prompt is open, so the app must never call it
on the UI thread (the event loop's thread, which is the main thread in every test). Tests install
this backend (``SecretStore(data_dir, backend=...)``, or in place of ``keyring.get_keyring``)
and assert on :attr:`calls`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import keyring.backend
import keyring.errors


@dataclass(frozen=True)
class KeyringCall:
    """One call into the keyring."""

    operation: str
    username: str
    thread: threading.Thread

    @property
    def on_main_thread(self) -> bool:
        """Whether it ran on the main thread (the UI / event-loop thread in tests)."""
        return self.thread is threading.main_thread()


class ThreadRecordingKeyring(keyring.backend.KeyringBackend):
    """An in-memory keyring backend that records the thread of every call."""

    priority = 1  # type: ignore[assignment]

    def __init__(self, entries: dict[str, str] | None = None) -> None:
        super().__init__()
        #: Stored keys by provider id (the keyring "username"; the service is the app's name).
        self.entries: dict[str, str] = dict(entries or {})
        self.calls: list[KeyringCall] = []
        self._lock = threading.Lock()

    def _record(self, operation: str, username: str) -> None:
        with self._lock:
            self.calls.append(KeyringCall(operation, username, threading.current_thread()))

    def get_password(self, service: str, username: str) -> str | None:
        self._record("get", username)
        return self.entries.get(username)

    def set_password(self, service: str, username: str, password: str) -> None:
        self._record("set", username)
        self.entries[username] = password

    def delete_password(self, service: str, username: str) -> None:
        self._record("delete", username)
        if self.entries.pop(username, None) is None:
            raise keyring.errors.PasswordDeleteError("not found")

    def reads(self) -> list[KeyringCall]:
        """The ``get`` calls, in order."""
        with self._lock:
            return [c for c in self.calls if c.operation == "get"]

    def on_main_thread(self) -> list[KeyringCall]:
        """Every call that ran on the main thread (there should be none)."""
        with self._lock:
            return [c for c in self.calls if c.on_main_thread]
