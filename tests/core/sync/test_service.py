"""Three devices over one sync folder (a local folder and a real WebDAV server on 127.0.0.1)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlmodel import select

from etos_desktop.core.storage.tables import MemoryRow, MemoryVectorRow, RevisionAction
from etos_desktop.core.sync import memories, state
from etos_desktop.core.sync.errors import WrongPassphrase
from tests.core.sync.conftest import SyncDevice, converged

Three = tuple[SyncDevice, SyncDevice, SyncDevice]


def _all(*devices: SyncDevice) -> None:
    for device in devices:
        device.sync()


def test_a_memory_reaches_every_device(three: Three) -> None:
    desktop, laptop, tablet = three
    memory = desktop.engine.save("I use pnpm for JavaScript projects", "preference")
    report = desktop.sync()
    assert report.published == "1.update"
    assert report.exported == 1
    for device in (laptop, tablet):
        got = device.sync()
        assert got.inserted == 1
        assert got.skipped == []
    gid = desktop.gid(memory.id)
    for device in (laptop, tablet):
        local_id = device.id_of(gid)
        assert local_id is not None
        copy = device.engine.get(local_id)
        assert copy is not None
        assert copy.content == "I use pnpm for JavaScript projects"
        assert copy.kind == "preference"
        # Found by keyword at once; the vector comes from this device's own embedder.
        assert [h.id for h in device.engine.search("pnpm", mode="keyword", k=3)] == [local_id]
        assert device.engine.embedding_status()[0] == 0
        device.engine.reembed()
        assert device.engine.embedding_status()[0] == 1
    assert converged(desktop, laptop, tablet)
    # Nothing new: a second pass publishes nothing and changes nothing.
    again = desktop.sync()
    assert again.published is None
    assert again.exported == 0


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_offline_edits_converge_in_any_order_even_applied_twice(
    make_device: Callable[..., SyncDevice], order: tuple[int, ...]
) -> None:
    devices = [make_device("desktop"), make_device("laptop"), make_device("tablet")]
    desktop, laptop, _tablet = devices
    shared = desktop.engine.save("We are planning a trip to Kyoto", "episode").id
    _all(*devices)
    shared_gid = desktop.gid(shared)
    # Offline: both change different things and add their own memories.
    desktop.engine.edit(shared, "We are planning a trip to Kyoto in April")
    desktop.engine.save("My sister is called Mei", "fact")
    laptop_id = laptop.id_of(shared_gid)
    assert laptop_id is not None
    laptop.engine.edit(laptop_id, tags=["travel"])
    laptop.engine.save("I am allergic to peanuts", "fact")
    for index in order:
        devices[index].sync()
    _all(*devices)
    # Every device forgets what it applied and applies every file again.
    for device in devices:
        sync = device.db.call(state.load)
        sync.applied = {}
        device.db.call(lambda s, sync=sync: (state.save(s, sync), s.commit()))
    _all(*devices)
    assert converged(*devices)
    final = desktop.state()
    assert final[shared_gid]["content"] == "We are planning a trip to Kyoto in April"
    assert final[shared_gid]["tags"] == ["travel"]
    assert sorted(v["content"] for v in final.values()) == [
        "I am allergic to peanuts",
        "My sister is called Mei",
        "We are planning a trip to Kyoto in April",
    ]
    # Applied twice, but recorded once: the history holds one edit per remote change.
    edits = [r for r in desktop.history(shared_gid) if r.action == RevisionAction.EDIT]
    assert len(edits) == 2


def test_edit_on_one_device_and_archive_on_another_both_hold(three: Three) -> None:
    desktop, laptop, tablet = three
    memory_id = desktop.engine.save("I work at Acme as a designer", "fact").id
    _all(*three)
    gid = desktop.gid(memory_id)
    desktop.engine.edit(memory_id, "I work at Acme as a lead designer")
    laptop_id = laptop.id_of(gid)
    assert laptop_id is not None
    laptop.engine.archive(laptop_id)
    _all(laptop, desktop, tablet, laptop)
    assert converged(*three)
    final = tablet.state()[gid]
    assert final["content"] == "I work at Acme as a lead designer"
    assert final["archived"] is True
    actions = [r.action for r in desktop.history(gid)]
    assert RevisionAction.ARCHIVE in actions
    assert desktop.history(gid)[-1].actor == "sync:laptop"


def test_a_delete_is_a_tombstone_that_stays_deleted(three: Three) -> None:
    desktop, laptop, tablet = three
    memory_id = desktop.engine.save("My old phone number is in my notes", "fact").id
    keep_id = desktop.engine.save("I like green tea", "preference").id
    _all(*three)
    gid, keep_gid = desktop.gid(memory_id), desktop.gid(keep_id)
    # Offline: the laptop edits the memory the desktop deletes.
    desktop.engine.delete(memory_id)
    laptop_id = laptop.id_of(gid)
    assert laptop_id is not None
    laptop.engine.edit(laptop_id, "My old phone number is in my paper notes")
    _all(laptop, desktop, tablet, laptop, desktop, tablet)
    for device in three:
        assert device.id_of(gid) is None
        assert set(device.state()) == {keep_gid}
    # More passes, in any order, never bring it back.
    _all(tablet, laptop, desktop, tablet)
    assert all(device.id_of(gid) is None for device in three)
    # The texts left the document state too (the files keep them until compaction).
    for device in three:
        saved = device.db.call(state.load).doc
        assert b"phone number" not in saved


def test_a_same_field_conflict_keeps_the_other_value_in_history(three: Three) -> None:
    desktop, laptop, _tablet = three
    memory_id = desktop.engine.save("My favourite editor is Vim", "preference").id
    _all(*three)
    gid = desktop.gid(memory_id)
    desktop.engine.edit(memory_id, "My favourite editor is Helix")
    laptop_id = laptop.id_of(gid)
    assert laptop_id is not None
    laptop.engine.edit(laptop_id, "My favourite editor is Emacs")
    desktop.sync()
    laptop.sync()
    _all(*three)
    assert converged(*three)
    kept = desktop.state()[gid]["content"]
    assert kept in {"My favourite editor is Helix", "My favourite editor is Emacs"}
    other, loser = (
        ("My favourite editor is Emacs", "laptop")
        if kept.endswith("Helix")
        else ("My favourite editor is Helix", "desktop")
    )
    for device in three:
        conflicts = [r for r in device.history(gid) if r.action == RevisionAction.CONFLICT]
        assert len(conflicts) == 1, device.name
        assert conflicts[0].actor == f"sync:{loser}"
        assert other in (conflicts[0].after_json or "")
    # Recorded once: more passes add no second conflict revision.
    _all(*three)
    assert all(
        len([r for r in d.history(gid) if r.action == RevisionAction.CONFLICT]) == 1 for d in three
    )


def test_a_remote_edit_drops_the_stale_vectors(three: Three) -> None:
    desktop, laptop, _tablet = three
    memory_id = desktop.engine.save("I run every Sunday morning", "fact").id
    _all(desktop, laptop)
    gid = desktop.gid(memory_id)
    laptop.engine.reembed()
    laptop_id = laptop.id_of(gid)
    changed: list[int] = []
    laptop.service._on_memories_changed = changed.extend
    desktop.engine.edit(memory_id, "I swim every Sunday morning")
    _all(desktop, laptop)
    assert changed == [laptop_id]
    vectors = laptop.db.call(
        lambda s: s.exec(
            select(MemoryVectorRow).where(MemoryVectorRow.memory_id == laptop_id)
        ).all()
    )
    assert vectors == []
    assert [h.id for h in laptop.engine.search("swim", mode="keyword", k=2)] == [laptop_id]


def test_a_wrong_passphrase_stops_before_anything_is_written(
    make_device: Callable[..., SyncDevice], tmp_path: Path
) -> None:
    desktop = make_device("desktop")
    desktop.engine.save("I keep bees", "fact")
    desktop.sync()
    intruder = make_device("intruder", passphrase="not the passphrase")
    intruder.engine.save("Something of the intruder's", "fact")
    with pytest.raises(WrongPassphrase):
        intruder.sync()
    assert desktop.sync().devices == []
    assert [m.content for m in intruder.engine.memories()] == ["Something of the intruder's"]


def test_sync_files_hold_no_plaintext(three: Three, tmp_path: Path) -> None:
    desktop, laptop, tablet = three
    texts = [
        "Mein Passwortmanager ist KeePassXC",
        "我住在杭州西湖边",
        "Call Dr. Okafor on Tuesdays",
    ]
    for text in texts:
        desktop.engine.save(text, "fact")
    laptop.engine.save("Laptop-only note about Zanzibar", "fact")
    _all(desktop, laptop, tablet, desktop)
    blobs = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "data-" not in str(p)]
    update_files = [p for p in tmp_path.rglob("*.update") if "data-" not in str(p)]
    assert len(update_files) >= 2
    needles = [*texts, "Zanzibar", "KeePassXC", "杭州", "desktop", "laptop", "fact"]
    for blob in blobs:
        for needle in needles:
            assert needle.encode("utf-8") not in blob
            assert needle.encode("utf-16-le") not in blob


def test_the_clock_of_each_device_is_its_own(three: Three) -> None:
    desktop, laptop, _tablet = three
    laptop.clock.advance(days=3)
    memory_id = laptop.engine.save("I moved to Porto", "fact").id
    _all(laptop, desktop)
    gid = laptop.gid(memory_id)
    assert desktop.state()[gid]["updated_at"] == laptop.state()[gid]["updated_at"]
    row = desktop.db.call(lambda s: s.exec(select(MemoryRow).where(MemoryRow.gid == gid)).one())
    assert row.created_at == laptop.clock.now()


def test_a_pass_cut_short_after_publishing_loses_nothing(
    three: Three, monkeypatch: pytest.MonkeyPatch
) -> None:
    desktop, laptop, tablet = three
    desktop.engine.save("I play the cello", "fact")
    _all(*three)
    memory_id = desktop.engine.save("I started learning Portuguese", "fact").id
    laptop.engine.save("My flat is on the fourth floor", "fact")
    laptop.sync()

    def killed(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    # Published, then stopped before the commit: SQLite and the bookkeeping stay as they were.
    monkeypatch.setattr(memories, "apply", killed)
    with pytest.raises(KeyboardInterrupt):
        desktop.sync()
    monkeypatch.undo()
    assert desktop.db.call(state.load).own_seq == 1
    desktop.engine.edit(memory_id, "I started learning Brazilian Portuguese")
    report = desktop.sync()
    assert report.published == "3.update"
    _all(laptop, tablet, desktop)
    assert converged(*three)
    assert {v["content"] for v in tablet.state().values()} == {
        "I play the cello",
        "I started learning Brazilian Portuguese",
        "My flat is on the fourth floor",
    }
