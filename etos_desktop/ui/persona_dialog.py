"""Per-conversation persona: another name or personality for one conversation only."""

from __future__ import annotations

from PySide6.QtCore import Signal
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
        self.setWindowTitle(self.tr("Persona for this conversation"))
        self.resize(560, 380)
        intro = QLabel(
            self.tr(
                "Give the companion another name or personality in this conversation only. "
                "Leave a field empty to use the one from Settings → Persona."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.name_edit = QLineEdit(name, self)
        self.name_edit.setPlaceholderText(global_name)
        self.name_edit.setMaxLength(64)
        self.prompt_edit = QPlainTextEdit(prompt, self)
        self.prompt_edit.setPlaceholderText(global_prompt)
        form = QFormLayout()
        form.addRow(self.tr("Name"), self.name_edit)
        form.addRow(self.tr("Personality"), self.prompt_edit)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save
            | QDialogButtonBox.StandardButton.Reset
            | QDialogButtonBox.StandardButton.Cancel,
            self,
        )
        buttons.button(QDialogButtonBox.StandardButton.Reset).setText(self.tr("Use Settings"))
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Reset).clicked.connect(self._on_reset)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form, 1)
        layout.addWidget(buttons)

    def _on_reset(self) -> None:
        self.name_edit.clear()
        self.prompt_edit.clear()

    def _on_buttons_accepted(self) -> None:
        self.override_chosen.emit(
            self.name_edit.text().strip(), self.prompt_edit.toPlainText().strip()[:10_000]
        )
        self.accept()
