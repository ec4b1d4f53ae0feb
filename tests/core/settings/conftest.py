"""Fixtures for the settings tests: nothing here may reach the real home directory."""

from __future__ import annotations

from pathlib import Path

import pytest

_HOME_VARS = ("HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA")
_XDG_VARS = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every home/XDG variable at a temporary dir and clear the app's own variables.

    ``tests/conftest.py`` isolates the environment too; this stays so that these tests never
    depend on it to keep away from the real home.
    """
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for name in _HOME_VARS:
        monkeypatch.setenv(name, str(home))
    for name in _XDG_VARS:
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in ("ETOS_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return home
