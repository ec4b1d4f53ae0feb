"""The GUI process itself: starts offscreen with an empty data dir, self-checks, exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.fake_openai_server import FakeOpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_gui_process_starts_with_empty_data_dir(tmp_path: Path):
    data_dir = tmp_path / "fresh"
    with FakeOpenAIServer() as server:
        env = {
            **os.environ,
            "QT_QPA_PLATFORM": "offscreen",
            "ETOS_DATA_DIR": str(data_dir),
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "fake-chat",
            "PYTHONPATH": str(REPO_ROOT),
        }
        result = subprocess.run(
            [sys.executable, "-m", "etos_desktop", "--self-check"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
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
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "ETOS_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(REPO_ROOT),
    }
    result = subprocess.run(
        [sys.executable, "-m", "etos_desktop", "--self-check"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert result.returncode == 1
    assert (data_dir / "etos.db").read_bytes() == b"garbage" * 1000
