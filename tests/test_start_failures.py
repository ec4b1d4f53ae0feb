"""Fatal start-up errors of the window app, with real processes and real files.

Each is shown in a window that says which it is (a launch from the desktop menu has no
terminal to read), and the data is left as it was. ``tests/helpers/start_driver.py`` runs the
real start-up offscreen and records the message boxes it shows.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.migrations import LATEST_VERSION
from tests.helpers.mount_namespace import can_mount_privately

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _env(data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ETOS_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO_ROOT),
    }


def _drive(command: list[str], data_dir: Path, *answers: str) -> dict[str, Any]:
    done = subprocess.run(
        [*command, sys.executable, "-m", "tests.helpers.start_driver", *answers],
        env=_env(data_dir),
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=55,
        check=False,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    report["stderr"] = done.stderr
    return report


def _can_bind_read_only() -> bool:
    return can_mount_privately()


@pytest.mark.skipif(
    not _can_bind_read_only(), reason="needs root on Linux with unshare -m (a read-only bind)"
)
def test_a_read_only_data_folder_is_shown_as_no_permission(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    # Root writes through file modes: the folder is a read-only bind mount in the child's own
    # mount namespace (EROFS for root too).
    read_only = [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"',
        str(data_dir),
    ]
    report = _drive(read_only, data_dir, "OK")

    assert [box["title"] for box in report["boxes"]] == ["ETOS Desktop cannot start"], report
    words = report["boxes"][0]["text"] + " " + report["boxes"][0]["informative"]
    assert "no permission" in words
    assert str(data_dir) in words
    assert "already running" not in words
    assert report["exit_code"] == 1
    assert list(data_dir.iterdir()) == []


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO contacts (name) VALUES ('Ada')")
    conn.close()


def _newer(path: Path) -> None:
    db = Database(path)
    db.open()
    db.close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()


def _corrupt(path: Path) -> None:
    path.write_bytes(b"garbage" * 1000)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (_foreign, "another program's database"),
        (_newer, "newer version of ETOS Desktop"),
        (_corrupt, "damaged"),
    ],
)
def test_a_database_that_cannot_be_opened_says_why_and_is_left_unchanged(
    tmp_path: Path, make: Any, words: str
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    path = data_dir / "etos.db"
    make(path)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    before = path.read_bytes()

    report = _drive([], data_dir, "OK")

    assert [box["title"] for box in report["boxes"]] == ["ETOS Desktop cannot start"], report
    text = report["boxes"][0]["text"]
    assert words in text
    assert "Nothing was changed." in text
    assert path.read_bytes() == before
    if make is not _newer:  # a WAL file (ETOS Desktop's own) keeps its WAL index when read
        assert not Path(f"{path}-wal").exists()
        assert not Path(f"{path}-shm").exists()
