"""UI tests: a qasync loop and the UI guards (``tests/helpers/ui_session.py``) for each."""

from tests.helpers.ui_session import (
    UiGuard,
    collect_garbage_on_gui_thread,
    keep_loop_when_windows_close,
    pytest_asyncio_loop_factories,
    pytest_runtest_call,
    restore_look,
    ui_guard,
)

__all__ = [
    "UiGuard",
    "collect_garbage_on_gui_thread",
    "keep_loop_when_windows_close",
    "pytest_asyncio_loop_factories",
    "pytest_runtest_call",
    "restore_look",
    "ui_guard",
]
