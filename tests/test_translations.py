"""The translation files: current against the code (what CI runs), and the check that says so.

``tools/translations.py check`` must pass on the repository; on a copy it must fail when a
``tr()`` text is added without ``update``, when a ``.qm`` is older than its ``.ts``, when a text
is hidden from lupdate, when a Chinese text is untranslated and when a translation loses a
placeholder. And English has its own ``.qm``, so a plural reads "1 memory".
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from xml.etree import ElementTree

import pytest
from PySide6.QtCore import QCoreApplication, QLocale

from etos_desktop.app import load_translations

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "translations.py"
TRANSLATIONS = ROOT / "resources" / "translations"


def _load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("etos_translations_tool", TOOL)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_TOOL = _load_tool()


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    """``tools/translations.py ARGS`` run in this process, as its command line would be.

    Its lupdate and lrelease are real processes; its analysis of a file's syntax is a function of
    the text, cached, so the copies' unchanged files are parsed once for all these tests (a
    process per run parsed the whole package each time: 1.5 s of CPU, 17 runs).
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = _TOOL.main(list(args))
        except SystemExit as exc:  # as the interpreter reports it
            code = exc.code if isinstance(exc.code, int) else 1
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
    return subprocess.CompletedProcess(
        ["translations.py", *args], code, out.getvalue(), err.getvalue()
    )


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return _tool("check", "--root", str(root))


def _run(*args: str) -> None:
    result = _tool(*args)
    assert result.returncode == 0, result.stderr


def test_the_translations_are_current_and_complete() -> None:
    # What CI runs, as it runs it: the tool's own process.
    result = subprocess.run(
        [sys.executable, str(TOOL), "check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "etos_zh_CN.ts: " in result.stdout


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The package and its translations, copied where the test may change them."""
    shutil.copytree(ROOT / "etos_desktop", tmp_path / "etos_desktop")
    shutil.copytree(TRANSLATIONS, tmp_path / "resources" / "translations")
    return tmp_path


def _add_to_about(copy: Path, code: str) -> None:
    about = copy / "etos_desktop" / "ui" / "about.py"
    text = about.read_text(encoding="utf-8")
    marker = "    def retranslate(self) -> None:\n"
    assert marker in text
    about.write_text(text.replace(marker, marker + code, 1), encoding="utf-8")


def test_check_fails_when_a_text_is_added_without_update(copy: Path) -> None:
    assert _check(copy).returncode == 0
    _add_to_about(copy, '        self.setStatusTip(self.tr("A brand-new text"))\n')
    result = _check(copy)
    assert result.returncode == 1
    assert "etos_zh_CN.ts lacks AboutDialog: 'A brand-new text'" in result.stderr
    # update brings it in, untranslated: still not done.
    _run("update", "--root", str(copy))
    result = _check(copy)
    assert result.returncode == 1
    assert "untranslated AboutDialog: 'A brand-new text'" in result.stderr
    assert "lacks" not in result.stderr


def test_check_fails_when_a_text_is_gone_from_the_code(copy: Path) -> None:
    about = copy / "etos_desktop" / "ui" / "about.py"
    about.write_text(
        about.read_text(encoding="utf-8").replace('self.tr("Open folder")', '"Open folder"'),
        encoding="utf-8",
    )
    result = _check(copy)
    assert result.returncode == 1
    assert "keeps AboutDialog: 'Open folder', which the code no longer has" in result.stderr


def test_check_fails_when_a_qm_is_older_than_its_ts(copy: Path) -> None:
    ts = copy / "resources" / "translations" / "etos_zh_CN.ts"
    text = ts.read_text(encoding="utf-8")
    assert "<translation>打开文件夹</translation>" in text
    ts.write_text(text.replace("打开文件夹", "打开数据文件夹"), encoding="utf-8")
    result = _check(copy)
    assert result.returncode == 1
    assert "etos_zh_CN.qm is not what etos_zh_CN.ts compiles to" in result.stderr


def test_check_fails_on_a_lost_placeholder(copy: Path) -> None:
    ts = copy / "resources" / "translations" / "etos_zh_CN.ts"
    text = ts.read_text(encoding="utf-8")
    ts.write_text(text.replace("已导出到 {path}", "已导出"), encoding="utf-8")
    _run("release", "--root", str(copy))
    result = _check(copy)
    assert result.returncode == 1
    assert "placeholders [] instead of ['{path}']" in result.stderr


def test_check_fails_on_texts_lupdate_cannot_read(copy: Path) -> None:
    _add_to_about(
        copy,
        "        def hidden(text: str) -> str:\n"
        '            return QCoreApplication.translate("AboutDialog", text)\n'
        '        self.setStatusTip(hidden("Through a helper"))\n'
        '        self.setWhatsThis(QCoreApplication.translate("AboutDialog", "%n parts", None, len(self._part_list)))\n',
    )
    about = copy / "etos_desktop" / "ui" / "about.py"
    about.write_text(
        "from PySide6.QtCore import QCoreApplication\n" + about.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    result = _check(copy)
    assert result.returncode == 1
    assert "hidden() hides its text from lupdate" in result.stderr
    assert "lupdate did not extract AboutDialog: '%n parts'" in result.stderr


@pytest.mark.parametrize("locale", ["en_US", "C", "de_DE"])
def test_english_says_one_memory_and_two_memories(qapp: object, locale: str) -> None:
    translators = load_translations(QLocale(locale))
    assert any(t.filePath().endswith("etos_en.qm") for t in translators)
    for translator in translators:
        QCoreApplication.installTranslator(translator)
    try:
        archived = "Archived %n memories."
        assert QCoreApplication.translate("MemoryPage", archived, None, 1) == "Archived 1 memory."
        assert QCoreApplication.translate("MemoryPage", archived, None, 2) == "Archived 2 memories."
        remember = "I remember %n thing(s) about you."
        assert (
            QCoreApplication.translate("WelcomePanel", remember, None, 1)
            == "I remember 1 thing about you."
        )
    finally:
        for translator in translators:
            QCoreApplication.removeTranslator(translator)


def test_any_chinese_locale_gets_simplified_chinese(qapp: object) -> None:
    for name in ("zh_CN", "zh_TW", "zh_HK", "zh"):
        files = [t.filePath() for t in load_translations(QLocale(name))]
        assert any(f.endswith("etos_zh_CN.qm") for f in files), (name, files)


def test_every_setting_is_described_in_both_languages() -> None:
    """A setting added to the schema without its marker would show English under 中文."""
    from etos_desktop.core.settings.schema import SETTINGS

    root = ElementTree.parse(TRANSLATIONS / "etos_zh_CN.ts").getroot()
    schema = {
        message.findtext("source")
        for context in root.iter("context")
        if context.findtext("name") == "SettingsSchema"
        for message in context.iter("message")
    }
    assert [s.key for s in SETTINGS if s.description not in schema] == []


def test_a_translated_text_that_goes_and_comes_back_keeps_its_translation(copy: Path) -> None:
    """How the Profile page's translations wait in the .ts for its merge: as vanished texts."""
    about = copy / "etos_desktop" / "ui" / "about.py"
    original = about.read_text(encoding="utf-8")
    about.write_text(original.replace('self.tr("Open folder")', '"Open folder"'), encoding="utf-8")
    _run("update", "--root", str(copy))
    assert _check(copy).returncode == 0
    ts = copy / "resources" / "translations" / "etos_zh_CN.ts"
    assert '<translation type="vanished">打开文件夹</translation>' in ts.read_text(encoding="utf-8")

    about.write_text(original, encoding="utf-8")
    _run("update", "--root", str(copy))
    assert _check(copy).returncode == 0
    assert "<translation>打开文件夹</translation>" in ts.read_text(encoding="utf-8")
    # --prune drops what the code does not have: here the Profile page's waiting translations.
    _run("update", "--prune", "--root", str(copy))
    assert 'type="vanished"' not in ts.read_text(encoding="utf-8")
    assert _check(copy).returncode == 0
