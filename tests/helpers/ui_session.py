"""What every test of real widgets shares: a qasync loop, and guards that fail it on problems.

UI tests run on a qasync loop so ``@asyncSlot`` coroutines really execute (STYLE recipe 1). Every
one is guarded: an exception that reaches ``sys.excepthook`` (an ``@asyncSlot`` or a task), a Qt
warning, or an ERROR log line fails it, unless the test declares it with
``ui_guard.expect(pattern)``. ``tests/ui/conftest.py`` and ``tests/e2e/conftest.py`` take these
hooks and fixtures from here.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType

import pytest
import qasync
from PySide6.QtCore import QLocale, QtMsgType
from PySide6.QtWidgets import QApplication

from etos_desktop.app import install_asyncgen_hooks

#: Qt messages that say nothing about the app (the offscreen plugin's).
_IGNORED_QT = (re.compile(r"propagateSizeHints"), re.compile(r"This plugin does not support"))


#: The loop of the test running now (the factory below makes one per test).
_current_loop: list[asyncio.AbstractEventLoop] = []


def _qasync_loop() -> asyncio.AbstractEventLoop:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app, already_running=False)
    # As the app does (app.install_asyncgen_hooks): qasync does not finalise async generators.
    install_asyncgen_hooks(loop)
    _current_loop[:] = [loop]
    return loop


async def _settle(quiet: float, limit: float) -> None:
    me = asyncio.current_task()
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while loop.time() < end:
        pending = {t for t in asyncio.all_tasks() if t is not me}
        if not pending:
            return
        done, _ = await asyncio.wait(pending, timeout=quiet)
        if not done:
            return  # what is left waits for something else: a task that lives on


def settle_loop(quiet: float = 0.05, limit: float = 5.0) -> None:
    """Let the tasks a test left running end, on its loop, before pytest-qt processes events.

    qasync runs the loop's callbacks from Qt timers, so when pytest-qt processes Qt events after
    a test (and before its fixtures are torn down) a task's next step runs with no running loop
    and fails ("no running event loop"): a reload the test's last action started, an indexer
    batch. Run here, those steps run where they belong. A test that leaves a task living on
    (a server, a scheduler) pays ``quiet`` once: 112 of 462 UI tests, ~3 s of the run's wall
    time on 2 workers.
    """
    if not _current_loop:
        return
    loop = _current_loop[0]
    if loop.is_closed() or loop.is_running():
        return
    loop.run_until_complete(_settle(quiet, limit))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[object]:
    """After the test body: settle its loop before pytest-qt's (outer) wrapper processes events."""
    try:
        return (yield)
    finally:
        settle_loop()


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"qasync": _qasync_loop}


@dataclass
class UiGuard:
    """What went wrong during a UI test, and what the test said it expects to go wrong."""

    exceptions: list[BaseException] = field(default_factory=list)
    error_logs: list[str] = field(default_factory=list)
    expected: list[re.Pattern[str]] = field(default_factory=list)

    def expect(self, pattern: str) -> None:
        """Allow exceptions, ERROR log lines and Qt warnings matching ``pattern`` (a regex)."""
        self.expected.append(re.compile(pattern, re.S))

    def _allowed(self, text: str) -> bool:
        return any(p.search(text) for p in self.expected)

    def problems(self, qt_messages: list[str]) -> list[str]:
        found = [f"exception: {e!r}" for e in self.exceptions if not self._allowed(repr(e))]
        found += [f"ERROR log: {m}" for m in self.error_logs if not self._allowed(m)]
        found += [f"Qt: {m}" for m in qt_messages if not self._allowed(m)]
        return found


class _ErrorRecords(logging.Handler):
    def __init__(self, guard: UiGuard) -> None:
        super().__init__(logging.ERROR)
        self.guard = guard

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" [{record.exc_info[1]!r}]"
        self.guard.error_logs.append(text)


@pytest.fixture(autouse=True)
def ui_guard(qtlog: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[UiGuard]:
    """Fail the test on an unhandled task/slot exception, a Qt warning or an ERROR log line."""
    guard = UiGuard()

    def hook(_type: type[BaseException], exc: BaseException, _tb: TracebackType | None) -> None:
        guard.exceptions.append(exc)

    monkeypatch.setattr(sys, "excepthook", hook)
    handler = _ErrorRecords(guard)
    root = logging.getLogger()
    root.addHandler(handler)
    yield guard
    root.removeHandler(handler)
    qt_messages = [
        record.message
        for record in qtlog.records  # type: ignore[attr-defined]
        if record.type in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
        and not any(p.search(record.message) for p in _IGNORED_QT)
    ]
    problems = guard.problems(qt_messages)
    assert not problems, "the UI test hit problems:\n" + "\n".join(problems)


@pytest.fixture(autouse=True)
def keep_loop_when_windows_close(qapp: QApplication) -> Iterator[None]:
    """Closing the last window must not quit the app and stop the qasync loop under a test."""
    before = qapp.quitOnLastWindowClosed()
    qapp.setQuitOnLastWindowClosed(False)
    yield
    qapp.setQuitOnLastWindowClosed(before)


@pytest.fixture(autouse=True)
def restore_look(qapp: QApplication) -> Iterator[None]:
    """Give the next test the look this one started with (a test may switch theme or font)."""
    palette, sheet, font, locale = qapp.palette(), qapp.styleSheet(), qapp.font(), QLocale()
    yield
    QLocale.setDefault(locale)
    if (qapp.styleSheet(), qapp.palette(), qapp.font()) != (sheet, palette, font):
        qapp.setPalette(palette)
        qapp.setFont(font)
        # Set last: with a style sheet, palette and font reach the widgets on its re-polish.
        qapp.setStyleSheet(sheet)


@pytest.fixture(autouse=True)
def collect_garbage_on_gui_thread() -> Iterator[None]:
    """Collect cyclic garbage here, never on a worker thread, where freeing Qt objects crashes.

    What is alive when a test starts (modules, the QApplication, other tests' survivors) is
    frozen out of later collections, as the app does after start-up
    (``GarbageCollector.freeze_startup_objects``): a full collection of the test process's heap
    took 0.4 s, twice per test; the collections now walk only what the test made.
    """
    gc.collect()
    gc.freeze()
    gc.disable()
    yield
    gc.collect()
    gc.enable()
