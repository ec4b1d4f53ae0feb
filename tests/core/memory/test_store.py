"""The store's life cycle through the engine: revisions, tombstones, index sync, merges, limits."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlmodel import SQLModel

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.memory import fts
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.errors import MemoryLimitReached, MemoryNotFound
from etos_desktop.core.storage import migrations
from etos_desktop.core.text.checks import MemoryEmpty, MemorySecret, MemoryTooLong
from etos_desktop.core.text.segmentation import index_text
from tests.helpers.embedders import HashEmbedder


def _fts_body(engine: MemoryEngine, memory_id: int) -> str | None:
    return engine._db.call(lambda s: fts.body_of(s, memory_id))


def _vector_keys(engine: MemoryEngine, memory_id: int) -> list[tuple[str, int]]:
    sql = "SELECT embedder_key, chunk_no FROM memory_vector WHERE memory_id = ? ORDER BY 1, 2"
    return engine._db.call(
        lambda s: [tuple(r) for r in s.connection().exec_driver_sql(sql, (memory_id,))]
    )


def test_migration_v2_creates_tables_matching_the_models(tmp_path: Path) -> None:
    engine = MemoryEngine.open(tmp_path / "m.db")
    engine.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    assert migrations.schema_version(conn) == migrations.LATEST_VERSION >= 2
    for name in ("memory", "memory_revision", "memory_vector"):
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
        assert columns == set(SQLModel.metadata.tables[name].columns.keys())
    kinds = dict(conn.execute("SELECT name, type FROM sqlite_master"))
    assert kinds["memory_fts"] == "table"
    assert (
        "AUTOINCREMENT"
        in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory'").fetchone()[0]
    )
    conn.close()


def test_migrating_a_v1_database_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrations.migrate(conn, None, now=FakeClock().now(), migrations=migrations.MIGRATIONS[:1])
    conn.execute(
        "INSERT INTO conversation (title, created_at, updated_at) VALUES ('hi', '2026-01-01', "
        "'2026-01-01')"
    )
    conn.close()
    engine = MemoryEngine.open(path)
    assert engine.save("I like tea").id == 1
    engine.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT title FROM conversation").fetchone() == ("hi",)
    conn.close()
    assert list((tmp_path / "backups").glob("etos-before-v2-*.db"))


def test_create_records_a_revision_and_indexes_text(engine: MemoryEngine) -> None:
    memory_id = engine.save("我对花生过敏", kind="fact", tags=["health"], trigger_context="food").id
    memory = engine.get(memory_id)
    assert memory is not None
    assert memory.content == "我对花生过敏"
    assert memory.tags == ("health",)
    assert _fts_body(engine, memory_id) == index_text("我对花生过敏 health food")
    assert _vector_keys(engine, memory_id) == [("hash:64", 0)]
    [revision] = engine.history(memory_id)
    assert revision.action == "create"
    assert revision.actor == "user"
    assert revision.before is None
    assert revision.after is not None
    assert revision.after["content"] == "我对花生过敏"


@pytest.mark.parametrize(
    ("source", "actor"),
    [
        ("assistant_action", "assistant"),
        ("user_statement", "user"),  # /remember and Remember…: the user's own words
        ("manual", "user"),
        ("imported", "import"),
        ("consolidation", "consolidation"),
    ],
)
def test_source_decides_the_default_actor(engine: MemoryEngine, source: str, actor: str) -> None:
    memory_id = engine.save("The user likes jazz", source=source).id
    assert engine.history(memory_id)[0].actor == actor


def test_edit_reembeds_reindexes_and_drops_other_embedders_vectors(
    engine: MemoryEngine, clock: FakeClock
) -> None:
    memory_id = engine.save("I drink coffee every morning").id
    engine.set_embedder(HashEmbedder(key="other:64"))
    engine.reembed()
    engine.set_embedder(HashEmbedder())
    assert _vector_keys(engine, memory_id) == [("hash:64", 0), ("other:64", 0)]
    clock.advance(minutes=1)
    edited = engine.edit(memory_id, "I drink green tea every morning", importance=0.9)
    assert edited.content == "I drink green tea every morning"
    assert edited.importance == 0.9
    assert edited.updated_at == clock.now()
    assert _vector_keys(engine, memory_id) == [("hash:64", 0)]
    assert "green" in (_fts_body(engine, memory_id) or "")
    assert "coffe" not in (_fts_body(engine, memory_id) or "")
    actions = [r.action for r in engine.history(memory_id)]
    assert actions == ["create", "edit"]
    revision = engine.history(memory_id)[-1]
    assert revision.before is not None
    assert revision.after is not None
    assert revision.before["content"] == "I drink coffee every morning"
    assert revision.after["content"] == "I drink green tea every morning"
    assert [h.id for h in engine.search("green tea", mode="keyword")] == [memory_id]
    assert engine.search("coffee", mode="keyword") == []


def test_edit_without_change_records_nothing(engine: MemoryEngine) -> None:
    memory_id = engine.save("I like tea").id
    engine.edit(memory_id, "I like tea")
    engine.edit(memory_id, tags=[])
    assert [r.action for r in engine.history(memory_id)] == ["create"]


def test_edit_checks_the_new_text(engine: MemoryEngine) -> None:
    memory_id = engine.save("I like tea").id
    with pytest.raises(MemorySecret):
        engine.edit(memory_id, "my password is hunter22")
    with pytest.raises(MemoryNotFound):
        engine.edit(999, "x")
    with pytest.raises(InvalidInput):
        engine.edit(memory_id, kind="gossip")
    assert engine.get(memory_id).content == "I like tea"  # type: ignore[union-attr]


def test_archive_keeps_everything_hides_it_and_restore_undoes_it(engine: MemoryEngine) -> None:
    memory_id = engine.save("I live in Hangzhou").id
    assert [h.id for h in engine.search("Hangzhou")] == [memory_id]
    archived = engine.archive(memory_id)
    assert archived.archived_at is not None
    assert engine.count_active() == 0
    assert engine.search("Hangzhou") == []
    assert engine.search("Hangzhou", mode="vector", apply_floor=False) == []
    assert engine.search("Hangzhou", mode="keyword", apply_floor=False) == []
    assert _fts_body(engine, memory_id) is not None  # text and vectors kept
    assert _vector_keys(engine, memory_id) == [("hash:64", 0)]
    engine.archive(memory_id)  # no-op, no second revision
    restored = engine.restore(memory_id)
    assert restored.archived_at is None
    assert [h.id for h in engine.search("Hangzhou")] == [memory_id]
    assert [r.action for r in engine.history(memory_id)] == ["create", "archive", "restore"]


def _secure_delete_off(dbapi_connection: Any, _record: Any) -> None:
    # Before the app's own pragmas: the default of SQLite builds without SECURE_DELETE (the
    # Windows and macOS ones). This machine's build has it on, which hid a missing pragma.
    dbapi_connection.execute("PRAGMA secure_delete = OFF")


def test_delete_is_real_leaves_a_tombstone_and_can_be_undone(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    event.listen(engine._db.engine, "connect", _secure_delete_off, insert=True)
    keep = engine.save("I like tea").id
    memory_id = engine.save("zebracorn lives in the garden").id
    engine.edit(memory_id, "zebracorn lives in the old garden")
    files = [Path(f"{tmp_path / 'memory.db'}{suffix}") for suffix in ("", "-wal")]
    assert any(b"zebracorn" in p.read_bytes() for p in files if p.exists())
    deleted = engine.delete(memory_id)
    assert engine.get(memory_id) is None
    assert engine.search("zebracorn", mode="keyword", apply_floor=False) == []
    assert _fts_body(engine, memory_id) is None
    assert _vector_keys(engine, memory_id) == []
    [tombstone] = engine.history(memory_id)
    assert (tombstone.action, tombstone.before, tombstone.after) == ("delete", None, None)
    # the text is gone from the file, the WAL, the revisions and the FTS segments
    for path in files:
        if path.exists():
            assert b"zebracorn" not in path.read_bytes()
    with pytest.raises(MemoryNotFound):
        engine.archive(memory_id)
    # the ids are never reused
    assert engine.save("I like coffee").id > memory_id

    restored = engine.undo_delete(deleted)
    assert restored.content == "zebracorn lives in the old garden"
    assert [h.id for h in engine.search("zebracorn", mode="keyword")] == [memory_id]
    assert engine.search("zebracorn old garden", mode="vector")[0].id == memory_id
    assert [r.action for r in engine.history(memory_id)] == ["create", "edit", "undelete"]
    with pytest.raises(InvalidInput):
        engine.undo_delete(deleted)
    assert engine.get(keep) is not None


def test_exact_duplicate_takes_the_new_wording(engine: MemoryEngine, clock: FakeClock) -> None:
    first = engine.save("I use pnpm for JavaScript projects", kind="preference").id
    clock.advance(days=3)
    result = engine.save("i use PNPM for javascript projects!", tags=["js"])
    assert result.merged
    assert result.id == first
    memory = engine.get(first)
    assert memory is not None
    assert memory.content == "i use PNPM for javascript projects!"
    assert memory.kind == "preference"
    assert memory.tags == ("js",)
    assert memory.valid_from == clock.now()
    assert engine.count_active() == 1
    merge = engine.history(first)[-1]
    assert merge.action == "merge"
    assert merge.before is not None
    assert merge.before["content"] == "I use pnpm for JavaScript projects"


def test_vector_near_duplicate_merges(tmp_path: Path, clock: FakeClock) -> None:
    # The hash embedder ignores word order, so a reordered sentence is a cosine-1 duplicate
    # without being a normalised-text duplicate.
    with MemoryEngine.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=clock) as engine:
        first = engine.save("tea green I like").id
        result = engine.save("I like green tea")
        assert result == engine.save("I like green tea")
        assert result.merged
        assert result.id == first
        assert engine.get(first).content == "I like green tea"  # type: ignore[union-attr]
    with MemoryEngine.open(tmp_path / "lex.db", clock=clock) as lexical:
        lexical.save("tea green I like")
        assert not lexical.save("I like green tea").merged


def test_archived_memory_is_not_a_duplicate_target(engine: MemoryEngine) -> None:
    first = engine.save("I like tea").id
    engine.archive(first)
    assert engine.save("I like tea").id != first


def test_bulk_skips_merging_and_limits(tmp_path: Path, clock: FakeClock) -> None:
    with MemoryEngine.open(
        tmp_path / "m.db", clock=clock, max_active=2, max_content_chars=10
    ) as engine:
        a = engine.save("same text", bulk=True).id
        b = engine.save("same text", bulk=True).id
        c = engine.save("a text that is longer than ten characters", bulk=True).id
        assert len({a, b, c}) == 3
        assert engine.count_active() == 3


def test_limits_raise_clear_errors(tmp_path: Path, clock: FakeClock) -> None:
    with MemoryEngine.open(
        tmp_path / "m.db", clock=clock, max_active=2, max_content_chars=20
    ) as engine:
        with pytest.raises(MemoryTooLong) as too_long:
            engine.save("x" * 21)
        assert too_long.value.params["limit"] == 20
        with pytest.raises(MemoryEmpty):
            engine.save("   ")
        with pytest.raises(MemorySecret) as secret:
            engine.save("sk-abcdefghijklmnop1")
        assert secret.value.params["reason"] == "api_key"
        first = engine.save("one").id
        engine.save("two")
        with pytest.raises(MemoryLimitReached) as limit:
            engine.save("three")
        assert limit.value.code == "memory_limit"
        assert limit.value.params["limit"] == 2
        # a duplicate is a merge, not a new memory, so it is accepted at the limit
        assert engine.save("One.").id == first
        # superseding replaces an active memory: the count does not grow
        engine.supersede(first, "uno")
        assert engine.count_active() == 2
        with pytest.raises(MemoryLimitReached):
            engine.restore(first)
    with MemoryEngine.open(tmp_path / "x.db") as engine, pytest.raises(InvalidInput):
        engine.save("x", importance=2.0)


def test_invalid_fields_are_refused(engine: MemoryEngine) -> None:
    with pytest.raises(InvalidInput) as kind:
        engine.save("x", kind="gossip")
    assert kind.value.params == {"field": "kind"}
    with pytest.raises(InvalidInput):
        engine.save("x", source="rumour")
    with pytest.raises(InvalidInput):
        engine.save("x", confidence=-0.1)


def test_supersede_ends_the_old_memory_and_restore_brings_it_back(
    engine: MemoryEngine, clock: FakeClock
) -> None:
    old = engine.save("I drink coffee", kind="preference", importance=0.7, tags=["drink"]).id
    clock.advance(days=10)
    new = engine.supersede(old, "I quit coffee and drink tea now")
    old_memory, new_memory = engine.get(old), engine.get(new)
    assert old_memory is not None
    assert new_memory is not None
    assert old_memory.valid_until == clock.now()
    assert old_memory.archived_at == clock.now()
    assert old_memory.superseded_by == new
    assert (new_memory.kind, new_memory.importance, new_memory.tags) == (
        "preference",
        0.7,
        ("drink",),
    )
    assert [r.action for r in engine.history(old)] == ["create", "supersede"]
    assert [h.id for h in engine.search("coffee", apply_floor=False)] == [new]
    restored = engine.restore(old)
    assert (restored.valid_until, restored.archived_at, restored.superseded_by) == (
        None,
        None,
        None,
    )
    assert {h.id for h in engine.search("coffee")} == {old, new}
    with pytest.raises(MemoryNotFound):
        engine.supersede(999, "x")


def test_add_with_supersedes_and_undo_of_the_new_one(engine: MemoryEngine) -> None:
    old = engine.save("My manager is Alice").id
    result = engine.save("My manager is Bob", supersedes=old)
    assert result.superseded == old
    # Undo of "save and notify": delete the new one, restore what it superseded.
    engine.restore(old)
    engine.delete(result.id)
    assert [h.id for h in engine.search("manager")] == [old]


def test_deleting_a_successor_unlinks_and_undo_relinks(engine: MemoryEngine) -> None:
    old = engine.save("My manager is Alice").id
    new = engine.supersede(old, "My manager is Bob")
    deleted = engine.delete(new)
    assert engine.get(old).superseded_by is None  # type: ignore[union-attr]
    engine.undo_delete(deleted)
    assert engine.get(old).superseded_by == new  # type: ignore[union-attr]


def test_expired_memories_are_inactive(engine: MemoryEngine, clock: FakeClock) -> None:
    memory_id = engine.save(
        "I am in Tokyo this week", valid_until=clock.now() + timedelta(days=7)
    ).id
    assert engine.count_active() == 1
    assert [h.id for h in engine.search("Tokyo")] == [memory_id]
    clock.advance(days=7)
    assert engine.count_active() == 0
    assert engine.search("Tokyo", apply_floor=False) == []
    assert engine.search("Tokyo", mode="vector", apply_floor=False) == []
    assert engine.memories() == []
    assert [m.id for m in engine.memories(include_inactive=True)] == [memory_id]
    engine.restore(memory_id)
    assert engine.count_active() == 1


def test_mark_accessed_counts_without_a_revision(engine: MemoryEngine, clock: FakeClock) -> None:
    memory_id = engine.save("I like tea").id
    engine.mark_accessed([memory_id, memory_id, 999])
    memory = engine.get(memory_id)
    assert memory is not None
    assert (memory.access_count, memory.last_accessed_at) == (1, clock.now())
    assert len(engine.history(memory_id)) == 1


def test_add_many_loads_dated_drafts_in_batches(engine: MemoryEngine, clock: FakeClock) -> None:
    when = clock.now() - timedelta(days=30)
    seen: list[tuple[int, int]] = []
    ids = engine.add_many(
        ["one", {"text": "two", "created_at": when, "tags": ["x"]}, "two", "three"],
        batch_size=2,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert len(set(ids)) == 4
    assert seen == [(2, 4), (4, 4)]
    two = engine.get(ids[1])
    assert two is not None
    assert (two.created_at, two.valid_from, two.tags) == (when, when, ("x",))
    assert engine.history(ids[1])[0].actor == "import"
    with pytest.raises(MemorySecret):
        engine.add_many(["password: hunter22"])


def test_engine_refuses_to_run_on_the_db_thread(engine: MemoryEngine) -> None:
    with pytest.raises(RuntimeError):
        engine._db.call_raw(engine.count_active)


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def test_thousands_of_memories_are_deleted_at_once_and_undone(
    tmp_path: Path, clock: FakeClock
) -> None:
    # Issue 9, defect 1: an FTS "optimize" per memory inside one transaction made SQLite report
    # "database disk image is malformed" after about a thousand of them, and rolled back.
    # Three thousand is three times that (10,000 took 10-13 s of every test run).
    COUNT = 3_000  # noqa: N806
    places = ("Hangzhou", "Berlin", "Lyon", "Osaka", "Porto", "Quito", "Tartu")
    things = ("green tea", "pnpm", "the cello", "rock climbing", "sourdough", "Rust", "chess")
    texts = [
        f"Note {i}: the user mentioned {things[i % 7]} while talking about {places[i % 5]}"
        for i in range(COUNT)
    ]
    path = tmp_path / "big.db"
    with MemoryEngine.open(path, embedder=HashEmbedder(32), clock=clock) as engine:
        ids = engine.add_many(texts, batch_size=1000)
        deleted = engine.delete_many(ids)
        assert engine.count_active() == 0
        assert engine.search("sourdough Osaka", mode="keyword", apply_floor=False) == []
        assert (
            engine._db.call(
                lambda s: s.connection().exec_driver_sql("SELECT count(*) FROM memory_fts").scalar()
            )
            == 0
        )
        assert [r.action for r in engine.history(ids[2345])] == ["delete"]
        assert _integrity(path) == "ok"

        restored = engine.undo_delete_many(deleted)
        assert [m.id for m in restored] == ids
        assert engine.count_active() == COUNT
        assert engine.get(ids[2345]).content == texts[2345]  # type: ignore[union-attr]
        assert [r.action for r in engine.history(ids[2345])] == ["create", "undelete"]
        hits = engine.search("Note 2345 sourdough", mode="keyword", apply_floor=False, k=3)
        assert ids[2345] in [h.id for h in hits]
        assert engine.embedding_status() == (COUNT, COUNT)
        assert _vector_keys(engine, ids[2345]) == [("hash:32", 0)]
    assert _integrity(path) == "ok"
