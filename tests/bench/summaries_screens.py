"""Screenshots of Settings → Summaries and Settings → General → Background jobs (not a benchmark).

Run: ``python tests/bench/summaries_screens.py OUT_DIR``. Starts the app on a temporary
data dir against the local fake server, writes English and Chinese conversations, lets the jobs
summarise them (one summary fails on purpose), then grabs the Settings dialog's pages with
``widget.grab()``. Offscreen unless DISPLAY is set (run under ``xvfb-run`` for a real X server).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import run_on_qasync

EN = (
    "The user planned a spring trip to Kyoto with a friend and compared budget hotels near Kyoto "
    "Station. They decided on a small hotel in Shijo because it is close to the markets, and "
    "asked for a three-day plan with temples in the morning and food in the evening. The "
    "assistant suggested an ICOCA card."
)
EN_2 = (
    "The user debugged a flaky pytest suite in a Qt app: tests hung when a dialog was opened "
    "with exec() inside a coroutine. They switched to open() and a future resolved by the "
    "finished signal, added pytest-timeout, and decided to run the UI tests on a qasync loop. "
    "Next they want to check warnings as errors."
)
ZH = (
    "用户计划春天和朋友去京都旅行，比较了京都站附近的经济型酒店，最后决定住在四条的一家小酒店，"
    "因为离市场近。还请助手安排了三天的行程：上午看寺庙，晚上吃美食。"
)
ZH_2 = (
    "用户在准备下个月的马拉松，询问了赛前一周的训练量和饮食安排。助手建议逐步减量、保证睡眠，"
    "比赛前一晚吃易消化的碳水。用户决定周末再跑一次二十公里。"
)


async def run(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import EtosApp
    from etos_desktop.core.clock import FakeClock
    from etos_desktop.services.jobs import summary_job_id
    from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background
    from tests.helpers.stack import fast_provider_factory

    qt_app = QApplication.instance()
    assert isinstance(qt_app, QApplication)
    out.mkdir(parents=True, exist_ok=True)
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        env = {
            "ETOS_DATA_DIR": tmp,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "fake-chat",
            "HOME": tmp,
        }
        app = EtosApp(
            qt_app,
            env,
            local_candidates=[],
            provider_factory=fast_provider_factory([]),
            clock=clock,
        )
        app.settings.set("memory.embedder", "keywords")
        app.settings.set("chat.auto_title", False)
        app.window.resize(1100, 760)
        app.window.show()
        await app.start()
        assert app.jobs is not None
        await app.jobs.wait_started()
        assert app.controller is not None
        assert app.jobs is not None
        repo = app.controller.repo
        texts = [
            (EN, "Kyoto trip"),
            (ZH, "京都旅行"),
            (EN_2, "Flaky Qt tests"),
            (ZH_2, "马拉松准备"),
        ]
        server.script_when(background, *[Text(t) for t, _ in texts])
        ids = []
        for _text, title in texts:
            row = await repo.create_conversation(title)
            assert row.id is not None
            for i in range(6):
                user = await repo.add_message(row.id, "user", f"{title} {i}")
                await repo.add_message(row.id, "assistant", f"answer {i}", reply_to_id=user.id)
            await app.jobs.check_conversation(row.id)
            await app.jobs.wait_idle()
            clock.advance(minutes=20)
            ids.append(row.id)
        # A later turn in the first conversation waits for the gap; one that fails shows its error.
        user = await repo.add_message(ids[0], "user", "And a day in Nara?")
        await repo.add_message(
            ids[0], "assistant", "Yes, take the Kintetsu line.", reply_to_id=user.id
        )
        await app.jobs.check_conversation(ids[0])
        failing = await repo.create_conversation("花园计划")
        for i in range(6):
            await repo.add_message(failing.id or 0, "user", f"garden {i}")
        server.script_when(background, Text("The user asked about", finish_reason="length"))
        await app.jobs.check_conversation(failing.id or 0)
        await app.jobs.wait_idle()
        clock.advance(minutes=3)
        await app.jobs.scheduler.fire("backup")
        await app.jobs.scheduler.fire("consolidation")
        assert app.jobs.scheduler.run_time(summary_job_id(ids[0])) is not None

        dialog = app.open_settings("summaries")
        dialog.resize(1000, 680)
        page = dialog.page("summaries")
        await page.wait_idle()
        await asyncio.sleep(0.3)
        await page.wait_idle()
        page.select_ids([page.model.summaries()[-1].id])
        await asyncio.sleep(0.2)
        dialog.grab().save(str(out / "summaries-page.png"))
        # Chinese content: a Chinese conversation chosen, its summary selected.
        page.show_conversation(ids[1])
        page.select_ids([page.model.summaries()[-2].id])
        await asyncio.sleep(0.2)
        dialog.grab().save(str(out / "summaries-page-chinese.png"))
        page.show_conversation(failing.id)
        await asyncio.sleep(0.2)
        dialog.grab().save(str(out / "summaries-page-failed.png"))
        dialog.show_page("general")
        general = dialog.page("general")
        await general.wait_idle()
        await asyncio.sleep(0.3)
        section = general.jobs_section  # type: ignore[attr-defined]
        area = section.parentWidget().parentWidget().parentWidget()
        area.ensureWidgetVisible(section)  # type: ignore[attr-defined]
        await asyncio.sleep(0.2)
        dialog.grab().save(str(out / "general-jobs.png"))
        dialog.close()
        app.window.close()
        await app.shutdown()
    print(f"screenshots in {out}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    run_on_qasync(lambda: run(args.out))


if __name__ == "__main__":
    main()
