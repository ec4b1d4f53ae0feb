"""TransferService: export and import of every layer, off the event loop in the memory workers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.transfer import document
from etos_desktop.core.transfer.markdown import MarkdownLabels
from etos_desktop.core.transfer.service import TransferService
from tests.helpers.embedders import HashEmbedder


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def engine(tmp_path: Path, clock: FakeClock) -> Iterator[MemoryEngine]:
    eng = MemoryEngine.open(tmp_path / "memory.db", embedder=HashEmbedder(), clock=clock)
    yield eng
    eng.close()


@pytest.fixture
def access(engine: MemoryEngine) -> Iterator[MemoryAccess]:
    acc = MemoryAccess(engine)
    yield acc
    acc.close()


@pytest.fixture
def service(access: MemoryAccess) -> TransferService:
    return TransferService(access)


async def test_exports_hold_every_memory_and_run_off_the_loop(
    service: TransferService, engine: MemoryEngine, clock: FakeClock
) -> None:
    threads: list[str] = []
    original = engine.memories

    def recording(**kwargs: object) -> list:
        threads.append(threading.current_thread().name)
        return original(**kwargs)  # type: ignore[arg-type]

    engine.memories = recording  # type: ignore[method-assign]
    first = engine.save("Likes jazz").id
    engine.archive(engine.save("Was learning Rust", "episode").id)
    text, count = await service.export_json(now=clock.now(), app_version="0")
    assert count == 2
    assert next(m["id"] for m in json.loads(text)["memories"]) == first
    markdown, count = await service.export_markdown(
        now=clock.now(), labels=MarkdownLabels(), tz=clock.now().tzinfo
    )
    assert count == 2
    assert "Likes jazz" in markdown
    assert threads
    assert all(name.startswith("etos-memory") for name in threads)


async def test_an_import_file_is_read_checked_and_previewed(
    service: TransferService, engine: MemoryEngine, clock: FakeClock, tmp_path: Path
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
    preview = await service.preview_import_file(path, now=clock.now())
    assert [e.content for e in preview.to_add] == ["Keeps a diary"]
    assert len(preview.unchanged) == 1
    result = await service.apply_import(preview)
    assert len(result.added) == 1
    assert sorted(m.content for m in engine.memories()) == ["Keeps a diary", "Plays the cello"]

    with pytest.raises(FileNotFoundError):
        await service.preview_import_file(tmp_path / "missing.json", now=clock.now())


async def test_a_huge_import_file_is_refused_before_it_is_read(
    service: TransferService,
    access: MemoryAccess,
    clock: FakeClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(document, "MAX_IMPORT_BYTES", 10)
    path = tmp_path / "big.json"
    path.write_text('{"memories": []}', encoding="utf-8")
    with pytest.raises(document.ImportInvalid) as caught:
        await service.preview_import_file(path, now=clock.now())
    assert caught.value.params["reason"] == "too_large"
    assert access.max_content_chars == 1000
