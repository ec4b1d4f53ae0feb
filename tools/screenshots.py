"""Screenshots of ETOS Desktop on a real X server, in the light and the dark theme.

The main window, the welcome of a new conversation, each Settings page (Settings → Sync also at
800×600 off, on with another device, and with an error), the context inspector, Help → About,
Help → Keyboard shortcuts, and message search: the search dialog with results (and while it
still indexes), the conversation it opened at the message, and the find bar. It starts its own Xvfb and draws with Qt's xcb platform, runs the real app on a temporary data
folder against the test suite's local OpenAI-compatible server (``tests/helpers``), has the
showcase conversation (``tests/helpers/showcase.py``: a reply with code, a table, a link and a
quote, a saved memory, a failed reply) and photographs every window.

Usage (from the repository root)::

    python tools/screenshots.py --out /tmp/shots                # English UI, en and zh content
    python tools/screenshots.py --language zh --out /tmp/shots  # Chinese UI
    python tools/screenshots.py --scale 2 --out /tmp/shots2x    # QT_SCALE_FACTOR=2
    python tools/screenshots.py --readme                        # the README's two pictures

Files are named ``<what>-<ui language>-<content language>-<theme>.png``; ``--readme`` writes
``resources/screenshots/main-window-light.png`` (English UI and content), ``main-window.png``
(the same with the first reply's actions shown, as on hover) and ``main-window-dark.png``
(Chinese UI and content) instead, so the README shows both languages and both themes.
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
#: The sizes of the look's pictures (``--only look``): the smallest supported and a large one.
LOOK_SIZES = ((800, 600), (1600, 1000))


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
    parser.add_argument(
        "--only",
        choices=("all", "attachments", "imports", "sync", "checkins", "look", "usage"),
        default="all",
        help="take every picture, or only the attachments' (composer, message, viewer, "
        "refusal), or only the memory list and character card import previews, or only "
        "Settings → Sync at 800×600 (off, on, an error), or only the check-ins' (the Settings "
        "group, the marked conversation in the list and the chat, the inspector), or only the "
        "main window's look (date groups, bubbles, a reply's actions on hover, the composer) at "
        "800×600 and 1600×1000",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Start Xvfb and take the pictures in a child process drawing on it."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(arguments)
    if os.environ.get(_CHILD) == "1":
        return _run_child(args)
    from tests.helpers.xvfb import display_env, xvfb

    # Room for the largest window taken (the look's 1600×1000).
    width, height = (
        round(max(side, *(size[i] for size in LOOK_SIZES)) * args.scale) + 80
        for i, side in enumerate(WINDOW)
    )
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
    if args.only == "imports":
        await _import_shots(qt_app, themes, out, language=args.language)
        return 0
    if args.only == "checkins":
        await _checkin_shots(qt_app, themes, out, language=args.language)
        return 0
    if args.only == "usage":
        await _usage_shots(qt_app, themes, out, language=args.language)
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
        only_attachments = getattr(args, "only", "all") == "attachments"
        only_sync = getattr(args, "only", "all") == "sync"
        only_look = getattr(args, "only", "all") == "look"
        if not readme and not only_attachments and not only_sync and not only_look:
            await _first_frame_shot(app, out, f"{language}-{content}", themes[0], content)
        await app.start()
        await showcase.fill(app, server, content)
        assert app.controller is not None
        conversation = app.controller.current
        assert conversation is not None
        assert conversation.id is not None
        await app.controller.update_conversation(conversation.id, title=TITLES[content])
        await app.controller.wait_idle()
        # Earlier conversations, so the sidebar shows its date groups and previews.
        await _seed_dated(app, LOOK_CONVERSATIONS[content])
        math_id = None if readme else await _math_conversation(app, server, content)
        await app.controller.open_conversation(conversation.id)
        await app.controller.wait_idle()
        stem = f"{language}-{content}"
        for theme in themes:
            app.apply_theme(theme)
            await _settle()
            if only_attachments:
                await _attachment_shots(app, server, out, stem, theme, content)
                continue
            if only_look:
                await _look_shots(app, out, stem, theme)
                continue
            if only_sync:
                dialog = app.open_settings("sync")
                await _sync_shots(app, dialog, out, stem, theme)
                dialog.reject()
                await _settle()
                continue
            if readme:
                # From the question on: the reply's code, table, quote and link show.
                app.window.chat.scroll.verticalScrollBar().setValue(0)
                await _settle()
                app.window.grab().save(str(out / f"main-window-{theme}.png"))
                if content == "en":
                    # The README's first picture: the reply's actions shown, as on hover.
                    await _hover_first_reply(app)
                    app.window.grab().save(str(out / "main-window.png"))
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
            await _sync_shots(app, dialog, out, stem, theme)
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
            await _attachment_shots(app, server, out, stem, theme, content)
            if math_id is not None:
                await _math_shots(app, math_id, conversation.id, out, stem, theme)
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


async def _math_conversation(app: Any, server: Any, content: str) -> int:
    """A new conversation with a reply holding formulas, a bad one, a task list and a quote."""
    from tests.helpers import showcase

    app.window.new_action.trigger()
    await app.controller.wait_idle()
    await showcase.fill_math(app, server, content)
    current = app.controller.current
    assert current is not None
    assert current.id is not None
    return int(current.id)


async def _math_shots(
    app: Any, math_id: int, back_to: int, out: Path, stem: str, theme: str
) -> None:
    """The math reply at the usual size and at 800×600 (formulas laid out in the background)."""
    from etos_desktop.ui import math_render

    await app.controller.open_conversation(math_id)
    await app.controller.wait_idle()
    for size, label in ((WINDOW, "large"), ((800, 600), "800x600")):
        app.window.resize(*size)
        await _settle(0.3)
        for _ in range(100):  # laid out on math_render's thread, then put in place
            if math_render.wait_until_idle(0.0):
                break
            await _settle(0.05)
        await _settle(0.5)
        app.window.chat.scroll.verticalScrollBar().setValue(0)
        await _settle(0.3)
        app.window.grab().save(str(out / f"math-{label}-{stem}-{theme}.png"))
    app.window.resize(*WINDOW)
    await app.controller.open_conversation(back_to)
    await app.controller.wait_idle()


LOOK_CONVERSATIONS = {
    "en": (
        (
            "Birthday gift for Mia",
            1,
            ("Mia turns eight on Saturday.", "A kite or a book of riddles?"),
        ),
        ("Morning run plan", 4, ("Can you plan three runs a week?", "Tuesday, Thursday, Sunday.")),
        ("Sourdough starter", 75, ("My starter smells of acetone.", "Feed it twice a day.")),
    ),
    "zh": (
        ("给米娅的生日礼物", 1, ("米娅周六满八岁。", "风筝还是一本谜语书？")),
        ("晨跑计划", 4, ("能帮我排一周三次的跑步吗？", "周二、周四、周日各跑一次。")),
        ("酸面包酵种", 75, ("我的酵种有股丙酮味。", "每天喂两次就好。")),
    ),
}


async def _seed_dated(app: Any, conversations: Sequence[tuple[str, int, Sequence[str]]]) -> None:
    """Add conversations last active ``days`` ago (the repository stamps the clock's time)."""
    from datetime import UTC, datetime, timedelta

    from sqlmodel import Session, select

    from etos_desktop.core.storage.tables import ConversationRow, MessageRow

    repo = app.controller.repo
    current = app.controller.current
    for title, days, texts in conversations:
        row = await repo.create_conversation(title)
        for i, text in enumerate(texts):
            await repo.add_message(row.id, "user" if i % 2 == 0 else "assistant", text)
        when = datetime.now(UTC) - timedelta(days=days)

        def backdate(session: Session, cid: int = row.id, when: datetime = when) -> None:
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
    await app.controller.refresh_conversations()
    await app.controller.wait_idle()
    if current is not None and current.id is not None:
        app.window.sidebar.select(current.id)


async def _hover_first_reply(app: Any) -> None:
    """Move the pointer over the first reply's actions (scrolled into view): they show."""
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    chat = app.window.chat
    reply = next((w for w in chat._widgets_in_order() if w.is_assistant), None)
    if reply is None:
        return
    chat.scroll.ensureWidgetVisible(reply.action_bar(), 0, 40)
    await _settle(0.2)
    QTest.mouseMove(reply, QPoint(reply.width() // 2, reply.action_bar().geometry().top()))
    await _settle(0.3)


async def _look_shots(app: Any, out: Path, stem: str, theme: str) -> None:
    """The main window at 800×600 and 1600×1000: at rest, and a reply's actions on hover."""
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    window = app.window
    chat = window.chat
    for width, height in LOOK_SIZES:
        window.resize(width, height)
        await _settle(0.4)
        label = f"{width}x{height}"
        chat.scroll.verticalScrollBar().setValue(0)
        await _settle(0.2)
        window.grab().save(str(out / f"look-{label}-{stem}-{theme}.png"))
        await _hover_first_reply(app)
        window.grab().save(str(out / f"look-hover-{label}-{stem}-{theme}.png"))
        QTest.mouseMove(window, QPoint(2, 2))
    window.resize(*WINDOW)
    await _settle()


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


async def _sync_shots(app: Any, dialog: Any, out: Path, stem: str, theme: str) -> None:
    """Settings → Sync at 800×600: off, on after a pass with another device, and an error.

    The other device is a second data folder synced through the core (``SyncService``); the
    sync folder is a temporary one, kept for the app's run.
    """
    from etos_desktop.core.memory.engine import MemoryEngine
    from etos_desktop.core.settings import paths
    from etos_desktop.core.storage.database import Database
    from etos_desktop.core.sync.service import SyncService
    from etos_desktop.core.sync.transport import FolderTransport

    runner = app.sync
    if runner is None:
        return
    if not hasattr(app, "_shots_sync_dir"):
        app._shots_sync_dir = tempfile.TemporaryDirectory(prefix="etos-sync-")
    root = Path(app._shots_sync_dir.name)
    folder = root / "Syncthing" / "ETOS"
    folder.mkdir(parents=True, exist_ok=True)
    passphrase = "lantern harbour market 47"
    dialog.resize(800, 600)
    dialog.show_page("sync")
    page = dialog.sync_page
    if runner.status().enabled:
        await runner.turn_off()
    page._fill_setup(runner.status().location)
    page._render()
    await _settle(0.4)
    dialog.grab().save(str(out / f"settings-sync-off-800x600-{stem}-{theme}.png"))

    laptop_dir = root / "laptop"
    laptop_db = Database(paths.database_path(laptop_dir), paths.backups_dir(laptop_dir))
    laptop_db.open()
    laptop = MemoryEngine(laptop_db)
    try:
        text = "我住在杭州" if stem.endswith("zh") else "I moved to Hangzhou in March"
        laptop.save(f"{text} ({theme})")
        service = SyncService(
            laptop_db, FolderTransport(folder), passphrase, device_name="ThinkPad"
        )
        await asyncio.to_thread(service.sync_once)
        # Set up on the page, as the user does.
        page.kind_combo.setCurrentIndex(page.kind_combo.findData("folder"))
        page.folder_edit.setText(str(folder))
        page.passphrase_edit.setText(passphrase)
        page.confirm_edit.setText(passphrase)
        page.name_edit.setText("Desktop")
        page.turn_on_button.click()
        await page.wait_idle()
        await runner.wait_idle()
        await asyncio.to_thread(service.sync_once)
    finally:
        laptop.close()
        laptop_db.close()
    page._render()
    await _settle(0.4)
    dialog.grab().save(str(out / f"settings-sync-on-800x600-{stem}-{theme}.png"))

    hidden = root / "unplugged"
    folder.rename(hidden)
    await runner.sync_now()
    page._render()
    await _settle(0.4)
    dialog.grab().save(str(out / f"settings-sync-error-800x600-{stem}-{theme}.png"))
    hidden.rename(folder)
    await runner.sync_now()


def _sample_picture(path: Path) -> None:
    """A small landscape, drawn: sky, sun, hills (a photo to attach)."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter, QPainterPath

    image = QImage(2400, 1600, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    sky = QLinearGradient(0, 0, 0, 1600)
    sky.setColorAt(0, QColor("#5b8fd6"))
    sky.setColorAt(1, QColor("#f6d7a7"))
    painter.fillRect(image.rect(), sky)
    painter.setBrush(QColor("#ffd25a"))
    painter.setPen(QColor("#ffd25a"))
    painter.drawEllipse(QPointF(1750, 520), 170, 170)
    for color, base, height in (("#4f7a3a", 1150, 260), ("#2f5a2a", 1350, 200)):
        hills = QPainterPath(QPointF(0, 1600))
        hills.lineTo(0, base)
        for x in range(0, 2500, 300):
            hills.quadTo(x + 150, base - height, x + 300, base)
        hills.lineTo(2400, 1600)
        painter.setBrush(QColor(color))
        painter.setPen(QColor(color))
        painter.drawPath(hills)
    painter.end()
    image.save(str(path), "JPEG", 90)


async def _attachment_shots(
    app: Any, server: Any, out: Path, stem: str, theme: str, content: str
) -> None:
    """Attachments: the composer's chips, a sent message's thumbnail, the viewer, a refusal."""
    from etos_desktop.ui.attachments import ImageViewerDialog, MessageAttachments
    from tests.helpers.fake_openai_server import Text
    from tests.helpers.ui_driver import click, wait_until

    chat = app.window.chat
    words = {
        "en": ("trip-photo.jpg", "packing-list.md", "Which of these should I pack for the hike?"),
        "zh": ("旅行照片.jpg", "行李清单.md", "徒步的话，这些东西哪些该带？"),
    }[content]
    with tempfile.TemporaryDirectory(prefix="etos-files-") as folder:
        photo = Path(folder) / words[0]
        _sample_picture(photo)
        notes = Path(folder) / words[1]
        notes.write_text(
            "- rain jacket\n- two water bottles\n- trail snacks\n- sun cream\n- map\n" * 6,
            encoding="utf-8",
        )
        app.settings.set_model_vision("fake-chat", True)
        chat.attach_files([str(photo), str(notes)])
        await wait_until(lambda: len(chat.attachment_tray.chips()) == 2)
        chat.composer.setPlainText(words[2])
        for size, label in ((WINDOW, "large"), ((800, 600), "800x600")):
            app.window.resize(*size)
            await _settle(0.5)
            app.window.grab().save(str(out / f"attach-composer-{label}-{stem}-{theme}.png"))
        app.window.resize(*WINDOW)
        reply = {
            "en": "For a day in the hills under that sky: the rain jacket, both water bottles, "
            "the snacks and the sun cream. The map too — the trail forks after the second hill.",
            "zh": "看这天气和山路：带上雨衣、两个水壶、零食和防晒霜。地图也要带——"
            "第二座山之后路会分岔。",
        }[content]
        server.script(Text(reply))
        await click(chat.send_button)
        await wait_until(lambda: not chat.attachment_tray.chips())
        await app.controller.wait_idle()
        await wait_until(lambda: chat.findChildren(MessageAttachments))
        await _settle(0.6)
        for size, label in ((WINDOW, "large"), ((800, 600), "800x600")):
            app.window.resize(*size)
            await _settle(0.5)
            app.window.grab().save(str(out / f"attach-message-{label}-{stem}-{theme}.png"))
        app.window.resize(*WINDOW)
        strip = [s for s in chat.findChildren(MessageAttachments) if s.isVisible()][-1]
        await click(strip.buttons()[0])
        viewer = await wait_until(
            lambda: next(
                (d for d in app.window.findChildren(ImageViewerDialog) if d.isVisible()), None
            )
        )
        await _settle(0.5)
        viewer.grab().save(str(out / f"attach-viewer-{stem}-{theme}.png"))
        viewer.close()
        # A model that takes no images: said before sending, the draft kept.
        app.settings.set_model_vision("fake-chat", False)
        chat.attach_files([str(photo)])
        await wait_until(lambda: len(chat.attachment_tray.chips()) == 1)
        chat.composer.setPlainText(words[2])
        await _settle(0.4)
        await click(chat.send_button)
        for size, label in ((WINDOW, "large"), ((800, 600), "800x600")):
            app.window.resize(*size)
            await _settle(0.5)
            app.window.grab().save(str(out / f"attach-refused-{label}-{stem}-{theme}.png"))
        app.window.resize(*WINDOW)
        for chip in chat.attachment_tray.chips():
            chip.remove_button.click()
        chat.composer.clear()
        app.settings.set_model_vision("fake-chat", None)
        await _settle()


_MEMORY_LISTS = {
    "en": """Here is everything I remember about you:

1. [2024-05-01] - User is a nurse in Lisbon and works night shifts.
2. [2024-06-12] - Prefers short answers without bullet points.
3. [Date unknown] - Has a dog named Bolo.
4. [2024-07-01] - User's API key is sk-Q9w8E7r6T5y4U3i2O1p0
5. [2024-07-02] - Plays the cello on Sundays.
6. [2024-08-19] - Is learning Japanese for a trip to Kyoto.

Let me know if you'd like me to forget or change anything!
""",
    "zh": """以下是我记得的关于你的信息：

・住在杭州，在一家设计公司工作
・喜欢喝乌龙茶，不喝咖啡
１．女儿叫莉莉，今年六岁
（2）每天早上跑步五公里
· 周末学大提琴【2024年3月5日】
· 我的密码是 hunter2hunter2

如果你还需要补充，请告诉我。
""",
}
_CARDS = {
    "en": {
        "name": "Mira",
        "description": "{{char}} keeps the lighthouse on Saltstone Point and writes letters to "
        "{{user}} by lamplight. She notices small things and remembers them.",
        "personality": "patient, dry-humoured, curious",
        "scenario": "A stormy night; the lamp turns slowly above the sea.",
        "first_mes": "*The lamp turns.* Oh — a visitor, at this hour?",
        "creator": "etos",
        "tags": ["calm", "sea", "letters"],
    },
    "zh": {
        "name": "小雨",
        "description": "{{char}}是一位温柔的图书管理员，总在雨天给{{user}}推荐一本书，"
        "记得{{user}}读过的每一本。",
        "personality": "安静、细心、偶尔冒出冷笑话",
        "scenario": "下雨的午后，旧书店里只有翻书声。",
        "first_mes": "*合上书* 你来啦，外面雨大吗？",
        "creator": "etos",
        "tags": ["温柔", "书店"],
    },
}


def _card_picture() -> bytes:
    """A 400×600 picture for the sample card: a sea, a lighthouse, a moon."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF
    from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter

    image = QImage(400, 600, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    sky = QLinearGradient(QPointF(0, 0), QPointF(0, 600))
    sky.setColorAt(0, QColor("#1b2a4a"))
    sky.setColorAt(0.6, QColor("#4f6d9a"))
    sky.setColorAt(1, QColor("#0f3b4f"))
    painter.fillRect(image.rect(), sky)
    painter.setBrush(QColor("#f3e7b5"))
    painter.setPen(QColor("#f3e7b5"))
    painter.drawEllipse(QPointF(300, 110), 40, 40)
    painter.setBrush(QColor("#e9e2d0"))
    painter.drawRect(QRectF(170, 250, 60, 250))
    painter.setBrush(QColor("#c0392b"))
    painter.drawRect(QRectF(170, 320, 60, 30))
    painter.drawRect(QRectF(170, 400, 60, 30))
    painter.setBrush(QColor("#0b2533"))
    painter.drawRect(QRectF(0, 480, 400, 120))
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


async def _import_shots(qt_app: Any, themes: Sequence[str], out: Path, *, language: str) -> None:
    """The import previews: a memory list on the Memory page, a character card on Persona."""
    from etos_desktop.app import EtosApp
    from etos_desktop.core.settings import paths
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.ui.settings.memory_dialogs import ImportPreviewDialog
    from etos_desktop.ui.settings.persona_cards import CardPreviewDialog
    from tests.helpers.cards import card_png, v2_card
    from tests.helpers.fake_openai_server import FakeOpenAIServer
    from tests.helpers.stack import fast_provider_factory
    from tests.helpers.ui_driver import choose_file, find_dialog

    with (
        tempfile.TemporaryDirectory(prefix="etos-data-") as data,
        tempfile.TemporaryDirectory(prefix="etos-files-") as files,
        FakeOpenAIServer() as server,
    ):
        env = {"ETOS_DATA_DIR": data, "OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "fake"}
        settings = SettingsStore(paths.settings_path(Path(data)))
        settings.load()
        settings.set("ui.language", language)
        settings.set("memory.embedder", "keywords")
        settings.save()
        memory_list = Path(files) / ("chatgpt-memory.txt" if language == "en" else "记忆.txt")
        memory_list.write_text(_MEMORY_LISTS[language], encoding="utf-8")
        card = Path(files) / f"{_CARDS[language]['name']}.png"
        card.write_bytes(card_png(v2_card(**_CARDS[language]), image=_card_picture()))
        app = EtosApp(qt_app, env, local_candidates=[], provider_factory=fast_provider_factory([]))
        app.window.resize(*WINDOW)
        app.window.show()
        await app.start()
        assert app.memory is not None
        await app.memory.save(
            "Plays the cello on Sundays" if language == "en" else "每天早上跑步五公里", "fact"
        )
        for theme in themes:
            app.apply_theme(theme)
            await _settle()
            dialog = app.open_settings("memory")
            page = dialog.page("memory")
            await page.wait_idle()
            page.import_list_action.trigger()
            await choose_file(str(memory_list))
            preview = await find_dialog(ImportPreviewDialog, name="memoryImportPreview")
            for size, tag in (((800, 600), "800x600"), ((1200, 900), "large")):
                preview.resize(*size)
                await _settle(0.4)
                preview.grab().save(str(out / f"import-list-{language}-{theme}-{tag}.png"))
            preview.reject()
            await page.wait_idle()

            dialog.show_page("persona")
            persona = dialog.page("persona")
            persona.import_card_button.click()
            await choose_file(str(card))
            card_preview = await find_dialog(CardPreviewDialog, name="cardPreview")
            for size, tag in (((800, 600), "800x600"), ((1200, 900), "large")):
                card_preview.resize(*size)
                await _settle(0.4)
                card_preview.grab().save(str(out / f"import-card-{language}-{theme}-{tag}.png"))
            card_preview.accept()
            await persona.wait_idle()
            await _settle(0.3)
            dialog.resize(940, 620)
            await _settle(0.3)
            dialog.grab().save(str(out / f"persona-after-card-{language}-{theme}.png"))
            dialog.reject()
            await _settle()
        app.window.close()
        await app.shutdown()
        app.window.deleteLater()
        await _settle()


_CHECKIN_TEXTS = {
    "en": {
        "user": "Can you help me plan three days in Kyoto in April? I'd like a ryokan near Gion.",
        "reply": "Gladly! Gion is lovely in April: temples in the morning, the old streets at dusk.",
        "summary": (
            "The user planned three days in Kyoto in April and compared ryokans near Gion; they "
            "wanted temples in the mornings and decided to book before the end of the week."
        ),
        "profile": "## Identity\n- Lena, a teacher in Graz\n\n## Interests\n- Travel in Japan",
        "greeting": (
            "Good morning, Lena! Did you manage to book the ryokan near Gion? If you like, we "
            "can sketch the first day in Kyoto together."
        ),
    },
    "zh": {
        "user": "帮我规划一下四月去京都的三天行程？想住在祇园附近的日式旅馆。",
        "reply": "好呀！四月的祇园很美：上午去寺庙，傍晚逛老街。",
        "summary": "用户在规划四月去京都的三天行程，比较了祇园附近的几家日式旅馆，想上午去寺庙，决定本周内订好。",
        "profile": "## 身份\n- 小林，杭州的一名老师\n\n## 兴趣\n- 去日本旅行",
        "greeting": "早上好，小林！祇园附近的旅馆订好了吗？要是愿意，我们可以一起排一排京都的第一天。",
    },
}


async def _checkin_shots(qt_app: Any, themes: Sequence[str], out: Path, *, language: str) -> None:
    """A check-in: the Settings group, and the marked conversation in the list and the chat."""
    from datetime import UTC, datetime

    from PySide6.QtWidgets import QScrollArea, QToolButton

    from etos_desktop.app import EtosApp
    from etos_desktop.core.clock import FakeClock
    from etos_desktop.core.settings import paths
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.services.scheduler import local_zone
    from etos_desktop.ui.context_dialog import ContextDialog
    from tests.helpers.chat_app import idle, send
    from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background
    from tests.helpers.stack import fast_provider_factory
    from tests.helpers.ui_driver import click, wait_until

    texts = _CHECKIN_TEXTS[language]
    clock = FakeClock(datetime(2026, 1, 5, 7, 30, tzinfo=local_zone()).astimezone(UTC))
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
            ("checkins.enabled", True),
            ("checkins.mode", "daily"),
        ):
            settings.set(key, value)
        settings.save()
        app = EtosApp(
            qt_app,
            env,
            local_candidates=[],
            provider_factory=fast_provider_factory([]),
            clock=clock,
        )
        app.window.resize(*WINDOW)
        app.window.show()
        await app.start()
        assert app.jobs is not None
        assert app.summaries is not None
        assert app.profile is not None
        await app.jobs.wait_started()
        server.script(Text(texts["reply"]))
        await send(app, texts["user"])
        assert app.controller is not None
        assert app.controller.current is not None
        await app.controller.update_conversation(
            app.controller.current.id or 0, title="Kyoto" if language == "en" else "京都之行"
        )
        await app.summaries.write_summary(
            conversation_id=app.controller.current.id,
            content=texts["summary"],
            language=language,
            covers_until=0,
            user_turns=6,
            source="scheduled",
        )
        await app.profile.save(texts["profile"], ())
        clock.advance(minutes=90)
        server.script_when(background, Text(texts["greeting"]))
        await app.jobs.scheduler.fire("checkins")
        await idle(app)
        await wait_until(lambda: app.window.sidebar.model.rowCount() == 2, what="the check-in")
        first = app.window.sidebar.model.conversation(0)
        assert first is not None
        assert first.started_by == "companion"
        await app.controller.open_conversation(first.id or 0)
        await idle(app)
        [started] = await app.controller.repo.current_history(first.id or 0)
        first_message = started.id or 0
        for theme in themes:
            app.apply_theme(theme)
            await _settle()
            for size, tag in (((800, 600), "800x600"), (WINDOW, "large")):
                app.window.resize(*size)
                await _settle(0.5)
                app.window.grab().save(str(out / f"checkin-chat-{language}-{theme}-{tag}.png"))
            greeting = app.window.chat.widget(first_message)
            assert greeting is not None
            await click(greeting.findChild(QToolButton, "contextButton"))
            inspector = await wait_until(
                lambda: next(
                    (d for d in app.window.findChildren(ContextDialog) if d.isVisible()), None
                )
            )
            inspector.resize(800, 600)
            await _settle(0.4)
            inspector.grab().save(str(out / f"checkin-inspector-{language}-{theme}-800x600.png"))
            inspector.close()
            dialog = app.open_settings("general")
            page = dialog.page("general")
            await dialog.wait_idle()
            for size, tag in (((800, 600), "800x600"), ((940, 620), "large")):
                dialog.resize(*size)
                await _settle(0.4)
                scroll = page.findChild(QScrollArea)
                section = page.checkins_section
                scroll.verticalScrollBar().setValue(section.y() - 8)
                await _settle(0.3)
                dialog.grab().save(str(out / f"checkin-settings-{language}-{theme}-{tag}.png"))
            dialog.reject()
            await dialog.wait_idle()
            await _settle()
        app.window.close()
        await app.shutdown()
        app.window.deleteLater()
        await _settle()


_USAGE_TEXTS = {
    "en": ("What should I pack for a day in the hills?", "A rain jacket, water and snacks."),
    "zh": ("去山里玩一天要带什么？", "带上雨衣、水和零食。"),
}


async def _usage_shots(qt_app: Any, themes: Sequence[str], out: Path, *, language: str) -> None:
    """A reply with its tokens and cost, the inspector's totals, and the price fields."""
    from PySide6.QtWidgets import QToolButton

    from etos_desktop.app import EtosApp
    from etos_desktop.core.settings import paths
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.core.usage.prices import ModelPrice
    from etos_desktop.ui.context_dialog import ContextDialog
    from tests.helpers.chat_app import idle, send
    from tests.helpers.fake_openai_server import FakeOpenAIServer, Reported, Text
    from tests.helpers.stack import fast_provider_factory
    from tests.helpers.ui_driver import click, wait_until

    question, answer = _USAGE_TEXTS[language]
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
        settings.set_model_price("fake-chat", ModelPrice(2.5, 10.0))
        settings.save()
        app = EtosApp(qt_app, env, local_candidates=[], provider_factory=fast_provider_factory([]))
        app.window.resize(*WINDOW)
        app.window.show()
        await app.start()
        server.script(Text(answer, reported=Reported(1234, 210, cached_tokens=800)))
        await send(app, question)
        await idle(app)
        assert app.controller is not None
        assert app.controller.current is not None
        rows = await app.controller.repo.current_history(app.controller.current.id or 0)
        reply_id = rows[-1].id or 0
        for theme in themes:
            app.apply_theme(theme)
            await _settle()
            for size, tag in (((800, 600), "800x600"), (WINDOW, "large")):
                app.window.resize(*size)
                await _settle(0.5)
                app.window.grab().save(str(out / f"usage-reply-{language}-{theme}-{tag}.png"))
            reply = app.window.chat.widget(reply_id)
            assert reply is not None
            await click(reply.findChild(QToolButton, "contextButton"))
            inspector = await wait_until(
                lambda: next(
                    (d for d in app.window.findChildren(ContextDialog) if d.isVisible()), None
                )
            )
            inspector.resize(800, 600)
            await _settle(0.4)
            inspector.grab().save(str(out / f"usage-inspector-{language}-{theme}-800x600.png"))
            inspector.close()
            dialog = app.open_settings("providers")
            page = dialog.page("providers")
            await dialog.wait_idle()
            for size, tag in (((800, 600), "800x600"), ((940, 700), "large")):
                dialog.resize(*size)
                await _settle(0.4)
                page.price_input_spin.setFocus()
                scroll = page.editor.parentWidget().parentWidget()
                scroll.ensureWidgetVisible(page.price_help)
                await _settle(0.3)
                dialog.grab().save(str(out / f"usage-price-{language}-{theme}-{tag}.png"))
            dialog.reject()
            await dialog.wait_idle()
            await _settle()
        app.window.close()
        await app.shutdown()
        app.window.deleteLater()
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
