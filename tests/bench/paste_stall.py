"""Paste stall benchmark: the longest gap in the Qt event loop around a 1 MB and a 10 MB paste.

Run: ``python tests/bench/paste_stall.py [--sizes 1000000,10000000]``. A 5 ms QTimer ticks on the
GUI thread from just before each step until 1 s after it (so the token count that waits for
typing to pause, and the count of a pasted text taken in steps, are inside); the longest
interval between ticks (minus 5 ms) is the worst stall a user would feel. Target ≤ 100 ms.
Offscreen unless DISPLAY is set.

Steps, for each size and for two shapes of text (prose in lines, and one unbroken line, as
minified JSON or base64 is):

- paste: the text is on the clipboard; Ctrl+V in the composer;
- type: 10 keystrokes after it, 30 ms apart;
- send: Send (the large ones are more than the model takes, so they are refused, saying why;
  the 1,000 characters are sent: that line is an ordinary send, the stall tests/bench/stall.py
  is about);
- remove: the pasted text taken out of the draft again;
- open: a conversation holding a message of that size from the user and a reply of that size
  opened from the sidebar (the chat view).

The baseline is the same steps with a 1,000-character paste, in the same run; each line prints
its worst stall and the ratio to the baseline's worst paste.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import TickRecorder, run_on_qasync, worst_ms

SETTLE_S = 1.0
LINE = '{"k":"dGhlIHF1aWNrIGJyb3du","n":12345,"v":[1,2,3]},'
PROSE = "The quick brown fox jumps over the lazy dog; 中文内容也在这里。 " * 12 + "\n"


def text_of(size: int, shape: str) -> str:
    """``size`` characters of prose in lines, or of one line without spaces."""
    unit = LINE if shape == "line" else PROSE
    return (unit * (size // len(unit) + 1))[:size]


def seed(db, title: str, text: str) -> int:
    """A conversation with ``text`` from the user and ``text`` as the reply."""
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow

    start = datetime(2026, 1, 1, tzinfo=UTC)

    def fill(session) -> int:
        conv = ConversationRow(title=title, created_at=start, updated_at=start)
        session.add(conv)
        session.flush()
        user = MessageRow(conversation_id=conv.id, role="user", content=text, created_at=start)
        session.add(user)
        session.flush()
        session.add(
            MessageRow(
                conversation_id=conv.id,
                role="assistant",
                content=text,
                reply_to_id=user.id,
                created_at=start + timedelta(seconds=1),
            )
        )
        session.commit()
        return int(conv.id)

    return db.call(fill)


async def run(sizes: list[int]) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import EtosApp
    from tests.helpers.fake_openai_server import FakeOpenAIServer

    qt_app = QApplication.instance()
    recorder = TickRecorder()
    results: list[tuple[str, float]] = []

    async def measure(name: str, action: Callable[[], Awaitable[None] | None]) -> None:
        recorder.start()
        started = time.perf_counter()
        outcome = action()
        if outcome is not None:
            await outcome
        took = time.perf_counter() - started
        await asyncio.sleep(SETTLE_S)
        worst = worst_ms(recorder.stop())
        results.append((name, worst))
        print(f"{name:34s} worst {worst:7.1f} ms   (step took {took * 1000:7.1f} ms)", flush=True)

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        env = {
            "ETOS_DATA_DIR": tmp,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "fake-chat",
            "HOME": tmp,
        }
        app = EtosApp(qt_app, env, local_candidates=[], background_jobs=False)
        app.settings.set("chat.auto_title", False)
        app.settings.set("memory.embedder", "keywords")
        app.window.resize(1000, 700)
        app.window.show()
        await app.start()
        await app.controller.wait_idle()
        chat = app.window.chat
        composer = chat.composer
        loop = asyncio.get_running_loop()
        cases = [("1,000 characters", 1000, "prose")]
        for size in sizes:
            label = f"{size / 1_000_000:g} MB"
            cases += [(f"{label} of lines", size, "prose"), (f"{label}, one line", size, "line")]
        for name, size, shape in cases:
            text = text_of(size, shape)
            # Copied in another program: on the clipboard before the step.
            QGuiApplication.clipboard().setText(text)
            composer.setFocus()
            await asyncio.sleep(0.2)

            def paste() -> None:
                QTest.keyClick(composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)

            async def type_keys() -> None:
                for _ in range(10):
                    QTest.keyClick(composer, Qt.Key.Key_X)
                    await asyncio.sleep(0.03)

            def remove() -> None:
                # (getattr: the same script measures the code before pasted texts existed.)
                for paste_widget in getattr(chat, "pasted_texts", list)():
                    paste_widget.remove_button.click()
                composer.selectAll()
                QTest.keyClick(composer, Qt.Key.Key_Delete)

            await measure(f"{name}: paste", paste)
            await measure(f"{name}: type", type_keys)
            await measure(f"{name}: send", chat.send_button.click)
            await app.controller.wait_idle()
            await measure(f"{name}: remove", remove)
            cid = await loop.run_in_executor(None, seed, app.db, name, text)
            await app.controller.refresh_conversations()

            async def open_it(cid: int = cid) -> None:
                await app.controller.open_conversation(cid)

            await measure(f"{name}: open in the chat view", open_it)
            await app.controller.wait_idle()
        app.window.close()
        await app.shutdown()

    baseline = next(worst for name, worst in results if name.endswith("characters: paste"))
    print()
    print(f"baseline (1,000-character paste): worst {baseline:.1f} ms")
    for name, worst in results:
        print(f"{name:34s} worst {worst:7.1f} ms  {worst / max(baseline, 0.1):6.1f}x baseline")
    print(f"worst of all: {max(worst for _name, worst in results):.1f} ms (target ≤ 100 ms)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000000,10000000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    run_on_qasync(lambda: run(sizes))


if __name__ == "__main__":
    main()
