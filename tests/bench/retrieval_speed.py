"""Retrieval speed benchmark: per-turn search latency, vector-cache memory and bulk loading,
each against a baseline checkout timed in the same run.

Run::

    python tests/bench/retrieval_speed.py --sizes 1000,10000     # + 100k synthetic, vs main
    python tests/bench/retrieval_speed.py --sizes 1000 --synthetic 0 --embed-load 0   # quick
    python tests/bench/retrieval_speed.py --vector-cache /tmp/use-10k.npz # reuse embeddings
    python tests/bench/retrieval_speed.py --baseline d26f764      # another revision (or a folder)
    python tests/bench/retrieval_speed.py --baseline none         # today's code alone
    python tests/bench/retrieval_speed.py --threads 1             # USE with one BLAS thread

The baseline (default ``main``) is the same benchmark run by another checkout's code (``git
archive`` of the revision, or a folder) in a child process that builds its own store from the
same texts and vectors. Every query is timed there and here alternately (who goes first
alternates too), each side timing its own ``engine.search`` call, so both see the same load on
the machine; the ratios are today / baseline in the same run.

What is measured, for each store size:

* **load** — ``MemoryEngine.add_many`` (the engine's bulk path: no duplicate-merging, no limits)
  in a temporary database, with the memory vectors already computed (the texts are embedded once,
  up front, in batches of 64, and that time is printed separately: it is what a full re-embed of
  a store of that size costs on this machine).
* **first search** — the vector index is built from the stored rows on the first search after
  loading; its time and the process RSS before/after are printed, together with the index
  bytes the engine reports (``vector_cache_bytes``).
* **latency** — every query of the retrieval set (116, zh + en) is searched ``--rounds`` times
  with ``k = 5``, the clock around the whole ``engine.search`` call. ``hybrid`` is a per-turn
  search of a new message: the engine's query-vector cache is cleared first, so the real USE
  encoding of the query is included every time (issue 18 target: p95 ≤ 30 ms at 10k memories;
  issue 21: at 100k). ``hybrid warm`` is the same search again with the query vector cached (the
  search alone), then ``vector`` and ``keyword`` (a message searched in several modes embeds
  once). p50 / p95 / max per mode, plus the encoding alone (``embed_query`` where the embedder
  has it: today's USE encodes queries on one BLAS thread). ``cpu ms`` is the mean process CPU
  time of a search (every thread: the caller's, the DB thread's, BLAS's): on a busy machine the
  work done, where latency also counts the waiting for a core.
* **same results** (``--check-order``) — before the timing of each size, every query is searched
  on both sides in each mode (hybrid, vector, keyword), floor on and off, ``k = 10``, and the
  result lists (ids in order, and their scores) are compared: a speed change must not change
  what search returns. The count of identical lists is printed, and the first differences.
* **bulk load with embedding** (``--embed-load N``) — ``add_many`` of N new texts with the real
  USE embedder, in memories per second, next to the embedder alone on the same texts (all the
  passages a memory gets), which bounds it.

Tail latency depends on what else runs on the cores: the load average is printed at the start
and the end of every section. Measured here on 2 busy cores (load ≈ 2.5), encoding one query with
2 BLAS threads had ~200 ms stalls in 5–10 % of calls (encode p95 10–220 ms), with 1 thread none
(p95 ≈ 2 ms); ``--threads`` compares the two.

At 1k and 10k the memories are real texts embedded with the embedded USE: the set's 596 memories
plus template-generated ones (``dataset_overlap.generate_distractors`` with another seed). At
100k (``--synthetic``) the memory vectors are random unit vectors (seeded by each text) inserted
through the same ``add_many`` path by an embedder that returns them for stored texts and the real
USE vector for queries — the vector math, the FTS side and the query encoding are real, only the
stored vectors' meaning is not.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy

ROOT = Path(__file__).resolve().parents[2]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import dataset_overlap  # noqa: E402  (the bench folder is not a package)

#: Set in the baseline's child process: its checkout's etos_desktop is imported, not this one's
#: (after the bench modules, which put this checkout first on the path).
_BASELINE_TREE = os.environ.get("ETOS_BENCH_TREE")
if _BASELINE_TREE:
    sys.path.insert(0, _BASELINE_TREE)

from etos_desktop.core.clock import FakeClock  # noqa: E402

#: Timed per query, in this order: a new message's search (query embedded), the same search
#: with its vector cached, then the other modes (which reuse the cached vector).
MODES = ("hybrid", "hybrid warm", "vector", "keyword")
K = 5
SIDES = ("today", "baseline")
#: ``--check-order``: the modes and the result count compared between the sides.
CHECK_MODES = ("hybrid", "vector", "keyword")
CHECK_K = 10


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
        random_for_unknown: While set, texts not in ``table`` get a random unit vector seeded by
            the text (loading the synthetic store: both sides of a run get the same vectors
            whatever their batches); cleared before queries run.
    """

    def __init__(self, inner: Any, table: dict[str, numpy.ndarray]) -> None:
        self.inner = inner
        self.key = inner.key
        self.dimension = inner.dimension
        self.table = table
        self.random_for_unknown = False

    def embed_query(self, texts: Sequence[str]) -> numpy.ndarray:
        """Query vectors: the real model's query path (``embed`` where it has none)."""
        encode = getattr(self.inner, "embed_query", self.inner.embed)
        return numpy.asarray(encode(list(texts)), dtype=numpy.float32)

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Vectors for ``texts``: from the table, random (synthetic loads) or the real model."""
        out = numpy.empty((len(texts), self.dimension), dtype=numpy.float32)
        missing = [i for i, t in enumerate(texts) if t not in self.table]
        for i, t in enumerate(texts):
            if t in self.table:
                out[i] = self.table[t]
        if missing:
            if self.random_for_unknown:
                for i in missing:
                    rng = numpy.random.default_rng(zlib.crc32(texts[i].encode()))
                    vector = rng.standard_normal(self.dimension, dtype=numpy.float32)
                    out[i] = vector / numpy.linalg.norm(vector)
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


def synthetic_texts(data: dict, n: int) -> list[str]:
    """``n`` texts for the synthetic store: the 10k texts, then numbered copies of them."""
    base = memory_texts(data, min(n, 10_000))
    return [f"{base[i % len(base)]} (#{i})" if i >= len(base) else base[i] for i in range(n)]


def embed_all(
    embedder: Any, texts: list[str], cache: Path | None, quiet: bool = False
) -> dict[str, numpy.ndarray]:
    """Embed ``texts`` in batches (or read them from ``cache``); print the time it took."""
    say = (lambda *a, **k: None) if quiet else print
    digest = hashlib.sha256((embedder.key + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    if cache is not None and cache.exists():
        stored = numpy.load(cache, allow_pickle=False)
        if str(stored["digest"]) == digest:
            say(f"Vectors for {len(texts)} texts read from {cache} (embedding skipped).")
            return dict(zip(texts, stored["vectors"], strict=True))
    started = time.perf_counter()
    chunks = []
    for i in range(0, len(texts), 64):
        chunks.append(numpy.asarray(embedder.embed(texts[i : i + 64]), dtype=numpy.float32))
        if (i // 64) % 40 == 39:
            done = i + 64
            rate = (time.perf_counter() - started) / done
            say(
                f"  embedded {done}/{len(texts)} ({1000 * rate:.1f} ms/text, "
                f"~{rate * (len(texts) - done):.0f} s left)",
                flush=True,
            )
    vectors = numpy.concatenate(chunks)
    seconds = time.perf_counter() - started
    say(
        f"Embedded {len(texts)} texts with USE in {seconds:.1f} s "
        f"({1000 * seconds / len(texts):.1f} ms/text, batches of 64, "
        f"{getattr(embedder, 'threads', '?')} BLAS threads)."
    )
    if cache is not None:
        numpy.savez(cache, digest=numpy.array(digest), vectors=vectors)
        say(f"Vectors cached in {cache}.")
    return dict(zip(texts, vectors, strict=True))


def _drafts(texts: Sequence[str], now: Any) -> list[dict[str, Any]]:
    rng = random.Random(9)
    return [{"text": t, "created_at": now - timedelta(days=rng.uniform(0, 700))} for t in texts]


class Runner:
    """One side of the benchmark: a store built with the imported etos_desktop, and its timings.

    The parent runs today's code in-process; the baseline's runs in a child (``--worker``). Both
    build the same stores from the same texts and vectors.

    Args:
        threads: BLAS threads for USE (``None``: the app's default).
        sizes: The real-vector store sizes of the run.
        vector_cache: The npz file holding the texts' USE vectors.
        folder: Where the temporary databases go.
    """

    def __init__(
        self, threads: int | None, sizes: Sequence[int], vector_cache: Path | None, folder: Path
    ) -> None:
        from etos_desktop.core.providers.embedders import UseEmbedder

        self.use = UseEmbedder(threads=threads)
        self.data = dataset_overlap.load_set(dataset_overlap.DEFAULT_SET)
        self.sizes = list(sizes)
        self.vector_cache = vector_cache
        self.folder = folder
        self.engine: Any = None
        self.embedder: Any = None
        self._table: dict[str, numpy.ndarray] | None = None
        self._cpu: dict[str, list[float]] = {}

    def load_model(self) -> dict[str, Any]:
        """Load USE; its load time and RSS cost."""
        started = time.perf_counter()
        rss0 = rss_bytes()
        self.use.load()
        from etos_desktop.core.memory import engine

        return {
            "module": str(Path(engine.__file__).parents[3]),
            "seconds": time.perf_counter() - started,
            "rss": rss_bytes() - rss0,
            "threads": self.use.threads,
            "threadpoolctl": self.use.thread_limit_enforced,
        }

    def table(self, quiet: bool = True) -> dict[str, numpy.ndarray]:
        """The real texts' vectors (embedded once, or read from the cache)."""
        if self._table is None:
            texts = memory_texts(self.data, max(self.sizes))
            self._table = embed_all(self.use, texts, self.vector_cache, quiet=quiet)
        return self._table

    def load(self, label: str, n: int, synthetic: bool) -> dict[str, Any]:
        """Open a temporary engine and bulk-load ``n`` memories; the load figures."""
        from etos_desktop.core.memory.engine import MemoryEngine

        self.close()
        if synthetic:
            texts = synthetic_texts(self.data, n)
            self.embedder = PrecomputedEmbedder(self.use, {})
            self.embedder.random_for_unknown = True
        else:
            texts = memory_texts(self.data, max(self.sizes))[:n]
            self.embedder = PrecomputedEmbedder(self.use, self.table())
        clock = FakeClock()
        path = self.folder / f"speed-{label}-{os.getpid()}.db"
        self.engine = MemoryEngine.open(path, embedder=self.embedder, clock=clock)
        drafts = _drafts(texts, clock.now())
        started = time.perf_counter()
        self.engine.add_many(drafts, batch_size=500)
        load_seconds = time.perf_counter() - started
        self.embedder.random_for_unknown = False
        gc.collect()
        rss_before = rss_bytes()
        started = time.perf_counter()
        self.engine.search("warm up the index", k=K, mode="vector")
        first = time.perf_counter() - started
        gc.collect()
        return {
            "load_s": load_seconds,
            "first_search_s": first,
            "rss_before": rss_before,
            "rss_after": rss_bytes(),
            "matrix_bytes": self.engine.vector_cache_bytes(),
        }

    def search(self, query: str, mode: str) -> float:
        """Seconds one ``engine.search`` takes (``hybrid``: with the query embedded anew)."""
        engine = self.engine
        if mode == "hybrid":
            clear = getattr(engine, "clear_query_cache", None)
            if clear is None:
                # A checkout from before the method: its cache is this attribute.
                engine._query_vectors.clear()
            else:
                clear()
        cpu = time.process_time()
        started = time.perf_counter()
        engine.search(query, k=K, mode=mode.split()[0])
        seconds = time.perf_counter() - started
        self._cpu.setdefault(mode, []).append(time.process_time() - cpu)
        return seconds

    def cpu_times(self) -> dict[str, list[float]]:
        """The process CPU seconds (every thread) of each search since the last call, by mode."""
        out, self._cpu = self._cpu, {}
        return out

    def results(self, queries: list[str]) -> list[list[list[float]]]:
        """``[id, score]`` of every hit, per query, mode and floor (``--check-order``)."""
        out = []
        for query in queries:
            for mode in CHECK_MODES:
                for floor in (True, False):
                    hits = self.engine.search(query, k=CHECK_K, mode=mode, apply_floor=floor)
                    out.append([[hit.id, hit.score] for hit in hits])
        return out

    def encode(self, query: str) -> float:
        """Seconds encoding one query takes (the model alone, on the engine's query path)."""
        encode = getattr(self.use, "embed_query", self.use.embed)
        started = time.perf_counter()
        encode([query])
        return time.perf_counter() - started

    def embed_load(self, n: int) -> dict[str, Any]:
        """``add_many`` of ``n`` new texts with the real USE embedder, and USE alone on them."""
        from etos_desktop.core.memory.engine import MemoryEngine
        from etos_desktop.core.retrieval.vectors import chunk_texts

        self.close()
        texts = [f"{t} (load {i})" for i, t in enumerate(synthetic_texts(self.data, n))]
        clock = FakeClock()
        path = self.folder / f"speed-embed-{os.getpid()}.db"
        engine = MemoryEngine.open(path, embedder=self.use, clock=clock)
        passages = engine.tuning.passage_weight > 0
        pieces = [c for t in texts for c in chunk_texts(t, passages=passages)]
        started = time.perf_counter()
        for i in range(0, len(pieces), 64):
            self.use.embed(pieces[i : i + 64])
        embed_only = time.perf_counter() - started
        drafts = _drafts(texts, clock.now())
        started = time.perf_counter()
        engine.add_many(drafts)
        seconds = time.perf_counter() - started
        engine.close()
        path.unlink(missing_ok=True)
        return {"n": n, "seconds": seconds, "embed_only_s": embed_only, "pieces": len(pieces)}

    def close(self) -> dict[str, Any]:
        """Close the current store."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None
            gc.collect()
        return {}


def worker() -> int:
    """The baseline's side: a :class:`Runner` driven by JSON lines on stdin."""
    spec = json.loads(sys.stdin.readline())
    runner = Runner(spec["threads"], spec["sizes"], Path(spec["cache"]), Path(spec["folder"]))
    out = sys.stdout
    sys.stdout = sys.stderr  # only replies go to the parent
    for line in sys.stdin:
        command = json.loads(line)
        name = command.pop("cmd")
        if name == "quit":
            break
        result = getattr(runner, name)(**command)
        out.write(json.dumps(result) + "\n")
        out.flush()
    runner.close()
    return 0


class Baseline:
    """The baseline checkout's :class:`Runner` in a child process.

    Args:
        tree: The checkout (its ``etos_desktop`` is imported by the child).
        spec: What the child's runner is built with.
    """

    def __init__(self, tree: Path, spec: dict[str, Any]) -> None:
        env = {**os.environ, "ETOS_BENCH_TREE": str(tree), "PYTHONPATH": str(tree)}
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self._send(spec)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def __getattr__(self, name: str) -> Any:
        def call(**kwargs: Any) -> Any:
            self._send({"cmd": name, **kwargs})
            assert self._process.stdout is not None
            line = self._process.stdout.readline()
            if not line:
                raise SystemExit(f"the baseline's process ended during {name}")
            return json.loads(line)

        return call

    def quit(self) -> None:
        """Stop the child."""
        self._send({"cmd": "quit"})
        self._process.wait(timeout=60)


def baseline_tree(revision: str, folder: Path) -> Path | None:
    """A checkout of ``revision`` (or the folder it names) to time as the baseline."""
    if revision == "none":
        return None
    if Path(revision).is_dir():
        return Path(revision)
    tree = folder / "baseline"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "archive", revision], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def int8_error(table: dict[str, numpy.ndarray], queries: numpy.ndarray) -> str:
    """The int8 index's cosine error against float32 on these vectors (today's code only)."""
    try:
        from etos_desktop.core.retrieval.vectors import quantize
    except ImportError:
        return "n/a (no int8 index)"
    matrix = numpy.stack(list(table.values())).astype(numpy.float32)
    codes, scales = quantize(matrix)
    approx = (codes.astype(numpy.float32) @ queries.T) * scales[:, None]
    error = numpy.abs(approx - matrix @ queries.T)
    return f"int8 cosine error vs float32: mean {error.mean():.5f}, max {error.max():.5f}"


def measure(
    sides: dict[str, Any], queries: list[str], rounds: int
) -> dict[str, dict[str, list[float]]]:
    """Latency samples (seconds) per side and mode, each query timed on both sides in turn."""
    samples: dict[str, dict[str, list[float]]] = {
        side: {mode: [] for mode in MODES} for side in sides
    }
    samples["today"]["encode only"] = []
    names = list(sides)
    for r in range(rounds):
        for i, q in enumerate(queries):
            samples["today"]["encode only"].append(sides["today"].encode(q))
            order = names if (i + r) % 2 == 0 else names[::-1]
            for mode in MODES:
                for side in order:
                    samples[side][mode].append(sides[side].search(query=q, mode=mode))
    return samples


def _ratio(a: float, b: float | None) -> str:
    return "" if not b else f"{a / b:6.2f}×"


def report(
    label: str,
    n: int,
    figures: dict[str, dict],
    samples: dict[str, dict[str, list[float]]],
    cpu: dict[str, dict[str, list[float]]] | None = None,
) -> None:
    """Print one store size's figures, today's next to the baseline's."""
    print(f"\n== {label}: {n} memories ==")
    for side, f in figures.items():
        print(
            f"  {side:<8} load (add_many, vectors precomputed): {f['load_s']:.1f} s "
            f"({1000 * f['load_s'] / n:.2f} ms/memory, {n / f['load_s']:.0f}/s); first search "
            f"(builds the index): {1000 * f['first_search_s']:.0f} ms; vector cache "
            f"{mib(f['matrix_bytes'])}; RSS {mib(f['rss_before'])} → {mib(f['rss_after'])}"
        )
    if "baseline" in figures:
        t, b = figures["today"], figures["baseline"]
        print(
            f"  today / baseline: load {_ratio(t['load_s'], b['load_s'])}, first search "
            f"{_ratio(t['first_search_s'], b['first_search_s'])}, vector cache "
            f"{_ratio(t['matrix_bytes'], b['matrix_bytes'])} "
            f"(float32 {n} × 512 alone = {mib(n * 512 * 4)})"
        )
    head = f"  {'mode':<12} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'mean ms':>8}"
    if "baseline" in samples:
        head += f" | {'base p50':>8} {'base p95':>8} {'base max':>8} | {'p50 ×':>7} {'p95 ×':>7}"
    if cpu:
        head += f" | {'cpu ms':>7} {'base cpu':>8} {'cpu ×':>7}"
    print(head)
    for mode, values in samples["today"].items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        line = (
            f"  {mode:<12} {len(values):>5} {1000 * p50:>8.1f} {1000 * p95:>8.1f}"
            f" {1000 * max(values):>8.1f} {1000 * statistics.fmean(values):>8.1f}"
        )
        base = samples.get("baseline", {}).get(mode)
        if base:
            b50, b95 = percentile(base, 0.5), percentile(base, 0.95)
            line += (
                f" | {1000 * b50:>8.1f} {1000 * b95:>8.1f} {1000 * max(base):>8.1f} |"
                f" {_ratio(p50, b50):>7} {_ratio(p95, b95):>7}"
            )
        mine = (cpu or {}).get("today", {}).get(mode)
        if mine:
            c = statistics.fmean(mine)
            theirs = (cpu or {}).get("baseline", {}).get(mode)
            cb = statistics.fmean(theirs) if theirs else None
            line += f" | {1000 * c:>7.1f} " + (
                f"{1000 * cb:>8.1f} {_ratio(c, cb):>7}" if cb else f"{'':>8} {'':>7}"
            )
        print(line)


def check_order(sides: dict[str, Any], queries: list[str]) -> None:
    """Compare both sides' result lists for every query, mode and floor; print the count."""
    today, base = (
        sides["today"].results(queries=queries),
        sides["baseline"].results(queries=queries),
    )
    labels = [(q, m, f) for q in queries for m in CHECK_MODES for f in ("floor", "no floor")]
    same_ids = sum([h[0] for h in a] == [h[0] for h in b] for a, b in zip(today, base, strict=True))
    same = sum(a == b for a, b in zip(today, base, strict=True))
    print(
        f"  same results: {same_ids} of {len(labels)} result lists have the same ids in the same "
        f"order, {same} also the same scores (k = {CHECK_K}; {len(queries)} queries × "
        f"{'/'.join(CHECK_MODES)} × floor on/off)"
    )
    shown = 0
    for (query, mode, floor), a, b in zip(labels, today, base, strict=True):
        if a != b and shown < 5:
            shown += 1
            print(f"    differs: {mode}, {floor}, {query[:60]!r}")
            print(f"      today    {[(h[0], round(h[1], 6)) for h in a[:5]]}")
            print(f"      baseline {[(h[0], round(h[1], 6)) for h in b[:5]]}")


def run_size(
    sides: dict[str, Any],
    label: str,
    n: int,
    synthetic: bool,
    queries: list[str],
    rounds: int,
    check: bool = False,
) -> None:
    """Load both sides' stores of one size, time the queries, report, close."""
    at_start = load_average()
    figures = {
        side: runner.load(label=label, n=n, synthetic=synthetic) for side, runner in sides.items()
    }
    if check and "baseline" in sides:
        print(f"\n== {label}: {n} memories, today's results against the baseline's ==")
        check_order(sides, queries)
    samples = measure(sides, queries, rounds) if rounds > 0 else None
    if samples is None:
        for runner in sides.values():
            runner.close()
        return
    cpu = {side: runner.cpu_times() for side, runner in sides.items()}
    report(label, n, figures, samples, cpu)
    print(f"  load average {at_start} at the start of this size, {load_average()} at its end")
    for runner in sides.values():
        runner.close()


def run_embed_load(sides: dict[str, Any], n: int, rounds: int = 2) -> None:
    """Bulk load with embedding, the sides one after the other (order alternating by round).

    USE with two BLAS threads is very sensitive to other load on two cores (its threads wait for
    each other), so each round times both sides back to back, and the embedder alone with them.
    """
    at_start = load_average()
    print(f"\n== bulk load with embedding: {n} new memories, add_many with USE ==")
    rates: dict[str, list[float]] = {side: [] for side in sides}
    names = list(sides)
    for r in range(rounds):
        for side in names if r % 2 == 0 else names[::-1]:
            f = sides[side].embed_load(n=n)
            rates[side].append(f["n"] / f["seconds"])
            print(
                f"  round {r + 1} {side:<8} {f['seconds']:.1f} s = {rates[side][-1]:.0f} "
                f"memories/s; USE alone on the same {f['pieces']} texts (whole texts and "
                f"passages, batches of 64): {f['embed_only_s']:.1f} s = "
                f"{f['n'] / f['embed_only_s']:.0f} memories/s (load {load_average()})"
            )
    if "baseline" in rates:
        ratios = [t / b for t, b in zip(rates["today"], rates["baseline"], strict=True)]
        print("  today / baseline rate per round: " + ", ".join(f"{x:.2f}×" for x in ratios))
    print(f"  load average {at_start} at the start, {load_average()} at the end")


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
    parser.add_argument(
        "--baseline",
        default="main",
        help="git revision or folder timed alongside in the same run ('none': skip)",
    )
    parser.add_argument(
        "--embed-load",
        type=int,
        default=1000,
        help="memories bulk-loaded with real embedding, per side and round (0: skip)",
    )
    parser.add_argument(
        "--check-order",
        action="store_true",
        help="compare both sides' result lists for every query before timing (--rounds 0: only that)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    data = dataset_overlap.load_set(dataset_overlap.DEFAULT_SET)
    queries = [q["text"] for q in data["queries"]]
    if args.conversation_queries:
        import conversation_set

        # Time words, names, follow-up shapes: the conversational set's questions too.
        queries += [q["text"] for q in conversation_set.load()["queries"]]
    print(f"{len(queries)} queries per round; {os.cpu_count()} CPUs")
    total_started = time.perf_counter()
    load_at_start = load_average()
    print(
        f"Load average {load_at_start}: other processes on these cores show up as latency spikes "
        "(p95/max); compare runs made on an idle machine."
    )
    with tempfile.TemporaryDirectory(prefix="etos-speed-") as tmp:
        folder = Path(tmp)
        cache = args.vector_cache or folder / "vectors.npz"
        today = Runner(args.threads, sizes or [1000], cache, folder)
        model = today.load_model()
        print(
            f"USE loaded in {model['seconds']:.1f} s (RSS +{mib(model['rss'])}), "
            f"{model['threads']} BLAS threads, threadpoolctl "
            f"{'yes' if model['threadpoolctl'] else 'NO'}"
        )
        if sizes:
            table = today.table(quiet=False)
            vectors = numpy.asarray(today.use.embed(queries[:50]), dtype=numpy.float32)
            print(int8_error(table, vectors))
        sides: dict[str, Any] = {"today": today}
        tree = baseline_tree(args.baseline, folder)
        if tree is not None:
            spec = {
                "threads": args.threads,
                "sizes": sizes or [1000],
                "cache": str(cache),
                "folder": str(folder),
            }
            sides["baseline"] = Baseline(tree, spec)
            where = sides["baseline"].load_model()["module"]
            print(f"Baseline: {args.baseline} ({where}), timed alternately in a child process")
        try:
            for n in sizes:
                run_size(
                    sides, f"USE vectors {n}", n, False, queries, args.rounds, args.check_order
                )
            if args.synthetic:
                n = args.synthetic
                run_size(
                    sides,
                    "synthetic random vectors",
                    n,
                    True,
                    queries,
                    args.rounds,
                    args.check_order,
                )
            if args.embed_load:
                run_embed_load(sides, args.embed_load)
        finally:
            if "baseline" in sides:
                sides["baseline"].quit()
            if tree is not None and tree.parent == folder:
                shutil.rmtree(tree, ignore_errors=True)
    print(
        f"\nTotal run time (after model load): {time.perf_counter() - total_started:.0f} s; "
        f"load average now {load_average()} (started at {load_at_start})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
