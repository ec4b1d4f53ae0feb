"""Math in replies: a reply with 20 formulas, first time and cached, against the same reply without.

Run: ``QT_QPA_PLATFORM=offscreen python tests/bench/math_speed.py [--rounds N]``.

Three figures, in the same run:

- *first time*: the 20 formulas are new (a per-run suffix makes them so). The render returns at
  once with them pending; the layout thread lays them out (timed until it is idle); the message
  widget then puts the images in place (rasterised on the UI thread). Reported are the UI
  thread's share (render + fill-in) and the wall time until every formula is drawn.
- *cached*: the same reply shown in a new message widget (best of N): Markdown, images from the
  cache, Qt's layout.
- *no math*: the same reply with each formula replaced by plain text of the same length (best
  of N), the baseline; ratios are against it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtWidgets import QApplication, QTextBrowser

FORMULAS = [
    r"E = mc^2",
    r"\frac{a}{b} + \frac{c}{d}",
    r"\sqrt{x^2 + y^2}",
    r"\sum_{i=1}^{n} i = \frac{n(n+1)}{2}",
    r"\int_0^1 f(x)\,dx",
    r"\alpha + \beta = \gamma",
    r"e^{i\pi} + 1 = 0",
    r"\lim_{x \to 0} \frac{\sin x}{x} = 1",
    r"a^2 + b^2 = c^2",
    r"\binom{n}{k} = \frac{n!}{k!(n-k)!}",
    r"\nabla \cdot \mathbf{E} = \frac{\rho}{\varepsilon_0}",
    r"x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}",
    r"\mathbb{R}^n",
    r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}",
    r"P(A \mid B) = \frac{P(B \mid A) P(A)}{P(B)}",
    r"\prod_{k=1}^{n} k = n!",
    r"f'(x) = \lim_{h \to 0} \frac{f(x+h) - f(x)}{h}",
    r"\log_2 1024 = 10",
    r"\hat{\theta} = \arg\max_\theta L(\theta)",
    r"\sigma^2 = \frac{1}{N} \sum_{i=1}^{N} (x_i - \mu)^2",
]


def reply(suffix: str, math: bool) -> str:
    parts = []
    for number, tex in enumerate(FORMULAS):
        formula = f"{tex} + {suffix}" if suffix else tex
        if not math:
            formula = "w" * len(formula)
        if number % 4 == 3:
            parts.append(f"Step {number}:\n\n" + (f"$${formula}$$" if math else formula) + "\n")
        else:
            written = f"${formula}$" if math else formula
            parts.append(f"Step {number} says {written} holds, as the text explains.\n")
    return "\n".join(parts)


def show(app: QApplication, text: str) -> tuple[float, object]:
    from etos_desktop.ui.message_widget import MessageWidget

    widget = MessageWidget(1, "assistant", author="Bench")
    widget.resize(640, 400)
    widget.show()
    started = time.perf_counter()
    widget.set_text(text, streaming=False)
    browser = widget.findChild(QTextBrowser)
    assert browser is not None
    browser.document().documentLayout().documentSize()  # lay it out, images loaded
    return (time.perf_counter() - started) * 1000, widget


def images_in(widget: object) -> int:
    browser = widget.findChild(QTextBrowser)  # type: ignore[attr-defined]
    html = browser.document().toHtml()
    return html.count("etos-math:")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    from etos_desktop.ui import math_render

    # Imports and first widget outside the timings (the app warms these up at start).
    show(app, "warm **up** $x$")[1].deleteLater()  # type: ignore[attr-defined]
    math_render.wait_until_idle(30)
    app.processEvents()

    suffix = f"z_{{{os.getpid()}{time.time_ns() % 100000}}}"
    with_math = reply(suffix, math=True)
    plain = reply(suffix, math=False)

    # The fill-in (formulas put in place, rasterised) is the UI thread's work once they are laid
    # out, a few formulas per event-loop turn (processEvents() here runs several turns at once).
    fill_ms = [0.0, 0.0]  # in all, the longest turn
    fill = math_render._fill_pending

    def timed_fill(*args: object) -> bool:
        begun = time.perf_counter()
        try:
            return fill(*args)  # type: ignore[arg-type]
        finally:
            took = (time.perf_counter() - begun) * 1000
            fill_ms[0] += took
            fill_ms[1] = max(fill_ms[1], took)

    math_render._fill_pending = timed_fill  # type: ignore[assignment]
    cpu = time.process_time()
    started = time.perf_counter()
    render_ms, widget = show(app, with_math)
    while images_in(widget) < len(FORMULAS):
        app.processEvents()
        time.sleep(0.002)
        if time.perf_counter() - started > 120:
            raise SystemExit("formulas never drawn")
    first_wall = (time.perf_counter() - started) * 1000
    first_cpu = (time.process_time() - cpu) * 1000
    widget.deleteLater()  # type: ignore[attr-defined]

    def best(text: str) -> float:
        times = []
        for _ in range(args.rounds):
            elapsed, shown = show(app, text)
            times.append(elapsed)
            shown.deleteLater()  # type: ignore[attr-defined]
            app.processEvents()
        return min(times)

    cached, baseline = [], []
    for _ in range(2):  # alternated, so load changes hit both alike
        cached.append(best(with_math))
        baseline.append(best(plain))
    cached_ms, plain_ms = min(cached), min(baseline)
    print(f"Reply with {len(FORMULAS)} formulas ({len(with_math)} chars), best of {args.rounds}")
    print(f"  no math (baseline):  {plain_ms:8.1f} ms")
    print(f"  cached:              {cached_ms:8.1f} ms   ×{cached_ms / plain_ms:.2f}")
    print(
        f"  first time, shown:   {render_ms:8.1f} ms   ×{render_ms / plain_ms:.2f} "
        "(formulas as source, pending)"
    )
    print(
        f"  first time, drawn:   {first_wall:8.1f} ms wall until all 20 are images, "
        f"{first_cpu:.0f} ms CPU in all; UI thread: fill-in {fill_ms[0]:.1f} ms in all, "
        f"{fill_ms[1]:.1f} ms its longest turn"
    )


if __name__ == "__main__":
    main()
