"""Export and import of memories: the JSON document, Markdown, strict parsing, preview, apply."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy
import pytest
from sqlmodel import select

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.errors import ProviderError
from etos_desktop.core.memory import store, transfer
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.errors import MemoryLimitReached
from etos_desktop.core.memory.records import Memory
from etos_desktop.core.memory.transfer import ImportStale
from etos_desktop.core.storage.tables import MemoryRevisionRow
from etos_desktop.core.transfer.document import (
    FORMAT,
    VERSION,
    ImportInvalid,
    export_document,
    export_json,
    parse_import,
)
from etos_desktop.core.transfer.markdown import MarkdownLabels, export_markdown
from tests.helpers.embedders import HashEmbedder

SECRET = "my key is sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
IMPORTABLE = (
    "content",
    "kind",
    "source",
    "importance",
    "confidence",
    "tags",
    "trigger_context",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_until",
)


def populate(engine: MemoryEngine, clock: FakeClock) -> dict[str, int]:
    """A store with every shape a memory can have."""
    ids = {
        "pnpm": engine.save(
            "I use pnpm for JavaScript projects",
            "preference",
            importance=0.8,
            tags=["tools", "js"],
            trigger_context="installing dependencies",
        ).id,
        "daughter": engine.save("我的女儿叫莉莉，今年五岁", "fact", source="user_statement").id,
    }
    clock.advance(hours=1)
    ids["editor"] = engine.save("Prefers Vim keybindings", "preference", confidence=0.4).id
    ids["old_city"] = engine.save("Lives in Berlin", "fact").id
    clock.advance(days=2)
    ids["new_city"] = engine.supersede(ids["old_city"], "Lives in Shanghai since 2026")
    ids["archived"] = engine.save("Was learning Rust in 2025", "episode").id
    engine.archive(ids["archived"])
    ids["expired"] = engine.save(
        "Is travelling in Japan this week",
        "episode",
        valid_until=clock.now() + timedelta(days=1),
    ).id
    ids["multiline"] = engine.save(
        "Reply in *short* paragraphs.\nUse `code` blocks # always", "instruction"
    ).id
    clock.advance(days=3)  # the trip is over: expired without being archived
    return ids


def all_memories(engine: MemoryEngine) -> list[Memory]:
    return sorted(engine.memories(include_inactive=True), key=lambda m: m.id)


def roundtrip_file(engine: MemoryEngine, clock: FakeClock) -> str:
    return export_json(all_memories(engine), exported_at=clock.now(), app_version="test")


def revision_count(engine: MemoryEngine) -> int:
    def read(session):
        return len(session.exec(select(MemoryRevisionRow)).all())

    return engine._db.call(read)


@pytest.fixture
def other(tmp_path: Path, clock: FakeClock) -> Iterator[MemoryEngine]:
    eng = MemoryEngine.open(tmp_path / "other.db", embedder=HashEmbedder(), clock=clock)
    yield eng
    eng.close()


def do_import(engine: MemoryEngine, text: str | bytes) -> transfer.MemoryImportResult:
    document = parse_import(text, now=engine._now(), max_content_chars=engine.max_content_chars)
    return engine.import_memories(engine.preview_import(document))


# -- export ---------------------------------------------------------------------------------


def test_export_holds_every_memory_with_its_fields(engine: MemoryEngine, clock: FakeClock) -> None:
    ids = populate(engine, clock)
    document = json.loads(roundtrip_file(engine, clock))
    assert document["format"] == FORMAT
    assert document["version"] == VERSION
    records = {r["id"]: r for r in document["memories"]}
    assert set(records) == set(ids.values())
    pnpm = records[ids["pnpm"]]
    assert pnpm["kind"] == "preference"
    assert pnpm["source"] == "manual"
    assert pnpm["importance"] == 0.8
    assert pnpm["tags"] == ["tools", "js"]
    assert pnpm["trigger_context"] == "installing dependencies"
    assert pnpm["archived"] is False
    assert datetime.fromisoformat(pnpm["created_at"]) == engine.get(ids["pnpm"]).created_at
    old = records[ids["old_city"]]
    assert old["archived"] is True
    assert old["superseded_by"] == ids["new_city"]
    assert old["valid_until"] is not None
    assert records[ids["archived"]]["archived"] is True
    assert records[ids["editor"]]["confidence"] == 0.4
    assert "我的女儿叫莉莉" in roundtrip_file(engine, clock)  # readable, not \u-escaped


def test_export_leaves_out_deleted_memories_and_histories(
    engine: MemoryEngine, clock: FakeClock
) -> None:
    keep = engine.save("Likes green tea").id
    gone = engine.save("Secretly dislikes the office coffee").id
    engine.edit(keep, "Likes green tea, no sugar")
    engine.delete(gone)
    text = roundtrip_file(engine, clock)
    assert "office coffee" not in text
    assert "Likes green tea," in text
    assert '"Likes green tea"' not in text  # the earlier wording lives only in the history
    assert [r["id"] for r in json.loads(text)["memories"]] == [keep]
    assert "revision" not in text
    assert "vector" not in text


def test_export_drops_links_to_memories_outside_it(engine: MemoryEngine, clock: FakeClock) -> None:
    old = engine.save("Lives in Berlin").id
    new = engine.supersede(old, "Lives in Shanghai")
    only_old = [m for m in all_memories(engine) if m.id == old]
    record = export_document(only_old, exported_at=clock.now())["memories"][0]
    assert record["superseded_by"] is None
    assert new != old


def test_markdown_groups_by_kind_with_archived_apart(
    engine: MemoryEngine, clock: FakeClock
) -> None:
    ids = populate(engine, clock)
    text = export_markdown(all_memories(engine), exported_at=clock.now())
    assert text.startswith("# Memories\n")
    active_part, archived_part = text.split("## Archived", 1)
    assert active_part.index("## Preferences") < active_part.index("I use pnpm")
    assert active_part.index("## Facts") < active_part.index("我的女儿叫莉莉")
    assert "Lives in Shanghai" in active_part
    assert "Lives in Berlin" in archived_part
    assert f"superseded by #{ids['new_city']}" in archived_part
    assert "Was learning Rust" in archived_part
    assert "Japan" in archived_part
    assert "expired" in archived_part  # ended, not archived
    assert "Lives in Berlin" not in active_part
    # Markdown syntax in a memory is shown, not interpreted; its lines stay in one list item.
    assert r"Reply in \*short\* paragraphs.  " + "\n" + r"  Use \`code\` blocks \# always" in text
    assert "tags: tools, js" in text
    assert "recall when: installing dependencies" in text


def test_markdown_uses_the_given_words(engine: MemoryEngine, clock: FakeClock) -> None:
    engine.save("喜欢喝绿茶", "preference")
    labels = MarkdownLabels(
        title="记忆", exported="导出于 {date}，共 {count} 条", kinds={"preference": "偏好"}
    )
    text = export_markdown(all_memories(engine), exported_at=clock.now(), labels=labels)
    assert text.startswith("# 记忆\n\n导出于 2026-01-01 12:00，共 1 条")
    assert "## 偏好\n\n- 喜欢喝绿茶" in text
    assert "No memories." in export_markdown([], exported_at=clock.now())


# -- round trip -----------------------------------------------------------------------------


def test_round_trip_into_a_fresh_database_gives_the_same_memories(
    engine: MemoryEngine, other: MemoryEngine, clock: FakeClock
) -> None:
    ids = populate(engine, clock)
    text = roundtrip_file(engine, clock)
    document = parse_import(text, now=clock.now(), max_content_chars=1000)
    assert document.invalid == ()
    preview = other.preview_import(document)
    assert len(preview.to_add) == len(ids)
    assert preview.to_update == ()
    assert preview.unchanged == ()
    assert preview.active_before == 0
    assert preview.active_after == engine.count_active()
    result = other.import_memories(preview)
    assert len(result.added) == len(ids)

    before = all_memories(engine)
    after = all_memories(other)
    new_id = dict(zip([m.id for m in before], [m.id for m in after], strict=True))
    for a, b in zip(before, after, strict=True):
        for name in IMPORTABLE:
            assert getattr(a, name) == getattr(b, name), name
        assert (a.archived_at is None) == (b.archived_at is None)
        assert (None if a.superseded_by is None else new_id[a.superseded_by]) == b.superseded_by
    assert other.count_active() == engine.count_active()
    # Imported memories are searchable by meaning at once and say where they came from.
    assert other.embedding_status() == (len(ids), len(ids))
    found = other.search("which package manager for javascript", mode="vector")
    assert found[0].id == new_id[ids["pnpm"]]
    history = other.history(new_id[ids["pnpm"]])
    assert [(r.action, r.actor) for r in history] == [("create", "import")]
    assert history[0].created_at == clock.now()
    # ...and a second round trip is the identity on the file's memories.
    again = json.loads(roundtrip_file(other, clock))["memories"]
    first = json.loads(text)["memories"]
    for a_record, b_record in zip(first, again, strict=True):
        a_record.pop("id"), b_record.pop("id")
        a_record.pop("superseded_by"), b_record.pop("superseded_by")
        a_record.pop("archived_at"), b_record.pop("archived_at")
        assert a_record == b_record


def test_reimporting_an_unchanged_export_changes_nothing(
    engine: MemoryEngine, clock: FakeClock
) -> None:
    ids = populate(engine, clock)
    text = roundtrip_file(engine, clock)
    revisions = revision_count(engine)
    preview = engine.preview_import(parse_import(text, now=clock.now(), max_content_chars=1000))
    assert preview.to_add == ()
    assert preview.to_update == ()
    assert len(preview.unchanged) == len(ids)
    assert {u.matched_by for u in preview.unchanged} == {"id"}
    assert not preview.has_changes
    assert engine.import_memories(preview) == transfer.MemoryImportResult((), ())
    assert revision_count(engine) == revisions


def test_reimport_restores_the_exported_state_by_id(engine: MemoryEngine, clock: FakeClock) -> None:
    ids = populate(engine, clock)
    text = roundtrip_file(engine, clock)
    clock.advance(minutes=5)
    engine.edit(ids["pnpm"], "I use yarn for JavaScript projects", tags=["js"])
    engine.restore(ids["archived"])
    engine.archive(ids["editor"])
    preview = engine.preview_import(parse_import(text, now=clock.now(), max_content_chars=1000))
    changes = {u.memory.id: u.changes for u in preview.to_update}
    assert set(changes) == {ids["pnpm"], ids["archived"], ids["editor"]}
    assert set(changes[ids["pnpm"]]) == {"content", "tags"}
    assert changes[ids["archived"]] == ("archived_at",)
    assert preview.to_add == ()
    result = engine.import_memories(preview)
    assert set(result.updated) == set(changes)
    pnpm = engine.get(ids["pnpm"])
    assert pnpm.content == "I use pnpm for JavaScript projects"
    assert pnpm.tags == ("tools", "js")
    assert engine.get(ids["archived"]).archived_at is not None
    assert engine.get(ids["editor"]).archived_at is None
    # the text changed: the vector follows it
    hit = engine.search("pnpm javascript", mode="vector")
    assert hit[0].id == ids["pnpm"]
    assert [(r.action, r.actor) for r in engine.history(ids["pnpm"])][-1] == ("edit", "import")
    assert [(r.action, r.actor) for r in engine.history(ids["editor"])][-1] == (
        "restore",
        "import",
    )
    assert [(r.action, r.actor) for r in engine.history(ids["archived"])][-1] == (
        "archive",
        "import",
    )


def test_ids_from_another_database_are_not_trusted(
    engine: MemoryEngine, other: MemoryEngine, clock: FakeClock
) -> None:
    mine = engine.save("Drinks oat milk").id
    clock.advance(seconds=1)
    theirs = other.save("Plays the cello").id
    assert mine == theirs  # both databases start at 1
    text = roundtrip_file(other, clock)
    # Same id, different created_at: an unrelated memory, so it is added, not overwritten.
    preview = engine.preview_import(parse_import(text, now=clock.now(), max_content_chars=1000))
    assert [e.content for e in preview.to_add] == ["Plays the cello"]
    engine.import_memories(preview)
    assert engine.get(mine).content == "Drinks oat milk"


def test_entries_without_ids_match_by_content(engine: MemoryEngine, clock: FakeClock) -> None:
    existing = engine.save(
        "Prefers dark mode", "preference", tags=["ui"], trigger_context="themes"
    ).id
    archived = engine.save("Owns a cat").id
    engine.archive(archived)
    text = json.dumps(
        {
            "format": FORMAT,
            "version": 1,
            "memories": [
                # Fields it does not state (kind, tags, trigger) keep their local values.
                {"content": "prefers DARK mode!", "importance": 0.9},
                {"content": "Owns a cat", "archived": True},
                {"content": "Owns a cat"},  # the local one is taken: added as a second copy
                {"content": "Speaks Cantonese"},
            ],
        }
    )
    preview = engine.preview_import(parse_import(text, now=clock.now(), max_content_chars=1000))
    assert [(u.memory.id, u.matched_by, u.changes) for u in preview.to_update] == [
        (existing, "content", ("content", "importance"))
    ]
    assert [u.memory.id for u in preview.unchanged] == [archived]
    assert [e.content for e in preview.to_add] == ["Owns a cat", "Speaks Cantonese"]
    assert [e.source for e in preview.to_add] == ["imported", "imported"]
    engine.import_memories(preview)
    updated = engine.get(existing)
    assert updated.content == "prefers DARK mode!"
    assert (updated.kind, updated.tags, updated.trigger_context) == (
        "preference",
        ("ui",),
        "themes",
    )
    assert updated.importance == 0.9
    assert engine.count_active() == 3


def test_links_to_entries_outside_the_import_are_dropped(
    engine: MemoryEngine, other: MemoryEngine, clock: FakeClock
) -> None:
    old = engine.save("Lives in Berlin").id
    engine.supersede(old, "Lives in Shanghai")
    document = json.loads(roundtrip_file(engine, clock))
    document["memories"][1]["content"] = SECRET  # the successor will be refused
    preview = other.preview_import(
        parse_import(json.dumps(document), now=clock.now(), max_content_chars=1000)
    )
    assert [e.content for e in preview.to_add] == ["Lives in Berlin"]
    other.import_memories(preview)
    (berlin,) = other.memories(include_inactive=True)
    assert berlin.superseded_by is None
    assert berlin.archived_at is not None
    assert berlin.valid_until is not None


# -- refusing files -------------------------------------------------------------------------


def _file(**overrides: object) -> str:
    document: dict[str, object] = {"format": FORMAT, "version": 1, "memories": []}
    document.update(overrides)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not_json"),
        ("{not json", "not_json"),
        ("[" * 100_000 + "]" * 100_000, "not_json"),
        ('{"format": "etos-desktop.memories", "version": 1, "memories": [NaN]}', "not_json"),
        ('{"format": "etos-desktop.memories", "format": "x", "version": 1}', "not_json"),
        ("[]", "not_an_export"),
        (json.dumps({"memories": []}), "not_an_export"),
        (_file(format="etos-desktop.conversations"), "not_an_export"),
        (_file(version="1"), "not_an_export"),
        (_file(version=True), "not_an_export"),
        (_file(version=2), "unsupported_version"),
        (_file(memories={"a": 1}), "bad_structure"),
        (_file(exported_at="yesterday"), "bad_structure"),
        (_file(memories=[{"id": 3, "content": "a"}, {"id": 3, "content": "b"}]), "duplicate_id"),
    ],
)
def test_a_corrupt_or_hostile_file_is_refused_and_changes_nothing(
    engine: MemoryEngine, clock: FakeClock, data: str | bytes, reason: str
) -> None:
    engine.save("Keeps a diary")
    revisions = revision_count(engine)
    with pytest.raises(ImportInvalid) as caught:
        do_import(engine, data)
    assert caught.value.code == "memory_import_invalid"
    assert caught.value.params["reason"] == reason
    assert [m.content for m in engine.memories(include_inactive=True)] == ["Keeps a diary"]
    assert revision_count(engine) == revisions


def test_size_and_count_limits(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    monkeypatch.setattr("etos_desktop.core.transfer.document.MAX_IMPORT_ENTRIES", 2)
    with pytest.raises(ImportInvalid) as caught:
        parse_import(
            _file(memories=[{"content": str(i)} for i in range(3)]),
            now=clock.now(),
            max_content_chars=100,
        )
    assert caught.value.params["reason"] == "too_many"
    monkeypatch.setattr("etos_desktop.core.transfer.document.MAX_IMPORT_BYTES", 50)
    with pytest.raises(ImportInvalid) as caught:
        parse_import(
            _file(memories=[{"content": "x" * 40}]), now=clock.now(), max_content_chars=100
        )
    assert caught.value.params["reason"] == "too_large"


def test_unsupported_version_says_which(clock: FakeClock) -> None:
    with pytest.raises(ImportInvalid) as caught:
        parse_import(_file(version=7), now=clock.now(), max_content_chars=100)
    assert caught.value.params == {"reason": "unsupported_version", "version": 7}


def test_bad_entries_are_listed_with_reasons_and_the_rest_is_kept(clock: FakeClock) -> None:
    entries: list[object] = [
        {"content": "Good one", "tags": ["a", " a ", ""], "importance": 1},
        "just a string",
        {"content": SECRET},
        {"content": "y" * 101},
        {"content": "   "},
        {"kind": "fact"},
        {"content": 42},
        {"content": "Bad kind", "kind": "rumour"},
        {"content": "Bad source", "source": "the internet"},
        {"content": "Bad importance", "importance": 1.5},
        {"content": "Bool importance", "importance": True},
        {"content": "Huge confidence", "confidence": 10**400},
        {"content": "Bad tags", "tags": "a,b"},
        {"content": "Too many tags", "tags": [str(i) for i in range(transfer.MAX_TAGS + 1)]},
        {"content": "Secret tag", "tags": ["password: hunter22"]},
        {"content": "Long trigger", "trigger_context": "z" * 101},
        {"content": "Bad date", "created_at": "last Tuesday"},
        {"content": "Bad id", "id": -4},
        {"content": "Bad archived", "archived": "yes"},
        {"content": "Naive date", "created_at": "2025-03-04T05:06:07", "archived": True},
    ]
    document = parse_import(_file(memories=entries), now=clock.now(), max_content_chars=100)
    problems = [(p.index, p.reason, p.field) for p in document.invalid]
    assert problems == [
        (1, "not_an_object", None),
        (2, "secret", "content"),
        (3, "too_long", "content"),
        (4, "empty", "content"),
        (5, "empty", "content"),
        (6, "bad_field", "content"),
        (7, "bad_field", "kind"),
        (8, "bad_field", "source"),
        (9, "bad_field", "importance"),
        (10, "bad_field", "importance"),
        (11, "bad_field", "confidence"),
        (12, "bad_field", "tags"),
        (13, "too_many_tags", "tags"),
        (14, "secret", "tags"),
        (15, "too_long", "trigger_context"),
        (16, "bad_field", "created_at"),
        (17, "bad_field", "id"),
        (18, "bad_field", "archived"),
    ]
    secret = document.invalid[1]
    assert secret.secret == "api_key"
    assert secret.excerpt == ""  # a secret is never repeated
    assert document.invalid[2].excerpt == "y" * 79 + "…"
    good, naive = document.entries
    assert good.tags == ("a",)
    assert good.importance == 1.0
    assert good.source == "imported"
    assert good.created_at == clock.now()
    assert naive.created_at == datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert naive.archived_at == naive.created_at


def test_an_imported_entry_is_stored_without_control_characters(engine: MemoryEngine) -> None:
    """Issue 19: NUL and control characters in an export entry were stored as they were."""
    entry = {
        "content": "Drinks\x00 oolong\x1b tea\x85 in the\r\nmorning\x00 👨\u200d👩\u200d👧 مرحبا",
        "kind": "preference",
        "tags": ["tea\x00", "\x07", "שלום\x9b"],
        "trigger_context": "talking\x00 about drinks\x7f",
    }
    result = do_import(engine, _file(memories=[entry]))
    stored = engine.get(result.added[0])
    assert stored is not None
    assert stored.content == "Drinks oolong tea in the\nmorning 👨\u200d👩\u200d👧 مرحبا"
    assert stored.tags == ("tea", "שלום")
    assert stored.trigger_context == "talking about drinks"


# -- all or nothing -------------------------------------------------------------------------


def test_an_import_over_the_limit_writes_nothing(tmp_path: Path, clock: FakeClock) -> None:
    with MemoryEngine.open(tmp_path / "small.db", clock=clock, max_active=3) as small:
        small.save("one")
        small.save("two")
        text = _file(
            memories=[
                {"content": "three"},
                {"content": "four"},
                {"content": "old", "archived": True},
            ]
        )
        document = parse_import(text, now=clock.now(), max_content_chars=100)
        preview = small.preview_import(document)
        assert preview.over_limit
        assert (preview.active_before, preview.active_after) == (2, 4)
        revisions = revision_count(small)
        with pytest.raises(MemoryLimitReached):
            small.import_memories(preview)
        assert sorted(m.content for m in small.memories(include_inactive=True)) == ["one", "two"]
        assert revision_count(small) == revisions
        assert small.search("four", mode="keyword") == []


def test_a_failure_midway_rolls_everything_back(
    engine: MemoryEngine, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = populate(engine, clock)
    text = roundtrip_file(engine, clock)
    engine.edit(ids["pnpm"], "I use npm")
    before = [(m.id, m.content, m.updated_at) for m in all_memories(engine)]
    revisions = revision_count(engine)
    document = json.loads(text)
    document["memories"].append({"content": "A brand new memory"})
    preview = engine.preview_import(
        parse_import(json.dumps(document), now=clock.now(), max_content_chars=1000)
    )
    assert preview.to_add
    assert preview.to_update

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, "reindex", broken)  # runs after the new rows are inserted
    with pytest.raises(RuntimeError):
        engine.import_memories(preview)
    monkeypatch.undo()
    assert [(m.id, m.content, m.updated_at) for m in all_memories(engine)] == before
    assert revision_count(engine) == revisions
    assert engine.search("brand new", mode="keyword") == []


def test_a_stale_preview_is_refused(engine: MemoryEngine, clock: FakeClock) -> None:
    ids = populate(engine, clock)
    document = json.loads(roundtrip_file(engine, clock))
    document["memories"][0]["content"] = "I use bun for JavaScript projects"
    document["memories"].append({"content": "Another new one"})
    preview = engine.preview_import(
        parse_import(json.dumps(document), now=clock.now(), max_content_chars=1000)
    )
    clock.advance(seconds=1)
    engine.edit(ids["pnpm"], importance=0.1)  # changed after the preview
    count = len(all_memories(engine))
    with pytest.raises(ImportStale) as caught:
        engine.import_memories(preview)
    assert caught.value.code == "memory_import_stale"
    assert len(all_memories(engine)) == count
    # a retrieval is no change: it does not make a preview stale
    preview = engine.preview_import(
        parse_import(json.dumps(document), now=clock.now(), max_content_chars=1000)
    )
    engine.mark_accessed([ids["pnpm"]])
    engine.import_memories(preview)
    assert engine.get(ids["pnpm"]).content == "I use bun for JavaScript projects"


class FailingEmbedder(HashEmbedder):
    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        raise ProviderError("embedding server down")


@pytest.mark.logs(r"embedding failed, memory kept for keyword search only")
def test_an_embedder_failure_keeps_the_import_for_keyword_search(
    tmp_path: Path, clock: FakeClock
) -> None:
    with MemoryEngine.open(tmp_path / "f.db", embedder=FailingEmbedder(), clock=clock) as eng:
        do_import(eng, _file(memories=[{"content": "Collects vinyl records"}]))
        assert eng.embedding_status() == (0, 1)
        assert eng.search("vinyl", mode="keyword")[0].text == "Collects vinyl records"
