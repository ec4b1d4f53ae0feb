"""One app per data folder, with real processes: a second launch shows the first and exits 0.

The first launch runs the whole app offscreen against the local test server; a second launch
on the same data folder asks it to show its window (the first logs that it did) and exits 0
without opening anything; a launch on another data folder starts as usual; the lock of an app
that was killed does not keep the next launch out.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.ui.single_instance import InstanceGuard, server_name
from tests.helpers.fake_openai_server import FakeOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]
STARTUP = 60.0

pytestmark = pytest.mark.slow


def _env(data_dir: Path, server: FakeOpenAIServer) -> dict[str, str]:
    return {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ETOS_DATA_DIR": str(data_dir),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_MODEL": "fake-chat",
        "PYTHONPATH": str(REPO_ROOT),
    }


def _listening(data_dir: Path) -> bool:
    # QLocalServer's socket on Unix is a file in Qt's temporary folder ($TMPDIR or /tmp); a
    # killed app leaves it behind, so only a connection that is accepted counts.
    path = Path(tempfile.gettempdir()) / server_name(data_dir)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


@contextmanager
def _running_app(data_dir: Path, server: FakeOpenAIServer) -> Iterator[subprocess.Popen[str]]:
    app = subprocess.Popen(
        [sys.executable, "-m", "etos_desktop"],
        env=_env(data_dir, server),
        cwd=data_dir.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + STARTUP
        while not _listening(data_dir):
            assert app.poll() is None, app.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the app did not start listening"
            time.sleep(0.1)
        yield app
    finally:
        if app.poll() is None:
            app.send_signal(signal.SIGTERM)
            try:
                app.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                app.kill()
                app.communicate()


def _launch(
    data_dir: Path, server: FakeOpenAIServer, timeout: float = STARTUP
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "etos_desktop"],
        env=_env(data_dir, server),
        cwd=data_dir.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX sockets")
def test_a_second_launch_shows_the_running_app_and_exits(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with FakeOpenAIServer() as server, _running_app(data_dir, server) as first:
        second = _launch(data_dir, server)
        assert second.returncode == 0, second.stderr[-3000:]
        assert first.poll() is None  # the first one still runs
        log = (data_dir / "logs" / "etos.log").read_text(encoding="utf-8")
        assert log.count("another launch on this data folder: showing the window") == 1
        # The second launch opened nothing: one app wrote the log's start-up lines.
        assert server.chat_requests() == []

        # Another data folder is another app.
        other_dir = tmp_path / "other"
        with _running_app(other_dir, server) as other:
            assert other.poll() is None
            assert (other_dir / "instance.lock").exists()


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_the_lock_of_a_killed_app_does_not_keep_the_next_one_out(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with FakeOpenAIServer() as server:
        with _running_app(data_dir, server) as first:
            first.kill()
            first.communicate()
        assert (data_dir / "instance.lock").exists()
        # The next launch takes the folder over and runs (it is not told to exit).
        with _running_app(data_dir, server) as second:
            assert second.poll() is None


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.usefixtures("usual_umask")
def test_the_lock_file_is_owner_only(tmp_path: Path) -> None:
    guard = InstanceGuard(tmp_path / "data")
    try:
        assert guard.claim()
        assert stat.S_IMODE((tmp_path / "data" / "instance.lock").stat().st_mode) == 0o600
    finally:
        guard.release()


@pytest.mark.skipif(os.name != "posix", reason="Unix socket paths")
def test_the_socket_listens_under_a_temporary_folder_with_a_long_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qapp: Any
) -> None:
    """A Unix socket path holds ~104 bytes: under a long TMPDIR listen() failed (so did a
    second launch's reach, and the self-check under pytest-xdist's longer temporary paths)."""
    long_tmp = tmp_path / ("t" * 110)
    long_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(long_tmp))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    name = server_name(tmp_path / "data")
    assert name.startswith("/tmp/etos-desktop-")
    assert len(name.encode()) <= 103
    assert server_name(tmp_path / "data") == name  # both launches agree
    guard = InstanceGuard(tmp_path / "data")
    try:
        assert guard.claim()
        guard.listen()
        assert guard.listening
        assert _listening(tmp_path / "data")
    finally:
        guard.release()


def test_a_short_temporary_folder_keeps_the_plain_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", "/tmp")
    assert server_name(tmp_path / "data").startswith("etos-desktop-")


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_a_frozen_first_app_is_said_not_to_respond_and_can_be_quit(tmp_path: Path) -> None:
    """A stopped process's socket still accepts connections (the kernel's backlog): only its
    answer counts. Without one, the second launch says so, waits when told, and quits it."""
    data_dir = tmp_path / "data"
    with FakeOpenAIServer() as server, _running_app(data_dir, server) as first:
        first.send_signal(signal.SIGSTOP)
        # Reaped as soon as it ends, as a desktop's launcher would: a zombie still holds its pid.
        reaper = threading.Thread(target=first.wait, daemon=True)
        reaper.start()
        try:
            second = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tests.helpers.start_driver",
                    "Wait",
                    "Quit it",
                    "Quit ETOS Desktop",
                ],
                env=_env(data_dir, server),
                cwd=REPO_ROOT,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=STARTUP,
                check=False,
            )
            assert second.stdout.strip(), second.stderr[-3000:]
            report = json.loads(second.stdout.strip().splitlines()[-1])
            titles = [box["text"] for box in report["boxes"]]
            frozen = "ETOS Desktop is already running but does not respond."
            assert titles[:2] == [frozen, frozen], report
            assert {"Wait", "Quit it"} <= set(report["boxes"][0]["buttons"])
            assert len(report["boxes"]) == 3  # the confirmation
            # Quit it ended the frozen app, and this launch then started in its place.
            reaper.join(timeout=15)
            assert first.returncode is not None
            assert first.returncode < 0
            assert report["window_shown"], report
        finally:
            if first.poll() is None:
                first.send_signal(signal.SIGCONT)
            else:
                first.communicate()  # the reaper's wait() leaves its pipes open
