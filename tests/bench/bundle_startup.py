"""Start-up of the packaged app against the venv run, measured the same way in the same run.

Run: ``python tests/bench/bundle_startup.py [--bundle PATH] [--runs 5]`` after
``python packaging/build.py`` (default bundle: ``dist/etos-desktop/etos-desktop``; pass
``--bundle /usr/bin/etos-desktop`` for the installed ``.deb``). Offscreen unless DISPLAY is set.

Both are started as a user starts them — ``python -m etos_desktop`` from this checkout and the
bundle's launcher — with an empty data folder and with one holding 1,000 conversations × 50
messages, and timed from outside, since the bundle cannot run ``startup.py``'s in-process probe:

* first frame: Qt's own paint log (``qt.widgets.painting``, timestamped on the monotonic clock
  with ``QT_MESSAGE_PATTERN``) says when the main window's first full frame was flushed; it is
  the moment ``show_first_frame`` returns in ``startup.py``. The log adds the same few hundred
  lines to both runs.
* RSS at first frame: ``/proc/<pid>/status`` read as soon as that line arrives.
* embedder ready: the app's log line "memory embedder: …", the end of its background start-up
  (services, then the embedded model loaded), and the RSS then.

Prints medians and the bundle/venv ratios (the target for the first frame is ≤ 2×).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.startup import seed  # noqa: E402  (the same data as startup.py)

FLUSH = re.compile(r"^\s*(\d+\.\d+) qt\.widgets\.painting Flushing QRegion\(.* of MainWindow\(")
TIMEOUT = 120.0


def rss(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of a running process, in bytes (0 once it has gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(command: list[str], env: dict[str, str], data_dir: Path) -> dict[str, float]:
    """Start ``command``, wait for its first frame and its embedder, stop it; return the figures."""
    log = data_dir / "logs" / "etos.log"
    marks: dict[str, float] = {}
    first_frame = threading.Event()
    started = time.monotonic()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            match = FLUSH.match(line)
            if match and not first_frame.is_set():
                marks["rss_first_frame"] = rss(process.pid)
                marks["first_frame"] = float(match.group(1)) - started
                first_frame.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        if not first_frame.wait(TIMEOUT):
            raise RuntimeError(f"{command[0]}: no first frame within {TIMEOUT:.0f} s")
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if log.exists() and "memory embedder: " in log.read_text(errors="replace"):
                marks["ready"] = time.monotonic() - started
                marks["rss_ready"] = rss(process.pid)
                break
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {process.returncode}")
            time.sleep(0.01)
        else:
            raise RuntimeError(f"{command[0]}: no embedder within {TIMEOUT:.0f} s")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(5)
    return marks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundle", default=str(ROOT / "dist" / "etos-desktop" / "etos-desktop"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    bundle = Path(args.bundle)
    if not bundle.exists():
        raise SystemExit(f"{bundle} not found: build it with python packaging/build.py")

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OPENAI_", "ETOS_", "PYTHON", "QT_"))
        }
        env.update(
            HOME=str(home),
            XDG_DATA_HOME=str(home / ".local/share"),
            XDG_CONFIG_HOME=str(home / ".config"),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            # A provider in the environment so first-run settings do not open (as startup.py).
            OPENAI_BASE_URL="http://127.0.0.1:9/v1",
            OPENAI_MODEL="m",
            QT_LOGGING_RULES="qt.widgets.painting=true",
            QT_MESSAGE_PATTERN="%{time boot} %{category} %{message}",
        )
        if not env.get("DISPLAY"):
            env["QT_QPA_PLATFORM"] = "offscreen"
        seeded = Path(tmp) / "seeded"
        started = time.perf_counter()
        seed(seeded, 1000, 50)
        print(f"seeded 1,000 conversations x 50 messages in {time.perf_counter() - started:.1f} s")

        apps = {
            "venv": ([sys.executable, "-m", "etos_desktop"], {**env, "PYTHONPATH": str(ROOT)}),
            "bundle": ([str(bundle)], env),
        }
        results: dict[tuple[str, str], dict[str, float]] = {}
        for number, case in enumerate(("empty", "1,000 x 50")):
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in apps}
            # Alternate the two so that the machine's load hits both alike; run 0 warms caches.
            for run in range(args.runs + 1):
                for name, (command, app_env) in apps.items():
                    data = Path(tmp) / f"data-{number}-{name}-{run}"
                    if case != "empty":
                        subprocess.run(["cp", "-a", str(seeded), str(data)], check=True)
                    marks = measure(command, {**app_env, "ETOS_DATA_DIR": str(data)}, data)
                    if run:
                        runs[name].append(marks)
            for name, marks_list in runs.items():
                results[(case, name)] = {
                    key: statistics.median(m[key] for m in marks_list) for key in marks_list[0]
                }

    print(f"bundle: {bundle}")
    print(f"medians of {args.runs} runs; ratio = bundle / venv in the same run")
    for case in ("empty", "1,000 x 50"):
        venv, packed = results[(case, "venv")], results[(case, "bundle")]
        for name, r in (("venv", venv), ("bundle", packed)):
            print(
                f"{case:10s} {name:6s} first frame {r['first_frame'] * 1000:5.0f} ms | "
                f"RSS then {r['rss_first_frame'] / 2**20:5.1f} MiB | embedder ready "
                f"{r['ready'] * 1000:5.0f} ms | RSS then {r['rss_ready'] / 2**20:5.1f} MiB"
            )
        print(
            f"{case:10s} ratio  first frame {packed['first_frame'] / venv['first_frame']:.2f}x "
            f"(target <= 2x) | RSS at first frame "
            f"{packed['rss_first_frame'] / venv['rss_first_frame']:.2f}x | ready "
            f"{packed['ready'] / venv['ready']:.2f}x | RSS ready "
            f"{packed['rss_ready'] / venv['rss_ready']:.2f}x"
        )


if __name__ == "__main__":
    main()
