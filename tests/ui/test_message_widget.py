"""MessageWidget: rendering, throttling, actions, clipboard, height and translation.

These tests are synchronous: nothing here is async, so they need no qasync loop.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, Qt, QTranslator, QUrl
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QTextBrowser, QToolButton
from pytestqt.qtbot import QtBot

from etos_desktop.resources import resource_path
from etos_desktop.ui import message_widget as message_widget_module
from etos_desktop.ui.message_widget import MessageWidget

THEME = resource_path("themes", "light.qss").read_text(encoding="utf-8")

CODE_REPLY = (
    "Two snippets:\n\n```python\nprint('first')\n```\n\n"
    "and\n\n```bash\necho second && ls -la\n```\n"
)


@pytest.fixture
def make_widget(qtbot: QtBot) -> Callable[..., MessageWidget]:
    def make(role: str = "assistant", **kwargs: Any) -> MessageWidget:
        widget = MessageWidget(7, role, author=kwargs.pop("author", "Aria"), **kwargs)
        widget.setStyleSheet(THEME)
        qtbot.addWidget(widget)
        widget.resize(480, 200)
        widget.show()
        return widget

    return make


def _browser(widget: MessageWidget) -> QTextBrowser:
    browser = widget.findChild(QTextBrowser)
    assert browser is not None
    return browser


def _button(widget: MessageWidget, name: str) -> QToolButton:
    button = widget.findChild(QToolButton, name)
    assert button is not None
    return button


def _collect(signal: Any) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    signal.connect(lambda *args: calls.append(args))
    return calls


def test_set_text_renders_markdown_and_keeps_the_raw_text(
    make_widget: Callable[..., MessageWidget],
) -> None:
    widget = make_widget()

    widget.set_text("Hello **world** <b>raw</b>", streaming=False)

    assert _browser(widget).toPlainText() == "Hello world <b>raw</b>"
    assert widget.text() == "Hello **world** <b>raw</b>"


def test_a_bidi_override_in_a_reply_is_shown_not_obeyed(
    make_widget: Callable[..., MessageWidget],
) -> None:
    """Issue 19: a U+202E in a reply laid out "gnp.exe" right to left, to read "exe.png"."""
    widget = make_widget()
    reply = "Open photo\u202egnp.exe, then 👨\u200d👩\u200d👧 مرحبا שלום"

    widget.set_text(reply, streaming=False)

    block = _browser(widget).document().firstBlock()
    start = block.text().index("gnp.exe")
    line = block.layout().lineForTextPosition(start)
    # The cursor after each character of "gnp.exe" moves right: left to right, as written.
    xs = [line.cursorToX(start + i)[0] for i in range(1, len("gnp.exe") + 1)]
    assert xs == sorted(xs)
    # The emoji sequence and the right-to-left words are shown as written.
    shown = "Open photo⟨U+202E⟩gnp.exe, then 👨\u200d👩\u200d👧 مرحبا שלום"
    assert _browser(widget).toPlainText() == shown
    assert widget.text() == reply  # kept as the model sent it (Copy copies it)


def test_streaming_updates_are_coalesced(
    qtbot: QtBot, make_widget: Callable[..., MessageWidget]
) -> None:
    widget = make_widget(render_interval_ms=10_000)
    renders = _collect(widget.content_rendered)

    text = ""
    for i in range(200):
        text += f"word{i} "
        widget.set_text(text, streaming=True)

    assert len(renders) == 1  # the first chunk shows at once, the rest waits for the timer
    assert widget.text() == text
    widget.flush_render()
    assert len(renders) == 2
    assert _browser(widget).toPlainText().strip() == text.strip()
    widget.flush_render()
    assert len(renders) == 2  # nothing pending, nothing rendered


def test_throttled_render_fires_by_itself(
    qtbot: QtBot, make_widget: Callable[..., MessageWidget]
) -> None:
    widget = make_widget(render_interval_ms=20)
    renders = _collect(widget.content_rendered)

    for i in range(50):
        widget.set_text("x" * (i + 1), streaming=True)

    qtbot.waitUntil(lambda: _browser(widget).toPlainText() == "x" * 50, timeout=2000)
    assert len(renders) <= 3


def test_final_text_renders_immediately(make_widget: Callable[..., MessageWidget]) -> None:
    widget = make_widget(render_interval_ms=10_000)
    widget.set_text("partial", streaming=True)
    widget.set_text("partial and more", streaming=True)

    widget.set_text("partial and more, done", streaming=False)

    assert _browser(widget).toPlainText() == "partial and more, done"


def _click_text(qtbot: QtBot, browser: QTextBrowser, text: str, occurrence: int) -> None:
    cursor = browser.document().find(text)
    for _ in range(occurrence):
        cursor = browser.document().find(text, cursor)
    assert not cursor.isNull()
    rect = browser.cursorRect(cursor)
    # The cursor sits after the word: click inside it.
    point = QPoint(rect.left() - 4, rect.center().y())
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_copy_code_link_puts_exactly_that_code_on_the_clipboard(
    qtbot: QtBot, make_widget: Callable[..., MessageWidget]
) -> None:
    widget = make_widget()
    widget.resize(600, 400)
    widget.set_text(CODE_REPLY, streaming=False)
    copied = _collect(widget.code_copied)
    QGuiApplication.clipboard().clear()

    _click_text(qtbot, _browser(widget), "Copy", occurrence=1)

    assert copied == [(1,)]
    assert QGuiApplication.clipboard().text() == "echo second && ls -la"


def test_copy_button_copies_the_raw_markdown(make_widget: Callable[..., MessageWidget]) -> None:
    widget = make_widget()
    widget.set_text(CODE_REPLY, streaming=False)
    requested = _collect(widget.copy_requested)

    _button(widget, "copyButton").click()

    assert QGuiApplication.clipboard().text() == CODE_REPLY
    assert requested == [(7,)]
    # The icon says it is done: its tooltip and accessible name too, for a while.
    assert _button(widget, "copyButton").toolTip() == "Copied"
    assert _button(widget, "copyButton").accessibleName() == "Copied"


def test_http_links_open_in_the_browser_and_others_do_not(
    monkeypatch: pytest.MonkeyPatch, make_widget: Callable[..., MessageWidget]
) -> None:
    opened: list[str] = []

    class FakeDesktopServices:
        @staticmethod
        def openUrl(url: QUrl) -> bool:  # noqa: N802 (stands in for Qt's)
            opened.append(url.toString())
            return True

    monkeypatch.setattr(message_widget_module, "QDesktopServices", FakeDesktopServices)
    widget = make_widget()
    widget.set_text("[x](https://example.com)", streaming=False)
    browser = _browser(widget)

    for url in ("https://example.com", "file:///etc/passwd", "javascript:alert(1)", "copy-code:9"):
        browser.anchorClicked.emit(QUrl(url))

    assert opened == ["https://example.com"]


def test_version_switcher_asks_for_neighbouring_versions(
    make_widget: Callable[..., MessageWidget],
) -> None:
    widget = make_widget()
    requested = _collect(widget.version_requested)
    previous = _button(widget, "previousVersionButton")
    following = _button(widget, "nextVersionButton")
    assert previous.isHidden()

    widget.set_versions(1, 3)
    previous.click()
    following.click()

    assert requested == [(7, 0), (7, 2)]
    label = widget.findChild(QLabel, "versionLabel")
    assert label is not None
    assert label.text() == "2/3"
    assert not previous.isHidden()

    widget.set_versions(0, 3)
    assert not previous.isEnabled()
    assert following.isEnabled()
    with pytest.raises(ValueError, match="bad version"):
        widget.set_versions(3, 3)


def test_action_buttons_emit_intents(make_widget: Callable[..., MessageWidget]) -> None:
    assistant = make_widget()
    user = make_widget("user", author="ignored")
    calls = {
        name: _collect(getattr(widget, signal))
        for name, widget, signal in [
            ("regenerate", assistant, "regenerate_requested"),
            ("context", assistant, "context_requested"),
            ("delete", assistant, "delete_requested"),
            ("edit", user, "edit_requested"),
        ]
    }

    _button(assistant, "regenerateButton").click()
    _button(assistant, "contextButton").click()
    _button(assistant, "deleteButton").click()
    _button(user, "editButton").click()

    assert all(found == [(7,)] for found in calls.values()), calls
    # Each role gets only its own actions.
    assert user.findChild(QToolButton, "regenerateButton") is None
    assert user.findChild(QToolButton, "contextButton") is None
    assert assistant.findChild(QToolButton, "editButton") is None
    assert user.objectName() == "userMessage"
    assert assistant.objectName() == "assistantMessage"
    role = user.findChild(QLabel, "messageRole")
    assert role is not None
    assert role.text() == "You"


def test_status_line_shows_errors_and_offers_retry(
    make_widget: Callable[..., MessageWidget],
) -> None:
    widget = make_widget()
    retried = _collect(widget.retry_requested)
    status = widget.findChild(QLabel, "messageStatus")
    retry = _button(widget, "retryButton")
    assert status is not None

    widget.set_status("error", "Network down: check your connection.")
    assert status.text() == "Network down: check your connection."
    assert status.isVisibleTo(widget)
    assert retry.isVisibleTo(widget)
    retry.click()
    assert retried == [(7,)]

    widget.set_status("streaming", "Rate limited", retry_in=4)
    assert status.text() == "Rate limited — retrying in 4 s"
    assert not retry.isVisibleTo(widget)
    assert not _button(widget, "regenerateButton").isEnabled()

    widget.set_status("complete")
    assert not status.isVisibleTo(widget)
    assert _button(widget, "regenerateButton").isEnabled()
    assert _button(widget, "regenerateButton").isVisibleTo(widget)

    # A failure offers one way to try again, and none when it cannot help (issue 19).
    widget.set_status("error", "Server error.")
    assert retry.isVisibleTo(widget)
    assert not _button(widget, "regenerateButton").isVisibleTo(widget)
    widget.set_status("error", "Too long for the model.", retryable=False)
    assert not retry.isVisibleTo(widget)
    assert not _button(widget, "regenerateButton").isVisibleTo(widget)
    widget.set_status("complete")
    assert _button(widget, "regenerateButton").isVisibleTo(widget)

    with pytest.raises(ValueError, match="unknown message status"):
        widget.set_status("exploded")


def test_height_follows_the_content(make_widget: Callable[..., MessageWidget]) -> None:
    widget = make_widget()
    browser = _browser(widget)
    widget.set_text("One line.", streaming=False)
    short = browser.height()

    widget.set_text("\n\n".join(f"Paragraph {i} 段落" for i in range(20)), streaming=False)
    tall = browser.height()

    assert tall > short * 5
    assert tall >= browser.document().size().height()
    assert widget.sizeHint().height() > tall

    widget.resize(240, widget.height())
    widget.set_text("a fairly long sentence that has to wrap " * 10, streaming=False)
    narrow = browser.height()
    widget.resize(900, widget.height())
    assert browser.height() < narrow


CHINESE = {
    "Copy": "复制",
    "Copy the message as Markdown": "以 Markdown 复制这条消息",
    "You": "你",
    "Regenerate: write a new version": "重新生成：写一个新版本",
    "Streaming…": "正在生成…",
}


class _Chinese(QTranslator):
    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        return CHINESE.get(source, "")

    def isEmpty(self) -> bool:  # noqa: N802 (Qt override)
        return False


def test_retranslate_on_language_change(
    qtbot: QtBot, make_widget: Callable[..., MessageWidget]
) -> None:
    widget = make_widget()
    user = make_widget("user")
    widget.set_text("```\ncode\n```", streaming=False)
    widget.set_status("streaming")
    translator = _Chinese()

    QCoreApplication.installTranslator(translator)
    try:
        qtbot.waitUntil(
            lambda: _button(widget, "copyButton").toolTip() == "以 Markdown 复制这条消息",
            timeout=2000,
        )
        assert _button(widget, "copyButton").accessibleName() == "以 Markdown 复制这条消息"
        assert _button(widget, "regenerateButton").toolTip() == "重新生成：写一个新版本"
        status = widget.findChild(QLabel, "messageStatus")
        assert status is not None
        assert status.text() == "正在生成…"
        role = user.findChild(QLabel, "messageRole")
        assert role is not None
        assert role.text() == "你"
        assert "复制" in _browser(widget).toPlainText()  # the code block's Copy link
    finally:
        QCoreApplication.removeTranslator(translator)

    QCoreApplication.sendEvent(widget, QEvent(QEvent.Type.LanguageChange))
    assert _button(widget, "copyButton").toolTip() == "Copy the message as Markdown"


# -- streaming in pieces -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "start", "expected"),
    [
        ("one\n\ntwo", 0, len("one\n\n")),
        ("one\n\ntwo\n\nthree", 0, len("one\n\ntwo\n\n")),
        ("no blank line yet", 0, 0),
        # Inside a fence a blank line ends nothing.
        ("```python\na = 1\n\nb = 2\n", 0, 0),
        ("```python\na = 1\n\nb = 2\n```\n\nafter", 0, len("```python\na = 1\n\nb = 2\n```\n\n")),
        # A longer closing fence closes; a shorter one or other text after it does not.
        ("````\n```\n\nx\n````\n\nend", 0, len("````\n```\n\nx\n````\n\n")),
        ("```\ncode ``` not closed\n\nstill code", 0, 0),
        # A list item's indented continuation stays with its item.
        ("- item\n\n  more of the item\n", 0, 0),
        ("- item\n\n  more\n\nnext", 0, len("- item\n\n  more\n\n")),
        # The scan starts at an earlier boundary.
        ("one\n\ntwo\n\nthree", len("one\n\n"), len("one\n\ntwo\n\n")),
    ],
)
def test_stable_boundary(text: str, start: int, expected: int) -> None:
    assert message_widget_module.stable_boundary(text, start) == expected


def test_a_streaming_reply_is_rendered_in_pieces_and_whole_at_the_end(
    make_widget: Callable[..., MessageWidget], qtbot: QtBot
) -> None:
    widget = make_widget(render_interval_ms=0)
    paragraphs = [
        f"Paragraph {i}: " + "words " * 60 + f"\n\n```python\nprint({i})\n```\n\n"
        for i in range(12)
    ]
    text = ""
    for paragraph in paragraphs:
        text += paragraph
        widget.set_text(text, streaming=True)
        widget.flush_render()
    browsers = sorted(
        (b for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)),
        key=widget.layout().indexOf,
    )
    # The finished part is in pieces rendered once; only the rest is rendered again.
    assert len(browsers) > 2
    assert widget.code_blocks == tuple(f"print({i})" for i in range(12))
    # Each piece's Copy links point at the right block in the whole reply.
    links = []
    for browser in browsers:
        links += [
            int(href.split(":")[1])
            for href in _anchors(browser)
            if href.startswith(message_widget_module._COPY_CODE_SCHEME)
        ]
    assert links == list(range(12))
    widget.set_text(text, streaming=False)
    # At once: the pieces stay and only the rest is rendered as final, so it is all there ...
    assert widget.code_blocks == tuple(f"print({i})" for i in range(12))
    shown = "".join(
        b.toPlainText()
        for b in sorted(
            (b for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)),
            key=widget.layout().indexOf,
        )
    )
    assert "Paragraph 0" in shown
    assert "Paragraph 11" in shown
    # ... and the whole reply, rendered as one in the background, replaces them.
    qtbot.waitUntil(
        lambda: len([b for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)]) == 1,
        timeout=5000,
    )
    (joined,) = [b for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)]
    assert widget.code_blocks == tuple(f"print({i})" for i in range(12))
    # One document, laid out as the same reply rendered at once (as a reopen shows it): the
    # same text, the same height, every Copy link in order, and the main browser's name.
    whole = make_widget(render_interval_ms=0)
    whole.set_text(text, streaming=False)
    whole.flush_render()
    (reopened,) = [b for b in whole.findChildren(QTextBrowser) if b.isVisibleTo(whole)]
    assert joined.toPlainText() == reopened.toPlainText()
    assert joined.document().size().height() == pytest.approx(
        reopened.document().size().height(), abs=1
    )
    links = [
        int(href.split(":")[1])
        for href in _anchors(joined)
        if href.startswith(message_widget_module._COPY_CODE_SCHEME)
    ]
    assert links == list(range(12))
    assert joined.accessibleName() == reopened.accessibleName()


_JOINS = (
    "Paragraph 0: " + "words " * 60 + "\n\n```python\nprint(0)\n```\n\nParagraph 1: more\n\n"
    "- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n> quote\n\nend\n",
    "# Title\n\nSome text\n\n```\ncode\n```\n\n```\ncode2\n```\n\ntext",
    "```\nx\n```\n\n# H1\n\npara\n\n1. one\n2. two\n\n> quoted\n\n## H2\n\n中文段落。\n\n```\ny\n```\n\n",
    "para\n\n> q1\n\n> q2\n\n---\n\nafter rule\n\n- x\n\n  cont\n\n- y\n\nlast",
)


@pytest.mark.parametrize("text", _JOINS)
def test_pieces_join_into_the_document_a_whole_render_makes(
    text: str, make_widget: Callable[..., MessageWidget]
) -> None:
    # Every place a streamed reply can be cut into pieces: the joined document has the text of
    # the same reply rendered at once, and its height within one paragraph margin (8 px): next
    # to a list, table or quote the pieces were rendered apart, and Markdown spaces two lists
    # (or a list and a table) a little differently from one.
    whole = make_widget()
    whole.set_text(text, streaming=False)
    whole.flush_render()
    expected = _browser(whole)
    cuts = [
        i
        for i in range(2, len(text))
        if text[i - 2 : i] == "\n\n"
        and message_widget_module.stable_boundary(text[:i] + "x", 0) == i
    ]
    assert len(cuts) >= 4
    for cut in cuts:
        head, tail = make_widget(), make_widget()
        head.set_text(text[:cut], streaming=False)
        tail.set_text(text[cut:], streaming=False)
        head.flush_render()
        tail.flush_render()
        message_widget_module._append_document(_browser(head), _browser(tail))
        joined = _browser(head).document()
        assert joined.toPlainText() == expected.toPlainText(), repr(text[cut : cut + 12])
        assert joined.size().height() == pytest.approx(
            expected.document().size().height(), abs=8.5
        ), repr(text[cut : cut + 12])


def test_a_long_message_shows_its_beginning_and_all_on_request(
    make_widget: Callable[..., MessageWidget],
) -> None:
    widget = make_widget(role="user")
    text = "x" * (message_widget_module.PREVIEW_CHARS + 5000)
    widget.set_text(text, streaming=False)
    (browser,) = [b for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)]
    more = widget.findChild(QToolButton, "showAllButton")
    assert more.isVisibleTo(widget)
    assert "5,000" in more.text() or "5000" in more.text()
    assert len(browser.toPlainText()) == message_widget_module.PREVIEW_CHARS
    assert widget.text() == text
    more.click()
    assert len(browser.toPlainText()) == len(text)
    assert not more.isVisibleTo(widget)


def _anchors(browser: QTextBrowser) -> list[str]:
    hrefs = []
    block = browser.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.isValid() and fragment.charFormat().anchorHref():
                hrefs.append(fragment.charFormat().anchorHref())
            iterator += 1
        block = block.next()
    return list(dict.fromkeys(hrefs))


#: Byte value -> one of the letters the texts are made of.
_LETTERS = {byte: "ab中"[byte % 3] for byte in range(256)}


def test_has_long_run_finds_what_the_regular_expression_finds():
    """The sampled search (issue 21 item 7) decides as ``\\S{n}`` does, at every edge."""
    import random
    import re

    rng = random.Random(21)
    spaces = [" ", "\n", "\t", "\u3000", "\xa0"]
    for _ in range(3000):
        size = rng.choice([0, 1, 999, 1000, 1001, 1999, 2000, 2001, 3500])
        # From random bytes: a choice() per character took 3 s of the test's 4.5.
        chars = list(rng.randbytes(size).decode("latin-1").translate(_LETTERS))
        for _hole in range(rng.choice([0, 1, 2, 3, 8])):
            if size:
                chars[rng.randrange(size)] = rng.choice(spaces)
        text = "".join(chars)
        for length in (1000, 7, 1):
            expected = re.search(rf"\S{{{length}}}", text) is not None
            assert message_widget_module.has_long_run(text, length) == expected, (size, length)
