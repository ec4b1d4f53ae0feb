"""The composer's quiet line: which model answers, and about how many tokens the draft takes.

Muted and small, under the composer on the right; the loud messages (too long, no images, near
the limit) stay in the token line beside it (``ChatPanel.token_label``).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget
from typing_extensions import override

from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.ui.labels import plain_tooltip


class ModelTokenIndicator(QLabel):
    """Shows "model · about N tokens" for the draft (just the model while it is empty)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerIndicator")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        self._model = ""
        self._tokens = 0
        self._room = 0
        self.hide()

    def show_state(self, model: str, tokens: int, room: int) -> None:
        """The model that answers (``""``: unknown, hidden), the draft's tokens and its room."""
        self._model, self._tokens, self._room = model, tokens, room
        self.retranslate()
        self.setVisible(bool(model))

    def model(self) -> str:
        """The model named."""
        return self._model

    def tokens(self) -> int:
        """The draft's token estimate shown (0: none shown)."""
        return self._tokens

    def retranslate(self) -> None:
        """Put the line into words again (the language changed)."""
        locale = self.locale()
        # A model id may come from the server: one line, its bidi overrides shown, not obeyed.
        model = neutralise_bidi(" ".join(self._model.split()))
        if self._tokens:
            text = self.tr("{model} · about {tokens} tokens").format(
                model=model, tokens=locale.toString(self._tokens)
            )
        else:
            text = model
        self.setText(text)
        tip = self.tr(
            "The model that answers in this conversation, and about how many tokens your "
            "message takes (it may take up to {room})."
        ).format(room=locale.toString(self._room))
        self.setToolTip(plain_tooltip(tip))
        self.setAccessibleName(text)

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
