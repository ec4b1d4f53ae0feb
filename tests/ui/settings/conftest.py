"""Fixtures of the Settings tests: real stores, a real memory engine, a shown Memory page."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.transfer.service import TransferService
from etos_desktop.ui.settings.memory_page import MemoryPage
from tests.helpers.embedders import HashEmbedder
from tests.helpers.qt_async import expect_signal
from tests.helpers.settings_env import SettingsEnv, make_settings_env


@pytest.fixture
def ctx(isolated_environment: Path) -> SettingsEnv:
    return make_settings_env(isolated_environment)


@pytest.fixture
def settings(ctx: SettingsEnv) -> SettingsStore:
    return ctx.settings


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


ZWSP = "\u200b"

#: Opens a Memory page on its own, shown and loaded: ``await open_page(access, clock)``.
PageOpener = Callable[[MemoryAccess, FakeClock], Awaitable[MemoryPage]]


@pytest.fixture
def open_page(qtbot: Any, settings: SettingsStore) -> PageOpener:
    async def opener(access: MemoryAccess, clock: FakeClock) -> MemoryPage:
        page = MemoryPage(access, settings, transfer=TransferService(access), clock=clock)
        qtbot.addWidget(page)
        page.resize(900, 600)
        refreshed = expect_signal(page.refreshed)
        page.show()  # every visit reloads from the database
        await asyncio.wait_for(refreshed, 10)
        await page.wait_idle()
        return page

    return opener


@pytest.fixture
async def page(
    open_page: PageOpener, access: MemoryAccess, clock: FakeClock
) -> AsyncIterator[MemoryPage]:
    shown = await open_page(access, clock)
    yield shown
    shown.close_page()
    await shown.wait_idle()


#: Saves a memory the way the engine's users do; returns its id.
Remember = Callable[..., int]


@pytest.fixture
def remember(engine: MemoryEngine) -> Remember:
    def save(text: str, kind: str = "fact", **options: Any) -> int:
        return engine.save(text, kind, **options).id

    return save


@pytest.fixture
def populate(
    engine: MemoryEngine, clock: FakeClock, remember: Remember
) -> Callable[[], dict[str, int]]:
    """Seven memories of every state, kind and source; returns their ids by name."""

    def fill() -> dict[str, int]:
        ids = {"pnpm": remember("I use pnpm for JavaScript projects", "preference", tags=["js"])}
        clock.advance(minutes=1)
        ids["lily"] = remember("我的女儿叫莉莉", "fact", source="user_statement", confidence=0.4)
        clock.advance(minutes=1)
        ids["old"] = remember("Lives in Berlin", "fact", source="assistant_action")
        clock.advance(minutes=1)
        ids["new"] = engine.supersede(ids["old"], "Lives in Shanghai")
        ids["rust"] = remember("Was learning Rust", "episode", source="imported")
        engine.archive(ids["rust"])
        ids["hidden"] = remember(f"Likes{ZWSP} <b>tea</b>", "preference", source="consolidation")
        ids["trip"] = remember("Is in Japan this week", "episode", valid_until=clock.now())
        clock.advance(minutes=1)
        return ids

    return fill
