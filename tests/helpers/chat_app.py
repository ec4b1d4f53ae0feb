"""The whole app on the test's qasync loop, and driving its chat as a person would."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication

from etos_desktop.app import EtosApp
from etos_desktop.core.clock import Clock
from tests.helpers.embedders import shared_use
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.qt_async import expect_signal
from tests.helpers.stack import fast_provider_factory
from tests.helpers.ui_driver import click, type_text

TIMEOUT = 15


async def start_app(
    qapp: QApplication,
    server: FakeOpenAIServer,
    data_dir: Path,
    **options: Any,
) -> EtosApp:
    """Start the app on ``data_dir`` with the Environment provider pointing at ``server``.

    The app is shown (``first_frame_app``) and its services started; ``options`` are those of
    ``first_frame_app``.
    """
    app = first_frame_app(qapp, server, data_dir, **options)
    await app.start()
    if app.jobs is not None:
        # The app starts its jobs in the background; a test starts once they are derived.
        await asyncio.wait_for(app.jobs.wait_started(), TIMEOUT)
    return app


def first_frame_app(
    qapp: QApplication,
    server: FakeOpenAIServer,
    data_dir: Path,
    *,
    embedder: str = "keywords",
    auto_title: bool = False,
    summaries: bool = False,
    per_message: str = "fixed",
    env: dict[str, str] | None = None,
    clock: Clock | None = None,
    **options: Any,
) -> EtosApp:
    """The app at its first frame: its window shown, its services not started (``start()``).

    The Environment provider points at ``server``. Retry waits are recorded in ``app.sleeps``
    instead of slept. Titles and summaries (their background requests) are off unless asked
    for, so a test's scripted replies and request counts are its own. Memories are chosen by
    retrieval (``per_message="fixed"``) unless asked: the app's default, Automatic, sends a
    test's small store whole, and most tests pin what retrieval chooses. The built-in
    embedder, when chosen, is the process's one loaded model (``shared_use``). ``options`` go
    to ``EtosApp``.
    """
    environment = {
        "ETOS_DATA_DIR": str(data_dir),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_MODEL": "fake-chat",
        **(env or {}),
    }
    sleeps: list[float] = []
    options.setdefault("use_factory", shared_use)
    app = EtosApp(
        qapp,
        environment,
        local_candidates=[],
        provider_factory=fast_provider_factory(sleeps),
        clock=clock,
        **options,
    )
    app.sleeps = sleeps  # type: ignore[attr-defined]
    # Keyword-only memory unless asked: embedding with the built-in model costs time too.
    app.settings.set("memory.embedder", embedder)
    app.settings.set("chat.auto_title", auto_title)
    app.settings.set("summaries.enabled", summaries)
    app.settings.set("memory.per_message", per_message)
    app.window.show()
    return app


async def stop_app(app: EtosApp) -> None:
    """Close the window and shut the services down."""
    app.window.close()
    await app.shutdown()
    app.window.deleteLater()


async def idle(app: EtosApp) -> None:
    """Wait until every task the chat controller and the background jobs started has ended."""
    assert app.controller is not None

    async def settle() -> None:
        assert app.controller is not None
        while True:
            await app.controller.wait_idle()
            if app.jobs is not None:
                await app.jobs.wait_idle()
            # A job's notification may have started controller work (a title shown).
            await asyncio.sleep(0)
            if not len(app.controller._tasks) and (app.jobs is None or not app.jobs.busy()):
                return

    await asyncio.wait_for(settle(), TIMEOUT)


async def first_outcome(app: EtosApp) -> tuple[Any, ...]:
    """``("finished", row)`` or ``("failed", row, error)`` of the next reply."""
    assert app.controller is not None
    ok = expect_signal(app.controller.reply_finished)
    bad = expect_signal(app.controller.reply_failed)
    done, pending = await asyncio.wait({ok, bad}, return_when=asyncio.FIRST_COMPLETED)
    for future in pending:
        future.cancel()
    return ("finished", *next(iter(done)).result()) if ok in done else ("failed", *bad.result())


async def send(app: EtosApp, text: str) -> tuple[Any, ...]:
    """Type ``text`` in the composer, click Send, and wait for the reply's outcome."""
    chat = app.window.chat
    outcome = asyncio.ensure_future(first_outcome(app))
    if len(text) <= 200 and "\n" not in text:
        await type_text(chat.composer, text)
    else:  # as a paste: typed, Enter would send the first line
        chat.composer.setPlainText(text)
    await click(chat.send_button)
    result = await asyncio.wait_for(outcome, TIMEOUT)
    await idle(app)
    return result


async def history(app: EtosApp) -> list[Any]:
    """The open conversation's current history, from the database."""
    assert app.controller is not None
    assert app.controller.current is not None
    return await app.controller.repo.current_history(app.controller.current.id)
