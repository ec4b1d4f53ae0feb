"""The sync passphrase lives in the secret store, like API keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.sync.secrets import PASSPHRASE_ID, SyncPassphrase

pytestmark = pytest.mark.logs(r"no usable keyring")


def test_a_passphrase_of_several_words_round_trips(isolated_environment: Path) -> None:
    store = SecretStore(isolated_environment)
    passphrase = SyncPassphrase(store)
    assert passphrase.get() is None
    passphrase.set("blue lantern 市场 47")
    assert SyncPassphrase(SecretStore(isolated_environment)).get() == "blue lantern 市场 47"
    assert store.get(PASSPHRASE_ID) is not None
    assert "lantern" not in repr(passphrase)
    passphrase.set("")
    assert SyncPassphrase(SecretStore(isolated_environment)).get() is None
