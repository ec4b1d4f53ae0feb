"""Sync in the running app (DESIGN §11): when passes run, one at a time, off the event loop.

What a pass does is ``core/sync/service.py``'s business (:meth:`SyncService.sync_once`); this
service decides *when* one runs and keeps what Settings → Sync shows:

* at start-up (once the window is shown and the services are up), when sync is on;
* :data:`DEBOUNCE` after a local change published on the change hub (memories, summaries, the
  profile), pushed back by each further change but never beyond :data:`MAX_DEBOUNCE` after the
  first one, so a burst of edits makes one pass;
* every :data:`INTERVAL` after the last pass, to bring in the other devices' changes;
* when the user asks (Settings → Sync → Sync now).

Passes run one at a time on this service's own worker thread (a pass derives the key with
scrypt, reads and writes files, and waits for the DB thread), so the event loop never waits on
one. A pass asked for while one runs follows it. Every run is recorded in its ``JobRunRow``
(``JobName.SYNC``, ``services/runs.py``), so the last sync time outlives the app. After a pass
that brought other devices' changes, ``MemoriesChanged`` (``reason`` ``SYNCED``, ``source``
``"sync"``) — and, when files were merged, ``SummariesChanged`` and ``ProfileChanged`` — are
published, so open pages and the chat's memory view refresh; the memories that arrived are
embedded in the background. Each change of what Settings → Sync shows is published as
``SyncStatusChanged``.

The passphrase and the WebDAV password are read from and written to the keyring
(``core/sync/secrets.py``) on the worker thread, never logged or kept in a file. Qt-free.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final, TypeVar

from etos_desktop.core.changes import (
    ChangeHub,
    DataChange,
    MemoriesChanged,
    MemoryChange,
    ProfileChanged,
    SummariesChanged,
    SyncStatusChanged,
)
from etos_desktop.core.clock import Clock
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.jobs import JobName
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.database import Database
from etos_desktop.core.sync import state
from etos_desktop.core.sync.crypto import KdfParams
from etos_desktop.core.sync.errors import SyncTransportError, WrongPassphrase
from etos_desktop.core.sync.secrets import SyncPassphrase, WebDavPassword
from etos_desktop.core.sync.service import SyncReport, SyncService
from etos_desktop.core.sync.transport import FolderTransport, Transport, WebDavTransport
from etos_desktop.services.runs import RunRecorder
from etos_desktop.services.scheduler import JobScheduler

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long after a local change the pass that publishes it runs.
DEBOUNCE: Final = timedelta(seconds=10)
#: The longest a burst of changes puts that pass off.
MAX_DEBOUNCE: Final = timedelta(minutes=1)
#: Time between passes that bring in the other devices' changes.
INTERVAL: Final = timedelta(minutes=5)
#: The scheduler's id of the pass after local changes (and at start-up).
SOON_JOB: Final = "sync:soon"
#: The scheduler's id of the periodic pass (the job's name: Settings shows its next run).
PERIODIC_JOB: Final = JobName.SYNC.value
#: The ``source`` of the changes a pass publishes (never a reason for another pass).
SYNC_SOURCE: Final = "sync"
#: The shortest passphrase accepted (it is the only thing between the files and a guesser).
MIN_PASSPHRASE: Final = 8
#: The settings the running service is built from.
LOCATION_KEYS: Final = (
    "sync.transport",
    "sync.folder",
    "sync.webdav_url",
    "sync.webdav_user",
    "sync.device_name",
)


@dataclass(frozen=True)
class SyncLocation:
    """Where the sync files are: a folder on this computer or a folder on a WebDAV server.

    Attributes:
        transport: ``"folder"`` or ``"webdav"``.
        folder: The folder's path (``transport == "folder"``).
        url: The WebDAV folder's URL (``transport == "webdav"``).
        user: The WebDAV user (empty: no login).
    """

    transport: str
    folder: str = ""
    url: str = ""
    user: str = ""

    @classmethod
    def from_settings(cls, settings: SettingsStore) -> SyncLocation:
        """The location the settings hold."""
        return cls(
            settings.get_str("sync.transport"),
            settings.get_str("sync.folder"),
            settings.get_str("sync.webdav_url"),
            settings.get_str("sync.webdav_user"),
        )

    def check(self) -> None:
        """Refuse a location that cannot work.

        Raises:
            InvalidInput: ``key`` ``"sync.folder"`` (``reason`` ``"missing"`` or
                ``"not_a_folder"``) or ``"sync.webdav_url"`` (``"missing"`` or ``"not_http"``).
        """
        if self.transport == "folder":
            if not self.folder.strip():
                raise InvalidInput("no sync folder", key="sync.folder", reason="missing")
            if not Path(self.folder).expanduser().is_dir():
                raise InvalidInput(
                    "the sync folder is not a folder", key="sync.folder", reason="not_a_folder"
                )
            return
        url = self.url.strip()
        if not url:
            raise InvalidInput("no WebDAV address", key="sync.webdav_url", reason="missing")
        if not url.lower().startswith(("http://", "https://")) or "@" in url.split("/")[2:3][0]:
            raise InvalidInput(
                "a WebDAV address starts with https:// and holds no password",
                key="sync.webdav_url",
                reason="not_http",
            )


@dataclass(frozen=True)
class SyncStatus:
    """What Settings → Sync shows.

    Attributes:
        enabled: Sync is on.
        location: Where it syncs (also when off: what was set up last).
        device_name: What the other devices call this one.
        running: A pass runs now.
        first_pass: The running pass is the first after setting sync up (it sends and
            receives everything).
        last_success_at: When a pass last ended well (also from before this start).
        report: What the last pass that ended well did (``None``: none since start-up).
        error: Why the last pass failed (``None``: it did not).
        last_error_code: The recorded error of the last failed run, when it failed before
            this start and no pass ran since (``error_text`` form, e.g.
            ``"sync_transport:unreachable"``).
        needs_passphrase: ``"wrong"`` (the stored passphrase does not open the folder),
            ``"missing"`` (none is stored) or ``""``; automatic passes wait for one.
        pending: Local changes made since the last pass that published (memories, summaries
            and profile changes).
        devices: The other devices' names, from the last pass.
        conflicts: Concurrent changes merged since start-up whose other value is kept in a
            memory's history.
        next_pass_at: When the next automatic pass runs.
        progress: How far the running pass is, ``(stage, done, total)``, when the service
            says (``SyncService.sync_once(progress=…)``; ``total`` 0: unknown).
    """

    enabled: bool
    location: SyncLocation
    device_name: str
    running: bool = False
    first_pass: bool = False
    last_success_at: datetime | None = None
    report: SyncReport | None = None
    error: EtosError | None = None
    last_error_code: str | None = None
    needs_passphrase: str = ""
    pending: int = 0
    devices: tuple[str, ...] = ()
    conflicts: int = 0
    next_pass_at: datetime | None = None
    progress: tuple[str, int, int] | None = None


@dataclass
class _PassOutcome:
    """One pass for the run recorder: its report, or why it failed."""

    report: SyncReport | None = None
    error: EtosError | None = None
    changed_ids: list[int] = dataclasses.field(default_factory=list)
    #: Only the folder was listed: nothing new there, nothing local to send.
    checked: bool = False


@dataclass
class _Running:
    """The service of the current set-up, with what it was built from."""

    service: SyncService
    transport: Transport
    location: SyncLocation
    device_name: str
    bound: bool = False
    #: The other devices' files before the last full pass (what a periodic pass compares).
    listing: dict[str, tuple[str, ...]] | None = None


class SyncRunner:
    """Runs sync passes in the app: at start-up, after local changes, periodically, on request.

    Runs on the event loop; passes, the keyring and the transports run on its worker thread.
    Touches no Qt object.

    Args:
        db: The open database.
        settings: The ``sync.*`` settings (written when sync is turned on or off).
        secrets: The app's secret store (the keyring, or its 0600 fallback file).
        changes: The app's change hub: local changes are heard there; what a pass changed and
            the sync status are published there.
        scheduler: The scheduler on the running loop (the background jobs' one in the app).
        clock: The clock passes are timed on.
        memory: Long-term memory, whose engine hears what a pass wrote and re-embeds it.
        kdf: scrypt parameters for a folder this device creates (tests use cheap ones).
        webdav_timeout: Seconds for each WebDAV request.
    """

    def __init__(
        self,
        *,
        db: Database,
        settings: SettingsStore,
        secrets: SecretStore,
        changes: ChangeHub,
        scheduler: JobScheduler,
        clock: Clock,
        memory: MemoryAccess | None = None,
        kdf: KdfParams | None = None,
        webdav_timeout: float = 30.0,
    ) -> None:
        self._db = db
        self._settings = settings
        self._passphrase = SyncPassphrase(secrets)
        self._password = WebDavPassword(secrets)
        self._changes = changes
        self.scheduler = scheduler
        self._clock = clock
        self._memory = memory
        self._kdf = kdf
        self._webdav_timeout = webdav_timeout
        self._recorder = RunRecorder(db, clock, changes)
        # One thread: passes never overlap, and shutdown waits for the one running.
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="etos-sync"
        )
        self._in_flight: concurrent.futures.Future[Any] | None = None
        self._lock = asyncio.Lock()
        self._running: _Running | None = None
        self._passing = False
        self._first_pass = False
        self._again = False
        self._soon_since: datetime | None = None
        self._last_success_at: datetime | None = None
        self._last_error_code: str | None = None
        self._report: SyncReport | None = None
        self._error: EtosError | None = None
        self._needs_passphrase = ""
        self._pending_ids: set[int] = set()
        self._pending_other = 0
        self._conflicts = 0
        self._changed_in_pass: list[int] = []
        self._publishing = False
        self._settings_dirty = False
        self._progress: tuple[str, int, int] | None = None
        self._progress_told = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reembed_cancel = threading.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe: list[Callable[[], None]] = []
        self._started = False
        self._closed = False

    def __repr__(self) -> str:
        return f"<SyncRunner enabled={self.enabled} running={self._passing}>"

    # -- state --------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """Whether sync is on."""
        return self._settings.get_bool("sync.enabled")

    def device_name(self) -> str:
        """This device's name: the setting, else the computer's name."""
        return self._settings.get_str("sync.device_name").strip() or state.default_device_name()

    def status(self) -> SyncStatus:
        """What Settings → Sync shows now."""
        return SyncStatus(
            enabled=self.enabled,
            location=SyncLocation.from_settings(self._settings),
            device_name=self.device_name(),
            running=self._passing,
            first_pass=self._passing and self._first_pass,
            last_success_at=self._last_success_at,
            report=self._report,
            error=self._error,
            last_error_code=None if self._error or self._report else self._last_error_code,
            needs_passphrase=self._needs_passphrase,
            pending=len(self._pending_ids) + self._pending_other,
            devices=tuple(self._report.device_names.values()) if self._report else (),
            conflicts=self._conflicts,
            next_pass_at=self.scheduler.run_time(PERIODIC_JOB) if self.enabled else None,
            progress=self._progress if self._passing else None,
        )

    def is_busy(self) -> bool:
        """Whether a pass, or work after one (re-embedding), is running."""
        return self._passing or any(not task.done() for task in self._tasks)

    async def wait_idle(self) -> None:
        """Wait until no pass and no work after one runs (tests, closing)."""
        while self.is_busy():
            if self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
            else:
                async with self._lock:
                    pass

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Follow local changes; when sync is on, run the first pass now (after the window)."""
        if self._started or self._closed:
            return
        self._started = True
        self._unsubscribe.append(self._changes.subscribe(self._on_change))
        self._unsubscribe.append(self._settings.subscribe(self._on_settings_changed, LOCATION_KEYS))
        self._unsubscribe.append(self._settings.subscribe(self._on_any_setting_changed))
        row = await self._recorder.rows.get(JobName.SYNC)
        if row is not None:
            self._last_success_at = row.last_success_at
            if row.last_error_at is not None and (
                row.last_success_at is None or row.last_error_at >= row.last_success_at
            ):
                self._last_error_code = row.last_error
        self.scheduler.start()
        if self.enabled:
            self.scheduler.schedule(SOON_JOB, self._clock.now(), self._scheduled_pass)
        self._publish_status()

    async def shutdown(self) -> None:
        """Stop passes: a running one ends on its thread (never cut in the middle) first."""
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self.scheduler.cancel(SOON_JOB)
        self.scheduler.cancel(PERIODIC_JOB)
        self._reembed_cancel.set()
        # A running pass (its thread and its bookkeeping after it) ends before the DB closes.
        async with self._lock:
            pass
        in_flight = self._in_flight
        if in_flight is not None and not in_flight.done():
            await asyncio.wrap_future(in_flight)
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        running, self._running = self._running, None
        if running is not None:
            await self._on_worker(running.transport.close)
        self._worker.shutdown(wait=False)

    # -- what the user does ---------------------------------------------------------------------

    async def set_up(
        self,
        location: SyncLocation,
        passphrase: str,
        *,
        webdav_password: str = "",
        device_name: str = "",
    ) -> SyncStatus:
        """Turn sync on: check that the folder opens with the passphrase, keep it, run a pass.

        The folder (or server) is reached and its key derived first; a new folder is set up
        with this passphrase. Nothing is stored and sync stays off when that fails. Then the
        passphrase and the password go to the keyring, the location to the settings file, and
        the first pass runs (its outcome is in the returned status).

        Raises:
            InvalidInput: The location cannot work, or the passphrase is too short
                (``key`` ``"sync.passphrase"``, ``reason`` ``"too_short"``).
            WrongPassphrase: The folder was set up with another passphrase.
            SyncFolderInvalid: Its ``sync.json`` cannot be used.
            SyncTransportError: The folder or server could not be reached or written.
            StorageError: The settings file or the keyring's fallback file could not be written.
        """
        location = dataclasses.replace(
            location, folder=location.folder.strip(), url=location.url.strip()
        )
        location.check()
        _check_passphrase(passphrase)
        name = device_name.strip()
        async with self._lock:
            running = await self._open(location, passphrase, webdav_password, name)
            try:
                await self._on_worker(self._store_secrets, passphrase, webdav_password)
                self._write_settings(location, name, enabled=True)
            except BaseException:
                await self._on_worker(running.transport.close)
                raise
            await self._replace(running)
            self._needs_passphrase = ""
            self._error = None
            self._report = None
            self._first_pass = True
        self._publish_status()
        await self._pass()
        return self.status()

    async def use_passphrase(self, passphrase: str) -> SyncStatus:
        """Replace the stored passphrase with one that opens the folder, then run a pass.

        For when the stored one does not open the folder (the folder was set up again with
        another, or it was typed wrong on this device) or none is stored.

        Raises:
            InvalidInput: Sync is off, or the passphrase is too short.
            WrongPassphrase: This one does not open the folder either (nothing changed).
            SyncFolderInvalid, SyncTransportError: As for :meth:`set_up`.
        """
        if not self.enabled:
            raise InvalidInput("sync is off", key="sync.enabled", reason="off")
        _check_passphrase(passphrase)
        location = SyncLocation.from_settings(self._settings)
        async with self._lock:
            password = await self._on_worker(self._password.get) or ""
            running = await self._open(
                location, passphrase, password, self._settings.get_str("sync.device_name")
            )
            try:
                await self._on_worker(self._passphrase.set, passphrase)
            except BaseException:
                await self._on_worker(running.transport.close)
                raise
            await self._replace(running)
            self._needs_passphrase = ""
            self._error = None
        self._publish_status()
        await self._pass()
        return self.status()

    async def sync_now(self) -> SyncStatus:
        """Run a pass now (after the one running, if any); its outcome is in the status."""
        await self._pass()
        return self.status()

    async def turn_off(self) -> SyncStatus:
        """Turn sync off on this device: no more passes; the passphrase leaves the keyring.

        Nothing is deleted: the memories stay, and so do the files in the sync folder (the
        other devices still use them). The location is kept in the settings to be offered
        again. A running pass ends first.
        """
        async with self._lock:
            self.scheduler.cancel(SOON_JOB)
            self.scheduler.cancel(PERIODIC_JOB)
            self._write_settings(
                SyncLocation.from_settings(self._settings),
                self._settings.get_str("sync.device_name"),
                enabled=False,
            )
            await self._replace(None)
            await self._on_worker(self._store_secrets, "", "")
            await self._recorder.rows.set_next(JobName.SYNC, None)
            self._error = None
            self._report = None
            self._needs_passphrase = ""
            self._pending_ids.clear()
            self._pending_other = 0
            self._soon_since = None
        self._publish_status()
        return self.status()

    # -- passes -------------------------------------------------------------------------------

    async def _scheduled_pass(self) -> None:
        if self._lock.locked():
            # One is running: another follows it, for what changed meanwhile.
            self._again = True
            return
        await self._pass()

    async def _periodic_pass(self) -> None:
        if self._lock.locked():
            self._again = True
            return
        await self._pass(periodic=True)

    def _quiet(self) -> bool:
        """Whether nothing local waits and the last pass left nothing to try again."""
        report = self._report
        return (
            report is not None
            and self._error is None
            and not self._needs_passphrase
            and not self._pending_ids
            and not self._pending_other
            and not self._settings_dirty
            and not any(skipped.retried for skipped in report.skipped)
        )

    async def _pass(self, *, periodic: bool = False) -> None:
        async with self._lock:
            if self._closed or not self.enabled:
                return
            # A periodic pass with nothing local to send and no new file in the folder since
            # the last pass only lists the folder: a full pass re-reads every memory and the
            # whole document (at 5,000 memories a side, 16 s of work and a 1.5 s stall of
            # the UI loop in pycrdt, tests/bench/sync_stall.py), for nothing.
            may_skip = periodic and self._quiet()
            if not may_skip:
                self._settings_dirty = False
            self.scheduler.cancel(SOON_JOB)
            self._soon_since = None
            self._again = False
            self._passing = True
            self._progress = None
            self._loop = asyncio.get_running_loop()
            self._publish_status()
            pending_ids, pending_other = set(self._pending_ids), self._pending_other
            outcome: _PassOutcome | None = None
            try:
                running = await self._current()
                if running is not None:
                    outcome = await self._recorder.run(
                        JobName.SYNC, lambda: self._on_worker(self._run_pass, running, may_skip)
                    )
            except EtosError as exc:  # the keyring's fallback file could not be read
                outcome = _PassOutcome(error=exc)
            finally:
                self._passing = False
            if outcome is not None:
                self._after_pass(outcome, pending_ids, pending_other)
            await self._schedule_periodic()
        self._publish_status()
        if self._again and not self._closed:
            self._again = False
            self._schedule_soon(at_once=True)

    def _run_pass(self, running: _Running, may_skip: bool = False) -> _PassOutcome:
        """One pass, on the worker thread (``may_skip``: only if the folder has new files)."""
        self._changed_in_pass = []
        try:
            location = running.location
            if location.transport == "folder" and not Path(location.folder).expanduser().is_dir():
                # A sync service's folder that vanished (a drive not mounted) is not set up
                # again from scratch: that would start a second, empty sync folder.
                raise SyncTransportError(
                    "the sync folder is missing", reason="missing", path=location.folder
                )
            if not running.bound:
                folder_id = str(running.service.key().folder_id)
                self._db.call(functools.partial(_bind, folder_id=folder_id))
                running.bound = True
            listing = self._listing(running)
            if may_skip and listing is not None and listing == running.listing:
                return _PassOutcome(checked=True)
            sync_once: Any = running.service.sync_once
            if "progress" in inspect.signature(sync_once).parameters:
                report = sync_once(progress=self._on_progress)
            else:
                report = sync_once()
        except EtosError as exc:
            return _PassOutcome(error=exc)
        # Taken before the pass: a file that arrived during it makes the next listing differ.
        running.listing = listing
        return _PassOutcome(report=report, changed_ids=list(self._changed_in_pass))

    def _listing(self, running: _Running) -> dict[str, tuple[str, ...]] | None:
        """The other devices' file names in the folder (``None``: it could not be listed)."""
        own = self._report.device_id if self._report is not None else ""
        transport = running.transport
        try:
            return {
                device: tuple(transport.files(device))
                for device in transport.devices()
                if device != own
            }
        except EtosError:
            return None

    def _after_pass(self, outcome: _PassOutcome, pending_ids: set[int], pending_other: int) -> None:
        if outcome.checked:
            # Nothing new anywhere: in step as of now.
            self._last_success_at = self._clock.now()
            return
        if outcome.error is not None:
            self._error = outcome.error
            if isinstance(outcome.error, WrongPassphrase):
                self._needs_passphrase = "wrong"
            log.info("sync pass failed: %s %s", outcome.error.code, outcome.error.params)
            return
        report = outcome.report
        assert report is not None
        self._report = report
        self._error = None
        self._first_pass = False
        self._last_success_at = self._clock.now()
        self._conflicts += report.conflicts
        self._pending_ids -= pending_ids
        self._pending_other = max(0, self._pending_other - pending_other)
        log.info(
            "sync pass: published %s, applied %d files, %d in, %d changed, %d deleted, %d skipped",
            report.published or "nothing",
            report.applied,
            report.inserted,
            report.updated,
            report.deleted,
            len(report.skipped),
        )
        self._publishing = True
        try:
            if outcome.changed_ids:
                ids = tuple(sorted(set(outcome.changed_ids)))
                self._changes.publish(MemoriesChanged(ids, MemoryChange.SYNCED, SYNC_SOURCE))
            if report.applied:
                # The other layers' parts of the merged files (summaries, the profile) too.
                self._changes.publish(SummariesChanged())
                self._changes.publish(ProfileChanged())
        finally:
            self._publishing = False
        if (report.inserted or report.updated) and self._memory is not None:
            task = asyncio.ensure_future(self._reembed(self._memory))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _reembed(self, memory: MemoryAccess) -> None:
        try:
            embedded = await memory.reembed(cancel=self._reembed_cancel)
        except EtosError as exc:
            # Search finds them by keyword meanwhile; the next re-embedding tries again.
            log.warning("memories that arrived by sync were not embedded: %s", exc.code)
            return
        if embedded:
            log.info("embedded %d memories that arrived by sync", embedded)

    async def _schedule_periodic(self) -> None:
        if self._closed or not self.enabled or self._needs_passphrase:
            self.scheduler.cancel(PERIODIC_JOB)
            await self._recorder.rows.set_next(JobName.SYNC, None)
            return
        when = self.scheduler.schedule(
            PERIODIC_JOB, self._clock.now() + INTERVAL, self._periodic_pass
        )
        await self._recorder.rows.set_next(JobName.SYNC, when)

    def _schedule_soon(self, *, at_once: bool = False) -> None:
        if self._closed or not self.enabled or self._needs_passphrase:
            return
        now = self._clock.now()
        if self._soon_since is None:
            self._soon_since = now
        when = now if at_once else min(now + DEBOUNCE, self._soon_since + MAX_DEBOUNCE)
        self.scheduler.schedule(SOON_JOB, when, self._scheduled_pass)

    # -- the service --------------------------------------------------------------------------

    async def _current(self) -> _Running | None:
        """The service of the set-up in the settings, built (keyring read) on first use."""
        location = SyncLocation.from_settings(self._settings)
        name = self._settings.get_str("sync.device_name").strip()
        running = self._running
        if running is not None and (running.location, running.device_name) == (location, name):
            return running
        await self._replace(None)
        passphrase, password = await self._on_worker(self._read_secrets)
        if not passphrase:
            self._needs_passphrase = "missing"
            self._error = None
            return None
        self._running = await self._on_worker(
            self._make, location, passphrase, password or "", name
        )
        return self._running

    async def _open(
        self, location: SyncLocation, passphrase: str, password: str, name: str
    ) -> _Running:
        """A service for ``location`` whose key opened the folder (set up when new)."""
        running = await self._on_worker(self._make, location, passphrase, password, name.strip())
        try:
            await self._on_worker(running.service.key)
        except BaseException:
            await self._on_worker(running.transport.close)
            raise
        return running

    def _make(self, location: SyncLocation, passphrase: str, password: str, name: str) -> _Running:
        """Build the transport and the service (on the worker: WebDAV loads httpx)."""
        transport: Transport
        if location.transport == "folder":
            transport = FolderTransport(Path(location.folder).expanduser())
        else:
            auth = (location.user, password) if location.user else None
            transport = WebDavTransport(location.url.strip(), auth, timeout=self._webdav_timeout)
        service = SyncService(
            self._db,
            transport,
            passphrase,
            clock=self._clock,
            kdf=self._kdf,
            device_name=name or state.default_device_name(),
            on_memories_changed=self._on_memories_written,
        )
        return _Running(service, transport, location, name)

    async def _replace(self, running: _Running | None) -> None:
        old, self._running = self._running, running
        if old is not None and old is not running:
            await self._on_worker(old.transport.close)

    def _on_progress(self, progress: Any) -> None:
        # On the worker thread: kept, and told to the loop at most every 0.1 s (and at each
        # new stage), so a pass merging thousands of files does not flood the page.
        stage = str(getattr(progress, "stage", ""))
        told = (
            stage,
            int(getattr(progress, "done", 0)),
            int(getattr(progress, "total", 0)),
        )
        previous, self._progress = self._progress, told
        now = time.monotonic()
        if previous is not None and previous[0] == stage and now - self._progress_told < 0.1:
            return
        self._progress_told = now
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._publish_status)

    def _on_memories_written(self, memory_ids: Sequence[int]) -> None:
        # On the worker thread, inside the pass: the engine re-reads these at its next search.
        self._changed_in_pass.extend(memory_ids)
        if self._memory is not None:
            self._memory.engine.changed_elsewhere(memory_ids)

    def _read_secrets(self) -> tuple[str | None, str | None]:
        return self._passphrase.get(), self._password.get()

    def _store_secrets(self, passphrase: str, password: str) -> None:
        self._passphrase.set(passphrase)
        self._password.set(password)

    def _write_settings(self, location: SyncLocation, name: str, *, enabled: bool) -> None:
        for key, value in (
            ("sync.transport", location.transport),
            ("sync.folder", location.folder),
            ("sync.webdav_url", location.url.strip()),
            ("sync.webdav_user", location.user),
            ("sync.device_name", name),
            ("sync.enabled", enabled),
        ):
            self._settings.set(key, value)
        self._settings.save()

    async def _on_worker(self, fn: Callable[..., T], *args: Any) -> T:
        future = self._worker.submit(fn, *args)
        self._in_flight = future
        return await asyncio.wrap_future(future)

    # -- what it hears ------------------------------------------------------------------------

    def _on_change(self, change: DataChange) -> None:
        # What a pass publishes itself is no local change.
        if self._closed or self._publishing or not self.enabled:
            return
        if isinstance(change, MemoriesChanged):
            if change.source == SYNC_SOURCE:
                return
            self._pending_ids.update(change.ids)
        elif isinstance(change, SummariesChanged | ProfileChanged):
            self._pending_other += 1
        else:
            return
        self._schedule_soon()
        self._publish_status()

    def _on_any_setting_changed(self, key: str) -> None:
        # Settings may sync (some do, once the core syncs them): a change means the next
        # periodic pass is a full one.
        if not key.startswith("sync."):
            self._settings_dirty = True

    def _on_settings_changed(self, _key: str) -> None:
        # A renamed device takes its new name from the next pass (the service is built again).
        self._publish_status()

    def _publish_status(self) -> None:
        self._changes.publish(SyncStatusChanged())


def _bind(session: Any, *, folder_id: str) -> bool:
    started_over = state.bind_folder(session, folder_id)
    session.commit()
    if started_over:
        log.info("sync folder changed: this device publishes everything there again")
    return started_over


def _check_passphrase(passphrase: str) -> None:
    if len(passphrase) < MIN_PASSPHRASE:
        raise InvalidInput(
            "the sync passphrase is too short",
            key="sync.passphrase",
            reason="too_short",
            minimum=MIN_PASSPHRASE,
        )
