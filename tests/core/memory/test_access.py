"""MemoryAccess: the engine's calls off the event loop, and what it adds for the UI."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from etos_desktop.core.changes import MemoriesChanged, MemoryChange
from etos_desktop.core.errors import EtosError
from etos_desktop.core.memory.access import (
    EmbedderInfo,
    EmbeddingState,
    MemoryAccess,
    describe_embedder,
)
from etos_desktop.core.memory.engine import MemoryEngine
from tests.helpers.embedders import HashEmbedder


@pytest.fixture
def access(engine: MemoryEngine) -> Iterator[MemoryAccess]:
    acc = MemoryAccess(engine)
    yield acc
    acc.close()


class Keyed(HashEmbedder):
    def __init__(self, key: str, dimension: int, model: str | None = None) -> None:
        super().__init__(dimension, key)
        if model is not None:
            self.model = model


@pytest.mark.parametrize(
    ("embedder", "info"),
    [
        (None, None),
        (Keyed("use-m3:512", 512), EmbedderInfo("builtin", "use-m3", 512)),
        (
            Keyed(
                "openai:https://api.openai.com/v1:text-embedding-3-small:1536",
                1536,
                "text-embedding-3-small",
            ),
            EmbedderInfo("endpoint", "text-embedding-3-small", 1536, "api.openai.com"),
        ),
        (
            # Colons in the URL and in the model id: the known model id is cut off the end.
            Keyed("openai:http://localhost:11434/v1:bge-m3:latest:1024", 1024, "bge-m3:latest"),
            EmbedderInfo("endpoint", "bge-m3:latest", 1024, "localhost:11434"),
        ),
        (Keyed("hash:64", 64), EmbedderInfo("other", "hash", 64)),
    ],
)
def test_the_embedder_is_described_in_parts(
    embedder: HashEmbedder | None, info: EmbedderInfo | None
) -> None:
    assert describe_embedder(embedder) == info


async def test_embedding_state_counts_what_the_active_embedder_covers(
    access: MemoryAccess, engine: MemoryEngine
) -> None:
    engine.save("Likes jazz")
    engine.set_embedder(Keyed("use-m3:512", 512))
    state = await access.embedding_state()
    assert state == EmbeddingState(EmbedderInfo("builtin", "use-m3", 512), 0, 1)
    engine.set_embedder(None)
    assert await access.embedding_state() == EmbeddingState(None, 0, 1)


@pytest.mark.logs(r"^ERROR etos_desktop\.core\.changes: a subscriber to MemoriesChanged failed$")
async def test_a_save_that_supersedes_is_told_with_its_source_and_get_many_reads_by_id(
    access: MemoryAccess,
):
    heard: list[tuple[int, int | None, str]] = []

    def broken(_change: MemoriesChanged) -> None:
        raise RuntimeError("a subscriber failed")

    def superseding(change: MemoriesChanged) -> None:
        if change.superseded:
            heard.append((change.ids[0], change.superseded[0], change.source))

    access.changes.subscribe(broken, MemoriesChanged)
    access.changes.subscribe(superseding, MemoriesChanged)
    old = await access.save("Lives in Berlin")
    assert heard == []
    new = await access.save("Lives in Hamburg", supersedes=old.id, source="user_statement")
    merged = await access.save("Lives in Hamburg", source="consolidation", supersedes=new.id)
    assert heard == [(new.id, old.id, "user_statement"), (merged.id, new.id, "consolidation")]
    found = await access.get_many([new.id, 999, old.id, new.id])
    assert sorted(found) == [old.id, new.id]
    assert found[old.id].superseded_by == new.id


async def test_every_write_is_published_once_it_is_done(access: MemoryAccess) -> None:
    heard: list[MemoriesChanged] = []
    access.changes.subscribe(heard.append, MemoriesChanged)
    a = await access.save("Likes jazz")
    b = await access.save("Drinks green tea", source="assistant_action")
    await access.edit(a.id, text="Likes free jazz")
    await access.archive(a.id)
    await access.restore(a.id, actor="consolidation")
    one = await access.delete(a.id)
    await access.undo_delete(one)
    many = await access.delete_many([a.id, b.id])
    await access.undo_delete_many(many)
    assert [(c.reason, c.ids, c.source) for c in heard] == [
        (MemoryChange.SAVED, (a.id,), "manual"),
        (MemoryChange.SAVED, (b.id,), "assistant_action"),
        (MemoryChange.EDITED, (a.id,), "user"),
        (MemoryChange.ARCHIVED, (a.id,), "user"),
        (MemoryChange.RESTORED, (a.id,), "consolidation"),
        (MemoryChange.DELETED, (a.id,), "user"),
        (MemoryChange.BROUGHT_BACK, (a.id,), "user"),
        (MemoryChange.DELETED, (a.id, b.id), "user"),
        (MemoryChange.BROUGHT_BACK, (a.id, b.id), "user"),
    ]
    # A failed write publishes nothing.
    with pytest.raises(EtosError):
        await access.archive(9999)
    assert len(heard) == 9
