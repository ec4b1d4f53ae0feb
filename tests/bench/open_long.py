"""Opening a 5,000-message conversation: click → its last messages on screen (target ≤ 300 ms).

Run: ``python tests/bench/open_long.py [--runs 5]``. Offscreen unless DISPLAY is set. Prints the
median and worst time from ``open_conversation`` to the frame that shows the newest page,
against opening a 10-message conversation in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import run_on_qasync


def seed(db, messages: int, title: str) -> int:
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow

    start = datetime(2026, 1, 1, tzinfo=UTC)

    def fill(session) -> int:
        conv = ConversationRow(title=title, created_at=start, updated_at=start)
        session.add(conv)
        session.flush()
        session.add_all(
            MessageRow(
                conversation_id=conv.id,
                role="user" if i % 2 == 0 else "assistant",
                content=f"Message {i}: some **Markdown** text with `code` and 中文内容. " * 3,
                created_at=start + timedelta(seconds=i),
            )
            for i in range(messages)
        )
        session.commit()
        return int(conv.id)

    return db.call(fill)


async def run(runs: int) -> None:
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import EtosApp
    from tests.helpers.qt_async import expect_signal

    qt_app = QApplication.instance()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"ETOS_DATA_DIR": tmp, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "HOME": tmp}
        app = EtosApp(qt_app, env, local_candidates=[])
        app.settings.set("memory.embedder", "keywords")
        app.window.resize(1000, 700)
        app.window.show()
        await app.start()
        long_id = await asyncio.get_running_loop().run_in_executor(None, seed, app.db, 5000, "long")
        short_id = await asyncio.get_running_loop().run_in_executor(None, seed, app.db, 10, "short")
        results: dict[str, list[float]] = {"10 messages": [], "5,000 messages": []}
        for _ in range(runs):
            for name, cid in (("10 messages", short_id), ("5,000 messages", long_id)):
                opened = expect_signal(app.controller.conversation_opened)
                started = time.perf_counter()
                app.controller.open_conversation(cid)
                await opened
                # The layout and paint of the page just shown: a pass of the loop (a nested
                # processEvents() here runs qasync's tasks inside this one and breaks them),
                # then the window painted at once.
                await asyncio.sleep(0)
                app.window.repaint()
                results[name].append(time.perf_counter() - started)
                await app.controller.wait_idle()
        widgets = app.window.chat.widget_count()
        app.window.close()
        await app.shutdown()
    for name, times in results.items():
        print(
            f"open {name:15s} median {statistics.median(times) * 1000:6.1f} ms, "
            f"worst {max(times) * 1000:6.1f} ms"
        )
    ratio = statistics.median(results["5,000 messages"]) / statistics.median(results["10 messages"])
    print(
        f"messages on screen after opening the long one: {widgets}; long/short ratio {ratio:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    run_on_qasync(lambda: run(args.runs))


if __name__ == "__main__":
    main()
