from __future__ import annotations

import errno
import json
import logging
import os
import stat
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.errors import InvalidInput, StorageError
from etos_desktop.core.providers.config import ENVIRONMENT_PROVIDER_ID, ProviderConfig
from etos_desktop.core.settings import paths
from etos_desktop.core.settings.store import (
    DEFAULT_PROVIDER_KEY,
    EMBEDDINGS_ENDPOINT_KEY,
    MODEL_CONTEXT_KEY,
    PROVIDERS_KEY,
    STORE_KEYS,
    SettingsStore,
    check_keys,
)

FIXED = datetime(2024, 5, 6, 7, 8, 9)


def _clock() -> datetime:
    return FIXED


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder / "settings.json"


@pytest.fixture
def store(settings_file: Path) -> SettingsStore:
    result = SettingsStore(settings_file, clock=_clock)
    result.load()
    return result


def _reloaded(path: Path) -> SettingsStore:
    result = SettingsStore(path, clock=_clock)
    result.load()
    return result


def _provider(provider_id: str = "p1", **changes: Any) -> ProviderConfig:
    fields: dict[str, Any] = {
        "id": provider_id,
        "name": f"Provider {provider_id}",
        "preset": "deepseek",
        "base_url": "https://api.deepseek.com/v1",
        "chat_model": "deepseek-chat",
    }
    fields.update(changes)
    return ProviderConfig(**fields)


# -- loading ----------------------------------------------------------------------------------


def test_missing_file_gives_defaults_and_creates_nothing(
    store: SettingsStore, settings_file: Path
) -> None:
    assert store.get("chat.temperature") == 0.7
    assert store.get("ui.language") == "auto"
    assert store.load_problem is None
    assert store.providers() == []
    assert store.default_provider_id is None
    assert store.model_context_overrides() == {}
    assert not settings_file.exists()


def test_round_trip(store: SettingsStore, settings_file: Path) -> None:
    store.set("chat.temperature", 1.25)
    store.set("ui.theme", "dark")
    store.set("chat.auto_title", False)
    store.save()
    again = _reloaded(settings_file)
    assert again.get("chat.temperature") == 1.25
    assert again.get("ui.theme") == "dark"
    assert again.get("chat.auto_title") is False
    assert again.load_problem is None


def test_file_layout_holds_only_values_the_user_set(
    store: SettingsStore, settings_file: Path
) -> None:
    store.set("ui.theme", "light")
    store.save()
    document = json.loads(settings_file.read_text(encoding="utf-8"))
    assert document["version"] == 1
    assert document["settings"] == {"ui.theme": "light"}
    assert document["providers"] == []
    assert document["default_provider_id"] is None
    assert document["model_context"] == {}


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_saved_file_is_0600(store: SettingsStore, settings_file: Path) -> None:
    old_umask = os.umask(0)
    try:
        store.save()
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o600


def test_save_before_load_refuses_to_overwrite(settings_file: Path) -> None:
    settings_file.write_text('{"settings": {"ui.theme": "dark"}}', encoding="utf-8")
    with pytest.raises(RuntimeError):
        SettingsStore(settings_file).save()
    assert "dark" in settings_file.read_text(encoding="utf-8")


def test_save_creates_missing_parent(tmp_path: Path) -> None:
    target = tmp_path / "new" / "settings.json"
    SettingsStore(target).save()
    assert target.is_file()


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2, 3]", b'"text"', b"\xff\xfe\x00garbage", b""],
    ids=["broken", "list", "string", "not-utf8", "empty"],
)
@pytest.mark.logs(r"settings\.store: settings file .*; moved to settings\.json\.corrupt-")
def test_corrupt_file_is_moved_aside_and_defaults_used(settings_file: Path, content: bytes) -> None:
    settings_file.write_bytes(content)
    store = _reloaded(settings_file)
    backup = settings_file.with_name("settings.json.corrupt-20240506-070809")
    assert store.corrupt_backup == backup
    assert backup.read_bytes() == content
    assert not settings_file.exists()
    assert store.load_problem is not None
    assert "settings.json.corrupt-20240506-070809" in store.load_problem
    assert store.get("ui.theme") == "system"
    store.save()
    assert backup.read_bytes() == content
    assert json.loads(settings_file.read_text(encoding="utf-8"))["settings"] == {}


@pytest.mark.logs(r"settings\.store: settings file .*; moved to settings\.json\.corrupt-")
def test_corrupt_backup_name_never_overwrites_an_earlier_one(settings_file: Path) -> None:
    settings_file.write_bytes(b"first{")
    _reloaded(settings_file)
    settings_file.write_bytes(b"second{")
    store = _reloaded(settings_file)
    first = settings_file.with_name("settings.json.corrupt-20240506-070809")
    second = settings_file.with_name("settings.json.corrupt-20240506-070809-2")
    assert first.read_bytes() == b"first{"
    assert second.read_bytes() == b"second{"
    assert store.corrupt_backup == second


@pytest.mark.logs(r"settings file .*unreadable: .*; moved to settings\.json\.corrupt-")
def test_unreadable_file_is_moved_aside(settings_file: Path) -> None:
    # A directory where the file should be: reading it fails with an OSError on every OS.
    settings_file.mkdir()
    (settings_file / "inside").write_text("user data")
    store = _reloaded(settings_file)
    assert store.load_problem is not None
    assert store.load_problem.startswith("unreadable")
    assert store.corrupt_backup is not None
    assert (store.corrupt_backup / "inside").read_text() == "user data"


@pytest.mark.logs(r"settings file .*chat\.temperature: out_of_range; using the default")
def test_invalid_values_fall_back_to_defaults(settings_file: Path) -> None:
    settings_file.write_text(
        json.dumps(
            {
                "settings": {
                    "chat.temperature": 9.0,
                    "ui.theme": "purple",
                    "chat.auto_title": "yes",
                    "chat.max_output_tokens": 4096,
                }
            }
        ),
        encoding="utf-8",
    )
    store = _reloaded(settings_file)
    assert store.get("chat.temperature") == 0.7
    assert store.get("ui.theme") == "system"
    assert store.get("chat.auto_title") is True
    assert store.get("chat.max_output_tokens") == 4096
    assert set(store.invalid_keys) == {"chat.temperature", "ui.theme", "chat.auto_title"}
    assert store.load_problem is not None
    assert "chat.temperature" in store.load_problem
    assert store.corrupt_backup is None
    assert settings_file.exists()


@pytest.mark.logs(r"settings file .*'settings' is not an object; using defaults")
def test_sections_of_the_wrong_type_are_reported(settings_file: Path) -> None:
    settings_file.write_text(
        json.dumps(
            {
                "settings": [1],
                "providers": {"a": 1},
                "default_provider_id": 5,
                "model_context": [],
            }
        ),
        encoding="utf-8",
    )
    store = _reloaded(settings_file)
    assert store.get("ui.theme") == "system"
    assert store.providers() == []
    assert store.default_provider_id is None
    assert store.model_context_overrides() == {}
    assert store.load_problem is not None
    for section in ("settings", "providers", "default_provider_id", "model_context"):
        assert section in store.load_problem


def test_unknown_keys_are_preserved(settings_file: Path) -> None:
    settings_file.write_text(
        json.dumps(
            {
                "version": 7,
                "future_section": {"x": [1, 2]},
                "settings": {"future.setting": "keep me", "ui.theme": "dark"},
                "providers": [
                    {
                        "id": "p1",
                        "name": "Mine",
                        "preset": "openai",
                        "base_url": "https://api.openai.com/v1",
                        "future_field": {"nested": True},
                    }
                ],
                "default_provider_id": "p1",
            }
        ),
        encoding="utf-8",
    )
    store = _reloaded(settings_file)
    assert store.load_problem is None
    store.set("chat.temperature", 0.3)
    store.upsert_provider(_provider("p1", chat_model="gpt-4o"))
    store.save()
    document = json.loads(settings_file.read_text(encoding="utf-8"))
    assert document["version"] == 7
    assert document["future_section"] == {"x": [1, 2]}
    assert document["settings"] == {
        "future.setting": "keep me",
        "ui.theme": "dark",
        "chat.temperature": 0.3,
    }
    assert document["providers"][0]["future_field"] == {"nested": True}
    assert document["providers"][0]["chat_model"] == "gpt-4o"


@pytest.mark.logs(r"settings file .*provider #1 is not an object; skipped")
def test_bad_provider_entries_are_skipped(settings_file: Path) -> None:
    good = _provider("ok").to_dict()
    settings_file.write_text(
        json.dumps(
            {"providers": [good, "nope", {"name": "no id"}, dict(good), {**good, "id": "env"}]}
        ),
        encoding="utf-8",
    )
    store = _reloaded(settings_file)
    assert [cfg.id for cfg in store.providers()] == ["ok"]
    assert store.load_problem is not None
    assert "#1" in store.load_problem
    assert "#2" in store.load_problem
    assert "#3" in store.load_problem
    assert "#4" in store.load_problem


def test_reload_replaces_memory_state(store: SettingsStore, settings_file: Path) -> None:
    store.set("ui.theme", "dark")
    store.load()
    assert store.get("ui.theme") == "system"


# -- saving failures --------------------------------------------------------------------------


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_disk_full_keeps_old_file_and_raises(
    store: SettingsStore, settings_file: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    store.set("ui.theme", "dark")
    store.save()
    before = settings_file.read_bytes()
    store.set("ui.theme", "light")

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(paths.os, failing, disk_full)
    with pytest.raises(StorageError) as caught:
        store.save()
    monkeypatch.undo()
    assert caught.value.params["reason"] == "disk_full"
    assert settings_file.read_bytes() == before
    assert sorted(p.name for p in settings_file.parent.iterdir()) == ["settings.json"]
    # The change is still in memory and a later save succeeds.
    store.save()
    assert _reloaded(settings_file).get("ui.theme") == "light"


def test_unwritable_dir_keeps_old_file(
    store: SettingsStore, settings_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a read-only directory does, simulated so it also runs as root (which ignores modes).
    store.save()
    before = settings_file.read_bytes()
    store.set("ui.theme", "dark")

    def denied(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(paths.tempfile, "mkstemp", denied)
    with pytest.raises(StorageError) as caught:
        store.save()
    assert caught.value.params["reason"] == "permission"
    assert settings_file.read_bytes() == before


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs POSIX modes and a non-root user"
)
def test_read_only_dir_keeps_old_file(store: SettingsStore, settings_file: Path) -> None:
    store.save()
    before = settings_file.read_bytes()
    store.set("ui.theme", "dark")
    settings_file.parent.chmod(0o500)
    try:
        with pytest.raises(StorageError):
            store.save()
    finally:
        settings_file.parent.chmod(0o700)
    assert settings_file.read_bytes() == before


# -- get / set --------------------------------------------------------------------------------


def test_set_validates(store: SettingsStore) -> None:
    with pytest.raises(InvalidInput) as caught:
        store.set("chat.temperature", 3)
    assert caught.value.params == {
        "key": "chat.temperature",
        "reason": "out_of_range",
        "minimum": 0.0,
        "maximum": 2.0,
    }
    assert store.get("chat.temperature") == 0.7


def test_unknown_key_is_a_key_error(store: SettingsStore) -> None:
    with pytest.raises(KeyError):
        store.get("nope.nope")
    with pytest.raises(KeyError):
        store.set("nope.nope", 1)


def test_set_converts_types(store: SettingsStore) -> None:
    store.set("chat.temperature", 1)
    assert store.get_float("chat.temperature") == 1.0
    store.set("chat.max_output_tokens", 512.0)
    assert store.get_int("chat.max_output_tokens") == 512


def test_typed_getters(store: SettingsStore) -> None:
    assert store.get_bool("memory.enabled") is True
    assert store.get_int("chat.max_output_tokens") == 2048
    assert store.get_float("chat.temperature") == 0.7
    assert store.get_str("ui.language") == "auto"
    with pytest.raises(TypeError):
        store.get_int("memory.enabled")
    with pytest.raises(TypeError):
        store.get_bool("chat.max_output_tokens")
    with pytest.raises(TypeError):
        store.get_float("ui.language")
    with pytest.raises(TypeError):
        store.get_str("chat.temperature")


def test_reset(store: SettingsStore) -> None:
    store.set("ui.theme", "dark")
    store.reset("ui.theme")
    assert store.get("ui.theme") == "system"


# -- listeners --------------------------------------------------------------------------------


def test_listeners_hear_changes_only(store: SettingsStore) -> None:
    heard: list[str] = []
    unsubscribe = store.subscribe(heard.append)
    store.set("ui.theme", "dark")
    store.set("ui.theme", "dark")
    store.reset("ui.theme")
    store.reset("ui.theme")
    assert heard == ["ui.theme", "ui.theme"]
    unsubscribe()
    unsubscribe()
    store.set("ui.theme", "light")
    assert heard == ["ui.theme", "ui.theme"]


def test_failing_listener_does_not_stop_others(
    store: SettingsStore, caplog: pytest.LogCaptureFixture
) -> None:
    heard: list[str] = []

    def broken(key: str) -> None:
        raise RuntimeError("listener bug")

    store.subscribe(broken)
    store.subscribe(heard.append)
    with caplog.at_level(logging.ERROR):
        store.set("ui.theme", "dark")
    assert heard == ["ui.theme"]
    assert "listener" in caplog.text


def test_provider_and_context_changes_are_announced(store: SettingsStore) -> None:
    heard: list[str] = []
    store.subscribe(heard.append)
    store.upsert_provider(_provider("a"))
    store.upsert_provider(_provider("a"))  # unchanged: no event
    store.set_model_context("m", 4096)
    store.set_model_context("m", 4096)
    store.remove_provider("a")
    assert heard == [
        PROVIDERS_KEY,
        DEFAULT_PROVIDER_KEY,
        MODEL_CONTEXT_KEY,
        PROVIDERS_KEY,
        DEFAULT_PROVIDER_KEY,
    ]


def test_a_listener_hears_only_the_keys_it_follows(store: SettingsStore) -> None:
    heard: list[str] = []
    store.subscribe(heard.append, keys=["ui.theme", PROVIDERS_KEY])
    store.set("ui.theme", "dark")
    store.set("chat.temperature", 0.2)
    store.upsert_provider(_provider("a"))  # the first one becomes the default, too
    store.set_model_context("m", 4096)
    assert heard == ["ui.theme", PROVIDERS_KEY]


def test_a_mistyped_key_raises_when_subscribing_and_nothing_is_subscribed(
    store: SettingsStore,
) -> None:
    heard: list[str] = []
    with pytest.raises(KeyError, match=r"memory\.strictnes\b"):
        store.subscribe(heard.append, keys=["memory.strictness", "memory.strictnes"])
    store.set("memory.strictness", "strict")
    assert heard == []


def test_keys_are_checked_against_the_schema_and_the_stores_own_keys() -> None:
    assert check_keys(["ui.theme", *STORE_KEYS]) == {"ui.theme", *STORE_KEYS}
    with pytest.raises(KeyError, match=r"no such setting: memory, ui\.colour"):
        check_keys(["ui.colour", "memory", "ui.theme"])  # a section is not a key either


def test_the_embeddings_endpoint_is_announced_when_what_picks_it_changes(
    store: SettingsStore,
) -> None:
    heard: list[str] = []
    store.subscribe(heard.append, keys=[EMBEDDINGS_ENDPOINT_KEY])

    def announced(change: Any) -> bool:
        heard.clear()
        change()
        return heard == [EMBEDDINGS_ENDPOINT_KEY]

    assert announced(lambda: store.upsert_provider(_provider("a")))  # the first: the default
    for unrelated in ({"name": "Renamed"}, {"chat_model": "other"}, {"background_model": "bg"}):
        assert not announced(lambda u=unrelated: store.upsert_provider(_provider("a", **u)))
    assert announced(lambda: store.upsert_provider(_provider("a", embedding_model="e1")))
    assert announced(
        lambda: store.upsert_provider(
            _provider("a", embedding_model="e1", base_url="http://localhost:11434/v1")
        )
    )
    assert not announced(lambda: store.upsert_provider(_provider("b", embedding_model="e2")))
    assert announced(lambda: setattr(store, "default_provider_id", "b"))
    assert not announced(lambda: store.remove_provider("a"))
    assert announced(lambda: setattr(store, "default_provider_id", ENVIRONMENT_PROVIDER_ID))
    assert announced(lambda: store.remove_provider("b"))


def test_the_embeddings_endpoint_follows_the_first_provider_under_a_stale_default(
    settings_file: Path,
) -> None:
    settings_file.write_text(
        json.dumps({"providers": [_provider("a").to_dict()], "default_provider_id": "gone"}),
        encoding="utf-8",
    )
    store = _reloaded(settings_file)
    heard: list[str] = []
    store.subscribe(heard.append, keys=[EMBEDDINGS_ENDPOINT_KEY])
    # The registry falls back to the first saved provider, so its embedding model counts.
    store.upsert_provider(_provider("a", embedding_model="e1"))
    assert heard == [EMBEDDINGS_ENDPOINT_KEY]


# -- providers --------------------------------------------------------------------------------


def test_first_provider_becomes_default(store: SettingsStore) -> None:
    stored = store.upsert_provider(_provider("a", base_url="  https://api.deepseek.com/v1/  "))
    assert stored.base_url == "https://api.deepseek.com/v1"
    store.upsert_provider(_provider("b"))
    assert [cfg.id for cfg in store.providers()] == ["a", "b"]
    assert store.default_provider_id == "a"


def test_upsert_replaces_in_place(store: SettingsStore) -> None:
    store.upsert_provider(_provider("a"))
    store.upsert_provider(_provider("b"))
    store.upsert_provider(_provider("a", name="  Renamed  ", chat_model=" deepseek-reasoner "))
    assert [cfg.id for cfg in store.providers()] == ["a", "b"]
    renamed = store.provider("a")
    assert renamed is not None
    assert renamed.name == "Renamed"
    assert renamed.chat_model == "deepseek-reasoner"
    assert store.provider("zzz") is None


def test_providers_returns_a_copy(store: SettingsStore) -> None:
    store.upsert_provider(_provider("a"))
    store.providers().clear()
    assert len(store.providers()) == 1


@pytest.mark.parametrize(
    ("cfg", "key", "reason"),
    [
        (_provider("x", read_only=True), "id", "read_only"),
        (_provider("env"), "id", "read_only"),
        (_provider(""), "id", "missing_id"),
        (_provider("x", name="   "), "name", "empty"),
        (_provider("x", base_url="ftp://example.com"), "base_url", "scheme"),
        (_provider("x", base_url=""), "base_url", "empty"),
    ],
)
def test_upsert_refuses(store: SettingsStore, cfg: ProviderConfig, key: str, reason: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        store.upsert_provider(cfg)
    assert caught.value.params["key"] == key
    assert caught.value.params["reason"] == reason
    assert store.providers() == []


def test_remove_provider_moves_default(store: SettingsStore) -> None:
    for provider_id in ("a", "b", "c"):
        store.upsert_provider(_provider(provider_id))
    store.default_provider_id = "b"
    assert store.remove_provider("b") is True
    assert store.default_provider_id == "a"
    assert store.remove_provider("c") is True
    assert store.default_provider_id == "a"
    assert store.remove_provider("a") is True
    assert store.default_provider_id is None
    assert store.remove_provider("a") is False


def test_default_provider_setter(store: SettingsStore) -> None:
    store.upsert_provider(_provider("a"))
    store.upsert_provider(_provider("b"))
    store.default_provider_id = "b"
    assert store.default_provider_id == "b"
    store.default_provider_id = "env"
    assert store.default_provider_id == "env"
    store.default_provider_id = None
    assert store.default_provider_id is None
    with pytest.raises(InvalidInput) as caught:
        store.default_provider_id = "missing"
    assert caught.value.params["reason"] == "unknown_provider"


def test_environment_default_is_kept_when_adding(store: SettingsStore) -> None:
    store.default_provider_id = "env"
    store.upsert_provider(_provider("a"))
    assert store.default_provider_id == "env"


def test_providers_persist(store: SettingsStore, settings_file: Path) -> None:
    store.upsert_provider(_provider("a"))
    store.upsert_provider(_provider("b", single_system_message=True, embedding_model="e"))
    store.default_provider_id = "b"
    store.save()
    again = _reloaded(settings_file)
    assert again.providers() == store.providers()
    assert again.default_provider_id == "b"


# -- model context sizes ----------------------------------------------------------------------


def test_model_context_overrides(store: SettingsStore, settings_file: Path) -> None:
    store.set_model_context(" qwen-plus ", 131072)
    store.set_model_context("local", 8192)
    store.set_model_context("local", None)
    store.set_model_context("never-set", None)
    overrides = store.model_context_overrides()
    assert overrides == {"qwen-plus": 131072}
    overrides["x"] = 1
    assert "x" not in store.model_context_overrides()
    store.save()
    assert _reloaded(settings_file).model_context_overrides() == {"qwen-plus": 131072}


@pytest.mark.parametrize(
    ("model", "tokens", "key"),
    [
        ("", 4096, "model"),
        ("m", 10, "model_context"),
        ("m", 20_000_000, "model_context"),
        ("m", True, "model_context"),
    ],
)
def test_model_context_validation(store: SettingsStore, model: str, tokens: int, key: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        store.set_model_context(model, tokens)
    assert caught.value.params["key"] == key


@pytest.mark.logs(r"settings file .*context size for 'bad' is invalid; skipped")
def test_invalid_model_context_in_file_is_skipped(settings_file: Path) -> None:
    settings_file.write_text(
        json.dumps({"model_context": {"good": 32768, "bad": "big", "tiny": 5}}), encoding="utf-8"
    )
    store = _reloaded(settings_file)
    assert store.model_context_overrides() == {"good": 32768}
    assert store.load_problem is not None


@pytest.mark.parametrize(
    ("old", "mode", "top_k"),
    [
        ({}, "auto", 5),
        ({"memory.retrieval_top_k": 5}, "auto", 5),
        # Raised: Automatic still sends that many when retrieval chooses.
        ({"memory.retrieval_top_k": 8}, "auto", 8),
        # Lowered below the default: the user asked for fewer memories, not the whole store.
        ({"memory.retrieval_top_k": 2}, "fixed", 2),
        ({"memory.retrieval_top_k": 2, "memory.per_message": "auto"}, "auto", 2),
        ({"memory.retrieval_top_k": 9, "memory.per_message": "fixed"}, "fixed", 9),
    ],
)
def test_a_file_from_before_all_that_fit_keeps_the_users_number(
    settings_file: Path, old: dict[str, object], mode: str, top_k: int
) -> None:
    settings_file.write_text(json.dumps({"version": 1, "settings": old}))
    loaded = _reloaded(settings_file)
    assert loaded.load_problem is None
    assert loaded.get_str("memory.per_message") == mode
    assert loaded.get_int("memory.retrieval_top_k") == top_k
    assert loaded.get_int("memory.all_that_fit_tokens") == 1500
