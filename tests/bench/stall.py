"""UI stall benchmark: the longest gap in the Qt event loop while a reply streams at 100 chunks/s.

Run: ``python tests/bench/stall.py [--chunks 1000]``. A 5 ms QTimer ticks throughout, from the
click on Send until 1.5 s after the reply ended (the finished reply is laid out as one then); the
longest interval between ticks (minus 5 ms) is the worst stall a user would feel. The same
timer is measured idle first as the baseline. Target ≤ 50 ms. Offscreen unless DISPLAY is set.
The reply is Markdown with code blocks, so re-rendering is part of what is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import TickRecorder, run_on_qasync, worst_ms


def reply_text(chunks: int) -> str:
    parts = []
    for i in range(chunks // 25):
        parts.append(
            f"Paragraph {i}: **bold** text, `code`, 中文内容 and a list:\n\n- one\n- two\n\n"
        )
        parts.append("```python\ndef f(x):\n    return x * 2  # comment\n```\n\n")
    words = " ".join(parts).split(" ")
    return " ".join(words)


async def run(chunks: int) -> None:
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import EtosApp
    from tests.helpers.fake_openai_server import FakeOpenAIServer, Text
    from tests.helpers.qt_async import expect_signal

    qt_app = QApplication.instance()
    recorder = TickRecorder()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        env = {
            "ETOS_DATA_DIR": tmp,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "fake-chat",
            "HOME": tmp,
        }
        app = EtosApp(qt_app, env, local_candidates=[])
        app.settings.set("chat.auto_title", False)
        app.window.resize(1000, 700)
        app.window.show()
        await app.start()
        recorder.start()
        await asyncio.sleep(2)
        idle = recorder.stop()

        text = reply_text(chunks)
        server.script(Text(text, chunks=chunks, delay=0.01))
        done = expect_signal(app.controller.reply_finished)
        recorder.start()
        started = time.perf_counter()
        app.window.chat.composer.setPlainText("stream please")
        app.window.chat.send_button.click()
        await asyncio.wait_for(done, 120)
        elapsed = time.perf_counter() - started
        # Keep measuring a little after the end: the whole reply is laid out as one then.
        await asyncio.sleep(1.5)
        streaming = recorder.stop()
        app.window.close()
        await app.shutdown()

    print(f"reply: {chunks} chunks, {len(text):,} characters, streamed in {elapsed:.1f} s")
    print(
        f"idle      : worst stall {worst_ms(idle):6.1f} ms, median tick {statistics.median(idle) * 1000:.1f} ms"
    )
    print(
        f"streaming : worst stall {worst_ms(streaming):6.1f} ms, median tick "
        f"{statistics.median(streaming) * 1000:.1f} ms, p99 "
        f"{sorted(streaming)[int(len(streaming) * 0.99)] * 1000:.1f} ms"
    )
    print(
        f"ratio worst streaming / worst idle: {worst_ms(streaming) / max(worst_ms(idle), 0.1):.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1000)
    args = parser.parse_args()
    run_on_qasync(lambda: run(args.chunks))


if __name__ == "__main__":
    main()
