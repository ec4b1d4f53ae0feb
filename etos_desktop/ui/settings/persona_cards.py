"""Character cards on the Persona page: the import preview, the card's picture, writing a card.

Reading and checking a card is Qt-free (``core/transfer/cards.py``); here is what needs Qt: the
card's picture decoded and scaled (``QImage``, which may be made off the UI thread, unlike a
``QPixmap``), the avatar file written without the card's text (``png_text.without_text``: the
picture only, so a secret redacted from the persona does not stay in the avatar), a card
written with the current avatar or the built-in one, and :class:`CardPreviewDialog`, which shows
what the persona would become before anything on the page changes. The functions marked
"worker thread" do disk and image work and touch no widget.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QEvent, QIODevice, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QImageReader, QPainter, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.errors import EtosError
from etos_desktop.core.settings.paths import atomic_write_private, make_private_dir
from etos_desktop.core.settings.schema import spec_for
from etos_desktop.core.text.secrets import REDACTED
from etos_desktop.core.transfer import cards, png_text
from etos_desktop.ui.avatar import default_avatar_path
from etos_desktop.ui.dialogs import await_result
from etos_desktop.ui.markdown_render import escape_invisible
from etos_desktop.ui.settings.page import help_label, plain_label, set_state
from etos_desktop.ui.theme import LIGHT_ROLES

#: The longest side of an avatar taken from a card, and of the picture a written card carries
#: (SillyTavern shows cards at 400×600 and smaller).
AVATAR_SIDE: Final = 512
#: The preview's picture.
PREVIEW_SIDE: Final = 96
#: Where avatars taken from cards are kept, inside the data folder.
AVATAR_FOLDER: Final = "avatars"
#: The note a written card carries for whoever imports it.
EXPORT_NOTE: Final = "Exported from ETOS Desktop."


def card_error_text(error: EtosError) -> str:
    """Why a file cannot be used as a character card, in the user's words."""
    if error.code != "card_invalid":
        return ""
    reason = error.params.get("reason")
    texts = {
        "too_large": QCoreApplication.translate(
            "PersonaCards", "The file is too large to be a character card."
        ),
        "not_a_card": QCoreApplication.translate(
            "PersonaCards",
            "This file is not a character card: a card is a PNG image or a JSON file made by "
            "SillyTavern or another app for character cards.",
        ),
        "damaged": QCoreApplication.translate(
            "PersonaCards", "The PNG file is damaged: its parts do not check out."
        ),
        "no_card": QCoreApplication.translate(
            "PersonaCards", "This PNG image holds no character card (no “chara” or “ccv3” text)."
        ),
        "text_too_large": QCoreApplication.translate(
            "PersonaCards", "The card's text is larger than a character card's can be."
        ),
        "bad_base64": QCoreApplication.translate(
            "PersonaCards", "The card inside the image is damaged: it is not base64 text."
        ),
        "not_json": QCoreApplication.translate(
            "PersonaCards", "The card is damaged: its text is not readable JSON."
        ),
        "too_nested": QCoreApplication.translate(
            "PersonaCards", "The card is damaged: its JSON is nested far too deep."
        ),
        "not_an_object": QCoreApplication.translate(
            "PersonaCards", "The card is damaged: its JSON is not an object."
        ),
        "unsupported_spec": QCoreApplication.translate(
            "PersonaCards",
            "The card is of a kind the app cannot read (“{spec}”); it reads Character Card V1, "
            "V2 and V3.",
        ).format(spec=error.params.get("spec", "?")),
        "bad_field": QCoreApplication.translate(
            "PersonaCards", "The card is damaged: its field “{field}” has the wrong type."
        ).format(field=error.params.get("field", "?")),
        "no_name": QCoreApplication.translate("PersonaCards", "The card has no name."),
        "image_too_large": QCoreApplication.translate(
            "PersonaCards", "The card's picture is too large ({limit} pixels a side at most)."
        ).format(limit=cards.MAX_IMAGE_SIDE),
    }
    return texts.get(str(reason), texts["not_a_card"])


def _field_name(field: str) -> str:
    return {
        "name": QCoreApplication.translate("PersonaCards", "the name"),
        "description": QCoreApplication.translate("PersonaCards", "the description"),
        "personality": QCoreApplication.translate("PersonaCards", "the personality"),
        "scenario": QCoreApplication.translate("PersonaCards", "the scenario"),
        "system_prompt": QCoreApplication.translate("PersonaCards", "the system prompt"),
        "first_mes": QCoreApplication.translate("PersonaCards", "the first message"),
        "alternate_greetings": QCoreApplication.translate("PersonaCards", "other greetings"),
        "mes_example": QCoreApplication.translate("PersonaCards", "example dialogue"),
        "post_history_instructions": QCoreApplication.translate(
            "PersonaCards", "post-history instructions"
        ),
        "character_book": QCoreApplication.translate("PersonaCards", "the lorebook"),
    }.get(field, field)


# -- images (worker thread) -----------------------------------------------------------------------


def _png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError("the picture could not be encoded as PNG")
    buffer.close()
    return png_text.without_text(bytes(data.data()))


def _fit(size: QSize, side: int) -> QSize:
    if size.width() <= side and size.height() <= side:
        return size
    return size.scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio)


def _decode(data: bytes, side: int) -> QImage:
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    size = reader.size()
    if size.isValid():
        reader.setScaledSize(_fit(size, side))
    image = reader.read()
    buffer.close()
    return image


@dataclass(frozen=True)
class CardRead:
    """A card file read for the preview.

    Attributes:
        card: The card.
        draft: What the persona would become.
        picture: The card's picture at the preview's size, or a null image.
        avatar: The avatar taken from it (a PNG at most ``AVATAR_SIDE``, without text), or
            ``None`` when the card has no picture or it cannot be decoded.
    """

    card: cards.CharacterCard
    draft: cards.PersonaDraft
    picture: QImage
    avatar: bytes | None


def read_card(path: Path) -> CardRead:
    """Read, check and decode a card file (worker thread).

    Raises:
        CardInvalid: The file cannot be used.
        OSError: It cannot be read.
    """
    card = cards.parse_card(cards.read_card_file(path))
    draft = cards.persona_from_card(
        card,
        max_name=int(spec_for("persona.name").maximum or 64),
        max_prompt=int(spec_for("persona.prompt").maximum or 10_000),
    )
    avatar: bytes | None = None
    picture = QImage()
    if card.image is not None:
        image = _decode(card.image, AVATAR_SIDE)
        if not image.isNull():
            avatar = _png_bytes(image)
            picture = image.scaled(
                PREVIEW_SIDE,
                PREVIEW_SIDE,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
    return CardRead(card, draft, picture, avatar)


def save_avatar(data_dir: Path, avatar: bytes) -> Path:
    """Keep an avatar taken from a card in the data folder (0600), named by its content.

    Worker thread. Importing the same card twice keeps one file.
    """
    folder = make_private_dir(data_dir / AVATAR_FOLDER)
    path = folder / f"card-{hashlib.sha256(avatar).hexdigest()[:16]}.png"
    if not path.exists():
        atomic_write_private(path, avatar)
    return path


def _letter_image(name: str) -> QImage:
    image = QImage(AVATAR_SIDE, AVATAR_SIDE, QImage.Format.Format_ARGB32)
    image.fill(QColor(LIGHT_ROLES.highlight))
    painter = QPainter(image)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(AVATAR_SIDE // 2)
    painter.setFont(font)
    painter.setPen(QColor(LIGHT_ROLES.highlighted_text))
    painter.drawText(image.rect(), Qt.AlignmentFlag.AlignCenter, name.strip()[:1].upper() or "·")
    painter.end()
    return image


def card_picture(avatar_path: str, name: str) -> bytes:
    """The picture a written card carries: the avatar, else the built-in one, as PNG.

    Worker thread.
    """
    for candidate in (avatar_path, str(default_avatar_path())):
        image = _read_file_image(candidate) if candidate else QImage()
        if not image.isNull():
            return _png_bytes(image)
    return _png_bytes(_letter_image(name))


def _read_file_image(path: str) -> QImage:
    reader = QImageReader(path)
    size = reader.size()
    if path.lower().endswith(".svg"):
        reader.setScaledSize(QSize(AVATAR_SIDE, AVATAR_SIDE))
    elif size.isValid():
        reader.setScaledSize(_fit(size, AVATAR_SIDE))
    return reader.read()


def write_card(path: Path, *, name: str, prompt: str, avatar_path: str) -> None:
    """Write the persona as a V2 card: a ``.json`` file, or a PNG of the avatar (worker thread).

    Raises:
        StorageError: Writing failed.
        OSError: The picture could not be made.
    """
    document = cards.card_document(name, prompt, creator_notes=EXPORT_NOTE)
    if path.suffix.lower() == ".json":
        atomic_write_private(path, cards.card_json(document).encode("utf-8"))
        return
    atomic_write_private(path, cards.card_png(card_picture(avatar_path, name), document))


# -- the preview --------------------------------------------------------------------------------


class CardPreviewDialog(QDialog):
    """What a character card would make of the persona, with Use as persona and Cancel."""

    def __init__(self, read: CardRead, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cardPreview")
        self.read = read
        self.picture_label = QLabel(self)
        self.picture_label.setObjectName("cardPicture")
        self.picture_label.setFixedSize(PREVIEW_SIDE, PREVIEW_SIDE)
        self.picture_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        if not read.picture.isNull():
            self.picture_label.setPixmap(QPixmap.fromImage(read.picture))
        self.title_label = plain_label(self)
        self.title_label.setObjectName("cardTitle")
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.about_label = help_label(self)
        self.name_label = QLabel(self)
        self.name_value = plain_label(self)
        self.name_value.setObjectName("cardName")
        self.prompt_label = QLabel(self)
        self.prompt_view = QPlainTextEdit(self)
        self.prompt_view.setObjectName("cardPrompt")
        self.prompt_view.setReadOnly(True)
        self.prompt_view.setTabChangesFocus(True)
        self.notes_label = plain_label(self)
        self.notes_label.setObjectName("cardNotes")
        self.buttons = QDialogButtonBox(self)
        self.use_button = self.buttons.addButton("", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        heading = QVBoxLayout()
        heading.addWidget(self.title_label)
        heading.addWidget(self.about_label)
        heading.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.picture_label)
        top.addLayout(heading, 1)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(self.name_label, self.name_value)
        form.addRow(self.prompt_label, self.prompt_view)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(form, 1)
        layout.addWidget(self.notes_label)
        layout.addWidget(self.buttons)
        self.retranslate()
        self.resize(620, 500)

    def notes(self) -> list[str]:
        """What the preview says about the card beyond its fields, one line each."""
        draft, card = self.read.draft, self.read.card
        lines: list[str] = []
        if draft.prompt_cut:
            lines.append(
                self.tr(
                    "The card's text is {length} characters; a personality holds at most "
                    "{limit}, so it was cut at {kept}."
                ).format(
                    length=draft.prompt_length,
                    limit=int(spec_for("persona.prompt").maximum or 0),
                    kept=len(draft.prompt),
                )
            )
        if draft.name_cut:
            lines.append(
                self.tr("The name was cut to {limit} characters.").format(
                    limit=int(spec_for("persona.name").maximum or 0)
                )
            )
        if draft.redacted:
            lines.append(
                self.tr(
                    "Something that looks like a password, key or ID number in {fields} was "
                    "replaced with {marker}."
                ).format(
                    fields=self.tr(", ", "between the parts of a list").join(
                        _field_name(f) for f in draft.redacted
                    ),
                    marker=REDACTED,
                )
            )
        if draft.unused:
            lines.append(
                self.tr("Not used by ETOS Desktop: {fields}.").format(
                    fields=self.tr(", ", "between the parts of a list").join(
                        _field_name(f) for f in draft.unused
                    )
                )
            )
        if self.read.avatar is None:
            lines.append(
                self.tr("The card has no picture: the avatar stays as it is.")
                if card.image is None
                else self.tr("The card's picture cannot be shown: the avatar stays as it is.")
            )
        if escape_invisible(draft.name + draft.prompt) != draft.name + draft.prompt:
            lines.append(self.tr("It contains invisible characters, shown here as \\u… escapes."))
        lines.append(
            self.tr(
                "Using it replaces the name, personality and avatar on this page; press Save to "
                "keep them."
            )
        )
        return lines

    def retranslate(self) -> None:
        """Set every text in the current language."""
        card, draft = self.read.card, self.read.draft
        self.setWindowTitle(self.tr("Import a character card"))
        kind = self.tr("Character card {version} · {container}").format(
            version=card.spec.upper(), container=card.container.upper()
        )
        self.title_label.setText(f"{kind} · {escape_invisible(draft.name)}")
        about = []
        if card.creator:
            about.append(self.tr("by {creator}").format(creator=escape_invisible(card.creator)))
        if card.character_version:
            about.append(
                self.tr("version {version}").format(
                    version=escape_invisible(card.character_version)
                )
            )
        if card.tags:
            about.append(
                self.tr("tags: {tags}").format(tags=escape_invisible(", ".join(card.tags[:12])))
            )
        self.about_label.setText(" · ".join(about))
        self.about_label.setVisible(bool(about))
        self.name_label.setText(self.tr("Name"))
        self.prompt_label.setText(self.tr("Personality"))
        self.name_value.setText(escape_invisible(draft.name))
        self.prompt_view.setPlainText(escape_invisible(draft.prompt))
        self.prompt_view.setAccessibleName(self.tr("Personality"))
        self.picture_label.setAccessibleName(self.tr("The card's picture"))
        self.notes_label.setText("\n".join(self.notes()))
        set_state(self.notes_label, "muted")
        self.use_button.setText(self.tr("Use as persona"))
        self.cancel_button.setText(self.tr("Cancel"))

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            set_state(self.notes_label, "muted")
        super().changeEvent(event)


async def confirm_card(parent: QWidget, read: CardRead) -> bool:
    """Show the card's preview; ``True`` when the user chose Use as persona."""
    dialog = CardPreviewDialog(read, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await await_result(dialog) == QDialog.DialogCode.Accepted
