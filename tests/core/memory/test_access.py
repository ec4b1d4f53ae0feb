"""MemoryAccess: the engine's calls off the event loop, and what it adds for the UI."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory import transfer
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


async def test_exports_hold_every_memory_and_run_off_the_loop(
    access: MemoryAccess, engine: MemoryEngine, clock: FakeClock
) -> None:
    threads: list[str] = []
    original = engine.memories

    def recording(**kwargs: object) -> list:
        threads.append(threading.current_thread().name)
        return original(**kwargs)  # type: ignore[arg-type]

    engine.memories = recording  # type: ignore[method-assign]
    first = engine.save("Likes jazz").id
    engine.archive(engine.save("Was learning Rust", "episode").id)
    text, count = await access.export_json(now=clock.now(), app_version="0")
    assert count == 2
    assert next(m["id"] for m in json.loads(text)["memories"]) == first
    markdown, count = await access.export_markdown(
        now=clock.now(), labels=transfer.MarkdownLabels(), tz=clock.now().tzinfo
    )
    assert count == 2
    assert "Likes jazz" in markdown
    assert threads
    assert all(name.startswith("etos-memory") for name in threads)


async def test_an_import_file_is_read_checked_and_previewed(
    access: MemoryAccess, engine: MemoryEngine, clock: FakeClock, tmp_path: Path
) -> None:
    engine.save("Plays the cello")
    path = tmp_path / "in.json"
    path.write_text(
        json.dumps(
            {
                "format": "etos-desktop.memories",
                "version": 1,
                "memories": [{"content": "Plays the cello"}, {"content": "Keeps a diary"}],
            }
        ),
        encoding="utf-8",
    )
    preview = await access.preview_import_file(path, now=clock.now())
    assert [e.content for e in preview.to_add] == ["Keeps a diary"]
    assert len(preview.unchanged) == 1
    result = await access.apply_import(preview)
    assert len(result.added) == 1
    assert sorted(m.content for m in engine.memories()) == ["Keeps a diary", "Plays the cello"]

    with pytest.raises(FileNotFoundError):
        await access.preview_import_file(tmp_path / "missing.json", now=clock.now())


async def test_a_huge_import_file_is_refused_before_it_is_read(
    access: MemoryAccess, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transfer, "MAX_IMPORT_BYTES", 10)
    path = tmp_path / "big.json"
    path.write_text('{"memories": []}', encoding="utf-8")
    with pytest.raises(transfer.ImportInvalid) as caught:
        await access.preview_import_file(path, now=clock.now())
    assert caught.value.params["reason"] == "too_large"
    assert access.max_content_chars == 1000


@pytest.mark.logs(r"^ERROR etos_desktop\.core\.memory\.access: a supersede listener failed$")
async def test_a_save_that_supersedes_is_told_with_its_source_and_get_many_reads_by_id(
    access: MemoryAccess,
):
    heard: list[tuple[int, int | None, str]] = []

    def broken(_result: object, _source: str) -> None:
        raise RuntimeError("a listener failed")

    access.add_supersede_listener(broken)
    access.add_supersede_listener(lambda r, source: heard.append((r.id, r.superseded, source)))
    old = await access.save("Lives in Berlin")
    assert heard == []
    new = await access.save("Lives in Hamburg", supersedes=old.id, source="user_statement")
    merged = await access.save("Lives in Hamburg", source="consolidation", supersedes=new.id)
    assert heard == [(new.id, old.id, "user_statement"), (merged.id, new.id, "consolidation")]
    found = await access.get_many([new.id, 999, old.id, new.id])
    assert sorted(found) == [old.id, new.id]
    assert found[old.id].superseded_by == new.id
