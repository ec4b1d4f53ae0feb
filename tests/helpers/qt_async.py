"""Awaiting Qt signals from async tests without nesting a Qt event loop (STYLE recipe 2)."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import SignalInstance


async def wait_signal(signal: SignalInstance, timeout: float = 10.0) -> tuple[Any, ...]:
    """Await the next emission of ``signal`` without nesting a Qt event loop (recipe 2)."""
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def on_emit(*args: Any) -> None:
        if not future.done():
            future.set_result(args)

    signal.connect(on_emit)
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        signal.disconnect(on_emit)


def expect_signal(signal: SignalInstance) -> asyncio.Future[tuple[Any, ...]]:
    """Connect now, resolve on the next emission: call before the action that emits.

    Await the result with ``asyncio.wait_for(future, timeout)``.
    """
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def on_emit(*args: Any) -> None:
        if not future.done():
            future.set_result(args)
        signal.disconnect(on_emit)

    signal.connect(on_emit)
    return future
