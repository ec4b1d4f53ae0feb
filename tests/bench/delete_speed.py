"""Delete-all and undo-all of a memory store, with the replies that used the memories (issue 9).

Run::

    python tests/bench/delete_speed.py                  # 1k and 10k memories, 3 rounds each
    python tests/bench/delete_speed.py --sizes 1000 --rounds 1

What is measured, for each store size N (a fresh copy of the same file per round):

* **delete all** — ``MemoryEngine.delete_many`` of every memory in one transaction: the undo
  snapshots are read, the memories' texts are erased from the stored context traces, rows,
  vectors, index entries and revisions go, the full-text index is merged once, the WAL is
  checkpointed. Before issue 9 this merged the index once per memory: ~5 s at 1k (DB thread
  blocked) and, from about the 1,001st memory, "database disk image is malformed".
* **undo all** — ``MemoryEngine.undo_delete_many`` of those snapshots, in one transaction.
* **delete one** — one memory deleted alone from the full store (what the Memory page's Delete
  does), about 20 of them; its cost is dominated by merging the index of the whole store.
* **baseline** (N ≤ 1,000 only) — delete-all the way it was done before issue 9, in the same
  run on a copy of the same file: one transaction, the index merged once per memory. Above
  about 1,000 memories it fails, so there is no baseline at 10k.

The store looks like a real user's: the memory texts of the retrieval benchmark set plus the
generated ones (``retrieval_speed.memory_texts``), spread over 700 days, with a 512-float vector
each (USE's size; random unit vectors, since no search runs here) and N/5 stored replies whose
context traces cite 5 memories each (built by the real assembler from ``retrieval.memory_block``).

The machine is shared: the load average is printed at the start and the end, and figures from a
busy machine are upper bounds.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import dataset_overlap  # noqa: E402  (the bench folder is not a package)
import retrieval_speed  # noqa: E402

from etos_desktop.core.clock import FakeClock  # noqa: E402

DIMENSION = 512


class RandomEmbedder:
    """Seeded random unit vectors of USE's size: the stored bytes are realistic, meaning is not."""

    key = "bench-random:512"
    dimension = DIMENSION

    def __init__(self) -> None:
        self._rng = numpy.random.default_rng(42)

    def embed(self, texts: list[str]) -> numpy.ndarray:
        """One random unit vector per text."""
        block = self._rng.standard_normal((len(texts), DIMENSION), dtype=numpy.float32)
        block /= numpy.linalg.norm(block, axis=1, keepdims=True)
        return block


def build_store(path: Path, texts: list[str]) -> None:
    """A store of ``texts`` plus N/5 replies whose traces cite 5 memories each."""
    from etos_desktop.core.context.assembler import ContextInput, assemble_context
    from etos_desktop.core.memory.engine import MemoryEngine
    from etos_desktop.core.memory.retrieval import memory_block, trace_memories
    from etos_desktop.core.memory.search import Hit
    from etos_desktop.core.storage import traces
    from etos_desktop.core.storage.tables import ContextTraceRow, ConversationRow, MessageRow

    clock = FakeClock()
    now = clock.now()
    rng = random.Random(9)
    drafts = [{"text": t, "created_at": now - timedelta(days=rng.uniform(0, 700))} for t in texts]
    engine = MemoryEngine.open(path, embedder=RandomEmbedder(), clock=clock)
    ids = engine.add_many(drafts, batch_size=500)
    memories = {m.id: m for m in engine.memories()}
    traces_json: list[tuple[str, str]] = []
    for n in range(len(ids) // 5):
        chosen = [memories[i] for i in rng.sample(ids, 5)]
        hits = [
            Hit(
                id=m.id,
                score=0.5,
                parts={"vector": 0.4, "eligible_vector": 1.0},
                text=m.content,
                kind=m.kind,
                created_at=m.created_at,
                confidence=m.confidence,
            )
            for m in chosen
        ]
        question = f"question {n} about {chosen[0].content[:40]}"
        assembled = assemble_context(
            ContextInput(
                system_prompt="You are a warm companion.",
                history=[],
                current={"role": "user", "content": question},
                model="bench-model",
                context_window=32_000,
                max_output_tokens=1_000,
                memory_block=memory_block(hits, "en"),
            )
        )
        trace = dataclasses.replace(
            assembled.trace, memories=trace_memories(hits), retrieval_query=question
        )
        traces_json.append((question, trace.to_json()))

    def replies(session: Any) -> None:
        # The rows ChatRepository.add_message / save_trace write, in one transaction (one
        # repository call per row would take ~25 ms each here: a connection per call).
        conversation = ConversationRow(title="bench", created_at=now, updated_at=now)
        session.add(conversation)
        session.flush()
        for n, (question, trace_json) in enumerate(traces_json):
            user = MessageRow(
                conversation_id=conversation.id, role="user", content=question, created_at=now
            )
            session.add(user)
            session.flush()
            reply = MessageRow(
                conversation_id=conversation.id,
                role="assistant",
                content=f"answer {n}",
                created_at=now,
                reply_to_id=user.id,
            )
            session.add(reply)
            session.flush()
            session.add(ContextTraceRow(message_id=reply.id, created_at=now, trace_json=trace_json))
            session.flush()
            traces.link(session, reply.id, trace_json)
        session.commit()

    engine._db.call(replies)
    engine.close()


def measure(template: Path, folder: Path, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Time delete-all, undo-all and single deletes on fresh copies of ``template``.

    Each figure is ``(wall seconds, CPU seconds of the process)``: on a shared machine the CPU
    time moves much less with the load than the wall time does.
    """
    from etos_desktop.core.memory.engine import MemoryEngine

    figures: dict[str, list[tuple[float, float]]] = {
        "delete all": [],
        "undo all": [],
        "delete one": [],
        "baseline": [],
    }

    def timed(name: str, fn: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        figures[name].append((time.perf_counter() - wall, time.process_time() - cpu))
        return result

    for round_no in range(rounds):
        path = folder / f"round-{round_no}.db"
        shutil.copy(template, path)
        with MemoryEngine.open(path, embedder=RandomEmbedder(), clock=FakeClock()) as engine:
            ids = [m.id for m in engine.memories(include_inactive=True)]
            deleted = timed("delete all", functools.partial(engine.delete_many, ids))
            timed("undo all", functools.partial(engine.undo_delete_many, deleted))
            assert engine.count_active() == len(ids)
            for memory_id in random.Random(round_no).sample(ids, 20 // rounds + 1):
                timed("delete one", functools.partial(engine.delete, memory_id))
        path.unlink()
        if len(ids) <= BASELINE_LIMIT:
            shutil.copy(template, path)
            with MemoryEngine.open(path, embedder=RandomEmbedder(), clock=FakeClock()) as engine:
                timed("baseline", functools.partial(_delete_all_as_before, engine, ids))
            path.unlink()
    return figures


#: Above this the baseline fails ("database disk image is malformed" at about 1,000).
BASELINE_LIMIT = 1000


def _delete_all_as_before(engine: Any, ids: list[int]) -> None:
    """Delete-all as before issue 9: one transaction, the full-text index merged per memory.

    (``store.erase_many`` of one id at a time: its deletes, then an FTS ``optimize``, as the old
    per-memory ``erase`` did; without the trace rewrite, which did not exist.)
    """
    from etos_desktop.core.memory import store
    from etos_desktop.core.storage.database import checkpoint

    now = FakeClock().now()

    def write(session: Any) -> None:
        for memory_id in ids:
            store.erase_many(session, [memory_id], actor="user", now=now)
        session.commit()
        checkpoint(session)

    engine._db.call(write)


def main() -> int:
    """Build each store once, then measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {retrieval_speed.load_average()}")
    data = dataset_overlap.load_set(dataset_overlap.DEFAULT_SET)
    with tempfile.TemporaryDirectory(prefix="etos-delete-bench-") as tmp:
        folder = Path(tmp)
        for size in args.sizes:
            texts = retrieval_speed.memory_texts(data, size)
            template = folder / f"store-{size}.db"
            started = time.perf_counter()
            build_store(template, texts)
            mib = template.stat().st_size / 2**20
            print(
                f"\n{size} memories, {size // 5} replies citing 5 each: built in "
                f"{time.perf_counter() - started:.1f} s, file {mib:.1f} MiB"
            )
            figures = measure(template, folder, args.rounds)
            for name, values in figures.items():
                if not values:
                    continue
                wall = [1000 * w for w, _ in values]
                cpu = [1000 * c for _, c in values]
                print(
                    f"  {name:<10}  wall median {statistics.median(wall):8.1f} ms "
                    f"(min {min(wall):8.1f}, max {max(wall):8.1f})   "
                    f"CPU median {statistics.median(cpu):8.1f} ms   (n={len(values)})"
                )
            if figures["baseline"]:
                ratio = statistics.median(w for w, _ in figures["baseline"]) / statistics.median(
                    w for w, _ in figures["delete all"]
                )
                print(f"  delete all is {ratio:.1f}x faster than the baseline (same run, wall)")
    print(f"\nload average at end: {retrieval_speed.load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
