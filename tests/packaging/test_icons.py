"""The installers' icons, rendered from the one SVG: every size, and ICO/ICNS that read back."""

from __future__ import annotations

import struct
from pathlib import Path

import icons
import pytest
from PySide6.QtGui import QImage, QImageReader


def read_all(path: Path) -> list[QImage]:
    """Every image in a multi-image file, through Qt's own ICO/ICNS readers."""
    reader = QImageReader(str(path))
    assert reader.canRead(), reader.errorString()
    images = []
    for i in range(reader.imageCount()):
        assert reader.jumpToImage(i)
        image = reader.read()
        assert not image.isNull(), reader.errorString()
        images.append(image)
    return images


def test_every_file_is_written_at_its_sizes(tmp_path: Path, qapp):
    paths = icons.write_icons(tmp_path / "icons")

    for size in icons.PNG_SIZES:
        image = QImage(str(paths["hicolor"] / f"{size}x{size}" / "apps" / "etos-desktop.png"))
        assert (image.width(), image.height()) == (size, size)
        # The drawing is there (the centre is opaque), the corners stay transparent.
        assert image.pixelColor(size // 2, size // 2).alpha() == 255
        assert image.pixelColor(0, 0).alpha() == 0
    assert (paths["hicolor"] / "scalable" / "apps" / "etos-desktop.svg").read_bytes() == (
        icons.SVG.read_bytes()
    )
    assert [i.width() for i in read_all(paths["ico"])] == list(icons.ICO_SIZES)
    assert sorted(i.width() for i in read_all(paths["icns"])) == sorted(icons.ICNS_TYPES)


def test_ico_and_icns_layout_by_hand(qapp):
    pngs = icons.render_pngs(icons.SVG, [16, 256])
    ico = icons.ico_bytes(pngs)
    assert struct.unpack("<HHH", ico[:6]) == (0, 1, 2)
    # 256 px is written as 0 in the one-byte width field; the offset points at a PNG.
    width, _, _, _, _, bpp, length, offset = struct.unpack("<BBBBHHII", ico[22:38])
    assert (width, bpp, length) == (0, 32, len(pngs[256]))
    assert ico[offset : offset + 8] == b"\x89PNG\r\n\x1a\n"

    icns = icons.icns_bytes(pngs)
    assert icns[:4] == b"icns"
    assert struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert icns[8:12] == b"icp4"


def test_sizes_the_formats_cannot_hold_are_refused(qapp):
    with pytest.raises(ValueError, match="1-256"):
        icons.ico_bytes({512: b""})
    with pytest.raises(ValueError, match="no ICNS entry"):
        icons.icns_bytes({100: b""})


def test_a_png_is_really_png(qapp):
    data = icons.render_pngs(icons.SVG, [48])[48]
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage()
    assert image.loadFromData(data, "PNG")
    assert image.width() == 48
