"""UI tests run on a qasync loop so ``@asyncSlot`` coroutines really execute (STYLE recipe 1)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator, Mapping

import pytest
import qasync
from PySide6.QtWidgets import QApplication


def _qasync_loop() -> asyncio.AbstractEventLoop:
    app = QApplication.instance() or QApplication([])
    return qasync.QEventLoop(app, already_running=False)


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"qasync": _qasync_loop}


@pytest.fixture(autouse=True)
def keep_loop_when_windows_close(qapp: QApplication) -> Iterator[None]:
    """Closing the last window must not quit the app and stop the qasync loop under a test."""
    before = qapp.quitOnLastWindowClosed()
    qapp.setQuitOnLastWindowClosed(False)
    yield
    qapp.setQuitOnLastWindowClosed(before)


@pytest.fixture(autouse=True)
def collect_garbage_on_gui_thread() -> Iterator[None]:
    """Collect cyclic garbage here, never on a worker thread, where freeing Qt objects crashes."""
    gc.collect()
    gc.disable()
    yield
    gc.collect()
    gc.enable()
