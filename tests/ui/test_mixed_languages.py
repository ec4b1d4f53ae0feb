"""The 中文 UI with the real translations: exports, file choosers and the companion's name.

Each test was written for a defect of issue 19 and failed on the code before its fix: parts of
the app stayed English under 中文 (a Markdown export's headings, the file chooser's labels), and
an English conversation in the Chinese UI named the companion 小忆 on screen while its prompt
said "Your name is Etos".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel

from etos_desktop.app import EtosApp
from etos_desktop.core.settings import paths
from etos_desktop.core.settings.store import SettingsStore
from tests.helpers.chat_app import history, idle, send, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text
from tests.helpers.ui_driver import cancel_file_chooser, choose_file, find_dialog, wait_until


@pytest.fixture
async def chinese(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    # Chosen before the start, as a person who set Language to 中文 and restarted has it.
    settings = SettingsStore(paths.settings_path(isolated_environment))
    settings.load()
    settings.set("ui.language", "zh")
    settings.save()
    app = await start_app(qapp, server, isolated_environment)
    yield app
    await stop_app(app)


def _author(app: EtosApp, message_id: int) -> str:
    widget = app.window.chat.widget(message_id)
    assert widget is not None
    label = widget.findChild(QLabel, "messageRole")
    assert label is not None
    return label.text()


async def test_an_english_conversation_names_the_companion_etos_on_screen_and_in_the_prompt(
    chinese: EtosApp, server: FakeOpenAIServer
) -> None:
    chat = chinese.window.chat
    # A new conversation has no message yet: the UI language decides.
    assert chat.welcome.title.text() == "你好，我是小忆。"
    server.script(Text("I'm fine, thanks."))
    await send(chinese, "How are you today?")
    reply = next(r for r in await history(chinese) if r.role == "assistant")
    system = server.chat_requests()[-1].body["messages"][0]["content"]
    assert system.startswith("Your name is Etos.")
    assert _author(chinese, reply.id) == "Etos"
    # A name the user gave the conversation wins, on screen as in the next prompt.
    assert chinese.controller is not None
    assert chinese.controller.current is not None
    await chinese.controller.update_conversation(chinese.controller.current.id, persona_name="Ada")
    await idle(chinese)
    assert _author(chinese, reply.id) == "Ada"
    server.script(Text("Still fine."))
    await send(chinese, "And now?")
    assert server.chat_requests()[-1].body["messages"][0]["content"].startswith("Your name is Ada.")


async def test_a_chinese_conversation_names_the_companion_xiaoyi(
    chinese: EtosApp, server: FakeOpenAIServer
) -> None:
    server.script(Text("挺好的。"))
    await send(chinese, "你今天怎么样？")
    reply = next(r for r in await history(chinese) if r.role == "assistant")
    assert server.chat_requests()[-1].body["messages"][0]["content"].startswith("你的名字是小忆。")
    assert _author(chinese, reply.id) == "小忆"


async def test_the_markdown_export_and_its_file_chooser_are_chinese(
    chinese: EtosApp, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.script(Text("好的。"))
    await send(chinese, "你好")
    chinese.window.export_md_action.trigger()
    chooser = await find_dialog(QFileDialog)
    labels = {
        label: chooser.labelText(label)
        for label in (
            QFileDialog.DialogLabel.LookIn,
            QFileDialog.DialogLabel.FileName,
            QFileDialog.DialogLabel.FileType,
            QFileDialog.DialogLabel.Accept,
            QFileDialog.DialogLabel.Reject,
        )
    }
    # Answered before asserting: a chooser left open would hang the app's shutdown.
    target = tmp_path / "chat.md"
    await choose_file(str(target))
    await wait_until(target.exists)
    await idle(chinese)
    assert labels == {
        QFileDialog.DialogLabel.LookIn: "查找范围(&L)：",
        QFileDialog.DialogLabel.FileName: "文件名称(&N)：",
        QFileDialog.DialogLabel.FileType: "文件类型(&T)：",
        QFileDialog.DialogLabel.Accept: "保存(&S)",
        QFileDialog.DialogLabel.Reject: "取消",
    }
    headings = [
        line.split(" — ")[0] for line in target.read_text("utf-8").splitlines() if line[:3] == "## "
    ]
    assert headings == ["## 你", "## 小忆"]


async def test_the_import_file_chooser_is_chinese(chinese: EtosApp) -> None:
    from etos_desktop.ui import dialogs

    chinese.controller.spawn(dialogs.choose_open_path(chinese.window, "打开", "JSON (*.json)"))
    chooser = await find_dialog(QFileDialog)
    labels = [chooser.labelText(QFileDialog.DialogLabel.LookIn)]
    labels.append(chooser.labelText(QFileDialog.DialogLabel.FileType))
    await cancel_file_chooser()
    assert labels == ["查找范围(&L)：", "文件类型(&T)："]
