"""The sync passphrase, kept in the keyring like API keys (never in sync files, the DB or logs)."""

from __future__ import annotations

import base64
from typing import Final

from etos_desktop.core.providers.secrets import SecretStore

#: The keyring entry (under the app's service name) that holds the passphrase.
PASSPHRASE_ID: Final = "sync:passphrase"


class SyncPassphrase:
    """Reads and writes the sync passphrase through the app's :class:`SecretStore`.

    The store refuses whitespace inside a value (it is made for API keys), and a passphrase
    may well be several words, so the passphrase is stored base64-encoded.

    Args:
        secrets: The app's secret store.
    """

    def __init__(self, secrets: SecretStore) -> None:
        self._secrets = secrets

    def __repr__(self) -> str:
        return "<SyncPassphrase>"

    def get(self) -> str | None:
        """The stored passphrase, or ``None``."""
        stored = self._secrets.get(PASSPHRASE_ID)
        if not stored:
            return None
        try:
            return base64.b64decode(stored, validate=True).decode("utf-8")
        except ValueError:
            return None

    def set(self, passphrase: str) -> None:
        """Store the passphrase; an empty one removes it."""
        if not passphrase:
            self._secrets.delete(PASSPHRASE_ID)
            return
        self._secrets.set(PASSPHRASE_ID, base64.b64encode(passphrase.encode("utf-8")).decode())
