"""Start-up benchmark: process start → first frame of the main window with the list filled.

Run: ``python tests/bench/startup.py [--runs 5]``. Prints, for an empty data dir and for one with
1,000 conversations × 50 messages, the median time and RSS, and the ratio against a bare PySide6
window measured in the same run (target ≤ 1.5×), and from when the composer takes keys ("typing
from"). Offscreen unless DISPLAY is set.
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
        print(json.dumps({"first_frame": time.time() - t0, "list_filled": time.time() - t0, "services_ready": time.time() - t0, "typing": time.time() - t0, "rss": rss}))
        app.quit()
    QTimer.singleShot(0, done)
    app.exec()
    """
)

APP = textwrap.dedent(
    """
    import json, sys, time
    t0 = float(sys.argv[1])
    expected = int(sys.argv[2])
    from etos_desktop import app as etos_app

    qt_app, etos, _args = etos_app.show_first_frame([])
    first_frame = time.time() - t0
    marks = {"first_frame": first_frame}
    # When a person can start typing: the composer takes keys from the first frame, or once
    # the services are up.
    typing_at_first_frame = etos.window.chat.composer.isEnabled()

    def check():
        if "list_filled" not in marks and etos.window.sidebar.model.rowCount() >= expected:
            # The frame with the list is painted on the next pass of the event loop.
            qt_app.processEvents()
            marks["list_filled"] = time.time() - t0
            marks["rss"] = int(open("/proc/self/statm").read().split()[1]) * 4096

    etos.window.sidebar.model.modelReset.connect(check)
    check()

    async def run():
        import asyncio
        etos.closed = asyncio.Event()
        await etos.start()
        check()
        marks["services_ready"] = time.time() - t0
        marks["typing"] = first_frame if typing_at_first_frame else marks["services_ready"]
        await etos.shutdown()

    import asyncio, qasync
    loop = qasync.QEventLoop(qt_app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(run())
    print(json.dumps(marks))
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
        results: dict[str, dict[str, float]] = {}
        for name, script, env, extra in cases:
            measure(script, env, *extra)  # warm the OS file cache
            runs = [measure(script, env, *extra) for _ in range(args.runs)]
            results[name] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        bare = results["bare PySide6 window"]
        print(f"medians of {args.runs} runs; ratios against the bare window's first frame and RSS")
        for name, r in results.items():
            print(
                f"{name:22s} first frame {r['first_frame'] * 1000:5.0f} ms "
                f"({r['first_frame'] / bare['first_frame']:4.2f}x) | list filled "
                f"{r['list_filled'] * 1000:5.0f} ms ({r['list_filled'] / bare['first_frame']:4.2f}x) | "
                f"services ready {r['services_ready'] * 1000:5.0f} ms | typing from "
                f"{r['typing'] * 1000:5.0f} ms | RSS at list "
                f"{r['rss'] / 2**20:5.1f} MiB ({r['rss'] / bare['rss']:4.2f}x)"
            )


if __name__ == "__main__":
    main()
