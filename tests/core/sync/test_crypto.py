"""Sync file encryption: the header, the key check, and files that must not open."""

from __future__ import annotations

import json
import unicodedata
import uuid

import pytest

from etos_desktop.core.sync.crypto import MIN_FILE_BYTES, FolderHeader, KdfParams, SyncKey
from etos_desktop.core.sync.errors import SyncFileRejected, SyncFolderInvalid, WrongPassphrase

KDF = KdfParams(n=2**4, r=1, p=1)
DEVICE = uuid.UUID(int=7)


def test_a_sealed_update_opens_only_under_its_own_name() -> None:
    header, key = FolderHeader.create("tea and biscuits", KDF)
    again = SyncKey.derive("tea and biscuits", FolderHeader.from_json(header.to_json()))
    update = "我喜欢乌龙茶 and Darjeeling".encode() * 20
    blob = key.seal(update, device_id=DEVICE, seq=3)
    assert again.open(blob, device_id=DEVICE, seq=3) == update
    assert update not in blob
    assert "乌龙茶".encode() not in blob
    for device, seq in ((DEVICE, 4), (uuid.UUID(int=8), 3)):
        with pytest.raises(SyncFileRejected) as info:
            again.open(blob, device_id=device, seq=seq)
        assert info.value.params["reason"] == "foreign"


def test_the_header_holds_no_secret_and_checks_the_passphrase() -> None:
    header, _ = FolderHeader.create("tea and biscuits", KDF)
    raw = header.to_json()
    data = json.loads(raw)
    assert set(data) == {"format", "version", "folder_id", "kdf", "salt", "check"}
    assert data["kdf"] == {"name": "scrypt", "n": 16, "r": 1, "p": 1}
    assert b"tea" not in raw
    with pytest.raises(WrongPassphrase):
        SyncKey.derive("tea and biscuit", header)
    # The same words typed on a system that composes accents differently open it too.
    composed, _ = FolderHeader.create("café au lait", KDF)
    SyncKey.derive(unicodedata.normalize("NFD", "café au lait"), composed)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"not json", "damaged"),
        (b'{"format": "something-else"}', "foreign"),
        (b'{"format": "etos-sync", "version": 99}', "newer_format"),
        (b'{"format": "etos-sync", "version": 1, "kdf": {"name": "scrypt"}}', "damaged"),
    ],
)
def test_a_bad_header_is_refused(raw: bytes, reason: str) -> None:
    with pytest.raises(SyncFolderInvalid) as info:
        FolderHeader.from_json(raw)
    assert info.value.params["reason"] == reason


def test_damaged_and_other_folders_files_do_not_open() -> None:
    header, key = FolderHeader.create("tea and biscuits", KDF)
    blob = key.seal(b"\x00\x00", device_id=DEVICE, seq=1)
    flipped = bytearray(blob)
    flipped[-1] ^= 0x80
    other_folder, other_key = FolderHeader.create("tea and biscuits", KDF)
    cases = {
        bytes(flipped): "undecryptable",
        other_key.seal(b"\x00\x00", device_id=DEVICE, seq=1): "undecryptable",
        blob[: MIN_FILE_BYTES - 1]: "truncated",
        b"": "truncated",
        b"GIF89a" + bytes(100): "foreign",
        blob[:8] + b"\x09" + blob[9:]: "newer_format",
    }
    for damaged, reason in cases.items():
        with pytest.raises(SyncFileRejected) as info:
            key.open(damaged, device_id=DEVICE, seq=1)
        assert info.value.params["reason"] == reason
    assert other_folder.folder_id != header.folder_id
    assert "tea" not in repr(key)
