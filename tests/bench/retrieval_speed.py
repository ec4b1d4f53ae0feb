"""Retrieval speed benchmark: per-query latency (query encoding included) and vector-cache memory.

Run::

    python tests/bench/retrieval_speed.py                       # 1k + 10k with USE, 100k synthetic
    python tests/bench/retrieval_speed.py --sizes 1000 --synthetic 0      # quick
    python tests/bench/retrieval_speed.py --vector-cache /tmp/use-10k.npz # reuse embeddings
    python tests/bench/retrieval_speed.py --threads 1           # USE with one BLAS thread

What is measured, for each store size:

* **load** — ``MemoryEngine.add_many`` (the engine's bulk path: no duplicate-merging, no limits)
  in a temporary database, with the memory vectors already computed (the texts are embedded once,
  up front, in batches of 64, and that time is printed separately: it is what a full re-embed of
  a store of that size costs on this machine).
* **first search** — the vector index (a float32 matrix) is built from the stored rows on the
  first search after loading; its time and the process RSS before/after are printed, together
  with the matrix bytes the engine reports (``vector_cache_bytes``).
* **latency** — every query of the retrieval set (116, zh + en) is searched ``--rounds`` times in
  each mode with ``k = 5``; the clock runs around the whole ``engine.search`` call, so the real
  USE encoding of the query (not cached) is included. p50 / p95 / max per mode, plus the
  encoding alone. Target (issue 4): hybrid p95 ≤ 30 ms at 10k memories.

Tail latency depends on what else runs on the cores: the load average is printed at the start
and the end. Measured here on 2 busy cores (load ≈ 2.5), encoding one query with 2 BLAS threads
had ~200 ms stalls in 5–10 % of calls (encode p95 10–220 ms), with 1 thread none (p95 ≈ 2 ms);
``--threads`` compares the two.

At 1k and 10k the memories are real texts embedded with the embedded USE: the set's 596 memories
plus template-generated ones (``dataset_overlap.generate_distractors`` with another seed). At
100k (``--synthetic``) the memory vectors are random unit vectors (seeded) inserted through the
same ``add_many`` path by an embedder that returns them for stored texts and the real USE vector
for queries — the vector math, the FTS side and the query encoding are real, only the stored
vectors' meaning is not.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dataset_overlap  # noqa: E402  (the bench folder is not a package)

from etos_desktop.core.clock import FakeClock  # noqa: E402

MODES = ("hybrid", "vector", "keyword")
K = 5


def rss_bytes() -> int:
    """The process's resident set size now (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def load_average() -> str:
    """The 1/5/15-minute load averages, or ``"n/a"``."""
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def mib(n: float) -> str:
    """Format bytes as MiB."""
    return f"{n / 2**20:.1f} MiB"


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0–1) of ``values`` (linear interpolation)."""
    return float(numpy.quantile(numpy.asarray(values), q))


class PrecomputedEmbedder:
    """Serves stored texts from a precomputed table and embeds anything else with the real model.

    Loading a store then costs no model time (it was paid once, up front), while a query — never
    in the table — is encoded for real, so search latency includes the encoding.

    Args:
        inner: The real embedder (its ``key`` is kept, so the engine uses its tuning).
        table: Text → unit vector for the stored texts.

    Attributes:
        random_for_unknown: While set, texts not in ``table`` get a seeded random unit vector
            instead of a real one (loading the synthetic store); cleared before queries run.
    """

    def __init__(self, inner: Any, table: dict[str, numpy.ndarray]) -> None:
        self.inner = inner
        self.key = inner.key
        self.dimension = inner.dimension
        self.table = table
        self.random_for_unknown = False
        self._rng = numpy.random.default_rng(1234)

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Vectors for ``texts``: from the table, random (synthetic loads) or the real model."""
        out = numpy.empty((len(texts), self.dimension), dtype=numpy.float32)
        missing = [i for i, t in enumerate(texts) if t not in self.table]
        for i, t in enumerate(texts):
            if t in self.table:
                out[i] = self.table[t]
        if missing:
            if self.random_for_unknown:
                block = self._rng.standard_normal(
                    (len(missing), self.dimension), dtype=numpy.float32
                )
                block /= numpy.linalg.norm(block, axis=1, keepdims=True)
            else:
                block = numpy.asarray(
                    self.inner.embed([texts[i] for i in missing]), dtype=numpy.float32
                )
            out[missing] = block
        return out


def memory_texts(data: dict, n: int) -> list[str]:
    """``n`` distinct memory-like texts: the set's memories first, then generated ones, shuffled."""
    base = [m["text"] for m in data["memories"]]
    extra = [
        m["text"] for m in dataset_overlap.generate_distractors(seed=77, per_language=n // 2 + 1)
    ]
    seen = set(base)
    pool = base + [t for t in extra if not (t in seen or seen.add(t))]
    if len(pool) < n:
        raise SystemExit(f"only {len(pool)} distinct texts for {n} memories")
    random.Random(5).shuffle(pool)
    return pool[:n]


def embed_all(embedder: Any, texts: list[str], cache: Path | None) -> dict[str, numpy.ndarray]:
    """Embed ``texts`` in batches (or read them from ``cache``); print the time it took."""
    digest = hashlib.sha256((embedder.key + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    if cache is not None and cache.exists():
        stored = numpy.load(cache, allow_pickle=False)
        if str(stored["digest"]) == digest:
            print(f"Vectors for {len(texts)} texts read from {cache} (embedding skipped).")
            return dict(zip(texts, stored["vectors"], strict=True))
    started = time.perf_counter()
    chunks = []
    for i in range(0, len(texts), 64):
        chunks.append(numpy.asarray(embedder.embed(texts[i : i + 64]), dtype=numpy.float32))
        if (i // 64) % 40 == 39:
            done = i + 64
            rate = (time.perf_counter() - started) / done
            print(
                f"  embedded {done}/{len(texts)} ({1000 * rate:.1f} ms/text, "
                f"~{rate * (len(texts) - done):.0f} s left)",
                flush=True,
            )
    vectors = numpy.concatenate(chunks)
    seconds = time.perf_counter() - started
    print(
        f"Embedded {len(texts)} texts with USE in {seconds:.1f} s "
        f"({1000 * seconds / len(texts):.1f} ms/text, batches of 64, "
        f"{getattr(embedder, 'threads', '?')} BLAS threads)."
    )
    if cache is not None:
        numpy.savez(cache, digest=numpy.array(digest), vectors=vectors)
        print(f"Vectors cached in {cache}.")
    return dict(zip(texts, vectors, strict=True))


def load_store(folder: Path, embedder: Any, texts: list[str], label: str) -> tuple[Any, dict]:
    """Open a temporary engine and bulk-load ``texts``; return the engine and load figures."""
    from etos_desktop.core.memory.engine import MemoryEngine

    clock = FakeClock()
    now = clock.now()
    rng = random.Random(9)
    engine = MemoryEngine.open(folder / f"speed-{label}.db", embedder=embedder, clock=clock)
    drafts = [{"text": t, "created_at": now - timedelta(days=rng.uniform(0, 700))} for t in texts]
    started = time.perf_counter()
    engine.add_many(drafts, batch_size=500)
    load_seconds = time.perf_counter() - started
    gc.collect()
    rss_before = rss_bytes()
    started = time.perf_counter()
    engine.search("warm up the index", k=K, mode="vector")
    first = time.perf_counter() - started
    gc.collect()
    rss_after = rss_bytes()
    figures = {
        "load_s": load_seconds,
        "first_search_s": first,
        "rss_before": rss_before,
        "rss_after": rss_after,
        "matrix_bytes": engine.vector_cache_bytes(),
    }
    return engine, figures


def measure(engine: Any, embedder: Any, queries: list[str], rounds: int) -> dict[str, list[float]]:
    """Latency samples (seconds) per mode, and of the query encoding alone."""
    samples: dict[str, list[float]] = {mode: [] for mode in (*MODES, "encode only")}
    for _ in range(rounds):
        for q in queries:
            started = time.perf_counter()
            embedder.inner.embed([q])
            samples["encode only"].append(time.perf_counter() - started)
            for mode in MODES:
                started = time.perf_counter()
                engine.search(q, k=K, mode=mode)
                samples[mode].append(time.perf_counter() - started)
    return samples


def report(label: str, n: int, figures: dict, samples: dict[str, list[float]]) -> None:
    """Print one store size's figures."""
    print(f"\n== {label}: {n} memories ==")
    print(
        f"  load (add_many, vectors precomputed): {figures['load_s']:.1f} s "
        f"({1000 * figures['load_s'] / n:.2f} ms/memory)"
    )
    print(
        f"  first search (builds the vector index from rows): {1000 * figures['first_search_s']:.0f} ms"
    )
    print(
        f"  vector cache: {mib(figures['matrix_bytes'])} reported by the engine "
        f"(float32 {n} × 512 = {mib(n * 512 * 4)} + ids); RSS {mib(figures['rss_before'])} → "
        f"{mib(figures['rss_after'])} (Δ {mib(figures['rss_after'] - figures['rss_before'])})"
    )
    print(f"  {'mode':<12} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'mean ms':>8}")
    for mode, values in samples.items():
        print(
            f"  {mode:<12} {len(values):>5} {1000 * percentile(values, 0.5):>8.1f}"
            f" {1000 * percentile(values, 0.95):>8.1f} {1000 * max(values):>8.1f}"
            f" {1000 * statistics.fmean(values):>8.1f}"
        )


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="1000,10000", help="store sizes with real USE vectors, comma-separated"
    )
    parser.add_argument(
        "--synthetic", type=int, default=100_000, help="store size with random vectors (0: skip)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    parser.add_argument(
        "--conversation-queries",
        action="store_true",
        help="also time the conversational set's 112 questions (time windows, names)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="BLAS threads for USE (default: the app's, min(2, cpu_count))",
    )
    parser.add_argument(
        "--vector-cache",
        type=Path,
        help="npz file to keep the USE vectors of the stored texts between runs",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    from etos_desktop.core.providers.embedders import UseEmbedder

    data = dataset_overlap.load_set(dataset_overlap.DEFAULT_SET)
    queries = [q["text"] for q in data["queries"]]
    if args.conversation_queries:
        import conversation_set

        # Time words, names, follow-up shapes: the conversational set's questions too.
        queries += [q["text"] for q in conversation_set.load()["queries"]]
    print(f"{len(queries)} queries per round")
    use = UseEmbedder(threads=args.threads)
    started = time.perf_counter()
    rss0 = rss_bytes()
    use.load()
    print(
        f"USE loaded in {time.perf_counter() - started:.1f} s (RSS +{mib(rss_bytes() - rss0)}), "
        f"{use.threads} BLAS threads, threadpoolctl {'yes' if use.thread_limit_enforced else 'NO'}; "
        f"{os.cpu_count()} CPUs"
    )
    total_started = time.perf_counter()
    load_at_start = load_average()
    print(
        f"Load average {load_at_start}: other processes on these cores show up as latency spikes "
        "(p95/max); compare runs made on an idle machine."
    )

    with tempfile.TemporaryDirectory(prefix="etos-speed-") as tmp:
        folder = Path(tmp)
        if sizes:
            texts = memory_texts(data, max(sizes))
            embedder = PrecomputedEmbedder(use, embed_all(use, texts, args.vector_cache))
            for n in sizes:
                engine, figures = load_store(folder, embedder, texts[:n], f"use-{n}")
                samples = measure(engine, embedder, queries, args.rounds)
                report("USE vectors", n, figures, samples)
                engine.close()
                del engine
                gc.collect()
        if args.synthetic:
            n = args.synthetic
            base = memory_texts(data, min(n, 10_000))
            texts = [
                f"{base[i % len(base)]} (#{i})" if i >= len(base) else base[i] for i in range(n)
            ]
            embedder = PrecomputedEmbedder(use, {})
            embedder.random_for_unknown = True
            engine, figures = load_store(folder, embedder, texts, f"synthetic-{n}")
            embedder.random_for_unknown = False
            samples = measure(engine, embedder, queries, args.rounds)
            report("synthetic random vectors", n, figures, samples)
            engine.close()
    print(
        f"\nTotal run time (after model load): {time.perf_counter() - total_started:.0f} s; "
        f"load average now {load_average()} (started at {load_at_start})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
