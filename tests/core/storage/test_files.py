"""Exports are private and atomic: 0600 whatever was there before, all or nothing (issue 9)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from etos_desktop.core.errors import StorageError
from etos_desktop.core.storage.files import write_private_text

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "exports"
    path.mkdir()
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@posix_only
def test_a_new_export_is_private_whatever_the_umask(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        target = tmp_path / "chat.md"
        write_private_text(target, "# Chat\n\n我每天早上喝咖啡\n")
    finally:
        os.umask(old_umask)
    assert target.read_text(encoding="utf-8") == "# Chat\n\n我每天早上喝咖啡\n"
    assert _mode(target) == 0o600


@posix_only
def test_an_existing_0644_file_is_replaced_not_rewritten(tmp_path: Path) -> None:
    target = tmp_path / "chat.json"
    target.write_text("old export", encoding="utf-8")
    target.chmod(0o644)
    before = target.stat().st_ino
    write_private_text(target, '{"new": true}')
    assert target.read_text(encoding="utf-8") == '{"new": true}'
    assert _mode(target) == 0o600
    assert target.stat().st_ino != before  # a new file moved over it, not the old one truncated


def test_text_is_written_exactly_with_its_line_ends(tmp_path: Path) -> None:
    target = tmp_path / "x.md"
    write_private_text(target, "a\nb\r\nc\ud800")
    assert target.read_bytes() == "a\nb\r\nc\ufffd".encode()


@posix_only
def test_disk_full_leaves_the_old_file_and_no_temporary_file(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = folder / "memories.json"
    target.write_text("the previous export", encoding="utf-8")
    target.chmod(0o644)

    def full(_fd: int) -> None:
        # Where a full disk is reported on file systems with delayed allocation (and NFS).
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(StorageError) as info:
        write_private_text(target, "x" * 100_000)
    assert info.value.params["reason"] == "disk_full"
    assert info.value.params["path"] == str(target)
    assert target.read_text(encoding="utf-8") == "the previous export"
    assert _mode(target) == 0o644
    assert sorted(p.name for p in folder.iterdir()) == ["memories.json"]


def test_a_missing_folder_or_a_folder_in_the_way_is_a_storage_error(folder: Path) -> None:
    with pytest.raises(StorageError) as missing:
        write_private_text(folder / "nowhere" / "chat.md", "x")
    assert missing.value.params["reason"] == "io"
    (folder / "chat.md").mkdir()
    with pytest.raises(StorageError):
        write_private_text(folder / "chat.md", "x")
    assert sorted(p.name for p in folder.iterdir()) == ["chat.md"]
    assert (folder / "chat.md").is_dir()
