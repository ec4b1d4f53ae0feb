"""UI stall while summary jobs run during a streaming reply (target: worst stall ≤ 50 ms).

Run: ``python tests/bench/summary_stall.py [--chunks 1000] [--jobs 10]``. The app streams a
Markdown reply at 100 chunks/s (as ``stall.py`` does) twice: once alone (the baseline, measured
in the same run) and once while the background jobs summarise ``--jobs`` long conversations one
after another (each with 150 turns of realistic text, so the request is built from the full
token budget). A 5 ms timer ticks throughout; the longest gap between ticks is the worst stall a
user would feel. Offscreen unless DISPLAY is set.
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

from qt_bench import TickRecorder, p99_ms, run_on_qasync, worst_ms
from stall import reply_text
from summary_data import TOPICS_EN, TOPICS_ZH, _reply_text, _user_text

SUMMARY = (
    "The user planned a spring trip to Kyoto with a friend and compared budget hotels near Kyoto "
    "Station. They decided on a small hotel in Shijo because it is close to the markets, and "
    "asked for a three-day plan with temples in the morning and food in the evening. The "
    "assistant suggested an ICOCA card."
)


async def seed(app: object, count: int, turns: int) -> list[int]:
    """Long conversations written in one transaction on the DB thread."""
    import random
    from datetime import timedelta

    from etos_desktop.core.storage.tables import ConversationRow, MessageRow

    rng = random.Random(5)
    now = app.db.clock.now()  # type: ignore[attr-defined]

    def fill(session: object) -> list[int]:
        ids = []
        for c in range(count):
            zh = c % 2 == 1
            topic = (TOPICS_ZH if zh else TOPICS_EN)[c % 6]
            row = ConversationRow(title=f"{topic[0]} {c}", created_at=now, updated_at=now)
            session.add(row)  # type: ignore[attr-defined]
            session.flush()  # type: ignore[attr-defined]
            for t in range(turns):
                moment = now + timedelta(seconds=t)
                user = MessageRow(
                    conversation_id=row.id,
                    role="user",
                    content=_user_text(rng, zh, topic, t),
                    created_at=moment,
                )
                session.add(user)  # type: ignore[attr-defined]
                session.flush()  # type: ignore[attr-defined]
                session.add(  # type: ignore[attr-defined]
                    MessageRow(
                        conversation_id=row.id,
                        role="assistant",
                        content=_reply_text(rng, zh, topic),
                        created_at=moment,
                        reply_to_id=user.id,
                    )
                )
            ids.append(row.id)
        session.commit()  # type: ignore[attr-defined]
        return ids

    return await app.db.run(fill)  # type: ignore[attr-defined]


def loop_cpu_per_job(app: object, conversation_id: int) -> tuple[float, float]:
    """Milliseconds one job spends on the UI loop: building the request, checking the reply."""
    from etos_desktop.core.summaries import writing

    rows = app.db.call(  # type: ignore[attr-defined]
        lambda s: __import__("etos_desktop.core.summaries.store", fromlist=["x"]).messages_after(
            s, conversation_id, None
        )
    )
    messages = [(m.role, m.content) for m in rows]  # what the job reads
    build, finish = [], []
    for _ in range(20):
        t = time.perf_counter()
        writing.build_request(writing.SummaryInput(messages, None, "", "en"))
        build.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        writing.finish_summary(SUMMARY * 2)
        finish.append((time.perf_counter() - t) * 1000)
    return statistics.median(build), statistics.median(finish)


async def stream(app: object, server: object, recorder: TickRecorder, chunks: int) -> list[float]:
    from tests.helpers.fake_openai_server import Text
    from tests.helpers.qt_async import expect_signal

    server.script(Text(reply_text(chunks), chunks=chunks, delay=0.01))  # type: ignore[attr-defined]
    controller = app.controller  # type: ignore[attr-defined]
    controller.new_conversation()
    done = expect_signal(controller.reply_finished)
    recorder.start()
    chat = app.window.chat  # type: ignore[attr-defined]
    chat.composer.setPlainText("stream please")
    chat.send_button.click()
    await asyncio.wait_for(done, 180)
    return recorder.stop()


async def run(chunks: int, jobs: int) -> None:
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import EtosApp
    from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background

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
        app.settings.set("memory.embedder", "keywords")
        app.window.resize(1000, 700)
        app.window.show()
        await app.start()
        assert app.jobs is not None
        await app.jobs.wait_started()
        assert app.jobs is not None
        # Summaries off while seeding, so the jobs start only when the bench says.
        app.settings.set("summaries.enabled", False)
        t = time.perf_counter()
        ids = await seed(app, jobs, 150)
        print(f"seeded {jobs} conversations x 150 turns in {time.perf_counter() - t:.1f} s")
        app.settings.set("summaries.enabled", True)
        build_ms, finish_ms = loop_cpu_per_job(app, ids[0])

        baseline = await stream(app, server, recorder, chunks)

        server.script_when(background, *[Text(SUMMARY)] * jobs)
        written: list[float] = []

        async def summarise_all() -> None:
            await asyncio.sleep(0.5)  # the reply is streaming by then
            for conversation_id in ids:
                started = time.perf_counter()
                result = await app.jobs.summarise_now(conversation_id)
                assert result.outcome == "summary", result
                written.append(time.perf_counter() - started)

        background_task = asyncio.ensure_future(summarise_all())
        with_jobs = await stream(app, server, recorder, chunks)
        await background_task
        requests = [r.body for r in server.chat_requests() if not r.body.get("stream")]
        app.window.close()
        await app.shutdown()

    sizes = [len(r["messages"][1]["content"]) for r in requests]
    print(
        f"{len(written)} summaries written during the reply, each in median "
        f"{statistics.median(written) * 1000:.0f} ms (request text median {statistics.median(sizes):,} chars)"
    )
    print(
        f"CPU on the UI loop per job: building the request {build_ms:.2f} ms, checking the reply "
        f"{finish_ms:.2f} ms (medians of 20; the database work runs on its own thread)"
    )
    for name, ticks in (("streaming alone", baseline), ("streaming + summary jobs", with_jobs)):
        print(
            f"{name:26s}: worst stall {worst_ms(ticks):6.1f} ms, p99 {p99_ms(ticks):5.1f} ms, "
            f"median tick {statistics.median(ticks) * 1000:.1f} ms"
        )
    print(
        f"ratio worst with jobs / worst alone: {worst_ms(with_jobs) / max(worst_ms(baseline), 0.1):.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=10)
    args = parser.parse_args()
    run_on_qasync(lambda: run(args.chunks, args.jobs))


if __name__ == "__main__":
    main()
