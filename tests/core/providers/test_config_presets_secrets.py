from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import keyring.backend
import keyring.errors
import pytest
from keyring.backends import chainer, fail, null

from etos_desktop.core.errors import InvalidInput, StorageError
from etos_desktop.core.providers import secrets as secrets_module
from etos_desktop.core.providers.config import (
    ProviderConfig,
    environment_provider,
    new_provider_id,
    normalise_base_url,
)
from etos_desktop.core.providers.presets import (
    LOCAL_CANDIDATES,
    PRESETS,
    preset,
    preset_for_url,
)
from etos_desktop.core.providers.secrets import SERVICE, SecretStore
from etos_desktop.core.settings import paths

KEY = "sk-test-SECRET-0123456789abcdef"
OTHER_KEY = "sk-other-SECRET-zyxwvutsrq"

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for name in ("HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA"):
        monkeypatch.setenv(name, str(home))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    for name in ("ETOS_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)

    def no_real_keyring() -> None:
        raise AssertionError("a test reached for the real keyring")

    monkeypatch.setattr(secrets_module.keyring, "get_keyring", no_real_keyring)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


class MemoryKeyring(keyring.backend.KeyringBackend):
    """An in-memory keyring backend, so no test ever reaches the OS keyring."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.entries[(service, username)]
        except KeyError:
            raise keyring.errors.PasswordDeleteError("not found") from None


class LockedKeyring(MemoryKeyring):
    """A keyring that exists but fails when used (locked, D-Bus gone)."""

    def __init__(self, *, fail_on: str) -> None:
        super().__init__()
        self.fail_on = fail_on

    def _maybe_fail(self, operation: str) -> None:
        if operation == self.fail_on:
            raise keyring.errors.KeyringLocked(f"locked while handling {KEY}")

    def get_password(self, service: str, username: str) -> str | None:
        self._maybe_fail("get")
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        self._maybe_fail("set")
        super().set_password(service, username, password)

    def delete_password(self, service: str, username: str) -> None:
        self._maybe_fail("delete")
        super().delete_password(service, username)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _file_keys(path: Path) -> dict[str, str]:
    document = json.loads(path.read_text(encoding="utf-8"))
    keys = document["keys"]
    assert isinstance(keys, dict)
    return keys


# -- presets ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "url", "needs_key", "local"),
    [
        ("openai", "https://api.openai.com/v1", True, False),
        ("deepseek", "https://api.deepseek.com/v1", True, False),
        ("moonshot", "https://api.moonshot.cn/v1", True, False),
        ("qwen", "https://dashscope.aliyuncs.com/compatible-mode/v1", True, False),
        ("zhipu", "https://open.bigmodel.cn/api/paas/v4", True, False),
        ("siliconflow", "https://api.siliconflow.cn/v1", True, False),
        ("openrouter", "https://openrouter.ai/api/v1", True, False),
        ("ollama", "http://localhost:11434/v1", False, True),
        ("lmstudio", "http://localhost:1234/v1", False, True),
        ("custom", "", False, False),
    ],
)
def test_presets(key: str, url: str, needs_key: bool, local: bool) -> None:
    found = preset(key)
    assert found.key == key
    assert found.base_url == url
    assert found.needs_key is needs_key
    assert found.local is local
    assert found.name
    if url:
        assert normalise_base_url(url) == url
    assert found.docs_url == "" or found.docs_url.startswith("https://")


def test_preset_list_is_complete_and_unique() -> None:
    keys = [p.key for p in PRESETS]
    assert len(keys) == len(set(keys)) == 10


def test_local_candidates() -> None:
    assert LOCAL_CANDIDATES == ("http://localhost:11434/v1", "http://localhost:1234/v1")


def test_unknown_preset() -> None:
    with pytest.raises(KeyError):
        preset("nope")


def test_preset_for_url() -> None:
    found = preset_for_url("HTTPS://API.DEEPSEEK.COM/v1/ ")
    assert found is not None
    assert found.key == "deepseek"
    assert preset_for_url("https://example.com/v1") is None
    assert preset_for_url("") is None


# -- provider configuration -------------------------------------------------------------------


def test_config_round_trip() -> None:
    cfg = ProviderConfig(
        id="abc",
        name="Mine",
        preset="qwen",
        base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
        chat_model="qwen-plus",
        background_model="qwen-turbo",
        embedding_model="text-embedding-v3",
        single_system_message=True,
    )
    assert ProviderConfig.from_dict(cfg.to_dict()) == cfg
    assert json.loads(json.dumps(cfg.to_dict())) == cfg.to_dict()


def test_from_dict_is_tolerant() -> None:
    cfg = ProviderConfig.from_dict(
        {"id": " x ", "base_url": "http://h/v1", "api_key": KEY, "chat_model": 5, "read_only": 1}
    )
    assert cfg == ProviderConfig(id="x", name="x", preset="custom", base_url="http://h/v1")
    assert "api_key" not in cfg.to_dict()
    assert KEY not in repr(cfg)


@pytest.mark.parametrize("data", [{}, {"id": ""}, {"id": 7}, {"name": "n"}])
def test_from_dict_needs_an_id(data: dict[str, object]) -> None:
    with pytest.raises(InvalidInput) as caught:
        ProviderConfig.from_dict(data)
    assert caught.value.params["reason"] == "missing_id"


def test_background_model_or_chat() -> None:
    cfg = ProviderConfig(id="a", name="a", preset="custom", base_url="", chat_model="chat")
    assert cfg.background_model_or_chat == "chat"
    other = ProviderConfig(
        id="a", name="a", preset="custom", base_url="", chat_model="chat", background_model="bg"
    )
    assert other.background_model_or_chat == "bg"


def test_new_provider_id_is_unique() -> None:
    ids = {new_provider_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(isinstance(i, str) and i for i in ids)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("  https://api.openai.com/v1//  ", "https://api.openai.com/v1"),
        ("HTTP://localhost:11434/v1/", "http://localhost:11434/v1"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("https://host/", "https://host"),
        ("http://[::1]:1234/v1", "http://[::1]:1234/v1"),
    ],
)
def test_normalise_base_url(raw: str, expected: str) -> None:
    assert normalise_base_url(raw) == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("api.openai.com/v1", "scheme"),
        ("ftp://example.com", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("https://", "host"),
        ("https:///v1", "host"),
        ("http://[::1", "host"),
        ("https://exa mple.com", "whitespace"),
        (f"https://user:{KEY}@example.com/v1", "credentials"),
    ],
)
def test_normalise_base_url_rejects(raw: str, reason: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        normalise_base_url(raw)
    assert caught.value.params == {"key": "base_url", "reason": reason}
    assert KEY not in str(caught.value)


def test_no_environment_provider() -> None:
    assert environment_provider({}) is None
    assert environment_provider({"OPENAI_API_KEY": "  ", "OPENAI_BASE_URL": ""}) is None
    assert environment_provider({"OPENAI_MODEL": "gpt-4o"}) is None


def test_environment_provider_key_only() -> None:
    cfg = environment_provider({"OPENAI_API_KEY": KEY})
    assert cfg == ProviderConfig(
        id="env",
        name="Environment",
        preset="openai",
        base_url="https://api.openai.com/v1",
        read_only=True,
    )
    assert KEY not in repr(cfg)
    assert KEY not in json.dumps(cfg.to_dict())


def test_environment_provider_base_url_only_for_local_servers() -> None:
    cfg = environment_provider({"OPENAI_BASE_URL": "http://localhost:11434/v1/"})
    assert cfg is not None
    assert cfg.base_url == "http://localhost:11434/v1"
    assert cfg.preset == "ollama"
    assert cfg.read_only is True
    assert cfg.chat_model == ""


def test_environment_provider_with_everything() -> None:
    cfg = environment_provider(
        {
            "OPENAI_BASE_URL": "https://gateway.example.com/v1",
            "OPENAI_API_KEY": KEY,
            "OPENAI_MODEL": " my-model ",
        }
    )
    assert cfg is not None
    assert cfg.preset == "custom"
    assert cfg.base_url == "https://gateway.example.com/v1"
    assert cfg.chat_model == "my-model"
    assert cfg.background_model_or_chat == "my-model"


def test_environment_provider_bad_url() -> None:
    with pytest.raises(InvalidInput) as caught:
        environment_provider({"OPENAI_BASE_URL": "localhost:11434", "OPENAI_API_KEY": KEY})
    assert caught.value.params == {"key": "OPENAI_BASE_URL", "reason": "scheme"}
    assert KEY not in str(caught.value)


# -- secrets: keyring -------------------------------------------------------------------------


def test_keyring_round_trip(data: Path) -> None:
    backend = MemoryKeyring()
    store = SecretStore(data, backend=backend)
    assert store.using_file_fallback is False
    assert store.fallback_path == data / "secrets.json"
    assert store.get("p1") is None
    store.set("p1", f"  {KEY}\n")
    assert backend.entries == {(SERVICE, "p1"): KEY}
    assert SERVICE == "ETOS Desktop"
    assert store.get("p1") == KEY
    store.delete("p1")
    assert store.get("p1") is None
    store.delete("p1")  # deleting a missing key is fine
    assert not store.fallback_path.exists()


def test_blank_key_deletes(data: Path) -> None:
    backend = MemoryKeyring()
    store = SecretStore(data, backend=backend)
    store.set("p1", KEY)
    store.set("p1", "   ")
    assert backend.entries == {}


@pytest.mark.parametrize("bad", [f"{KEY}\x00", f"sk-a b{KEY}", f"{KEY}\u200b"])
def test_keys_with_control_characters_are_refused(data: Path, bad: str) -> None:
    store = SecretStore(data, backend=MemoryKeyring())
    with pytest.raises(InvalidInput) as caught:
        store.set("p1", bad)
    assert caught.value.params == {"key": "api_key", "reason": "control_characters"}
    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value)


def test_environment_key_is_never_stored(data: Path) -> None:
    backend = MemoryKeyring()
    store = SecretStore(data, backend=backend)
    with pytest.raises(InvalidInput) as caught:
        store.set("env", KEY)
    assert caught.value.params["reason"] == "read_only"
    with pytest.raises(InvalidInput):
        store.set("", KEY)
    assert backend.entries == {}


def test_env_key() -> None:
    assert SecretStore.env_key({"OPENAI_API_KEY": f" {KEY} "}) == KEY
    assert SecretStore.env_key({"OPENAI_API_KEY": "  "}) is None
    assert SecretStore.env_key({}) is None


# -- secrets: file fallback -------------------------------------------------------------------


@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring()], ids=["fail", "null"])
def test_unusable_backend_uses_private_file(
    data: Path, backend: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        store = SecretStore(data, backend=backend)
        assert store.using_file_fallback is True
        store.set("p1", KEY)
        store.set("p2", OTHER_KEY)
    assert store.get("p1") == KEY
    assert _file_keys(store.fallback_path) == {"p1": KEY, "p2": OTHER_KEY}
    store.delete("p1")
    assert store.get("p1") is None
    assert _file_keys(store.fallback_path) == {"p2": OTHER_KEY}
    assert KEY not in caplog.text
    assert "secrets.json" in caplog.text
    assert sorted(p.name for p in data.iterdir()) == ["secrets.json"]


class EmptyChainer(chainer.ChainerBackend):
    """A chainer that found no backends (monkeypatching ``backends`` would first read it, which
    instantiates every installed backend)."""

    backends = ()  # type: ignore[assignment]


def test_empty_chainer_is_unusable(data: Path) -> None:
    store = SecretStore(data, backend=EmptyChainer())
    assert store.using_file_fallback is True


@posix_only
def test_fallback_file_is_0600_in_a_0700_dir(tmp_path: Path) -> None:
    data = tmp_path / "not-yet"
    old_umask = os.umask(0)
    try:
        store = SecretStore(data, backend=fail.Keyring())
        store.set("p1", KEY)
    finally:
        os.umask(old_umask)
    assert _mode(data) == 0o700
    assert _mode(store.fallback_path) == 0o600


@posix_only
def test_loose_fallback_file_mode_is_tightened(data: Path) -> None:
    path = data / "secrets.json"
    path.write_text(json.dumps({"version": 1, "keys": {"p1": KEY}}), encoding="utf-8")
    path.chmod(0o644)
    store = SecretStore(data, backend=fail.Keyring())
    assert store.get("p1") == KEY
    assert _mode(path) == 0o600


def test_default_backend_comes_from_keyring(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets_module.keyring, "get_keyring", fail.Keyring)
    assert SecretStore(data).using_file_fallback is True
    memory = MemoryKeyring()
    monkeypatch.setattr(secrets_module.keyring, "get_keyring", lambda: memory)
    store = SecretStore(data)
    assert store.using_file_fallback is False
    store.set("p1", KEY)
    assert memory.entries == {(SERVICE, "p1"): KEY}


@pytest.mark.logs(r"keyring unavailable \(RuntimeError\)")
def test_broken_keyring_installation_falls_back(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> object:
        raise RuntimeError("backend init failed")

    monkeypatch.setattr(secrets_module.keyring, "get_keyring", broken)
    assert SecretStore(data).using_file_fallback is True


@pytest.mark.parametrize("fail_on", ["get", "set", "delete"])
def test_keyring_error_on_use_switches_to_file(
    data: Path, fail_on: str, caplog: pytest.LogCaptureFixture
) -> None:
    backend = LockedKeyring(fail_on=fail_on)
    store = SecretStore(data, backend=backend)
    assert store.using_file_fallback is False
    with caplog.at_level(logging.WARNING):
        if fail_on == "get":
            assert store.get("p1") is None
        elif fail_on == "set":
            store.set("p1", KEY)
        else:
            store.delete("p1")
    assert store.using_file_fallback is True
    store.set("p2", OTHER_KEY)
    assert store.get("p2") == OTHER_KEY
    assert (SERVICE, "p2") not in backend.entries
    assert _file_keys(store.fallback_path)["p2"] == OTHER_KEY
    if fail_on == "set":
        assert store.get("p1") == KEY
    assert "KeyringLocked" in caplog.text
    assert KEY not in caplog.text
    assert OTHER_KEY not in caplog.text


def test_keys_saved_while_keyring_was_down_are_found_and_migrated(data: Path) -> None:
    SecretStore(data, backend=fail.Keyring()).set("p1", KEY)
    backend = MemoryKeyring()
    store = SecretStore(data, backend=backend)
    assert store.get("p1") == KEY
    store.set("p1", OTHER_KEY)
    assert backend.entries == {(SERVICE, "p1"): OTHER_KEY}
    assert _file_keys(store.fallback_path) == {}
    assert store.get("p1") == OTHER_KEY
    store.delete("p1")
    assert store.get("p1") is None


@pytest.mark.logs(r"could not remove an old key from")
def test_stale_file_copy_that_cannot_be_cleaned_does_not_fail_set(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    SecretStore(data, backend=fail.Keyring()).set("p1", OTHER_KEY)
    backend = MemoryKeyring()
    store = SecretStore(data, backend=backend)

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(paths.os, "replace", disk_full)
    store.set("p1", KEY)
    monkeypatch.undo()
    assert backend.entries == {(SERVICE, "p1"): KEY}
    assert store.get("p1") == KEY


@pytest.mark.parametrize(
    "content",
    [b"{broken", b"[]", b'{"keys": 5}', b"\xff\xfe"],
    ids=["json", "list", "keys", "utf8"],
)
@pytest.mark.logs(r"unreadable key file moved to ")
def test_corrupt_fallback_file_is_moved_aside(data: Path, content: bytes) -> None:
    path = data / "secrets.json"
    path.write_bytes(content)
    store = SecretStore(data, backend=fail.Keyring())
    assert store.get("p1") is None
    moved = [p for p in data.iterdir() if p.name.startswith("secrets.json.corrupt-")]
    assert len(moved) == 1
    assert moved[0].read_bytes() == content
    store.set("p1", KEY)
    assert store.get("p1") == KEY


def test_unreadable_fallback_file_raises_storage_error(data: Path) -> None:
    (data / "secrets.json").mkdir()
    store = SecretStore(data, backend=fail.Keyring())
    with pytest.raises(StorageError):
        store.get("p1")


def test_fallback_write_failure_raises_storage_error_without_key(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SecretStore(data, backend=fail.Keyring())
    store.set("p1", OTHER_KEY)

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(paths.os, "replace", disk_full)
    with pytest.raises(StorageError) as caught:
        store.set("p1", KEY)
    monkeypatch.undo()
    assert caught.value.params["reason"] == "disk_full"
    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value.params)
    assert store.get("p1") == OTHER_KEY


def test_key_never_in_repr_or_str(data: Path) -> None:
    for backend in (MemoryKeyring(), fail.Keyring()):
        store = SecretStore(data, backend=backend)
        store.set("p1", KEY)
        assert KEY not in repr(store)
        assert KEY not in str(store)
    assert "secrets.json" in repr(store)


def test_keys_are_read_from_the_keyring_once_then_remembered(tmp_path):
    class CountingKeyring(keyring.backend.KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.values: dict[tuple[str, str], str] = {}
            self.reads = 0

        def get_password(self, service, username):
            self.reads += 1
            return self.values.get((service, username))

        def set_password(self, service, username, password):
            self.values[(service, username)] = password

        def delete_password(self, service, username):
            self.values.pop((service, username), None)

    backend = CountingKeyring()
    store = SecretStore(tmp_path, backend=backend)
    store.set("p1", "sk-first-key-0001")
    store.warm(["p1", "p2"])
    reads = backend.reads
    assert store.get("p1") == "sk-first-key-0001"
    assert store.get("p2") is None
    assert backend.reads == reads  # remembered, no further keyring calls
    store.set("p1", "sk-second-key-0002")
    assert store.get("p1") == "sk-second-key-0002"
    store.delete("p1")
    assert store.get("p1") is None
