"""The Linux menu entry, the Depends list and the installers' names (version single-sourced)."""

from __future__ import annotations

import configparser
import importlib.util
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import icons
import installers
import pytest

import etos_desktop

ROOT = Path(__file__).resolve().parents[2]


def load_build_script():
    spec = importlib.util.spec_from_file_location("etos_build_script", ROOT / "packaging/build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(installers.DESKTOP_ENTRY, encoding="utf-8")
    return parser["Desktop Entry"]


def test_menu_entry_starts_the_installed_launcher_with_the_installed_icon():
    entry = desktop_entry()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["gui-scripts"]
    # The .deb puts the launcher on PATH under the gui-script's name and the icon under this one.
    assert entry["Exec"] == installers.NAME
    assert installers.NAME in scripts
    assert entry["Icon"] == icons.NAME
    assert entry["Type"] == "Application"
    assert entry["Terminal"] == "false"
    assert "Name[zh_CN]" not in entry or entry["Name[zh_CN]"]
    assert entry["Comment[zh_CN]"]


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None,
    reason="desktop-file-validate not installed (.ci/run installs desktop-file-utils)",
)
def test_menu_entry_is_valid_for_desktops():
    result = subprocess.run(
        ["desktop-file-validate", str(installers.DESKTOP_ENTRY)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""  # no hints either


def test_depends_list_parses_into_debian_relations():
    depends = installers.read_depends()
    relation = re.compile(r"^[a-z0-9][a-z0-9.+-]+( \((>=|<=|=|<<|>>) [0-9][A-Za-z0-9.+~:-]*\))?$")
    assert all(relation.match(entry) for entry in depends), depends
    names = [entry.split()[0] for entry in depends]
    assert len(names) == len(set(names))
    # glibc is never bundled, so it is always a dependency, with the version the binaries need.
    assert any(re.match(r"^libc6 \(>= 2\.\d+\)$", entry) for entry in depends)


def test_an_empty_depends_list_is_refused(tmp_path: Path):
    empty = tmp_path / "deb-depends.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(ValueError, match="lists no package"):
        installers.read_depends(empty)


def test_version_comes_from_the_package_and_names_the_installers(tmp_path: Path):
    version = etos_desktop.__version__
    assert load_build_script().version() == version
    assert installers.deb_path(tmp_path, version, "amd64").name == (
        f"etos-desktop_{version}_amd64.deb"
    )
    assert re.fullmatch(
        rf"etos-desktop-{re.escape(version)}-linux-[a-z0-9_]+\.tar\.gz",
        installers.tar_path(tmp_path, version).name,
    )
    # The spec, the Inno Setup script and the workflow take it from the same place.
    spec = (ROOT / "packaging" / "etos-desktop.spec").read_text()
    assert '"etos_desktop" / "__init__.py"' in spec
    iss = (ROOT / "packaging" / "windows" / "etos-desktop.iss").read_text()
    assert "#error AppVersion is not defined" in iss
    assert not re.search(r"\d+\.\d+\.\d+", iss)
    workflow = (ROOT / ".github" / "workflows" / "installers.yml").read_text()
    assert not re.search(r"\d+\.\d+\.\d+", workflow.replace("3.11", ""))
