"""The packaging scripts live in ``packaging/`` (not a package): make them importable."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
for folder in (PACKAGING, PACKAGING / "linux"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
