"""core/ and services/ never import Qt or qasync, and core/ never APScheduler (checked in a clean subprocess)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    class Block:
        banned = ("PySide6", "qasync", "shiboken6")

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.banned:
                raise ImportError(f"{PACKAGE} imported {name}")
            return None

    PACKAGE = sys.argv[1]
    sys.meta_path.insert(0, Block())
    package = importlib.import_module(PACKAGE)
    for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
        importlib.import_module(info.name)
    loaded = sorted(
        m.split(".")[0] for m in sys.modules if m.split(".")[0] in ("PySide6", "qasync", "apscheduler")
    )
    print("LOADED", sorted(set(loaded)))
    """
)


def imported_by(package: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", CHECK, package],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_core_imports_no_qt_qasync_or_apscheduler():
    out = imported_by("etos_desktop.core")
    assert "LOADED []" in out, out


@pytest.mark.slow
def test_services_import_no_qt_or_qasync():
    # APScheduler is the services layer's own dependency; Qt and qasync are not.
    out = imported_by("etos_desktop.services")
    assert "LOADED ['apscheduler']" in out, out


@pytest.mark.slow
def test_the_start_up_peek_loads_no_sqlalchemy():
    # The conversation list is read for the first frame with sqlite3 alone; SQLAlchemy and
    # SQLModel (≈0.5 s to import) come after it, off the UI thread (app._import_heavy).
    code = (
        "import sys, etos_desktop.core.storage.peek\n"
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in "
        "('sqlalchemy', 'sqlmodel', 'openai', 'numpy')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "LOADED []" in result.stdout, result.stdout


@pytest.mark.slow
def test_what_runs_before_the_first_frame_loads_no_asyncio_or_heavy_modules():
    # etos_desktop.app and the main window's modules are imported before the first frame;
    # asyncio (with ssl, socket, subprocess: 40-60 ms), qasync, the scheduler, openai,
    # SQLAlchemy and numpy come after it (app.run_app, app._import_heavy).
    code = (
        "import sys, etos_desktop.app\n"
        "print('LOADED', sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in "
        "('asyncio', 'ssl', 'qasync', 'apscheduler', 'openai', 'sqlalchemy', 'sqlmodel', "
        "'numpy')}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "LOADED []" in result.stdout, result.stdout
