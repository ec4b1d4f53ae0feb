"""Per-conversation persona: another name or personality for one conversation only."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override


class PersonaOverrideDialog(QDialog):
    """Edits one conversation's persona override; empty fields use the persona from Settings.

    Signals:
        override_chosen(str, str): name and personality prompt ("" = use the global one).
    """

    override_chosen = Signal(str, str)

    def __init__(
        self,
        name: str,
        prompt: str,
        *,
        global_name: str,
        global_prompt: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("personaOverrideDialog")
        self.resize(560, 380)
        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        self.name_edit = QLineEdit(name, self)
        self.name_edit.setObjectName("personaNameEdit")
        self.name_edit.setPlaceholderText(global_name)
        self.name_edit.setMaxLength(64)
        self.prompt_edit = QPlainTextEdit(prompt, self)
        self.prompt_edit.setObjectName("personaPromptEdit")
        self.prompt_edit.setPlaceholderText(global_prompt)
        # Tab moves on to the buttons: a personality is prose, not indented code.
        self.prompt_edit.setTabChangesFocus(True)
        self.name_label = QLabel(self)
        self.name_label.setBuddy(self.name_edit)
        self.prompt_label = QLabel(self)
        self.prompt_label.setBuddy(self.prompt_edit)
        form = QFormLayout()
        form.addRow(self.name_label, self.name_edit)
        form.addRow(self.prompt_label, self.prompt_edit)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save
            | QDialogButtonBox.StandardButton.Reset
            | QDialogButtonBox.StandardButton.Cancel,
            self,
        )
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.Reset).clicked.connect(self._on_reset)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(form, 1)
        layout.addWidget(self.buttons)
        self.retranslate()

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setWindowTitle(self.tr("Persona for this conversation"))
        self.intro.setText(
            self.tr(
                "Give the companion another name or personality in this conversation only. "
                "Leave a field empty to use the one from Settings → Persona."
            )
        )
        self.name_label.setText(self.tr("&Name"))
        self.prompt_label.setText(self.tr("&Personality"))
        self.name_edit.setAccessibleName(self.tr("Name"))
        self.prompt_edit.setAccessibleName(self.tr("Personality"))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setText(self.tr("Save"))
        self.buttons.button(QDialogButtonBox.StandardButton.Reset).setText(self.tr("Use Settings"))
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(self.tr("Cancel"))

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _on_reset(self) -> None:
        self.name_edit.clear()
        self.prompt_edit.clear()

    def _on_buttons_accepted(self) -> None:
        self.override_chosen.emit(
            self.name_edit.text().strip(), self.prompt_edit.toPlainText().strip()[:10_000]
        )
        self.accept()
