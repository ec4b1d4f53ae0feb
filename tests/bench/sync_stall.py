"""UI stall benchmark: the first sync of a big store in the app, on the sync runner's thread.

Run: ``python tests/bench/sync_stall.py [--memories 5000]``.

Two devices over one sync folder in a temporary dir. The other device (a plain data folder and
``SyncService``) holds ``--memories`` memories and has published them; this device turns sync on
through ``SyncRunner.set_up`` on a qasync loop, as Settings → Sync does, with a store of its own
of the same size, so its first pass both sends and receives everything. Measured:

* idle: a 5 ms QTimer alone for 2 s (the baseline);
* first sync: the worst interval between ticks while ``set_up`` runs (key derivation, the
  pass on the runner's thread, the DB thread's transaction), p99 tick, the pass's time, and
  the longest a database read issued meanwhile waited (what opening a conversation would wait);
* again: a second pass with nothing new ("Sync now": a full pass);
* periodic: the periodic pass with nothing new (it only lists the folder).

The ratio is the first sync's worst stall over idle's. The load average is printed: the 2-core
machine is shared, which changes the times (much less the stall).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from embed_stall import memories  # noqa: E402
from qt_bench import TickRecorder, p99_ms, run_on_qasync, worst_ms  # noqa: E402

PASSPHRASE = "benchmark lantern harbour"


def report(label: str, intervals: list[float], extra: str = "") -> None:
    print(
        f"  {label:<10}: worst stall {worst_ms(intervals):6.1f} ms, p99 tick "
        f"{p99_ms(intervals):5.1f} ms, median {statistics.median(intervals) * 1000:4.1f} ms"
        f"{extra}",
        flush=True,
    )


def _store(data_dir: Path, texts: list[str]) -> tuple[Any, Any]:
    from etos_desktop.core.memory.engine import MemoryEngine
    from etos_desktop.core.settings import paths
    from etos_desktop.core.storage.database import Database

    db = Database(paths.database_path(data_dir), paths.backups_dir(data_dir))
    db.open()
    engine = MemoryEngine(db)
    engine.add_many(texts)
    return db, engine


async def run(args: argparse.Namespace) -> None:
    from sqlalchemy import text

    from etos_desktop.core.changes import ChangeHub
    from etos_desktop.core.clock import SystemClock
    from etos_desktop.core.memory.access import MemoryAccess
    from etos_desktop.core.providers.secrets import SecretStore
    from etos_desktop.core.settings import paths
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.core.sync.service import SyncService
    from etos_desktop.core.sync.transport import FolderTransport
    from etos_desktop.services.scheduler import JobScheduler
    from etos_desktop.services.sync_runner import PERIODIC_JOB, SyncLocation, SyncRunner

    count = args.memories
    texts = memories(2 * count)
    print(
        f"{count} memories on each device, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="etos-sync-bench-") as tmp:
        root = Path(tmp)
        folder = root / "Sync"
        folder.mkdir()
        other_db, other_engine = _store(root / "laptop", texts[:count])
        started = time.perf_counter()
        SyncService(other_db, FolderTransport(folder), PASSPHRASE, device_name="laptop").sync_once()
        print(f"  the other device published its store in {time.perf_counter() - started:.1f} s")
        db, engine = _store(root / "desktop", texts[count:])
        clock = SystemClock()
        settings = SettingsStore(paths.settings_path(root / "desktop"))
        settings.load()
        changes = ChangeHub()
        memory = MemoryAccess(engine, changes=changes)
        scheduler = JobScheduler(clock)
        runner = SyncRunner(
            db=db,
            settings=settings,
            secrets=SecretStore(root / "desktop"),
            changes=changes,
            scheduler=scheduler,
            clock=clock,
            memory=memory,
        )
        await runner.start()
        recorder = TickRecorder()

        recorder.start()
        await asyncio.sleep(2)
        idle = recorder.stop()
        report("idle", idle)

        waits: list[float] = []

        async def probe_reads() -> None:
            while True:
                asked = time.perf_counter()
                await db.run(lambda s: s.execute(text("SELECT 1")).scalar())
                waits.append(time.perf_counter() - asked)
                await asyncio.sleep(0.05)

        prober = asyncio.ensure_future(probe_reads())
        recorder.start()
        started = time.perf_counter()
        status = await runner.set_up(SyncLocation("folder", str(folder)), PASSPHRASE)
        elapsed = time.perf_counter() - started
        first = recorder.stop()
        prober.cancel()
        assert status.report is not None, status.error
        report(
            "first sync",
            first,
            f", took {elapsed:.1f} s ({status.report.inserted} in, {status.report.exported} "
            f"out), a DB read waited up to {max(waits) * 1000:.0f} ms",
        )
        await runner.wait_idle()

        recorder.start()
        started = time.perf_counter()
        await runner.sync_now()
        again = recorder.stop()
        report("again", again, f", took {time.perf_counter() - started:.2f} s")
        recorder.start()
        started = time.perf_counter()
        await scheduler.fire(PERIODIC_JOB)
        periodic = recorder.stop()
        report("periodic", periodic, f", took {time.perf_counter() - started:.2f} s")
        size = sum(p.stat().st_size for p in folder.rglob("*.update"))
        print(f"  sync folder: {size / 1e6:.1f} MB of update files")
        ratio = worst_ms(first) / max(worst_ms(idle), 0.1)
        print(
            f"worst UI stall during the first sync {worst_ms(first):.1f} ms, idle "
            f"{worst_ms(idle):.1f} ms: ratio {ratio:.1f} (target: stall <= 50 ms)"
        )
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        await runner.shutdown()
        await scheduler.shutdown()
        memory.close()
        db.close()
        other_engine.close()
        other_db.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=5000)
    run_on_qasync(lambda: run(parser.parse_args()))


if __name__ == "__main__":
    main()
