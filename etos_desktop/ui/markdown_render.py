"""Markdown → HTML for chat messages, shaped for the rich-text subset QTextBrowser understands.

Pure functions apart from the translated "Copy" label. Messages come from a model, so the input is
untrusted: raw HTML is escaped, never rendered; only http(s) links survive; images become links;
control characters and lone surrogates are replaced before anything else sees them.

The pipeline: fenced code blocks are cut out first (so tabs and the raw code survive for copying and
an unclosed fence still renders), list indentation is brought to python-markdown's 4-space rule,
inputs python-markdown is quadratic on are defused, python-markdown (tables, sane_lists; raw HTML
off) renders the rest, and the code blocks come back highlighted by Pygments with inline styles
(QTextBrowser has no CSS classes to speak of), each under a header with its language and a
``copy-code:N`` link.
"""

from __future__ import annotations

import functools
import re
import secrets
import threading
import unicodedata
from dataclasses import dataclass
from html import escape
from xml.etree.ElementTree import Element

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound
from PySide6.QtCore import QCoreApplication

__all__ = [
    "COPY_CODE_SCHEME",
    "MAX_CODE_BLOCKS",
    "MAX_MARKDOWN_CHARS",
    "RenderedMarkdown",
    "escape_invisible",
    "render_markdown",
]

#: URL scheme of the per-block copy links; the path is the index into ``code_blocks``.
COPY_CODE_SCHEME = "copy-code"

_ALLOWED_LINK_SCHEMES = ("http://", "https://")
# Beyond these a message is shown as plain text: python-markdown's block parser is quadratic in
# the number of blocks and every fenced block becomes a ~1 KB table (a megabyte of "```" lines took
# 15 s and made 90 MB of HTML). No real reply comes near either limit.
MAX_MARKDOWN_CHARS = 128 * 1024
MAX_CODE_BLOCKS = 256
_MONO = "'JetBrains Mono', 'Cascadia Mono', Menlo, Consolas, 'DejaVu Sans Mono', monospace"
_TAB_WIDTH = 4


@dataclass(frozen=True, slots=True)
class RenderedMarkdown:
    """The HTML for one message and the raw text of its fenced code blocks.

    Attributes:
        html: Rich text for ``QTextBrowser.setHtml``.
        code_blocks: The raw code of each fenced block, in order; ``copy-code:N`` links index it.
    """

    html: str
    code_blocks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Palette:
    pygments_style: str
    code_background: str
    code_text: str
    header_background: str
    header_text: str
    border: str
    inline_code_background: str
    quote_text: str


_LIGHT = _Palette(
    pygments_style="default",
    code_background="#f6f8fa",
    code_text="#1f2328",
    header_background="#eaeef2",
    header_text="#57606a",
    border="#d0d7de",
    inline_code_background="#eff1f3",
    quote_text="#57606a",
)
_DARK = _Palette(
    pygments_style="github-dark",
    code_background="#0d1117",
    code_text="#e6edf3",
    header_background="#1c2128",
    header_text="#8d96a0",
    border="#30363d",
    inline_code_background="#2d333b",
    quote_text="#9198a1",
)


# --- input hygiene ---------------------------------------------------------------------------------

# C0/C1 controls (except tab and newline), lone surrogates and the Unicode line/paragraph
# separators. NUL truncates Qt strings, STX/ETX are python-markdown's own placeholder markers and a
# lone surrogate makes the str → QString conversion fail, so none of them may reach the renderer.
_UNSAFE_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029]")


def _build_unsafe_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if code not in (0x09, 0x0A, 0x0D):
            table[code] = chr(0x2400 + code)  # U+2400 "Control Pictures": ␀ ␁ ␂ …
    table[0x0D] = "\n"  # only lone CRs remain here; CRLF is folded first
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = "\ufffd"
    for code in range(0xD800, 0xE000):
        table[code] = "\ufffd"
    table[0x2028] = "\n"
    table[0x2029] = "\n"
    return table


_UNSAFE_TABLE = _build_unsafe_table()


def _sanitize(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if _UNSAFE_RE.search(text) is None:
        return text
    return text.translate(_UNSAFE_TABLE)


# Variation selectors are legitimate right after an emoji (U+FE0F) but can also smuggle data.
_VARIATION_SELECTORS = frozenset(range(0xFE00, 0xFE10)) | frozenset(range(0xE0100, 0xE01F0))
_EMOJI_SELECTORS = frozenset({0xFE0E, 0xFE0F})
# Not "format" characters to Unicode, but they render as nothing: the combining grapheme joiner,
# Mongolian variation selectors, Hangul fillers, Khmer inherent vowels and the Braille blank.
_ALWAYS_INVISIBLE = (
    frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F})
    | frozenset({0x2800, 0x3164, 0xFFA0})
    | _VARIATION_SELECTORS
)
# A superset of what gets escaped, so text without any of it skips the per-character work.
_INVISIBLE_CANDIDATE_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2028-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff0-\ufffb\ud800-\udfff\U0001d173-\U0001d17a\U000e0000-\U000e01ef]"
)


def _is_invisible(char: str) -> bool:
    code = ord(char)
    if code in (0x09, 0x0A):
        return False
    if code in _ALWAYS_INVISIBLE:
        return True
    # Cc control, Cf format (zero-width, bidi, tags, BOM), Cs surrogate, Zl/Zp separators, and
    # unassigned code points inside the candidate ranges (U+2065…), which render as nothing too.
    return unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Cn")


def escape_invisible(text: str) -> str:
    r"""Show characters a reader cannot see as visible escapes.

    Zero-width characters, bidirectional controls, tag characters, variation selectors, control
    characters (apart from newline and tab) and similar are replaced by ``\u200b``-style escapes
    (``\U000e0041`` beyond the BMP), so a confirmation dialog shows exactly what would be stored.
    One U+FE0E/U+FE0F right after a visible character is kept, since that is how emoji are written;
    a run of them (a known way to hide data) is escaped. ZWJ inside emoji sequences is escaped:
    precision over looks.

    Args:
        text: Any text.

    Returns:
        The text with every invisible character spelled out. Backslashes already in the text are
        left alone, so a literal ``\u200b`` typed by someone reads the same as an escaped one.
    """

    def replace(match: re.Match[str]) -> str:
        char = match.group()
        code = ord(char)
        position = match.start()
        if code in _EMOJI_SELECTORS and position > 0 and not _is_invisible(text[position - 1]):
            return char
        if not _is_invisible(char):
            return char
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"

    return _INVISIBLE_CANDIDATE_RE.sub(replace, text)


# --- fenced code -----------------------------------------------------------------------------------

# A fence may be indented (LLMs put code blocks inside list items); a backtick fence's info string
# cannot contain a backtick, which keeps ```inline``` from opening a block (CommonMark §4.5).
_FENCE_OPEN_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")


@dataclass(frozen=True, slots=True)
class _Fence:
    language: str
    code: str
    closed: bool


def _extract_fences(text: str, token: str) -> tuple[str, list[_Fence]]:
    """Replace each fenced block by a placeholder line ``<token>C<index>Q``; return the blocks.

    An unclosed fence runs to the end of the text, as CommonMark says (and as a streaming reply needs:
    its last block is open until the closing fence arrives).
    """
    if "```" not in text and "~~~" not in text:
        return text, []
    lines = text.split("\n")
    out: list[str] = []
    fences: list[_Fence] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        match = _FENCE_OPEN_RE.match(line) if ("```" in line or "~~~" in line) else None
        if match is None or (match["fence"][0] == "`" and "`" in match["info"]):
            out.append(line)
            i += 1
            continue
        indent = match["indent"]
        fence = match["fence"]
        info = match["info"].strip()
        close_re = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        i += 1
        closed = False
        while i < n:
            if close_re.match(lines[i]):
                closed = True
                i += 1
                break
            body_line = lines[i]
            if indent:
                # CommonMark: remove up to the fence's own indentation from each code line.
                if body_line.startswith(indent):
                    body_line = body_line[len(indent) :]
                else:
                    spaces = len(body_line) - len(body_line.lstrip(" "))
                    body_line = body_line[min(spaces, len(indent)) :]
            body.append(body_line)
            i += 1
        language = info.split(maxsplit=1)[0] if info else ""
        language = "".join(c for c in language if unicodedata.category(c)[0] not in "CZ")
        out.extend(("", f"{indent}{token}C{len(fences)}Q", ""))
        fences.append(_Fence(language=language, code="\n".join(body), closed=closed))
    return "\n".join(out), fences


@functools.lru_cache(maxsize=128)
def _lexer_for(language: str) -> Lexer:
    if language:
        try:
            return get_lexer_by_name(language, stripnl=False, ensurenl=False)
        except ClassNotFound:
            pass
    return TextLexer(stripnl=False, ensurenl=False)


@functools.lru_cache(maxsize=4)
def _formatter_for(style_name: str) -> HtmlFormatter[str]:
    return HtmlFormatter(style=style_name, noclasses=True, nowrap=True)


def _highlight_uncached(code: str, language: str, style_name: str) -> str:
    # Tabs are kept in the raw code (a Makefile needs them) but Qt's tab stops are wide.
    return highlight(code.expandtabs(_TAB_WIDTH), _lexer_for(language), _formatter_for(style_name))


_highlight_cached = functools.lru_cache(maxsize=256)(_highlight_uncached)


def _code_block_html(index: int, fence: _Fence, palette: _Palette, *, cache: bool) -> str:
    highlighter = _highlight_cached if cache else _highlight_uncached
    body = highlighter(fence.code, fence.language.lower(), palette.pygments_style)
    if body.endswith("\n"):
        body = body[:-1]
    label = escape(fence.language) if fence.language else _translate("code")
    copy = escape(_translate("Copy"))
    # Qt's rich text has no flexbox: the header is a borderless two-cell table inside the framed
    # one-column table, so no cell border runs between the language and the Copy link.
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0" border="1" '
        f'style="border-collapse: collapse; border-style: solid; border-color: {palette.border}; '
        f'margin-top: 4px; margin-bottom: 8px;">'
        f'<tr><td bgcolor="{palette.header_background}" style="padding: 3px 8px;">'
        f'<table width="100%" cellspacing="0" cellpadding="0" border="0"><tr>'
        f'<td><span style="color: {palette.header_text}; font-size: small;">{label}</span></td>'
        f'<td align="right"><a href="{COPY_CODE_SCHEME}:{index}" '
        f'style="color: {palette.header_text}; text-decoration: none; font-size: small;">'
        f"{copy}</a></td></tr></table></td></tr>"
        f'<tr><td bgcolor="{palette.code_background}" style="padding: 8px;">'
        f'<pre style="font-family: {_MONO}; color: {palette.code_text}; white-space: pre-wrap; '
        f'margin: 0px;">{body}</pre></td></tr></table>'
    )


def _translate(text: str) -> str:
    return QCoreApplication.translate("MarkdownRender", text)


# --- list indentation ------------------------------------------------------------------------------
#
# Models indent nested lists the CommonMark way (2 spaces under "- ", 3 under "1. ") and start
# lists right after a paragraph line; python-markdown wants 4 spaces per level and a blank line
# before a list, and otherwise flattens the nesting or prints the markers as text. So list blocks
# are re-indented to 4 spaces per level, judged by CommonMark's rule: a line belongs to an item when
# it is indented at least to the item's content column.

_LIST_ITEM_RE = re.compile(
    r"^(?P<indent> *)(?P<marker>[-*+]|\d{1,9}\.)(?P<gap>[ \t]+|$)(?P<rest>.*)$"
)
_ANY_LIST_ITEM_RE = re.compile(r"^ *(?:[-*+]|\d{1,9}\.)(?:[ \t]|$)", re.MULTILINE)
_THEMATIC_BREAK_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")


def _normalize_lists(text: str) -> str:
    if _ANY_LIST_ITEM_RE.search(text) is None:
        return text
    out: list[str] = []
    # (marker column, content column) of the open list items, outermost first.
    items: list[tuple[int, int]] = []
    previous_blank = True
    for original in text.split("\n"):
        if not original.strip():
            out.append(original)
            previous_blank = True
            continue
        line = original.expandtabs(_TAB_WIDTH) if "\t" in original else original
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        item = None
        if not _THEMATIC_BREAK_RE.match(line):
            item = _LIST_ITEM_RE.match(line)
        if stripped.startswith(">") or (not items and (item is None or indent > 3)):
            # Outside any list (blockquotes are left alone too).
            items.clear()
            out.append(original)
        elif item is not None:
            in_list = bool(items)
            # More lenient than CommonMark: a marker indented two or more columns past its
            # parent's marker nests ("1. a" then "  - b"), which is what the model meant.
            while items and indent < items[-1][0] + 2:
                items.pop()
            marker = item["marker"]
            if not in_list and not previous_blank and (marker[0] in "-*+" or marker == "1."):
                out.append("")  # a bullet list or one starting at 1 may interrupt a paragraph
            gap = len(item["gap"].expandtabs(_TAB_WIDTH))
            width = len(marker) + (gap if 1 <= gap <= 4 and item["rest"] else 1)
            out.append(f"{' ' * (4 * len(items))}{marker} {item['rest']}")
            items.append((indent, indent + width))
        else:
            if previous_blank:
                while items and indent < items[-1][1]:
                    items.pop()
            if not items:
                out.append(original)
            elif indent >= items[-1][1]:
                extra = indent - items[-1][1]
                out.append(f"{' ' * (4 * len(items) + extra)}{stripped}")
            else:
                out.append(original)  # a lazy continuation line; python-markdown takes it as is
        previous_blank = False
    return "\n".join(out)


# --- defusing python-markdown's slow paths ---------------------------------------------------------
#
# A model stuck in a repetition loop can emit thousands of "![" or "---" lines, and python-markdown
# is quadratic on some inputs (measured, 16 KB: 10 s for "![" repeated, 1 s for "a\n=\n" repeated).
# Re-rendered every 80 ms while streaming, that would freeze the app, so such text is defused first.

# Each '[' makes python-markdown's link patterns scan to its ']' (or to the end of the paragraph),
# each "](" to its ')'. Measured ≈ 170 ns per scanned character, so this is ≈ 35 ms of scanning.
_LINK_SCAN_BUDGET = 200_000
# Every inline match rebuilds its paragraph's string: cost ≈ matches × paragraph length × 0.36 ns
# (measured), so this is ≈ 50 ms. Over it, the paragraph is shown as plain text.
_INLINE_COPY_BUDGET = 140_000_000
_INLINE_MARKERS = ("`", "*", "_", "\\", "[", "<", "&", "~")
_BLOCK_SPLIT_RE = re.compile(r"(\n[ \t]*\n)")
_BRACKET_RE = re.compile(r"[\[\]()]")
# Headings, thematic breaks and setext underlines: each one splits its block and python-markdown
# re-joins the rest, so a long run of them in one block is quadratic. A blank line after each keeps
# the meaning and makes the run linear.
_BLOCK_BREAK_RE = re.compile(
    r"^ {0,3}(?:#{1,6}(?:[ \t].*)?|[-*_](?:[ \t]*[-*_]){2,}[ \t]*|=+[ \t]*|-+[ \t]*)$",
    re.MULTILINE,
)
_BLOCK_BREAK_RUN = 64
# Each level of blockquote costs a recursion; a line of a million '>' took 7 s.
_DEEP_QUOTE_RE = re.compile(r"^(?=(?:[ \t]*>){17})", re.MULTILINE)


def _link_scan_cost(block: str) -> int:
    cost = 0
    end = len(block)
    brackets: list[int] = []
    parens: list[tuple[int, bool]] = []
    previous_close = -2
    for match in _BRACKET_RE.finditer(block):
        char = match.group()
        position = match.start()
        if char == "[":
            brackets.append(position)
        elif char == "]":
            if brackets:
                cost += position - brackets.pop()
            previous_close = position
        elif char == "(":
            parens.append((position, position == previous_close + 1))
        elif parens:
            start, after_bracket = parens.pop()
            if after_bracket:
                cost += position - start
    cost += sum(end - start for start in brackets)
    cost += sum(end - start for start, after_bracket in parens if after_bracket)
    return cost


def _defuse(text: str, token: str) -> tuple[str, list[str]]:
    """Rewrite the few inputs python-markdown is slow on; return the text and its plain blocks.

    A block (text between blank lines) too dense with inline markup is replaced by a placeholder
    line ``<token>P<index>Q`` and returned, to be shown as plain text.
    """
    plain: list[str] = []
    if ">" in text:
        text = _DEEP_QUOTE_RE.sub("\\\\", text)
    brackets = text.count("[") + text.count("]")
    if brackets * len(text) > _LINK_SCAN_BUDGET or len(text) > 32_768:
        parts = _BLOCK_SPLIT_RE.split(text)
        for index in range(0, len(parts), 2):
            block = parts[index]
            size = len(block)
            markers = sum(block.count(marker) for marker in _INLINE_MARKERS)
            if markers * size > _INLINE_COPY_BUDGET:
                parts[index] = f"{token}P{len(plain)}Q"
                plain.append(block)
                continue
            if (block.count("[") + block.count("]")) * size <= _LINK_SCAN_BUDGET:
                continue
            if _link_scan_cost(block) > _LINK_SCAN_BUDGET:
                # Shown as literal brackets: the block loses its links, the app stays responsive.
                parts[index] = block.replace("[", "\\[")
        text = "".join(parts)
    if len(_BLOCK_BREAK_RE.findall(text)) > _BLOCK_BREAK_RUN:
        text = _BLOCK_BREAK_RE.sub("\\g<0>\n", text)
    return text, plain


# --- the markdown pass -----------------------------------------------------------------------------

# Bare URLs are linked (models rarely write <…> autolinks). ASCII only, so a URL directly followed by
# Chinese text ("见https://example.com了解") stops where the URL does.
_BARE_URL_RE = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_URL_TRAILING = ".,;:!?'\""


def _trim_url(url: str) -> str:
    while url and url[-1] in _URL_TRAILING + ")]":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        if url[-1] == "]" and url.count("[") >= url.count("]"):
            break
        url = url[:-1]
    return url


class _ChatTreeprocessor(Treeprocessor):
    """Drops unsafe links, turns images into links, links bare URLs and styles for Qt."""

    palette: _Palette = _LIGHT

    def run(self, root: Element) -> None:
        self._walk(root, linkify=True)
        self._space_after_lists(root)

    @staticmethod
    def _space_after_lists(root: Element) -> None:
        # Qt puts a list's bottom margin on its last item's own line, i.e. above a list nested in
        # that item, so lists get no bottom margin and whatever follows one gets a top margin.
        for parent in root.iter():
            previous: Element | None = None
            for child in parent:
                if previous is not None and previous.tag in ("ul", "ol"):
                    style = child.get("style", "")
                    child.set("style", style.replace("margin-top: 0px;", "") + " margin-top: 8px;")
                previous = child

    def _walk(self, element: Element, *, linkify: bool) -> None:
        tag = element.tag
        if tag in ("a", "code", "pre"):
            linkify = False
        self._style(element)
        if linkify and element.text:
            self._linkify_text(element)
        index = 0
        while index < len(element):
            child = element[index]
            if child.tag == "img":
                child = self._image_to_link(element, index, child)
            self._walk(child, linkify=linkify)
            inserted = 0
            if linkify and child.tail:
                inserted = self._linkify_tail(element, index, child)
            index += 1 + inserted

    def _style(self, element: Element) -> None:
        palette = self.palette
        tag = element.tag
        if tag == "a":
            href = element.get("href", "")
            if not href.lower().startswith(_ALLOWED_LINK_SCHEMES):
                element.tag = "span"
                element.attrib.clear()
        elif tag == "code":
            element.set(
                "style",
                f"font-family: {_MONO}; background-color: {palette.inline_code_background};",
            )
        elif tag == "pre":  # indented code blocks (fenced ones never reach markdown)
            element.set(
                "style",
                f"font-family: {_MONO}; background-color: {palette.code_background}; "
                f"color: {palette.code_text}; white-space: pre-wrap;",
            )
        elif tag == "p":
            element.set("style", "margin-top: 0px; margin-bottom: 8px;")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            size = {"h1": "x-large", "h2": "large"}.get(tag, "medium")
            element.set("style", f"font-size: {size}; margin-top: 10px; margin-bottom: 6px;")
        elif tag == "blockquote":
            element.set("style", f"color: {palette.quote_text}; margin-left: 12px;")
        elif tag == "table":
            element.set("border", "1")
            element.set("cellspacing", "0")
            element.set("cellpadding", "5")
            element.set(
                "style",
                f"border-collapse: collapse; border-style: solid; "
                f"border-color: {palette.border}; margin-bottom: 8px;",
            )
        elif tag == "th":
            element.set("bgcolor", palette.header_background)
        elif tag in ("ul", "ol"):
            element.set("style", "margin-top: 0px; margin-bottom: 0px;")

    def _image_to_link(self, parent: Element, index: int, image: Element) -> Element:
        src = image.get("src", "")
        alt = image.get("alt", "") or src
        link = Element("a")
        if src.lower().startswith(_ALLOWED_LINK_SCHEMES):
            link.set("href", src)
        link.text = "🖼 " + alt
        link.tail = image.tail
        parent[index] = link
        return link

    @staticmethod
    def _split(text: str) -> list[str | Element] | None:
        if "http" not in text:
            return None
        pieces: list[str | Element] = []
        last = 0
        for match in _BARE_URL_RE.finditer(text):
            url = _trim_url(match.group())
            if len(url) <= len("https://"):
                continue
            start = match.start()
            pieces.append(text[last:start])
            link = Element("a", href=url)
            link.text = url
            pieces.append(link)
            last = start + len(url)
        if not pieces:
            return None
        pieces.append(text[last:])
        return pieces

    def _linkify_text(self, element: Element) -> None:
        pieces = self._split(element.text or "")
        if pieces is None:
            return
        element.text = pieces[0]  # type: ignore[assignment]
        self._insert(element, 0, pieces[1:])

    def _linkify_tail(self, parent: Element, index: int, child: Element) -> int:
        pieces = self._split(child.tail or "")
        if pieces is None:
            return 0
        child.tail = pieces[0]  # type: ignore[assignment]
        return self._insert(parent, index + 1, pieces[1:])

    @staticmethod
    def _insert(parent: Element, position: int, pieces: list[str | Element]) -> int:
        # pieces alternate link, text, link, text, …
        count = 0
        for link, tail in zip(pieces[0::2], pieces[1::2], strict=True):
            assert isinstance(link, Element)
            link.tail = tail  # type: ignore[assignment]
            parent.insert(position + count, link)
            count += 1
        return count


class _ChatExtension(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # Raw HTML is never rendered: without these two it stays text and is escaped on output.
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_ChatTreeprocessor(md), "etos_chat", 15)


class _Renderer:
    """One python-markdown instance (building one costs more than a short message's render)."""

    def __init__(self) -> None:
        self._md = markdown.Markdown(
            extensions=["tables", "sane_lists", _ChatExtension()],
            output_format="html",
        )
        processor = self._md.treeprocessors["etos_chat"]
        assert isinstance(processor, _ChatTreeprocessor)
        self._processor = processor

    def convert(self, text: str, palette: _Palette) -> str:
        self._processor.palette = palette
        try:
            return self._md.reset().convert(text)
        finally:
            self._md.reset()


_local = threading.local()


def _renderer() -> _Renderer:
    renderer: _Renderer | None = getattr(_local, "renderer", None)
    if renderer is None:
        renderer = _Renderer()
        _local.renderer = renderer
    return renderer


# python-markdown pops blocks off the front of a list, which is quadratic in the number of blocks
# (87,000 blocks took 2.4 s); converting at most this many at a time keeps it linear. Only a list or
# an indented paragraph that straddles a cut renders differently.
_BLOCKS_PER_CONVERSION = 2000


def _convert(source: str, palette: _Palette) -> str:
    renderer = _renderer()
    parts = _BLOCK_SPLIT_RE.split(source)
    if len(parts) <= 2 * _BLOCKS_PER_CONVERSION:
        return renderer.convert(source, palette)
    step = 2 * _BLOCKS_PER_CONVERSION
    return "\n".join(
        renderer.convert("".join(parts[start : start + step - 1]), palette)
        for start in range(0, len(parts), step)
    )


def _plain_html(text: str) -> str:
    return (
        '<p style="white-space: pre-wrap; margin-top: 0px; margin-bottom: 8px;">'
        f"{escape(text, quote=False)}</p>"
    )


def render_markdown(text: str, *, dark: bool = False, streaming: bool = False) -> RenderedMarkdown:
    """Render a chat message's Markdown for a QTextBrowser.

    Args:
        text: The message's raw Markdown (untrusted: raw HTML is shown as text).
        dark: Use the dark code palette (pick it from the widget's palette).
        streaming: The text is still growing. An unclosed fence at the end is rendered as a code
            block either way (CommonMark runs it to the end of the document); while streaming, that
            still-growing block's highlighting is not cached, so the cache keeps the finished blocks
            that every re-render of the reply needs.

    Returns:
        The HTML and the raw code of each fenced block (what ``copy-code:N`` links refer to).
    """
    palette = _DARK if dark else _LIGHT
    text = _sanitize(text)
    # Letters and digits only, so python-markdown leaves the placeholder alone; random, so a
    # message cannot forge one.
    token = f"XETOSCODE{secrets.token_hex(6)}Q"
    if len(text) > MAX_MARKDOWN_CHARS:
        return RenderedMarkdown(html=_plain_html(text), code_blocks=())
    source, fences = _extract_fences(text, token)
    if len(fences) > MAX_CODE_BLOCKS:
        return RenderedMarkdown(html=_plain_html(text), code_blocks=())
    source, plain = _defuse(_normalize_lists(source), token)
    html = _convert(source, palette)
    if not fences and not plain:
        return RenderedMarkdown(html=html, code_blocks=())
    fragments = {
        "C": [
            _code_block_html(index, fence, palette, cache=fence.closed or not streaming)
            for index, fence in enumerate(fences)
        ],
        "P": [_plain_html(block) for block in plain],
    }

    def substitute(match: re.Match[str]) -> str:
        kind = match.group(1) or match.group(3)
        number = match.group(2) or match.group(4)
        return fragments[kind][int(number)]

    html = re.sub(rf"<p[^>]*>{token}([CP])(\d+)Q</p>|{token}([CP])(\d+)Q", substitute, html)
    return RenderedMarkdown(html=html, code_blocks=tuple(fence.code for fence in fences))
