"""A corrupt, truncated, foreign or wrong-passphrase file is skipped with a report, changing nothing."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from etos_desktop.core.sync.crypto import FolderHeader, SyncKey
from tests.core.sync.conftest import SyncDevice

pytestmark = pytest.mark.logs(r"sync: skipped")


def _root(tmp_path: Path) -> Path:
    folder = tmp_path / "sync-folder"
    return folder if folder.is_dir() else tmp_path / "webdav-root" / "etos"


def _pair(make_device: Callable[..., SyncDevice]) -> tuple[SyncDevice, SyncDevice]:
    desktop, laptop = make_device("desktop"), make_device("laptop")
    desktop.engine.save("I have a cat called Miso", "fact")
    desktop.sync()
    laptop.engine.save("I prefer window seats", "preference")
    laptop.sync()
    desktop.sync()
    return desktop, laptop


def _file(tmp_path: Path, device: SyncDevice, seq: int) -> Path:
    return _root(tmp_path) / device.device_id() / f"{seq}.update"


def _unchanged(device: SyncDevice) -> Callable[[], bool]:
    before = device.state()
    return lambda: device.state() == before


@pytest.mark.parametrize(
    ("damage", "reason", "retried"),
    [
        (lambda b: b[:-40] + bytes([b[-40] ^ 0x01]) + b[-39:], "undecryptable", False),
        (lambda b: b[:30], "truncated", True),
        (lambda b: b"PK\x03\x04 this is a zip file, not ours" * 3, "foreign", False),
        (lambda b: b"", "truncated", True),
    ],
    ids=["corrupt", "truncated", "foreign", "empty"],
)
def test_a_damaged_file_is_skipped_and_changes_nothing(
    make_device: Callable[..., SyncDevice],
    tmp_path: Path,
    damage: Callable[[bytes], bytes],
    reason: str,
    retried: bool,
) -> None:
    desktop, laptop = _pair(make_device)
    desktop.engine.save("My bike is a blue Gazelle", "fact")
    desktop.sync()
    path = _file(tmp_path, desktop, 2)
    good = path.read_bytes()
    path.write_bytes(damage(good))
    unchanged = _unchanged(laptop)
    report = laptop.sync()
    assert [(s.name, s.reason, s.retried) for s in report.skipped] == [
        ("2.update", reason, retried)
    ]
    assert report.applied == 0
    assert unchanged()
    # Put back: a file that may still be arriving is tried again; a rejected one is not.
    path.write_bytes(good)
    again = laptop.sync()
    assert again.applied == (1 if retried else 0)
    contents = {v["content"] for v in laptop.state().values()}
    assert ("My bike is a blue Gazelle" in contents) is retried


def test_a_file_moved_to_another_seq_or_device_is_foreign(
    make_device: Callable[..., SyncDevice], tmp_path: Path
) -> None:
    desktop, laptop = _pair(make_device)
    tablet = make_device("tablet")
    first = _file(tmp_path, desktop, 1)
    (first.parent / "7.update").write_bytes(first.read_bytes())
    impostor = first.parent.parent / uuid.uuid4().hex
    impostor.mkdir()
    (impostor / "1.update").write_bytes(first.read_bytes())
    report = tablet.sync()
    assert sorted((s.name, s.reason) for s in report.skipped) == [
        ("1.update", "foreign"),
        ("7.update", "foreign"),
    ]
    # The real files still arrive.
    assert {v["content"] for v in tablet.state().values()} == {
        "I have a cat called Miso",
        "I prefer window seats",
    }
    assert laptop.sync().skipped


def test_a_file_sealed_with_another_passphrase_is_skipped(
    make_device: Callable[..., SyncDevice], tmp_path: Path
) -> None:
    _desktop, laptop = _pair(make_device)
    header = FolderHeader.from_json((_root(tmp_path) / "sync.json").read_bytes())
    # The folder's id with another key: what a device that got past the key check with
    # another passphrase (a header swapped under it) would write.
    wrong = SyncKey(os.urandom(32), header.folder_id)
    device = uuid.uuid4()
    folder = _root(tmp_path) / device.hex
    folder.mkdir()
    (folder / "1.update").write_bytes(wrong.seal(b"\x00\x00", device_id=device, seq=1))
    unchanged = _unchanged(laptop)
    report = laptop.sync()
    assert [(s.device, s.reason) for s in report.skipped] == [(device.hex, "undecryptable")]
    assert unchanged()
