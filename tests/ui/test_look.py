"""Language, theme and font size switch live from Settings → General, in every open window.

The Chinese here comes from a test translator (a ``QTranslator`` that knows a few source texts):
what is tested is that the app installs what the language setting loads and that every open
window puts its texts into words again, without a restart. The real ``.qm`` files are tested in
``test_translated_ui.py``. The settings are changed as a person would: in the real Settings dialog, with keys,
then Save.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QLocale, Qt, QTranslator
from PySide6.QtGui import QFontDatabase, QFontMetricsF, QGuiApplication, QPalette, QTextLayout
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QSpinBox, QToolButton

from etos_desktop.app import EtosApp
from etos_desktop.ui import fonts
from etos_desktop.ui.about import AboutDialog
from etos_desktop.ui.context_dialog import ContextDialog
from etos_desktop.ui.message_widget import MessageWidget
from etos_desktop.ui.persona_dialog import PersonaOverrideDialog
from etos_desktop.ui.settings.dialog import SettingsDialog
from etos_desktop.ui.shortcuts import ShortcutsDialog
from tests.helpers import showcase
from tests.helpers.chat_app import history, idle, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import click, find_dialog, wait_until

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 15

CHINESE = {
    "&File": "文件(&F)",
    "Send": "发送",
    "Copy": "复制",
    "Copy the message as Markdown": "以 Markdown 复制这条消息",
    "Undo": "撤销",
    "Search conversations": "搜索对话",
    "Settings": "设置",
    "Interface": "界面",
    "Persona for this conversation": "本对话的人设",
    "What was sent": "发送了什么",
    "Keyboard shortcuts": "键盘快捷键",
    "About ETOS Desktop": "关于 ETOS Desktop",
    "Retry": "重试",
    "New conversation": "新对话",
    "Hi, I'm {name}.": "你好，我是{name}。",
}


class _TestChinese(QTranslator):
    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        return CHINESE.get(source, "")

    def isEmpty(self) -> bool:  # noqa: N802 (Qt override)
        return False


def _translations(loaded: list[str]) -> object:
    def load(locale: QLocale) -> Sequence[QTranslator]:
        loaded.append(locale.name())
        return [_TestChinese()] if locale.language() == QLocale.Language.Chinese else []

    return load


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    loaded: list[str] = []
    app = await start_app(qapp, server, isolated_environment, translations=_translations(loaded))
    app.loaded_locales = loaded  # type: ignore[attr-defined]
    app.window.resize(1400, 880)
    await showcase.fill(app, server)
    yield app
    await stop_app(app)


async def _open_settings(app: EtosApp) -> SettingsDialog:
    app.window.settings_action.trigger()
    dialog = await find_dialog(SettingsDialog)
    dialog.show_page("general")
    return dialog


async def _save(dialog: SettingsDialog) -> None:
    saved = expect_signal(dialog.settings_saved)
    await click(dialog.save_button, settle=False)
    await asyncio.wait_for(saved, TIMEOUT)
    await asyncio.sleep(0.05)


async def _choose(combo: QComboBox, *keys: Qt.Key) -> None:
    combo.setFocus()
    for key in keys:
        QTest.keyClick(combo, key)
    await asyncio.sleep(0)


def _reply(app: EtosApp, rows: list[object]) -> MessageWidget:
    reply = next(r for r in rows if r.role == "assistant")  # type: ignore[attr-defined]
    widget = app.window.chat.widget(reply.id)  # type: ignore[attr-defined]
    assert widget is not None
    return widget


async def test_language_switches_live_in_every_open_window(etos: EtosApp) -> None:
    window = etos.window
    chat = window.chat
    rows = await history(etos)
    reply = _reply(etos, rows)
    note = chat.memory_notes()[0]
    # Windows that are open when the language changes.
    window.persona_action.trigger()
    persona = await find_dialog(PersonaOverrideDialog)
    await click(reply.findChild(QToolButton, "contextButton"))
    await idle(etos)
    inspector = await wait_until(
        lambda: next((d for d in window.findChildren(ContextDialog) if d.isVisible()), None)
    )
    shortcuts = window.show_shortcuts()
    about = window.show_about()
    assert window.file_menu.title() == "&File"
    assert chat.banner_action.text() == "Retry"

    dialog = await _open_settings(etos)
    language = dialog.general_page.editors["ui.language"]
    assert isinstance(language, QComboBox)
    await _choose(language, Qt.Key.Key_End)
    assert language.currentData() == "zh"
    await _save(dialog)

    assert etos.ui_language == "zh"
    assert QLocale().language() == QLocale.Language.Chinese
    assert window.file_menu.title() == "文件(&F)"
    assert chat.send_button.text() in ("发送", "Send")  # "Send" is disabled-empty's text
    copy = reply.findChild(QToolButton, "copyButton")
    assert copy.toolTip() == copy.accessibleName() == "以 Markdown 复制这条消息"
    assert note.undo_button.text() == "撤销"
    assert chat.banner_action.text() == "重试"
    assert window.sidebar.search.placeholderText() == "搜索对话"
    assert dialog.windowTitle() == "设置"
    assert dialog.general_page._groups["ui"].title() == "界面"
    assert persona.windowTitle() == "本对话的人设"
    assert inspector.windowTitle() == "发送了什么"
    assert shortcuts.windowTitle() == "键盘快捷键"
    assert about.windowTitle() == "关于 ETOS Desktop"
    # The companion's default name is the conversation's language's, as in its prompt: this
    # conversation is English; a new one has no message, so the UI language decides.
    assert chat.companion_name == "Etos"
    window.new_action.trigger()
    await idle(etos)
    assert chat.title.full_text() == "新对话"
    assert chat.companion_name == "小忆"
    assert chat.welcome.title.text() == "你好，我是小忆。"

    english = dialog.general_page.editors["ui.language"]
    await _choose(english, Qt.Key.Key_Home, Qt.Key.Key_Down)
    assert english.currentData() == "en"
    await _save(dialog)
    assert etos.ui_language == "en"
    assert window.file_menu.title() == "&File"
    assert persona.windowTitle() == "Persona for this conversation"
    assert inspector.windowTitle() == "What was sent"
    assert chat.title.full_text() == "New conversation"
    assert chat.welcome.title.text() == "Hi, I'm Etos."
    assert etos.loaded_locales[-2:] == ["zh_CN", "en_US"]  # type: ignore[attr-defined]
    for shown in (persona, inspector, shortcuts, about):
        shown.close()
    dialog.reject()


async def test_theme_switches_live_from_settings_and_follows_the_system(etos: EtosApp) -> None:
    rows = await history(etos)
    reply = _reply(etos, rows)
    browser = reply.findChild(type(reply._browser), "messageContent")
    assert browser is not None
    light_text = browser.palette().color(QPalette.ColorRole.Text)
    assert "#f6f8fa" in browser.toHtml()  # the light code background

    dialog = await _open_settings(etos)
    theme = dialog.general_page.editors["ui.theme"]
    assert isinstance(theme, QComboBox)
    await _choose(theme, Qt.Key.Key_End)
    assert theme.currentData() == "dark"
    await _save(dialog)
    assert etos.theme.name == "dark"
    assert QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 60
    # The open messages re-rendered: dark code blocks, light text.
    assert "#0d1117" in browser.toHtml()
    assert browser.palette().color(QPalette.ColorRole.Text).lightness() > 180
    assert browser.palette().color(QPalette.ColorRole.Text) != light_text
    # The open Settings dialog follows too.
    assert dialog.palette().color(QPalette.ColorRole.Window).lightness() < 60

    # "Same as the system" follows the platform's colour scheme as it changes.
    await _choose(theme, Qt.Key.Key_Home)
    assert theme.currentData() == "system"
    await _save(dialog)
    hints = QGuiApplication.styleHints()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert etos.theme.name == "dark"
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert etos.theme.name == "light"
    assert "#f6f8fa" in browser.toHtml()
    # A chosen theme does not.
    await _choose(theme, Qt.Key.Key_Down)
    assert theme.currentData() == "light"
    await _save(dialog)
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert etos.theme.name == "light"
    dialog.reject()


async def test_font_size_scales_the_chat_and_the_ui(etos: EtosApp) -> None:
    chat = etos.window.chat
    rows = await history(etos)
    reply = _reply(etos, rows)
    system = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont).pointSizeF()
    before = {
        "app": QApplication.font().pointSizeF(),
        "browser": reply._browser.font().pointSizeF(),
        "title": chat.title.font().pointSizeF(),
        "composer": chat.composer.height(),
        "column": chat.column_width(),
    }
    assert before["app"] == pytest.approx(system)

    dialog = await _open_settings(etos)
    size = dialog.general_page.editors["ui.font_size"]
    assert isinstance(size, QSpinBox)
    size.setFocus()
    QTest.keyClick(size, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(size, "150")
    await asyncio.sleep(0)
    assert size.value() == 150
    await _save(dialog)
    dialog.reject()
    await asyncio.sleep(0.05)

    assert QApplication.font().pointSizeF() == pytest.approx(system * 1.5, abs=0.1)
    assert reply._browser.font().pointSizeF() == pytest.approx(before["browser"] * 1.5, abs=0.1)
    assert chat.title.font().pointSizeF() == pytest.approx(before["title"] * 1.5, abs=0.2)
    assert chat.composer.height() > before["composer"] * 1.3
    assert chat.column_width() > before["column"] * 1.3


# -- fonts ------------------------------------------------------------------------------------


def _families_used(text: str) -> set[str]:
    layout = QTextLayout(text, QApplication.font())
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    return {run.rawFont().familyName() for run in layout.lineAt(0).glyphRuns()}


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_latin_text_gets_a_latin_font_and_chinese_a_chinese_one(
    etos: EtosApp, language: str
) -> None:
    etos.settings.set("ui.language", language)
    etos.install_language(language)
    families = QApplication.font().families()
    installed = set(QFontDatabase.families())
    latin = next(f for f in families if f in installed)
    assert latin in fonts.LATIN_FAMILIES or latin == families[0]
    assert not fonts._covers_cjk(latin)
    metrics = QFontMetricsF(QApplication.font())
    # English quotes are narrow, not a full-width CJK glyph, in either UI language.
    assert metrics.horizontalAdvance("“") < 0.7 * metrics.horizontalAdvance("中")
    assert _families_used("Delete “Hello”?") == {latin}
    if "Noto Sans CJK SC" in installed:
        # Simplified Chinese glyphs, not Qt's own pick (Noto Sans CJK JP).
        assert "Noto Sans CJK SC" in _families_used("删除“你好”吗")


def test_cjk_families_follow_the_locale() -> None:
    assert fonts.cjk_families(QLocale("en_US"))[0] == "Noto Sans CJK SC"
    assert fonts.cjk_families(QLocale("zh_CN"))[0] == "Noto Sans CJK SC"
    assert fonts.cjk_families(QLocale("zh_TW"))[0] == "Noto Sans CJK TC"
    assert fonts.cjk_families(QLocale("ja_JP"))[0] == "Noto Sans CJK JP"


@pytest.mark.slow
def test_automatic_language_follows_the_system_locale(tmp_path: Path) -> None:
    """A fresh profile under LANG=zh_CN.UTF-8 with Language "Automatic" gets a Chinese UI."""
    script = """
import json, sys
from PySide6.QtWidgets import QApplication
from etos_desktop.app import EtosApp
app = QApplication(sys.argv[:1])
asked = []
def load(locale):
    asked.append(locale.name())
    return []
etos = EtosApp(app, {"ETOS_DATA_DIR": sys.argv[1]}, translations=load)
print(json.dumps({
    "setting": etos.settings.get_str("ui.language"),
    "asked": asked,
    "ui_language": etos.ui_language,
    "families": app.font().families()[:3],
}))
"""
    env = {
        **os.environ,
        "LANG": "zh_CN.UTF-8",
        "LANGUAGE": "",
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    shown = json.loads(result.stdout.strip().splitlines()[-1])
    assert shown["setting"] == "auto"
    assert shown["asked"] == ["zh_CN"]
    assert shown["ui_language"] == "zh"
    assert not fonts.LATIN_FAMILIES or shown["families"][0] != "Noto Sans CJK SC"


def test_translate_context_of_the_test_translator_is_ignored() -> None:
    translator = _TestChinese()
    QCoreApplication.installTranslator(translator)
    try:
        assert QCoreApplication.translate("Anything", "Copy") == "复制"
    finally:
        QCoreApplication.removeTranslator(translator)


async def test_about_lists_the_real_licences(qtbot: object) -> None:
    from etos_desktop.ui.about import bundled_parts

    parts = {part.name.lower(): part for part in bundled_parts()}
    assert parts["openai"].licence == "Apache-2.0"
    assert "LGPL-3.0" in parts["pyside6_essentials"].licence
    assert parts["qasync"].licence.startswith("BSD")
    assert "etos-desktop" not in parts
    dialog = AboutDialog(Path("/tmp/etos-data"), parts=lambda: [])
    qtbot.addWidget(dialog)  # type: ignore[attr-defined]
    assert dialog.folder.text() == "/tmp/etos-data"
    assert dialog.part_list()[0].name == "Qt"
    await dialog.loaded


def test_shortcuts_dialog_lists_every_shortcut(qtbot: object) -> None:
    dialog = ShortcutsDialog()
    qtbot.addWidget(dialog)  # type: ignore[attr-defined]
    rows = dict((action, keys) for keys, action in dialog.rows())
    assert rows["Search conversations"] == "Ctrl+K"
    assert rows["Search the messages of every conversation"] == "Ctrl+Shift+F"
    assert rows["Find in this conversation (Esc closes)"] == "Ctrl+F"
    assert rows["Regenerate the last reply"] == "Ctrl+R"
    assert rows["Copy the last reply"] == "Ctrl+Shift+C"
    assert rows["Settings"] == "Ctrl+,"
    assert "Up" in rows["Edit your last message (in the empty composer)"]


async def test_the_persona_avatar_from_settings_shows_beside_replies(
    etos: EtosApp, tmp_path: Path
) -> None:
    from PySide6.QtGui import QColor, QImage
    from PySide6.QtWidgets import QLabel

    from tests.helpers.ui_driver import choose_file

    chat = etos.window.chat
    reply = _reply(etos, await history(etos))
    avatar = reply.findChild(QLabel, "messageAvatar")
    assert avatar is not None
    # The built-in avatar was read off the UI thread at start-up.
    await wait_until(lambda: chat.companion_avatar is not None)
    picture = tmp_path / "fox.png"
    image = QImage(64, 64, QImage.Format.Format_RGB32)
    image.fill(QColor(200, 30, 30))
    assert image.save(str(picture))

    dialog = await _open_settings(etos)
    dialog.show_page("persona")
    await click(dialog.persona_page.choose_avatar_button)
    await choose_file(str(picture))
    await _save(dialog)
    dialog.reject()

    def shows_the_new_avatar() -> bool:
        shown = avatar.pixmap().toImage()
        middle = shown.pixelColor(shown.width() // 2, shown.height() // 2)
        return middle.red() > 180 and middle.green() < 60

    await wait_until(shows_the_new_avatar, TIMEOUT, "the new avatar beside the reply")
    assert chat.welcome.avatar.pixmap().toImage().pixelColor(10, 30).red() > 180
