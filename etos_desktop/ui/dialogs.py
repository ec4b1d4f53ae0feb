"""Small standard dialogs (confirmations) in one place, so tests can answer them."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget


def confirm(
    parent: QWidget, title: str, text: str, action: str, *, destructive: bool = False
) -> bool:
    """Ask a yes/cancel question whose "yes" button says what it does (e.g. "Delete").

    Returns:
        Whether the user chose ``action``. Tests replace this function; it runs a modal loop.
    """
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(text)
    yes = box.addButton(
        action,
        QMessageBox.ButtonRole.DestructiveRole
        if destructive
        else QMessageBox.ButtonRole.AcceptRole,
    )
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel if destructive else yes)
    box.exec()
    return box.clickedButton() is yes
