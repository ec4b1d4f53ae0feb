"""Linux installers of a built bundle: a ``.tar.gz`` and a Debian ``.deb``.

Called by ``packaging/build.py``; alone: ``python packaging/linux/installers.py`` (after a build).

The ``.deb`` installs the bundle under ``/opt/etos-desktop``, the launcher ``/usr/bin/etos-desktop``
(a symlink: PyInstaller's bootloader finds its files through ``/proc/self/exe``), the menu entry
``/usr/share/applications/etos-desktop.desktop`` and the icons in the hicolor theme. Its
``Depends:`` is the list in ``deb-depends.txt`` beside this file: the system libraries the bundle
does not carry (``find_depends.py`` derives it from ``ldd`` and ``dpkg -S``). The icon cache and
the menu are refreshed by the dpkg triggers of hicolor-icon-theme and desktop-file-utils, so the
package has no maintainer scripts.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NAME = "etos-desktop"
DESKTOP_ENTRY = HERE / f"{NAME}.desktop"
DEPENDS_FILE = HERE / "deb-depends.txt"
# No list or address receives mail for the project yet; .invalid says so instead of inventing one.
MAINTAINER = "ETOS Desktop developers <maintainers@etos-desktop.invalid>"
#: Chinese text needs a CJK font; apt installs Recommends by default, a minimal system may not.
RECOMMENDS = ("fonts-noto-cjk",)
DESCRIPTION = """\
Desktop companion chat app with a memory you can see and control
 ETOS Desktop talks to any OpenAI-compatible server (OpenAI, DeepSeek, Qwen,
 Ollama, LM Studio...) and keeps a layered memory of long-term facts, session
 summaries and a user profile that you can view, edit, archive and delete.
 Memory search runs offline with an embedded multilingual model."""


def read_depends(path: Path = DEPENDS_FILE) -> list[str]:
    """The ``Depends:`` entries of ``path``: one per line, ``#`` starts a comment."""
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            entries.append(entry)
    if not entries:
        raise ValueError(f"{path} lists no package")
    return entries


def deb_arch() -> str:
    """Debian's name for this machine's architecture (``amd64``…)."""
    return subprocess.run(
        ["dpkg", "--print-architecture"], check=True, capture_output=True, text=True
    ).stdout.strip()


def deb_path(dist: Path, version: str, arch: str) -> Path:
    """``dist/etos-desktop_<version>_<arch>.deb``, Debian's file name convention."""
    return dist / f"{NAME}_{version}_{arch}.deb"


def tar_path(dist: Path, version: str) -> Path:
    """``dist/etos-desktop-<version>-linux-<machine>.tar.gz``."""
    return dist / f"{NAME}-{version}-linux-{os.uname().machine}.tar.gz"


def _copy_icons(icon_dir: Path, target: Path) -> None:
    """Copy ``icon_dir/hicolor`` to ``target`` (…/share/icons/hicolor)."""
    shutil.copytree(icon_dir / "hicolor", target)


def build_tar(bundle: Path, icon_dir: Path, dist: Path, version: str) -> Path:
    """Pack the bundle as ``etos-desktop-<version>/`` with ``share/`` (menu entry, icons).

    To use it: unpack anywhere and run ``etos-desktop-<version>/etos-desktop``.
    """
    out = tar_path(dist, version)
    top = f"{NAME}-{version}"
    staging = ROOT / "build" / "tar" / top
    if staging.parent.exists():
        shutil.rmtree(staging.parent)
    shutil.copytree(bundle, staging, symlinks=True)
    (staging / "share" / "applications").mkdir(parents=True)
    shutil.copyfile(DESKTOP_ENTRY, staging / "share" / "applications" / DESKTOP_ENTRY.name)
    _copy_icons(icon_dir, staging / "share" / "icons" / "hicolor")
    out.unlink(missing_ok=True)
    # Level 6: on 2 busy cores level 9 took much longer for a file 1-2 % smaller.
    with tarfile.open(out, "w:gz", compresslevel=6) as tar:
        tar.add(staging, arcname=top)
    return out


def _installed_size_kib(root: Path) -> int:
    total = 0
    for path in root.rglob("*"):
        if "DEBIAN" in path.relative_to(root).parts:
            continue
        total += path.lstat().st_size if path.is_file() or path.is_symlink() else 4096
    return (total + 1023) // 1024


def _normalise_modes(root: Path) -> None:
    """Directories and executables 0755, other files 0644 (what dpkg and lintian expect)."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        if path.is_dir():
            path.chmod(0o755)
        else:
            executable = path.stat().st_mode & 0o111
            path.chmod(0o755 if executable else 0o644)


def build_deb(bundle: Path, icon_dir: Path, dist: Path, version: str) -> Path:
    """Build ``etos-desktop_<version>_<arch>.deb`` with ``dpkg-deb``."""
    arch = deb_arch()
    if not re.fullmatch(r"[0-9][A-Za-z0-9.+~-]*", version):
        raise ValueError(f"{version!r} is not a Debian version")
    staging = ROOT / "build" / "deb" / f"{NAME}_{version}_{arch}"
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(bundle, staging / "opt" / NAME, symlinks=True)
    (staging / "usr" / "bin").mkdir(parents=True)
    (staging / "usr" / "bin" / NAME).symlink_to(f"/opt/{NAME}/{NAME}")
    share = staging / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copyfile(DESKTOP_ENTRY, share / "applications" / DESKTOP_ENTRY.name)
    _copy_icons(icon_dir, share / "icons" / "hicolor")
    (share / "doc" / NAME).mkdir(parents=True)
    shutil.copyfile(ROOT / "LICENSE", share / "doc" / NAME / "copyright")
    _normalise_modes(staging)
    control = staging / "DEBIAN" / "control"
    control.parent.mkdir()
    control.write_text(
        f"Package: {NAME}\n"
        f"Version: {version}\n"
        f"Architecture: {arch}\n"
        f"Maintainer: {MAINTAINER}\n"
        f"Installed-Size: {_installed_size_kib(staging)}\n"
        f"Depends: {', '.join(read_depends())}\n"
        f"Recommends: {', '.join(RECOMMENDS)}\n"
        "Section: net\n"
        "Priority: optional\n"
        f"Description: {DESCRIPTION}\n",
        encoding="utf-8",
    )
    control.parent.chmod(0o755)
    control.chmod(0o644)
    out = deb_path(dist, version, arch)
    out.unlink(missing_ok=True)
    # zstd -9: 5 s and 100 MiB here, against xz -6 (dpkg-deb's default): 212 s and 89 MiB on 2
    # busy cores. Every system that can run the bundle (glibc >= 2.36: Debian 12, Ubuntu 22.10)
    # has a dpkg that reads zstd.
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-Zzstd", "-z9", "--build", str(staging), str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out


def build_all(bundle: Path, icon_dir: Path, dist: Path, version: str) -> list[Path]:
    """Build the ``.tar.gz`` and the ``.deb``; print how long each took."""
    outputs = []
    for build in (build_tar, build_deb):
        started = time.perf_counter()
        outputs.append(build(bundle, icon_dir, dist, version))
        print(f"{outputs[-1].name}: {time.perf_counter() - started:.0f} s")
    return outputs


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    import build as build_script  # packaging/build.py

    for path in build_all(
        build_script.BUNDLE, build_script.WORK / "icons", build_script.DIST, build_script.version()
    ):
        print(path)
