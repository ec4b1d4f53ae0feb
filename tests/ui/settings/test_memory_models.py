"""The Memory page's table model and filter model over a real engine's memories."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.ui.settings.memory_models import COLUMNS, MemoryFilterModel, MemoryTableModel

ZWSP = "\u200b"


def _model(engine: MemoryEngine, clock: FakeClock) -> MemoryTableModel:
    model = MemoryTableModel(clock)
    model.set_memories(engine.memories(include_inactive=True))
    return model


def _cell(
    model: MemoryTableModel, memory_id: int, column: str, role: int = Qt.ItemDataRole.DisplayRole
) -> Any:
    row = model.row_of(memory_id)
    assert row is not None
    return model.index(row, COLUMNS.index(column)).data(role)


def _shown(proxy: MemoryFilterModel) -> list[int]:
    return sorted(
        proxy.index(r, 0).data(MemoryTableModel.MEMORY_ROLE).id for r in range(proxy.rowCount())
    )


async def test_the_table_model_passes_the_model_tester(
    qtmodeltester: Any,
    engine: MemoryEngine,
    clock: FakeClock,
    populate: Callable[[], dict[str, int]],
) -> None:
    populate()
    model = MemoryTableModel(clock)
    qtmodeltester.check(model, force_py=True)  # empty
    model.set_memories(engine.memories(include_inactive=True))  # a reset under the tester
    assert model.rowCount() == 7
    model.retranslate()
    model.set_memories(engine.memories())


async def test_the_filter_model_passes_the_model_tester(
    qtmodeltester: Any,
    engine: MemoryEngine,
    clock: FakeClock,
    populate: Callable[[], dict[str, int]],
) -> None:
    populate()
    model = _model(engine, clock)
    proxy = MemoryFilterModel(clock)
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy, force_py=True)
    proxy.set_filters(text="li", status="active")
    proxy.sort(COLUMNS.index("created"), Qt.SortOrder.AscendingOrder)
    assert proxy.rowCount() == 2
    proxy.set_filters(text="", kind="episode", status="all")
    assert proxy.rowCount() == 2
    model.set_memories(engine.memories())


async def test_cells_show_each_column_with_invisible_characters_escaped(
    engine: MemoryEngine, clock: FakeClock, populate: Callable[[], dict[str, int]]
) -> None:
    ids = populate()
    engine.mark_accessed([ids["pnpm"]])
    model = _model(engine, clock)
    assert _cell(model, ids["pnpm"], "id") == str(ids["pnpm"])
    assert _cell(model, ids["pnpm"], "kind") == "Preference"
    assert _cell(model, ids["lily"], "confidence") == "0.40"
    assert _cell(model, ids["pnpm"], "created") == "2026-01-01"
    assert _cell(model, ids["lily"], "last_used") == "—"
    assert _cell(model, ids["pnpm"], "last_used") == "2026-01-01"
    assert "used 1 time" in _cell(model, ids["pnpm"], "last_used", Qt.ItemDataRole.ToolTipRole)
    assert _cell(model, ids["pnpm"], "status") == "Active"
    assert _cell(model, ids["rust"], "status") == "Archived"
    assert _cell(model, ids["old"], "status") == f"Replaced by #{ids['new']}"
    assert _cell(model, ids["trip"], "status") == "Expired"
    assert _cell(model, ids["hidden"], "content") == r"Likes\u200b <b>tea</b>"
    tooltip = _cell(model, ids["hidden"], "content", Qt.ItemDataRole.ToolTipRole)
    assert r"Likes\u200b &lt;b&gt;tea&lt;/b&gt;" in tooltip
    assert ZWSP not in tooltip
    pnpm_tooltip = _cell(model, ids["pnpm"], "content", Qt.ItemDataRole.ToolTipRole)
    assert "js" in pnpm_tooltip
    # The columns hidden by default are in the text's tooltip.
    assert "Confidence:</i> 1.00" in pnpm_tooltip
    assert "Created:</i> 2026-01-01" in pnpm_tooltip


async def test_the_source_column_credits_the_users_own_words_to_the_user(
    engine: MemoryEngine, clock: FakeClock, populate: Callable[[], dict[str, int]]
) -> None:
    ids = populate()
    model = _model(engine, clock)
    sources = {name: _cell(model, ids[name], "source") for name in ids}
    assert sources["pnpm"] == "Added by you"  # manual: Settings → Memory → Add…
    assert sources["lily"] == "Said by you"  # user_statement: /remember, Remember…
    assert sources["old"] == "Saved by the assistant"
    assert sources["rust"] == "Imported"
    assert sources["hidden"] == "Consolidated"


async def test_filters(
    engine: MemoryEngine, clock: FakeClock, populate: Callable[[], dict[str, int]]
) -> None:
    ids = populate()
    proxy = MemoryFilterModel(clock)
    proxy.setSourceModel(_model(engine, clock))
    proxy.set_filters(text="LIVES IN")  # substring, case-insensitive, archived included
    assert _shown(proxy) == sorted([ids["old"], ids["new"]])
    proxy.set_filters(text="莉莉")
    assert _shown(proxy) == [ids["lily"]]
    proxy.set_filters(text="js")  # tags are searched too
    assert _shown(proxy) == [ids["pnpm"]]
    proxy.set_filters(text=f"#{ids['rust']}")
    assert _shown(proxy) == [ids["rust"]]
    proxy.set_filters(text="", kind="episode")
    assert _shown(proxy) == sorted([ids["rust"], ids["trip"]])
    proxy.set_filters(status="active")
    assert _shown(proxy) == []
    proxy.set_filters(kind=None)
    assert _shown(proxy) == sorted([ids["pnpm"], ids["lily"], ids["new"], ids["hidden"]])
    proxy.set_filters(status="inactive")
    assert _shown(proxy) == sorted([ids["old"], ids["rust"], ids["trip"]])
    proxy.set_filters(status="all", source="user_statement")
    assert _shown(proxy) == [ids["lily"]]
