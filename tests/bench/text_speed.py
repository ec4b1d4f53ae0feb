"""Text handling speed: Markdown rendering and token estimates on large inputs.

Run: ``python tests/bench/text_speed.py [--baseline REV] [--rounds N]``.

Markdown: renders a dense 20 KB reply (code blocks, tables, lists) and a 20 KB prose reply (best of
N rounds each), a 1 MB paste (best of 3) and adversarial inputs just under the plain-text cut-off
(best of 2): runs of ``*``, ``[``, ``![``, nested quotes and lists, tables, setext headings, which
python-markdown was quadratic on or crashed on, and the inline markup markdown-it is slowest on.
Each is timed for today's renderer and, in the same run, alternately with it, for the
python-markdown renderer as of ``REV`` (default: the last commit that had it), loaded from git into
a temporary module; the ratios are today / baseline, by wall and by CPU time. The baseline needs
``git`` and the ``markdown`` package (no longer a dependency: ``pip install markdown``); without
them only today's renderer is timed.

Tokens: estimates 1 MB of English, Chinese and mixed text; the baseline is ``str.count`` over the
same 1 MB (one plain pass over the text).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from etos_desktop.core.context.tokens import cjk_share, estimate_tokens
from etos_desktop.ui.markdown_render import MAX_MARKDOWN_CHARS, render_markdown

ROOT = Path(__file__).resolve().parents[2]
MEGABYTE = 1_000_000
#: The last commit whose markdown_render.py used python-markdown.
LEGACY_REVISION = "8a45493"
# Just under the plain-text cut-off, where both renderers still parse Markdown.
NEAR_CAP = MAX_MARKDOWN_CHARS - 4096

Render = Callable[[str], object]


def best_of(fn: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def dense_reply() -> str:
    chunk = (
        "A **reply** with `code`, [a link](https://example.com) and 中文文本。\n\n"
        "```python\nfor i in range(10):\n    print(i)\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n"
    )
    return (chunk * (20_000 // len(chunk) + 1))[:20_000]


def prose_reply() -> str:
    """A 20 KB reply of headings, bullets, bold, inline code, links and quotes, 中文 and English."""
    unit = (
        "### 第 {i} 步：配置环境\n\n"
        "Here's what changed in **version {i}**: the `config.toml` loader now reads "
        "`[tool.etos]` and falls back to defaults. See "
        "[the changelog](https://example.com/changelog/{i}) for details.\n\n"
        "- **性能**：启动时间从 1.2 秒降到 *0.4 秒*，详见 https://example.com/perf/{i}\n"
        "- **兼容性**：支持 Python 3.11 和 3.12\n"
        "  - 旧的 `setup.py` 仍然可用\n"
        "  - 建议迁移到 `pyproject.toml`\n"
        "- Fixed a crash when the path contains `~` or spaces\n\n"
        "> 注意：升级前请先备份 `~/.config/etos`。\n\n"
    )
    return "".join(unit.format(i=i) for i in range(60))[:20_000]


def fit(unit: str, size: int = NEAR_CAP) -> str:
    return unit * (size // len(unit))


def adversarial_inputs() -> dict[str, str]:
    """Inputs a model stuck in a loop (or a hostile paste) can produce, each under the cap."""
    return {
        "stars": "*" * NEAR_CAP,
        "star-words": fit("*a "),
        "strong-em": fit("*a **a "),
        "brackets": "[" * NEAR_CAP,
        "images": fit("!["),
        "bracket-paragraphs": fit("[" * 500 + "\n\n"),
        "nested-links": "[[" * (NEAR_CAP // 4) + "a" + "]]" * (NEAR_CAP // 4),
        "open-parens": fit("[x](<"),
        "link-starts": fit("[a]("),
        "setext": fit("a\n=\n"),
        "escapes": "\\" * NEAR_CAP,
        "fences": fit("```\n"),
        "deep-quote-line": fit("> ") + "x",
        "quote-staircase": "".join(">" * depth + " x\n" for depth in range(1, 450)),
        "list-staircase": "".join("  " * depth + "- x\n" for depth in range(300)),
        "list-markers-line": fit("- ") + "x",
        "list-items": fit("- item\n"),
        "table-rows": "a|b\n-|-\n" + fit("x|y\n"),
        "headings": fit("# h\n"),
        "raw-html": fit("<div>"),
        "bare-urls": fit("https://example.com/a_b "),
        "link-heavy-reply": fit("**Item**: see [docs](https://example.com/d) and `snake_case`\n\n"),
    }


def import_file(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("legacy_markdown_render", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_legacy_renderer(revision: str) -> tuple[Render | None, str]:
    """Import the python-markdown renderer as of ``revision``; None and the reason if it can't.

    After it raises, the module is imported afresh: its thread-local python-markdown instance is
    left mid-parse by a RecursionError and renders every later message wrong (and fast).
    """
    try:
        source = subprocess.run(
            ["git", "show", f"{revision}:etos_desktop/ui/markdown_render.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        return None, f"git show {revision} failed: {error}"
    if "import markdown" not in source:
        return None, f"{revision} has no python-markdown renderer"
    path = Path(tempfile.mkdtemp(prefix="etos-bench-")) / "legacy_markdown_render.py"
    path.write_text(source, encoding="utf-8")
    try:
        module = import_file(path)
    except ImportError as error:
        return None, f"{error} (pip install markdown to time the baseline)"

    def render(text: str) -> object:
        nonlocal module
        try:
            return module.render_markdown(text)
        except Exception:
            module = import_file(path)
            raise

    return render, f"python-markdown renderer at {revision}"


#: Best wall-clock and CPU milliseconds, or the name of the exception the renderer raised.
Timing = tuple[float, float] | str


def paired(today: Render, baseline: Render | None, text: str, rounds: int) -> tuple[Timing, Timing]:
    """Best times of both renderers on ``text``, timed alternately; NaN without a baseline.

    CPU time is reported beside wall time because the machine is shared: another process taking
    the core inflates the wall time only. A renderer that raises is reported by its exception's
    name: a crash is a finding, not a reason to stop the run.
    """
    nan = (float("nan"), float("nan"))
    best = {"today": (float("inf"), float("inf")), "baseline": (float("inf"), float("inf"))}
    failed: dict[str, str] = {}
    for round_ in range(rounds):
        order = [("today", today), ("baseline", baseline)]
        if round_ % 2:
            order.reverse()
        for name, render in order:
            if render is None or name in failed:
                continue
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                render(text)
            except Exception as error:
                failed[name] = type(error).__name__
                continue
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = (min(best[name][0], wall * 1000), min(best[name][1], cpu * 1000))
    if baseline is None:
        best["baseline"] = nan
    return failed.get("today", best["today"]), failed.get("baseline", best["baseline"])


def report(name: str, size: int, today: Timing, baseline: Timing) -> None:
    def shown(timing: Timing) -> str:
        if isinstance(timing, str):
            return f"{timing:>21s}"
        return f"{timing[0]:8.1f} / {timing[1]:8.1f} ms"

    ratio = ""
    if not isinstance(today, str) and not isinstance(baseline, str):
        ratio = f"ratio {today[0] / baseline[0]:5.2f} / {today[1] / baseline[1]:5.2f}"
    print(
        f"  {name:18s} {size:>9,d} chars  today {shown(today)}  "
        f"python-markdown {shown(baseline)}  {ratio}",
        flush=True,
    )


def bench_markdown(revision: str, rounds: int) -> None:
    baseline, how = load_legacy_renderer(revision)
    print(f"Markdown rendering, wall / CPU time (baseline: {how})")
    reply = dense_reply()
    prose = prose_reply()
    render_markdown(reply)  # warm the parser and the lexers
    if baseline is not None:
        baseline(reply)
    paste = ("Some **text** with [links](https://example.com) and `code`.\n\n" * 20_000)[:MEGABYTE]
    for name, text, runs in (
        ("20 KB dense reply", reply, rounds),
        ("20 KB prose reply", prose, rounds),
        ("1 MB paste", paste, 3),
    ):
        report(name, len(text), *paired(render_markdown, baseline, text, runs))
    print("Adversarial inputs (best of 2 each)")
    for name, text in adversarial_inputs().items():
        report(name, len(text), *paired(render_markdown, baseline, text, 2))


def bench_tokens() -> None:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=LEGACY_REVISION, help="git revision to compare to")
    parser.add_argument("--rounds", type=int, default=15, help="rounds for the 20 KB reply")
    parser.add_argument("--markdown-only", action="store_true", help="skip the token estimates")
    args = parser.parse_args()
    bench_markdown(args.baseline, args.rounds)
    if not args.markdown_only:
        bench_tokens()


if __name__ == "__main__":
    main()
