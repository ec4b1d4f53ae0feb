"""Application icons for the installers, all rendered from ``resources/icons/etos.svg``.

Run: ``python packaging/icons.py [OUT_DIR]`` (default ``build/icons``). Writes

* ``hicolor/<n>x<n>/apps/etos-desktop.png`` for the Linux icon theme (and ``scalable/apps``
  with the SVG itself),
* ``etos-desktop.ico`` (Windows: 16-256 px, PNG-compressed entries),
* ``etos-desktop.icns`` (macOS: 16-1024 px, PNG entries),

from one SVG with Qt's own SVG renderer (QtSvg ships in the PySide6 wheel the app already
depends on, so no other tool is needed on any runner). ICO and ICNS are written by the small
writers below: neither format needs more than a header, a directory and the PNG bytes, and no
tool that writes ICNS exists on Linux.
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "resources" / "icons" / "etos.svg"
NAME = "etos-desktop"

#: Sizes of the hicolor theme's fixed-size folders that desktops look in.
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
#: Windows picks 16/24/32/48 for lists and the taskbar and 256 for large views.
ICO_SIZES = (16, 24, 32, 48, 64, 256)
#: ICNS type codes of the PNG-holding entries, by pixel size (Apple's ``icp4``…``ic10``).
ICNS_TYPES = {
    16: b"icp4",
    32: b"icp5",
    64: b"icp6",
    128: b"ic07",
    256: b"ic08",
    512: b"ic09",
    1024: b"ic10",
}


def render_pngs(svg: Path, sizes: Iterable[int]) -> dict[int, bytes]:
    """Render ``svg`` as square PNGs, one per size, with a transparent background."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG")
    out: dict[int, bytes] = {}
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if not image.save(buffer, "PNG"):
            raise RuntimeError(f"cannot encode the {size} px icon as PNG")
        buffer.close()
        out[size] = bytes(data.data())
    return out


def ico_bytes(pngs: Mapping[int, bytes]) -> bytes:
    """An ICO file holding ``pngs`` (size → PNG bytes) as PNG-compressed entries.

    Layout: ICONDIR (reserved 0, type 1, count), then one 16-byte ICONDIRENTRY per image (a width
    or height of 256 is written as 0), then the images. PNG entries are read by Windows Vista
    and later.
    """
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries = b""
    for size in sizes:
        if not 1 <= size <= 256:
            raise ValueError(f"ICO images are 1-256 px, not {size}")
        side = 0 if size == 256 else size
        data = pngs[size]
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return header + entries + b"".join(pngs[size] for size in sizes)


def icns_bytes(pngs: Mapping[int, bytes]) -> bytes:
    """An ICNS file holding ``pngs`` (size → PNG bytes) in the PNG entry types of macOS 10.7+.

    Layout: ``icns`` + total length (big-endian), then per image its 4-byte type, its length
    (header included) and the PNG bytes.
    """
    body = b""
    for size in sorted(pngs):
        if size not in ICNS_TYPES:
            raise ValueError(f"no ICNS entry type for {size} px")
        data = pngs[size]
        body += ICNS_TYPES[size] + struct.pack(">I", len(data) + 8) + data
    return b"icns" + struct.pack(">I", len(body) + 8) + body


def write_icons(out_dir: Path, svg: Path = SVG) -> dict[str, Path]:
    """Write every icon file below ``out_dir`` (replacing an earlier run's).

    Returns:
        Paths by role: ``"ico"``, ``"icns"``, ``"hicolor"`` (the theme folder) and ``"png"``
        (the 256 px PNG, for the window and the desktop entry).
    """
    if out_dir.exists():
        shutil.rmtree(out_dir)
    hicolor = out_dir / "hicolor"
    pngs = render_pngs(svg, sorted({*PNG_SIZES, *ICO_SIZES, *ICNS_TYPES}))
    for size in PNG_SIZES:
        target = hicolor / f"{size}x{size}" / "apps" / f"{NAME}.png"
        target.parent.mkdir(parents=True)
        target.write_bytes(pngs[size])
    scalable = hicolor / "scalable" / "apps" / f"{NAME}.svg"
    scalable.parent.mkdir(parents=True)
    shutil.copyfile(svg, scalable)
    ico = out_dir / f"{NAME}.ico"
    ico.write_bytes(ico_bytes({size: pngs[size] for size in ICO_SIZES}))
    icns = out_dir / f"{NAME}.icns"
    icns.write_bytes(icns_bytes({size: pngs[size] for size in ICNS_TYPES}))
    return {
        "ico": ico,
        "icns": icns,
        "hicolor": hicolor,
        "png": hicolor / "256x256" / "apps" / f"{NAME}.png",
    }


def main(argv: list[str]) -> int:
    """Write the icons to ``argv[0]`` (default ``build/icons``) and list them."""
    out_dir = Path(argv[0]) if argv else ROOT / "build" / "icons"
    paths = write_icons(out_dir)
    for role, path in paths.items():
        print(f"{role:8s} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
