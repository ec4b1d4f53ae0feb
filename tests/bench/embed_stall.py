"""UI stall benchmark: the longest gap in the Qt event loop while USE bulk-embeds in the background.

Run: ``python tests/bench/embed_stall.py [--texts 2000] [--batch 64] [--threads 2,1] [--long]``.

A 5 ms QTimer ticks on a qasync loop, as in the app; the longest interval between ticks minus
5 ms is the worst stall a user would feel (DESIGN §2 target: ≤ 50 ms, and DESIGN §5.2 says
embedding moves to a subprocess if a thread stalls the UI longer). Measured per mode:

* idle: the timer alone (baseline);
* load: building the model (``load()``) in a worker thread;
* embed: re-embedding ``--texts`` short zh/en memories (``--long``: dialogue-sized, ~8x longer) in
  batches of ``--batch`` in a worker thread (how the re-embed job calls it): worst stall, p99 tick
  and throughput;
* query: single-text latency (p50/p95 of 50 calls), what a search pays to encode its query.

Each BLAS thread count in ``--threads`` gets a fresh ``UseEmbedder``. The USE tokenizer is pure
Python, so it competes with the UI thread for the GIL; the stall figures say whether that matters.
Offscreen unless DISPLAY is set. The load average is printed because other busy processes make
BLAS threads fight for cores, which changes the throughput a lot (not the stall).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from qt_bench import TickRecorder, p99_ms, run_on_qasync, worst_ms  # noqa: E402

SUBJECTS_ZH = ["我", "我妈妈", "我的同事小李", "我女朋友", "我哥哥", "我们公司", "我的猫", "房东"]
VERBS_ZH = ["喜欢", "不喜欢", "每周都去", "上个月开始学", "一直想试试", "最近迷上了"]
OBJECTS_ZH = ["爬山", "喝乌龙茶", "弹吉他", "做红烧肉", "看科幻电影", "跑步", "学日语", "养多肉"]
SUBJECTS_EN = ["The user", "Their sister", "Their boss", "Their partner", "Their dog", "Alex"]
VERBS_EN = ["loves", "hates", "started learning", "goes to", "is allergic to", "wants to try"]
OBJECTS_EN = ["rock climbing", "green tea", "the piano", "spicy food", "jazz concerts", "Berlin"]


def memories(count: int, long: bool = False) -> list[str]:
    """``count`` distinct zh/en memory texts (half each), deterministic; ``long``: ~8x longer."""
    texts: list[str] = []
    for i in range(count):
        if i % 2:
            s, v, o = (SUBJECTS_ZH, VERBS_ZH, OBJECTS_ZH)
            texts.append(f"{s[i % len(s)]}{v[i // 3 % len(v)]}{o[i // 7 % len(o)]}（第{i}条）")
        else:
            s, v, o = (SUBJECTS_EN, VERBS_EN, OBJECTS_EN)
            texts.append(f"{s[i % len(s)]} {v[i // 3 % len(v)]} {o[i // 7 % len(o)]} (note {i})")
    if long:
        texts = [" ".join(texts[(i + k * 37) % count] for k in range(8)) for i in range(count)]
    return texts


async def measure(recorder: TickRecorder, work: Callable[[], Any]) -> tuple[list[float], float]:
    """Run ``work`` in a worker thread while the timer ticks; return intervals and seconds."""
    loop = asyncio.get_running_loop()
    recorder.start()
    started = time.perf_counter()
    await loop.run_in_executor(None, work)
    elapsed = time.perf_counter() - started
    return recorder.stop(), elapsed


def report(label: str, intervals: list[float], extra: str = "") -> None:
    print(
        f"  {label:<6}: worst stall {worst_ms(intervals):6.1f} ms, p99 tick "
        f"{p99_ms(intervals):5.1f} ms, median {statistics.median(intervals) * 1000:4.1f} ms"
        f"{extra}",
        flush=True,
    )


async def run_threads(threads: int, texts: list[str], batch: int) -> float:
    """Measure one fresh ``UseEmbedder``; returns its worst stall during the bulk embed, in ms."""
    from etos_desktop.core.providers.embedders import UseEmbedder

    embedder = UseEmbedder(threads=threads)
    recorder = TickRecorder()
    print(f"UseEmbedder in a worker thread, {embedder.threads} BLAS thread(s)", flush=True)

    intervals, elapsed = await measure(recorder, embedder.load)
    report("load", intervals, f", load took {elapsed:.2f} s")

    def bulk() -> None:
        for start in range(0, len(texts), batch):
            embedder.embed(texts[start : start + batch])

    intervals, elapsed = await measure(recorder, bulk)
    report("embed", intervals, f", {len(texts) / elapsed:,.0f} texts/s ({elapsed:.1f} s)")

    latencies = []
    for text in texts[:50]:
        started = time.perf_counter()
        embedder.embed([text])
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    print(f"  query : one text {latencies[24]:.1f} ms p50, {latencies[47]:.1f} ms p95", flush=True)
    return worst_ms(intervals)


async def run(args: argparse.Namespace) -> None:
    from etos_desktop.core.providers.embedders import default_use_threads

    texts = memories(args.texts, args.long)
    print(
        f"{len(texts)} memories (avg {statistics.mean(map(len, texts)):.0f} chars), batches of "
        f"{args.batch}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    recorder = TickRecorder()
    idle, _ = await measure(recorder, lambda: time.sleep(2))
    report("idle", idle)
    counts = [int(n) for n in args.threads.split(",")] if args.threads else []
    counts = counts or sorted({default_use_threads(), 1}, reverse=True)
    results = {n: await run_threads(n, texts, args.batch) for n in counts}
    summary = ", ".join(f"{n} BLAS thread(s) {ms:.1f} ms" for n, ms in results.items())
    print(f"worst UI stall during the bulk embed: {summary} (target <= 50 ms)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument(
        "--threads", default="", help="comma-separated BLAS thread counts; default: min(2, CPUs),1"
    )
    parser.add_argument("--long", action="store_true", help="dialogue-sized texts (~8x longer)")
    args = parser.parse_args()
    run_on_qasync(lambda: run(args))


if __name__ == "__main__":
    main()
