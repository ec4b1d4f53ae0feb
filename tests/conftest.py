"""Test isolation: no test touches the real home, keyring, data dir or network."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Before anything imports Qt: tests need no display. The end-to-end smoke test runs its scenario
# in a child pytest on a real X server (Xvfb) and asks for the xcb platform through ETOS_TEST_QPA.
os.environ["QT_QPA_PLATFORM"] = os.environ.get("ETOS_TEST_QPA", "offscreen")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")

# The run starts ~60 Python processes that import the same modules (the xdist workers, the app,
# the CLI and the translation tool in subprocesses, child pytests). Under PYTHONDONTWRITEBYTECODE
# (or -B) each one compiled the package, and pytest rewrote and compiled every test module
# again: collecting the suite took 21 s of CPU in each worker, 9 s with the .pyc files. So the
# test processes write the usual __pycache__ folders (ignored by git) and read them back.
if sys.dont_write_bytecode:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, XDG dirs and ETOS_DATA_DIR at a temporary dir; forget any real API key."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for var, sub in (
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("ETOS_DATA_DIR", str(tmp_path / "data"))
    # The fail backend makes keyring unusable, so keys go to the 0600 file in the temp data dir.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "data"


_STORAGE_TESTS = Path(__file__).parent / "core" / "storage"


@pytest.fixture(autouse=True)
def migrated_template(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """New database files start as a copy of one migrated once (``tests/helpers/migrated.py``).

    Not for the storage tests (``tests/core/storage``): they test the migrations themselves.
    """
    if Path(str(request.node.path)).is_relative_to(_STORAGE_TESTS):
        return
    from etos_desktop.core.storage import database
    from tests.helpers.migrated import migrate_from_template

    monkeypatch.setattr(database, "migrate", migrate_from_template)


@pytest.fixture
def server() -> Iterator[Any]:
    """A local OpenAI-compatible server without a key check (tests that need one override it)."""
    from tests.helpers.fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The umask most desktops run with (022), under which a plain ``open`` makes files 0644.

    File-mode tests set it, so they do not pass only because the runner's umask is strict.
    """
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture(scope="session")
def use_embedder() -> Any:
    """The embedded USE model, loaded once per test process (the apps tests start share it)."""
    from tests.helpers.embedders import shared_use

    embedder = shared_use()
    embedder.load()
    return embedder


#: Test modules outside tests/ui and tests/e2e that need Qt (a QApplication, the app's process
#: or Qt's tools); every test of these folders does.
_GUI_DIRS = ("ui", "e2e")
_QT_WORDS = (
    "PySide6",
    "QApplication",
    "qtbot",
    "etos_desktop.app",
    "etos_desktop.ui",
    '"-m", "etos_desktop"',  # the window app in a child process
)
_gui_modules: dict[Path, bool] = {}


def _needs_qt(path: Path) -> bool:
    if path not in _gui_modules:
        tests = Path(__file__).parent
        parts = path.relative_to(tests).parts if path.is_relative_to(tests) else ()
        if parts and parts[0] in _GUI_DIRS:
            _gui_modules[path] = True
        else:
            text = path.read_text(encoding="utf-8")
            _gui_modules[path] = any(word in text for word in _QT_WORDS)
    return _gui_modules[path]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``gui`` every test that needs Qt, so ``pytest -m "not gui"`` is the fast loop.

    The ``slow`` tests (subprocesses, 2-15 s each) go first: collected in file order, the
    automatic-language walk under zh_CN (a child pytest) was among the last tests, and one
    xdist worker ran it alone at the end while the other had finished.
    """
    for item in items:
        if _needs_qt(Path(str(item.path))):
            item.add_marker(pytest.mark.gui)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
