"""Start-up benchmark: process start → first frame of the main window with the list filled.

Run: ``python tests/bench/startup.py [--runs 5]``. Prints, for an empty data dir and for one with
1,000 conversations × 50 messages, the median time and RSS, and the ratio against a bare PySide6
window measured in the same run (target ≤ 1.5×). Offscreen unless DISPLAY is set.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BARE = textwrap.dedent(
    """
    import json, sys, time
    t0 = float(sys.argv[1])
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow
    app = QApplication([])
    window = QMainWindow()
    window.resize(1000, 700)
    window.show()
    def done():
        rss = int(open("/proc/self/statm").read().split()[1]) * 4096
        print(json.dumps({"seconds": time.time() - t0, "rss": rss}))
        app.quit()
    QTimer.singleShot(0, done)
    app.exec()
    """
)

APP = textwrap.dedent(
    """
    import asyncio, json, os, sys, time
    t0 = float(sys.argv[1])
    import qasync
    from PySide6.QtWidgets import QApplication
    from etos_desktop.app import EtosApp

    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def run():
        etos = EtosApp(app, os.environ, local_candidates=[])
        filled = asyncio.get_running_loop().create_future()
        etos.window.show()
        expected = int(sys.argv[2])

        def check():
            if etos.window.sidebar.model.rowCount() >= expected and not filled.done():
                filled.set_result(None)

        etos.window.sidebar.model.modelReset.connect(check)
        check()
        task = asyncio.ensure_future(etos.start())
        await filled
        await asyncio.sleep(0)  # one more turn: the frame with the list is painted
        seconds = time.time() - t0
        rss = int(open("/proc/self/statm").read().split()[1]) * 4096
        await task
        print(json.dumps({"seconds": seconds, "rss": rss}))
        await etos.shutdown()

    with loop:
        loop.run_until_complete(run())
    """
)


def seed(data_dir: Path, conversations: int, messages: int) -> None:
    """Fill a data dir's database through the app's own storage layer."""
    sys.path.insert(0, str(ROOT))
    from etos_desktop.core.storage.database import Database
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow

    db = Database(data_dir / "etos.db")
    db.open()
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def fill(session) -> None:
        for c in range(conversations):
            moment = start + timedelta(minutes=c)
            conv = ConversationRow(
                title=f"Conversation {c} 对话", created_at=moment, updated_at=moment
            )
            session.add(conv)
            session.flush()
            session.add_all(
                MessageRow(
                    conversation_id=conv.id,
                    role="user" if m % 2 == 0 else "assistant",
                    content=f"message {m} of conversation {c}: " + "lorem ipsum " * 20,
                    created_at=moment + timedelta(seconds=m),
                )
                for m in range(messages)
            )
        session.commit()

    db.call(fill)
    db.close()


def measure(script: str, env: dict[str, str], *args: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", script, str(time.time()), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
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
        )
        base_env.pop("OPENAI_API_KEY", None)
        empty = Path(tmp) / "empty"
        full = Path(tmp) / "full"
        empty.mkdir()
        full.mkdir()
        t = time.perf_counter()
        seed(full, 1000, 50)
        print(f"seeded 1,000 conversations x 50 messages in {time.perf_counter() - t:.1f} s")
        # A provider in the environment so first-run settings do not open.
        provider_env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "m"}
        cases = [
            ("bare PySide6 window", BARE, base_env, ()),
            (
                "app, empty data dir",
                APP,
                {**base_env, **provider_env, "ETOS_DATA_DIR": str(empty)},
                ("0",),
            ),
            (
                "app, 1,000 x 50",
                APP,
                {**base_env, **provider_env, "ETOS_DATA_DIR": str(full)},
                ("1000",),
            ),
        ]
        results: dict[str, tuple[float, float]] = {}
        for name, script, env, extra in cases:
            measure(script, env, *extra)  # warm the OS file cache
            runs = [measure(script, env, *extra) for _ in range(args.runs)]
            seconds = statistics.median(r["seconds"] for r in runs)
            rss = statistics.median(r["rss"] for r in runs)
            results[name] = (seconds, rss)
        bare_s, bare_rss = results["bare PySide6 window"]
        for name, (seconds, rss) in results.items():
            print(
                f"{name:24s} first frame {seconds * 1000:7.0f} ms ({seconds / bare_s:4.2f}x bare)"
                f"   RSS {rss / 2**20:6.1f} MiB ({rss / bare_rss:4.2f}x bare)"
            )


if __name__ == "__main__":
    main()
