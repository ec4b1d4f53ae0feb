"""Finding the files in the top-level ``resources/`` folder, wherever the app runs from.

One resolver serves three layouts: a PyInstaller bundle (``sys._MEIPASS/resources``), an
installed wheel (``etos_desktop/_resources``, put there by the build), and a source checkout or
editable install (``<repo>/resources``).
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path


@cache
def resources_root() -> Path:
    """Return the folder that holds icons, themes and translations.

    Raises:
        FileNotFoundError: No resources folder exists in any known layout (a broken install).
    """
    package = Path(__file__).resolve().parent
    candidates = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "resources")
    candidates += [package / "_resources", package.parent / "resources"]
    for candidate in candidates:
        if (candidate / "icons").is_dir():
            return candidate
    raise FileNotFoundError(f"no resources folder in {[str(c) for c in candidates]}")


def resource_path(*parts: str) -> Path:
    """Return the path of a file below the resources folder (it need not exist)."""
    return resources_root().joinpath(*parts)
