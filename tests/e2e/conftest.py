"""The end-to-end scenario: the same qasync loop and UI guards as the UI tests."""

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
