r"""Markdown → HTML for chat messages, shaped for the rich-text subset QTextBrowser understands.

Pure functions apart from the translated "Copy" label. Messages come from a model, so the input is
untrusted: raw HTML is escaped, never rendered; only http(s) links survive; images become links and
are never loaded; control characters and lone surrogates are replaced before anything else sees
them, and bidi embedding/override/isolate controls are shown as ``⟨U+202E⟩`` so that none can
reorder what follows (``core.text.cleaning.neutralise_bidi``; the stored text keeps them).

markdown-it-py parses CommonMark (plus GFM tables and strikethrough) with raw HTML off, and is
linear on the inputs python-markdown was quadratic on. What is the app's own: a fence rule that
keeps a code block open past a less-indented line (models indent code in list items loosely, and a
streaming reply's last block is open until its closing fence arrives); bare http(s) URLs made
links; emphasis next to CJK punctuation (``**注意：**这是``), which CommonMark leaves as text; a
budget on costly inline markup, past which paragraphs stay plain text; and a renderer that
highlights fenced code with Pygments' inline styles (QTextBrowser has no CSS classes to speak of)
under a header with the language and a ``copy-code:N`` link, and writes only http(s) anchors.

Math (``math_syntax`` finds it, ``math_render`` draws it): ``$…$`` and ``\(…\)`` inline,
``$$…$$`` and ``\[…\]`` display; the only ``<img>`` ever written is a formula's, by the app's own
``etos-math:`` scheme, which no Markdown can produce. Task list items (``- [ ]``, ``- [x]``) start
with ☐ or ☑; a block quote is a one-cell table whose left border is its bar (Qt draws no border
on a block).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, isWhiteSpace, unescapeAll
from markdown_it.parser_block import ParserBlock
from markdown_it.parser_inline import ParserInline
from markdown_it.renderer import RendererHTML
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.state_inline import Scanned
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.style import Style
from pygments.util import ClassNotFound
from PySide6.QtCore import QCoreApplication

from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.ui import math_render
from etos_desktop.ui.math_syntax import math_block, math_inline
from etos_desktop.ui.theme import CodePalette, code_palette

__all__ = [
    "COPY_CODE_SCHEME",
    "MAX_CODE_BLOCKS",
    "MAX_FORMULAS",
    "MAX_MARKDOWN_CHARS",
    "RenderedMarkdown",
    "escape_invisible",
    "render_markdown",
]

#: URL scheme of the per-block copy links; the path is the index into ``code_blocks``.
COPY_CODE_SCHEME = "copy-code"

_ALLOWED_LINK_SCHEMES = ("http://", "https://")
# Beyond these a message is shown as plain text. The parser is linear, but pure Python: a 128 KiB
# run of "[" takes about 2 s (tests/bench/text_speed.py), and every fenced block becomes a ~1 KB
# table that Qt lays out slowly. No real reply comes near either limit.
MAX_MARKDOWN_CHARS = 128 * 1024
MAX_CODE_BLOCKS = 256
#: Formulas beyond this many in one message are shown as their source: each is laid out once in
#: the background (5-60 ms) and becomes an image Qt lays out.
MAX_FORMULAS = 256
# Containers (quotes, lists) nested deeper than this make markdown-it drop the rest of the message;
# such a message is shown as plain text instead. Each level costs recursion, and each unmatched "["
# is re-scanned up to this many levels deep, so it stays at the CommonMark preset's 20.
_MAX_NESTING = 20
_MONO = "'JetBrains Mono', 'Cascadia Mono', Menlo, Consolas, 'DejaVu Sans Mono', monospace"
_TAB_WIDTH = 4


@dataclass(frozen=True, slots=True)
class RenderedMarkdown:
    """The HTML for one message and the raw text of its fenced code blocks.

    Attributes:
        html: Rich text for ``QTextBrowser.setHtml`` (formula images need a view with
            ``math_render.MathBrowserMixin``).
        code_blocks: The raw code of each fenced block, in order; ``copy-code:N`` links index it.
        math_pending: Some formulas are still being laid out and are shown as their source; the
            view puts them in place when they are done.
    """

    html: str
    code_blocks: tuple[str, ...]
    math_pending: bool = False


# --- input hygiene ---------------------------------------------------------------------------------

# C0/C1 controls (except tab and newline), lone surrogates and the Unicode line/paragraph
# separators. NUL truncates Qt strings, a lone surrogate makes the str → QString conversion fail,
# and the rest would be invisible or move text about, so none of them may reach the view.
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
    # Before parsing, so a code block shows them too: reordered code is how "Trojan Source" hides.
    text = neutralise_bidi(text)
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


# --- parser rules ----------------------------------------------------------------------------------


def _fence(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """markdown-it's fence rule, except that a less-indented line does not end the block.

    CommonMark ends a fence inside a list item at the first line indented less than the item's
    content; models often misindent one line of code there, and an unclosed fence must run to the
    end while a reply streams. So a fence runs to its closing fence or to the end of its container
    (a block quote still bounds it), as the python-markdown renderer did. ``meta["closed"]`` says
    whether the closing fence was found.
    """
    pos = state.bMarks[start_line] + state.tShift[start_line]
    maximum = state.eMarks[start_line]
    if state.is_code_block(start_line) or pos + 3 > maximum:
        return False
    marker = state.src[pos]
    if marker not in "`~":
        return False
    mem = pos
    pos = state.skipCharsStr(pos, marker)
    length = pos - mem
    if length < 3:
        return False
    markup = state.src[mem:pos]
    params = state.src[pos:maximum]
    # A backtick fence's info string cannot contain a backtick: ```inline``` is not a block.
    if marker == "`" and marker in params:
        return False
    if silent:
        return True
    next_line = start_line
    closed = False
    while True:
        next_line += 1
        if next_line >= end_line:
            break
        pos = mem = state.bMarks[next_line] + state.tShift[next_line]
        maximum = state.eMarks[next_line]
        if pos >= maximum or state.src[pos] != marker or state.is_code_block(next_line):
            continue
        pos = state.skipCharsStr(pos, marker)
        if pos - mem < length or state.skipSpaces(pos) < maximum:
            continue
        closed = True
        break
    state.line = next_line + (1 if closed else 0)
    token = state.push("fence", "code", 0)
    token.info = params
    # Up to the fence's own indentation is removed from each code line (CommonMark §4.5).
    token.content = state.getLines(start_line + 1, next_line, state.sCount[start_line], True)
    token.markup = markup
    token.map = [start_line, state.line]
    token.meta = {"closed": closed}
    return True


# ASCII only, so a URL directly followed by Chinese text ("见https://example.com了解") stops where
# the URL does.
_BARE_URL_RE = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+", re.IGNORECASE)
_SCHEME_BEFORE_RE = re.compile(r"(?:^|[^A-Za-z0-9.+-])(https?)$", re.IGNORECASE)
_URL_TRAILING = ".,;:!?'\"*_~"


def _trim_url(url: str) -> str:
    while url and url[-1] in _URL_TRAILING + ")]":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        if url[-1] == "]" and url.count("[") >= url.count("]"):
            break
        url = url[:-1]
    return url


def _bare_url(state: StateInline, silent: bool) -> bool:
    """Link a bare http(s) URL (models rarely write ``<…>`` autolinks).

    Runs at the ``:`` after the scheme, like markdown-it's own linkify rule, so emphasis and
    escapes never see the URL's ``_`` and ``*``.
    """
    pos = state.pos
    src = state.src
    if state.linkLevel > 0 or src[pos] != ":" or not src.startswith("//", pos + 1):
        return False
    scheme = _SCHEME_BEFORE_RE.search(state.pending[-6:])
    if scheme is None:
        return False
    start = pos - len(scheme.group(1))
    match = _BARE_URL_RE.match(src, start, state.posMax)
    if match is None:
        return False
    url = _trim_url(match.group())
    if len(url) <= len("https://"):
        return False
    if not silent:
        state.pending = state.pending[: -len(scheme.group(1))]
        token = state.push("link_open", "a", 1)
        token.attrs = {"href": url}
        token.markup = "linkify"
        token.info = "auto"
        token = state.push("text", "", 0)
        token.content = url
        token = state.push("link_close", "a", -1)
        token.markup = "linkify"
        token.info = "auto"
    state.pos = start + len(url)
    return True


def _is_cjk(char: str) -> bool:
    code = ord(char)
    if code < 0x1100 or 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF:
        return False  # Latin and the like, or emoji (wide, but not CJK)
    return unicodedata.east_asian_width(char) in ("W", "F", "H")


class _CjkFriendlyState(StateInline):
    """Inline state whose ``*`` and ``~~`` runs next to a CJK character open and close emphasis.

    CommonMark does not close ``**注意：**这是`` (a punctuation mark inside, a letter outside), which
    is how Chinese and Japanese are written and how models write them. This is the "CJK-friendly"
    amendment (as in the markdown-it-cjk-friendly plugin): between two non-space characters, a
    ``*`` run next to a CJK character both opens and closes. ``_`` keeps CommonMark's rule.
    """

    def scanDelims(self, start: int, canSplitWord: bool) -> Scanned:  # noqa: N803
        scanned = super().scanDelims(start, canSplitWord)
        if not canSplitWord or (scanned.can_open and scanned.can_close):
            return scanned
        src = self.src
        before = start - 1
        if before > 0 and "\ufe00" <= src[before] <= "\ufe0e":
            before -= 1  # a variation selector belongs to the character before it
        last = src[before] if before >= 0 else " "
        end = start + scanned.length
        following = src[end] if end < self.posMax else " "
        if isWhiteSpace(ord(last)) or isWhiteSpace(ord(following)):
            return scanned
        if _is_cjk(last) or _is_cjk(following):
            return Scanned(True, True, scanned.length)
        return scanned


# markdown-it is linear, but pure Python, and inline markup costs far more than plain text (≈ 3 µs
# per character of a dense reply): an unmatched "[" is re-scanned at every nesting level, ≈ 25-65 µs
# each; a "*", "_", "<" or "`" ≈ 10-20 µs; a backslash escape ≈ 2.5 µs. A model stuck in a loop can
# stream 120 KB of "![" (4 s per render at the cap). Each paragraph is charged its markup; once a
# message has spent this budget (≈ 300 ms of such markup), its remaining paragraphs are shown as
# plain text. Real replies stay far below it: the 20 KB replies in tests/bench spend 1,300-1,600.
_INLINE_MARKUP_BUDGET = 16_384
_LINK_OPENER_COST = 4


def _inline_markup_cost(text: str) -> int:
    return (
        _LINK_OPENER_COST * text.count("[")
        + text.count("*")
        + text.count("_")
        + text.count("<")
        + text.count("`")
        + text.count("\\")
        + text.count("$")
    )


def _inline_within_budget(state: StateCore) -> None:
    """markdown-it's core ``inline`` rule, but paragraphs past the markup budget stay plain text."""
    budget = _INLINE_MARKUP_BUDGET
    for token in state.tokens:
        if token.type != "inline":
            continue
        token.children = []
        budget -= _inline_markup_cost(token.content)
        if budget >= 0:
            state.md.inline.parse(token.content, state.md, state.env, token.children)
        else:
            text = Token("text", "", 0)
            text.content = token.content
            token.children.append(text)


_TASK_RE = re.compile(r"\[([ xX])\](?:[ \t]+|$)")
_UNCHECKED = "\u2610"  # ☐
_CHECKED = "\u2611"  # ☑


def _task_lists(state: StateCore) -> None:
    """``- [ ] todo`` / ``- [x] done``: the box becomes ☐ or ☑ (text, never a form control).

    Runs before the inline rule, on each list item's first paragraph. A bullet list whose every
    item is a task loses its bullets (``meta["task_list"]``).
    """
    tokens = state.tokens
    lists: list[list[Any]] = []  # [the list's open token, every item so far is a task]
    for index, token in enumerate(tokens):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append([token, kind == "bullet_list_open"])
        elif kind in ("bullet_list_close", "ordered_list_close") and lists:
            opened, all_tasks = lists.pop()
            if all_tasks:
                opened.meta["task_list"] = True
        elif kind == "list_item_open":
            task = False
            if (
                index + 2 < len(tokens)
                and tokens[index + 1].type == "paragraph_open"
                and tokens[index + 2].type == "inline"
            ):
                inline = tokens[index + 2]
                match = _TASK_RE.match(inline.content)
                if match:
                    box = _UNCHECKED if match.group(1) == " " else _CHECKED
                    inline.content = f"{box}\u00a0{inline.content[match.end() :]}"
                    task = True
            if not task and lists:
                lists[-1][1] = False


# --- code blocks -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=128)
def _lexer_for(language: str) -> Lexer:
    if language:
        try:
            return get_lexer_by_name(language, stripnl=False, ensurenl=False)
        except ClassNotFound:
            pass
    return TextLexer(stripnl=False, ensurenl=False)


@functools.lru_cache(maxsize=4)
def _formatter_for(style: str | type[Style]) -> HtmlFormatter[str]:
    return HtmlFormatter(style=style, noclasses=True, nowrap=True)


def _highlight_uncached(code: str, language: str, style: str | type[Style]) -> str:
    # Tabs are kept in the raw code (a Makefile needs them) but Qt's tab stops are wide.
    return highlight(code.expandtabs(_TAB_WIDTH), _lexer_for(language), _formatter_for(style))


_highlight_cached = functools.lru_cache(maxsize=256)(_highlight_uncached)


def _code_block_html(
    index: int, language: str, code: str, palette: CodePalette, *, cache: bool
) -> str:
    highlighter = _highlight_cached if cache else _highlight_uncached
    body = highlighter(code, language.lower(), palette.pygments_style)
    if body.endswith("\n"):
        body = body[:-1]
    label = escape(language) if language else QCoreApplication.translate("MarkdownRender", "code")
    copy = escape(QCoreApplication.translate("MarkdownRender", "Copy"))
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


# --- rendering -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _RenderState:
    """What one render call threads through markdown-it's ``env``."""

    palette: CodePalette
    streaming: bool
    code_blocks: list[str]
    # One entry per open link: whether its <a> was written (unsafe links and links inside links,
    # which Qt cannot nest, are written as their text only).
    anchors: list[bool]
    # Qt's relative font size where the renderer is (a heading's), for formulas drawn there.
    size_adjustment: int = 0
    math_pending: bool = False
    formulas: int = 0
    # The open paragraph's style (None: none open, or a tight list item's hidden one).
    paragraph: str | None = None
    # Inline token lists (by id; they live as long as the render) → (holds CJK text, number).
    paragraphs: dict[int, tuple[bool, int]] = field(default_factory=dict)


def _state(env: EnvType) -> _RenderState:
    state = env["etos"]
    assert isinstance(state, _RenderState)
    return state


_EMPTY_PARAGRAPH_RE = re.compile(r'<p style="[^"<>]*"></p>')
_CLOSERS = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}


def _formula_html(token: Token, state: _RenderState, cjk: bool = False, paragraph: int = 0) -> str:
    """A formula's image; its source while it is being laid out; its source as code if bad.

    ``cjk``: the paragraph it stands in has CJK text (whose lines Qt centres it in differently);
    ``paragraph``: that paragraph's number, for inline formulas (padded alike), else 0.
    """
    tex = token.content
    display = token.type != "math_inline"
    source = token.meta.get("source") or f"{token.markup}{tex}{_CLOSERS[token.markup]}"
    state.formulas += 1
    formula = math_render.lookup(tex, display) if state.formulas <= MAX_FORMULAS else None
    if isinstance(formula, math_render.Formula):
        url = math_render.image_url(tex, display, state.size_adjustment, cjk, paragraph)
        return (
            f'<img src="{escapeHtml(url)}" style="vertical-align: middle; max-width: 100%;" '
            f'title="{escapeHtml(source)}">'
        )
    text = escape(source, quote=False)
    if formula is None:
        wrap = " white-space: pre-wrap;" if display else ""
        return (
            f'<code style="font-family: {_MONO}; '
            f'background-color: {state.palette.inline_code_background};{wrap}">{text}</code>'
        )
    state.math_pending = True
    if any(state.anchors):
        return text  # no <a name> inside a link; it shows as source until rendered again
    # The anchor marks where the view puts the formula once it is laid out; the title (the
    # source) tells how far it reaches.
    name = math_render.pending_anchor(tex, display, source, cjk, paragraph)
    return f'<a name="{name}" title="{escapeHtml(source)}">{text}</a>'


_PARAGRAPH_NUMBERS = itertools.count(1)


def _paragraph_of(tokens: Sequence[Token], state: _RenderState) -> tuple[bool, int]:
    """For an inline token list (a paragraph's): whether it holds CJK text, and its number."""
    key = id(tokens)
    if key not in state.paragraphs:
        cjk = any(
            token.type == "text" and any(_is_cjk(char) for char in token.content if char > "\u10ff")
            for token in tokens
        )
        # Numbered across renders: a streamed reply's pieces are joined into one document.
        state.paragraphs[key] = (cjk, next(_PARAGRAPH_NUMBERS))
    return state.paragraphs[key]


class _ChatRenderer(RendererHTML):
    """markdown-it's HTML renderer, with the chat view's code blocks, links and images."""

    def renderToken(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        # markdown-it puts a newline around block tags for readability; Qt reads the one after the
        # last block, and the one between a tight item's text and its nested list, as a space.
        return super().renderToken(tokens, idx, options, env).strip("\n")

    def fence(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        state = _state(env)
        token = tokens[idx]
        info = unescapeAll(token.info).strip()
        language = info.split(maxsplit=1)[0] if info else ""
        language = "".join(c for c in language if unicodedata.category(c)[0] not in "CZ")
        code = token.content[:-1] if token.content.endswith("\n") else token.content
        index = len(state.code_blocks)
        state.code_blocks.append(code)
        # The still-growing last block of a streaming reply would only evict finished blocks that
        # every re-render of the reply needs.
        cache = bool(token.meta.get("closed")) or not state.streaming
        return _code_block_html(index, language, code, state.palette, cache=cache)

    def code_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        palette = _state(env).palette
        content = tokens[idx].content.expandtabs(_TAB_WIDTH).removesuffix("\n")
        return (
            f'<pre style="font-family: {_MONO}; background-color: {palette.code_background}; '
            f'color: {palette.code_text}; white-space: pre-wrap;">'
            f"{escape(content, quote=False)}</pre>"
        )

    def code_inline(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        palette = _state(env).palette
        return (
            f'<code style="font-family: {_MONO}; '
            f'background-color: {palette.inline_code_background};">'
            f"{escape(tokens[idx].content, quote=False)}</code>"
        )

    def math_inline(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        state = _state(env)
        return _formula_html(tokens[idx], state, *_paragraph_of(tokens, state))

    def math_display(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        # Inside a paragraph: the paragraph is ended, the formula gets one of its own (centred),
        # and the paragraph goes on after it (an empty part is dropped by render_markdown).
        state = _state(env)
        formula = _formula_html(tokens[idx], state)
        paragraph = state.paragraph
        if paragraph is None or sum(token.nesting for token in tokens[:idx]):
            # A tight list item has no <p> to end, and a link or emphasis must not be cut in two:
            # Qt makes the <div> a block of its own too, but what follows loses the margins.
            return (
                f'<div align="center" style="margin-top: 4px; margin-bottom: 4px;">{formula}</div>'
            )
        return (
            f'</p><p align="center" style="margin-top: 4px; margin-bottom: 8px;">{formula}</p>'
            f'<p style="{paragraph}">'
        )

    def paragraph_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        token = tokens[idx]
        _state(env).paragraph = None if token.hidden else str(token.attrGet("style") or "")
        return self.renderToken(tokens, idx, options, env)

    def paragraph_close(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        _state(env).paragraph = None
        return self.renderToken(tokens, idx, options, env)

    def math_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        formula = _formula_html(tokens[idx], _state(env))
        return f'<p align="center" style="margin-top: 4px; margin-bottom: 8px;">{formula}</p>'

    def heading_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        size = _HEADING_SIZES.get(tokens[idx].tag, "medium")
        _state(env).size_adjustment = _SIZE_ADJUSTMENTS.get(size, 0)
        return self.renderToken(tokens, idx, options, env)

    def heading_close(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        _state(env).size_adjustment = 0
        return self.renderToken(tokens, idx, options, env)

    def blockquote_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        # Qt draws no border on a block, but does on a table cell (in the collapsed border model):
        # the quote is a one-cell table with a left border. One cell, so its text copies alone.
        palette = _state(env).palette
        top = "8px" if "margin-top: 8px" in str(tokens[idx].attrGet("style") or "") else "2px"
        return (
            f'<table width="100%" cellspacing="0" cellpadding="0" border="0" '
            f'style="border-collapse: collapse; margin-top: {top}; margin-bottom: 8px;"><tr>'
            f'<td style="border-left: {_QUOTE_BAR_WIDTH}px solid {palette.quote_bar}; '
            f'padding-left: 10px; color: {palette.quote_text};">'
        )

    def blockquote_close(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return "</td></tr></table>"

    def link_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        anchors = _state(env).anchors
        href = str(tokens[idx].attrGet("href") or "")
        # Only the href: a title would become a tooltip, which Qt shows as rich text.
        written = not any(anchors) and href.lower().startswith(_ALLOWED_LINK_SCHEMES)
        anchors.append(written)
        return f'<a href="{escapeHtml(href)}">' if written else ""

    def link_close(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        anchors = _state(env).anchors
        return "</a>" if anchors and anchors.pop() else ""

    def html_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return escapeHtml(tokens[idx].content)  # never parsed (raw HTML is off); text if it were

    def html_inline(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return escapeHtml(tokens[idx].content)

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        # Never an <img>: QTextBrowser would load a file: or remote source.
        token = tokens[idx]
        src = str(token.attrGet("src") or "")
        alt = self.renderInlineAsText(token.children, options, env) if token.children else ""
        text = escape("🖼 " + (alt or src), quote=False)
        if any(_state(env).anchors) or not src.lower().startswith(_ALLOWED_LINK_SCHEMES):
            return text
        return f'<a href="{escapeHtml(src)}">{text}</a>'


_BLOCK_AFTER_LIST = frozenset(
    {
        "paragraph_open",
        "heading_open",
        "blockquote_open",
        "table_open",
        "bullet_list_open",
        "ordered_list_open",
        "hr",
    }
)
_HEADING_SIZES = {"h1": "x-large", "h2": "large"}
# Qt's font-size adjustment for those sizes (QTextFormat.FontSizeAdjustment).
_SIZE_ADJUSTMENTS = {"x-large": 2, "large": 1}
_QUOTE_BAR_WIDTH = 3


def _style(tokens: list[Token], palette: CodePalette) -> None:
    """Set the attributes Qt's rich text needs; it ignores most CSS and all classes."""
    previous: Token | None = None
    for token in tokens:
        kind = token.type
        style = ""
        if kind == "paragraph_open":
            style = "margin-top: 0px; margin-bottom: 8px;"
        elif kind == "heading_open":
            size = _HEADING_SIZES.get(token.tag, "medium")
            style = f"font-size: {size}; margin-top: 10px; margin-bottom: 6px;"
        elif kind == "blockquote_open":
            style = "margin-top: 0px;"  # read by blockquote_open, which writes a table
        elif kind == "table_open":
            token.attrs.update({"border": "1", "cellspacing": "0", "cellpadding": "5"})
            style = (
                f"border-collapse: collapse; border-style: solid; "
                f"border-color: {palette.border}; margin-bottom: 8px;"
            )
        elif kind == "th_open":
            token.attrSet("bgcolor", palette.header_background)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            style = "margin-top: 0px; margin-bottom: 0px;"
            if token.meta.get("task_list"):
                style += " list-style-type: none;"
        if (
            previous is not None
            and previous.type in ("bullet_list_close", "ordered_list_close")
            and kind in _BLOCK_AFTER_LIST
            and token.level == previous.level
        ):
            # Qt puts a list's bottom margin on its last item's own line, i.e. above a list nested
            # in that item, so lists get no bottom margin and whatever follows one a top margin.
            style = style.replace("margin-top: 0px;", "") + " margin-top: 8px;"
        if style:
            token.attrSet("style", style.strip())
        previous = token


class _BlockParser(ParserBlock):
    """markdown-it's block parser, noting when containers nest deeper than it will parse."""

    def tokenize(self, state: StateBlock, start_line: int, end_line: int) -> None:
        # markdown-it silently drops what lies deeper than maxNesting; the message is then shown as
        # plain text instead.
        if state.level >= _MAX_NESTING:
            state.env["too_deep"] = True
        super().tokenize(state, start_line, end_line)


class _InlineParser(ParserInline):
    """markdown-it's inline parser, with the CJK-friendly emphasis rule."""

    def parse(self, src: str, md: MarkdownIt, env: EnvType, tokens: list[Token]) -> list[Token]:
        state = _CjkFriendlyState(src, md, env, tokens)
        self.tokenize(state)
        for rule in self.ruler2.getRules(""):
            rule(state)
        return state.tokens


@functools.cache
def _parser() -> MarkdownIt:
    # The instance holds no per-render state (that travels in env), so one serves every thread.
    options = {"html": False, "maxNesting": _MAX_NESTING, "xhtmlOut": False}
    md = MarkdownIt("commonmark", options, renderer_cls=_ChatRenderer)
    md.block = _BlockParser()
    md.inline = _InlineParser()
    md.configure("commonmark", options)  # the preset's choice of rules, for the new parsers
    md.enable(["table", "strikethrough"])
    md.disable(["html_block", "html_inline"])  # "html": False already; never a raw-HTML token
    md.block.ruler.at("fence", _fence, {"alt": ["paragraph", "reference", "blockquote", "list"]})
    md.inline.ruler.before("linkify", "bare_url", _bare_url)
    # Before escape, which would take the backslash of \( and \[; after text, which stops at $.
    md.inline.ruler.before("escape", "math_inline", math_inline)
    md.block.ruler.after(
        "fence", "math_block", math_block, {"alt": ["paragraph", "reference", "blockquote", "list"]}
    )
    md.core.ruler.at("inline", _inline_within_budget)
    md.core.ruler.before("inline", "task_lists", _task_lists)
    return md


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
    text = _sanitize(text)
    if len(text) > MAX_MARKDOWN_CHARS:
        return RenderedMarkdown(html=_plain_html(text), code_blocks=())
    palette = code_palette(dark=dark)
    md = _parser()
    state = _RenderState(palette=palette, streaming=streaming, code_blocks=[], anchors=[])
    env: EnvType = {"etos": state}
    tokens = md.parse(text, env)
    if env.get("too_deep") or sum(token.type == "fence" for token in tokens) > MAX_CODE_BLOCKS:
        return RenderedMarkdown(html=_plain_html(text), code_blocks=())
    _style(tokens, palette)
    html = md.renderer.render(tokens, md.options, env)
    if state.formulas:
        html = _EMPTY_PARAGRAPH_RE.sub("", html)  # left by a display formula starting or ending one
    return RenderedMarkdown(
        html=html, code_blocks=tuple(state.code_blocks), math_pending=state.math_pending
    )
