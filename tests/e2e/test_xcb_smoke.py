"""End to end on a real X server: the scenario in ``xcb_scenario.py`` under Xvfb with xcb.

The rest of the suite runs offscreen; this one starts Xvfb (``.ci/run`` installs it), runs the
scenario in a child pytest with ``QT_QPA_PLATFORM=xcb`` and QTest key and mouse events, and keeps
its screenshots in the test's temporary folder (``ETOS_SCREENSHOTS`` to keep them elsewhere).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.xvfb import display_env, xvfb, xvfb_available

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture
def x_display() -> Iterator[str]:
    """A fresh Xvfb server; its display name (e.g. ``:5``)."""
    if not xvfb_available():
        pytest.skip("Xvfb is not installed (.ci/run installs it)")
    with xvfb() as display:
        yield display


def test_the_scenario_on_a_real_x_server(x_display: str, tmp_path: Path) -> None:
    shots = Path(os.environ.get("ETOS_SCREENSHOTS", tmp_path / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    env = display_env(x_display, ETOS_SCREENSHOTS=str(shots))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "tests" / "e2e" / "xcb_scenario.py"),
            "-q",
            # One test: xdist workers (-n auto in addopts) would each start and collect.
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "--timeout=180",
            "--basetemp",
            str(tmp_path / "child"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    taken = sorted(p.name for p in shots.glob("*.png"))
    assert taken == [
        "1-remembered.png",
        "2-carried.png",
        "3-stopped.png",
        "4-edited.png",
        "5-memory-added.png",
        "6-memory-edited.png",
        "7-exported.png",
    ]
