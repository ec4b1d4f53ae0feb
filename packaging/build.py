"""Build ETOS Desktop's one-folder bundle for this OS, and its installers.

Run from anywhere: ``python packaging/build.py`` (needs ``pip install -e ".[package]"``).

* every OS: icons from ``resources/icons/etos.svg`` (``packaging/icons.py``), then the PyInstaller
  bundle ``dist/etos-desktop/`` from ``packaging/etos-desktop.spec``; prints its size;
* Linux: ``dist/etos-desktop-<version>-linux-x86_64.tar.gz`` and
  ``dist/etos-desktop_<version>_amd64.deb`` (``packaging/linux/installers.py``);
* Windows (UNTESTED here): ``dist/etos-desktop-<version>-windows-x64-setup.exe`` with Inno Setup's
  ``iscc`` when it is on PATH;
* macOS (UNTESTED here): ``dist/ETOS Desktop.app`` and ``dist/etos-desktop-<version>-macos.dmg``.

``--bundle-only`` stops after the bundle. The version comes from ``etos_desktop/__init__.py``
(the one place hatch reads it from too).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
WORK = ROOT / "build"
BUNDLE = DIST / "etos-desktop"

sys.path.insert(0, str(Path(__file__).resolve().parent))
import icons  # noqa: E402  (packaging/ is not a package)


def version() -> str:
    """The app's version, read from ``etos_desktop/__init__.py`` without importing the app."""
    text = (ROOT / "etos_desktop" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if match is None:
        raise SystemExit("no __version__ in etos_desktop/__init__.py")
    return match.group(1)


def tree_size(path: Path) -> int:
    """Bytes of every file below ``path`` (symlinks not followed)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def mib(size: int) -> str:
    """``size`` in MiB with one decimal."""
    return f"{size / 2**20:.1f} MiB"


def build_bundle(*, clean: bool) -> float:
    """Render the icons and run PyInstaller; return the seconds PyInstaller took."""
    icon_dir = WORK / "icons"
    icons.write_icons(icon_dir)
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level=WARN",
        f"--distpath={DIST}",
        f"--workpath={WORK / 'pyinstaller'}",
        str(ROOT / "packaging" / "etos-desktop.spec"),
    ]
    if clean:
        command.insert(3, "--clean")
    env = {**os.environ, "ETOS_ICON_DIR": str(icon_dir)}
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, env=env)
    return time.perf_counter() - started


def strip_debug_info(bundle: Path) -> int:
    """Remove DWARF debug info from the bundle's ELF files that carry it; return bytes saved.

    A Python built from source (pyenv, as on this project's machines) ships libpython and its
    extension modules with debug info: 23 MB of the 26 MB libpython here. ``--strip-debug``
    keeps every symbol the dynamic linker needs. Files without a ``.debug_info`` section (the
    wheels' libraries, already stripped, some of them patched by auditwheel, which a full strip
    can break) are not touched.
    """
    strip = shutil.which("strip")
    readelf = shutil.which("readelf")
    if strip is None or readelf is None:
        print("strip/readelf not found: debug info kept")
        return 0
    saved = 0
    for path in sorted(bundle.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as file:
            if file.read(4) != b"\x7fELF":
                continue
        sections = subprocess.run(
            [readelf, "-S", "-W", str(path)], capture_output=True, text=True, check=False
        ).stdout
        if ".debug_info" not in sections:
            continue
        before = path.stat().st_size
        subprocess.run([strip, "--strip-debug", str(path)], check=True)
        saved += before - path.stat().st_size
    return saved


def build_windows_installer(ver: str) -> Path | None:
    """UNTESTED: compile ``packaging/windows/etos-desktop.iss`` with Inno Setup, if installed."""
    iscc = shutil.which("iscc") or shutil.which("ISCC")
    if iscc is None:
        print("iscc not found: no Windows installer (install Inno Setup 6)")
        return None
    subprocess.run(
        [
            iscc,
            f"/DAppVersion={ver}",
            f"/DBundleDir={BUNDLE}",
            f"/DIconFile={WORK / 'icons' / 'etos-desktop.ico'}",
            f"/O{DIST}",
            str(ROOT / "packaging" / "windows" / "etos-desktop.iss"),
        ],
        check=True,
    )
    return DIST / f"etos-desktop-{ver}-windows-x64-setup.exe"


def build_dmg(ver: str) -> Path:
    """UNTESTED: wrap ``dist/ETOS Desktop.app`` in a compressed disk image with ``hdiutil``."""
    app = DIST / "ETOS Desktop.app"
    arch = "arm64" if platform.machine() == "arm64" else "x86_64"
    dmg = DIST / f"etos-desktop-{ver}-macos-{arch}.dmg"
    staging = WORK / "dmg"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    # ditto keeps the bundle's symlinks and extended attributes (code signatures) intact.
    subprocess.run(["ditto", str(app), str(staging / app.name)], check=True)
    (staging / "Applications").symlink_to("/Applications")
    dmg.unlink(missing_ok=True)
    subprocess.run(
        [
            "hdiutil",
            "create",
            "-volname",
            f"ETOS Desktop {ver}",
            "-srcfolder",
            str(staging),
            "-fs",
            "HFS+",
            "-format",
            "UDZO",
            str(dmg),
        ],
        check=True,
    )
    return dmg


def main(argv: list[str]) -> int:
    """Build the bundle and this OS's installers; print sizes and times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle-only", action="store_true", help="skip the installers")
    parser.add_argument("--clean", action="store_true", help="empty PyInstaller's cache first")
    args = parser.parse_args(argv)
    ver = version()
    started = time.perf_counter()
    seconds = build_bundle(clean=args.clean)
    if sys.platform.startswith("linux"):
        print(f"stripped debug info: {mib(strip_debug_info(BUNDLE))} saved")
    print(f"bundle: {BUNDLE} — {mib(tree_size(BUNDLE))} (PyInstaller {seconds:.0f} s)")
    outputs: list[Path] = []
    if not args.bundle_only:
        if sys.platform.startswith("linux"):
            sys.path.insert(0, str(ROOT / "packaging" / "linux"))
            import installers  # packaging/linux/installers.py

            outputs += installers.build_all(BUNDLE, WORK / "icons", DIST, ver)
        elif sys.platform == "win32":
            installer = build_windows_installer(ver)
            outputs += [installer] if installer else []
        elif sys.platform == "darwin":
            outputs.append(build_dmg(ver))
    for path in outputs:
        print(f"installer: {path} — {mib(path.stat().st_size)}")
    print(f"build: {time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
