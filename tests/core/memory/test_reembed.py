"""Switching embedders: vectors are never mixed; re-embedding reports progress, cancels, resumes."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy
import numpy.typing
import pytest
from sqlmodel import Session, col, delete, select

from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.storage.tables import MemoryVectorRow
from tests.helpers.embedders import HashEmbedder

TEXTS = [f"memory number {i} about topic{i} and gardening" for i in range(10)]


class NegatedEmbedder(HashEmbedder):
    """Same dimension as the default, opposite vectors: mixing with it would give cosine −1."""

    def __init__(self) -> None:
        super().__init__(64, key="negated:64")

    def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
        return -super().embed(texts)


def test_switching_never_mixes_vectors(engine: MemoryEngine) -> None:
    ids = engine.add_many(TEXTS)
    assert engine.search("gardening topic3", mode="vector")[0].id == ids[3]
    engine.set_embedder(NegatedEmbedder())
    assert engine.embedding_status() == (0, 10)
    assert engine.search("gardening topic3", mode="vector", apply_floor=False) == []
    hybrid = engine.search("gardening topic3")
    assert hybrid[0].id == ids[3]
    assert all("vector" not in h.parts for h in hybrid)  # keyword fallback, old vectors unused
    assert engine.reembed(batch_size=4) == 10
    hits = engine.search("gardening topic3", mode="vector", apply_floor=False, k=10)
    assert hits[0].id == ids[3]
    assert all(h.parts["vector"] >= 0 for h in hits)
    # switching back reuses the first embedder's vectors without re-embedding
    engine.set_embedder(HashEmbedder())
    assert engine.embedding_status() == (10, 10)
    assert engine.reembed() == 0
    assert engine.search("gardening topic3", mode="vector")[0].id == ids[3]


def test_switching_dimension_and_tuning(engine: MemoryEngine) -> None:
    engine.add_many(TEXTS[:3])
    small = HashEmbedder(16)
    engine.set_embedder(small)
    assert engine.tuning.floor == 0.30
    assert engine.reembed() == 3
    engine.search("gardening", mode="vector")
    assert engine.vector_cache_bytes() >= 3 * 16 * 4
    engine.set_embedder(None)
    assert engine.embedder is None
    assert engine.reembed() == 0
    assert engine.embedding_status() == (0, 3)
    assert engine.search("gardening", mode="vector") == []
    assert engine.search("gardening")


def test_reembed_reports_progress_cancels_and_resumes(engine: MemoryEngine) -> None:
    ids = engine.add_many(TEXTS)
    engine.archive(ids[0])  # archived memories get vectors too (restore must find them)
    engine.set_embedder(NegatedEmbedder())
    cancel = threading.Event()
    seen: list[tuple[int, int]] = []
    during: list[set[str]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done:
            # search keeps working: embedded rows by vector, the rest by keyword
            hits = engine.search("memory number gardening", apply_floor=False, k=10)
            during.append({"vector" if "vector" in h.parts else "keyword" for h in hits})
            cancel.set()

    assert engine.reembed(progress, cancel, batch_size=3) == 3
    assert seen == [(0, 10), (3, 10)]
    assert during == [{"vector", "keyword"}]
    assert engine.embedding_status() == (3, 10)
    seen.clear()
    assert engine.reembed(lambda d, t: seen.append((d, t)), batch_size=3) == 7
    assert seen == [(0, 7), (3, 7), (6, 7), (7, 7)]
    assert engine.embedding_status() == (10, 10)
    engine.restore(ids[0])
    assert engine.search("topic0 gardening", mode="vector")[0].id == ids[0]


def test_reembed_stops_when_the_embedder_changes(engine: MemoryEngine) -> None:
    engine.add_many(TEXTS)
    engine.set_embedder(NegatedEmbedder())

    def progress(done: int, total: int) -> None:
        if done:
            engine.set_embedder(HashEmbedder(32))

    assert engine.reembed(progress, batch_size=4) == 4
    assert engine.embedding_status() == (0, 10)  # the new one has nothing yet


def test_reembed_propagates_embedder_failure_and_keeps_progress(engine: MemoryEngine) -> None:
    engine.add_many(TEXTS)

    class Failing(HashEmbedder):
        def __init__(self) -> None:
            super().__init__(64, key="failing:64")
            self.left = 2

        def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
            from etos_desktop.core.errors import RateLimited

            if self.left == 0:
                raise RateLimited("429")
            self.left -= 1
            return super().embed(texts)

    engine.set_embedder(Failing())
    with pytest.raises(Exception, match="429"):
        engine.reembed(batch_size=3)
    assert engine.embedding_status() == (6, 10)


def test_edit_during_a_switch_embeds_with_the_active_embedder(engine: MemoryEngine) -> None:
    [memory_id] = engine.add_many(TEXTS[:1])
    engine.set_embedder(NegatedEmbedder())
    engine.edit(memory_id, "a brand new text about orchids")
    assert engine.embedding_status() == (1, 1)
    engine.set_embedder(HashEmbedder())
    assert engine.embedding_status() == (0, 1)  # the old text's vector was dropped


def test_reembed_adds_the_passages_a_memory_stored_without_them_lacks(
    engine: MemoryEngine,
) -> None:
    text = "We went to Lisbon in May. The food was great. I want to go back next year."
    memory_id = engine.save(text).id

    def drop_passages(session: Session) -> None:
        # a store from before sentence passages: only the whole-text vector
        session.exec(delete(MemoryVectorRow).where(col(MemoryVectorRow.chunk_no) > 0))
        session.commit()

    def chunk_numbers(session: Session) -> list[int]:
        statement = select(MemoryVectorRow.chunk_no).where(MemoryVectorRow.memory_id == memory_id)
        return sorted(session.exec(statement).all())

    engine._call(drop_passages)
    assert engine._call(chunk_numbers) == [0]
    assert engine.reembed() == 1
    assert engine._call(chunk_numbers) == [0, 1, 2, 3]
    assert engine.reembed() == 0
