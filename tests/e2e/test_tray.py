"""The tray icon on a real X server with a real tray host: ``tray_scenario.py`` under Xvfb.

Xvfb and trayer (a small tray host; ``.ci/run`` installs both) run for the test; the scenario
runs in a child pytest with ``QT_QPA_PLATFORM=xcb``, as the end-to-end smoke test does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.xvfb import display_env, xvfb, xvfb_available

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture
def tray_display() -> Iterator[str]:
    """A fresh Xvfb with trayer running on it; the display name."""
    if not xvfb_available() or shutil.which("trayer") is None:
        pytest.skip("Xvfb or trayer is not installed (.ci/run installs them)")
    with xvfb() as display:
        host = subprocess.Popen(
            ["trayer", "--edge", "top", "--align", "right", "--widthtype", "request"],
            env=display_env(display),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield display
        finally:
            host.terminate()
            host.wait(timeout=10)


def test_tray_icon_on_a_real_tray_host(tray_display: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "tests" / "e2e" / "tray_scenario.py"),
            "-q",
            # One test: xdist workers (-n auto in addopts) would each start and collect.
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "--timeout=120",
            "--basetemp",
            str(tmp_path / "child"),
        ],
        cwd=ROOT,
        env=display_env(tray_display),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "2 passed" in result.stdout
