"""The real core stack on a temporary dir, talking to a FakeOpenAIServer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etos_desktop.core.changes import ChangeHub
from etos_desktop.core.chat.events import ChatEvent
from etos_desktop.core.chat.service import ChatService
from etos_desktop.core.clock import Clock
from etos_desktop.core.providers.base import RetryPolicy, Timeouts
from etos_desktop.core.providers.config import ProviderConfig
from etos_desktop.core.providers.openai_provider import OpenAIProvider
from etos_desktop.core.providers.registry import ProviderRegistry
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository

FAST_TIMEOUTS = Timeouts(connect=2.0, first_token=3.0, between_chunks=3.0)


@dataclass
class Stack:
    db: Database
    repo: ChatRepository
    settings: SettingsStore
    secrets: SecretStore
    registry: ProviderRegistry
    chat: ChatService
    changes: ChangeHub
    sleeps: list[float] = field(default_factory=list)

    async def run(self, events: AsyncIterator[ChatEvent]) -> list[ChatEvent]:
        return [event async for event in events]


@asynccontextmanager
async def chat_stack(
    data_dir: Path,
    base_url: str,
    *,
    api_key: str | None = "sk-test-key-123456",
    model: str = "fake-chat",
    timeouts: Timeouts = FAST_TIMEOUTS,
    env: dict[str, str] | None = None,
    save_provider: bool = True,
    clock: Clock | None = None,
) -> AsyncIterator[Stack]:
    """Build settings, secrets, registry, database and chat service; close them afterwards.

    ``stack.changes`` is the change hub the chat service publishes on; whatever else a test
    builds on the stack (memory, jobs) publishes there too. Retry waits are recorded in ``stack.sleeps`` instead of slept.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = SettingsStore(data_dir / "settings.json")
    settings.load()
    secrets = SecretStore(data_dir)
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await asyncio.sleep(0)

    def factory(config: ProviderConfig, key: str | None) -> Any:
        return OpenAIProvider(
            config.base_url, key, timeouts=timeouts, retry=RetryPolicy(), sleep=fake_sleep
        )

    if save_provider:
        config = settings.upsert_provider(
            ProviderConfig(
                id="p1", name="Test", preset="custom", base_url=base_url, chat_model=model
            )
        )
        settings.save()
        if api_key:
            secrets.set(config.id, api_key)
    registry = ProviderRegistry(settings, secrets, env or {}, factory)
    db = Database(data_dir / "etos.db", data_dir / "backups", clock=clock)
    await db.open_async()
    repo = ChatRepository(db)
    changes = ChangeHub()
    chat = ChatService(repo, registry, settings, changes=changes)
    stack = Stack(db, repo, settings, secrets, registry, chat, changes, sleeps)
    try:
        yield stack
    finally:
        await registry.aclose()
        await asyncio.get_running_loop().run_in_executor(None, db.close)


def fast_provider_factory(sleeps: list[float]) -> Any:
    """A provider factory for the app under test: short timeouts, retry waits recorded."""

    async def no_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    def factory(config: ProviderConfig, key: str | None) -> Any:
        return OpenAIProvider(config.base_url, key, timeouts=FAST_TIMEOUTS, sleep=no_sleep)

    return factory
