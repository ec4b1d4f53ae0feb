"""The Settings dialog: the page list, the pages, and Save and Close.

DESIGN §4 (providers, persona, first run), §5 (memory) and §9 (keys only in the keyring or the
0600 file). The pages edit copies; Save validates every page (marking bad fields inline,
keeping what was typed), stores changed keys, then writes the settings file. The dialog opens at
a size that fits the main window and the screen, lays every page out at that size, and never
grows by itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import shiboken6
from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.context.language import Language
from etos_desktop.core.errors import EtosError
from etos_desktop.core.transfer.service import TransferService
from etos_desktop.ui.dialogs import await_dialog
from etos_desktop.ui.error_text import describe, failure_text
from etos_desktop.ui.settings.general_page import GeneralPage, ui_language
from etos_desktop.ui.settings.memory_page import MemoryPage
from etos_desktop.ui.settings.page import (
    SettingsPage,
    TextFactory,
    label_form_fields,
    plain_label,
    set_state,
)
from etos_desktop.ui.settings.persona_page import PersonaPage
from etos_desktop.ui.settings.profile_page import ProfilePage
from etos_desktop.ui.settings.providers_controller import ProvidersController
from etos_desktop.ui.settings.providers_page import ProbeFunction, ProvidersPage
from etos_desktop.ui.settings.summaries_page import SummariesPage
from etos_desktop.ui.settings.sync_page import SyncPage
from etos_desktop.ui.task_set import TaskSet

if TYPE_CHECKING:
    from etos_desktop.core.clock import Clock
    from etos_desktop.core.memory.access import MemoryAccess
    from etos_desktop.core.profile.access import ProfileAccess
    from etos_desktop.core.providers.registry import ProviderRegistry
    from etos_desktop.core.providers.secrets import SecretStore
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.core.summaries.access import SummaryAccess
    from etos_desktop.services.jobs import BackgroundJobs
    from etos_desktop.services.sync_runner import SyncRunner
    from etos_desktop.ui.changes_bridge import ChangesBridge

#: The size the dialog opens at, unless the main window or the screen is smaller.
DEFAULT_SIZE: Final = QSize(940, 620)
#: Room kept free around the dialog on a small screen (its frame, a panel).
_SCREEN_MARGIN: Final = 40


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class SettingsDialog(QDialog):
    """The Settings window: Providers, Persona, General, Memory, Summaries, Profile and Sync pages.

    The Memory page is there when the app has memory, the Summaries page when it has summaries,
    the Profile page when it has the profile, the Sync page when it has sync.

    On first run the dialog opens on the Providers page with a welcome banner and looks once
    for a model server on this computer, offering one-click setup. Open it with ``show()`` or
    ``open()``; closing with unsaved edits asks first, and closing ends the pages' work and the
    dialogs they opened. It must be created while the qasync loop runs (pages start tasks in
    their constructors).

    Signals:
        settings_saved(): something was written to the settings file (the main window refreshes
            its provider list and re-reads the settings).
    """

    settings_saved = Signal()

    def __init__(
        self,
        settings: SettingsStore,
        secrets: SecretStore,
        registry: ProviderRegistry,
        *,
        probe: ProbeFunction,
        local_candidates: Sequence[str],
        env: Mapping[str, str],
        first_run: bool = False,
        memory: MemoryAccess | None = None,
        summaries: SummaryAccess | None = None,
        profile: ProfileAccess | None = None,
        jobs: BackgroundJobs | None = None,
        changes: ChangesBridge | None = None,
        clock: Clock | None = None,
        sync: SyncRunner | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self._settings = settings
        self._tasks = TaskSet(report=self._on_task_failed)
        self._saving = False
        self._asking = False
        self._status: tuple[str, TextFactory] | None = None

        self.page_list = QListWidget(self)
        self.page_list.setObjectName("settingsPageList")
        self.page_list.setStyleSheet("QListWidget::item { padding: 6px 4px; }")
        self.stack = QStackedWidget(self)
        self.providers_page = ProvidersPage(
            ProvidersController(settings, secrets, registry, env),
            probe=probe,
            local_candidates=local_candidates,
            first_run=first_run,
            parent=self.stack,
        )
        # The General page first: the Persona page's defaults follow its language.
        self.general_page = GeneralPage(settings, jobs=jobs, changes=changes, parent=self.stack)
        self.persona_page = PersonaPage(settings, language=self._chosen_language, parent=self.stack)
        self._pages: dict[str, SettingsPage] = {
            "providers": self.providers_page,
            "persona": self.persona_page,
            "general": self.general_page,
        }
        self.memory_page: MemoryPage | None = None
        if memory is not None:
            # Summaries and the profile travel in the memory export and import: one file.
            transfer = TransferService(memory, summaries=summaries, profile=profile)
            self.memory_page = MemoryPage(
                memory, settings, transfer=transfer, changes=changes, parent=self.stack
            )
            self._pages["memory"] = self.memory_page
        self.summaries_page: SummariesPage | None = None
        if summaries is not None:
            self.summaries_page = SummariesPage(
                summaries, settings, jobs=jobs, changes=changes, clock=clock, parent=self.stack
            )
            self._pages["summaries"] = self.summaries_page
        self.profile_page: ProfilePage | None = None
        if profile is not None:
            self.profile_page = ProfilePage(
                profile, settings, jobs=jobs, changes=changes, parent=self.stack
            )
            self._pages["profile"] = self.profile_page
        self.sync_page: SyncPage | None = None
        if sync is not None:
            self.sync_page = SyncPage(sync, settings, changes=changes, parent=self.stack)
            self._pages["sync"] = self.sync_page
        self._page_names = tuple(self._pages)
        for name in self._page_names:
            self.page_list.addItem(QListWidgetItem())
            self.stack.addWidget(self._pages[name])
            self._pages[name].changed.connect(self._on_page_changed)
        self.page_list.currentRowChanged.connect(self.stack.setCurrentIndex)
        for page in self._pages.values():
            label_form_fields(page)

        self.status_label = plain_label(self)
        self.status_label.setObjectName("settingsStatus")
        self.save_button = QPushButton(self)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.close_button = QPushButton(self)
        self.close_button.clicked.connect(self.reject)

        body = QHBoxLayout()
        body.addWidget(self.page_list)
        body.addWidget(self.stack, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status_label, 1)
        bottom.addWidget(self.save_button)
        bottom.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addLayout(bottom)

        self.providers_page.saved.connect(self._on_page_saved)
        self.general_page.value_changed.connect(self._on_general_page_value_changed)

        self.retranslate()
        self.resize(self._initial_size())
        self.show_page("providers")

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setWindowTitle(self.tr("Settings"))
        self.page_list.setAccessibleName(self.tr("Settings pages"))
        titles = {
            "providers": self.tr("Providers"),
            "persona": self.tr("Persona"),
            "general": self.tr("General"),
            "memory": self.tr("Memory"),
            "summaries": self.tr("Summaries"),
            "profile": self.tr("Profile"),
            "sync": self.tr("Sync"),
        }
        for index, name in enumerate(self._page_names):
            self.page_list.item(index).setText(titles[name])
        metrics = self.page_list.fontMetrics()
        widest = max(metrics.horizontalAdvance(t) for t in titles.values())
        # Item padding, the frame, and room for a focus rectangle.
        self.page_list.setFixedWidth(max(120, widest + 40))
        self.save_button.setText(self.tr("Saving…") if self._saving else self.tr("Save"))
        self.close_button.setText(self.tr("Close"))
        self._render_status()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange and self._status is not None:
            set_state(self.status_label, self._status[0])
        super().changeEvent(event)

    def _initial_size(self) -> QSize:
        size = QSize(DEFAULT_SIZE)
        parent = self.parentWidget()
        if parent is not None:
            # Never larger than the main window it belongs to.
            size = size.boundedTo(parent.window().size())
        screen = (parent.screen() if parent is not None else None) or (
            QGuiApplication.primaryScreen()
        )
        if screen is not None:
            available = screen.availableGeometry().size()
            size = size.boundedTo(
                QSize(available.width() - _SCREEN_MARGIN, available.height() - _SCREEN_MARGIN)
            )
        return size

    # -- public API ---------------------------------------------------------------------------

    def page(self, name: str) -> SettingsPage:
        """The page called ``name``.

        Raises:
            ValueError: No page has that name.
        """
        if name not in self._pages:
            raise ValueError(f"no settings page {name!r}")
        return self._pages[name]

    def page_names(self) -> tuple[str, ...]:
        """The names of the pages, in the order of the page list."""
        return self._page_names

    def show_page(self, name: str) -> None:
        """Show the page ``name`` ("providers", "persona", "general", "memory", "summaries", "sync"…).

        Raises:
            ValueError: No page has that name.
        """
        self.stack.setCurrentWidget(self.page(name))
        self.page_list.setCurrentRow(self._page_names.index(name))

    def current_page_name(self) -> str:
        """The name of the page shown."""
        return self._page_names[self.stack.currentIndex()]

    def is_modified(self) -> bool:
        """Whether any page holds edits that are not saved."""
        return any(page.is_modified() for page in self._pages.values())

    async def save(self) -> bool:
        """Validate and save every page; emits ``settings_saved`` on success.

        Returns:
            True when everything was saved. Otherwise the problem is shown (inline at the
            field, or in the status line) and nothing typed is lost.
        """
        if self._saving:
            return False
        self._saving = True
        self.save_button.setEnabled(False)
        self.save_button.setText(self.tr("Saving…"))
        try:
            for name, page in self._pages.items():
                if not page.validate():
                    self.show_page(name)
                    self._set_status(
                        "error", lambda: self.tr("Correct the marked field, then save again.")
                    )
                    return False
            if not await self.providers_page.write_keys():
                self.show_page("providers")
                self._set_status("error", lambda: self.tr("The API key could not be saved."))
                return False
            for name, page in self._pages.items():
                if not await page.save_pending():
                    self.show_page(name)
                    self._set_status(
                        "error", lambda: self.tr("Correct what the page says, then save again.")
                    )
                    return False
            for page in self._pages.values():
                page.apply()
            self._settings.save()
        except EtosError as exc:
            self._set_status("error", lambda e=exc: describe(e).message)
            return False
        finally:
            self._saving = False
            self.save_button.setEnabled(True)
            self.save_button.setText(self.tr("Save"))
        self.providers_page.saved_to_file()
        self._set_status("ok", lambda: self.tr("Saved."))
        self.settings_saved.emit()
        return True

    async def wait_idle(self) -> None:
        """Wait until the dialog's and its pages' tasks have ended (tests, shutdown)."""
        await self._tasks.wait_idle()
        for page in self._pages.values():
            await page.wait_idle()

    # -- closing ------------------------------------------------------------------------------

    @override
    def reject(self) -> None:
        if self._saving or self._asking:
            return
        if not self.is_modified() or not _loop_running():
            # Without a running loop (the app is shutting down) nobody could answer.
            super().reject()
            return
        self._tasks.spawn(self._ask_before_closing(), self.tr("Settings were not closed."))

    async def _ask_before_closing(self) -> None:
        self._asking = True
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Unsaved changes"),
            self.tr("Some settings were changed but not saved. Save them before closing?"),
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("unsavedChangesBox")
        box.button(QMessageBox.StandardButton.Save).setText(self.tr("Save"))
        box.button(QMessageBox.StandardButton.Discard).setText(self.tr("Discard"))
        box.button(QMessageBox.StandardButton.Cancel).setText(self.tr("Cancel"))
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        try:
            answer = await await_dialog(
                box,
                lambda _result: box.standardButton(box.clickedButton()),
                QMessageBox.StandardButton.Cancel,
            )
        finally:
            self._asking = False
        if answer == QMessageBox.StandardButton.Save:
            if await self.save():
                self.accept()
        elif answer == QMessageBox.StandardButton.Discard:
            # A bound ``super().reject`` does not work as a PySide slot; call the base.
            QDialog.reject(self)

    @override
    def done(self, result: int) -> None:
        # Deleted memories are held for Undo only while Settings is open (DESIGN §3); the
        # pages' work stops and the dialogs they opened close unanswered.
        for page in self._pages.values():
            page.close_page()
        super().done(result)

    # -- slots --------------------------------------------------------------------------------

    def _on_save_button_clicked(self) -> None:
        self._tasks.spawn(self.save(), self.tr("The settings were not saved."))

    def _on_page_saved(self) -> None:
        self.settings_saved.emit()

    def _on_page_changed(self) -> None:
        if self.is_modified():
            self._set_status("", lambda: self.tr("Unsaved changes"))
        elif self._status is not None and self._status[0] == "":
            self._status = None
            self._render_status()

    def _on_general_page_value_changed(self, key: str) -> None:
        if key == "ui.language":
            self.persona_page.refresh_defaults()

    def _chosen_language(self) -> Language:
        # The language picked on the General page, even before it is saved.
        return ui_language(str(self.general_page.value("ui.language")))

    def _on_task_failed(self, failure: str, error: BaseException) -> None:
        if shiboken6.isValid(self):  # work that ended after the dialog was deleted
            self._set_status("error", lambda: failure_text(failure, error))

    def _set_status(self, state: str, text: TextFactory) -> None:
        self._status = (state, text)
        self._render_status()

    def _render_status(self) -> None:
        if self._status is None:
            self.status_label.clear()
            set_state(self.status_label, "")
            return
        state, text = self._status
        self.status_label.setText(text())
        set_state(self.status_label, state)
