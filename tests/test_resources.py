"""One resolver finds resources in a source checkout, an installed wheel and a frozen bundle."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from etos_desktop import resources


def test_source_checkout_layout():
    resources.resources_root.cache_clear()
    root = resources.resources_root()
    assert (root / "icons" / "etos.svg").is_file()
    assert (root / "themes" / "light.qss").is_file()


def test_frozen_bundle_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "resources" / "icons").mkdir(parents=True)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    resources.resources_root.cache_clear()
    try:
        assert (
            resources.resource_path("icons", "x.svg") == tmp_path / "resources" / "icons" / "x.svg"
        )
    finally:
        resources.resources_root.cache_clear()


def test_installed_wheel_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "site-packages" / "etos_desktop"
    (package / "_resources" / "icons").mkdir(parents=True)
    fake_module = package / "resources.py"
    fake_module.write_text("")
    monkeypatch.setattr(resources, "__file__", str(fake_module))
    resources.resources_root.cache_clear()
    try:
        assert resources.resources_root() == package / "_resources"
    finally:
        resources.resources_root.cache_clear()
