"""API keys: in the OS keyring, or a private file where there is none (DESIGN §9).

Keys are stored per provider id under the keyring service ``"ETOS Desktop"``. When the keyring
is unusable (keyring's ``fail``/``null`` backends, an empty chainer, or any error while using
it) keys go to ``secrets.json`` in the data dir, mode ``0600``, and :attr:`using_file_fallback`
tells the UI to show a visible notice. Keys never appear in logs, exceptions or reprs.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import keyring
from keyring.backends import chainer, fail, null
from keyring.errors import PasswordDeleteError

from etos_desktop.core.errors import InvalidInput, StorageError
from etos_desktop.core.providers.config import ENVIRONMENT_PROVIDER_ID
from etos_desktop.core.settings.paths import (
    APP_NAME,
    atomic_write_private,
    make_private_dir,
    secrets_path,
    storage_error,
)

_log = logging.getLogger(__name__)

#: The keyring service name every key is stored under.
SERVICE = APP_NAME
#: The environment variable the Environment provider's key comes from.
ENV_KEY_VARIABLE = "OPENAI_API_KEY"
_FILE_VERSION = 1


class SecretStore:
    """API keys by provider id.

    Calls into the OS keyring can block (an unlock prompt, a slow D-Bus); callers on the UI
    thread should run them in a worker thread. Keys read once are remembered in this process,
    so after :meth:`warm` the chat path (which resolves the provider on every send) never waits
    on the keyring. Touches no Qt object.

    Args:
        data_dir: The data directory; the fallback file lives there.
        backend: A ``keyring`` backend instance; ``keyring.get_keyring()`` when ``None``.
    """

    def __init__(self, data_dir: Path, *, backend: object | None = None) -> None:
        self._data_dir = data_dir
        self._fallback_path = secrets_path(data_dir)
        chosen = _default_backend() if backend is None else backend
        self._backend: Any = chosen if _is_usable(chosen) else None
        self._backend_name = type(chosen).__name__ if chosen is not None else "none"
        self._cache: dict[str, str | None] = {}
        if self._backend is None:
            _log.warning(
                "no usable keyring (%s); API keys are kept in %s",
                self._backend_name,
                self._fallback_path,
            )

    def __repr__(self) -> str:
        where = f"file={self._fallback_path}" if self.using_file_fallback else "keyring"
        return f"<SecretStore {where} backend={self._backend_name}>"

    @property
    def using_file_fallback(self) -> bool:
        """Whether keys go to :attr:`fallback_path` instead of the OS keyring."""
        return self._backend is None

    @property
    def fallback_path(self) -> Path:
        """The ``0600`` file used when no keyring is usable (it may not exist)."""
        return self._fallback_path

    def get(self, provider_id: str) -> str | None:
        """Return the key of ``provider_id``, or ``None`` when none is stored.

        The keyring is asked first, then the fallback file (which may hold keys saved while
        the keyring was unusable).

        Raises:
            StorageError: The fallback file exists but cannot be read.
        """
        if provider_id in self._cache:
            return self._cache[provider_id]
        value = self._lookup(provider_id)
        self._cache[provider_id] = value
        return value

    def cached(self, provider_id: str) -> tuple[bool, str | None]:
        """``(True, key)`` when the key of ``provider_id`` is known without asking the keyring.

        Never blocks: code on the event loop asks this first and reads the keyring in a worker
        thread only on a miss (``ProviderRegistry.stored_key``).
        """
        if provider_id in self._cache:
            return True, self._cache[provider_id]
        return False, None

    def warm(self, provider_ids: list[str]) -> None:
        """Read these keys now (in a worker thread at start-up) so later reads are instant."""
        for provider_id in provider_ids:
            self.get(provider_id)

    def _lookup(self, provider_id: str) -> str | None:
        if self._backend is not None:
            try:
                value = self._backend.get_password(SERVICE, provider_id)
            except Exception as exc:  # any keyring failure means: use the file from now on
                self._fall_back("get", exc)
            else:
                if isinstance(value, str) and value:
                    return value
        return self._read_file().get(provider_id)

    def set(self, provider_id: str, key: str) -> None:
        """Store ``key`` for ``provider_id``; an empty (or blank) key deletes it.

        Surrounding whitespace is removed (pasted keys often carry a newline).

        Raises:
            InvalidInput: ``provider_id`` is empty or the Environment provider's
                (``reason="read_only"``: its key is never stored), or the key contains control
                characters or inner whitespace (``key="api_key"``,
                ``reason="control_characters"``). The key is never part of the error.
            StorageError: The fallback file could not be written.
        """
        _check_id(provider_id)
        if provider_id == ENVIRONMENT_PROVIDER_ID:
            raise InvalidInput(
                "the Environment provider's key is never stored", key="id", reason="read_only"
            )
        value = key.strip()
        if not value:
            self.delete(provider_id)
            return
        self._cache.pop(provider_id, None)
        if any(ch.isspace() or not ch.isprintable() for ch in value):
            raise InvalidInput(
                "the API key contains control characters or whitespace",
                key="api_key",
                reason="control_characters",
            )
        if self._backend is not None:
            try:
                self._backend.set_password(SERVICE, provider_id, value)
            except Exception as exc:
                self._fall_back("set", exc)
            else:
                try:
                    self._forget_in_file(provider_id)
                except StorageError as exc:
                    # The key is safe in the keyring, which get() asks first; a stale copy in
                    # the file is harmless, so this must not make the save look failed.
                    _log.warning("could not remove an old key from %s: %s", exc.params, exc.code)
                self._cache[provider_id] = value
                return
        keys = self._read_file()
        keys[provider_id] = value
        self._write_file(keys)
        self._cache[provider_id] = value

    def delete(self, provider_id: str) -> None:
        """Remove the key of ``provider_id`` from the keyring and the fallback file, if present.

        Raises:
            StorageError: The fallback file could not be rewritten.
        """
        _check_id(provider_id)
        self._cache.pop(provider_id, None)
        if self._backend is not None:
            try:
                self._backend.delete_password(SERVICE, provider_id)
            except Exception as exc:
                if not _is_not_found(exc):
                    self._fall_back("delete", exc)
        self._forget_in_file(provider_id)
        # Gone from both places: known to be absent, so nobody needs to ask the keyring again.
        self._cache[provider_id] = None

    @staticmethod
    def env_key(env: Mapping[str, str]) -> str | None:
        """Return the Environment provider's key from ``OPENAI_API_KEY`` (never stored).

        Args:
            env: The environment, usually ``os.environ``.

        Returns:
            The key without surrounding whitespace, or ``None`` when unset or blank.
        """
        return env.get(ENV_KEY_VARIABLE, "").strip() or None

    # -- internals ----------------------------------------------------------------------------

    def _fall_back(self, operation: str, exc: BaseException) -> None:
        # Only the exception's type is logged: a backend's message could echo what it was given.
        _log.warning(
            "keyring %s failed (%s); API keys are kept in %s from now on",
            operation,
            type(exc).__name__,
            self._fallback_path,
        )
        self._backend = None

    def _forget_in_file(self, provider_id: str) -> None:
        if not self._fallback_path.exists():
            return
        keys = self._read_file()
        if provider_id in keys:
            del keys[provider_id]
            self._write_file(keys)

    def _read_file(self) -> dict[str, str]:
        path = self._fallback_path
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise storage_error(exc, path) from None
        _tighten_mode(path)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            data = None
        keys = data.get("keys") if isinstance(data, dict) else None
        if not isinstance(keys, dict):
            self._quarantine()
            return {}
        return {k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, str) and v}

    def _write_file(self, keys: dict[str, str]) -> None:
        make_private_dir(self._data_dir)
        text = json.dumps({"version": _FILE_VERSION, "keys": keys}, indent=2, sort_keys=True)
        atomic_write_private(self._fallback_path, (text + "\n").encode("utf-8"))

    def _quarantine(self) -> None:
        # Never overwrite a file we cannot read: it may hold keys the user has nowhere else.
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        target = self._fallback_path.with_name(f"{self._fallback_path.name}.corrupt-{stamp}")
        try:
            os.replace(self._fallback_path, target)
        except OSError as exc:
            raise storage_error(exc, self._fallback_path) from None
        _log.warning("unreadable key file moved to %s", target)


def _default_backend() -> object | None:
    try:
        return keyring.get_keyring()
    except Exception as exc:  # a broken keyring installation must not stop the app
        _log.warning("keyring unavailable (%s)", type(exc).__name__)
        return None


def _is_usable(backend: object | None) -> bool:
    if backend is None:
        return False
    if not all(
        callable(getattr(backend, name, None))
        for name in ("get_password", "set_password", "delete_password")
    ):
        return False
    if isinstance(backend, fail.Keyring | null.Keyring):
        return False
    if isinstance(backend, chainer.ChainerBackend):
        # An empty chainer silently accepts and drops every key.
        return bool(type(backend).backends)
    try:
        priority = getattr(type(backend), "priority", 1)
    except Exception:
        return False
    # keyring's own convention: a priority of 0 or less means "not suitable here".
    return not isinstance(priority, int | float) or priority > 0


def _is_not_found(exc: BaseException) -> bool:
    # Most backends signal "no such key" on delete with PasswordDeleteError.
    return isinstance(exc, PasswordDeleteError)


def _check_id(provider_id: str) -> None:
    if not provider_id:
        raise InvalidInput("empty provider id", key="id", reason="missing_id")


def _tighten_mode(path: Path) -> None:
    if os.name != "posix":
        return
    try:
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
    except OSError:
        pass
