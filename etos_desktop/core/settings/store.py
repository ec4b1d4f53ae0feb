"""The settings store: ``settings.json`` in the data dir (DESIGN §2, §3).

The file holds the user's settings (validated against :mod:`.schema`), the provider
configurations (never their keys) and per-model context sizes. It is read before the database
opens, written atomically with mode ``0600``, and a file this version cannot read is moved
aside rather than overwritten. Layout::

    {
      "version": 1,
      "settings": {"chat.temperature": 0.5, ...},    only values the user set
      "providers": [{"id": ..., "name": ..., ...}],
      "default_provider_id": "..." | null,
      "model_context": {"model-name": 128000},
      "model_vision": {"model-name": true},         whether a model takes images (absent: the
                                                    built-in table decides)
      "model_prices": {"model-name": {"input": 2.5, "output": 10, "currency": "USD"}}
                                                    per million tokens (absent: no cost shown)
    }

Keys this version does not know (at the top level, in ``settings`` and in provider entries)
are kept and written back unchanged, so an older version does not destroy a newer one's data.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from etos_desktop.core.errors import InvalidInput, redact
from etos_desktop.core.providers.config import ENVIRONMENT_PROVIDER_ID, ProviderConfig
from etos_desktop.core.providers.config import normalise_base_url as _normalise_base_url
from etos_desktop.core.providers.presets import CUSTOM
from etos_desktop.core.settings.paths import atomic_write_private, make_private_dir
from etos_desktop.core.settings.schema import SPECS, spec_for, validate
from etos_desktop.core.usage.prices import ModelPrice, check_price

_log = logging.getLogger(__name__)

#: Format version written to the file.
SCHEMA_VERSION = 1
#: Change-listener key announced when the provider list changes.
PROVIDERS_KEY = "providers"
#: Change-listener key announced when the default provider changes.
DEFAULT_PROVIDER_KEY = "default_provider_id"
#: Change-listener key announced when a per-model context size changes.
MODEL_CONTEXT_KEY = "model_context"
#: Change-listener key announced when a per-model "accepts images" answer changes.
MODEL_VISION_KEY = "model_vision"
#: Change-listener key announced when a per-model price changes.
MODEL_PRICES_KEY = "model_prices"
#: Change-listener key announced, after :data:`PROVIDERS_KEY` or :data:`DEFAULT_PROVIDER_KEY`,
#: when what picks the embeddings endpoint changed: which provider is the default, or the
#: default's base URL or embedding model. Only listeners that name it hear it (a detail of those
#: two keys, not a stored value of its own).
EMBEDDINGS_ENDPOINT_KEY = "providers.embeddings_endpoint"
#: The keys the store announces besides the settings of the schema.
STORE_KEYS = frozenset(
    {
        PROVIDERS_KEY,
        DEFAULT_PROVIDER_KEY,
        MODEL_CONTEXT_KEY,
        MODEL_VISION_KEY,
        MODEL_PRICES_KEY,
        EMBEDDINGS_ENDPOINT_KEY,
    }
)
#: Smallest and largest context window a user may enter for a model, in tokens.
MIN_MODEL_CONTEXT = 1024
MAX_MODEL_CONTEXT = 10_000_000

_SETTINGS = "settings"
_VERSION = "version"
_KNOWN_TOP_LEVEL = frozenset(
    {
        _VERSION,
        _SETTINGS,
        PROVIDERS_KEY,
        DEFAULT_PROVIDER_KEY,
        MODEL_CONTEXT_KEY,
        MODEL_VISION_KEY,
        MODEL_PRICES_KEY,
    }
)

Listener = Callable[[str], None]
#: Keys only a listener that names them hears (details of other keys).
_DETAIL_KEYS = frozenset({EMBEDDINGS_ENDPOINT_KEY})


def check_keys(keys: Iterable[str]) -> frozenset[str]:
    """Return ``keys`` after checking that the store announces each of them.

    A change filter is checked when it is made (as qutebrowser's ``config.change_filter`` is),
    so a typo or a renamed setting fails at start-up instead of silently never firing.

    Args:
        keys: Setting keys of the schema, or :data:`STORE_KEYS`.

    Raises:
        KeyError: A key is neither (the message names every unknown one).
    """
    checked = frozenset(keys)
    unknown = sorted(key for key in checked if key not in SPECS and key not in STORE_KEYS)
    if unknown:
        raise KeyError(f"no such setting: {', '.join(unknown)}")
    return checked


class SettingsStore:
    """Settings, provider configurations and model context sizes, backed by one JSON file.

    Nothing is read until :meth:`load` and nothing is written until :meth:`save`; until then the
    store holds the defaults. Changes are announced synchronously to subscribers with the
    setting's key, or with :data:`PROVIDERS_KEY`, :data:`DEFAULT_PROVIDER_KEY`,
    :data:`MODEL_CONTEXT_KEY` (and :data:`EMBEDDINGS_ENDPOINT_KEY` to listeners that name it).
    Not thread-safe: use it from the loop thread.

    Args:
        path: The settings file, normally ``paths.settings_path(data_dir)``.
        clock: Returns the current local time; used to name a quarantined corrupt file.

    Attributes:
        load_problem: ``None`` after a clean load; otherwise a technical description (for logs
            and the details of a notice) of what was wrong with the file.
        corrupt_backup: Where an unreadable file was moved by the last :meth:`load`, if it was.
        invalid_keys: Keys whose stored values were rejected and replaced by defaults.
    """

    def __init__(self, path: Path, *, clock: Callable[[], datetime] | None = None) -> None:
        self._path = path
        self._clock = clock or datetime.now
        self._listeners: list[tuple[Listener, frozenset[str] | None]] = []
        self.load_problem: str | None = None
        self.corrupt_backup: Path | None = None
        self.invalid_keys: tuple[str, ...] = ()
        self._loaded = False
        self._version = SCHEMA_VERSION
        self._extra: dict[str, Any] = {}
        self._values: dict[str, object] = {}
        self._unknown_settings: dict[str, Any] = {}
        self._providers: list[ProviderConfig] = []
        self._provider_extras: dict[str, dict[str, Any]] = {}
        self._default_provider_id: str | None = None
        self._model_context: dict[str, int] = {}
        self._model_vision: dict[str, bool] = {}
        self._model_prices: dict[str, ModelPrice] = {}

    @property
    def path(self) -> Path:
        """The settings file."""
        return self._path

    # -- loading and saving -------------------------------------------------------------------

    def load(self) -> None:
        """Read the file, replacing everything held in memory.

        A missing file gives the defaults. A file that cannot be read or is not a JSON object is
        renamed to ``settings.json.corrupt-<timestamp>`` (never deleted) and the defaults are
        used. Values that fail validation fall back to their defaults. Both cases set
        :attr:`load_problem`. This method does not raise for a bad file.
        """
        self._reset()
        self._loaded = True
        self.load_problem = None
        self.corrupt_backup = None
        self.invalid_keys = ()
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            self._quarantine(f"unreadable: {exc.strerror or exc}")
            return
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self._quarantine(f"not valid JSON: {exc}")
            return
        if not isinstance(data, dict):
            self._quarantine(f"not a JSON object but {type(data).__name__}")
            return
        problems: list[str] = []
        invalid: list[str] = []
        self._load_document(data, problems, invalid)
        self.invalid_keys = tuple(invalid)
        if problems:
            self.load_problem = redact("; ".join(problems))
            _log.warning("settings file %s: %s", self._path, self.load_problem)

    def save(self) -> None:
        """Write everything to the file atomically, with mode ``0600``.

        Raises:
            StorageError: The file could not be written (disk full, read-only, permission);
                the previous file is left as it was.
            RuntimeError: The file exists but :meth:`load` was never called, so saving would
                replace the user's settings with defaults (a programming error).
        """
        if not self._loaded and self._path.exists():
            raise RuntimeError("SettingsStore.save() before load() would overwrite the file")
        document: dict[str, Any] = dict(self._extra)
        document[_VERSION] = max(self._version, SCHEMA_VERSION)
        document[_SETTINGS] = {**self._unknown_settings, **self._values}
        document[PROVIDERS_KEY] = [
            {**self._provider_extras.get(cfg.id, {}), **cfg.to_dict()} for cfg in self._providers
        ]
        document[DEFAULT_PROVIDER_KEY] = self._default_provider_id
        document[MODEL_CONTEXT_KEY] = dict(self._model_context)
        document[MODEL_VISION_KEY] = dict(self._model_vision)
        if self._model_prices:
            document[MODEL_PRICES_KEY] = {m: p.to_json() for m, p in self._model_prices.items()}
        text = json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        make_private_dir(self._path.parent)
        atomic_write_private(self._path, text.encode("utf-8"))

    # -- settings -----------------------------------------------------------------------------

    def get(self, key: str) -> object:
        """Return the current value of setting ``key`` (its default when unset).

        Raises:
            KeyError: No setting has that key.
        """
        spec = spec_for(key)
        return self._values.get(key, spec.default)

    def get_bool(self, key: str) -> bool:
        """Return a ``bool`` setting. Raises ``TypeError`` if ``key`` is not one."""
        value = self.get(key)
        if not isinstance(value, bool):
            raise TypeError(f"{key} is not a bool setting")
        return value

    def get_int(self, key: str) -> int:
        """Return an ``int`` setting. Raises ``TypeError`` if ``key`` is not one."""
        value = self.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{key} is not an int setting")
        return value

    def get_float(self, key: str) -> float:
        """Return a ``float`` setting. Raises ``TypeError`` if ``key`` is not one."""
        value = self.get(key)
        if not isinstance(value, float):
            raise TypeError(f"{key} is not a float setting")
        return value

    def get_str(self, key: str) -> str:
        """Return a ``str`` setting. Raises ``TypeError`` if ``key`` is not one."""
        value = self.get(key)
        if not isinstance(value, str):
            raise TypeError(f"{key} is not a str setting")
        return value

    def set(self, key: str, value: object) -> None:
        """Validate and set setting ``key``; subscribers hear of it if the value changed.

        The change is in memory only until :meth:`save`.

        Raises:
            KeyError: No setting has that key.
            InvalidInput: The value fails validation (see :func:`.schema.validate`).
        """
        checked = validate(spec_for(key), value)
        old = self.get(key)
        self._values[key] = checked
        if old != checked:
            self._notify(key)

    def reset(self, key: str) -> None:
        """Return setting ``key`` to its default.

        Raises:
            KeyError: No setting has that key.
        """
        old = self.get(key)
        self._values.pop(key, None)
        if old != self.get(key):
            self._notify(key)

    # -- providers ----------------------------------------------------------------------------

    def providers(self) -> list[ProviderConfig]:
        """Return the saved provider configurations in the order they were added.

        The read-only Environment provider is not among them; the caller adds it.
        """
        return list(self._providers)

    def provider(self, provider_id: str) -> ProviderConfig | None:
        """Return the saved configuration with ``provider_id``, or ``None``."""
        for cfg in self._providers:
            if cfg.id == provider_id:
                return cfg
        return None

    def upsert_provider(self, cfg: ProviderConfig) -> ProviderConfig:
        """Add ``cfg``, or replace the saved configuration with the same id.

        The base URL is normalised and names are stripped. The first provider added (or any,
        while no valid default is set) becomes the default. The key is not touched: store it
        with the ``SecretStore``.

        Args:
            cfg: The configuration.

        Returns:
            The configuration as stored.

        Raises:
            InvalidInput: ``cfg`` is read-only (the Environment provider is never saved,
                ``reason="read_only"``), its name is empty (``key="name"``,
                ``reason="empty"``), or its base URL is invalid (``key="base_url"``).
        """
        if cfg.read_only or cfg.id == ENVIRONMENT_PROVIDER_ID:
            raise InvalidInput("read-only providers are not saved", key="id", reason="read_only")
        if not cfg.id.strip():
            raise InvalidInput("provider without an id", key="id", reason="missing_id")
        name = cfg.name.strip()
        if not name:
            raise InvalidInput("provider without a name", key="name", reason="empty")
        endpoint = self._embeddings_endpoint()
        stored = ProviderConfig(
            id=cfg.id,
            name=name,
            preset=cfg.preset or CUSTOM,
            base_url=_normalise_base_url(cfg.base_url),
            chat_model=cfg.chat_model.strip(),
            background_model=cfg.background_model.strip(),
            embedding_model=cfg.embedding_model.strip(),
            single_system_message=cfg.single_system_message,
        )
        for index, existing in enumerate(self._providers):
            if existing.id == stored.id:
                changed = existing != stored
                self._providers[index] = stored
                break
        else:
            changed = True
            self._providers.append(stored)
        if changed:
            self._notify(PROVIDERS_KEY)
        if not self._default_is_valid():
            self._default_provider_id = stored.id
            self._notify(DEFAULT_PROVIDER_KEY)
        self._notify_endpoint(endpoint)
        return stored

    def remove_provider(self, provider_id: str) -> bool:
        """Remove a saved configuration; its key is not touched (delete it in the SecretStore).

        If it was the default, the first remaining configuration becomes the default (or none).

        Returns:
            Whether a configuration with that id existed.
        """
        remaining = [cfg for cfg in self._providers if cfg.id != provider_id]
        if len(remaining) == len(self._providers):
            return False
        endpoint = self._embeddings_endpoint()
        self._providers = remaining
        self._provider_extras.pop(provider_id, None)
        self._notify(PROVIDERS_KEY)
        if self._default_provider_id == provider_id:
            self._default_provider_id = remaining[0].id if remaining else None
            self._notify(DEFAULT_PROVIDER_KEY)
        self._notify_endpoint(endpoint)
        return True

    @property
    def default_provider_id(self) -> str | None:
        """Id of the default provider: a saved one, the Environment provider's, or ``None``.

        Raises:
            InvalidInput: On assignment, when the id is neither saved nor the Environment
                provider's (``key="default_provider_id"``, ``reason="unknown_provider"``).
        """
        return self._default_provider_id

    @default_provider_id.setter
    def default_provider_id(self, provider_id: str | None) -> None:
        if (
            provider_id is not None
            and provider_id != ENVIRONMENT_PROVIDER_ID
            and self.provider(provider_id) is None
        ):
            raise InvalidInput(
                "no such provider", key=DEFAULT_PROVIDER_KEY, reason="unknown_provider"
            )
        if provider_id != self._default_provider_id:
            endpoint = self._embeddings_endpoint()
            self._default_provider_id = provider_id
            self._notify(DEFAULT_PROVIDER_KEY)
            self._notify_endpoint(endpoint)

    # -- model context sizes ------------------------------------------------------------------

    def model_context_overrides(self) -> dict[str, int]:
        """Return a copy of the user's context-window sizes by model name."""
        return dict(self._model_context)

    def set_model_context(self, model: str, tokens: int | None) -> None:
        """Set the context window of ``model``, or remove the override with ``None``.

        Raises:
            InvalidInput: Empty model name (``key="model"``) or ``tokens`` not an int in
                ``MIN_MODEL_CONTEXT..MAX_MODEL_CONTEXT`` (``key="model_context"``).
        """
        name = model.strip()
        if not name:
            raise InvalidInput("empty model name", key="model", reason="empty")
        if tokens is None:
            if self._model_context.pop(name, None) is not None:
                self._notify(MODEL_CONTEXT_KEY)
            return
        if not _is_context_size(tokens):
            raise InvalidInput(
                f"context size {tokens!r} out of range",
                key=MODEL_CONTEXT_KEY,
                reason="out_of_range",
                minimum=MIN_MODEL_CONTEXT,
                maximum=MAX_MODEL_CONTEXT,
            )
        if self._model_context.get(name) != tokens:
            self._model_context[name] = tokens
            self._notify(MODEL_CONTEXT_KEY)

    # -- per-model image support --------------------------------------------------------------

    def model_vision_overrides(self) -> dict[str, bool]:
        """Return a copy of the user's "accepts images" answers by model name."""
        return dict(self._model_vision)

    def set_model_vision(self, model: str, accepts: bool | None) -> None:
        """Say whether ``model`` accepts images, or let the built-in table decide (``None``).

        Raises:
            InvalidInput: Empty model name (``key="model"``).
        """
        name = model.strip()
        if not name:
            raise InvalidInput("empty model name", key="model", reason="empty")
        if accepts is None:
            if self._model_vision.pop(name, None) is not None:
                self._notify(MODEL_VISION_KEY)
            return
        if self._model_vision.get(name) is not bool(accepts):
            self._model_vision[name] = bool(accepts)
            self._notify(MODEL_VISION_KEY)

    # -- per-model prices ---------------------------------------------------------------------

    def model_prices(self) -> dict[str, ModelPrice]:
        """Return a copy of the user's prices per million tokens by model name."""
        return dict(self._model_prices)

    def set_model_price(self, model: str, price: ModelPrice | None) -> None:
        """Set what a million tokens of ``model`` cost, or remove its price with ``None``.

        Raises:
            InvalidInput: Empty model name (``key="model"``), or a price ``check_price``
                refuses (``key="model_prices"``).
        """
        name = model.strip()
        if not name:
            raise InvalidInput("empty model name", key="model", reason="empty")
        if price is None:
            if self._model_prices.pop(name, None) is not None:
                self._notify(MODEL_PRICES_KEY)
            return
        check_price(price)
        if self._model_prices.get(name) != price:
            self._model_prices[name] = price
            self._notify(MODEL_PRICES_KEY)

    # -- change listeners ---------------------------------------------------------------------

    def subscribe(
        self, callback: Listener, keys: Iterable[str] | None = None
    ) -> Callable[[], None]:
        """Call ``callback(key)`` after each change of ``keys``; return a function that unsubscribes.

        A listener that raises is logged and does not stop the others. Listeners are called in
        the order they subscribed.

        Args:
            callback: Called with the key that changed.
            keys: The keys it follows (see :func:`check_keys`); ``None`` follows every key but
                :data:`EMBEDDINGS_ENDPOINT_KEY`.

        Raises:
            KeyError: One of ``keys`` is not a key the store announces; nothing is subscribed.
        """
        entry = (callback, None if keys is None else check_keys(keys))
        self._listeners.append(entry)

        def unsubscribe() -> None:
            if entry in self._listeners:
                self._listeners.remove(entry)

        return unsubscribe

    # -- internals ----------------------------------------------------------------------------

    def _reset(self) -> None:
        self._version = SCHEMA_VERSION
        self._extra = {}
        self._values = {}
        self._unknown_settings = {}
        self._providers = []
        self._provider_extras = {}
        self._default_provider_id = None
        self._model_context = {}
        self._model_vision = {}
        self._model_prices = {}

    def _notify(self, key: str) -> None:
        for listener, keys in list(self._listeners):
            follows = key in keys if keys is not None else key not in _DETAIL_KEYS
            if not follows:
                continue
            try:
                listener(key)
            except Exception:
                _log.exception("settings listener failed for %s", key)

    def _embeddings_endpoint(self) -> tuple[str | None, str, str, str]:
        # What the registry resolves as the default: the chosen provider, else the first saved
        # one (else the Environment provider, which cannot change while the app runs). The
        # chosen id is part of it, so choosing the Environment provider is a change too.
        chosen = self._default_provider_id
        config = (self.provider(chosen) if chosen else None) or next(iter(self._providers), None)
        if config is None:
            return (chosen, "", "", "")
        return (chosen, config.id, config.base_url, config.embedding_model)

    def _notify_endpoint(self, before: tuple[str | None, str, str, str]) -> None:
        if self._embeddings_endpoint() != before:
            self._notify(EMBEDDINGS_ENDPOINT_KEY)

    def _default_is_valid(self) -> bool:
        current = self._default_provider_id
        return current is not None and (
            current == ENVIRONMENT_PROVIDER_ID or self.provider(current) is not None
        )

    def _quarantine(self, reason: str) -> None:
        stamp = self._clock().strftime("%Y%m%d-%H%M%S")
        target = self._path.with_name(f"{self._path.name}.corrupt-{stamp}")
        counter = 1
        while target.exists():
            counter += 1
            target = self._path.with_name(f"{self._path.name}.corrupt-{stamp}-{counter}")
        try:
            os.replace(self._path, target)
        except OSError as exc:
            self.load_problem = redact(f"{reason}; could not move it aside: {exc}")
        else:
            self.corrupt_backup = target
            self.load_problem = redact(f"{reason}; moved to {target.name}")
        _log.warning("settings file %s: %s", self._path, self.load_problem)

    def _load_document(self, data: dict[str, Any], problems: list[str], invalid: list[str]) -> None:
        self._extra = {k: v for k, v in data.items() if k not in _KNOWN_TOP_LEVEL}
        version = data.get(_VERSION)
        if isinstance(version, int) and not isinstance(version, bool):
            self._version = version
        self._load_settings(data.get(_SETTINGS, {}), problems, invalid)
        self._load_providers(data.get(PROVIDERS_KEY, []), problems)
        self._load_default(data.get(DEFAULT_PROVIDER_KEY), problems)
        self._load_model_context(data.get(MODEL_CONTEXT_KEY, {}), problems)
        self._load_model_vision(data.get(MODEL_VISION_KEY, {}), problems)
        self._load_model_prices(data.get(MODEL_PRICES_KEY, {}), problems)

    def _load_settings(self, section: object, problems: list[str], invalid: list[str]) -> None:
        if not isinstance(section, dict):
            problems.append(f"'{_SETTINGS}' is not an object; using defaults")
            return
        for key, value in section.items():
            try:
                spec = spec_for(key)
            except KeyError:
                self._unknown_settings[key] = value
                continue
            try:
                self._values[key] = validate(spec, value)
            except InvalidInput as exc:
                invalid.append(key)
                problems.append(f"{key}: {exc.params.get('reason')}; using the default")
        self._interpret_memories_per_message(section)

    def _interpret_memories_per_message(self, section: dict[str, Any]) -> None:
        # Files from before "All that fit" have only the number. Automatic (the new default)
        # keeps that number for when retrieval chooses, which is what a user who raised it
        # wanted; a user who lowered it below the default asked for fewer memories, and sending
        # the whole store instead would go against that, so they keep a fixed number.
        top_k = "memory.retrieval_top_k"
        if "memory.per_message" in section or top_k not in self._values:
            return
        default = spec_for(top_k).default
        if isinstance(default, int) and self.get_int(top_k) < default:
            self._values["memory.per_message"] = "fixed"

    def _load_providers(self, section: object, problems: list[str]) -> None:
        if not isinstance(section, list):
            problems.append(f"'{PROVIDERS_KEY}' is not a list; no providers loaded")
            return
        for position, entry in enumerate(section):
            if not isinstance(entry, dict):
                problems.append(f"provider #{position} is not an object; skipped")
                continue
            try:
                cfg = ProviderConfig.from_dict(entry)
            except InvalidInput:
                problems.append(f"provider #{position} has no id; skipped")
                continue
            if cfg.id == ENVIRONMENT_PROVIDER_ID or self.provider(cfg.id) is not None:
                problems.append(f"provider #{position} has a reserved or duplicate id; skipped")
                continue
            self._providers.append(cfg)
            known = set(cfg.to_dict())
            extras = {k: v for k, v in entry.items() if k not in known}
            if extras:
                self._provider_extras[cfg.id] = extras

    def _load_default(self, value: object, problems: list[str]) -> None:
        if value is None or isinstance(value, str):
            self._default_provider_id = value or None
        else:
            problems.append(f"'{DEFAULT_PROVIDER_KEY}' is not a string; no default")

    def _load_model_context(self, section: object, problems: list[str]) -> None:
        if not isinstance(section, dict):
            problems.append(f"'{MODEL_CONTEXT_KEY}' is not an object; no overrides loaded")
            return
        for model, tokens in section.items():
            if isinstance(model, str) and model.strip() and _is_context_size(tokens):
                self._model_context[model.strip()] = tokens
            else:
                problems.append(f"context size for {model!r} is invalid; skipped")

    def _load_model_vision(self, section: object, problems: list[str]) -> None:
        if not isinstance(section, dict):
            problems.append(f"'{MODEL_VISION_KEY}' is not an object; no answers loaded")
            return
        for model, accepts in section.items():
            if isinstance(model, str) and model.strip() and isinstance(accepts, bool):
                self._model_vision[model.strip()] = accepts
            else:
                problems.append(f"image support for {model!r} is invalid; skipped")

    def _load_model_prices(self, section: object, problems: list[str]) -> None:
        if not isinstance(section, dict):
            problems.append(f"'{MODEL_PRICES_KEY}' is not an object; no prices loaded")
            return
        for model, entry in section.items():
            try:
                if not isinstance(model, str) or not model.strip():
                    raise InvalidInput("no model name", reason="empty")
                self._model_prices[model.strip()] = ModelPrice.from_json(entry)
            except InvalidInput:
                problems.append(f"price for {model!r} is invalid; skipped")


def _is_context_size(tokens: object) -> bool:
    return (
        isinstance(tokens, int)
        and not isinstance(tokens, bool)
        and MIN_MODEL_CONTEXT <= tokens <= MAX_MODEL_CONTEXT
    )
