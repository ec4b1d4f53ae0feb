"""The saved provider configurations plus the Environment one, and live provider objects.

The registry implements the chat service's ``ProviderSource``: it resolves a conversation's
provider id and model override to a ready provider. Provider objects are created lazily by an
injected factory (``app.py`` passes one that builds ``OpenAIProvider``), and cached until the
configuration or key changes.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from etos_desktop.core.errors import InvalidInput, NotConfigured
from etos_desktop.core.providers.base import ChatProvider
from etos_desktop.core.providers.config import (
    ENVIRONMENT_PROVIDER_ID,
    ProviderConfig,
    environment_provider,
)
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.store import SettingsStore

log = logging.getLogger(__name__)

ProviderFactory = Callable[[ProviderConfig, "str | None"], ChatProvider]


@dataclass(frozen=True)
class ResolvedProvider:
    """A provider ready to use, with the model a request should name."""

    config: ProviderConfig
    provider: ChatProvider
    model: str


class ProviderSource(Protocol):
    """Finds the provider and model a conversation uses."""

    def resolve(self, provider_id: str | None, model: str | None) -> ResolvedProvider:
        """Return the provider for ``provider_id`` (default if None) and the model to use.

        Raises:
            NotConfigured: No provider, or no model, is configured.
        """
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
        """The API key of a configuration (never logged, never stored outside secrets)."""
        if config.id == ENVIRONMENT_PROVIDER_ID:
            return self._secrets.env_key(self._env)
        return self._secrets.get(config.id)

    # -- live providers -----------------------------------------------------------------------

    def provider_for(self, config: ProviderConfig, key: str | None = None) -> ChatProvider:
        """A provider object for ``config`` (cached while its URL and key stay the same).

        Args:
            config: The configuration.
            key: Use this key instead of the stored one (testing a connection before saving).
        """
        api_key = key if key is not None else self.key_for(config)
        fingerprint = hashlib.sha256(f"{config.base_url}\0{api_key or ''}".encode()).hexdigest()
        cached = self._cache.get(config.id)
        if key is None and cached is not None and cached[0] == fingerprint:
            return cached[1]
        provider = self._factory(config, api_key)
        if key is None:
            if cached is not None:
                self._retired.append(cached[1])
            self._cache[config.id] = (fingerprint, provider)
        return provider

    def resolve(self, provider_id: str | None, model: str | None) -> ResolvedProvider:
        """Resolve a conversation's provider and model (the chat service's ``ProviderSource``).

        Raises:
            NotConfigured: No provider exists, or no model is set for it.
        """
        config = self.get(provider_id) if provider_id else None
        if config is None:
            config = self.default()
        if config is None:
            raise NotConfigured("no provider configured", what="provider")
        chosen_model = model or config.chat_model
        if not chosen_model:
            raise NotConfigured(
                f"provider {config.name!r} has no chat model", what="model", provider=config.name
            )
        return ResolvedProvider(
            config=config, provider=self.provider_for(config), model=chosen_model
        )

    async def aclose(self) -> None:
        """Close every provider's HTTP connections."""
        providers = [p for _, p in self._cache.values()] + self._retired
        self._cache.clear()
        self._retired.clear()
        for provider in providers:
            await provider.aclose()
