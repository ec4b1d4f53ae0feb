"""Text handling speed: Markdown rendering and token estimates on large inputs.

Run: ``python tests/bench/text_speed.py``. Prints the best of five runs for rendering a dense
20 KB reply and a 1 MB paste, and for estimating tokens of 1 MB of English, Chinese and mixed
text; the baseline is ``str.count`` over the same 1 MB (one plain pass over the text).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from etos_desktop.core.context.tokens import cjk_share, estimate_tokens
from etos_desktop.ui.markdown_render import render_markdown

MEGABYTE = 1_000_000


def best_of(fn: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    chunk = (
        "A **reply** with `code`, [a link](https://example.com) and 中文文本。\n\n"
        "```python\nfor i in range(10):\n    print(i)\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n"
    )
    reply = (chunk * (20_000 // len(chunk) + 1))[:20_000]
    paste = ("Some **text** with [links](https://example.com) and `code`.\n\n" * 20_000)[:MEGABYTE]
    render_markdown(reply)  # warm the parser and the lexers
    print(f"render_markdown 20 KB dense reply : {best_of(lambda: render_markdown(reply)):7.1f} ms")
    print(
        f"render_markdown 1 MB paste         : {best_of(lambda: render_markdown(paste), 3):7.1f} ms"
    )
    for name, unit in (
        ("English", "The quick brown fox jumps over the lazy dog. "),
        ("Chinese", "我们今天去公园散步，天气很好。"),
        ("mixed", "Python 是一种 programming 语言。"),
    ):
        text = unit * (MEGABYTE // len(unit))
        base = best_of(lambda text=text: text.count("a"))
        took = best_of(lambda text=text: estimate_tokens(text))
        share = best_of(lambda text=text: cjk_share(text))
        print(
            f"estimate_tokens 1 MB {name:8s}: {took:7.1f} ms ({took / base:5.1f}x str.count); "
            f"cjk_share {share:6.1f} ms"
        )


if __name__ == "__main__":
    main()
