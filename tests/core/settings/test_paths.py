from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

import pytest

from etos_desktop.core.errors import StorageError
from etos_desktop.core.settings import paths
from etos_desktop.core.settings.paths import (
    APP_NAME,
    atomic_write_private,
    backups_dir,
    create_private_file,
    data_dir,
    database_path,
    logs_dir,
    make_private_dir,
    make_private_file,
    private_opener,
    qsettings_path,
    secrets_path,
    settings_path,
    tightened_mode,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def test_app_name() -> None:
    assert APP_NAME == "ETOS Desktop"


@posix_only
def test_data_dir_from_env_is_created_private(tmp_path: Path) -> None:
    target = tmp_path / "a" / "data"
    old_umask = os.umask(0)
    try:
        result = data_dir({"ETOS_DATA_DIR": str(target)})
    finally:
        os.umask(old_umask)
    assert result == target
    assert result.is_dir()
    assert _mode(result) == 0o700


def test_data_dir_expands_user(isolated_home: Path) -> None:
    result = data_dir({"ETOS_DATA_DIR": "~/etos-data"})
    assert result == isolated_home / "etos-data"
    assert result.is_dir()


def test_data_dir_relative_override_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = data_dir({"ETOS_DATA_DIR": "rel"})
    assert result.is_absolute()
    assert result == tmp_path / "rel"


def test_data_dir_reads_process_environment_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ETOS_DATA_DIR", str(tmp_path / "from-os-environ"))
    assert data_dir() == tmp_path / "from-os-environ"


def test_data_dir_create_false_does_not_create(tmp_path: Path) -> None:
    result = data_dir({"ETOS_DATA_DIR": str(tmp_path / "later")}, create=False)
    assert result == tmp_path / "later"
    assert not result.exists()


def test_blank_override_means_default(isolated_home: Path) -> None:
    result = data_dir({"ETOS_DATA_DIR": "   "}, create=False)
    assert result.name == APP_NAME


@pytest.mark.skipif(sys.platform == "win32", reason="platformdirs reads the registry on Windows")
def test_data_dir_default_uses_platformdirs_under_patched_home(isolated_home: Path) -> None:
    result = data_dir({})
    assert result.name == APP_NAME
    assert result.is_relative_to(isolated_home)
    assert result.is_dir()
    if os.name == "posix":
        assert _mode(result) == 0o700


@posix_only
@pytest.mark.parametrize("loose", [0o755, 0o750, 0o777])
def test_an_existing_data_dir_others_can_enter_is_tightened(tmp_path: Path, loose: int) -> None:
    existing = tmp_path / "shared"
    existing.mkdir()
    existing.chmod(loose)
    data_dir({"ETOS_DATA_DIR": str(existing)})
    assert _mode(existing) == 0o700


@posix_only
def test_tightening_never_adds_owner_bits(tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert make_private_dir(folder) == folder
        assert _mode(folder) == 0o500
    finally:
        folder.chmod(0o700)


@pytest.mark.parametrize(
    ("mode", "allowed", "expected"),
    [
        (0o040755, 0o700, 0o700),
        (0o750, 0o700, 0o700),
        (0o700, 0o700, None),
        (0o100644, 0o600, 0o600),
        (0o664, 0o600, 0o600),
        (0o600, 0o600, None),
        (0o400, 0o600, None),
        (0o4755, 0o700, 0o700),
    ],
)
def test_tightened_mode_only_takes_bits_away(mode: int, allowed: int, expected: int | None):
    assert tightened_mode(mode, allowed) == expected


@posix_only
def test_make_private_file_tightens_what_another_writer_made(workdir: Path) -> None:
    target = workdir / "window-state.ini"
    target.write_text("[window]\n")
    target.chmod(0o644)
    assert make_private_file(target) is True
    assert _mode(target) == 0o600
    assert make_private_file(target) is False
    assert make_private_file(workdir / "missing") is False


@posix_only
def test_create_private_file_is_0600_under_any_umask_and_never_reuses_a_file(
    workdir: Path,
) -> None:
    target = workdir / "copy.db.part"
    old_umask = os.umask(0)
    try:
        create_private_file(target)
    finally:
        os.umask(old_umask)
    assert _mode(target) == 0o600
    assert target.read_bytes() == b""
    with pytest.raises(FileExistsError):
        create_private_file(target)


@posix_only
def test_private_opener_creates_0600_and_tightens_an_existing_file(workdir: Path) -> None:
    fresh, old = workdir / "fresh.log", workdir / "old.log"
    old.write_text("an older version's line\n")
    old.chmod(0o644)
    old_umask = os.umask(0o022)
    try:
        for path in (fresh, old):
            with open(path, "a", encoding="utf-8", opener=private_opener) as handle:
                handle.write("line\n")
    finally:
        os.umask(old_umask)
    assert _mode(fresh) == 0o600
    assert _mode(old) == 0o600
    assert old.read_text(encoding="utf-8") == "an older version's line\nline\n"


def test_data_dir_on_a_file_raises_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StorageError):
        data_dir({"ETOS_DATA_DIR": str(blocker)})


def test_named_paths_live_inside_the_data_dir(workdir: Path) -> None:
    named = [
        database_path(workdir),
        settings_path(workdir),
        secrets_path(workdir),
        backups_dir(workdir),
        logs_dir(workdir),
        qsettings_path(workdir),
    ]
    assert all(p.parent == workdir for p in named)
    assert len(set(named)) == len(named)
    assert settings_path(workdir).name == "settings.json"
    assert qsettings_path(workdir).suffix == ".ini"
    # Pure functions: nothing is created.
    assert list(workdir.iterdir()) == []


@posix_only
def test_atomic_write_creates_0600_even_with_open_umask(workdir: Path) -> None:
    target = workdir / "f.json"
    old_umask = os.umask(0)
    try:
        atomic_write_private(target, b"one")
    finally:
        os.umask(old_umask)
    assert target.read_bytes() == b"one"
    assert _mode(target) == 0o600


def test_atomic_write_replaces_and_leaves_no_temp_files(workdir: Path) -> None:
    target = workdir / "f.json"
    atomic_write_private(target, b"one")
    atomic_write_private(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in workdir.iterdir()] == ["f.json"]


@pytest.mark.parametrize(
    ("failing", "err", "reason"),
    [
        ("replace", errno.ENOSPC, "disk_full"),
        ("fsync", errno.ENOSPC, "disk_full"),
        ("fsync", errno.EIO, "io"),
        ("replace", errno.EROFS, "read_only"),
        ("replace", errno.EACCES, "permission"),
    ],
)
def test_atomic_write_failure_keeps_old_file(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, failing: str, err: int, reason: str
) -> None:
    target = workdir / "f.json"
    atomic_write_private(target, b"old")

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(paths.os, failing, boom)
    with pytest.raises(StorageError) as caught:
        atomic_write_private(target, b"new")
    monkeypatch.undo()
    assert caught.value.params["reason"] == reason
    assert caught.value.params["path"] == str(target)
    assert target.read_bytes() == b"old"
    assert [p.name for p in workdir.iterdir()] == ["f.json"]


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores modes")
def test_atomic_write_into_read_only_dir(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "f.json"
    atomic_write_private(target, b"old")
    folder.chmod(0o500)
    try:
        with pytest.raises(StorageError) as caught:
            atomic_write_private(target, b"new")
    finally:
        folder.chmod(0o700)
    assert caught.value.params["reason"] == "permission"
    assert target.read_bytes() == b"old"
