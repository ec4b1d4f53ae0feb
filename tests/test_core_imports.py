"""core/ and services/ never import Qt or qasync, core/ never APScheduler (checked in a clean subprocess);
no memory layer imports another, and what they stand on imports none (checked from the source)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import etos_desktop.core

CHECK = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    class Block:
        banned = ("PySide6", "qasync", "shiboken6")

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.banned:
                raise ImportError(f"{PACKAGE} imported {name}")
            return None

    sys.meta_path.insert(0, Block())
    # Each package with every module under it, the next one in the same process: its modules
    # are then a superset of what it loads alone, so nothing it loads can go unseen.
    for PACKAGE in sys.argv[1:]:
        try:
            package = importlib.import_module(PACKAGE)
            for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
                importlib.import_module(info.name)
        except ImportError as exc:
            print(PACKAGE, "FAILED", exc)
            break
        loaded = sorted(
            m.split(".")[0]
            for m in sys.modules
            if m.split(".")[0] in ("PySide6", "qasync", "apscheduler")
        )
        print(PACKAGE, "LOADED", sorted(set(loaded)))
    """
)


@pytest.fixture(scope="module")
def imported() -> dict[str, str]:
    """What importing core, then services, with every module, loaded (one clean process)."""
    result = subprocess.run(
        [sys.executable, "-c", CHECK, "etos_desktop.core", "etos_desktop.services"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)


@pytest.mark.slow
def test_core_imports_no_qt_qasync_or_apscheduler(imported: dict[str, str]):
    assert imported.get("etos_desktop.core") == "LOADED []", imported


@pytest.mark.slow
def test_services_import_no_qt_or_qasync(imported: dict[str, str]):
    # APScheduler is the services layer's own dependency; Qt and qasync are not.
    assert imported.get("etos_desktop.services") == "LOADED ['apscheduler']", imported


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


# -- layering ---------------------------------------------------------------------------------

CORE = Path(etos_desktop.core.__file__).parent
#: One package per memory layer: none imports another.
LAYERS = frozenset({"memory", "summaries", "profile"})
#: What stands above the layers and composes them: no layer imports it.
ABOVE = frozenset({"transfer", "chat", "checkins"})
#: What the layers stand on, the toolkits they share among it: no layer, nothing above one.
BELOW = frozenset({"text", "retrieval", "storage", "context", "providers", "settings", "usage"})


def _core_packages(path: Path, root: Path) -> set[tuple[str, str]]:
    """The ``core`` packages a module imports, with the import, wherever it stands in the file.

    Lazy imports inside functions and ``TYPE_CHECKING`` blocks count: a layer that needs
    another only for a type still depends on it.
    """
    package = ["etos_desktop", "core", *path.parent.relative_to(root).parts]
    found: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                base = package[: len(package) - node.level + 1] + base
            # ``from etos_desktop.core import summaries`` names the package in the alias.
            names = [".".join([*base, alias.name]) for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["etos_desktop", "core"] and len(parts) > 2:
                found.add((parts[2], name))
    return found


def crossings(root: Path, package: str, forbidden: frozenset[str]) -> list[str]:
    """Every import in ``root/package`` of a ``core`` package in ``forbidden``."""
    return sorted(
        f"{path.relative_to(root)}: {name}"
        for path in (root / package).rglob("*.py")
        for imported, name in _core_packages(path, root)
        if imported in forbidden and imported != package
    )


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_no_layer_imports_another_layer_or_what_composes_them(layer: str):
    assert crossings(CORE, layer, LAYERS | ABOVE) == []


@pytest.mark.parametrize("package", sorted(BELOW))
def test_what_the_layers_stand_on_imports_no_layer(package: str):
    assert crossings(CORE, package, LAYERS | ABOVE) == []


def test_the_layering_check_sees_every_form_of_import(tmp_path: Path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "engine.py").write_text(
        textwrap.dedent(
            """
            from typing import TYPE_CHECKING
            from etos_desktop.core import summaries
            from etos_desktop.core.storage import tables
            from ..profile.records import Profile
            if TYPE_CHECKING:
                import etos_desktop.core.transfer.document

            def later():
                from etos_desktop.core.memory import store
                from etos_desktop.core.chat.service import ChatService
            """
        ),
        encoding="utf-8",
    )
    assert crossings(tmp_path, "memory", LAYERS | ABOVE) == [
        "memory/engine.py: etos_desktop.core.chat.service.ChatService",
        "memory/engine.py: etos_desktop.core.profile.records.Profile",
        "memory/engine.py: etos_desktop.core.summaries",
        "memory/engine.py: etos_desktop.core.transfer.document",
    ]
