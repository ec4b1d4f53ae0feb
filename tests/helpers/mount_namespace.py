"""Whether tests can mount file systems of their own (a full tmpfs, a read-only bind mount)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


def can_mount_privately() -> bool:
    """Root on Linux with ``unshare`` and ``mount``, allowed to make a new mount namespace.

    Root in a container may still lack CAP_SYS_ADMIN for one: a trial run decides.
    """
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0
