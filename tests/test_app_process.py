"""The GUI process itself: starts offscreen with an empty data dir, self-checks, exits 0."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.fake_openai_server import FakeOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]


def self_check(data_dir: Path, cwd: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """Run ``etos_desktop --self-check`` offscreen on ``data_dir`` (umask 022, as a login)."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ETOS_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO_ROOT),
        **extra_env,
    }
    return subprocess.run(
        [sys.executable, "-m", "etos_desktop", "--self-check"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        umask=0o022 if os.name == "posix" else -1,
    )


@pytest.mark.slow
def test_gui_process_starts_with_empty_data_dir(tmp_path: Path):
    data_dir = tmp_path / "fresh"
    with FakeOpenAIServer() as server:
        result = self_check(
            data_dir, tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_MODEL="fake-chat"
        )
    assert result.returncode == 0, result.stderr
    assert "self-check ok" in result.stdout
    assert (data_dir / "etos.db").exists()
    assert (data_dir / "logs" / "etos.log").exists()
    # It never probed the server or sent anything at start-up.
    assert server.chat_requests() == []


@pytest.mark.slow
def test_corrupt_database_fails_self_check_without_touching_it(tmp_path: Path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "etos.db").write_bytes(b"garbage" * 1000)
    result = self_check(data_dir, tmp_path)
    assert result.returncode == 1
    assert (data_dir / "etos.db").read_bytes() == b"garbage" * 1000


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_a_run_leaves_every_folder_0700_and_every_file_0600(tmp_path: Path):
    # As an older version left it: folders 0755, its log 0644, a killed backup's part.
    data_dir = tmp_path / "data"
    for folder in (data_dir, data_dir / "logs", data_dir / "backups"):
        folder.mkdir()
        folder.chmod(0o755)
    for old in ("logs/etos.log", "logs/etos.log.1", "backups/etos-daily-20260101-000000.db.part"):
        (data_dir / old).write_text("older\n")
        (data_dir / old).chmod(0o644)
    result = self_check(data_dir, tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (data_dir / "backups" / "etos-daily-20260101-000000.db.part").exists()
    modes = {
        str(path.relative_to(data_dir)): stat.S_IMODE(path.stat().st_mode)
        for path in (data_dir, *data_dir.rglob("*"))
    }
    assert "logs/etos.log" in modes
    assert modes == {name: 0o700 if (data_dir / name).is_dir() else 0o600 for name in modes}
