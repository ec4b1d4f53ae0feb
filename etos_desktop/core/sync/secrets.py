"""Sync's secrets, kept in the keyring like API keys (never in sync files, the DB or logs).

Two entries under the app's keyring service: the sync passphrase and the WebDAV password.
"""

from __future__ import annotations

import base64
from typing import Final

from etos_desktop.core.providers.secrets import SecretStore

#: The keyring entry (under the app's service name) that holds the passphrase.
PASSPHRASE_ID: Final = "sync:passphrase"
#: The keyring entry that holds the WebDAV server's password.
WEBDAV_PASSWORD_ID: Final = "sync:webdav-password"


class SyncSecret:
    """Reads and writes one of sync's secrets through the app's :class:`SecretStore`.

    The store refuses whitespace inside a value (it is made for API keys), and a passphrase
    or a password may well hold spaces, so the value is stored base64-encoded.

    Calls may block on the keyring (an unlock prompt): off the UI thread.

    Args:
        secrets: The app's secret store.
        entry: The keyring entry.
    """

    def __init__(self, secrets: SecretStore, entry: str) -> None:
        self._secrets = secrets
        self._entry = entry

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._entry}>"

    def get(self) -> str | None:
        """The stored value, or ``None``."""
        stored = self._secrets.get(self._entry)
        if not stored:
            return None
        try:
            return base64.b64decode(stored, validate=True).decode("utf-8")
        except ValueError:
            return None

    def set(self, value: str) -> None:
        """Store the value; an empty one removes it."""
        if not value:
            self._secrets.delete(self._entry)
            return
        self._secrets.set(self._entry, base64.b64encode(value.encode("utf-8")).decode())


class SyncPassphrase(SyncSecret):
    """The sync passphrase in the keyring.

    Args:
        secrets: The app's secret store.
    """

    def __init__(self, secrets: SecretStore) -> None:
        super().__init__(secrets, PASSPHRASE_ID)


class WebDavPassword(SyncSecret):
    """The WebDAV server's password in the keyring.

    Args:
        secrets: The app's secret store.
    """

    def __init__(self, secrets: SecretStore) -> None:
        super().__init__(secrets, WEBDAV_PASSWORD_ID)
