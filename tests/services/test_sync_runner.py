"""The sync runner on the real stack: when passes run, one at a time, and what they say.

Each device is a real data folder (database, memory engine, settings file, the keyring's 0600
fallback file of this keyring-less test environment) over one sync folder in the test's
temporary dir. Time is a ``FakeClock``: a pass due later is fired as its timer would, after the
test asserts on its run time; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from etos_desktop.core.changes import (
    ChangeHub,
    DataChange,
    MemoriesChanged,
    MemoryChange,
    SyncStatusChanged,
)
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings import paths
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.database import Database
from etos_desktop.core.sync import state
from etos_desktop.core.sync.errors import SyncTransportError, WrongPassphrase
from etos_desktop.core.sync.secrets import SyncPassphrase
from etos_desktop.services.scheduler import JobScheduler
from etos_desktop.services.sync_runner import (
    DEBOUNCE,
    INTERVAL,
    MAX_DEBOUNCE,
    PERIODIC_JOB,
    SOON_JOB,
    SyncLocation,
    SyncRunner,
)
from tests.core.sync.conftest import CHEAP_KDF
from tests.helpers.embedders import HashEmbedder

PASSPHRASE = "lantern harbour 47 市场"
BURST = (
    "My sister is called Mei",
    "I live in Hangzhou",
    "Deadline is on Friday",
    "I prefer green tea",
    "The cat is named Tofu",
    "I am allergic to peanuts",
    "I play the violin",
)
TIMEOUT = 30


@dataclass
class Device:
    """One data folder with the app's services that sync uses."""

    data_dir: Path
    db: Database
    memory: MemoryAccess
    settings: SettingsStore
    secrets: SecretStore
    changes: ChangeHub
    scheduler: JobScheduler
    runner: SyncRunner
    heard: list[DataChange]

    async def texts(self) -> list[str]:
        return sorted(m.content for m in await self.memory.memories(include_inactive=True))


@asynccontextmanager
async def device(tmp_path: Path, name: str, clock: FakeClock) -> AsyncIterator[Device]:
    data_dir = tmp_path / name
    db = Database(paths.database_path(data_dir), paths.backups_dir(data_dir), clock=clock)
    await db.open_async()
    changes = ChangeHub()
    heard: list[DataChange] = []
    changes.subscribe(heard.append)
    memory = MemoryAccess(MemoryEngine(db, embedder=HashEmbedder(), clock=clock), changes=changes)
    settings = SettingsStore(paths.settings_path(data_dir))
    settings.load()
    secrets = SecretStore(data_dir)
    scheduler = JobScheduler(clock)
    runner = SyncRunner(
        db=db,
        settings=settings,
        secrets=secrets,
        changes=changes,
        scheduler=scheduler,
        clock=clock,
        memory=memory,
        kdf=CHEAP_KDF,
    )
    await runner.start()
    try:
        yield Device(data_dir, db, memory, settings, secrets, changes, scheduler, runner, heard)
    finally:
        await runner.shutdown()
        await scheduler.shutdown()
        memory.close()
        db.close()


def updates(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.update"))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "Sync"
    path.mkdir()
    return path


async def test_a_change_is_sent_after_the_debounce_and_a_burst_waits_at_most_a_minute(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    async with device(tmp_path, "desktop", clock) as desktop:
        runner, scheduler = desktop.runner, desktop.scheduler
        status = await runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        assert status.enabled
        assert status.error is None
        assert status.last_success_at == clock.now()
        assert status.report is not None
        assert status.report.exported == 0  # no memory yet: the file names the device only
        assert (folder / "sync.json").is_file()
        assert scheduler.run_time(PERIODIC_JOB) == clock.now() + INTERVAL
        assert scheduler.run_time(SOON_JOB) is None

        started = clock.now()
        await desktop.memory.save("I use pnpm for JavaScript projects", "preference")
        assert scheduler.run_time(SOON_JOB) == started + DEBOUNCE
        assert runner.status().pending == 1
        # Each further change puts the pass off, but never past a minute after the first one.
        for _ in range(7):
            clock.advance(seconds=8)
            await desktop.memory.save(BURST[len(BURST) - 1 - clock.now().second // 8])
            assert scheduler.run_time(SOON_JOB) == min(
                clock.now() + DEBOUNCE, started + MAX_DEBOUNCE
            )
        assert scheduler.run_time(SOON_JOB) == started + MAX_DEBOUNCE
        assert runner.status().pending == 8
        (first,) = updates(folder)

        await scheduler.fire(SOON_JOB)
        (published,) = set(updates(folder)) - {first}
        assert published.endswith("/2.update")
        assert b"pnpm" not in (folder / published).read_bytes()
        status = runner.status()
        assert status.pending == 0
        assert status.report is not None
        assert status.report.exported == 8
        assert scheduler.run_time(SOON_JOB) is None
        assert scheduler.run_time(PERIODIC_JOB) == clock.now() + INTERVAL


async def test_the_periodic_pass_brings_in_the_other_devices_changes(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    location = SyncLocation("folder", str(folder))
    async with (
        device(tmp_path, "desktop", clock) as desktop,
        device(tmp_path, "laptop", clock) as laptop,
    ):
        await desktop.runner.set_up(location, PASSPHRASE, device_name="Desktop")
        await laptop.runner.set_up(location, PASSPHRASE, device_name="Laptop")
        saved = await desktop.memory.save("My sister is called Mei", "fact")
        await desktop.scheduler.fire(SOON_JOB)

        clock.advance(minutes=5)
        laptop.heard.clear()
        assert laptop.scheduler.run_time(PERIODIC_JOB) is not None
        await laptop.scheduler.fire(PERIODIC_JOB)
        assert await laptop.texts() == ["My sister is called Mei"]
        status = laptop.runner.status()
        assert status.report is not None
        assert status.report.inserted == 1
        assert status.devices == ("Desktop",)
        synced = [c for c in laptop.heard if isinstance(c, MemoriesChanged)]
        assert [(c.reason, c.source, len(c.ids)) for c in synced] == [
            (MemoryChange.SYNCED, "sync", 1)
        ]
        # What the pass wrote is no local change: it starts no pass of its own.
        assert laptop.scheduler.run_time(SOON_JOB) is None
        assert status.pending == 0
        # The memory that arrived is embedded in the background, and found by meaning.
        await asyncio.wait_for(laptop.runner.wait_idle(), TIMEOUT)
        assert (await laptop.memory.embedding_state()).embedded == 1
        hits = await laptop.memory.search("sister Mei", mode="vector")
        assert [h.text for h in hits] == ["My sister is called Mei"]

        # An archive travels back the same way.
        (copy,) = await laptop.memory.memories()
        await laptop.memory.archive(copy.id)
        await laptop.scheduler.fire(SOON_JOB)
        await desktop.scheduler.fire(PERIODIC_JOB)
        archived = await desktop.memory.get(saved.id)
        assert archived is not None
        assert archived.archived_at is not None


async def test_passes_run_one_at_a_time_and_a_pass_asked_for_meanwhile_follows(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    async with device(tmp_path, "desktop", clock) as desktop:
        runner = desktop.runner
        await runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        running = runner._running
        assert running is not None
        real = running.service.sync_once
        release = threading.Event()
        active: list[int] = []
        most = 0

        def blocking_pass() -> Any:
            nonlocal most
            active.append(1)
            most = max(most, len(active))
            try:
                release.wait(TIMEOUT)
                return real()
            finally:
                active.pop()

        passes: list[int] = []
        running.service.sync_once = lambda: (passes.append(1), blocking_pass())[1]  # type: ignore[method-assign]

        async def while_one_runs(during: Callable[[], Awaitable[Any]]) -> None:
            release.clear()
            first = asyncio.ensure_future(runner.sync_now())
            while not runner.status().running:
                await asyncio.sleep(0)
            await during()
            release.set()
            await asyncio.wait_for(first, TIMEOUT)

        # "Sync now" while a pass runs waits for it, then runs its own.
        second: list[asyncio.Future[Any]] = []

        async def ask_again() -> None:
            second.append(asyncio.ensure_future(runner.sync_now()))
            await asyncio.sleep(0)

        await while_one_runs(ask_again)
        await asyncio.wait_for(second[0], TIMEOUT)
        assert (most, len(passes)) == (1, 2)

        # A change during a pass: its debounced pass, due while the pass still runs, follows
        # the pass at once.
        async def change_and_fire() -> None:
            await desktop.memory.save("The meeting moved to Monday")
            assert runner.status().pending == 1
            clock.advance(seconds=10)
            await desktop.scheduler.fire(SOON_JOB)

        await while_one_runs(change_and_fire)
        assert len(passes) == 3
        assert desktop.scheduler.run_time(SOON_JOB) == clock.now()
        assert runner.status().pending == 1  # counted from the start of the pass
        await desktop.scheduler.fire(SOON_JOB)
        assert (most, len(passes)) == (1, 4)
        assert runner.status().pending == 0


async def test_a_wrong_passphrase_changes_nothing_and_stores_nothing(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    location = SyncLocation("folder", str(folder))
    async with (
        device(tmp_path, "desktop", clock) as desktop,
        device(tmp_path, "laptop", clock) as laptop,
    ):
        await desktop.runner.set_up(location, PASSPHRASE)
        await laptop.memory.save("I live in Hangzhou")
        before = await laptop.texts()
        with pytest.raises(WrongPassphrase):
            await laptop.runner.set_up(location, "another passphrase")
        assert not laptop.settings.get_bool("sync.enabled")
        assert not paths.settings_path(laptop.data_dir).exists()
        assert SyncPassphrase(laptop.secrets).get() is None
        assert await laptop.texts() == before
        # Only the first device's folder: the second wrote nothing there.
        assert [p.name for p in folder.iterdir() if p.is_dir()] == [
            desktop.db.call(state.load).device_id
        ]
        assert laptop.scheduler.pending() == {}
        with pytest.raises(InvalidInput):
            await laptop.runner.set_up(location, "short")


async def test_a_passphrase_that_stops_opening_the_folder_pauses_sync_until_one_does(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    async with device(tmp_path, "desktop", clock) as desktop:
        runner = desktop.runner
        await runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        # The folder set up again by another device, with another passphrase.
        shutil.rmtree(folder)
        folder.mkdir()
        other = SyncRunner(
            db=desktop.db,
            settings=SettingsStore(tmp_path / "other-settings.json"),
            secrets=SecretStore(tmp_path / "other"),
            changes=ChangeHub(),
            scheduler=JobScheduler(clock),
            clock=clock,
            kdf=CHEAP_KDF,
        )
        await other._on_worker(
            lambda: other._make(
                SyncLocation("folder", str(folder)), "the new one!", "", ""
            ).service.key()
        )
        await other.shutdown()
        runner._running = None  # as after a restart: the key is derived again
        status = await runner.sync_now()
        assert isinstance(status.error, WrongPassphrase)
        assert status.needs_passphrase == "wrong"
        assert desktop.scheduler.run_time(PERIODIC_JOB) is None
        await desktop.memory.save("Saved while sync waits")
        assert desktop.scheduler.run_time(SOON_JOB) is None
        with pytest.raises(WrongPassphrase):
            await runner.use_passphrase("still not it, sorry")
        status = await runner.use_passphrase("the new one!")
        assert status.error is None
        assert status.needs_passphrase == ""
        assert SyncPassphrase(desktop.secrets).get() == "the new one!"
        assert status.report is not None
        assert status.report.exported == 1
        assert desktop.scheduler.run_time(PERIODIC_JOB) == clock.now() + INTERVAL


async def test_a_missing_folder_is_reported_and_never_made_again(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    async with device(tmp_path, "desktop", clock) as desktop:
        await desktop.runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        folder.rename(tmp_path / "unplugged")
        status = await desktop.runner.sync_now()
        assert isinstance(status.error, SyncTransportError)
        assert status.error.params["reason"] == "missing"
        assert not folder.exists()
        # It goes on trying, and works once the folder is back.
        assert desktop.scheduler.run_time(PERIODIC_JOB) == clock.now() + INTERVAL
        (tmp_path / "unplugged").rename(folder)
        assert (await desktop.runner.sync_now()).error is None


async def test_turning_off_forgets_the_secrets_and_stops_the_passes(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    async with device(tmp_path, "desktop", clock) as desktop:
        await desktop.runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        assert SyncPassphrase(desktop.secrets).get() == PASSPHRASE
        status = await desktop.runner.turn_off()
        assert not status.enabled
        assert SyncPassphrase(desktop.secrets).get() is None
        assert desktop.scheduler.pending() == {}
        await desktop.memory.save("Made while sync is off")
        assert desktop.scheduler.pending() == {}
        assert status.location.folder == str(folder)  # offered again
        reloaded = SettingsStore(paths.settings_path(desktop.data_dir))
        reloaded.load()
        assert reloaded.get_bool("sync.enabled") is False


async def test_a_device_set_up_again_with_another_folder_sends_everything_there(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    second = tmp_path / "Another"
    second.mkdir()
    async with (
        device(tmp_path, "desktop", clock) as desktop,
        device(tmp_path, "laptop", clock) as laptop,
    ):
        await desktop.memory.save("I take my coffee black")
        await desktop.runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        await desktop.runner.turn_off()
        await desktop.runner.set_up(SyncLocation("folder", str(second)), PASSPHRASE)
        await laptop.runner.set_up(SyncLocation("folder", str(second)), PASSPHRASE)
        assert await laptop.texts() == ["I take my coffee black"]


async def test_a_pass_that_says_how_far_it_is_shows_it(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    """The service's progress (``sync_once(progress=…)``, where it has it) reaches the status."""
    async with device(tmp_path, "desktop", clock) as desktop:
        runner = desktop.runner
        await runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        running = runner._running
        assert running is not None
        real = running.service.sync_once
        halfway, release = threading.Event(), threading.Event()

        def with_progress(progress: Callable[[Any], None]) -> Any:
            progress(SimpleNamespace(stage="merging", done=3, total=12))
            halfway.set()
            release.wait(TIMEOUT)
            return real()

        running.service.sync_once = with_progress  # type: ignore[assignment]
        heard = len(desktop.heard)
        passing = asyncio.ensure_future(runner.sync_now())
        await asyncio.wait_for(asyncio.to_thread(halfway.wait, TIMEOUT), TIMEOUT)
        while runner.status().progress is None:
            await asyncio.sleep(0)
        assert runner.status().progress == ("merging", 3, 12)

        # Told to the loop: the page hears a status change while the pass runs.
        async def told() -> None:
            # The one of the pass's start, then the one of its progress.
            while sum(isinstance(c, SyncStatusChanged) for c in desktop.heard[heard:]) < 2:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(told(), TIMEOUT)
        assert runner.status().running
        release.set()
        status = await asyncio.wait_for(passing, TIMEOUT)
        assert status.progress is None
        assert status.error is None


async def test_a_periodic_pass_with_nothing_new_anywhere_only_lists_the_folder(
    tmp_path: Path, clock: FakeClock, folder: Path
) -> None:
    location = SyncLocation("folder", str(folder))
    async with (
        device(tmp_path, "desktop", clock) as desktop,
        device(tmp_path, "laptop", clock) as laptop,
    ):
        await desktop.runner.set_up(location, PASSPHRASE)
        await laptop.runner.set_up(location, PASSPHRASE)
        running = desktop.runner._running
        assert running is not None
        real = running.service.sync_once
        full: list[int] = []
        running.service.sync_once = lambda: (full.append(1), real())[1]  # type: ignore[method-assign]

        async def periodic() -> None:
            clock.advance(minutes=5)
            await desktop.scheduler.fire(PERIODIC_JOB)

        await periodic()  # the laptop's first file is new to the desktop: a full pass
        assert len(full) == 1
        await periodic()
        await periodic()
        assert len(full) == 1  # nothing new: the folder was listed, that is all
        status = desktop.runner.status()
        assert status.last_success_at == clock.now()
        assert desktop.scheduler.run_time(PERIODIC_JOB) == clock.now() + INTERVAL

        await laptop.memory.save("I moved to Hangzhou in March")
        await laptop.scheduler.fire(SOON_JOB)
        await periodic()  # a new file from the laptop
        assert len(full) == 2
        assert await desktop.texts() == ["I moved to Hangzhou in March"]
        await periodic()
        assert len(full) == 2
        desktop.settings.set("memory.retrieval_top_k", 7)  # a setting may sync: a full pass
        await periodic()
        assert len(full) == 3
        await desktop.runner.sync_now()  # asked for: always a full pass
        assert len(full) == 4
