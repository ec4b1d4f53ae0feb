"""A long-time user's store, driven from the first frame: the worst UI stall per step (issue 21).

Run::

    python tests/bench/big_store.py                    # 10,000 memories, 1,000 × 50 messages
    python tests/bench/big_store.py --memories 2000 --conversations 200 --rounds 1   # quick

The store: 10,000 memories (the retrieval benchmark's texts and generated ones, English and
Chinese, 12-423 characters, dated over 700 days, every kind and source, some archived), 1,000
conversations of 50 messages (the newest one 5,000), 300 session summaries and a profile with 20
revisions, seeded with bulk SQL. The same steps run on an empty data folder in the same run, and
each figure is printed with its ratio against it.

With a 5 ms ``QTimer`` ticking on the GUI thread (``qt_bench.TickRecorder``) the real app
(offscreen unless DISPLAY is set, the local fake server, keyword matching so no model loads) is
driven through:

* **start** — ``EtosApp`` built, window shown, until the services are ready (the composer is
  enabled from the first frame; this is the time until a message would go out);
* **open** — the oldest conversation (50 messages) opened until it is shown, then the newest
  (5,000 messages): the ratio of the two is what the length costs;
* **stream a reply** — a 400-chunk Markdown reply at ~100 chunks/s, until the reply is saved;
* **each Settings page** — the dialog opened, then every page shown until it is idle;
* **Memory page** — first rows, scrolled to the end, searched key by key, all matching archived
  (in SQL), then the Summaries page (the steps of ``big_lists.py``).

Per step: "worst N ms" (the longest gap between ticks, minus 5 ms) and the time it took. Issue
21's targets: no stall over 16 ms while streaming, scrolling, typing or searching; ≤ 100 ms to
open a page, a dialog or a conversation. The machine may be shared: the load average is printed
at the start and the end; figures from a busy machine are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import ROOT, run_on_qasync

sys.path.insert(0, str(ROOT))

import big_lists
import retrieval_speed
import stall

SUMMARY_EN = (
    "The user planned a spring trip to Kyoto with Alex, compared hotels near the station and "
    "asked for a three-day plan with temples in the morning and food markets in the evening."
)
SUMMARY_ZH = (
    "用户和妈妈讨论了周末去杭州的安排，比较了高铁和自驾，最后决定周六早上出发，顺便看望外婆。"
)


def seed(data_dir: Path, memories: int, conversations: int, messages: int) -> None:
    """Memories and conversations (``big_lists.seed``), then summaries and profile revisions."""
    from etos_desktop.core.profile import store as profile_store
    from etos_desktop.core.storage.database import Database
    from etos_desktop.core.summaries import store as summary_store

    if memories or conversations:
        big_lists.seed(data_dir, memories, conversations, messages=messages, longest=100 * messages)
    if not conversations:
        return
    db = Database(data_dir / "etos.db")
    db.open()

    def fill(session: Any) -> None:
        from sqlmodel import select

        from etos_desktop.core.storage.tables import ConversationRow

        ids = session.exec(select(ConversationRow.id).order_by(ConversationRow.id)).all()
        for n, conversation_id in enumerate(ids[: min(300, len(ids))]):
            summary_store.write_summary(
                session,
                conversation_id=conversation_id,
                content=f"{SUMMARY_ZH if n % 3 == 0 else SUMMARY_EN} ({n})",
                language="zh" if n % 3 == 0 else "en",
                covers_until=0,
                user_turns=6,
                source="scheduled",
                now=big_lists.NOW - timedelta(hours=n),
            )
        for r in range(20):
            profile_store.write_version(
                session,
                content=(
                    f"## Identity\n- Mia, engineer in Berlin (revision {r})\n\n"
                    f"## Preferences\n- Tea over coffee\n- 喜欢安静的咖啡馆 {r}\n"
                ),
                pinned=(),
                source="scheduled",
                now=big_lists.NOW - timedelta(days=20 - r),
                commit=False,
            )
        session.commit()

    db.call(fill)
    db.close()


async def measure(
    data_dir: Path, memory_steps: bool, profile: Sequence[str] = ()
) -> dict[str, float]:
    """Start the app on ``data_dir`` and run the steps; the figures by name."""
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import EtosApp
    from tests.helpers.fake_openai_server import FakeOpenAIServer, Text
    from tests.helpers.qt_async import expect_signal
    from tests.helpers.stack import fast_provider_factory

    qt_app = QApplication.instance()
    probe = big_lists.Probe(profile)
    out: dict[str, float] = {}
    with FakeOpenAIServer() as server:
        env = {
            "ETOS_DATA_DIR": str(data_dir),
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "fake-chat",
            "HOME": str(data_dir),
        }
        app: Any = None

        async def start() -> None:
            nonlocal app
            app = EtosApp(
                qt_app, env, local_candidates=[], provider_factory=fast_provider_factory([])
            )
            app.settings.set("memory.embedder", "keywords")
            app.settings.set("chat.auto_title", False)
            app.window.resize(1100, 760)
            app.window.show()
            await asyncio.sleep(0)
            await app.start()
            await app.controller.wait_idle()

        out["start_s"], out["start_stall"], _ = await probe.step(start)
        await asyncio.sleep(0.3)
        controller = app.controller

        newest, oldest = await app.db.run(_newest_and_oldest)

        def opener(conversation_id: int | None) -> Any:
            async def open_it() -> None:
                if conversation_id is None:
                    return
                opened = expect_signal(controller.conversation_opened)
                controller.open_conversation(conversation_id)
                await opened
                await asyncio.sleep(0)  # the frame that paints it

            return open_it

        # A short one first (what opening any conversation costs), then the longest.
        out["short_s"], out["short_stall"], _ = await probe.step(opener(oldest))
        await controller.wait_idle()
        out["open_s"], out["open_stall"], _ = await probe.step(opener(newest))
        await controller.wait_idle()

        text = stall.reply_text(400)
        server.script(Text(text, chunks=400, delay=0.01))

        async def stream_reply() -> None:
            done = expect_signal(controller.reply_finished)
            app.window.chat.composer.setPlainText("stream please")
            app.window.chat.send_button.click()
            await asyncio.wait_for(done, 120)
            await asyncio.sleep(0.5)  # the finished reply is laid out as one then

        out["stream_s"], out["stream_stall"], _ = await probe.step(stream_reply)
        await controller.wait_idle()

        dialog: Any = None

        async def open_dialog() -> None:
            nonlocal dialog
            dialog = app.open_settings()
            dialog.resize(1000, 700)
            await asyncio.sleep(0)

        out["dialog_s"], out["dialog_stall"], _ = await probe.step(open_dialog)
        worst_page = (0.0, 0.0, "")
        for name in dialog.page_names():

            async def show(page: str = name) -> None:
                dialog.show_page(page)
                await dialog.wait_idle()
                await asyncio.sleep(0)

            seconds, worst, _ = await probe.step(show)
            out[f"pg_{name}_s"], out[f"pg_{name}_stall"] = seconds, worst
            if worst >= worst_page[1]:
                worst_page = (seconds, worst, name)
        out["pages_s"] = max(v for k, v in out.items() if k.startswith("pg_") and k.endswith("_s"))
        out["pages_stall"] = worst_page[1]
        dialog.reject()
        await asyncio.sleep(0.1)

        if memory_steps:
            await big_lists.memory_steps(app, probe, out)
        app.window.close()
        await app.shutdown()
    return out


def _newest_and_oldest(session: Any) -> tuple[int | None, int | None]:
    from sqlmodel import select

    from etos_desktop.core.storage.tables import ConversationRow

    ids = session.exec(select(ConversationRow.id).order_by(ConversationRow.updated_at)).all()
    return (ids[-1], ids[0]) if ids else (None, None)


STEPS = (
    ("start (ready)", "start"),
    ("open a short one", "short"),
    ("open largest", "open"),
    ("stream a reply", "stream"),
    ("open Settings", "dialog"),
    ("slowest page", "pages"),
    ("Memory first rows", "first"),
    ("Memory scroll end", "scroll"),
    ("Memory search", "search"),
    ("select all+archive", "archive"),
    ("open Summaries", "summaries"),
)


def report(big: list[dict[str, float]], empty: list[dict[str, float]]) -> None:
    """Medians over rounds, the ratio against the empty store, and every round's figures."""

    def med(runs: list[dict[str, float]], key: str) -> float | None:
        values = [r[key] for r in runs if key in r]
        return statistics.median(values) if values else None

    print("\nstep                 time ms (× empty)      worst stall ms (× empty)")
    for label, key in STEPS:
        time_key = "search_settle_s" if key == "search" else f"{key}_s"
        t, s = med(big, time_key), med(big, f"{key}_stall")
        if t is None or s is None:
            continue
        bt, bs = med(empty, time_key), med(empty, f"{key}_stall")
        ratio_t = f"×{t / max(bt, 1e-4):5.1f}" if bt is not None else "   —  "
        ratio_s = f"×{s / max(bs, 0.1):5.1f}" if bs is not None else "   —  "
        print(f"  {label:<19} {1000 * t:8.1f} ({ratio_t})     worst {s:7.1f} ({ratio_s})")
    key_stall = med(big, "key_stall")
    if key_stall is not None:
        print(f"  {'per keystroke':<19} worst {key_stall:7.1f} ms")
    pages = sorted(k[3:-2] for k in big[0] if k.startswith("pg_") and k.endswith("_s"))
    print(
        "  pages: "
        + ", ".join(
            f"{p} {1000 * (med(big, f'pg_{p}_s') or 0):.0f} ms / worst {med(big, f'pg_{p}_stall'):.0f}"
            for p in pages
        )
    )
    for r in big:
        print("    round:", {k: round(v, 3) for k, v in r.items()})


def main() -> int:
    """Seed the big and the empty store, then measure each in rounds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="STEP",
        help="profile a step of the big store on the GUI thread (start, open_it, stream_reply, "
        "open_dialog, show, open_memory, scroll_to_end, select_all_and_archive, open_summaries)",
    )
    args = parser.parse_args()
    print(f"load average at start: {retrieval_speed.load_average()}")

    async def run() -> None:
        with tempfile.TemporaryDirectory(prefix="etos-big-store-") as tmp:
            big = Path(tmp) / "big"
            big.mkdir()
            started = time.perf_counter()
            seed(big, args.memories, args.conversations, args.messages)
            print(
                f"seeded {args.memories} memories, {args.conversations} conversations × "
                f"{args.messages} messages (the newest {100 * args.messages}), 300 summaries, "
                f"20 profile revisions in {time.perf_counter() - started:.1f} s"
            )
            figures: dict[str, list[dict[str, float]]] = {"big": [], "empty": []}
            for round_no in range(args.rounds):
                for name in ("empty", "big"):
                    copy = Path(tmp) / f"{name}-{round_no}"
                    copy.mkdir()
                    if name == "big":
                        (copy / "etos.db").write_bytes((big / "etos.db").read_bytes())
                    print(f"  round {round_no + 1}, {name} store…", flush=True)
                    figures[name].append(
                        await measure(
                            copy,
                            memory_steps=name == "big",
                            profile=args.profile if name == "big" else (),
                        )
                    )
            report(figures["big"], figures["empty"])

    run_on_qasync(run)
    print(f"\nload average at end: {retrieval_speed.load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
