"""What the app sends vs what ranking finds, on every benchmark set and question file (issue 18).

Run::

    python tests/bench/memory_sent.py --vector-cache /tmp/use.npz               # all tables
    python tests/bench/memory_sent.py --vector-cache /tmp/use.npz --json out.json
    python tests/bench/memory_sent.py --vector-cache /tmp/use.npz --calibrate-floors
    python tests/bench/memory_sent.py --calibrate-floors --grid floor=0.1,0.15 \\
        --grid impersonal_floor=0.2,0.3,0.45 --grid keyword_floor=0.55

Sets (stores are loaded once; every question file of a store is run on the same store):

* ``bilingual`` — ``retrieval_set.json`` with its original questions, ``bilingual-v2`` — the same
  store with ``retrieval_questions_v2.json`` (third person, comparisons, counts), and
  ``bilingual+v2`` — both. The store is the app's flow: an update's newer memory is written with
  ``engine.supersede`` (the older one is archived); newer-wins is also measured in a store where
  both stay active (``newer both``).
* ``conversation``, ``conversation-v2``, ``conversation+v2`` — ``conversation_set.json`` with its
  questions and ``conversation_questions_v2.json``.
* ``keyword`` — ``keyword_set.json`` (keyword-dominated dialogue store between named friends).

Every question runs through ``engine.search(text, k=10, mode=..., apply_floor=...)`` with the
default ``from_user=True`` (the query is the user's own message, so a question without I/my/我
must clear ``impersonal_floor``) in the modes USE keyword / vector / hybrid and lexical (no
embedder) keyword / hybrid, twice: floor **off** (``apply_floor=False``: what ranking finds) and
floor **on** (``apply_floor=True``: what the app sends). Figures per split (calibration, test):

* ``off@k`` / ``on@k`` — share of targeted questions with a target among the first k results
  (k = 1, 3, 5, 10; a question with several targets counts when any is returned);
* ``none`` — share of targeted questions that get nothing at all with the floor on;
* ``fi`` — false injection: share of nothing-questions that get any result with the floor on;
* ``newer`` — questions with ``stale`` (an older memory the target replaced): the target is
  returned (floor on) above the stale one; ``newer both`` on the bilingual both-active store.

Targets on the test half (USE), per set, printed as ok / MISSED:

* (a) hybrid ``on@k`` ≥ 0.95 × hybrid ``off@k`` at k = 1, 5, 10, and ``fi`` ≤ 0.15;
* (b) hybrid ``off@k`` ≥ max(keyword ``off@k``, vector ``off@k``) − 0.01 at k = 1, 5, 10.

``--calibrate-floors`` uses the calibration halves only: it captures each question's candidate
pool once (``retrieval_quality.Pool``: the candidates the engine hands to ``search.rank``) and
re-ranks it under every setting of a grid of Tuning fields (default: ``floor`` ×
``impersonal_floor`` × ``keyword_floor``; ``--grid NAME=v1,v2`` replaces or adds any field of
``Tuning``, applied with ``dataclasses.replace``), printing floor-on hit@1/5/10 and false
injection per set. It changes nothing: the lead copies the numbers into ``tuning.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import conversation_set  # noqa: E402  (the bench folder is not a package)
import dataset_overlap  # noqa: E402
import keyword_set  # noqa: E402
import retrieval_quality as rq  # noqa: E402

KS = (1, 3, 5, 10)
TARGET_KS = (1, 5, 10)
SPLITS = ("calibration", "test")
RUNS = (("USE", "keyword"), ("USE", "vector"), ("USE", "hybrid"), ("lexical", "keyword"),
        ("lexical", "hybrid"))  # fmt: skip
DEFAULT_GRID: dict[str, tuple[float, ...]] = {
    "floor": (0.10, 0.15, 0.20, 0.25),
    "impersonal_floor": (0.15, 0.25, 0.35, 0.45),
    "keyword_floor": (0.40, 0.55, 0.70, 1.01),
}


# -- the sets ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class BenchSet:
    """One store and its question files.

    Attributes:
        name: The store's label (``bilingual``, ``conversation``, ``keyword``).
        data: The set's JSON (memories and original queries).
        files: Question lists by label, e.g. ``{"bilingual": [...], "bilingual-v2": [...]}``.
        make_store: Builds the app-flow store: ``(embedder or None, folder) -> store``.
        make_both: Builds the both-active store for newer-wins (``None``: the set has none).
    """

    name: str
    data: dict
    files: dict[str, list[dict]]
    make_store: Callable[[Any, Path], Any]
    make_both: Callable[[Any, Path], Any] | None = None

    @property
    def questions(self) -> list[dict]:
        """Every question of every file once (ids are unique across a store's files)."""
        seen: dict[str, dict] = {}
        for qs in self.files.values():
            for q in qs:
                seen.setdefault(q["id"], q)
        return list(seen.values())

    def labels(self) -> dict[str, list[dict]]:
        """Question lists by label, with the union of all files as ``<name>+v2``."""
        out = dict(self.files)
        if len(self.files) > 1:
            out[f"{self.name}+v2"] = self.questions
        return out


def load_sets(names: Sequence[str]) -> list[BenchSet]:
    """The benchmark sets, their v2 question files checked on load."""
    out = []
    if "bilingual" in names:
        bi = dataset_overlap.load_set(dataset_overlap.DEFAULT_SET)
        v2 = dataset_overlap.load_questions(dataset_overlap.QUESTIONS_V2, bi)
        out.append(
            BenchSet(
                "bilingual",
                bi,
                {"bilingual": bi["queries"], "bilingual-v2": v2},
                lambda emb, folder, d=bi: rq.Store(d, emb, "supersede", folder),
                lambda emb, folder, d=bi: rq.Store(d, emb, "both", folder),
            )
        )
    if "conversation" in names:
        conv = conversation_set.load()
        v2 = conversation_set.load_questions(conversation_set.QUESTIONS_V2, conv)
        out.append(
            BenchSet(
                "conversation",
                conv,
                {"conversation": conv["queries"], "conversation-v2": v2},
                lambda emb, folder, d=conv: rq.ConversationStore(d, emb, folder),
            )
        )
    if "keyword" in names:
        kw = keyword_set.load()
        out.append(
            BenchSet(
                "keyword",
                kw,
                {"keyword": kw["queries"]},
                lambda emb, folder, d=kw: rq.ConversationStore(d, emb, folder),
            )
        )
    return out


# -- running ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Result:
    """One question's results in one run: floor on (sent), floor off (ranking), both-active."""

    on: list[str]
    off: list[str]
    seconds: float
    both: list[str] | None = None


def run_store(store: Any, questions: Sequence[dict], mode: str) -> dict[str, Result]:
    """Every question in ``mode``, k = 10, floor on and off."""
    out = {}
    for q in questions:
        started = time.perf_counter()
        on = store.search(q["text"], mode, apply_floor=True, k=10)
        seconds = time.perf_counter() - started
        off = store.search(q["text"], mode, apply_floor=False, k=10)
        out[q["id"]] = Result(on, off, seconds)
    return out


def run_set(bench: BenchSet, use: Any, folder: Path, lexical: bool) -> dict[tuple, dict]:
    """All runs of one set: ``{(embedder, mode): {question id: Result}}``."""
    runs: dict[tuple, dict] = {}
    stale = [q for q in bench.questions if q.get("stale")]
    for emb_name, embedder in (("USE", use), ("lexical", None)):
        if emb_name == "lexical" and not lexical:
            continue
        sub = folder / f"{bench.name}-{emb_name}"
        sub.mkdir()
        started = time.perf_counter()
        store = bench.make_store(embedder, sub)
        both = bench.make_both(embedder, sub) if bench.make_both and stale else None
        loaded = time.perf_counter() - started
        for e, mode in RUNS:
            if e != emb_name:
                continue
            results = run_store(store, bench.questions, mode)
            if both is not None:
                for q in stale:
                    results[q["id"]].both = both.search(q["text"], mode, apply_floor=True, k=10)
            runs[(emb_name, mode)] = results
        print(
            f"  {bench.name}: {emb_name} store loaded in {loaded:.1f} s, "
            f"{len(bench.questions)} questions × {sum(1 for e, _ in RUNS if e == emb_name)} modes "
            f"in {time.perf_counter() - started - loaded:.1f} s"
        )
        store.close()
        if both is not None:
            both.close()
    return runs


# -- figures -----------------------------------------------------------------------------------------


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def figures(questions: Sequence[dict], results: dict[str, Result], split: str | None) -> dict:
    """The figures of one run over ``questions`` (one split, or both when ``None``)."""
    qs = [q for q in questions if split is None or q["split"] == split]
    targeted = [q for q in qs if q["targets"]]
    nothing = [q for q in qs if not q["targets"]]
    stale = [q for q in qs if q.get("stale")]
    m: dict[str, Any] = {"n": len(targeted), "n_nothing": len(nothing)}
    for key in ("off", "on"):
        ranks = [rq.rank_of(q["targets"], getattr(results[q["id"]], key)) for q in targeted]
        for k in KS:
            m[f"{key}@{k}"] = _share([rq.within(r, k) for r in ranks])
    m["none"] = _share([not results[q["id"]].on for q in targeted])
    m["fi"] = _share([bool(results[q["id"]].on) for q in nothing])
    m["n_stale"] = len(stale)
    m["newer"] = _share([rq.newer_won(q, results[q["id"]].on) for q in stale])
    both = [q for q in stale if results[q["id"]].both is not None]
    m["newer both"] = _share([rq.newer_won(q, results[q["id"]].both or []) for q in both])
    m["ms/q"] = 1000 * statistics.fmean(results[q["id"]].seconds for q in qs) if qs else None
    return m


def _f(value: float | None) -> str:
    return "  –" if value is None else f"{value:.2f}"


def print_table(label: str, rows: list[tuple[str, str, str, dict]]) -> None:
    """One set's table: every run and split, floor off and on."""
    print(f"\n{label}  (k = 10; off = ranking, apply_floor=False; on = sent, apply_floor=True)")
    head = " ".join(f"off@{k:<2}" for k in KS) + " | " + " ".join(f"on@{k:<3}" for k in KS)
    print(
        f"  {'embedder':<8} {'mode':<8} {'split':<12} {'n':>3} {head} | {'none':>5} "
        f"{'fi':>5} {'(n)':>4} {'newer':>5} {'both':>5} {'ms/q':>5}"
    )
    for emb, mode, split, m in rows:
        off = " ".join(f"{_f(m[f'off@{k}']):>6}" for k in KS)
        on = " ".join(f"{_f(m[f'on@{k}']):>6}" for k in KS)
        print(
            f"  {emb:<8} {mode:<8} {split:<12} {m['n']:>3} {off} | {on} | {_f(m['none']):>5} "
            f"{_f(m['fi']):>5} {m['n_nothing']:>4} {_f(m['newer']):>5} "
            f"{_f(m['newer both']):>5} {m['ms/q']:>5.1f}"
        )


def targets(label: str, by_run: dict[tuple[str, str], dict], split: str = "test") -> dict:
    """The two issue targets on ``split`` for USE; printed as ok / MISSED, returned for JSON."""
    hy, kw, vec = (by_run[("USE", mode)][split] for mode in ("hybrid", "keyword", "vector"))
    ratio = {k: (hy[f"on@{k}"] or 0.0) / (hy[f"off@{k}"] or 1e-9) for k in TARGET_KS}
    fi = hy["fi"] or 0.0
    a_ok = all(hy[f"on@{k}"] is not None and r >= 0.95 - 1e-9 for k, r in ratio.items()) and (
        fi <= 0.15
    )
    gaps = {
        k: (hy[f"off@{k}"] or 0.0) - max(kw[f"off@{k}"] or 0.0, vec[f"off@{k}"] or 0.0)
        for k in TARGET_KS
    }
    b_ok = all(g >= -0.01 - 1e-9 for g in gaps.values())
    print(
        f"  {label} ({split}) (a) hybrid on/off at k=1/5/10: "
        + "/".join(f"{_f(hy[f'on@{k}'])}÷{_f(hy[f'off@{k}'])}={ratio[k]:.2f}" for k in TARGET_KS)
        + f" (≥ 0.95), false injection {_f(hy['fi'])} (≤ 0.15): {'ok' if a_ok else 'MISSED'}"
    )
    print(
        f"  {label} ({split}) (b) hybrid off − best channel off at k=1/5/10: "
        + "/".join(f"{g:+.2f}" for g in gaps.values())
        + f" (≥ −0.01): {'ok' if b_ok else 'MISSED'}"
    )
    return {"a": a_ok, "b": b_ok, "ratio": ratio, "fi": fi, "gaps": gaps}


# -- floor curve ----------------------------------------------------------------------------------


def parse_grid(specs: Sequence[str], base: Any) -> dict[str, tuple[float, ...]]:
    """``NAME=v1,v2`` specs over :data:`DEFAULT_GRID`; names must be fields of ``base``."""
    grid = dict(DEFAULT_GRID)
    for spec in specs:
        name, _, values = spec.partition("=")
        grid[name.strip()] = tuple(float(v) for v in values.split(",") if v.strip())
    fields = {f.name for f in dataclasses.fields(base)}
    unknown = [name for name in grid if name not in fields]
    if unknown:
        raise SystemExit(f"--grid: not Tuning fields: {unknown} (fields: {sorted(fields)})")
    return grid


def calibrate_floors(
    sets: list[BenchSet], use: Any, folder: Path, grid_specs: Sequence[str]
) -> list[dict]:
    """Floor-on hit@1/5/10 and false injection per set for every grid setting (calibration)."""
    pools: dict[str, list[Any]] = {}
    base = None
    mismatched = 0
    for bench in sets:
        sub = folder / f"{bench.name}-pool"
        sub.mkdir()
        store = bench.make_store(use, sub)
        base = store.engine.tuning
        started = time.perf_counter()
        cal = [q for q in bench.questions if q["split"] == "calibration"]
        captured = {q["id"]: rq.Pool(store, q, base) for q in cal}
        # The re-ranked pool must give what the engine sends (floor on, current tuning).
        for q in cal:
            sent = store.search(q["text"], "hybrid", apply_floor=True, k=10)
            mismatched += captured[q["id"]].results(base, 10) != sent
        for label, qs in bench.labels().items():
            pools[label] = [captured[q["id"]] for q in qs if q["id"] in captured]
        store.close()
        print(
            f"  {bench.name}: captured {len(cal)} calibration pools in "
            f"{time.perf_counter() - started:.1f} s"
        )
    assert base is not None
    grid = parse_grid(grid_specs, base)
    names = list(grid)
    print(
        f"\nFloor curve on the calibration halves (USE hybrid, floor on, k = 10; re-ranked "
        f"pools; {mismatched} pools differ from a live search at the current tuning)."
    )
    print("Current tuning: " + ", ".join(f"{n}={getattr(base, n)}" for n in names))
    labels = list(pools)
    print(
        "  " + " ".join(f"{n[:16]:>16}" for n in names) + "  "
        + "  ".join(f"{lb[:22]:<22}" for lb in labels)
    )  # fmt: skip
    print(
        "  " + " ".join(" " * 16 for _ in names) + "  "
        + "  ".join(f"{'@1   @5   @10  fi':<22}" for _ in labels)
    )  # fmt: skip
    curve = []
    settings = [
        dict(zip(names, values, strict=True)) for values in itertools.product(*grid.values())
    ]
    current = {n: getattr(base, n) for n in names}
    if current not in settings:
        settings.insert(0, current)
    for changes in settings:
        tuning = dataclasses.replace(base, **changes)
        row: dict[str, Any] = {"tuning": changes, "sets": {}}
        cells = []
        for label in labels:
            res = [(p.query, p.results(tuning, 10)) for p in pools[label]]
            targeted = [(q, r) for q, r in res if q["targets"]]
            m = {
                f"on@{k}": _share([rq.within(rq.rank_of(q["targets"], r), k) for q, r in targeted])
                for k in TARGET_KS
            }
            m["fi"] = _share([bool(r) for q, r in res if not q["targets"]])
            row["sets"][label] = m
            cells.append(" ".join(_f(m[f"on@{k}"]) for k in TARGET_KS) + f" {_f(m['fi'])}".ljust(6))
        mark = "  ← current" if changes == current else ""
        print(
            "  " + " ".join(f"{changes[n]:>16}" for n in names) + "  "
            + "  ".join(f"{c:<22}" for c in cells) + mark
        )  # fmt: skip
        curve.append(row)
    return curve


# -- main -----------------------------------------------------------------------------------------------


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vector-cache", type=Path, help="USE vectors kept between runs (.npz)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument(
        "--sets",
        nargs="+",
        choices=("bilingual", "conversation", "keyword"),
        default=["bilingual", "conversation", "keyword"],
    )
    parser.add_argument("--no-lexical", action="store_true", help="skip the lexical-only runs")
    parser.add_argument(
        "--calibrate-floors",
        action="store_true",
        help="print the floor curve on the calibration halves instead of the tables",
    )
    parser.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="NAME=v1,v2",
        help="a Tuning field and its values for --calibrate-floors (repeatable)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    sets = load_sets(args.sets)
    use = rq.make_use_embedder(args.vector_cache)
    for bench in sets:
        use.prefetch([m["text"] for m in bench.data["memories"]])
    use.save()
    print(
        f"USE: embedded {use.embedded} new texts in {use.seconds:.1f} s "
        f"(wall {time.perf_counter() - started:.1f} s)"
    )
    out: dict[str, Any] = {"sets": {}, "targets": {}}
    with tempfile.TemporaryDirectory(prefix="etos-sent-") as tmp:
        if args.calibrate_floors:
            out["curve"] = calibrate_floors(sets, use, Path(tmp), args.grid)
        else:
            for bench in sets:
                runs = run_set(bench, use, Path(tmp), not args.no_lexical)
                for label, qs in bench.labels().items():
                    by_run = {
                        run: {split: figures(qs, results, split) for split in SPLITS}
                        for run, results in runs.items()
                    }
                    print_table(
                        label,
                        [(e, mo, s, by_run[(e, mo)][s]) for (e, mo) in runs for s in SPLITS],
                    )
                    out["sets"][label] = {f"{e} {mo}": by_run[(e, mo)] for (e, mo) in by_run}
                    out["targets"][label] = targets(label, by_run)
    use.save()
    seconds = time.perf_counter() - started
    out["seconds"] = seconds
    print(f"\nWall time {seconds:.0f} s")
    if not args.calibrate_floors:
        print("\nTargets on the test half (USE):")
        for label, t in out["targets"].items():
            print(
                f"  {label:<18} (a) {'ok' if t['a'] else 'MISSED':<6} "
                f"(b) {'ok' if t['b'] else 'MISSED'}"
            )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
