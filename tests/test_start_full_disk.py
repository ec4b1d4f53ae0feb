"""The window app started on a data folder whose disk is already full (issue 19).

A real full disk: the data folder is a 2 MiB tmpfs in the child's own mount namespace, holding
an existing database (one message), filled until ENOSPC before the app starts. SQLite cannot
grow the WAL index there ("disk I/O error"): the user must see a window that says the disk is
full — not an I/O error, not "already running" — and the database must be left as it was.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from tests.helpers.mount_namespace import can_mount_privately

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not can_mount_privately(), reason="needs root on Linux with unshare -m (a private tmpfs)"
    ),
]

# Runs in the child's mount namespace: the prepared folder is copied onto a fresh 2 MiB tmpfs
# mounted over the data folder, the disk is filled, the app is started, and what is left of
# the database afterwards is hashed into a file outside the tmpfs (the namespace, and the tmpfs
# with it, end with the child).
SCRIPT = r"""
set -e
prepared=$1; data=$2; out=$3; room=$4; shift 4
mount -t tmpfs -o size=2m,mode=0700 tmpfs "$data"
cp -a "$prepared"/. "$data"/
dd if=/dev/zero of="$data/filler" bs=4096 2>/dev/null || true
size=$(stat -c %s "$data/filler")
truncate -s $((size > room ? size - room : 0)) "$data/filler"
df -B1 --output=avail "$data" | tail -n 1 > "$out/free"
set +e
"$@" > "$out/stdout" 2> "$out/stderr"
echo $? > "$out/code"
rm -f "$data/filler"
sha256sum "$data/etos.db" | cut -d' ' -f1 > "$out/sha"
ls -a "$data" > "$out/listing"
"""


def _prepared_folder(folder: Path) -> str:
    """A data folder with a database holding one message; its database file's sha256."""
    folder.mkdir(mode=0o700)
    database = folder / "etos.db"
    db = Database(database)
    db.open()

    async def seed() -> None:
        repo = ChatRepository(db)
        conversation = await repo.create_conversation("kept")
        await repo.add_message(conversation.id, "user", "first message")

    asyncio.run(seed())
    db.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    return hashlib.sha256(database.read_bytes()).hexdigest()


# No room at all (the instance lock cannot be made), and a few KiB (the lock and the log are
# written; SQLite then cannot grow the WAL index).
@pytest.mark.parametrize("room", [0, 12 * 1024])
def test_starting_on_a_full_disk_shows_a_window_that_says_so_and_changes_nothing(
    tmp_path: Path, room: int
) -> None:
    prepared = tmp_path / "prepared"
    before = _prepared_folder(prepared)
    data_dir = tmp_path / "mnt" / "data"
    data_dir.mkdir(parents=True, mode=0o700)
    out = tmp_path / "out"
    out.mkdir()
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ETOS_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO_ROOT),
    }
    command = [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        SCRIPT,
        "sh",
        str(prepared),
        str(data_dir),
        str(out),
        str(room),
        sys.executable,
        "-m",
        "tests.helpers.start_driver",
        "OK",
    ]
    subprocess.run(
        command, env=env, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, timeout=55, check=True
    )

    stdout = (out / "stdout").read_text()
    assert stdout.strip(), (out / "stderr").read_text()[-3000:]
    report = json.loads(stdout.strip().splitlines()[-1])
    assert int((out / "free").read_text()) < 64 * 1024
    assert [box["title"] for box in report["boxes"]] == ["ETOS Desktop cannot start"], report
    words = report["boxes"][0]["text"] + " " + report["boxes"][0]["informative"]
    assert "disk of the data folder is full" in words
    assert "Nothing was changed." in words
    for wrong in ("already running", "I/O", "sqlalche", "damaged"):
        assert wrong not in words
    if room == 0:
        # Refused before the window: the lock file cannot be made.
        assert report["exit_code"] == 1
    else:
        # The window was up (the first frame comes before the database opens); the box is on
        # it and the window stays in its failed state.
        assert report["window_shown"]
    assert (out / "sha").read_text().strip() == before
