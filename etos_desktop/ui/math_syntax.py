r"""Where the math is in a chat reply's Markdown: markdown-it rules for ``$…$``, ``\(…\)``, ``$$…$$``, ``\[…\]``.

Qt-free and pure; ``markdown_render`` registers the rules and ``math_render`` draws what they find.
The rules follow Pandoc's ``tex_math_dollars`` so that money stays text: an opening ``$`` is followed
by a non-space, a closing one follows a non-space and is not followed by a digit ("$5 and $10" is
text). Stricter than Pandoc, the next ``$`` after an opening one must close it, or the opening one
is text ("$5 for the $x$" renders ``x`` only), which also keeps the scan linear: each ``$`` looks
only as far as the next one. Math never holds a backtick, so a code span next to a ``$`` stays code.
Code spans and fences are parsed as code before these rules ever see their text.

A display formula is a block when its ``$$`` or ``\[`` starts a line and its closing delimiter
ends one, with no blank line between (TeX allows none in math either); that is what keeps a
formula's ``+ x`` or ``= y`` line from becoming a list or a heading. Everywhere else ``$$…$$`` and
``\[…\]`` are display formulas inside a paragraph. An unclosed delimiter is text, so a formula that
is still streaming in shows as typed until it closes.
"""

from __future__ import annotations

import re

from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

__all__ = ["MATH_BLOCK", "MATH_DISPLAY", "MATH_INLINE", "math_block", "math_inline"]

#: Token types: an inline formula, a display formula inside a paragraph, a display block.
MATH_INLINE = "math_inline"
MATH_DISPLAY = "math_display"
MATH_BLOCK = "math_block"

# Characters that make "$2 …$" math rather than two amounts of money.
_MATHY = re.compile(r"[\\^_{}=+*/<>]")
_CLOSERS = {"$$": "$$", "\\[": "\\]", "\\(": "\\)"}


def _escaped(src: str, position: int) -> bool:
    """Whether the character at ``position`` follows an odd number of backslashes."""
    count = 0
    position -= 1
    while position >= 0 and src[position] == "\\":
        count += 1
        position -= 1
    return count % 2 == 1


def _next_unescaped(src: str, needle: str, start: int, end: int) -> int:
    position = src.find(needle, start, end)
    while position >= 0 and _escaped(src, position):
        position = src.find(needle, position + 1, end)
    return position


def _push(state: StateInline, kind: str, markup: str, content: str) -> None:
    token = state.push(kind, "math", 0)
    token.markup = markup
    token.content = content


def math_inline(state: StateInline, silent: bool) -> bool:
    """Inline rule (before ``escape``): a formula opening at ``state.pos``."""
    src = state.src
    pos = state.pos
    maximum = state.posMax
    char = src[pos]
    if char == "\\":
        opener = src[pos : pos + 2]
        if opener not in ("\\(", "\\["):
            return False
        closer = _CLOSERS[opener]
        end = src.find(closer, pos + 2, maximum)
        content = src[pos + 2 : end]
        if end < 0 or not content.strip() or "`" in content:
            return False
        if not silent:
            _push(state, MATH_INLINE if opener == "\\(" else MATH_DISPLAY, opener, content.strip())
        state.pos = end + 2
        return True
    if char != "$":
        return False
    if src.startswith("$$", pos):
        end = _next_unescaped(src, "$$", pos + 2, maximum)
        content = src[pos + 2 : end]
        if end < 0 or not content.strip() or "`" in content:
            return False
        if not silent:
            _push(state, MATH_DISPLAY, "$$", content.strip())
        state.pos = end + 2
        return True
    if pos + 1 >= maximum or src[pos + 1].isspace():
        return False
    end = _next_unescaped(src, "$", pos + 1, maximum)
    if end < 0 or src[end - 1].isspace() or (end + 1 < maximum and src[end + 1].isdigit()):
        return False
    content = src[pos + 1 : end]
    if "`" in content or (content[0].isdigit() and " " in content and not _MATHY.search(content)):
        return False  # "$200, or 5$" is money; "$2x + 1$" is math
    if not silent:
        _push(state, MATH_INLINE, "$", content)
    state.pos = end + 1
    return True


def math_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule (before ``fence``'s neighbours, may interrupt a paragraph): a display formula."""
    if state.is_code_block(start_line):
        return False
    pos = state.bMarks[start_line] + state.tShift[start_line]
    opener = state.src[pos : pos + 2]
    closer = _CLOSERS.get(opener)
    if closer is None or opener == "\\(":
        return False
    # Lines known to hold no closing delimiter, up to where a scan stopped: without this, a run of
    # unclosed openers (each scanning to the next blank line) is quadratic.
    known: dict[tuple[str, int], tuple[int, int]] = state.env.setdefault("math_unclosed", {})
    unclosed = known.get((closer, end_line))
    if unclosed is not None and unclosed[0] <= start_line < unclosed[1]:
        return False
    lines: list[str] = []
    line = start_line
    text = state.src[pos + 2 : state.eMarks[start_line]]
    while True:
        end = text.find(closer) if closer == "\\]" else _next_unescaped(text, closer, 0, len(text))
        if end >= 0:
            if text[end + 2 :].strip():
                return False  # text after the formula: a formula inside a paragraph
            lines.append(text[:end])
            break
        lines.append(text)
        line += 1
        if line < end_line:
            begin = state.bMarks[line] + state.tShift[line]
            finish = state.eMarks[line]
        if line >= end_line or begin >= finish or state.sCount[line] < state.blkIndent:
            # A blank line or the end of the container, and no closing delimiter: no formula.
            known[(closer, end_line)] = (start_line + 1, line)
            return False
        text = state.src[begin:finish]
    content = "\n".join(lines).strip()
    if not content or "`" in content:
        return False
    if silent:
        return True
    token = state.push(MATH_BLOCK, "math", 0)
    token.markup = opener
    token.content = content
    token.map = [start_line, line + 1]
    # As written (what copying gives), without the container's indentation or quote marks.
    first = state.src[pos : state.eMarks[start_line]].rstrip()
    if line > start_line:
        first = "\n".join([first, *lines[1:-1], lines[-1] + closer])
    token.meta = {"source": first}
    state.line = line + 1
    return True
