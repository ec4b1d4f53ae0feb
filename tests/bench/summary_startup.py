"""Start-up check of 1,000 conversations active in the last 7 days: time, and the UI loop's stall.

Run: ``python tests/bench/summary_startup.py [--conversations 1000] [--runs 7]``. Seeds a database
with realistic conversations (``summary_data.py``), then derives the summary jobs as the app does
at start-up (``SummaryJobs.derive``) on a qasync loop while a 5 ms timer ticks:

* the query and the rule on the DB thread (``rule.decisions`` over ``store.recent_activity``), alone;
* the whole derivation, and how long of it ran on the UI loop (the scheduling);
* the worst stall of the loop meanwhile (a baseline idle stall is measured in the same run).

Target: ≤ 100 ms for 1,000 conversations, off the UI thread.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import TickRecorder, run_on_qasync, worst_ms


async def run(conversations: int, runs: int) -> None:
    from summary_data import seed_conversations

    from etos_desktop.core.changes import ChangeHub
    from etos_desktop.core.clock import FakeClock
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.core.storage.database import Database
    from etos_desktop.core.summaries import rule, store
    from etos_desktop.core.summaries.access import SummaryAccess
    from etos_desktop.services.jobs import BackgroundJobs
    from etos_desktop.services.scheduler import JobScheduler

    clock = FakeClock()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "etos.db", clock=clock)
        db.open()
        started = time.perf_counter()
        states = seed_conversations(db, conversations, clock.now())
        print(
            f"seeded {conversations} conversations in {time.perf_counter() - started:.1f} s: "
            + ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
        )
        settings = SettingsStore(Path(tmp) / "settings.json")
        summaries = SummaryAccess(db, clock=clock)
        changes = ChangeHub()
        scheduler = JobScheduler(clock)
        jobs = BackgroundJobs(
            db=db,
            changes=changes,
            summaries=summaries,
            providers=None,  # type: ignore[arg-type]
            settings=settings,
            clock=clock,
            scheduler=scheduler,
        )
        recorder = TickRecorder()
        recorder.start()
        await asyncio.sleep(1.0)
        idle = recorder.stop()

        rule_settings = jobs.rule_settings()
        since = clock.now() - rule.STARTUP_LOOKBACK
        query_ms: list[float] = []
        for _ in range(runs):
            t = time.perf_counter()
            decisions = await db.run(
                lambda s: rule.decisions(
                    store.recent_activity(s, since), rule_settings, clock.now()
                )
            )
            query_ms.append((time.perf_counter() - t) * 1000)
        due = sum(1 for _, d in decisions if not isinstance(d, rule.NotDue))

        total_ms: list[float] = []
        loop_ms: list[float] = []
        stalls: list[float] = []
        for _ in range(runs):
            for job_id in scheduler.pending("summary:"):
                scheduler.cancel(job_id)
            recorder.start()
            t = time.perf_counter()
            decisions = await db.run(
                lambda s: rule.decisions(
                    store.recent_activity(s, since), rule_settings, clock.now()
                )
            )
            t_loop = time.perf_counter()
            for conversation_id, decision in decisions:
                jobs._summary_jobs._apply(conversation_id, decision)
            loop_ms.append((time.perf_counter() - t_loop) * 1000)
            await jobs._summary_jobs._record_next()
            total_ms.append((time.perf_counter() - t) * 1000)
            await asyncio.sleep(0.05)
            stalls.append(worst_ms(recorder.stop()))
        await scheduler.shutdown()
        summaries.close()
        db.close()

    print(f"{len(decisions)} conversations active in the last 7 days, {due} with a summary job")
    print(
        f"query + rule on the DB thread: median {statistics.median(query_ms):6.1f} ms, "
        f"max {max(query_ms):6.1f} ms ({runs} runs)"
    )
    print(
        f"whole derivation: median {statistics.median(total_ms):6.1f} ms, max {max(total_ms):6.1f} ms; "
        f"on the UI loop (scheduling {due} jobs): median {statistics.median(loop_ms):5.1f} ms"
    )
    print(
        f"worst loop stall during it: median {statistics.median(stalls):5.1f} ms, "
        f"max {max(stalls):5.1f} ms (idle baseline worst {worst_ms(idle):5.1f} ms; ratio "
        f"{max(stalls) / max(worst_ms(idle), 0.1):.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    run_on_qasync(lambda: run(args.conversations, args.runs))


if __name__ == "__main__":
    main()
