"""The engine used as a plain script would: the README example, threads, reopening."""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.records import MemoryDraft
from etos_desktop.core.memory.search import Hit
from tests.helpers.embedders import HashEmbedder

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_example_runs(tmp_path: Path) -> None:
    section = README.read_text(encoding="utf-8").split("## Memory engine API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    script = code.group(1).replace("/tmp/mem.db", str(tmp_path / "mem.db"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(script, "README.md", "exec"), {})
    assert "pnpm" in out.getvalue()


def test_script_like_use(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2025, 6, 1, tzinfo=UTC))
    path = tmp_path / "bench.db"
    engine = MemoryEngine.open(path, embedder=HashEmbedder(1024), clock=clock)
    ids = engine.add_many(
        [
            MemoryDraft("I prefer dark mode in every editor", kind="preference"),
            MemoryDraft("我的女儿叫莉莉", created_at=datetime(2024, 1, 1, tzinfo=UTC)),
            *(f"distractor {i} about weather{i}" for i in range(50)),
        ]
    )
    assert len(ids) == 52
    hits = engine.search("dark mode editor", k=3)
    assert isinstance(hits[0], Hit)
    assert hits[0].id == ids[0]
    assert hits[0].kind == "preference"
    assert engine.search("莉莉", mode="keyword")[0].created_at == datetime(2024, 1, 1, tzinfo=UTC)
    assert engine.search("quantum chromodynamics lecture notes") == []
    engine.close()
    # reopening the file finds everything again (the index is rebuilt from rows)
    with MemoryEngine.open(path, embedder=HashEmbedder(1024), clock=clock) as again:
        assert again.count_active() == 52
        assert again.search("dark mode editor", mode="vector")[0].id == ids[0]


def test_engine_is_safe_from_worker_threads(engine: MemoryEngine) -> None:
    def worker(n: int) -> list[int]:
        found = []
        for i in range(8):
            memory_id = engine.save(f"worker{n} note{i} about gardening").id
            hits = engine.search(f"worker{n} note{i} gardening", k=3)
            found.append(int(hits[0].id == memory_id))
        return found

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(worker, range(4)))
    assert engine.count_active() == 32
    assert all(all(r) for r in results)
    assert len(engine.memories()) == 32


def test_delete_many_is_all_or_nothing_and_undoable(engine):
    from etos_desktop.core.memory.errors import MemoryNotFound

    a = engine.save("I drink oolong tea every morning", "preference").id
    b = engine.save("My sister lives in Chengdu", "fact").id
    with pytest.raises(MemoryNotFound):
        engine.delete_many([a, b, 999_999])
    assert engine.get(a) is not None
    assert engine.get(b) is not None
    before = [engine.get(a), engine.get(b)]

    def changes(memory_id: int) -> list[tuple[object, ...]]:
        return [
            (r.created_at, r.action, r.actor, r.before, r.after) for r in engine.history(memory_id)
        ]

    history = [changes(a), changes(b)]
    snapshots = engine.delete_many([a, b])
    assert [s.row["id"] for s in snapshots] == [a, b]
    assert engine.get(a) is None
    assert engine.get(b) is None
    assert engine.search("tea in the morning", mode="keyword", apply_floor=False) == []
    for snapshot in snapshots:
        engine.undo_delete(snapshot)
    assert engine.get(a).content == "I drink oolong tea every morning"
    assert engine.get(b).content == "My sister lives in Chengdu"
    # Exactly as they were (times, ids, every field), with their history plus the undelete.
    assert [engine.get(a), engine.get(b)] == before
    assert [changes(a)[:-1], changes(b)[:-1]] == history
    assert [engine.history(i)[-1].action for i in (a, b)] == ["undelete", "undelete"]


def test_saved_and_edited_text_is_cleaned(engine: MemoryEngine) -> None:
    """Issue 19: a memory written in Settings (save, edit) kept NUL and control characters."""
    memory_id = engine.save("Drinks\x00 oolong\x1b tea", "preference").id
    assert engine.get(memory_id).content == "Drinks oolong tea"
    engine.edit(memory_id, text="Drinks\x00 green\x9b tea\r\nin the morning")
    assert engine.get(memory_id).content == "Drinks green tea\nin the morning"
    assert engine.search("green", mode="keyword")[0].id == memory_id


def test_a_query_searched_again_is_embedded_once(tmp_path: Path) -> None:
    """Search in several modes, a retry, a regenerated turn: the query's vector is reused."""
    embedder = HashEmbedder(256)
    with MemoryEngine.open(tmp_path / "m.db", embedder=embedder, clock=FakeClock()) as engine:
        engine.save("My sister's greyhound is called Biscotti.", "fact")
        before = embedder.calls
        first = engine.search("What is the greyhound called?", mode="vector", apply_floor=False)
        again = engine.search("What is the greyhound called?", mode="hybrid", apply_floor=False)
        assert embedder.calls == before + 1
        assert [h.id for h in first][:1] == [h.id for h in again][:1] != []
        engine.search("Which dog is it?", mode="vector")
        assert embedder.calls == before + 2
        # Another embedder's vectors are another space: nothing cached is reused.
        other = HashEmbedder(256, key="hash:other")
        engine.set_embedder(other)
        engine.reembed()
        engine.search("What is the greyhound called?", mode="vector")
        assert embedder.calls == before + 2
        assert other.calls >= 2
