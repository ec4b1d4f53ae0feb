"""The UI in Chinese with the real translations: nothing left in English, and a live switch.

A fresh data folder whose Language is 中文 (or Automatic under a ``zh_CN`` locale: a child
process, since Qt reads the system locale once) starts the real app with the committed
``.qm`` files. The test then goes where a person would — the welcome, a conversation with a
code block, a saved memory and a failed reply, the menus, the conversation list's menu, the
tray menu, the inspector (every part of it), each Settings page, About, the shortcuts, the
persona, rename, delete and Remember… dialogs, the memory editor and history, the approval
dialog, the unsaved-changes question — and walks every shown widget's texts
(``tests/helpers/ui_texts.py``). A text with an English word that is not a name, a key, an
identifier or the user's own data fails it.

The second test opens windows in English and switches to 中文 in Settings → General (the real
combo, then Save): every open window is then Chinese, without a restart; and back.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QIcon
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QMessageBox,
    QToolButton,
    QWidget,
)

from etos_desktop.app import EtosApp
from etos_desktop.core.settings import paths
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.sync.state import default_device_name
from etos_desktop.ui.chat_memory_dialogs import ApprovalDialog, MemoryTextDialog
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.conversation_list import RenameDialog
from etos_desktop.ui.persona_dialog import PersonaOverrideDialog
from etos_desktop.ui.settings.dialog import SettingsDialog
from etos_desktop.ui.settings.memory_dialogs import MemoryEditorDialog, MemoryHistoryDialog
from etos_desktop.ui.tray import TrayIcon
from tests.helpers import showcase
from tests.helpers.chat_app import history, idle, send, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, ToolCall
from tests.helpers.qt_async import expect_signal
from tests.helpers.stack import fast_provider_factory
from tests.helpers.ui_driver import click, find_dialog, wait_until
from tests.helpers.ui_texts import action_texts, chinese, english, untranslated, window_texts

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 15
#: The chat's own content (the showcase's Chinese conversation) and the test server's model.
DATA_WORDS = frozenset(
    word
    for texts in (showcase.QUESTION, showcase.ANSWER, showcase.REMEMBER, showcase.MEMORY)
    for word in english(texts["zh"])
)
#: The test server's model, and this computer's name (Settings → Sync offers it as the device's).
MODEL = ("fake-chat", default_device_name())
#: Widgets whose text is data: a message's text, the bundled parts' names and licences, the
#: user profile's text compared with an earlier version (Settings → Profile).
DATA_WIDGETS = ("messageContent", "aboutParts", "profileDiff")


def _problems(step: str, window: QWidget, words: Iterable[str] = DATA_WORDS) -> list[str]:
    lines = untranslated(window, data=words, phrases=MODEL, skip=DATA_WIDGETS)
    return [f"{step}: {line}" for line in lines]


def _fresh_profile(data_dir: Path, language: str) -> None:
    # Chosen before the first start, as a person who set Language and restarted would have it.
    settings = SettingsStore(paths.settings_path(data_dir))
    settings.load()
    settings.set("ui.language", language)
    settings.save()


@pytest.fixture
async def chinese_app(
    request: pytest.FixtureRequest,
    qapp: QApplication,
    server: FakeOpenAIServer,
    isolated_environment: Path,
) -> AsyncIterator[EtosApp]:
    language = request.param
    if language == "auto" and QLocale.system().language() != QLocale.Language.Chinese:
        pytest.skip("runs in a child process under LANG=zh_CN.UTF-8 (the test below)")
    _fresh_profile(isolated_environment, language)
    app = await start_app(qapp, server, isolated_environment)
    app.window.resize(1400, 880)
    yield app
    await stop_app(app)


async def _close(dialog: QWidget) -> None:
    dialog.close()
    await asyncio.sleep(0.05)


async def _inspector_problems(app: EtosApp, step: str) -> list[str]:
    """Every part of the inspector of each reply, each part's text shown in turn."""
    problems = []
    for row in await history(app):
        if row.role != "assistant" or row.status != "complete":
            continue
        widget = app.window.chat.widget(row.id)
        assert widget is not None
        await click(widget.findChild(QToolButton, "contextButton"))
        await idle(app)
        inspector = await wait_until(
            lambda: next((d for d in app.window.findChildren(ContextDialog) if d.isVisible()), None)
        )
        problems += _problems(f"{step} #{row.id}", inspector)
        for item in inspector._items:
            inspector.tree.setCurrentItem(item)
            problems += [
                f"{step} #{row.id} part {item.text(0)!r}: {line}"
                for line in _lines(inspector.text.toPlainText())
            ]
        await _close(inspector)
    return problems


def _lines(text: str) -> list[str]:
    return [
        f"{line!r} ({', '.join(english(line, DATA_WORDS))})"
        for line in text.splitlines()
        if english(line, DATA_WORDS)
    ]


async def _dialog_problems(step: str, kind: type[QDialog], open_it: object) -> list[str]:
    if callable(open_it):
        opened = open_it()
        if asyncio.iscoroutine(opened):
            await opened
    dialog = await find_dialog(kind)
    await asyncio.sleep(0.05)
    problems = _problems(step, dialog)
    dialog.reject()
    await asyncio.sleep(0.05)
    return problems


@pytest.mark.timeout(240)
@pytest.mark.parametrize("chinese_app", ["zh", "auto"], indirect=True)
async def test_nothing_is_left_in_english_under_chinese(
    chinese_app: EtosApp, server: FakeOpenAIServer
) -> None:
    app = chinese_app
    window = app.window
    assert app.ui_language == "zh"
    problems = _problems("welcome of a fresh data folder", window)

    await showcase.fill(app, server, "zh")
    problems += _problems("conversation", window)
    conversation = app.controller.current
    problems += [
        f"conversation list menu: {text!r}"
        for _where, text in action_texts(window.sidebar.build_menu(conversation).actions(), "")
        if english(text)
    ]
    tray = TrayIcon(window, QIcon())
    problems += [
        f"tray menu: {text!r}"
        for _where, text in action_texts(tray.menu.actions(), "")
        if english(text)
    ]
    tray.hide()
    problems += await _inspector_problems(app, "inspector")

    rows = await history(app)
    reply = window.chat.widget(next(r.id for r in rows if r.role == "assistant"))
    mine = window.chat.widget(next(r.id for r in rows if r.role == "user"))
    problems += await _dialog_problems(
        "Remember… dialog",
        MemoryTextDialog,
        lambda: QTest.mouseClick(
            reply.findChild(QToolButton, "rememberButton"), Qt.MouseButton.LeftButton
        ),
    )
    problems += await _dialog_problems(
        "delete message",
        QMessageBox,
        lambda: QTest.mouseClick(
            mine.findChild(QToolButton, "deleteButton"), Qt.MouseButton.LeftButton
        ),
    )
    problems += await _dialog_problems(
        "persona", PersonaOverrideDialog, window.persona_action.trigger
    )
    problems += await _dialog_problems("rename", RenameDialog, window.rename_action.trigger)
    problems += await _dialog_problems(
        "delete conversation", QMessageBox, window.delete_action.trigger
    )
    for name, opened in (("About", window.show_about()), ("shortcuts", window.show_shortcuts())):
        await asyncio.sleep(0.2)
        problems += _problems(name, opened)
        await _close(opened)

    # The approval dialog: the model asks to save while "Ask every time" is chosen.
    app.settings.set("memory.approval", "ask")
    server.script(
        ToolCall("save_memory", json.dumps({"content": "用户住在杭州", "kind": "fact"})),
        Text("好的。"),
    )
    sending = asyncio.ensure_future(send(app, "我住在杭州。"))
    approval = await find_dialog(ApprovalDialog)
    await asyncio.sleep(0.05)
    # The dialog shows the model's fields exactly: its kind is "fact".
    problems += _problems("approval dialog", approval, DATA_WORDS | {"fact"})
    approval.reject()
    await asyncio.wait_for(sending, TIMEOUT)
    app.settings.set("memory.approval", "notify")

    window.settings_action.trigger()
    dialog = await find_dialog(SettingsDialog)
    for name in dialog.page_names():
        dialog.show_page(name)
        await dialog.wait_idle()
        await asyncio.sleep(0.1)
        problems += _problems(f"Settings → {name}", dialog)
    dialog.show_page("memory")
    page = dialog.memory_page
    await wait_until(lambda: page.model.rowCount() > 0)
    problems += await _dialog_problems(
        "memory editor", MemoryEditorDialog, lambda: click(page.add_button)
    )
    page.table.selectRow(0)
    problems += await _dialog_problems(
        "memory history", MemoryHistoryDialog, lambda: click(page.history_button)
    )
    # A changed setting, then Close: the unsaved-changes question.
    dialog.show_page("general")
    font = dialog.general_page.editors["ui.font_size"]
    font.setValue(font.value() + 10)  # type: ignore[attr-defined]
    problems += await _dialog_problems("unsaved changes", QMessageBox, dialog.close_button.click)
    font.setValue(font.value() - 10)  # type: ignore[attr-defined]
    dialog.reject()
    await asyncio.sleep(0.05)

    window.new_action.trigger()
    await idle(app)
    problems += _problems("welcome of a new conversation", window)
    assert not problems, f"{len(problems)} texts left in English:\n" + "\n".join(problems)
    assert window.file_menu.title() == "文件(&F)"
    assert window.chat.welcome.memory_line.text() == "关于你，我记得 1 件事。"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_automatic_language_under_a_chinese_locale(tmp_path: Path) -> None:
    """Language "Automatic" on a fresh data folder under LANG=zh_CN.UTF-8: the same walk."""
    env = {**os.environ, "LANG": "zh_CN.UTF-8", "LANGUAGE": "", "PYTHONPATH": str(ROOT)}
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"{__file__}::test_nothing_is_left_in_english_under_chinese[auto]",
            "-q",
            # One test: xdist workers (-n auto in addopts) would each start and collect.
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(tmp_path / "child"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=290,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout


@pytest.mark.timeout(120)
async def test_first_run_under_chinese_has_nothing_in_english(
    qapp: QApplication, isolated_environment: Path
) -> None:
    """No provider yet: Settings opens on Providers with its welcome and the local search."""
    _fresh_profile(isolated_environment, "zh")
    app = EtosApp(
        qapp,
        {"ETOS_DATA_DIR": str(isolated_environment)},
        local_candidates=[],
        provider_factory=fast_provider_factory([]),
    )
    # Keywords only: the built-in model would load in the background past the test's end.
    app.settings.set("memory.embedder", "keywords")
    app.window.show()
    await app.start()
    try:
        if app.jobs is not None:
            await asyncio.wait_for(app.jobs.wait_started(), TIMEOUT)
        dialog = await find_dialog(SettingsDialog)
        await dialog.wait_idle()
        await asyncio.sleep(0.1)
        problems = _problems("first run: main window", app.window)
        problems += _problems("first run: Settings", dialog)
        assert not problems, "left in English:\n" + "\n".join(problems)
        assert dialog.providers_page.isVisible()
        dialog.reject()
        await dialog.wait_idle()
    finally:
        await stop_app(app)


async def _open_settings(app: EtosApp) -> SettingsDialog:
    app.window.settings_action.trigger()
    dialog = await find_dialog(SettingsDialog)
    dialog.show_page("general")
    return dialog


async def _choose_language(dialog: SettingsDialog, key: Qt.Key) -> None:
    """Pick a language in the real combo with the keyboard, then click the real Save."""
    combo = dialog.general_page.editors["ui.language"]
    assert isinstance(combo, QComboBox)
    combo.setFocus()
    QTest.keyClick(combo, key)
    await asyncio.sleep(0)
    saved = expect_signal(dialog.settings_saved)
    await click(dialog.save_button, settle=False)
    await asyncio.wait_for(saved, TIMEOUT)
    await asyncio.sleep(0.05)


def _all_pages_problems(step: str, dialog: SettingsDialog, check: object) -> list[str]:
    problems = []
    for name in dialog.page_names():
        dialog.show_page(name)
        problems += check(f"{step}: Settings → {name}", dialog)  # type: ignore[operator]
    dialog.show_page("general")
    return problems


def _chinese_problems(step: str, window: QWidget) -> list[str]:
    return [
        f"{step}: {where}: {text!r}"
        for where, text in window_texts(window, skip=DATA_WIDGETS)
        if chinese(text)
    ]


@pytest.mark.timeout(180)
async def test_switching_language_in_settings_retranslates_every_open_window(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> None:
    app = await start_app(qapp, server, isolated_environment)
    try:
        window = app.window
        window.resize(1400, 880)
        await showcase.fill(app, server, "en")
        assert app.ui_language == "en"
        # Windows open while the language changes: the main window (a conversation with a
        # memory note and a failed reply), the inspector, the persona dialog, About, the
        # shortcuts, Settings, and the tray menu.
        rows = await history(app)
        reply = window.chat.widget(next(r.id for r in rows if r.role == "assistant"))
        await click(reply.findChild(QToolButton, "contextButton"))
        await idle(app)
        inspector = await wait_until(
            lambda: next((d for d in window.findChildren(ContextDialog) if d.isVisible()), None)
        )
        window.persona_action.trigger()
        persona = await find_dialog(PersonaOverrideDialog)
        about, shortcuts = window.show_about(), window.show_shortcuts()
        tray = TrayIcon(window, QIcon())
        dialog = await _open_settings(app)
        windows = {
            "main window": window,
            "inspector": inspector,
            "persona": persona,
            "About": about,
            "shortcuts": shortcuts,
        }
        # The conversation and everything sent with it (the prompt, the memory block) are in
        # the conversation's language, English here: the inspector shows them as they were sent.
        sent = [
            str(message.get("content") or "")
            for request in server.chat_requests()
            for message in request.body["messages"]
        ]
        english_words = {
            w
            for text in [*sent, showcase.ANSWER["en"], showcase.NOTED["en"], showcase.MEMORY["en"]]
            for w in english(text)
        }

        def english_problems(step: str, shown: QWidget) -> list[str]:
            lines = untranslated(shown, data=english_words, phrases=MODEL, skip=DATA_WIDGETS)
            return [f"{step}: {line}" for line in lines]

        await _choose_language(dialog, Qt.Key.Key_End)  # 中文
        assert app.ui_language == "zh"
        problems = [p for name, w in windows.items() for p in english_problems(name, w)]
        problems += _all_pages_problems("中文", dialog, english_problems)
        problems += [
            f"tray menu: {text!r}"
            for _where, text in action_texts(tray.menu.actions(), "")
            if english(text)
        ]
        for item in inspector._items:
            inspector.tree.setCurrentItem(item)
            problems += [
                f"inspector part {item.text(0)!r}: {line!r}"
                for line in inspector.text.toPlainText().splitlines()
                if english(line, english_words, MODEL)
            ]
        assert not problems, "left in English after the switch:\n" + "\n".join(problems)
        assert window.file_menu.title() == "文件(&F)"
        assert inspector.windowTitle() == "发送了什么"

        await _choose_language(dialog, Qt.Key.Key_Up)  # English
        assert app.ui_language == "en"
        problems = [p for name, w in windows.items() for p in _chinese_problems(name, w)]
        problems += _all_pages_problems("English", dialog, _chinese_problems)
        problems += [
            f"tray menu: {text!r}"
            for _w, text in action_texts(tray.menu.actions(), "")
            if chinese(text)
        ]
        assert not problems, "left in Chinese after switching back:\n" + "\n".join(problems)
        assert window.file_menu.title() == "&File"
        tray.hide()
        for shown in (inspector, persona, about, shortcuts):
            shown.close()
        dialog.reject()
    finally:
        await stop_app(app)
