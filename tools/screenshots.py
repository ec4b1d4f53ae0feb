"""Screenshots of ETOS Desktop on a real X server, in the light and the dark theme.

The main window, the welcome of a new conversation, each Settings page, the context inspector,
Help → About, Help → Keyboard shortcuts, and message search: the search dialog with results
(and while it still indexes), the conversation it opened at the message, and the find bar. It starts its own Xvfb and draws with Qt's xcb platform, runs the real app on a temporary data
folder against the test suite's local OpenAI-compatible server (``tests/helpers``), has the
showcase conversation (``tests/helpers/showcase.py``: a reply with code, a table, a link and a
quote, a saved memory, a failed reply) and photographs every window.

Usage (from the repository root)::

    python tools/screenshots.py --out /tmp/shots                # English UI, en and zh content
    python tools/screenshots.py --language zh --out /tmp/shots  # Chinese UI
    python tools/screenshots.py --scale 2 --out /tmp/shots2x    # QT_SCALE_FACTOR=2
    python tools/screenshots.py --readme                        # the README's two pictures

Files are named ``<what>-<ui language>-<content language>-<theme>.png``; ``--readme`` writes
``resources/screenshots/main-window-light.png`` (English UI and content) and
``main-window-dark.png`` (Chinese UI and content) instead, so the README shows both languages
and both themes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_CHILD = "_ETOS_SCREENSHOTS_CHILD"
TITLES = {"en": "Reading CSV files with pandas", "zh": "用 pandas 读取 CSV 文件"}
WINDOW = (1400, 880)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"), help="where to write")
    parser.add_argument("--language", choices=("en", "zh"), default="en", help="UI language")
    parser.add_argument(
        "--content", choices=("en", "zh", "both"), default="both", help="chat content language"
    )
    parser.add_argument("--theme", choices=("light", "dark", "both"), default="both")
    parser.add_argument("--scale", type=float, default=1.0, help="QT_SCALE_FACTOR")
    parser.add_argument(
        "--readme", action="store_true", help="write the README's main-window pictures"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Start Xvfb and take the pictures in a child process drawing on it."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(arguments)
    if os.environ.get(_CHILD) == "1":
        return _run_child(args)
    from tests.helpers.xvfb import display_env, xvfb

    width, height = (round(side * args.scale) + 80 for side in WINDOW)
    with (
        tempfile.TemporaryDirectory(prefix="etos-shots-") as home,
        xvfb(f"{width}x{height}x24") as display,
    ):
        env = display_env(
            display,
            **{
                _CHILD: "1",
                "HOME": home,
                "XDG_CONFIG_HOME": f"{home}/.config",
                "XDG_DATA_HOME": f"{home}/.local/share",
                "XDG_CACHE_HOME": f"{home}/.cache",
                # Never the user's keyring: an in-memory one of the test suite.
                "PYTHON_KEYRING_BACKEND": "tests.helpers.keyrings.ThreadRecordingKeyring",
                "PYTHONPATH": str(ROOT),
                "QT_SCALE_FACTOR": str(args.scale),
                "QT_LOGGING_RULES": "qt.qpa.*=false",
            },
        )
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ETOS_DATA_DIR"):
            env.pop(name, None)
        return subprocess.call([sys.executable, __file__, *arguments], env=env, cwd=ROOT)


def _run_child(args: argparse.Namespace) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from etos_desktop.app import install_asyncgen_hooks

    qt_app = QApplication(sys.argv[:1])
    qt_app.setApplicationName("ETOS Desktop")
    qt_app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(qt_app)
    asyncio.set_event_loop(loop)
    install_asyncgen_hooks(loop)
    with loop:
        return loop.run_until_complete(_take_all(qt_app, args))


async def _settle(seconds: float = 0.25) -> None:
    # The loop runs Qt's events meanwhile (a nested processEvents would drop qasync's tasks).
    await asyncio.sleep(seconds)


async def _take_all(qt_app: Any, args: argparse.Namespace) -> int:
    contents = ("en", "zh") if args.content == "both" else (args.content,)
    themes = ("light", "dark") if args.theme == "both" else (args.theme,)
    out = ROOT / "resources" / "screenshots" if args.readme else args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.readme:
        await _take(qt_app, args, "en", ("light",), out, readme=True, language="en")
        await _take(qt_app, args, "zh", ("dark",), out, readme=True, language="zh")
        return 0
    for content in contents:
        await _take(qt_app, args, content, themes, out, readme=False, language=args.language)
    return 0


async def _take(
    qt_app: Any,
    args: argparse.Namespace,
    content: str,
    themes: Sequence[str],
    out: Path,
    *,
    readme: bool,
    language: str,
) -> None:
    from PySide6.QtWidgets import QToolButton

    from etos_desktop.app import EtosApp
    from etos_desktop.core.settings import paths
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.ui.context_dialog import ContextDialog
    from tests.helpers import showcase
    from tests.helpers.fake_openai_server import FakeOpenAIServer
    from tests.helpers.stack import fast_provider_factory
    from tests.helpers.ui_driver import click, wait_until

    with tempfile.TemporaryDirectory(prefix="etos-data-") as data, FakeOpenAIServer() as server:
        env = {
            "ETOS_DATA_DIR": data,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_MODEL": "fake-chat",
        }
        settings = SettingsStore(paths.settings_path(Path(data)))
        settings.load()
        for key, value in (
            ("ui.language", language),
            ("memory.embedder", "keywords"),
            ("chat.auto_title", False),
        ):
            settings.set(key, value)
        settings.save()
        app = EtosApp(qt_app, env, local_candidates=[], provider_factory=fast_provider_factory([]))
        app.window.resize(*WINDOW)
        app.window.show()
        if not readme:
            await _first_frame_shot(app, out, f"{language}-{content}", themes[0], content)
        await app.start()
        await showcase.fill(app, server, content)
        assert app.controller is not None
        conversation = app.controller.current
        assert conversation is not None
        assert conversation.id is not None
        await app.controller.update_conversation(conversation.id, title=TITLES[content])
        await app.controller.wait_idle()
        stem = f"{language}-{content}"
        for theme in themes:
            app.apply_theme(theme)
            await _settle()
            if readme:
                # From the question on: the reply's code, table, quote and link show.
                app.window.chat.scroll.verticalScrollBar().setValue(0)
                await _settle()
                app.window.grab().save(str(out / f"main-window-{theme}.png"))
                continue
            app.window.grab().save(str(out / f"main-{stem}-{theme}.png"))

            rows = await app.controller.repo.current_history(conversation.id)
            reply = next(r for r in rows if r.role == "assistant")
            widget = app.window.chat.widget(reply.id)
            assert widget is not None
            button = widget.findChild(QToolButton, "contextButton")
            await click(button)
            inspector = await wait_until(
                lambda: next(
                    (d for d in app.window.findChildren(ContextDialog) if d.isVisible()), None
                )
            )
            await _settle()
            inspector.grab().save(str(out / f"inspector-{stem}-{theme}.png"))
            inspector.close()

            dialog = app.open_settings()
            for name in dialog.page_names():
                dialog.show_page(name)
                await dialog.wait_idle()
                await _settle()
                dialog.grab().save(str(out / f"settings-{name}-{stem}-{theme}.png"))
            dialog.reject()
            await _settle()

            for dialog_name, opened in (
                ("about", app.window.show_about()),
                ("shortcuts", app.window.show_shortcuts()),
            ):
                await _settle(0.5)
                opened.grab().save(str(out / f"{dialog_name}-{stem}-{theme}.png"))
                opened.close()

            app.window.new_action.trigger()
            await app.controller.wait_idle()
            await _settle(0.5)
            app.window.grab().save(str(out / f"welcome-{stem}-{theme}.png"))
            await app.controller.open_conversation(conversation.id)
            await app.controller.wait_idle()

            await _composer_shots(app, out, stem, theme)
            await _search_shots(app, out, stem, theme, content)
            await app.controller.open_conversation(conversation.id)
            await app.controller.wait_idle()
        app.window.close()
        await app.shutdown()
        app.window.deleteLater()
        await _settle()


async def _first_frame_shot(app: Any, out: Path, stem: str, theme: str, content: str) -> None:
    """A message sent at the first frame, queued until the services are up (then dropped)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from tests.helpers.ui_driver import type_text

    app.apply_theme(theme)
    chat = app.window.chat
    text = {
        "en": "Good morning! What was the pandas trick from yesterday?",
        "zh": "早上好！昨天那个 pandas 技巧是什么？",
    }
    await type_text(chat.composer, text[content])
    QTest.keyClick(chat.composer, Qt.Key.Key_Return)
    await _settle(0.4)
    app.window.grab().save(str(out / f"queued-at-start-{stem}-{theme}.png"))
    chat.composer.clear()  # an edit cancels the queued send: the showcase starts clean


async def _composer_shots(app: Any, out: Path, stem: str, theme: str) -> None:
    """The composer near a small model's limit and over it, at the usual size and at 800×600."""
    chat = app.window.chat
    app.settings.set_model_context("fake-chat", 4096)
    for _ in range(100):
        await _settle(0.05)
        if chat._room is not None and chat._room.tokens < 4096:
            break
    room = chat._room.tokens
    for size, label in ((WINDOW, "large"), ((800, 600), "800x600")):
        app.window.resize(*size)
        for state, words in (("near", int(room * 0.7 * 4 / 5)), ("too-long", room)):
            chat.composer.setPlainText("word " * words)
            await _settle(0.4)
            app.window.grab().save(str(out / f"composer-{state}-{label}-{stem}-{theme}.png"))
    # A 1 MB paste: kept beside the editor as pasted text, with its size.
    chat.composer.setPlainText("What is wrong in this log?")
    chat.add_pasted_text("2026-01-01 12:00:00 INFO worker started; queue=12 batch=64\n" * 17_000)
    await _settle(0.6)
    app.window.grab().save(str(out / f"composer-pasted-{stem}-{theme}.png"))
    for paste in chat.pasted_texts():
        paste.remove_button.click()
    chat.composer.clear()
    app.window.resize(*WINDOW)
    app.settings.set_model_context("fake-chat", None)
    await _settle()


#: Older conversations for the search pictures: (title, days ago, messages), by content language.
SEARCH_CONVERSATIONS = {
    "en": (
        (
            "Espresso machine repair",
            40,
            (
                "My espresso machine leaks at the group head again.",
                "A leak at the group head is usually the gasket: descale the machine, then "
                "replace the gasket — it is a cheap part.",
                "Thanks! Which gasket size fits a Gaggia Classic?",
                "The Gaggia Classic takes an 8.5 mm group gasket.",
            ),
        ),
        (
            "Weekend in Lisbon",
            120,
            (
                "Where should I have coffee in Lisbon?",
                "Try a bica at a pastelaria; a bica is Lisbon's espresso, short and strong.",
            ),
        ),
    ),
    "zh": (
        (
            "咖啡机维修",
            40,
            (
                "我的咖啡机冲煮头又漏水了。",
                "冲煮头漏水多半是密封圈老化：先给咖啡机除垢，再换一个新的密封圈，很便宜。",
                "谢谢！Gaggia Classic 用多大的密封圈？",
                "Gaggia Classic 用 8.5 毫米的冲煮头密封圈。",
            ),
        ),
        (
            "里斯本周末",
            120,
            (
                "在里斯本去哪里喝咖啡比较好？",
                "去街角的糕点店点一杯 bica，它是里斯本的意式浓缩咖啡，短而浓。",
            ),
        ),
    ),
}
SEARCH_QUERY = {"en": "espresso", "zh": "咖啡机"}
FIND_TEXT = {"en": "gasket", "zh": "密封圈"}


async def _search_shots(app: Any, out: Path, stem: str, theme: str, content: str) -> None:
    """Search all messages (results, and the line while it indexes), the hit opened, Ctrl+F."""
    from datetime import UTC, datetime, timedelta

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from sqlmodel import Session, select

    from etos_desktop.core.storage.message_fts import IndexCount
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow
    from tests.helpers.qt_async import expect_signal
    from tests.helpers.ui_driver import type_text

    controller = app.controller
    repo = controller.repo
    if not getattr(app, "_search_seeded", False):
        app._search_seeded = True
        for title, days, texts in SEARCH_CONVERSATIONS[content]:
            row = await repo.create_conversation(title)
            for i, text in enumerate(texts):
                await repo.add_message(row.id, "user" if i % 2 == 0 else "assistant", text)
            when = datetime.now(UTC) - timedelta(days=days)

            def backdate(session: Session, cid: int = row.id, when: datetime = when) -> None:
                # Dated as if written then (the repository stamps the clock's time).
                conversation = session.get(ConversationRow, cid)
                conversation.created_at = conversation.updated_at = when
                session.add(conversation)
                for n, message in enumerate(
                    session.exec(select(MessageRow).where(MessageRow.conversation_id == cid))
                ):
                    message.created_at = when + timedelta(minutes=n)
                    session.add(message)
                session.commit()

            await app.db.run(backdate)
        await controller.refresh_conversations()
        await controller.wait_idle()
    window = app.window
    ui = window.message_search
    for size, label in ((WINDOW, "large"), ((800, 600), "800x600")):
        window.resize(*size)
        await _settle()
        dialog = ui.open_search()
        dialog.resize(*((900, 620) if label == "large" else (640, 480)))
        shown = expect_signal(dialog.results_shown)
        await type_text(dialog.field, SEARCH_QUERY[content])
        await asyncio.wait_for(shown, 15)
        await _settle(0.4)
        dialog.grab().save(str(out / f"search-{label}-{stem}-{theme}.png"))
        if label == "large":
            dialog.set_progress(IndexCount(12_000, 50_000))
            await _settle(0.2)
            dialog.grab().save(str(out / f"search-indexing-{stem}-{theme}.png"))
            dialog.set_progress(None)
            shown = expect_signal(dialog.results_shown)
            await asyncio.wait_for(shown, 15)
        opened = expect_signal(ui.jump.shown)
        dialog.field.setFocus()
        QTest.keyClick(dialog.field, Qt.Key.Key_Return)
        await asyncio.wait_for(opened, 15)
        await controller.wait_idle()
        await _settle(0.6)
        window.grab().save(str(out / f"search-opened-{label}-{stem}-{theme}.png"))
        ui.open_find()
        await type_text(ui.find_bar.field, FIND_TEXT[content])
        await _settle(0.8)
        window.grab().save(str(out / f"find-{label}-{stem}-{theme}.png"))
        ui.find_bar.close_bar()
    window.resize(*WINDOW)
    await _settle()


if __name__ == "__main__":
    sys.exit(main())
