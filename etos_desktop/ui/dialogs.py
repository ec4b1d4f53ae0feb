"""Awaiting the app's dialogs from coroutines, without nested event loops.

Every dialog of the app is opened with ``open()`` (window-modal, no ``exec()``: a modal loop inside
a coroutine on the qasync loop misses signals and hangs teardown) and awaited through a future
that its ``finished`` handler resolves. What the caller needs from the dialog is read *inside* that
handler, because a ``WA_DeleteOnClose`` dialog is gone soon after it closes; nothing touches the
dialog after the await. A dialog destroyed without finishing (its parent closed) resolves the
future as cancelled-by-the-user, so no caller waits forever.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QCoreApplication, QStandardPaths, Qt
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox, QWidget

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")


async def await_dialog(dialog: QDialog, read: Callable[[int], T], default: T) -> T:
    """Open ``dialog`` with ``open()`` and return ``read(result)``, called as it finishes.

    Args:
        dialog: A dialog not shown yet. It may have ``WA_DeleteOnClose``.
        read: Called with the result code inside the ``finished`` handler, while the dialog
            still exists; it reads the fields the caller needs.
        default: The answer when the dialog is destroyed without finishing (its parent closed).

    Returns:
        What ``read`` returned, or ``default``.
    """
    # Imported here: the main window imports this module before its first frame, and asyncio
    # (with ssl, socket, subprocess) cost ~60 ms of start-up there.
    import asyncio

    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()

    def on_finished(result: int) -> None:
        if future.done():
            return
        try:
            future.set_result(read(result))
        except Exception as exc:  # handed to the awaiting coroutine
            future.set_exception(exc)

    def on_destroyed() -> None:
        if not future.done():
            future.set_result(default)

    dialog.finished.connect(on_finished)
    dialog.destroyed.connect(on_destroyed)
    dialog.open()
    return await future


async def await_result(dialog: QDialog) -> int:
    """Open ``dialog`` and return its result code (``Accepted``/``Rejected``)."""
    return await await_dialog(dialog, lambda result: result, int(QDialog.DialogCode.Rejected))


async def confirm(
    parent: QWidget, title: str, text: str, action: str, *, destructive: bool = False
) -> bool:
    """Ask a yes/cancel question whose "yes" button says what it does (e.g. "Delete").

    Destructive questions default to Cancel, so Enter never deletes.

    Returns:
        Whether the user chose ``action``.
    """
    box = QMessageBox(parent)
    box.setObjectName("confirmBox")
    box.setIcon(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    yes = box.addButton(
        action,
        QMessageBox.ButtonRole.DestructiveRole
        if destructive
        else QMessageBox.ButtonRole.AcceptRole,
    )
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel if destructive else yes)
    box.setEscapeButton(cancel)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await await_dialog(box, lambda _result: box.clickedButton() is yes, False)


def start_folder() -> str:
    """Where file choosers start: the user's documents folder (else home), never the cwd."""
    for location in (
        QStandardPaths.StandardLocation.DocumentsLocation,
        QStandardPaths.StandardLocation.HomeLocation,
    ):
        folder = QStandardPaths.writableLocation(location)
        if folder and Path(folder).is_dir():
            return folder
    return ""


def suggested_file_name(title: str, suffix: str, *, fallback: str) -> str:
    """A file name from a title: characters file systems refuse are replaced, length bounded."""
    name = re.sub(r'[\\/:*?"<>|\x00-\x1f\u200b-\u200f\u202a-\u202e\u2066-\u2069]', " ", title)
    name = " ".join(name.split()).strip(". ")[:80].strip()
    return f"{name or fallback}{suffix}"


def _label_in_ui_language(dialog: QFileDialog) -> None:
    # Qt's qtbase_zh_CN.qm (PySide6 6.11/6.12) still has "Look in:" and "Files of type:" from
    # before Qt added their mnemonics, so "&Look in:" and "Files of &type:" stay English under
    # 中文; the dialog's other words are translated. These two are the app's own words.
    dialog.setLabelText(
        QFileDialog.DialogLabel.LookIn, QCoreApplication.translate("FileChooser", "&Look in:")
    )
    dialog.setLabelText(
        QFileDialog.DialogLabel.FileType,
        QCoreApplication.translate("FileChooser", "Files of &type:"),
    )


async def choose_save_path(
    parent: QWidget, caption: str, name_filter: str, file_name: str
) -> str | None:
    """Ask where to save a file: the operating system's chooser, opened and awaited.

    Args:
        parent: The window it belongs to.
        caption: Its title.
        name_filter: E.g. ``"JSON (*.json)"``.
        file_name: The suggested file name; the chooser starts in the documents folder.

    Returns:
        The chosen path, or ``None`` when cancelled.
    """
    folder = start_folder()
    suggested = str(Path(folder) / file_name) if folder else file_name
    dialog = QFileDialog(parent, caption, suggested, name_filter)
    dialog.setObjectName("saveFileDialog")
    _label_in_ui_language(dialog)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await await_dialog(dialog, lambda result: _chosen(dialog, result), None)


async def choose_open_path(parent: QWidget, caption: str, name_filter: str) -> str | None:
    """Ask for an existing file to open: the operating system's chooser, opened and awaited.

    Returns:
        The chosen path, or ``None`` when cancelled.
    """
    dialog = QFileDialog(parent, caption, start_folder(), name_filter)
    dialog.setObjectName("openFileDialog")
    _label_in_ui_language(dialog)
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await await_dialog(dialog, lambda result: _chosen(dialog, result), None)


async def choose_folder(parent: QWidget, caption: str, start: str = "") -> str | None:
    """Ask for an existing folder: the operating system's chooser, opened and awaited.

    Args:
        parent: The window it belongs to.
        caption: Its title.
        start: Where it opens (default: the documents folder).

    Returns:
        The chosen folder, or ``None`` when cancelled.
    """
    folder = start if start and Path(start).is_dir() else start_folder()
    dialog = QFileDialog(parent, caption, folder)
    dialog.setObjectName("folderDialog")
    _label_in_ui_language(dialog)
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await await_dialog(dialog, lambda result: _chosen(dialog, result), None)


async def choose_open_paths(parent: QWidget, caption: str, name_filter: str) -> list[str]:
    """Ask for existing files to open (several may be chosen): the OS's chooser, awaited.

    Returns:
        The chosen paths; empty when cancelled.
    """
    dialog = QFileDialog(parent, caption, start_folder(), name_filter)
    dialog.setObjectName("openFilesDialog")
    _label_in_ui_language(dialog)
    dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def chosen(result: int) -> list[str]:
        return dialog.selectedFiles() if result == QDialog.DialogCode.Accepted else []

    return await await_dialog(dialog, chosen, [])


def _chosen(dialog: QFileDialog, result: int) -> str | None:
    if result != QDialog.DialogCode.Accepted:
        return None
    files = dialog.selectedFiles()
    return files[0] if files else None
