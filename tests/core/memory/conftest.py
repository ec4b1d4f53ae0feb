"""Fixtures for the memory engine tests: real engines on temporary files, a fake clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from tests.helpers.embedders import HashEmbedder


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def engine(tmp_path: Path, clock: FakeClock, embedder: HashEmbedder) -> Iterator[MemoryEngine]:
    eng = MemoryEngine.open(tmp_path / "memory.db", embedder=embedder, clock=clock)
    yield eng
    eng.close()


@pytest.fixture
def lexical(tmp_path: Path, clock: FakeClock) -> Iterator[MemoryEngine]:
    eng = MemoryEngine.open(tmp_path / "lexical.db", embedder=None, clock=clock)
    yield eng
    eng.close()
