"""Markdown rendering for chat messages: safety, code blocks, streaming and speed."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re

import pytest
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication

from etos_desktop.ui import markdown_render
from etos_desktop.ui.markdown_render import (
    MAX_MARKDOWN_CHARS,
    RenderedMarkdown,
    escape_invisible,
    render_markdown,
)

REPLY = """Here you go:

```python
def greet(name):
\treturn f"hi {name}"
```

And a shell one:

```bash
echo "<b>not bold</b>"
```
"""


def test_code_blocks_are_extracted_raw_and_linked_for_copying() -> None:
    rendered = render_markdown(REPLY)

    assert isinstance(rendered, RenderedMarkdown)
    assert rendered.code_blocks == (
        'def greet(name):\n\treturn f"hi {name}"',  # the tab survives for copying
        'echo "<b>not bold</b>"',
    )
    assert 'href="copy-code:0"' in rendered.html
    assert 'href="copy-code:1"' in rendered.html
    assert ">python<" in rendered.html
    assert ">bash<" in rendered.html
    assert "```" not in rendered.html
    assert "<b>" not in rendered.html
    assert "&lt;b&gt;not bold&lt;/b&gt;" in rendered.html


def test_code_is_highlighted_with_inline_styles_only() -> None:
    light = render_markdown(REPLY).html
    dark = render_markdown(REPLY, dark=True).html

    assert re.search(r'<span style="color: #[0-9A-Fa-f]{3,6}', light)
    assert "class=" not in light
    assert "<style" not in light
    assert light != dark


def test_raw_html_is_escaped_not_rendered() -> None:
    text = (
        "Hi <script>alert(1)</script> and <img src=x onerror=alert(1)>\n\n"
        "<div onclick='x()'>block</div>\n\n<iframe src='https://evil.example'></iframe>"
    )

    html = render_markdown(text).html

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    for tag in ("<script", "<img", "<div", "<iframe"):
        assert tag not in html.lower()


def test_links_are_kept_only_for_http_and_https() -> None:
    text = (
        "[docs](https://example.com/docs) [bad](javascript:alert(1)) [file](file:///etc/passwd) "
        "see https://example.org/a_b_c. and ![chart](https://example.com/c.png)"
    )

    html = render_markdown(text).html

    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs == [
        "https://example.com/docs",
        "https://example.org/a_b_c",
        "https://example.com/c.png",
    ]
    assert "bad" in html
    assert "file" in html
    assert "<img" not in html


def test_every_link_is_http_or_https_however_it_is_spelled() -> None:
    text = "\n\n".join(
        [
            "<javascript:alert(1)> <file:///etc/passwd>",
            "[a](JAVASCRIPT:alert(1)) [b](&#106;avascript:alert(1)) [c]( javascript:alert(1) )",
            "[d](data:text/html;base64,PHNjcmlwdD4=) [e](file:///etc/passwd)",
            "[f](mailto:a@example.com) [g](/relative/path) [h](copy-code:0)",
            "[i][r]\n\n[r]: vbscript:msgbox(1)",
            "[ok](https://example.com/ok)",
        ]
    )

    html = render_markdown(text).html

    assert re.findall(r'href="([^"]*)"', html) == ["https://example.com/ok"]


def test_images_are_never_loaded_and_anchors_never_nest() -> None:
    text = (
        '![local](file:///etc/hosts) ![remote](https://example.com/a.png "t")\n\n'
        "![ref][img]\n\n[img]: https://example.com/b.png\n\n"
        "[![inner](https://example.com/c.png)](https://example.com/page)\n\n"
        '<img src="https://example.com/d.png"> <IMG SRC=file:///e.png>\n\n'
        "![data](data:image/png;base64,iVBORw0KGgo=)"
    )

    html = render_markdown(text).html

    assert "<img" not in html.lower()
    assert re.findall(r'href="([^"]*)"', html) == [
        "https://example.com/a.png",
        "https://example.com/b.png",
        "https://example.com/page",  # the image inside the link is its text, not a second <a>
        "https://example.com/d.png",  # raw HTML is text, and a URL in text is a link
    ]
    assert "🖼 inner" in html
    assert "🖼 data" in html


def test_link_titles_are_dropped_because_qt_shows_them_as_rich_text_tooltips() -> None:
    text = '[a](https://example.com "<img src=file:///etc/hosts>") ![b](https://e.com/b.png "t")'

    html = render_markdown(text).html

    assert "title" not in html
    assert "etc/hosts" not in html


def test_chinese_emphasis_next_to_fullwidth_punctuation_closes() -> None:
    # CommonMark alone leaves these asterisks as text; models write Chinese this way.
    html = render_markdown(
        "**注意：**这是重点。这是**“引号”**的例子，*斜体，*后面，~~旧（废弃）~~新"
    ).html

    assert "<strong>注意：</strong>这是" in html
    assert "<strong>“引号”</strong>的" in html
    assert "<em>斜体，</em>后面" in html
    assert "<s>旧（废弃）</s>新" in html
    assert "*" not in html


def test_bare_urls_survive_emphasis_and_underscores() -> None:
    html = render_markdown("**https://example.com/x** and https://example.com/a_b_c_d_").html

    assert re.findall(r'href="([^"]*)"', html) == [
        "https://example.com/x",
        "https://example.com/a_b_c_d",
    ]
    assert "<strong><a" in html


def test_deep_nesting_renders_without_losing_text() -> None:
    staircase = "".join("  " * depth + f"- item{depth}\n" for depth in range(300))

    html = render_markdown(staircase).html  # python-markdown raised RecursionError here

    assert all(f"item{depth}<" in html or f"item{depth}\n" in html for depth in range(300))
    assert "deepest" in render_markdown("> " * 60_000 + "deepest").html
    assert "q399" in render_markdown("".join(">" * d + f" q{d}\n" for d in range(1, 400))).html


def test_real_replies_stay_under_the_markup_budget() -> None:
    text = "\n\n".join(
        f"**Item {i}**: see [docs {i}](https://example.com/{i}) and `snake_case_{i}`"
        for i in range(1000)
    )

    html = render_markdown(text).html

    assert html.count('href="https://example.com/') == 1000
    assert html.count("<strong>") == 1000


def test_paragraphs_past_the_markup_budget_are_plain_text() -> None:
    # A model stuck in a loop: each "*a*" costs markdown-it real time; past the budget the rest of
    # the message is shown as text instead of freezing the window.
    text = "**bold** first\n\n" + "*a* " * 20_000 + "\n\n*after*\n\n```py\nx = 1\n```"

    rendered = render_markdown(text)

    assert "<strong>bold</strong>" in rendered.html
    assert "*a* *a*" in rendered.html
    assert "*after*" in rendered.html
    escapes = "\\\\" * 20_000 + "\n\n*after*"  # 20,000 escaped backslashes cost budget too
    assert "*after*" in render_markdown(escapes).html
    assert rendered.code_blocks == ("x = 1",)  # block structure is still Markdown


def test_task_list_markers_become_check_box_glyphs_not_form_controls() -> None:
    html = render_markdown("- [ ] todo\n- [x] done").html

    assert "<input" not in html
    assert "\u2610\u00a0todo" in html
    assert "\u2611\u00a0done" in html


def test_qt_reads_no_stray_spaces_between_blocks(qapp: QApplication) -> None:
    html = render_markdown("Intro\n\n- a\n  - nested\n- b\n\n> quote\n\nend").html
    document = QTextDocument()

    document.setHtml(html)

    lines = document.toPlainText().split("\n")
    assert [line.strip(" \u2022") for line in lines] == [
        "Intro",
        "a",
        "nested",
        "b",
        "quote",
        "",  # a quote is a table (for its bar), and Qt puts an empty block after a table
        "end",
    ]
    assert lines[-1] == "end"
    assert all(line == line.rstrip() for line in lines)


def test_ordered_list_keeps_its_start_number() -> None:
    assert re.search(r'<ol[^>]* start="3"', render_markdown("3. three\n4. four").html)


def test_bare_url_next_to_chinese_text_stops_at_the_url() -> None:
    html = render_markdown("详见https://example.com/guide了解更多").html

    assert 'href="https://example.com/guide"' in html
    assert "了解更多" in html


def test_unclosed_fence_renders_as_code_while_streaming() -> None:
    text = "Let me write it:\n\n```js\nconst x = 1;\nconsole.log("

    rendered = render_markdown(text, streaming=True)

    assert rendered.code_blocks == ("const x = 1;\nconsole.log(",)
    assert 'href="copy-code:0"' in rendered.html
    assert "```" not in rendered.html
    assert "<pre" in rendered.html


def test_only_finished_blocks_are_kept_in_the_highlight_cache_while_streaming() -> None:
    markdown_render._highlight_cached.cache_clear()

    markdown_render.render_markdown(
        "Done:\n\n```py\nx = 1\n```\n\n- growing:\n  ```py\n  y = 2", streaming=True
    )

    # The still-growing block would evict the finished ones every re-render needs.
    assert markdown_render._highlight_cached.cache_info().currsize == 1


def test_inline_triple_backticks_do_not_open_a_block() -> None:
    rendered = render_markdown("Use ```code``` inline and go on.")

    assert rendered.code_blocks == ()


def test_code_block_inside_a_list_item_stays_in_the_list() -> None:
    text = "1. Install:\n\n   ```bash\n   npm i\n   ```\n\n2. Run it"

    rendered = render_markdown(text)

    assert rendered.code_blocks == ("npm i",)
    assert rendered.html.count("<ol") == 1


def test_lists_indented_the_commonmark_way_nest() -> None:
    html = render_markdown("Options:\n- a\n  - nested\n- b\n\n1. one\n   - sub").html

    assert "<p" in html.split("<ul", 1)[0]  # the list is not swallowed by the paragraph
    assert html.count("<ul") == 3
    assert "- nested" not in html
    assert "- sub" not in html


def test_tables_render_with_borders() -> None:
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |").html

    assert '<table border="1"' in html
    assert "<th" in html


def test_control_and_zero_width_characters_do_not_break_rendering() -> None:
    text = "a\x00b\x02wzxhzdk:0\x03c\x1b[31m\u200bd\u202ee\ud800f\r\ng\u2028h\x7f\x85"

    html = render_markdown(text).html

    assert "\x00" not in html
    assert "\x02" not in html
    assert "\ud800" not in html
    html.encode("utf-8")  # no lone surrogate left
    assert "\u2400" in html  # NUL shown as ␀


def test_bidi_controls_are_shown_in_text_and_in_code() -> None:
    """Issue 19: overrides and isolates reached the view and reordered text and code."""
    text = 'photo\u202egnp.exe \u2066x\u2069\n\n```python\naccess = "user\u202e \u2066# admin"\n```'

    rendered = render_markdown(text)

    assert not any(chr(c) in rendered.html for c in (0x202E, 0x2066, 0x2069))
    assert "photo⟨U+202E⟩gnp.exe ⟨U+2066⟩x⟨U+2069⟩" in rendered.html
    assert rendered.code_blocks == ('access = "user⟨U+202E⟩ ⟨U+2066⟩# admin"',)


def test_a_forged_placeholder_stays_text() -> None:
    text = "XETOSCODE000000000000QC0Q\n\n```\ncode\n```"

    rendered = render_markdown(text)

    assert "XETOSCODE000000000000QC0Q" in rendered.html
    assert rendered.code_blocks == ("code",)


def test_copy_link_label_is_translatable_text() -> None:
    assert ">Copy</a>" in render_markdown("```\nx\n```").html


def test_escape_invisible_shows_hidden_characters() -> None:
    assert escape_invisible("plain text, 中文\n\ttab") == "plain text, 中文\n\ttab"
    assert escape_invisible("a\u200bb") == "a\\u200bb"
    assert escape_invisible("abc\u202edef") == "abc\\u202edef"
    assert escape_invisible("x\x00y\x1b") == "x\\u0000y\\u001b"
    assert escape_invisible("tag\U000e0041") == "tag\\U000e0041"
    assert escape_invisible("\ufeffbom") == "\\ufeffbom"


def test_escape_invisible_keeps_one_emoji_selector_but_not_a_run() -> None:
    assert escape_invisible("ok ❤\ufe0f") == "ok ❤\ufe0f"
    assert escape_invisible("❤\ufe0f\ufe0f\ufe0e") == "❤\ufe0f\\ufe0f\\ufe0e"
    assert escape_invisible("\ufe0fstart") == "\\ufe0fstart"


def test_twenty_kilobyte_reply_renders_fast() -> None:
    chunk = (
        "A **reply** with `code`, [a link](https://example.com) and 中文文本。\n\n"
        "```python\nfor i in range(10):\n    print(i)\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n"
    )
    text = (chunk * (20_000 // len(chunk) + 1))[:20_000]
    render_markdown(text)  # warm up the parser and the lexers

    rendered = render_markdown(text)
    # Its speed is measured by tests/bench/text_speed.py; here only that it renders fully.
    assert rendered.html.count("copy-code:") == len(rendered.code_blocks) > 0


@pytest.mark.timeout(10)
def test_one_megabyte_renders() -> None:
    text = ("Some **text** with [links](https://example.com) and `code`.\n\n" * 20_000)[:1_000_000]

    rendered = render_markdown(text)

    assert len(text) > MAX_MARKDOWN_CHARS
    assert "links" in rendered.html


@pytest.mark.parametrize(
    "text",
    [
        "![" * 60_000,
        "[[" * 30_000 + "a" + "]]" * 30_000,
        "[x](<" * 24_000,
        "a\n=\n" * 15_000,
        "> " * 60_000 + "x",
        "\\" * 120_000,
        "```\n" * 30_000,
    ],
    ids=["images", "nested-links", "open-parens", "setext", "deep-quote", "escapes", "fences"],
)
@pytest.mark.timeout(10)
def test_pathological_input_does_not_hang(text: str) -> None:
    # python-markdown took seconds to minutes on these; markdown-it is linear on them (times in
    # tests/bench/text_speed.py). The timeout marker fails the test if that stops being true.
    assert render_markdown(text).html


def test_indented_fence_keeps_relative_indentation() -> None:
    text = "- step:\n  ```python\n  if x:\n      y()\n z()\n  ```"

    assert render_markdown(text).code_blocks == ("if x:\n    y()\nz()",)


def test_message_widget_uses_the_same_copy_scheme():
    from etos_desktop.ui import markdown_render, message_widget

    assert message_widget._COPY_CODE_SCHEME == markdown_render.COPY_CODE_SCHEME
