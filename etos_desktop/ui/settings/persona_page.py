"""The Persona page: the companion's name, avatar and personality (DESIGN §4).

Empty fields mean "use the default" of the UI language, shown as placeholder text. A character
card (SillyTavern, Character Card V1/V2/V3, PNG or JSON) fills the three fields after a preview
(``persona_cards``); the persona can be written as a V2 card, PNG or JSON. Like every edit here,
an imported card is kept when Settings is saved.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.context.language import Language
from etos_desktop.core.context.prompts import DEFAULT_PERSONA_NAME, DEFAULT_PERSONA_PROMPT
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.settings.schema import spec_for, validate
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.resources import resource_path
from etos_desktop.ui import dialogs
from etos_desktop.ui.error_text import failure_text
from etos_desktop.ui.labels import plain_tooltip
from etos_desktop.ui.settings import persona_cards
from etos_desktop.ui.settings.page import (
    SettingsPage,
    error_label,
    help_label,
    row,
    schema_tr,
    stacked,
)

AVATAR_SIZE = 64


class PersonaPage(SettingsPage):
    """The companion's name, avatar and personality; empty fields mean "use the default".

    Args:
        settings: The settings store (``persona.*``).
        language: The UI language chosen now (even before Save), for the defaults.
        parent: The parent widget.
    """

    def __init__(
        self,
        settings: SettingsStore,
        *,
        language: Callable[[], Language],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("personaPage")
        self._settings = settings
        self._language = language
        self._avatar = settings.get_str("persona.avatar")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.name_label = QLabel(self)
        self.name_edit = QLineEdit(self)
        self.name_edit.setMaxLength(int(spec_for("persona.name").maximum or 64))
        self.name_edit.setText(settings.get_str("persona.name"))
        form.addRow(self.name_label, self.name_edit)

        self.avatar_label = QLabel(self)
        self.avatar_preview = QLabel(self)
        self.avatar_preview.setFixedSize(AVATAR_SIZE, AVATAR_SIZE)
        self.avatar_preview.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.choose_avatar_button = QPushButton(self)
        self.choose_avatar_button.clicked.connect(self._on_choose_avatar_button_clicked)
        self.reset_avatar_button = QPushButton(self)
        self.reset_avatar_button.clicked.connect(self.reset_avatar)
        self.avatar_path_label = help_label(self)
        self.avatar_path_label.setWordWrap(False)
        self.avatar_path_label.setAlignment(
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        )
        self.avatar_path_label.setSizePolicy(
            QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred
        )
        self.avatar_error = error_label(self)
        avatar_buttons = QWidget(self)
        buttons_layout = QVBoxLayout(avatar_buttons)
        buttons_layout.setContentsMargins(0, 0, 0, 0)
        buttons_layout.addWidget(self.choose_avatar_button)
        buttons_layout.addWidget(self.reset_avatar_button)
        avatar_row = QWidget(self)
        avatar_layout = QHBoxLayout(avatar_row)
        avatar_layout.setContentsMargins(0, 0, 0, 0)
        avatar_layout.addWidget(self.avatar_preview)
        avatar_layout.addWidget(avatar_buttons)
        avatar_layout.addWidget(self.avatar_path_label, 1)
        form.addRow(self.avatar_label, stacked(self, avatar_row, self.avatar_error))

        self.prompt_label = QLabel(self)
        self.prompt_edit = QPlainTextEdit(self)
        self.prompt_edit.setPlainText(settings.get_str("persona.prompt"))
        # Tab moves on through the page (a personality is prose, not indented code).
        self.prompt_edit.setTabChangesFocus(True)
        self.prompt_error = error_label(self)
        self.reset_prompt_button = QPushButton(self)
        self.reset_prompt_button.clicked.connect(self.reset_prompt)
        self.hint_label = help_label(self)
        form.addRow(self.prompt_label, stacked(self, self.prompt_edit, self.prompt_error))
        form.addRow("", row(self, self.hint_label, self.reset_prompt_button))
        self.hint_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.card_label = QLabel(self)
        self.import_card_button = QPushButton(self)
        self.import_card_button.setObjectName("importCardButton")
        self.import_card_button.clicked.connect(self._on_import_card_button_clicked)
        self.export_card_button = QPushButton(self)
        self.export_card_button.setObjectName("exportCardButton")
        self.export_card_button.clicked.connect(self._on_export_card_button_clicked)
        form.addRow(
            self.card_label,
            row(self, self.import_card_button, self.export_card_button, stretch=True),
        )
        outer.addLayout(form, 1)
        outer.addWidget(self.status_label)

        self.name_edit.textChanged.connect(lambda _text: self.changed.emit())
        self.prompt_edit.textChanged.connect(self.changed.emit)
        self._render_avatar()
        self.retranslate()

    @override
    def retranslate(self) -> None:
        self.name_label.setText(self.tr("Name"))
        self.avatar_label.setText(self.tr("Avatar"))
        self.prompt_label.setText(self.tr("Personality"))
        self.choose_avatar_button.setText(self.tr("Choose image…"))
        self.reset_avatar_button.setText(self.tr("Use built-in"))
        self.reset_prompt_button.setText(self.tr("Reset to default"))
        self.hint_label.setText(self.tr("Empty fields use the default shown in grey."))
        self.card_label.setText(self.tr("Character card"))
        self.import_card_button.setText(self.tr("Import character card…"))
        self.import_card_button.setToolTip(
            self.tr(
                "Fill this page from a character card: a PNG or JSON file from SillyTavern or "
                "another app for character cards (V1, V2 or V3). A preview shows it first."
            )
        )
        self.export_card_button.setText(self.tr("Export as card…"))
        self.export_card_button.setToolTip(
            self.tr("Save this persona as a character card (V2): a PNG with the avatar, or JSON.")
        )
        self.prompt_edit.setToolTip(schema_tr(spec_for("persona.prompt").description))
        self.name_edit.setToolTip(schema_tr(spec_for("persona.name").description))
        self._render_avatar()
        self._render_status()
        self.refresh_defaults()

    # -- public API ---------------------------------------------------------------------------

    @property
    def avatar_path(self) -> str:
        """The chosen image file, or ``""`` for the built-in avatar."""
        return self._avatar

    def refresh_defaults(self) -> None:
        """Show the defaults of the current UI language as placeholder text."""
        lang = self._language()
        self.name_edit.setPlaceholderText(DEFAULT_PERSONA_NAME[lang])
        self.prompt_edit.setPlaceholderText(DEFAULT_PERSONA_PROMPT[lang])

    def reset_prompt(self) -> None:
        """Fill the personality with the warm default of the current UI language."""
        self.prompt_edit.setPlainText(DEFAULT_PERSONA_PROMPT[self._language()])

    def set_avatar_path(self, path: str) -> bool:
        """Use the image at ``path`` as avatar; False (and a note) if it cannot be shown."""
        pixmap = QPixmap(path)
        if pixmap.isNull():
            self.avatar_error.setText(self.tr("This file is not an image the app can show."))
            self.avatar_error.show()
            return False
        self._avatar = path
        self.avatar_error.hide()
        self._render_avatar()
        self.changed.emit()
        return True

    def reset_avatar(self) -> None:
        """Go back to the built-in avatar."""
        self._avatar = ""
        self.avatar_error.hide()
        self._render_avatar()
        self.changed.emit()

    @override
    def is_modified(self) -> bool:
        return (
            self.name_edit.text().strip(),
            self.prompt_edit.toPlainText().strip(),
            self._avatar,
        ) != (
            self._settings.get_str("persona.name"),
            self._settings.get_str("persona.prompt"),
            self._settings.get_str("persona.avatar"),
        )

    @override
    def validate(self) -> bool:
        self.prompt_error.hide()
        try:
            validate(spec_for("persona.prompt"), self.prompt_edit.toPlainText().strip())
        except InvalidInput as exc:
            self.prompt_error.setText(
                self.tr("The personality is too long: at most {maximum} characters.").format(
                    maximum=QLocale().toString(int(exc.params.get("maximum") or 0))
                )
            )
            self.prompt_error.show()
            return False
        return True

    @override
    def apply(self) -> None:
        self._settings.set("persona.name", self.name_edit.text().strip())
        self._settings.set("persona.prompt", self.prompt_edit.toPlainText().strip())
        self._settings.set("persona.avatar", self._avatar)

    # -- avatar -------------------------------------------------------------------------------

    def _on_choose_avatar_button_clicked(self) -> None:
        self.spawn(self._choose_avatar(), self.tr("The avatar was not changed."))

    async def _choose_avatar(self) -> None:
        path = await dialogs.choose_open_path(
            self,
            self.tr("Choose an avatar image"),
            self.tr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp *.svg)"),
        )
        if path:
            self.set_avatar_path(path)

    def _render_avatar(self) -> None:
        pixmap = QPixmap(self._avatar) if self._avatar else QPixmap()
        if pixmap.isNull():
            with contextlib.suppress(FileNotFoundError):
                pixmap = QPixmap(str(resource_path("icons", "avatar-default.svg")))
        if pixmap.isNull():
            self.avatar_preview.clear()
        else:
            ratio = self.devicePixelRatioF()
            scaled = pixmap.scaled(
                round(AVATAR_SIZE * ratio),
                round(AVATAR_SIZE * ratio),
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
            scaled.setDevicePixelRatio(ratio)
            self.avatar_preview.setPixmap(scaled)
        if self._avatar:
            # The file name says which image it is; the tooltip has the whole path.
            self.avatar_path_label.setText(Path(self._avatar).name)
            self.avatar_path_label.setToolTip(plain_tooltip(self._avatar))
        else:
            self.avatar_path_label.setText(self.tr("Built-in avatar"))
            self.avatar_path_label.setToolTip("")
        self.reset_avatar_button.setEnabled(bool(self._avatar))

    # -- character cards ----------------------------------------------------------------------

    def _on_import_card_button_clicked(self) -> None:
        self.start(self.import_card(), self.tr("The character card was not imported."))

    def _on_export_card_button_clicked(self) -> None:
        self.start(self.export_card(), self.tr("The persona was not exported."))

    @override
    def failure_message(self, failure: str, error: BaseException) -> str:
        if isinstance(error, EtosError) and error.code == "card_invalid":
            return f"{failure} {persona_cards.card_error_text(error)}".strip()
        return failure_text(failure, error)

    async def import_card(self) -> None:
        """Choose a card file, preview it, and on Use as persona fill the page with it."""
        path = await dialogs.choose_open_path(
            self,
            self.tr("Import a character card"),
            self.tr("Character cards (*.png *.json);;All files (*)"),
        )
        if not path:
            return
        loop = asyncio.get_running_loop()
        try:
            read = await loop.run_in_executor(None, persona_cards.read_card, Path(path))
        except OSError as exc:
            self.set_status(
                "error",
                lambda e=exc: self.tr("The file could not be read: {error}").format(
                    error=e.strerror or e
                ),
            )
            return
        if not await persona_cards.confirm_card(self, read):
            return
        avatar = read.avatar
        if avatar is not None:
            data_dir = self._settings.path.parent
            saved = await loop.run_in_executor(None, persona_cards.save_avatar, data_dir, avatar)
            self._avatar = str(saved)
            self.avatar_error.hide()
            self._render_avatar()
        self.name_edit.setText(read.draft.name)
        self.prompt_edit.setPlainText(read.draft.prompt)
        self.changed.emit()
        name = read.draft.name
        self.set_status(
            "ok",
            lambda: self.tr("The card “{name}” is on this page: press Save to use it.").format(
                name=name
            ),
        )

    def card_fields(self) -> tuple[str, str]:
        """The name and personality a card written now would carry (the defaults if empty)."""
        lang = self._language()
        return (
            self.name_edit.text().strip() or DEFAULT_PERSONA_NAME[lang],
            self.prompt_edit.toPlainText().strip() or DEFAULT_PERSONA_PROMPT[lang],
        )

    async def export_card(self) -> None:
        """Write the persona shown on the page as a V2 character card, PNG or JSON."""
        name, prompt = self.card_fields()
        png_filter = self.tr("Character card, PNG (*.png)")
        json_filter = self.tr("Character card, JSON (*.json)")
        path = await dialogs.choose_save_path(
            self,
            self.tr("Export the persona as a character card"),
            f"{png_filter};;{json_filter}",
            dialogs.suggested_file_name(name, ".png", fallback="persona"),
        )
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() not in (".png", ".json"):
            target = target.with_name(target.name + ".png")
        avatar = self._avatar
        await asyncio.get_running_loop().run_in_executor(
            None,
            lambda: persona_cards.write_card(target, name=name, prompt=prompt, avatar_path=avatar),
        )
        self.set_status(
            "ok",
            lambda: self.tr("Exported “{name}” as a character card to {path}.").format(
                name=name, path=target
            ),
        )
