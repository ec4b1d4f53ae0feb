"""add_many refuses before writing anything, so a retry after a refusal duplicates nothing."""

from __future__ import annotations

import pytest

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.text.checks import MemoryEmpty, MemorySecret


def test_a_refused_item_in_a_late_batch_writes_nothing(engine: MemoryEngine) -> None:
    items = [f"harmless note number {i}" for i in range(10)] + ["password: hunter22"]
    with pytest.raises(MemorySecret) as refused:
        engine.add_many(items, batch_size=4)
    assert engine.count_active() == 0
    assert refused.value.params["index"] == 10
    # fixed and retried: each memory once
    items[10] = "a harmless last note"
    assert len(engine.add_many(items, batch_size=4)) == 11
    assert engine.count_active() == 11


def test_every_kind_of_refusal_names_its_item(engine: MemoryEngine) -> None:
    with pytest.raises(MemoryEmpty) as empty:
        engine.add_many(["fine", "   ", "also fine"])
    assert empty.value.params["index"] == 1
    with pytest.raises(InvalidInput) as bad_kind:
        engine.add_many(["fine", {"text": "x", "kind": "rumour"}])
    assert bad_kind.value.params["index"] == 1
    assert engine.count_active() == 0
