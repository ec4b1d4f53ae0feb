"""The log file handler: every file it writes or rotates is 0600 (DESIGN §9)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from etos_desktop.core.log_file import PrivateRotatingFileHandler

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _record(text: str) -> logging.LogRecord:
    return logging.LogRecord("etos_desktop", logging.INFO, __file__, 1, text, None, None)


@pytest.mark.usefixtures("usual_umask")
def test_the_log_and_its_rotated_files_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    path = folder / "etos.log"
    handler = PrivateRotatingFileHandler(path, max_bytes=200, backup_count=2)
    try:
        for n in range(20):
            handler.emit(_record(f"line {n} " + "x" * 40))
    finally:
        handler.close()
    files = sorted(folder.iterdir())
    assert [p.name for p in files] == ["etos.log", "etos.log.1", "etos.log.2"]
    assert {p.name: _mode(p) for p in files} == dict.fromkeys((p.name for p in files), 0o600)
    assert "line 19" in path.read_text(encoding="utf-8")


@pytest.mark.usefixtures("usual_umask")
def test_logs_an_older_version_left_readable_are_tightened(tmp_path: Path) -> None:
    names = ["etos.log", "etos.log.1", "etos.log.3", "unrelated.txt"]
    for name in names:
        (tmp_path / name).write_text("old\n", encoding="utf-8")
        (tmp_path / name).chmod(0o644)
    handler = PrivateRotatingFileHandler(tmp_path / "etos.log", max_bytes=10_000, backup_count=3)
    handler.close()
    modes = {name: _mode(tmp_path / name) for name in names}
    assert modes == {
        "etos.log": 0o600,
        "etos.log.1": 0o600,
        "etos.log.3": 0o600,
        "unrelated.txt": 0o644,
    }
    assert (tmp_path / "etos.log").read_text(encoding="utf-8") == "old\n"  # appended to, kept
