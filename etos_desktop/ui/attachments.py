r"""Attachments in the window: the image codec, the chips, the strips and the viewers.

Qt's image codec for the core, the composer's chips, the strip under a sent message, and the
viewers that open an image full size or a document's text. Images are decoded, scaled and encoded with ``QImageReader``/``QImage`` in worker threads
(both are reentrant); the widgets only show what was prepared. A file's name is the user's (or
an attacker's): it is shown as plain text with bidi controls neutralised, so "\u202egnp.exe"
does not read "exe.png".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QPointF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QIcon,
    QImage,
    QImageReader,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.chat import attachments as attaching
from etos_desktop.core.chat.attachments import PreparedAttachment, PreparedImage
from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.ui.labels import ElidedLabel, plain_tooltip

#: Thumbnails are decoded at most this large (pixels, longest side): sharp at 2x scaling.
THUMBNAIL_PIXELS = 320
_JPEG_QUALITY = 85


# -- the image codec (worker threads) ---------------------------------------------------------


def _reader(data: bytes) -> tuple[QImageReader, QBuffer]:
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    # The bytes decide, not the name: a ".png" that is a JPEG is read as one, a text file
    # named ".png" is refused.
    reader.setDecideFormatFromContent(True)
    reader.setAutoTransform(True)  # EXIF orientation: a phone's portrait photo stands upright
    return reader, buffer


def _encode(image: QImage, fmt: str, quality: int = -1) -> bytes:
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, fmt, quality):
        raise ValueError("not_image")
    buffer.close()
    return bytes(array.data())


def _transparent(image: QImage) -> bool:
    if not image.hasAlphaChannel():
        return False
    import numpy as np

    alpha = image.convertToFormat(QImage.Format.Format_Alpha8)
    rows = np.frombuffer(alpha.constBits(), dtype=np.uint8, count=alpha.sizeInBytes())
    pixels = rows.reshape(alpha.height(), alpha.bytesPerLine())[:, : alpha.width()]
    return bool(pixels.min() < 255)


def _flattened(image: QImage) -> QImage:
    if not image.hasAlphaChannel():
        return image.convertToFormat(QImage.Format.Format_RGB888)
    flat = QImage(image.size(), QImage.Format.Format_RGB888)
    flat.fill(QColor("white"))
    painter = QPainter(flat)
    painter.drawImage(0, 0, image)
    painter.end()
    return flat


def qt_image_codec(data: bytes) -> PreparedImage:
    """Prepare an image for sending (the ``ImageCodec`` the app gives the core).

    Upright (EXIF), first frame only, scaled to ``attachments.scaled_size``, encoded as JPEG
    (a JPEG source, or any opaque picture whose PNG would be over ``MAX_PNG_BYTES``) or PNG
    (transparency, screenshots). Runs in a worker thread.

    Raises:
        ValueError: ``"not_image"`` (the bytes are no image Qt reads), ``"too_many_pixels"``.
    """
    reader, _buffer = _reader(data)
    if not reader.canRead():
        raise ValueError("not_image")
    source_format = bytes(reader.format().data()).decode("ascii", "replace").lower()
    size = reader.size()
    if size.isValid():
        if size.width() * size.height() > attaching.MAX_SOURCE_PIXELS:
            raise ValueError("too_many_pixels")
        target = QSize(*attaching.scaled_size(size.width(), size.height()))
        if source_format in ("jpeg", "jpg") and target != size:
            # The JPEG decoder scales while it decodes: a 50 MP photo never exists in memory.
            reader.setScaledSize(target)
    image = reader.read()
    if image.isNull():
        raise ValueError("not_image")
    width, height = attaching.scaled_size(image.width(), image.height())
    if (width, height) != (image.width(), image.height()):
        image = image.scaled(
            width,
            height,
            Qt.AspectRatioMode.IgnoreAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    if source_format in ("jpeg", "jpg"):
        encoded, mime = _encode(_flattened(image), "JPEG", _JPEG_QUALITY), "image/jpeg"
    else:
        transparent = _transparent(image)
        keep = image if transparent else image.convertToFormat(QImage.Format.Format_RGB888)
        encoded, mime = _encode(keep, "PNG"), "image/png"
        if len(encoded) > attaching.MAX_PNG_BYTES and not transparent:
            encoded, mime = _encode(_flattened(image), "JPEG", _JPEG_QUALITY), "image/jpeg"
    return PreparedImage(encoded, mime, image.width(), image.height())


def thumbnail(data: bytes, side: int = THUMBNAIL_PIXELS) -> QImage:
    """A small copy of the image in ``data`` (longest side ``side``); null if unreadable."""
    reader, _buffer = _reader(data)
    size = reader.size()
    if size.isValid() and max(size.width(), size.height()) > side:
        reader.setScaledSize(size.scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio))
    return reader.read()


def full_image(data: bytes) -> QImage:
    """The stored image itself (for the viewer); null if unreadable."""
    reader, _buffer = _reader(data)
    return reader.read()


def png_bytes(image: QImage) -> bytes:
    """A pasted image as PNG bytes, for ``prepare_attachment`` (worker thread)."""
    return _encode(image, "PNG")


@dataclass(frozen=True)
class Draft:
    """A prepared attachment and its thumbnail (null for a document)."""

    attachment: PreparedAttachment
    thumbnail: QImage


def prepare_file(path: str) -> Draft:
    """Read and prepare a file for the composer (worker thread).

    Raises:
        AttachmentRefused: See ``attachments.read_attachment``.
    """
    from pathlib import Path

    attachment = attaching.read_attachment(Path(path), qt_image_codec)
    return _draft(attachment)


def prepare_pasted(image: QImage, name: str) -> Draft:
    """Prepare an image from the clipboard or a drop (worker thread)."""
    attachment = attaching.prepare_attachment(name, png_bytes(image), qt_image_codec)
    return _draft(attachment)


def _draft(attachment: PreparedAttachment) -> Draft:
    shown = thumbnail(attachment.data) if attachment.kind == attaching.IMAGE else QImage()
    return Draft(attachment, shown)


# -- what is shown --------------------------------------------------------------------------


def shown_name(name: str) -> str:
    """A file name as it may be shown: one line, bidi controls visible and inert."""
    return neutralise_bidi(" ".join(name.split()))


def paperclip_icon(color: QColor, side: int) -> QIcon:
    """A paperclip drawn in ``color`` (the attach button's icon, so it follows the theme)."""
    pixmap = QPixmap(side * 2, side * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(color, max(1.4, side / 11))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    s = side / 24
    path = QPainterPath(QPointF(16.5 * s, 7 * s))
    path.lineTo(QPointF(16.5 * s, 16 * s))
    path.arcTo(7.5 * s, 11.5 * s, 9 * s, 9 * s, 0, -180)
    path.lineTo(QPointF(7.5 * s, 6 * s))
    path.arcTo(7.5 * s, 2 * s, 6 * s, 6 * s, 180, -180)
    path.lineTo(QPointF(13.5 * s, 15.5 * s))
    path.arcTo(10.5 * s, 14 * s, 3 * s, 3 * s, 0, -180)
    path.lineTo(QPointF(10.5 * s, 7.5 * s))
    painter.drawPath(path)
    painter.end()
    return QIcon(pixmap)


class AttachButton(QToolButton):
    """The composer's paperclip: opens the file chooser (the panel decides what follows)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachButton")
        self.setAutoRaise(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._draw()

    def _draw(self) -> None:
        side = max(18, round(self.fontMetrics().height() * 1.6))
        self.setIconSize(QSize(side, side))
        self.setIcon(paperclip_icon(self.palette().color(QPalette.ColorRole.ButtonText), side))

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self._draw()
        super().changeEvent(event)


class AttachmentChip(QFrame):
    """One attachment of the draft: its thumbnail or a file icon, name, size, and ×.

    Signals:
        remove_requested(): the user removed it from the message.
    """

    remove_requested = Signal()

    def __init__(self, draft: Draft, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentChip")
        self.draft = draft
        self.attachment = draft.attachment
        self.picture = QLabel(self)
        self.picture.setObjectName("attachmentPicture")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.name_label = ElidedLabel(self)
        self.name_label.setObjectName("attachmentName")
        self.name_label.setText(self.attachment.name)
        self.detail_label = QLabel(self)
        self.detail_label.setObjectName("attachmentDetail")
        self.detail_label.setTextFormat(Qt.TextFormat.PlainText)
        self.remove_button = QToolButton(self)
        self.remove_button.setObjectName("attachmentRemove")
        self.remove_button.setText("×")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.remove_button.clicked.connect(self.remove_requested)
        words = QVBoxLayout()
        words.setContentsMargins(0, 0, 0, 0)
        words.setSpacing(0)
        words.addWidget(self.name_label)
        words.addWidget(self.detail_label)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 3, 2, 3)
        layout.setSpacing(6)
        layout.addWidget(self.picture)
        layout.addLayout(words, 1)
        layout.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self._fit()
        self.retranslate()

    def _fit(self) -> None:
        side = 3 * self.fontMetrics().height()
        self.picture.setFixedSize(side, side)
        self.name_label.setFixedWidth(9 * self.fontMetrics().averageCharWidth() + 40)
        if self.attachment.kind == attaching.IMAGE and not self.draft.thumbnail.isNull():
            pixmap = QPixmap.fromImage(self.draft.thumbnail).scaled(
                side * 2,
                side * 2,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
            pixmap.setDevicePixelRatio(2.0)
            self.picture.setPixmap(pixmap)
        else:
            icon = self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon)
            self.picture.setPixmap(icon.pixmap(QSize(side * 2 // 3, side * 2 // 3)))

    def retranslate(self) -> None:
        """Put the chip's words into the current language."""
        locale = self.locale()
        item = self.attachment
        if item.kind == attaching.IMAGE:
            detail = self.tr("Image, {width} × {height}").format(
                width=item.width or 0, height=item.height or 0
            )
        else:
            detail = self.tr("About {tokens} tokens").format(tokens=locale.toString(item.tokens))
        self.detail_label.setText(detail)
        self.setToolTip(plain_tooltip(f"{item.name}\n{detail}"))
        self.remove_button.setToolTip(self.tr("Remove from the message"))
        self.remove_button.setAccessibleName(
            self.tr("Remove {name}").format(name=shown_name(item.name))
        )
        self.setAccessibleName(shown_name(item.name))

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        elif event.type() == QEvent.Type.FontChange:
            self._fit()
        super().changeEvent(event)


class AttachmentTray(QScrollArea):
    """The draft's attachments in a row above the composer (scrolls sideways when full).

    Signals:
        changed(): an attachment was added or removed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentTray")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._inner = QWidget(self)
        self._inner.setObjectName("attachmentTrayInner")
        self._row = QHBoxLayout(self._inner)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)
        self._row.addStretch(1)
        self.setWidget(self._inner)
        self._chips: list[AttachmentChip] = []
        self.hide()

    def chips(self) -> list[AttachmentChip]:
        """The chips, in the order the files were attached."""
        return list(self._chips)

    def attachments(self) -> list[PreparedAttachment]:
        """The draft's attachments, in order."""
        return [chip.attachment for chip in self._chips]

    def add(self, draft: Draft) -> AttachmentChip:
        """Show one more attachment."""
        chip = AttachmentChip(draft, self._inner)
        chip.remove_requested.connect(lambda: self.remove(chip))
        self._chips.append(chip)
        self._row.insertWidget(self._row.count() - 1, chip)
        self._fit_height()
        self.show()
        self.changed.emit()
        return chip

    def remove(self, chip: AttachmentChip) -> None:
        """Take one attachment off the draft (its × button)."""
        if chip not in self._chips:
            return
        index = self._chips.index(chip)
        self._chips.remove(chip)
        self._row.removeWidget(chip)
        chip.hide()
        chip.deleteLater()
        self.setVisible(bool(self._chips))
        # The keyboard stays in the row: the next chip's ×, else the previous one's.
        if self._chips:
            self._chips[min(index, len(self._chips) - 1)].remove_button.setFocus()
        self.changed.emit()

    def clear(self) -> None:
        """Remove every attachment (the message was sent)."""
        for chip in list(self._chips):
            self._chips.remove(chip)
            self._row.removeWidget(chip)
            chip.hide()
            chip.deleteLater()
        self.hide()
        self.changed.emit()

    def _fit_height(self) -> None:
        if self._chips:
            bar = self.horizontalScrollBar().sizeHint().height()
            self.setFixedHeight(self._chips[0].sizeHint().height() + bar + 2)

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._fit_height()
        super().changeEvent(event)


# -- under a sent message ---------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """A stored attachment as a message shows it: its record and thumbnail (null if none)."""

    record: Any
    thumbnail: QImage


class MessageAttachments(QWidget):
    """The attachments of a sent message: image thumbnails and document buttons.

    Signals:
        open_requested(object): a thumbnail or document was clicked (its ``AttachmentRecord``).
    """

    open_requested = Signal(object)

    def __init__(self, shown: Sequence[Shown], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageAttachments")
        self.shown = list(shown)
        self._buttons: list[QToolButton] = []
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        for item in self.shown:
            button = QToolButton(self)
            button.setObjectName(
                "attachmentThumbnail" if item.record.kind == attaching.IMAGE else "documentButton"
            )
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            button.setAutoRaise(item.record.kind != attaching.IMAGE)
            button.clicked.connect(
                lambda _checked=False, r=item.record: self.open_requested.emit(r)
            )
            self._buttons.append(button)
            layout.addWidget(button)
        layout.addStretch(1)
        self._fit()
        self.retranslate()

    def names(self) -> list[str]:
        """The files' names, in order."""
        return [item.record.name for item in self.shown]

    def buttons(self) -> list[QToolButton]:
        """One button per attachment, in order."""
        return list(self._buttons)

    def _fit(self) -> None:
        line = self.fontMetrics().height()
        for item, button in zip(self.shown, self._buttons, strict=True):
            if item.record.kind == attaching.IMAGE:
                side = 6 * line
                if not item.thumbnail.isNull():
                    pixmap = QPixmap.fromImage(item.thumbnail)
                    pixmap.setDevicePixelRatio(
                        max(1.0, max(pixmap.width(), pixmap.height()) / side)
                    )
                    button.setIcon(QIcon(pixmap))
                    logical = pixmap.deviceIndependentSize().toSize()
                    button.setIconSize(logical)
                else:
                    button.setIconSize(QSize(side, side))
                    button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
            else:
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
                button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
                button.setIconSize(QSize(line, line))

    def retranslate(self) -> None:
        """Put the buttons' words into the current language."""
        locale = self.locale()
        for item, button in zip(self.shown, self._buttons, strict=True):
            record = item.record
            name = shown_name(record.name)
            if record.kind == attaching.IMAGE:
                button.setAccessibleName(self.tr("Open image {name}").format(name=name))
                button.setToolTip(
                    plain_tooltip(
                        self.tr("{name} ({width} × {height}) — click to open").format(
                            name=record.name, width=record.width or 0, height=record.height or 0
                        )
                    )
                )
            else:
                tokens = locale.toString(record.tokens)
                shown = name if len(name) <= 40 else name[:38] + "…"
                button.setText(
                    self.tr("{name} · about {tokens} tokens").format(name=shown, tokens=tokens)
                )
                button.setAccessibleName(self.tr("Open document {name}").format(name=name))
                button.setToolTip(plain_tooltip(record.name))

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        elif event.type() == QEvent.Type.FontChange:
            self._fit()
        super().changeEvent(event)


class ImageViewerDialog(QDialog):
    """An attached image at its full (stored) size, scaled down only to fit the screen."""

    def __init__(self, name: str, image: QImage, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("imageViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(shown_name(name))
        self.image = image
        self.picture = QLabel(self)
        self.picture.setObjectName("imageViewerPicture")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setAccessibleName(shown_name(name))
        scroll = QScrollArea(self)
        scroll.setObjectName("imageViewerScroll")
        scroll.setWidgetResizable(True)
        scroll.setAlignment(Qt.AlignmentFlag.AlignCenter)
        scroll.setWidget(self.picture)
        self.size_label = QLabel(self)
        self.size_label.setObjectName("imageViewerSize")
        self.size_label.setTextFormat(Qt.TextFormat.PlainText)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.size_label, 1)
        bottom.addWidget(self.buttons)
        layout.addLayout(bottom)
        self._show_image()
        self.retranslate()

    def _show_image(self) -> None:
        screen = self.screen().availableGeometry() if self.screen() else None
        room = QSize(1200, 900) if screen is None else screen.size() * 0.85
        pixmap = QPixmap.fromImage(self.image)
        chrome = QSize(40, 90)
        fit = (room - chrome).boundedTo(pixmap.size()) if not pixmap.isNull() else QSize(320, 200)
        if not pixmap.isNull() and fit != pixmap.size():
            pixmap = pixmap.scaled(
                fit, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
        self.picture.setPixmap(pixmap)
        self.resize((pixmap.size() + chrome).expandedTo(QSize(320, 200)))

    def retranslate(self) -> None:
        """Put the dialog's words into the current language."""
        self.size_label.setText(
            self.tr("{width} × {height} pixels, as sent to the model").format(
                width=self.image.width(), height=self.image.height()
            )
        )

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class DocumentViewerDialog(QDialog):
    """An attached document's text, as the model was sent it (read-only)."""

    def __init__(self, name: str, text: str, tokens: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("documentViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(shown_name(name))
        self.tokens = tokens
        self.view = QPlainTextEdit(self)
        self.view.setObjectName("documentViewerText")
        self.view.setReadOnly(True)
        self.view.setPlainText(neutralise_bidi(text))
        self.info = QLabel(self)
        self.info.setTextFormat(Qt.TextFormat.PlainText)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.info, 1)
        bottom.addWidget(self.buttons)
        layout.addLayout(bottom)
        self.resize(720, 560)
        self.retranslate()

    def retranslate(self) -> None:
        """Put the dialog's words into the current language."""
        self.info.setText(
            self.tr("The text the model was sent: about {tokens} tokens").format(
                tokens=self.locale().toString(self.tokens)
            )
        )
        self.view.setAccessibleName(self.windowTitle())

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


#: Reads a stored attachment's bytes by sha256 (the controller's, off the UI thread).
Reader = Callable[[str], Awaitable[bytes]]
