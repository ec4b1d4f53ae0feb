"""The companion's avatar: read off the UI thread, drawn round at any size.

The image is a file the user chose in Settings → Persona (or the built-in one); reading and
decoding it is disk work, so ``load_avatar_image`` runs in a worker thread and returns a
``QImage`` (which, unlike ``QPixmap``, may be made off the UI thread). Without an image — before
it is read, or when the file is gone — the avatar is the name's first letter on the palette's
highlight colour.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPainterPath, QPalette, QPixmap

from etos_desktop.resources import resource_path

#: Decoded at this size: large enough for the welcome screen on a 2× display.
_DECODE_SIZE = 256


def default_avatar_path() -> Path:
    """The built-in avatar."""
    return resource_path("icons", "avatar-default.svg")


def load_avatar_image(path: str) -> QImage:
    """Read the avatar at ``path`` (``""``: the built-in one); a null image if unreadable.

    Runs in a worker thread: touches no widget and makes no ``QPixmap``.
    """
    for candidate in (path, str(default_avatar_path())) if path else (str(default_avatar_path()),):
        image = QImage(candidate)
        if not image.isNull():
            return image.scaled(
                _DECODE_SIZE,
                _DECODE_SIZE,
                Qt.AspectRatioMode.KeepAspectRatioByExpanding,
                Qt.TransformationMode.SmoothTransformation,
            )
    return QImage()


def avatar_pixmap(
    image: QImage | None, name: str, size: int, ratio: float, palette: QPalette
) -> QPixmap:
    """A round ``size``×``size`` avatar (device pixel ratio ``ratio``) of ``image``.

    Without an image, the first letter of ``name`` on the highlight colour.
    """
    pixels = max(1, round(size * ratio))
    pixmap = QPixmap(pixels, pixels)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    clip = QPainterPath()
    clip.addEllipse(QRectF(0, 0, pixels, pixels))
    painter.setClipPath(clip)
    if image is not None and not image.isNull():
        source = QRectF(image.rect())
        side = min(source.width(), source.height())
        source = QRectF(
            source.x() + (source.width() - side) / 2,
            source.y() + (source.height() - side) / 2,
            side,
            side,
        )
        painter.drawImage(QRectF(0, 0, pixels, pixels), image, source)
    else:
        painter.fillRect(0, 0, pixels, pixels, palette.color(QPalette.ColorRole.Highlight))
        font = QFont()
        font.setBold(True)
        font.setPixelSize(max(1, round(pixels * 0.45)))
        painter.setFont(font)
        painter.setPen(QColor(palette.color(QPalette.ColorRole.HighlightedText)))
        letter = name.strip()[:1].upper() or "·"
        painter.drawText(QRectF(0, 0, pixels, pixels), Qt.AlignmentFlag.AlignCenter, letter)
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap
