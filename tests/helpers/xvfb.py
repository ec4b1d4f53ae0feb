"""A private X server (Xvfb) for tests and tools that need a real display (xcb, a tray).

``.ci/run`` installs Xvfb. The server picks a free display number itself (``-displayfd``) and
listens on no TCP port; it is stopped when the context ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager


def xvfb_available() -> bool:
    """Whether Xvfb is installed."""
    return shutil.which("Xvfb") is not None


@contextmanager
def xvfb(screen: str = "1400x900x24") -> Iterator[str]:
    """Run a fresh Xvfb with one ``screen`` (``WxHxDepth``); yields its display (``":5"``)."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", screen, "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    try:
        if not number:
            raise RuntimeError("Xvfb did not start")
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def display_env(display: str, **extra: str) -> dict[str, str]:
    """The environment of a child that draws on ``display`` with Qt's xcb platform."""
    env = {
        **os.environ,
        "DISPLAY": display,
        "ETOS_TEST_QPA": "xcb",
        "QT_QPA_PLATFORM": "xcb",
        **extra,
    }
    env.pop("WAYLAND_DISPLAY", None)
    return env
