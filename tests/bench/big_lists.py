"""Settings → Memory with a long-time user's store: first rows, scrolling, search, select all (issue 21).

Run::

    python tests/bench/big_lists.py                       # 10,000 memories, 1,000 conversations
    python tests/bench/big_lists.py --memories 3000 --rounds 1

Each round starts the real app (offscreen unless DISPLAY is set, the local fake server, keyword
matching so no model loads) on a data folder seeded with bulk SQL: N memories (the retrieval
benchmark's memory texts plus generated ones, English and Chinese, 12-423 characters, created
over 700 days, of every kind and source, a few archived or ended) and C conversations with a few
messages each. Then, with a 5 ms ``QTimer`` ticking on the GUI thread (``qt_bench.TickRecorder``):

* **sidebar** — the conversation list reloaded (``refresh_conversations``): time until the
  model holds rows, worst stall, rows the model holds;
* **first rows** — Settings opened at Memory: time from the call until the table shows its first
  rows, and the worst stall meanwhile (the dialog builds every page: that is in it); and the
  time from the Memory page being shown (its ``Show`` event) to its first rows;
* **scroll to end** — the table's scroll bar dragged to the bottom until no more rows come:
  worst stall and time;
* **search** — a word typed into the filter box one key every 120 ms: the worst stall per
  keystroke, and the time from the last key until the count shows the result;
* **select all + archive** — Ctrl+A in the table, then Archive, on the rows the search matches:
  time until the page is idle, worst stall, and how many memories the database has archived;
* **open Summaries** — the Summaries page shown: time until it was read (its list, every
  conversation's state for the conversation picker), worst stall, conversations in the picker.

Every step runs on a 100-memory, 10-conversation store in the same run too, and the ratio
against it is printed: what grows with the store. The machine is shared: the load average is
printed at the start and the end, and figures from a busy machine are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import ROOT, TickRecorder, run_on_qasync, worst_ms

sys.path.insert(0, str(ROOT))

import dataset_overlap
import retrieval_speed

#: What is typed into the filter box (matches a few percent of the benchmark's texts).
QUERY = "museum"
KINDS = ("fact", "fact", "fact", "preference", "episode", "instruction", "insight")
SOURCES = ("user_statement", "assistant_action", "manual", "imported", "consolidation")
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def seed(
    data_dir: Path,
    memories: int,
    conversations: int,
    *,
    messages: int = 4,
    longest: int | None = None,
) -> None:
    """Fill a data folder's database: memories through ``add_many``, conversations as rows.

    Each conversation gets ``messages`` messages, the newest one ``longest`` (default the same).
    """
    from etos_desktop.core.clock import FakeClock
    from etos_desktop.core.memory.engine import MemoryEngine
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow

    data = dataset_overlap.load_set(dataset_overlap.DEFAULT_SET)
    texts = retrieval_speed.memory_texts(data, memories)
    rng = random.Random(21)
    drafts = [
        {
            "text": text,
            "kind": KINDS[i % len(KINDS)],
            "source": SOURCES[i % len(SOURCES)],
            "created_at": NOW - timedelta(days=rng.uniform(0, 700)),
            "importance": round(rng.uniform(0.2, 0.9), 2),
            "tags": ["travel"] if i % 11 == 0 else [],
        }
        for i, text in enumerate(texts)
    ]
    clock = FakeClock(NOW)
    engine = MemoryEngine.open(data_dir / "etos.db", clock=clock, max_active=10**6)
    ids = engine.add_many(drafts, batch_size=1000)
    # A few archived (one in 250), as a long-time store has.
    for memory_id in ids[:: max(1, len(ids) // 40)]:
        engine.archive(memory_id)

    def fill(session: Any) -> None:
        for c in range(conversations):
            moment = NOW - timedelta(hours=c)
            row = ConversationRow(
                title=f"Conversation {c} 对话 {rng.choice(('trip', 'code', '旅行', '代码'))}",
                created_at=moment,
                updated_at=moment,
                pinned=c % 97 == 0,
            )
            session.add(row)
            session.flush()
            session.add_all(
                MessageRow(
                    conversation_id=row.id,
                    role="user" if m % 2 == 0 else "assistant",
                    content=f"message {m} of conversation {c}: "
                    + ("lorem ipsum " if m % 3 else "我们上次聊到的旅行计划 ") * (6 + m % 17),
                    created_at=moment + timedelta(seconds=m),
                )
                for m in range(messages if c or longest is None else longest)
            )
        session.commit()

    engine._db.call(fill)
    engine.close()


class Probe:
    """Runs a step with the tick timer on and keeps its worst stall and time.

    Args:
        profile: Names of steps (``work.__name__``) to run under ``cProfile``: it sees the GUI
            thread only, which is where a stall comes from; the top functions are printed.
    """

    def __init__(self, profile: Sequence[str] = ()) -> None:
        self.ticks = TickRecorder()
        self.profile = set(profile)

    async def step(self, work: Callable[[], Awaitable[Any]]) -> tuple[float, float, Any]:
        """``(seconds, worst stall in ms, work's result)``."""
        profiler = cProfile.Profile() if work.__name__ in self.profile else None
        self.ticks.start()
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        result = await work()
        elapsed = time.perf_counter() - started
        await asyncio.sleep(0.02)  # the last tick after the work
        if profiler is not None:
            profiler.disable()
            print(f"--- GUI thread during {work.__name__} (cProfile, by own time) ---")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return elapsed, worst_ms(self.ticks.stop()), result


async def until(condition: Callable[[], bool], timeout: float = 120.0) -> None:
    """Poll on the running loop (1 ms) until ``condition()``."""
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.001)


async def settle(page: Any, quiet: float = 0.25) -> None:
    """Wait until the page is idle and its count stays the same for ``quiet`` seconds."""
    text = None
    stable_since = time.perf_counter()
    while True:
        await page.wait_idle()
        now = page.count_label.text()
        if now != text:
            text, stable_since = now, time.perf_counter()
        elif time.perf_counter() - stable_since >= quiet:
            return
        await asyncio.sleep(0.01)


async def measure_store(data_dir: Path) -> dict[str, float]:
    """Start the app on ``data_dir`` and run the steps; returns the figures by name."""
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import EtosApp
    from tests.helpers.fake_openai_server import FakeOpenAIServer
    from tests.helpers.stack import fast_provider_factory

    qt_app = QApplication.instance()
    probe = Probe()
    out: dict[str, float] = {}
    with FakeOpenAIServer() as server:
        env = {
            "ETOS_DATA_DIR": str(data_dir),
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "fake-chat",
            "HOME": str(data_dir),
        }
        app = EtosApp(qt_app, env, local_candidates=[], provider_factory=fast_provider_factory([]))
        app.settings.set("memory.embedder", "keywords")
        app.settings.set("chat.auto_title", False)
        app.window.resize(1100, 760)
        app.window.show()
        await app.start()
        assert app.controller is not None
        await app.controller.wait_idle()
        await asyncio.sleep(0.3)

        sidebar = app.window.sidebar.model

        async def reload_sidebar() -> int:
            reset = asyncio.get_running_loop().create_future()

            def done() -> None:
                if not reset.done():
                    reset.set_result(None)

            sidebar.modelReset.connect(done)
            app.controller.refresh_conversations()
            await asyncio.wait_for(reset, 60)
            sidebar.modelReset.disconnect(done)
            await asyncio.sleep(0)
            return int(sidebar.rowCount())

        out["sidebar_s"], out["sidebar_stall"], rows = await probe.step(reload_sidebar)
        out["sidebar_rows"] = rows

        await memory_steps(app, probe, out)
        app.window.close()
        await app.shutdown()
    return out


async def memory_steps(app: Any, probe: Probe, out: dict[str, float]) -> None:
    """Settings → Memory opened, scrolled to its end, searched, all archived; then Summaries."""
    from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QWidget

    qt_app = QApplication.instance()
    page: Any = None
    shown_at: list[float] = []

    class ShowWatch(QObject):
        def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802  (Qt's name)
            if (
                event.type() == QEvent.Type.Show
                and isinstance(watched, QWidget)
                and watched.objectName() == "memoryPage"
                and not shown_at
            ):
                shown_at.append(time.perf_counter())
            return False

    watch = ShowWatch()
    qt_app.installEventFilter(watch)

    async def open_memory() -> None:
        nonlocal page
        dialog = app.open_settings("memory")
        dialog.resize(1000, 700)
        page = dialog.page("memory")
        await until(lambda: page.proxy.rowCount() > 0)
        await asyncio.sleep(0)  # the frame that paints them

    out["first_s"], out["first_stall"], _ = await probe.step(open_memory)
    rows_at = time.perf_counter()
    qt_app.removeEventFilter(watch)
    out["page_first_s"] = rows_at - shown_at[0] if shown_at else float("nan")
    await settle(page)
    out["first_rows"] = page.model.rowCount()

    table = page.table
    bar = table.verticalScrollBar()

    async def scroll_to_end() -> int:
        last = -1
        quiet = 0
        while quiet < 20:
            bar.setValue(bar.maximum())
            await asyncio.sleep(0.01)
            rows = page.model.rowCount()
            more = page.model.canFetchMore(QModelIndex())
            quiet = quiet + 1 if rows == last and not more else 0
            last = rows
        return int(last)

    out["scroll_s"], out["scroll_stall"], out["scroll_rows"] = await probe.step(scroll_to_end)
    bar.setValue(0)
    await settle(page)

    stalls: list[float] = []
    page.search_edit.setFocus()
    settle_s = 0.0
    probe.ticks.start()
    for char in QUERY:
        probe.ticks.intervals.clear()
        QTest.keyClicks(page.search_edit, char)
        await asyncio.sleep(0.12)
        stalls.append(worst_ms(list(probe.ticks.intervals)))
    started = time.perf_counter()
    await settle(page, quiet=0.2)
    settle_s = time.perf_counter() - started - 0.2
    all_ticks = probe.ticks.stop()
    out["key_stall"] = max(stalls)
    out["key_stall_median"] = statistics.median(stalls)
    out["search_settle_s"] = max(0.0, settle_s)
    out["search_stall"] = worst_ms(all_ticks)
    out["matching"] = page.proxy.rowCount()
    count_text = page.count_label.text()

    engine = app.memory.engine if app.memory is not None else None
    assert engine is not None
    before = len([m for m in engine.memories(include_inactive=True) if m.archived_at])

    async def select_all_and_archive() -> None:
        table.setFocus()
        QTest.keyClick(table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        await asyncio.sleep(0)
        QTest.mouseClick(page.archive_button, Qt.MouseButton.LeftButton)
        await asyncio.sleep(0)
        await page.wait_idle()
        await settle(page, quiet=0.1)

    out["archive_s"], out["archive_stall"], _ = await probe.step(select_all_and_archive)
    after = len([m for m in engine.memories(include_inactive=True) if m.archived_at])
    out["archived"] = after - before

    async def open_summaries() -> int:
        dialog = app._settings_dialog
        summaries = dialog.page("summaries")
        refreshed = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not refreshed.done():
                refreshed.set_result(None)

        summaries.refreshed.connect(done)
        dialog.show_page("summaries")
        await asyncio.wait_for(refreshed, 60)
        summaries.refreshed.disconnect(done)
        await asyncio.sleep(0)
        return int(summaries.conversation_filter.count() - 1)

    (
        out["summaries_s"],
        out["summaries_stall"],
        out["summaries_conversations"],
    ) = await probe.step(open_summaries)
    print(f"    count after the search: {count_text!r}; status: {page.status()}")


ROWS = (
    ("sidebar reload", "sidebar_s", "sidebar_stall", "sidebar_rows", "rows held"),
    ("first rows", "first_s", "first_stall", "first_rows", "rows held"),
    ("scroll to end", "scroll_s", "scroll_stall", "scroll_rows", "rows held"),
    ("search (settle)", "search_settle_s", "search_stall", "matching", "rows shown"),
    ("select all+archive", "archive_s", "archive_stall", "archived", "archived"),
    ("open Summaries", "summaries_s", "summaries_stall", "summaries_conversations", "in picker"),
)


def report(name: str, runs: list[dict[str, float]], base: list[dict[str, float]]) -> None:
    """Print medians over the rounds, and their ratio against the small store."""

    def med(figures: list[dict[str, float]], key: str) -> float:
        return statistics.median(f[key] for f in figures)

    print(f"\n{name} (medians of {len(runs)} round(s); ratio = this store / 100 memories)")
    for label, time_key, stall_key, count_key, count_name in ROWS:
        t, s = med(runs, time_key), med(runs, stall_key)
        bt, bs = med(base, time_key), med(base, stall_key)
        print(
            f"  {label:<19} {1000 * t:8.1f} ms (x{t / max(bt, 1e-4):5.1f})   worst stall "
            f"{s:7.1f} ms (x{s / max(bs, 0.1):5.1f})   {count_name}: {int(med(runs, count_key))}"
        )
    pt, bpt = med(runs, "page_first_s"), med(base, "page_first_s")
    print(
        f"  {'page shown→rows':<19} {1000 * pt:8.1f} ms (x{pt / max(bpt, 1e-4):5.1f})   "
        "(from the Memory page's Show event to its first rows)"
    )
    ks, bks = med(runs, "key_stall"), med(base, "key_stall")
    print(
        f"  {'per keystroke':<19} worst {ks:7.1f} ms (x{ks / max(bks, 0.1):5.1f}), median of "
        f"keys {med(runs, 'key_stall_median'):.1f} ms"
    )
    for f in runs:
        print("    round:", {k: round(v, 3) for k, v in f.items()})


def main() -> int:
    """Seed both stores, then measure each in rounds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"load average at start: {retrieval_speed.load_average()}")

    async def run() -> None:
        with tempfile.TemporaryDirectory(prefix="etos-big-lists-") as tmp:
            stores = {}
            for name, memories, conversations in (
                ("small", 100, 10),
                ("big", args.memories, args.conversations),
            ):
                folder = Path(tmp) / name
                folder.mkdir()
                started = time.perf_counter()
                seed(folder, memories, conversations)
                print(
                    f"seeded {memories} memories, {conversations} conversations in "
                    f"{time.perf_counter() - started:.1f} s"
                )
                stores[name] = folder
            figures: dict[str, list[dict[str, float]]] = {"small": [], "big": []}
            for round_no in range(args.rounds):
                for name, folder in stores.items():
                    # Each round on a fresh copy: the archive step changed the last one.
                    copy = Path(tmp) / f"{name}-{round_no}"
                    copy.mkdir()
                    (copy / "etos.db").write_bytes((folder / "etos.db").read_bytes())
                    print(f"  round {round_no + 1}, {name} store…")
                    figures[name].append(await measure_store(copy))
            report(
                f"{args.memories} memories, {args.conversations} conversations",
                figures["big"],
                figures["small"],
            )

    run_on_qasync(run)
    print(f"\nload average at end: {retrieval_speed.load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
