"""Help → About: the version, where the data is kept, and the licences of the bundled parts.

The parts and their licences are read from the installed packages' metadata (the app's own
requirements, followed down), so the list is what is really installed; Qt itself is named
with the version that runs. Reading the metadata touches the disk, so it happens in a worker
thread while the dialog shows.
"""

from __future__ import annotations

import asyncio
import importlib.metadata as metadata
import re
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop import __version__
from etos_desktop.ui.labels import make_plain
from etos_desktop.ui.task_set import TaskSet

_DISTRIBUTION = "etos-desktop"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"\bextra\s*==")


@dataclass(frozen=True)
class Part:
    """One bundled part: its name, version and licence (an SPDX expression where known)."""

    name: str
    version: str
    licence: str


def _licence(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    expression = meta.get("License-Expression") or ""
    if expression:
        return expression
    text = (meta.get("License") or "").strip()
    if text and len(text) <= 60 and "\n" not in text:
        return text
    classifiers = [
        c.split("::")[-1].strip()
        for c in meta.get_all("Classifier") or []
        if c.startswith("License ::") and c.split("::")[-1].strip() != "OSI Approved"
    ]
    return "; ".join(classifiers) or "—"


def bundled_parts(root: str = _DISTRIBUTION) -> list[Part]:
    """Every installed package ``root`` needs, with its licence, sorted by name.

    Runs in a worker thread (it reads package metadata from the disk). Optional extras are not
    followed; packages that are not installed (another platform's) are left out.
    """
    found: dict[str, Part] = {}
    pending = [root]
    while pending:
        name = pending.pop()
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = Part(dist.metadata["Name"] or name, dist.version, _licence(dist))
        for requirement in dist.requires or []:
            if _EXTRA.search(requirement):
                continue
            match = _NAME.match(requirement)
            if match:
                pending.append(match.group(1))
    found.pop(_DISTRIBUTION, None)
    return sorted(found.values(), key=lambda part: part.name.lower())


class AboutDialog(QDialog):
    """Help → About ETOS Desktop.

    Args:
        data_dir: The data folder in use (shown, with a button that opens it).
        parts: Reads the bundled parts (tests pass their own); default ``bundled_parts``.
    """

    def __init__(
        self,
        data_dir: Path | None,
        *,
        parts: object = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self._data_dir = data_dir
        self._read_parts = parts or bundled_parts
        self._tasks = TaskSet()
        self.title = QLabel(self)
        self.title.setObjectName("aboutTitle")  # sized by the style sheet (ui.theme)
        self.blurb = QLabel(self)
        self.blurb.setWordWrap(True)
        self.folder_label = QLabel(self)
        self.folder = make_plain(QLabel(str(data_dir or ""), self))
        self.folder.setObjectName("aboutDataFolder")
        self.folder.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder.setWordWrap(True)
        self.open_folder = QPushButton(self)
        self.open_folder.setObjectName("openDataFolder")
        self.open_folder.setEnabled(data_dir is not None)
        self.open_folder.clicked.connect(self._on_open_folder_clicked)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(self.open_folder)
        self.parts_label = QLabel(self)
        self.parts = QTreeWidget(self)
        self.parts.setObjectName("aboutParts")
        self.parts.setRootIsDecorated(False)
        self.parts.setColumnCount(3)
        self.parts.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.parts.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.parts_label.setBuddy(self.parts)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.blurb)
        layout.addSpacing(6)
        layout.addWidget(self.folder_label)
        layout.addLayout(folder_row)
        layout.addSpacing(6)
        layout.addWidget(self.parts_label)
        layout.addWidget(self.parts, 1)
        layout.addWidget(self.buttons)
        self.resize(620, 560)
        self._part_list: list[Part] = []
        self.retranslate()
        self._add_part(Part("Qt", qVersion(), "LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only"))
        self.loaded = self._tasks.spawn(self._load_parts(), self.tr("The licences were not read."))

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setWindowTitle(self.tr("About ETOS Desktop"))
        self.title.setText(self.tr("ETOS Desktop {version}").format(version=__version__))
        self.blurb.setText(
            self.tr(
                "A companion chat app with a memory you can see and control. "
                "Free software under the MIT licence."
            )
        )
        self.folder_label.setText(self.tr("Your data (conversations, memories, settings) is in:"))
        self.open_folder.setText(self.tr("Open folder"))
        self.parts_label.setText(self.tr("Bundled parts and their licences:"))
        self.parts.setHeaderLabels([self.tr("Part"), self.tr("Version"), self.tr("Licence")])
        self.parts.setAccessibleName(self.tr("Bundled parts and their licences"))
        self.buttons.button(QDialogButtonBox.StandardButton.Close).setText(self.tr("Close"))

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def part_list(self) -> list[Part]:
        """The parts listed so far."""
        return list(self._part_list)

    def _add_part(self, part: Part) -> None:
        self._part_list.append(part)
        self.parts.addTopLevelItem(QTreeWidgetItem([part.name, part.version, part.licence]))

    async def _load_parts(self) -> None:
        loop = asyncio.get_running_loop()
        for part in await loop.run_in_executor(None, self._read_parts):  # type: ignore[arg-type]
            self._add_part(part)

    def _on_open_folder_clicked(self) -> None:
        if self._data_dir is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._data_dir)))

    @override
    def done(self, result: int) -> None:
        self._tasks.cancel_all()
        super().done(result)
