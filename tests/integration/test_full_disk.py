"""A real full disk: a 2 MiB tmpfs in a private mount namespace, filled until ENOSPC.

SQLite on a full tmpfs says ``SQLITE_FULL`` when a write runs out of room, but
``SQLITE_IOERR_SHMSIZE`` ("disk I/O error") when opening needs room for the WAL index: both must
reach the user as "the disk is full", without SQLAlchemy's text, and leave the data as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.errors import StorageError
from etos_desktop.ui.error_text import failure_text
from tests.helpers.mount_namespace import can_mount_privately

REPO_ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import asyncio, json, os, shutil, sqlite3, subprocess, sys
    from pathlib import Path

    from etos_desktop.core.errors import StorageError
    from etos_desktop.core.storage.database import Database
    from etos_desktop.core.storage.repositories import ChatRepository

    mount_point, scenario = Path(sys.argv[1]), sys.argv[2]
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)], check=True
    )
    path = mount_point / "data" / "etos.db"
    filler = mount_point / "filler"
    report = {}


    def fill(room):
        # Whole 4 KiB writes until ENOSPC, then give back ``room`` bytes.
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, bytes(4096))
        except OSError as exc:
            report["filler_errno"] = exc.errno
        finally:
            os.close(fd)
        os.truncate(filler, max(0, filler.stat().st_size - room))


    def failure(exc):
        cause = getattr(exc.__cause__, "orig", exc.__cause__)
        return {
            "reason": exc.params.get("reason"),
            "detail": exc.detail,
            "sqlite": getattr(cause, "sqlite_errorname", None),
        }


    async def main():
        db = Database(path)
        db.open()
        repo = ChatRepository(db)
        conversation = await repo.create_conversation()
        await repo.add_message(conversation.id, "user", "first message")
        if scenario == "reopen":
            db.close()
            fill(room=0)
            db = Database(path)
            repo = ChatRepository(db)
            try:
                db.open()
            except StorageError as exc:
                report["error"] = failure(exc)
            else:
                report["error"] = None
            db.close()
        else:
            fill(room=64 * 1024)
            saved = []
            try:
                for number in range(200):
                    text = f"message {number} " + "x" * 3000
                    await repo.add_message(conversation.id, "user", text)
                    saved.append(text)
            except StorageError as exc:
                report["error"] = failure(exc)
                report["failed_text"] = text
            else:
                report["error"] = None
            report["saved"] = saved
            # Still open on the full disk: what was saved reads back, nothing of the failed one.
            history = await repo.current_history(conversation.id)
            report["history"] = [row.content for row in history]
            db.close()
        report["free_at_failure"] = shutil.disk_usage(mount_point).free
        filler.unlink()
        with sqlite3.connect(path) as conn:
            report["integrity"] = conn.execute("PRAGMA integrity_check").fetchone()[0]
            report["rows"] = [r[0] for r in conn.execute("SELECT content FROM message ORDER BY id")]
        # With room again, the same database saves.
        db = Database(path)
        db.open()
        await ChatRepository(db).add_message(conversation.id, "user", "after freeing space")
        db.close()
        report["saved_after_freeing"] = True


    asyncio.run(main())
    print(json.dumps(report))
    """
)


def _can_mount_tmpfs() -> bool:
    return can_mount_privately()


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not _can_mount_tmpfs(), reason="needs root on Linux with unshare -m (a real tmpfs)"
    ),
]


def _run_child(tmp_path: Path, scenario: str) -> dict[str, Any]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    done = subprocess.run(
        [
            "unshare",
            "-m",
            "--propagation",
            "private",
            sys.executable,
            "-c",
            CHILD,
            str(mount_point),
            scenario,
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert report["filler_errno"] == 28  # ENOSPC: the disk really was full
    return report


def _assert_says_disk_full(error: dict[str, Any], what: str) -> None:
    assert error["reason"] == "disk_full", error
    assert "sqlalche" not in error["detail"].lower()
    assert "Background on this error" not in error["detail"]
    assert "[SQL:" not in error["detail"]
    words = failure_text(what, StorageError(error["detail"], reason=error["reason"]))
    assert words.startswith(what)
    assert "The disk is full" in words
    assert "sqlalche" not in words.lower()


def test_write_on_a_full_disk_says_so_and_keeps_what_was_saved(tmp_path: Path):
    report = _run_child(tmp_path, "write")

    error = report["error"]
    assert error is not None, "the disk never filled"
    assert error["sqlite"] == "SQLITE_FULL"
    _assert_says_disk_full(error, "The message was not sent.")
    # The failed message's text (it would be in SQLAlchemy's [parameters: …]) is not repeated.
    assert report["failed_text"][:40] not in error["detail"]
    expected = ["first message", *report["saved"]]
    assert report["history"] == expected  # read on the full disk, from the open database
    assert report["rows"] == expected  # nothing half-saved
    assert report["integrity"] == "ok"
    assert report["saved_after_freeing"]


def test_opening_on_a_full_disk_says_the_disk_is_full_not_an_io_error(tmp_path: Path):
    report = _run_child(tmp_path, "reopen")

    error = report["error"]
    assert error is not None, "opening on the full disk did not fail"
    # SQLite's own words are "disk I/O error": it cannot grow the WAL index (-shm) file.
    assert error["sqlite"] == "SQLITE_IOERR_SHMSIZE"
    assert report["free_at_failure"] < 64 * 1024
    _assert_says_disk_full(error, "The conversations were not loaded.")
    assert report["rows"] == ["first message"]
    assert report["integrity"] == "ok"
    assert report["saved_after_freeing"]
