"""The Providers page's work that is not widgets: drafts of the providers, their keys, the servers.

The page edits drafts; nothing reaches the ``SettingsStore`` or the ``SecretStore`` until Save
(:meth:`ProvidersController.write_keys`, then :meth:`~ProvidersController.apply`), except three
one-step actions that save at once: removing a provider, making one the default, and the
first-run "Use the local server". Keyring calls run in a worker thread (an unlock prompt or a
slow D-Bus can block). Fetching models and testing a connection use an uncached provider made
with the key as typed, closed after each action; the provider factory is inside the registry, so
nothing here imports ``openai``. Errors are raised as the core's ``EtosError``s; the page puts
them into words. Touches no widget.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.providers.base import ChatRequest
from etos_desktop.core.providers.config import (
    ENVIRONMENT_PROVIDER_ID,
    ProviderConfig,
    environment_provider,
    new_provider_id,
    normalise_base_url,
)
from etos_desktop.core.providers.presets import CUSTOM, Preset, preset, preset_for_url
from etos_desktop.core.providers.registry import ProviderRegistry
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.store import MIN_MODEL_CONTEXT, SettingsStore

#: The content of the one-token request "Test connection" sends.
TEST_PROMPT: Final = "Hi"

#: Model ids of embedding, reranking, speech, image and moderation models: never a chat model.
_NOT_CHAT_RE: Final = re.compile(
    r"embed|rerank|whisper|tts|dall-e|moderation|(^|[-_/:.])(bge|e5|gte|m3e)([-_/:.]|$)",
    re.IGNORECASE,
)


def first_chat_model(models: Sequence[str]) -> str:
    """The first of ``models`` that is a chat model by its name (``""`` when none is)."""
    return next((m for m in models if not _NOT_CHAT_RE.search(m)), "")


def preset_or_custom(key: str) -> Preset:
    """The preset ``key``, or the custom one for a key this version does not know."""
    try:
        return preset(key)
    except KeyError:  # a preset of a newer version: treat as custom (presets.preset says so)
        return preset(CUSTOM)


def key_is_malformed(key: str) -> bool:
    """Whether a typed key would be refused by ``SecretStore.set`` (spaces, control characters).

    Checked before anything is written, so a bad key never leaves some keys saved and others not.
    """
    return any(ch.isspace() or not ch.isprintable() for ch in key.strip())


@dataclass
class ProviderDraft:
    """The editable copy of one saved or new provider configuration."""

    id: str
    name: str
    preset: str
    base_url: str
    chat_model: str = ""
    background_model: str = ""
    embedding_model: str = ""
    single_system_message: bool = False
    #: The key as typed; ``None`` while the stored key is still being read.
    key: str | None = None
    #: The configuration as stored, ``None`` for a provider not saved yet.
    saved: ProviderConfig | None = None
    saved_key: str | None = None
    #: The server's models, once fetched.
    models: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, cfg: ProviderConfig) -> ProviderDraft:
        """The draft of a stored configuration (its key still to be read)."""
        return cls(
            id=cfg.id,
            name=cfg.name,
            preset=cfg.preset,
            base_url=cfg.base_url,
            chat_model=cfg.chat_model,
            background_model=cfg.background_model,
            embedding_model=cfg.embedding_model,
            single_system_message=cfg.single_system_message,
            saved=cfg,
        )

    def to_config(self, base_url: str) -> ProviderConfig:
        """The configuration this draft describes, with an already normalised ``base_url``."""
        return ProviderConfig(
            id=self.id,
            name=self.name.strip(),
            preset=self.preset,
            base_url=base_url,
            chat_model=self.chat_model.strip(),
            background_model=self.background_model.strip(),
            embedding_model=self.embedding_model.strip(),
            single_system_message=self.single_system_message,
        )

    def fields_modified(self) -> bool:
        """Whether any field differs from the stored configuration (always, for a new one)."""
        saved = self.saved
        if saved is None:
            return True
        return (
            self.name.strip(),
            self.preset,
            self.base_url.strip(),
            self.chat_model.strip(),
            self.background_model.strip(),
            self.embedding_model.strip(),
            self.single_system_message,
        ) != (
            saved.name,
            saved.preset,
            saved.base_url,
            saved.chat_model,
            saved.background_model,
            saved.embedding_model,
            saved.single_system_message,
        )

    def key_modified(self) -> bool:
        """Whether the typed key differs from the stored one."""
        return self.key is not None and self.key.strip() != (self.saved_key or "")


@dataclass(frozen=True)
class DraftProblem:
    """Why a draft cannot be saved.

    Attributes:
        field: ``"name"``, ``"url"`` or ``"key"``.
        reason: ``"empty"``, ``"malformed"``, or the URL check's reason
            (``normalise_base_url``: ``"empty"``, ``"scheme"``, ``"whitespace"``,
            ``"credentials"``, ``"host"``…).
    """

    field: str
    reason: str


class ProvidersController:
    """Drafts of every saved provider plus the read-only Environment one, and their IO.

    Args:
        settings: The settings store (providers, default, per-model context sizes).
        secrets: Where keys are stored.
        registry: Makes providers (and knows the Environment provider's key).
        env: The process environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``).
    """

    def __init__(
        self,
        settings: SettingsStore,
        secrets: SecretStore,
        registry: ProviderRegistry,
        env: Mapping[str, str],
    ) -> None:
        self.settings = settings
        self.secrets = secrets
        self._registry = registry
        self.drafts: dict[str, ProviderDraft] = {
            cfg.id: ProviderDraft.from_config(cfg) for cfg in settings.providers()
        }
        self.env_config: ProviderConfig | None = None
        self.env_invalid = False
        try:
            self.env_config = environment_provider(env)
        except InvalidInput:
            self.env_invalid = True
        self.context = settings.model_context_overrides()
        self._saved_context = dict(self.context)
        #: Per model: whether it accepts images (absent: the built-in table decides).
        self.vision = settings.model_vision_overrides()
        self._saved_vision = dict(self.vision)
        #: Per model: its price per million tokens (absent: no cost is shown).
        self.prices = settings.model_prices()
        self._saved_prices = dict(self.prices)
        self._keys_read = asyncio.Event()

    # -- drafts ---------------------------------------------------------------------------------

    @property
    def default_id(self) -> str | None:
        """The default provider's id (``"env"`` for the Environment one)."""
        return self.settings.default_provider_id

    def draft(self, provider_id: str | None) -> ProviderDraft | None:
        """The draft of a saved or new provider (``None`` for the Environment one)."""
        return self.drafts.get(provider_id or "")

    def has_provider(self) -> bool:
        """Whether a provider is saved or comes from the environment (the app can chat)."""
        return self.env_config is not None or any(d.saved is not None for d in self.drafts.values())

    def unique_name(self, base: str) -> str:
        """``base``, or ``base 2``, ``base 3``… when a provider already has that name."""
        taken = {d.name.strip() for d in self.drafts.values()}
        if base not in taken:
            return base
        number = 2
        while f"{base} {number}" in taken:
            number += 1
        return f"{base} {number}"

    def add_draft(self, preset_key: str, name: str) -> ProviderDraft:
        """A new, unsaved provider made from a preset, named ``name`` (made unique)."""
        chosen = preset_or_custom(preset_key)
        draft = ProviderDraft(
            id=new_provider_id(),
            name=self.unique_name(name),
            preset=chosen.key,
            base_url=chosen.base_url,
            chat_model=chosen.suggested_models[0] if chosen.suggested_models else "",
            key="",
        )
        self.drafts[draft.id] = draft
        return draft

    def remember_models(
        self, provider_id: str, models: Sequence[str], *, preselect: bool = False
    ) -> None:
        """Keep a server's model list.

        Args:
            provider_id: Whose models they are.
            models: The ids the server listed.
            preselect: Choose the first chat model (skipping embedding models) when the
                provider has no chat model yet.
        """
        draft = self.drafts.get(provider_id)
        if draft is None:
            return
        draft.models = list(models)
        if preselect and not draft.chat_model.strip():
            draft.chat_model = first_chat_model(models)

    def is_modified(self) -> bool:
        """Whether Save would change anything."""
        return (
            any(d.fields_modified() or d.key_modified() for d in self.drafts.values())
            or self.context != self._saved_context
            or self.vision != self._saved_vision
            or self.prices != self._saved_prices
        )

    def problem(self, draft: ProviderDraft) -> DraftProblem | None:
        """Why ``draft`` cannot be saved, or ``None``."""
        if not draft.name.strip():
            return DraftProblem("name", "empty")
        try:
            normalise_base_url(draft.base_url)
        except InvalidInput as exc:
            return DraftProblem("url", str(exc.params.get("reason", "")))
        if draft.key is not None and key_is_malformed(draft.key):
            return DraftProblem("key", "malformed")
        return None

    def context_problem(self) -> str | None:
        """A model whose new context size is too small (0 means the built-in size), or ``None``."""
        for model, tokens in self.context.items():
            if tokens < MIN_MODEL_CONTEXT and self._saved_context.get(model) != tokens:
                return model
        return None

    def owner_of_model(self, model: str) -> str | None:
        """The id of a provider whose chat model is ``model``."""
        return next((d.id for d in self.drafts.values() if d.chat_model.strip() == model), None)

    def apply(self) -> None:
        """Write the drafts and context sizes into the store (not yet to the file).

        Raises:
            InvalidInput: A configuration was rejected by the store.
        """
        for draft in list(self.drafts.values()):
            if not draft.fields_modified():
                continue
            stored = self.settings.upsert_provider(
                draft.to_config(normalise_base_url(draft.base_url))
            )
            updated = ProviderDraft.from_config(stored)
            updated.key, updated.saved_key, updated.models = (
                draft.key,
                draft.saved_key,
                draft.models,
            )
            self.drafts[draft.id] = updated
        for model in set(self.context) | set(self._saved_context):
            if self.context.get(model) != self._saved_context.get(model):
                self.settings.set_model_context(model, self.context.get(model))
        self._saved_context = dict(self.context)
        for model in set(self.vision) | set(self._saved_vision):
            if self.vision.get(model) != self._saved_vision.get(model):
                self.settings.set_model_vision(model, self.vision.get(model))
        self._saved_vision = dict(self.vision)
        for model in set(self.prices) | set(self._saved_prices):
            if self.prices.get(model) != self._saved_prices.get(model):
                self.settings.set_model_price(model, self.prices.get(model))
        self._saved_prices = dict(self.prices)

    # -- keys -----------------------------------------------------------------------------------

    async def load_keys(self) -> None:
        """Read the stored keys of the saved providers, in a worker thread.

        A key that could not be read counts as none (the editor is usable either way).

        Raises:
            EtosError: The keyring failed.
        """
        ids = [d.id for d in self.drafts.values() if d.key is None]
        keys: dict[str, str] = {}
        try:
            if ids:
                keys = await asyncio.to_thread(self._read_keys, ids)
        finally:
            for provider_id in ids:
                draft = self.drafts.get(provider_id)
                if draft is not None and draft.key is None:
                    draft.key = draft.saved_key = keys.get(provider_id, "")
            self._keys_read.set()

    async def write_keys(self) -> None:
        """Store every changed key (an empty one deletes the stored key), in a worker thread.

        Raises:
            EtosError: A key could not be stored.
        """
        await self._keys_read.wait()
        changes = [
            (draft.id, (draft.key or "").strip())
            for draft in self.drafts.values()
            if draft.key_modified()
        ]
        if not changes:
            return
        await asyncio.to_thread(self._write_keys, changes)
        for provider_id, key in changes:
            draft = self.drafts.get(provider_id)
            if draft is not None:
                draft.saved_key = key

    def _read_keys(self, ids: list[str]) -> dict[str, str]:
        return {provider_id: self.secrets.get(provider_id) or "" for provider_id in ids}

    def _write_keys(self, changes: list[tuple[str, str]]) -> None:
        for provider_id, key in changes:
            self.secrets.set(provider_id, key)

    # -- servers --------------------------------------------------------------------------------

    def connection_config(self, provider_id: str | None) -> ProviderConfig | None:
        """The provider as a configuration to connect with (the draft as typed).

        Raises:
            InvalidInput: The draft's base URL is not usable (``params["reason"]`` says why).
        """
        if provider_id == ENVIRONMENT_PROVIDER_ID:
            return self.env_config
        draft = self.drafts.get(provider_id or "")
        if draft is None:
            return None
        return draft.to_config(normalise_base_url(draft.base_url))

    async def list_models(self, config: ProviderConfig, *, test_model: str = "") -> list[str]:
        """The server's models; with ``test_model``, also ask that model for a one-token reply.

        Raises:
            EtosError: The server refused or could not be reached.
        """
        # An explicit key (possibly "") gives an uncached provider that this call closes.
        provider = self._registry.provider_for(config, key=await self._key_for(config))
        try:
            models = await provider.list_models()
            if test_model:
                await provider.complete(
                    ChatRequest(
                        model=test_model,
                        messages=[{"role": "user", "content": TEST_PROMPT}],
                        max_tokens=1,
                    )
                )
            return models
        finally:
            await provider.aclose()

    async def _key_for(self, config: ProviderConfig) -> str:
        if config.id == ENVIRONMENT_PROVIDER_ID:
            return self._registry.key_for(config) or ""
        await self._keys_read.wait()
        draft = self.drafts.get(config.id)
        return (draft.key or "").strip() if draft is not None else ""

    def environment_has_key(self) -> bool:
        """Whether ``OPENAI_API_KEY`` gives the Environment provider a key."""
        return self.env_config is not None and self._registry.key_for(self.env_config) is not None

    # -- actions that save at once --------------------------------------------------------------

    async def use_local_server(self, url: str, name: str) -> ProviderConfig:
        """Save a keyless provider for a local server as the default, with its first chat model.

        Args:
            url: The server's base URL (it answered the probe).
            name: The name to give it when it is not a known preset.

        Returns:
            The stored configuration.

        Raises:
            EtosError: The server did not list its models, or the settings file was not
                written (the provider is then in the store, saved by the next Save).
        """
        known = preset_for_url(url)
        config = ProviderConfig(
            id=new_provider_id(),
            name=self.unique_name(known.name if known else name),
            preset=known.key if known else CUSTOM,
            base_url=normalise_base_url(url),
        )
        provider = self._registry.provider_for(config, key="")
        try:
            models = await provider.list_models()
        finally:
            await provider.aclose()
        stored = self.settings.upsert_provider(replace(config, chat_model=first_chat_model(models)))
        self.settings.default_provider_id = stored.id
        draft = ProviderDraft.from_config(stored)
        draft.key = draft.saved_key = ""
        draft.models = list(models)
        self.drafts[stored.id] = draft
        self.settings.save()
        return stored

    async def remove(self, provider_id: str) -> bool:
        """Forget a provider; a saved one is removed from the file and its key deleted.

        Returns:
            Whether the settings file was written.

        Raises:
            EtosError: The file or the keyring failed.
        """
        draft = self.drafts.pop(provider_id, None)
        if draft is None or draft.saved is None:
            return False
        self.settings.remove_provider(provider_id)
        self.settings.save()
        await asyncio.to_thread(self.secrets.delete, provider_id)
        return True

    def set_default(self, provider_id: str) -> None:
        """Make a saved provider the default, and write the settings file.

        Raises:
            EtosError: The file was not written.
        """
        self.settings.default_provider_id = provider_id
        self.settings.save()
