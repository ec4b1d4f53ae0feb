"""The Sync page: set up end-to-end encrypted sync with the user's other devices (DESIGN §11).

Off by default. To turn it on the user chooses where the sync files go — a folder that a sync
service keeps in step (Syncthing, Dropbox, OneDrive, iCloud, a Nextcloud client, a USB stick)
or a WebDAV server (坚果云, Nextcloud) — and a passphrase, typed twice. *Turn on sync* checks
that the folder opens with the passphrase (a new folder is set up with it), keeps the passphrase
and the WebDAV password in the keyring and runs the first pass: it takes effect at once, as
*Turn off* does. While sync is on the page shows where it syncs, the last and the next pass,
the other devices, local changes not yet sent, conflicts, skipped files and errors in plain
words (``ui/sync_text.py``), and offers *Sync now*. The device's name is a setting like the
others: Save writes it.

The passes themselves run in ``services/sync_runner.py``, off the event loop; the page follows
them through the change hub (``SyncStatusChanged``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QLocale, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.changes import DataChange, Layer
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.settings.schema import spec_for
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.sync.state import default_device_name
from etos_desktop.ui import dialogs
from etos_desktop.ui.error_text import describe
from etos_desktop.ui.job_text import local_time
from etos_desktop.ui.settings.page import (
    SettingsPage,
    VerticalScrollArea,
    error_label,
    help_label,
    plain_label,
    row,
    schema_tr,
    set_state,
    stacked,
)
from etos_desktop.ui.sync_text import skipped_reason_text, stored_sync_error_text, sync_error_words

if TYPE_CHECKING:
    from etos_desktop.core.sync.service import SkippedFile
    from etos_desktop.services.sync_runner import SyncLocation, SyncRunner, SyncStatus
    from etos_desktop.ui.changes_bridge import ChangesBridge

#: A device id (a device that has not named itself yet is shown by its id's start).
_DEVICE_ID = re.compile(r"[0-9a-f]{32}")
#: The most skipped files named one by one (the rest are counted).
_SKIPPED_SHOWN = 5


class SyncPage(SettingsPage):
    """Settings → Sync: set sync up, see how it goes, sync now, turn it off.

    Args:
        sync: The app's sync runner.
        settings: The settings store (``sync.*``).
        changes: The app's change bridge (the page follows ``SyncStatusChanged``).
        parent: The parent widget.

    Signals:
        status_shown(): the page shows the runner's status anew (after each change of it).
    """

    status_shown = Signal()

    def __init__(
        self,
        sync: SyncRunner,
        settings: SettingsStore,
        *,
        changes: ChangesBridge | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("syncPage")
        self._sync = sync
        self._settings = settings
        self._setup_error: EtosError | None = None
        self._passphrase_error: EtosError | None = None

        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = VerticalScrollArea(self)
        content = QWidget(scroll)
        column = QVBoxLayout(content)
        scroll.setWidget(content)
        outer.addWidget(scroll, 1)
        outer.addWidget(self.status_label)

        self.intro_label = help_label(content)
        column.addWidget(self.intro_label)

        # -- how it goes (sync on) ---------------------------------------------------------------
        self.status_box = QGroupBox(content)
        self.status_box.setObjectName("syncStatusBox")
        status_layout = QVBoxLayout(self.status_box)
        self.state_label = plain_label(self.status_box)
        self.state_label.setObjectName("syncState")
        self.progress = QProgressBar(self.status_box)
        self.progress.setObjectName("syncProgress")
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(8)
        self.progress.hide()
        status_layout.addWidget(self.state_label)
        status_layout.addWidget(self.progress)
        facts = QFormLayout()
        facts.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        facts.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.where_caption = QLabel(self.status_box)
        # A path or an address may be one long word: a read-only field scrolls it.
        self.where_field = QLineEdit(self.status_box)
        self.where_field.setObjectName("syncWhere")
        self.where_field.setReadOnly(True)
        facts.addRow(self.where_caption, self.where_field)
        self._facts: dict[str, tuple[QLabel, QLabel]] = {}
        for name in ("last", "next", "devices", "pending", "conflicts", "skipped"):
            caption = QLabel(self.status_box)
            value = plain_label(self.status_box)
            value.setObjectName(f"sync:{name}")
            facts.addRow(caption, value)
            self._facts[name] = (caption, value)
        status_layout.addLayout(facts)

        self.again_box = QWidget(self.status_box)
        again_form = QFormLayout(self.again_box)
        again_form.setContentsMargins(0, 0, 0, 0)
        again_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.again_caption = QLabel(self.again_box)
        self.again_edit = _secret_field(self.again_box, "syncPassphraseAgain")
        self.again_button = QPushButton(self.again_box)
        self.again_button.setObjectName("syncUsePassphraseButton")
        self.again_button.clicked.connect(self._on_again_button_clicked)
        self.again_error = error_label(self.again_box)
        again_form.addRow(
            self.again_caption,
            stacked(
                self.again_box,
                row(self.again_box, self.again_edit, self.again_button),
                self.again_error,
            ),
        )
        status_layout.addWidget(self.again_box)

        self.sync_now_button = QPushButton(self.status_box)
        self.sync_now_button.setObjectName("syncNowButton")
        self.sync_now_button.clicked.connect(self._on_sync_now_button_clicked)
        self.turn_off_button = QPushButton(self.status_box)
        self.turn_off_button.setObjectName("syncTurnOffButton")
        self.turn_off_button.clicked.connect(self._on_turn_off_button_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.sync_now_button)
        buttons.addWidget(self.turn_off_button)
        buttons.addStretch(1)
        status_layout.addLayout(buttons)
        self.change_help = help_label(self.status_box)
        status_layout.addWidget(self.change_help)
        column.addWidget(self.status_box)

        # -- setting it up (sync off) ------------------------------------------------------------
        self.setup_box = QGroupBox(content)
        self.setup_box.setObjectName("syncSetupBox")
        form = QFormLayout(self.setup_box)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.kind_caption = QLabel(self.setup_box)
        self.kind_combo = QComboBox(self.setup_box)
        self.kind_combo.setObjectName("syncKind")
        self.kind_combo.addItem("", "folder")
        self.kind_combo.addItem("", "webdav")
        self.kind_help = help_label(self.setup_box)
        form.addRow(self.kind_caption, stacked(self.setup_box, self.kind_combo, self.kind_help))

        self.folder_caption = QLabel(self.setup_box)
        self.folder_edit = QLineEdit(self.setup_box)
        self.folder_edit.setObjectName("syncFolderEdit")
        self.choose_button = QPushButton(self.setup_box)
        self.choose_button.setObjectName("syncChooseFolderButton")
        self.choose_button.clicked.connect(self._on_choose_button_clicked)
        self.folder_error = error_label(self.setup_box)
        self.folder_row = stacked(
            self.setup_box,
            row(self.setup_box, self.folder_edit, self.choose_button),
            self.folder_error,
        )
        form.addRow(self.folder_caption, self.folder_row)

        self.url_caption = QLabel(self.setup_box)
        self.url_edit = QLineEdit(self.setup_box)
        self.url_edit.setObjectName("syncUrlEdit")
        self.url_edit.setMaxLength(int(spec_for("sync.webdav_url").maximum or 2048))
        self.url_error = error_label(self.setup_box)
        self.url_row = stacked(self.setup_box, self.url_edit, self.url_error)
        form.addRow(self.url_caption, self.url_row)
        self.user_caption = QLabel(self.setup_box)
        self.user_edit = QLineEdit(self.setup_box)
        self.user_edit.setObjectName("syncUserEdit")
        self.user_edit.setMaxLength(int(spec_for("sync.webdav_user").maximum or 256))
        form.addRow(self.user_caption, self.user_edit)
        self.password_caption = QLabel(self.setup_box)
        self.password_edit = _secret_field(self.setup_box, "syncPasswordEdit")
        self.password_help = help_label(self.setup_box)
        self.password_row = stacked(self.setup_box, self.password_edit, self.password_help)
        form.addRow(self.password_caption, self.password_row)

        self.passphrase_caption = QLabel(self.setup_box)
        self.passphrase_edit = _secret_field(self.setup_box, "syncPassphraseEdit")
        self.passphrase_error = error_label(self.setup_box)
        form.addRow(
            self.passphrase_caption,
            stacked(self.setup_box, self.passphrase_edit, self.passphrase_error),
        )
        self.confirm_caption = QLabel(self.setup_box)
        self.confirm_edit = _secret_field(self.setup_box, "syncConfirmEdit")
        self.passphrase_help = help_label(self.setup_box)
        form.addRow(
            self.confirm_caption, stacked(self.setup_box, self.confirm_edit, self.passphrase_help)
        )
        self.setup_error_label = error_label(self.setup_box)
        self.setup_error_label.setObjectName("syncSetupError")
        self.turn_on_button = QPushButton(self.setup_box)
        self.turn_on_button.setObjectName("syncTurnOnButton")
        self.turn_on_button.clicked.connect(self._on_turn_on_button_clicked)
        form.addRow(self.setup_error_label)
        form.addRow(row(self.setup_box, self.turn_on_button, stretch=True))
        column.addWidget(self.setup_box)

        # -- this device ---------------------------------------------------------------------------
        self.device_box = QGroupBox(content)
        self.device_box.setObjectName("syncDeviceBox")
        device_form = QFormLayout(self.device_box)
        device_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        device_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.name_caption = QLabel(self.device_box)
        self.name_edit = QLineEdit(self.device_box)
        self.name_edit.setObjectName("setting:sync.device_name")
        self.name_edit.setMaxLength(int(spec_for("sync.device_name").maximum or 64))
        self.name_edit.setText(settings.get_str("sync.device_name"))
        self.name_edit.setPlaceholderText(default_device_name())
        self.name_edit.textChanged.connect(lambda _text: self.changed.emit())
        self.name_help = help_label(self.device_box)
        device_form.addRow(
            self.name_caption, stacked(self.device_box, self.name_edit, self.name_help)
        )
        column.addWidget(self.device_box)
        column.addStretch(1)

        self._fill_setup(sync.status().location)
        self.kind_combo.currentIndexChanged.connect(self._on_kind_combo_current_index_changed)
        if changes is not None:
            changes.changed.connect(self._on_changes_changed)
        self.retranslate()

    # -- texts --------------------------------------------------------------------------------

    def retranslate(self) -> None:
        self.intro_label.setText(
            self.tr(
                "Keep your memories the same on your other computers. Each device writes its "
                "own encrypted files into a folder that a sync service keeps in step, or onto a "
                "WebDAV server; the folder or the server sees only encrypted data."
            )
        )
        self.status_box.setTitle(self.tr("Sync"))
        self.setup_box.setTitle(self.tr("Set up sync"))
        self.device_box.setTitle(self.tr("This device"))
        self.where_caption.setText(self.tr("Syncs with"))
        for name, text in (
            ("last", self.tr("Last sync")),
            ("next", self.tr("Next sync")),
            ("devices", self.tr("Other devices")),
            ("pending", self.tr("Not sent yet")),
            ("conflicts", self.tr("Conflicts")),
            ("skipped", self.tr("Files skipped")),
        ):
            self._facts[name][0].setText(text)
        self.again_caption.setText(self.tr("Passphrase"))
        self.again_button.setText(self.tr("Use this passphrase"))
        self.sync_now_button.setText(self.tr("Sync now"))
        self.turn_off_button.setText(self.tr("Turn off…"))
        self.change_help.setText(
            self.tr(
                "The passphrase is kept in this computer's keyring and is the same on every "
                "device. It cannot be changed for a folder in use: to use another, turn sync off "
                "on every device and set it up again with a new, empty folder."
            )
        )
        self.kind_caption.setText(self.tr("Where"))
        self.kind_combo.setItemText(0, self.tr("A folder"))
        self.kind_combo.setItemText(1, self.tr("A WebDAV server"))
        self.kind_help.setText(
            self.tr(
                "A folder that Syncthing, Dropbox, OneDrive, iCloud or a Nextcloud client keeps "
                "the same on your computers (or a USB stick), or a folder on a WebDAV server "
                "such as Jianguoyun or Nextcloud."
            )
        )
        self.folder_caption.setText(self.tr("Folder"))
        self.choose_button.setText(self.tr("Choose…"))
        self.folder_edit.setToolTip(schema_tr(spec_for("sync.folder").description))
        self.url_caption.setText(self.tr("Address"))
        self.url_edit.setPlaceholderText("https://dav.jianguoyun.com/dav/ETOS/")
        self.url_edit.setToolTip(schema_tr(spec_for("sync.webdav_url").description))
        self.user_caption.setText(self.tr("User"))
        self.user_edit.setToolTip(schema_tr(spec_for("sync.webdav_user").description))
        self.password_caption.setText(self.tr("Password"))
        self.password_help.setText(
            self.tr(
                "Kept in the system keyring. Jianguoyun and Nextcloud give an app password for "
                "this in their security settings."
            )
        )
        self.passphrase_caption.setText(self.tr("Passphrase"))
        self.confirm_caption.setText(self.tr("Passphrase again"))
        self.passphrase_help.setText(
            self.tr(
                "Everything is encrypted with it before it leaves this computer. Use the same "
                "one on every device: at least 8 characters, a few unrelated words are best. "
                "It is kept in the keyring and cannot be recovered, so write it down."
            )
        )
        self.turn_on_button.setText(self.tr("Turn on sync"))
        self.name_caption.setText(self.tr("Device name"))
        self.name_help.setText(schema_tr(spec_for("sync.device_name").description))
        self.name_edit.setToolTip(schema_tr(spec_for("sync.device_name").description))
        self._render()
        self._render_status()

    # -- Save ---------------------------------------------------------------------------------

    def is_modified(self) -> bool:
        return self.name_edit.text().strip() != self._settings.get_str("sync.device_name")

    def apply(self) -> None:
        self._settings.set("sync.device_name", self.name_edit.text().strip())

    # -- what it shows ------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._render()

    def _on_changes_changed(self, change: DataChange) -> None:
        if change.touches(Layer.SYNC, Layer.JOBS) and self._alive:
            self._render()

    def _render(self) -> None:
        status = self._sync.status()
        on = status.enabled
        self.status_box.setVisible(on)
        self.setup_box.setVisible(not on)
        self._render_setup()
        if on:
            self._render_on(status)
        self._update_actions()
        self.status_shown.emit()

    def _render_on(self, status: SyncStatus) -> None:
        state, text = self._state_text(status)
        self.state_label.setText(text)
        set_state(self.state_label, state)
        self.progress.setVisible(status.running)
        done, total = (status.progress[1], status.progress[2]) if status.progress else (0, 0)
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
        else:
            self.progress.setRange(0, 0)  # busy: the service does not say how far
        self.where_field.setText(_where(status.location))
        locale = QLocale()
        facts = self._facts
        facts["last"][1].setText(local_time(status.last_success_at, never=self.tr("Never")))
        facts["next"][1].setText(
            self.tr("Now")
            if status.running
            else local_time(status.next_pass_at, never=self.tr("When the passphrase is entered"))
            if status.needs_passphrase
            else local_time(status.next_pass_at, never=self.tr("After the next change"))
        )
        if status.devices:
            devices = ", ".join(sorted(map(_device_name, status.devices), key=str.casefold))
        elif status.report is not None:
            devices = self.tr(
                "None yet: set sync up on your other devices with the same folder and passphrase."
            )
        else:
            devices = "…"
        facts["devices"][1].setText(devices)
        facts["pending"][1].setText(
            self.tr("%n local changes", "", status.pending) if status.pending else self.tr("None")
        )
        facts["conflicts"][1].setText(
            self.tr(
                "%n merged since the app started; the other versions are in those memories' "
                "histories",
                "",
                status.conflicts,
            )
            if status.conflicts
            else self.tr("None")
        )
        skipped = status.report.skipped if status.report is not None else []
        facts["skipped"][1].setText(self._skipped_text(skipped, locale) if skipped else "—")
        set_state(facts["skipped"][1], "warning" if skipped else "")
        self.again_box.setVisible(bool(status.needs_passphrase))
        if self._passphrase_error is not None:
            self.again_error.setText(describe(self._passphrase_error).message)
            self.again_error.show()
        else:
            self.again_error.hide()

    def _state_text(self, status: SyncStatus) -> tuple[str, str]:
        if status.running:
            stage = self._stage_text(status.progress)
            if stage:
                if status.first_pass:
                    return "", self.tr("First sync: {stage}").format(stage=stage)
                return "", stage
            if status.first_pass:
                return "", self.tr(
                    "First sync: sending this device's memories and bringing in the other "
                    "devices'. A large store takes a while; the app stays usable."
                )
            return "", self.tr("Syncing…")
        if status.needs_passphrase == "missing":
            return "error", self.tr(
                "The sync passphrase is no longer in this computer's keyring. Enter it again to "
                "go on syncing."
            )
        if status.error is not None:
            return "error", sync_error_words(status.error)
        if status.last_error_code:
            return "error", stored_sync_error_text(status.last_error_code)
        report = status.report
        if report is None:
            return "ok", self.tr("Sync is on.")
        parts = [self.tr("Synced at {time}.").format(time=local_time(status.last_success_at))]
        if report.inserted:
            parts.append(self.tr("%n new memories from other devices.", "", report.inserted))
        if report.updated:
            parts.append(self.tr("%n memories changed on other devices.", "", report.updated))
        if report.deleted:
            parts.append(self.tr("%n memories deleted on other devices.", "", report.deleted))
        arrived = report.inserted + report.updated + report.deleted
        if report.exported:
            parts.append(self.tr("Sent: %n changes of this device.", "", report.exported))
        if report.held_back:
            parts.append(
                self.tr(
                    "%n memories from other devices were not taken: they break this device's "
                    "limits (the details are in the log).",
                    "",
                    len(report.held_back),
                )
            )
        if not arrived and not report.exported:
            parts.append(self.tr("Everything was already the same."))
        return ("warning" if report.skipped or report.held_back else "ok"), " ".join(parts)

    def _stage_text(self, progress: tuple[str, int, int] | None) -> str:
        """What the running pass does, when the service says (else "")."""
        if progress is None:
            return ""
        stage, done, total = progress
        locale = QLocale()
        if stage == "merging" and total:
            return self.tr("Bringing in the other devices' files: {done} of {total}…").format(
                done=locale.toString(done), total=locale.toString(total)
            )
        return {
            "reading": self.tr("Reading this device's memories…"),
            "publishing": self.tr("Sending this device's changes…"),
            "merging": self.tr("Bringing in the other devices' files…"),
            "writing": self.tr("Writing what arrived…"),
            "compacting": self.tr("Tidying the sync folder…"),
        }.get(stage, "")

    def _render_setup(self) -> None:
        folder = self._folder_chosen()
        for widget in (self.folder_caption, self.folder_row):
            widget.setVisible(folder)
        for widget in (
            self.url_caption,
            self.url_row,
            self.user_caption,
            self.user_edit,
            self.password_caption,
            self.password_row,
        ):
            widget.setVisible(not folder)
        if self._setup_error is not None:
            self.setup_error_label.setText(describe(self._setup_error).message)
            self.setup_error_label.show()
        else:
            self.setup_error_label.hide()

    def _fill_setup(self, location: SyncLocation) -> None:
        self.kind_combo.setCurrentIndex(max(self.kind_combo.findData(location.transport), 0))
        self.folder_edit.setText(location.folder)
        self.url_edit.setText(location.url)
        self.user_edit.setText(location.user)

    def _update_actions(self) -> None:
        status = self._sync.status()
        idle = not self._busy and not status.running
        self.sync_now_button.setEnabled(idle and not status.needs_passphrase)
        self.turn_off_button.setEnabled(idle)
        self.turn_on_button.setEnabled(not self._busy)
        self.choose_button.setEnabled(not self._busy)
        self.again_button.setEnabled(idle)

    def _skipped_text(self, skipped: Sequence[SkippedFile], locale: QLocale) -> str:
        lines = [self.tr("%n files could not be used:", "", len(skipped))]
        for item in skipped[:_SKIPPED_SHOWN]:
            name = f"{item.device[:8]}…/{item.name}" if item.name else item.device[:8] or "—"
            lines.append(f"• {name}: {skipped_reason_text(item.reason, item.retried)}")
        if len(skipped) > _SKIPPED_SHOWN:
            lines.append(
                self.tr("and {count} more").format(
                    count=locale.toString(len(skipped) - _SKIPPED_SHOWN)
                )
            )
        return "\n".join(lines)

    # -- actions ------------------------------------------------------------------------------

    def _on_kind_combo_current_index_changed(self, _index: int) -> None:
        self._render_setup()

    def _folder_chosen(self) -> bool:
        return self.kind_combo.currentData() == "folder"

    def _on_choose_button_clicked(self) -> None:
        self.spawn(self._choose_folder(), self.tr("No folder was chosen."))

    async def _choose_folder(self) -> None:
        folder = await dialogs.choose_folder(
            self, self.tr("Choose the sync folder"), self.folder_edit.text().strip()
        )
        if folder:
            self.folder_edit.setText(folder)
            self.folder_error.hide()

    def _on_turn_on_button_clicked(self) -> None:
        if self._check_setup():
            self.start(self._turn_on(), self.tr("Sync was not turned on."))

    def _check_setup(self) -> bool:
        """Mark what is missing or does not match; True when the setup can be tried."""
        ok = True
        for label in (self.folder_error, self.url_error, self.passphrase_error):
            label.hide()
        self._setup_error = None
        self._render_setup()
        if self._folder_chosen() and not self.folder_edit.text().strip():
            self._mark(self.folder_error, self.tr("Choose the sync folder."))
            ok = False
        if not self._folder_chosen() and not self.url_edit.text().strip():
            self._mark(self.url_error, self.tr("Enter the address of the folder on the server."))
            ok = False
        passphrase = self.passphrase_edit.text()
        from etos_desktop.services.sync_runner import MIN_PASSPHRASE

        if len(passphrase) < MIN_PASSPHRASE:
            self._mark(
                self.passphrase_error,
                self.tr("The passphrase needs at least {count} characters.").format(
                    count=MIN_PASSPHRASE
                ),
            )
            ok = False
        elif passphrase != self.confirm_edit.text():
            self._mark(self.passphrase_error, self.tr("The two passphrases are not the same."))
            ok = False
        return ok

    def _mark(self, label: QLabel, text: str) -> None:
        label.setText(text)
        label.show()

    def _location(self) -> SyncLocation:
        from etos_desktop.services.sync_runner import SyncLocation

        if self._folder_chosen():
            return SyncLocation("folder", folder=self.folder_edit.text().strip())
        return SyncLocation(
            "webdav", url=self.url_edit.text().strip(), user=self.user_edit.text().strip()
        )

    async def _turn_on(self) -> None:
        try:
            await self._sync.set_up(
                self._location(),
                self.passphrase_edit.text(),
                webdav_password="" if self._folder_chosen() else self.password_edit.text(),
                device_name=self.name_edit.text(),
            )
        except InvalidInput as exc:
            self._show_invalid(exc)
            return
        except EtosError as exc:
            # Nothing was stored, and sync stays off: the fields keep what was typed.
            self._setup_error = exc
            self._render()
            return
        for field in (self.passphrase_edit, self.confirm_edit, self.password_edit):
            field.clear()
        self._setup_error = None
        # The device name typed here is saved now: the dialog's "Unsaved changes" goes.
        self.changed.emit()
        self._render()

    def _show_invalid(self, error: InvalidInput) -> None:
        key, reason = error.params.get("key"), error.params.get("reason")
        if key == "sync.folder":
            self._mark(
                self.folder_error,
                self.tr("This folder does not exist. Choose an existing folder.")
                if reason == "not_a_folder"
                else self.tr("Choose the sync folder."),
            )
        elif key == "sync.webdav_url":
            self._mark(
                self.url_error,
                self.tr(
                    "The address starts with https:// (or http://) and holds no user name or "
                    "password: those go in their own fields."
                ),
            )
        else:
            self._setup_error = error
            self._render_setup()

    def _on_sync_now_button_clicked(self) -> None:
        self.start(self._sync.sync_now(), self.tr("Sync did not run."))

    def _on_turn_off_button_clicked(self) -> None:
        self.start(self._turn_off(), self.tr("Sync was not turned off."))

    async def _turn_off(self) -> None:
        if not await dialogs.confirm(
            self,
            self.tr("Turn sync off"),
            self.tr(
                "This device stops syncing, and the sync passphrase is removed from its keyring. "
                "Nothing is deleted: your memories stay here, and the sync folder keeps its "
                "files for your other devices."
            ),
            self.tr("Turn off"),
        ):
            return
        await self._sync.turn_off()
        self._fill_setup(self._sync.status().location)
        self._render()

    def _on_again_button_clicked(self) -> None:
        self.start(self._use_passphrase(), self.tr("The passphrase was not changed."))

    async def _use_passphrase(self) -> None:
        self._passphrase_error = None
        try:
            await self._sync.use_passphrase(self.again_edit.text())
        except EtosError as exc:
            self._passphrase_error = exc
        else:
            self.again_edit.clear()
        self._render()


def _secret_field(parent: QWidget, name: str) -> QLineEdit:
    field = QLineEdit(parent)
    field.setObjectName(name)
    field.setEchoMode(QLineEdit.EchoMode.Password)
    return field


def _where(location: SyncLocation) -> str:
    if location.transport == "folder":
        return location.folder
    return f"{location.url} ({location.user})" if location.user else location.url


def _device_name(name: str) -> str:
    # A device that has not said its name yet is known by its id (32 hex digits).
    return f"{name[:8]}…" if _DEVICE_ID.fullmatch(name) else name
