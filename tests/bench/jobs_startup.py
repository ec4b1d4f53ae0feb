"""Start-up with and without the background jobs: first frame, services ready, what was imported.

Run: ``python tests/bench/jobs_startup.py [--runs 7]``. The same child process as ``startup.py``
(process start → first frame → services), alternately with the jobs service and with
``EtosApp(background_jobs=False)``, on an empty data dir and on 1,000 conversations active in
the last 7 days (so the start-up summary check has work to do). Also reports whether
APScheduler was imported before the first frame (it must not be). Target: the first frame does
not grow by more than 10 ms with the scheduler.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parents[2]

APP = textwrap.dedent(
    """
    import functools, json, sys, time
    t0 = float(sys.argv[1])
    jobs = sys.argv[2] == "jobs"
    from etos_desktop import app as etos_app
    if not jobs:
        etos_app.EtosApp = functools.partial(etos_app.EtosApp, background_jobs=False)

    qt_app, etos, _args = etos_app.show_first_frame([])
    marks = {"first_frame": time.time() - t0}
    marks["apscheduler_at_first_frame"] = float("apscheduler" in sys.modules)

    async def run():
        import asyncio
        etos.closed = asyncio.Event()
        await etos.start()
        marks["services_ready"] = time.time() - t0
        if etos.jobs is not None:
            await etos.jobs.wait_started()
            marks["jobs_started"] = time.time() - t0
            scheduler = etos.jobs.scheduler
            marks["summary_jobs"] = float(
                len(scheduler.pending("summary:")) + sum(1 for i in scheduler._tasks if i.startswith("summary:"))
            )
        await etos.shutdown()

    import asyncio, qasync
    loop = qasync.QEventLoop(qt_app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(run())
    print(json.dumps(marks))
    """
)


def seed(data_dir: Path, conversations: int) -> dict[str, int]:
    sys.path.insert(0, str(ROOT))
    from summary_data import seed_conversations

    from etos_desktop.core.storage.database import Database

    db = Database(data_dir / "etos.db")
    db.open()
    try:
        return seed_conversations(db, conversations, datetime.now(UTC))
    finally:
        db.close()


def measure(env: dict[str, str], mode: str, seeded: Path | None = None) -> dict[str, float]:
    if seeded is not None:
        # A fresh copy each run: a run's jobs write their attempts, the next run must not see them.
        target = Path(env["ETOS_DATA_DIR"])
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(seeded, target)
    result = subprocess.run(
        [sys.executable, "-c", APP, str(time.time()), mode],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=180,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not base_env.get("DISPLAY"):
        base_env["QT_QPA_PLATFORM"] = "offscreen"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        base_env.update(
            HOME=str(home),
            XDG_DATA_HOME=str(home / ".local/share"),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            OPENAI_BASE_URL="http://127.0.0.1:9/v1",
            OPENAI_MODEL="m",
        )
        base_env.pop("OPENAI_API_KEY", None)
        empty = Path(tmp) / "empty"
        full = Path(tmp) / "full"
        empty.mkdir()
        full.mkdir()
        states = seed(full, 1000)
        print(
            "seeded 1,000 conversations of the last 7 days: "
            + ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
        )
        work = Path(tmp) / "work"
        for name, seeded in (("empty data dir", empty), ("1,000 recent conversations", full)):
            env = {**base_env, "ETOS_DATA_DIR": str(work)}
            measure(env, "jobs", seeded)  # warm the OS file cache
            runs: dict[str, list[dict[str, float]]] = {"jobs": [], "none": []}
            # Alternated, so a change in the machine's load hits both alike.
            for _ in range(args.runs):
                for mode in ("jobs", "none"):
                    runs[mode].append(measure(env, mode, seeded))
            med = {
                mode: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
                for mode, rs in runs.items()
            }
            with_jobs, without = med["jobs"], med["none"]
            print(
                f"{name}: first frame {with_jobs['first_frame'] * 1000:5.0f} ms with jobs, "
                f"{without['first_frame'] * 1000:5.0f} ms without "
                f"({(with_jobs['first_frame'] - without['first_frame']) * 1000:+.0f} ms); services ready "
                f"{with_jobs['services_ready'] * 1000:5.0f} / {without['services_ready'] * 1000:5.0f} ms "
                f"({(with_jobs['services_ready'] - without['services_ready']) * 1000:+.0f} ms); "
                f"jobs derived at {with_jobs['jobs_started'] * 1000:5.0f} ms; "
                f"APScheduler imported before the first frame: "
                f"{'yes' if with_jobs['apscheduler_at_first_frame'] else 'no'}; summary jobs derived "
                f"{with_jobs.get('summary_jobs', 0):.0f} (medians of {args.runs})"
            )
            for mode, label in (("jobs", "with"), ("none", "without")):
                frames = sorted(r["first_frame"] * 1000 for r in runs[mode])
                print(f"  first frames {label} jobs: " + " ".join(f"{f:.0f}" for f in frames))


if __name__ == "__main__":
    main()
