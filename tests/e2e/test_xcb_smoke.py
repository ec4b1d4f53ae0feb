"""End to end on a real X server: the scenario in ``xcb_scenario.py`` under Xvfb with xcb.

The rest of the suite runs offscreen; this one starts Xvfb (``.ci/run`` installs it), runs the
scenario in a child pytest with ``QT_QPA_PLATFORM=xcb`` and QTest key and mouse events, and keeps
its screenshots in the test's temporary folder (``ETOS_SCREENSHOTS`` to keep them elsewhere).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture
def x_display(tmp_path: Path) -> Iterator[str]:
    """A fresh Xvfb server; its display name (e.g. ``:5``)."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (.ci/run installs it)")
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    try:
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_scenario_on_a_real_x_server(x_display: str, tmp_path: Path) -> None:
    shots = Path(os.environ.get("ETOS_SCREENSHOTS", tmp_path / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DISPLAY": x_display,
        "ETOS_TEST_QPA": "xcb",
        "QT_QPA_PLATFORM": "xcb",
        "ETOS_SCREENSHOTS": str(shots),
    }
    env.pop("WAYLAND_DISPLAY", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "tests" / "e2e" / "xcb_scenario.py"),
            "-q",
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
