"""One running app per data folder: a second launch shows the running window and exits.

Two processes on one data folder would write one database and one settings file from two
sides. The first launch locks ``instance.lock`` in the data folder (a ``QLockFile``: the lock of
a process that died is taken over) and listens on a local socket named after the folder; a
second launch finds the lock taken, asks the first, over that socket, to show its window, and
exits 0 once the first answers that it did. A launch on another data folder (every test has its
own) is not affected.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal

from etos_desktop.core.settings import paths

log = logging.getLogger(__name__)

#: What a second launch sends.
_SHOW = b"show\n"
#: What the first answers once its window is shown.
_SHOWN = b"ok\n"
#: How long a second launch keeps trying to reach the first (which may still be starting), and
#: then how long it waits for the answer. A stopped process's socket still accepts connections
#: and takes the request (the kernel's backlog and buffer): only the answer counts.
_REACH_SECONDS = 5.0
_ANSWER_SECONDS = 5.0
#: The longest Unix socket path every supported system takes (macOS: 104 bytes with the NUL).
_MAX_SOCKET_PATH = 103


def server_name(data_dir: Path) -> str:
    """The local socket's name for ``data_dir``: the same for the same folder and user."""
    import hashlib  # only when needed: it loads OpenSSL (a few ms of start-up)

    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "")
    folder = str(data_dir.expanduser().resolve())
    digest = hashlib.sha256(f"{user}\0{folder}".encode()).hexdigest()[:20]
    name = f"etos-desktop-{digest}"
    if os.name != "posix":
        return name
    # Qt puts a named socket in the temporary folder; a Unix socket's path holds at most 103
    # bytes (macOS; Linux 107), so under a long TMPDIR listen() failed and a second launch
    # could not reach the first. Then a full path in a short folder is used.
    default = os.path.join(os.environ.get("TMPDIR") or "/tmp", name)
    if len(os.fsencode(default)) <= _MAX_SOCKET_PATH:
        return name
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        candidate = os.path.join(runtime, name)
        if len(os.fsencode(candidate)) <= _MAX_SOCKET_PATH:
            return candidate
    return os.path.join("/tmp", name)


class InstanceGuard(QObject):
    """The first launch's claim on a data folder.

    Signals:
        show_requested(): another launch on this data folder asked to show the window.
    """

    show_requested = Signal()

    def __init__(self, data_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.data_dir = data_dir
        paths.make_private_dir(data_dir)
        self._lock = QLockFile(str(data_dir / "instance.lock"))
        # Never stale by age (a long session); a dead process's lock is stale all the same.
        self._lock.setStaleLockTime(0)
        self._server: object = None

    def holder_pid(self) -> int | None:
        """The process id written in the lock by the app that holds it, if it can be read."""
        # PySide6 returns (pid, host name, app name), and no tuple when there is no lock file.
        info = self._lock.getLockInfo()
        pid = info[0] if isinstance(info, tuple) and info else 0
        return int(pid) if isinstance(pid, int) and pid > 0 else None

    @property
    def listening(self) -> bool:
        """Whether later launches can reach this one (the local socket is up)."""
        return self._server is not None

    def claim(self) -> bool:
        """Take the folder; ``False`` when a running app has it.

        Raises:
            StorageError: The lock file cannot be written (a read-only folder, no permission):
                that is no sign of another app.
        """
        if not self._lock.tryLock(0):
            if self._lock.error() == QLockFile.LockError.LockFailedError:
                return False
            from etos_desktop.core.errors import StorageError

            if self._lock.error() == QLockFile.LockError.PermissionError:
                reason = "permission"
            elif paths.disk_is_full(self.data_dir):
                # Qt reports ENOSPC as an unknown error: the free room tells.
                reason = "disk_full"
            else:
                reason = "io"
            raise StorageError(
                f"{self.data_dir / 'instance.lock'} cannot be created", reason=reason
            )
        # QLockFile writes it with the umask's mode; every file in the data folder is 0600.
        paths.make_private_file(self.data_dir / "instance.lock")
        return True

    def listen(self) -> None:
        """Answer later launches (done after the first frame: QtNetwork loads then)."""
        try:
            from PySide6.QtNetwork import QLocalServer
        except ImportError:  # a bundle built without QtNetwork: the lock still guards the data
            log.warning("QtNetwork is missing: a second launch cannot show this window")
            return

        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        # A socket file left by a crash would make listen() fail; the lock says it is ours.
        name = server_name(self.data_dir)
        QLocalServer.removeServer(name)
        if not server.listen(name):
            log.warning("no single-instance socket: %s", server.errorString())
            return
        server.newConnection.connect(self._on_server_new_connection)
        self._server = server

    def _on_server_new_connection(self) -> None:
        from PySide6.QtNetwork import QLocalServer

        server = self._server
        assert isinstance(server, QLocalServer)
        while (socket := server.nextPendingConnection()) is not None:
            socket.readyRead.connect(lambda s=socket: self._on_socket_ready_read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _on_socket_ready_read(self, socket: object) -> None:
        from PySide6.QtNetwork import QLocalSocket

        assert isinstance(socket, QLocalSocket)
        if bytes(socket.readAll().data()).startswith(_SHOW.strip()):
            log.info("another launch on this data folder: showing the window")
            self.show_requested.emit()
            socket.write(_SHOWN)
            socket.flush()
        socket.disconnectFromServer()

    def release(self) -> None:
        """Give the folder up (the app is closing)."""
        server = self._server
        if server is not None:
            server.close()  # type: ignore[attr-defined]
            self._server = None
        if self._lock.isLocked():
            self._lock.unlock()


def ask_running_to_show(
    data_dir: Path, *, seconds: float = _REACH_SECONDS, answer_seconds: float = _ANSWER_SECONDS
) -> bool:
    """Ask the app running on ``data_dir`` to show its window; ``False`` if it did not answer.

    Runs before this launch shows anything, so it may wait for the first app to start
    listening (a second launch right after the first). Only the first app's answer that it
    showed its window counts, within ``answer_seconds`` of reaching it.
    """
    try:
        from PySide6.QtNetwork import QLocalSocket
    except ImportError:  # a bundle built without QtNetwork
        return False
    name = server_name(data_dir)
    deadline = time.monotonic() + seconds
    while True:
        socket = QLocalSocket()
        socket.connectToServer(name)
        if socket.waitForConnected(500):
            socket.write(_SHOW)
            socket.waitForBytesWritten(1000)
            answer = b""
            answer_by = time.monotonic() + answer_seconds
            while not answer.endswith(b"\n") and time.monotonic() < answer_by:
                if socket.bytesAvailable() or socket.waitForReadyRead(100):
                    answer += bytes(socket.readAll().data())
                elif socket.state() == QLocalSocket.LocalSocketState.UnconnectedState:
                    break
            socket.abort()
            return answer == _SHOWN
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def end_process(pid: int, *, seconds: float = 5.0) -> bool:
    """End the app ``pid`` that does not respond: SIGTERM, then SIGKILL after ``seconds``.

    SIGCONT goes with SIGTERM: a stopped process only acts on SIGTERM once it runs again.

    Returns:
        Whether the process is gone.
    """
    import signal

    def alive() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: not ours to end
            return True
        return True

    try:
        os.kill(pid, signal.SIGTERM)
        if hasattr(signal, "SIGCONT"):
            os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    # Not our child, so there is nothing to wait on: its existence is polled.
    deadline = time.monotonic() + seconds
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive() and hasattr(signal, "SIGKILL"):
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + seconds
        while alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    return not alive()
