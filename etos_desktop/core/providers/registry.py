"""The saved provider configurations plus the Environment one, and live provider objects.

The registry implements the chat service's ``ProviderSource``: it resolves a conversation's
provider id and model override to a ready provider. Provider objects are created lazily by an
injected factory (``app.py`` passes one that builds ``OpenAIProvider``), and cached until the
configuration or key changes.

Keys: the OS keyring can block (D-Bus, an unlock prompt), so code on the event loop never reads
it. Keys read at start-up (in a worker thread) are remembered by the ``SecretStore``; any other
one — a provider added after start-up — is read in a worker thread by :meth:`stored_key`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from etos_desktop.core.errors import InvalidInput, NotConfigured, ProviderError
from etos_desktop.core.providers.base import ChatProvider
from etos_desktop.core.providers.config import (
    ENVIRONMENT_PROVIDER_ID,
    ProviderConfig,
    environment_provider,
)
from etos_desktop.core.providers.presets import preset
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.store import SettingsStore

log = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig, "str | None"], ChatProvider]

#: Model ids that name no chat model (embeddings, rerankers, speech, images, moderation).
_NOT_CHAT: Final = re.compile(
    r"embed|rerank|whisper|tts|speech|transcri|dall-e|image|moderation|bge-|e5-", re.IGNORECASE
)


def pick_chat_model(listed: Sequence[str], suggested: Sequence[str]) -> str | None:
    """The chat model to use when none was chosen (the Environment provider without a model).

    Args:
        listed: What the server's ``/models`` lists (empty when it could not be asked).
        suggested: The preset's chat models, best first (empty for a custom server).

    Returns:
        The preset's first suggestion the server lists; else the server's first model that is
        not an embedding (or other non-chat) model; else, when the server listed nothing, the
        preset's first suggestion; else ``None``.
    """
    offered = set(listed)
    for model in suggested:
        if model in offered:
            return model
    chat = [model for model in listed if not _NOT_CHAT.search(model)]
    if chat:
        return chat[0]
    if not listed and suggested:
        return suggested[0]
    return None


@dataclass(frozen=True)
class ResolvedProvider:
    """A provider ready to use, with the model a request should name."""

    config: ProviderConfig
    provider: ChatProvider
    model: str


class ProviderSource(Protocol):
    """Finds the provider and model a conversation uses."""

    async def resolve(self, provider_id: str | None, model: str | None) -> ResolvedProvider:
        """Return the provider for ``provider_id`` (default if None) and the model to use.

        Never blocks the event loop (keys are read in a worker thread when not yet known).

        Raises:
            NotConfigured: No provider, or no model, is configured.
        """
        ...

    def is_configured(self) -> bool:
        """Whether any provider is available (a request may still fail for want of a model)."""
        ...


class ProviderRegistry:
    """All provider configurations the user can pick, and the objects that talk to them.

    Args:
        settings: Where saved configurations live (``settings.json``, no keys).
        secrets: Where their keys live (OS keyring or the 0600 fallback file).
        env: The process environment (``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``).
        factory: Builds a provider from a configuration and its key.
    """

    def __init__(
        self,
        settings: SettingsStore,
        secrets: SecretStore,
        env: Mapping[str, str],
        factory: ProviderFactory,
    ) -> None:
        self._settings = settings
        self._secrets = secrets
        self._env = dict(env)
        self._factory = factory
        self._cache: dict[str, tuple[str, ChatProvider]] = {}
        self._retired: list[ChatProvider] = []
        #: The chat model picked for a provider without one, per base URL (asked once).
        self._picked_models: dict[str, asyncio.Task[str]] = {}

    # -- configurations -----------------------------------------------------------------------

    def configs(self) -> list[ProviderConfig]:
        """Saved configurations, then the Environment one when the environment defines it."""
        configs = list(self._settings.providers())
        try:
            env_config = environment_provider(self._env)
        except InvalidInput:
            # A malformed OPENAI_BASE_URL must not stop the app; the saved providers still work.
            log.warning("ignoring OPENAI_BASE_URL: not a valid http(s) URL")
            env_config = None
        if env_config is not None:
            configs.append(env_config)
        return configs

    def get(self, provider_id: str) -> ProviderConfig | None:
        """Return one configuration by id."""
        return next((c for c in self.configs() if c.id == provider_id), None)

    def default(self) -> ProviderConfig | None:
        """The default configuration: the chosen one, else the first saved, else Environment."""
        chosen = self._settings.default_provider_id
        configs = self.configs()
        if chosen:
            match = next((c for c in configs if c.id == chosen), None)
            if match is not None:
                return match
        return configs[0] if configs else None

    def is_configured(self) -> bool:
        """Whether any provider is available (saved, or from the environment)."""
        return bool(self.configs())

    def key_for(self, config: ProviderConfig) -> str | None:
        """The API key of a configuration (never logged, never stored outside secrets).

        Blocking: a key not read before is read from the keyring here. From the event loop use
        :meth:`stored_key`.
        """
        if config.id == ENVIRONMENT_PROVIDER_ID:
            return self._secrets.env_key(self._env)
        return self._secrets.get(config.id)

    async def stored_key(self, config: ProviderConfig) -> str | None:
        """The API key of a configuration, read in a worker thread if it is not known yet."""
        if config.id == ENVIRONMENT_PROVIDER_ID:
            return self._secrets.env_key(self._env)
        known, key = self._secrets.cached(config.id)
        if known:
            return key
        return await asyncio.to_thread(self._secrets.get, config.id)

    # -- live providers -----------------------------------------------------------------------

    def provider_for(self, config: ProviderConfig, key: str | None = None) -> ChatProvider:
        """A provider object for ``config`` (cached while its URL and key stay the same).

        Args:
            config: The configuration.
            key: Use this key instead of the stored one (testing a connection before saving);
                the provider is not cached. Without it the stored key is used, which blocks on
                the keyring when it was not read before: from the event loop use
                :meth:`live_provider`.
        """
        if key is not None:
            return self._factory(config, key)
        return self._cached_provider(config, self.key_for(config))

    async def live_provider(self, config: ProviderConfig) -> ChatProvider:
        """The cached provider for ``config`` with its stored key (never blocks the loop).

        A provider not built yet is built in a worker thread: the HTTP client's TLS context
        (loading the CA certificates) took 20-100 ms on the UI thread at the first send.
        """
        api_key = await self.stored_key(config)
        cached = self._cache.get(config.id)
        if cached is not None and cached[0] == self._fingerprint(config, api_key):
            return cached[1]
        built = await asyncio.to_thread(self._factory, config, api_key)
        return self._cached_provider(config, api_key, built=built)

    @staticmethod
    def _fingerprint(config: ProviderConfig, api_key: str | None) -> str:
        return hashlib.sha256(f"{config.base_url}\0{api_key or ''}".encode()).hexdigest()

    def _cached_provider(
        self, config: ProviderConfig, api_key: str | None, *, built: ChatProvider | None = None
    ) -> ChatProvider:
        fingerprint = self._fingerprint(config, api_key)
        cached = self._cache.get(config.id)
        if cached is not None and cached[0] == fingerprint:
            return cached[1]
        provider = built if built is not None else self._factory(config, api_key)
        if cached is not None:
            self._retired.append(cached[1])
        self._cache[config.id] = (fingerprint, provider)
        return provider

    async def resolve(self, provider_id: str | None, model: str | None) -> ResolvedProvider:
        """Resolve a conversation's provider and model (the chat service's ``ProviderSource``).

        The Environment provider without ``OPENAI_MODEL`` gets a model picked once from the
        server's list (:func:`pick_chat_model`).

        Raises:
            NotConfigured: No provider exists, or no model is set for it (and none could be
                picked).
        """
        config = self.get(provider_id) if provider_id else None
        if config is None:
            config = self.default()
        if config is None:
            raise NotConfigured("no provider configured", what="provider")
        chosen_model = model or config.chat_model
        if not chosen_model and config.id != ENVIRONMENT_PROVIDER_ID:
            raise NotConfigured(
                f"provider {config.name!r} has no chat model", what="model", provider=config.name
            )
        provider = await self.live_provider(config)
        if not chosen_model:
            chosen_model = await self._picked_model(config, provider)
        return ResolvedProvider(config=config, provider=provider, model=chosen_model)

    async def _picked_model(self, config: ProviderConfig, provider: ChatProvider) -> str:
        task = self._picked_models.get(config.base_url)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(self._pick_model(config, provider))
            self._picked_models[config.base_url] = task
        # Shielded: a cancelled send must not cancel the listing another send waits for.
        return await asyncio.shield(task)

    async def _pick_model(self, config: ProviderConfig, provider: ChatProvider) -> str:
        try:
            suggested = preset(config.preset).suggested_models
        except KeyError:
            suggested = ()
        try:
            listed = await provider.list_models()
        except ProviderError as exc:
            log.info("could not list models to pick one: %s", exc.code)
            listed = []
        picked = pick_chat_model(listed, suggested)
        if picked is None:
            # Nothing to go on (yet): the next send asks the server again.
            raise NotConfigured("no chat model to pick", what="model", provider=config.name)
        log.info("no chat model configured for %s; using %s", config.name, picked)
        return picked

    async def aclose(self) -> None:
        """Close every provider's HTTP connections (and stop a model listing under way)."""
        for task in self._picked_models.values():
            task.cancel()
        self._picked_models.clear()
        providers = [p for _, p in self._cache.values()] + self._retired
        self._cache.clear()
        self._retired.clear()
        for provider in providers:
            await provider.aclose()
