"""Regression guard for the PySide6 6.12.0 ``Signal.emit()`` refcount bug.

pyside6-essentials 6.12.0 on CPython 3.11 drops one reference to ``True`` on every
``Signal.emit()`` (it is the value ``emit()`` returns). After several hundred emits (as many as
True had references to begin with) the count reaches zero and the interpreter aborts with
"Fatal Python error: bool_dealloc". qasync emits a signal on every thread wake-up, so the app
dies within seconds. pyproject.toml pins
``pyside6-essentials<6.12``; these tests fail if that pin is lifted onto a broken release.

The emits run in a subprocess because the bug kills the interpreter outright.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EMITS = 5_000
CHUNK = 250
# Allowed drift in sys.getrefcount(True) either way: a handful of references may come and go with
# interpreter caches. The bug loses one per emit, so it overshoots this by thousands.
NOISE = 5

# Prints one JSON object per line: a "start" record, a "progress" record every CHUNK emits and a
# final "done" record. Progress records let a crashing run still show the refcount falling.
SCRIPT = """
import json
import sys

from PySide6.QtCore import QCoreApplication, QObject, Signal


class Emitter(QObject):
    none_sig = Signal()
    bool_sig = Signal(bool)
    object_sig = Signal(object)


def report(**fields):
    print(json.dumps(fields), flush=True)


kind, emits, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
app = QCoreApplication([])
emitter = Emitter()
calls = 0


def slot(*args):
    global calls
    calls += 1


signal = getattr(emitter, kind + "_sig")
signal.connect(slot)
args = {"none": (), "bool": (True,), "object": (True,)}[kind]

report(event="start", refcount=sys.getrefcount(True))
for i in range(1, emits + 1):
    signal.emit(*args)
    if i % chunk == 0:
        report(event="progress", emits=i, refcount=sys.getrefcount(True))
report(event="done", emits=emits, calls=calls, refcount=sys.getrefcount(True))
"""


def _pyside_version() -> str:
    for dist in ("pyside6-essentials", "PySide6"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    import PySide6

    return PySide6.__version__


def _run_emitter(kind: str, home: Path) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("XDG_", "QT_")) and key != "HOME"
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_RUNTIME_DIR=str(home / "runtime"),
        QT_QPA_PLATFORM="offscreen",
    )
    (home / "runtime").mkdir(mode=0o700)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, kind, str(EMITS), str(CHUNK)],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc, records


@pytest.mark.parametrize("kind", ["none", "bool", "object"])
def test_signal_emit_does_not_leak_true(kind: str, tmp_path: Path) -> None:
    proc, records = _run_emitter(kind, tmp_path)
    trace = ", ".join(f"{r.get('emits', 0)}:{r['refcount']}" for r in records)
    detail = (
        f"PySide6 {_pyside_version()}, signal kind {kind!r}, exit code {proc.returncode}\n"
        f"sys.getrefcount(True) by emit count: {trace}\n"
        f"stderr tail:\n{proc.stderr[-2000:]}"
    )
    assert records, f"emitter subprocess printed nothing\n{detail}"
    start = records[0]
    assert start["event"] == "start", detail
    # Checked before the exit code: on 6.12.0 the fall is the cause and the abort its effect.
    lowest = min(r["refcount"] for r in records)
    assert lowest >= start["refcount"] - NOISE, f"refcount of True fell during emits\n{detail}"
    returncode = proc.returncode  # asserting on a local keeps the failure message short
    assert returncode == 0, f"emitter subprocess failed\n{detail}"
    done = records[-1]
    assert done["event"] == "done", detail
    assert done["calls"] == EMITS, f"slot ran {done['calls']} times, expected {EMITS}\n{detail}"
    assert done["refcount"] <= start["refcount"] + NOISE, f"refcount of True grew\n{detail}"


def test_pyside_version_is_below_6_12() -> None:
    version = _pyside_version()
    major, minor = (int(part) for part in version.split(".")[:2])
    assert (major, minor) < (6, 12), (
        f"PySide6 {version} is installed, but pyproject.toml pins pyside6-essentials<6.12: "
        "6.12.0 on CPython 3.11 drops a reference to True on every Signal.emit() and aborts "
        "the interpreter (Fatal Python error: bool_dealloc) after several hundred emits, "
        "which qasync reaches within seconds. Only lift the pin once "
        "test_signal_emit_does_not_leak_true passes on the new release."
    )
