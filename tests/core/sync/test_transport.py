"""The folder and WebDAV transports behave alike (one sync folder, one writer per file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from etos_desktop.core.sync.errors import SyncTransportError
from etos_desktop.core.sync.transport import FolderTransport, Transport, WebDavTransport
from tests.helpers.webdav_server import USER, WebDavServer

DEVICE = "0123456789abcdef0123456789abcdef"


def test_files_header_and_listing(transport_factory: Callable[[], Transport]) -> None:
    first, second = transport_factory(), transport_factory()
    assert first.read_header() is None
    assert first.devices() == []
    assert first.create_header(b'{"one": 1}')
    assert not second.create_header(b'{"two": 2}')
    assert second.read_header() == b'{"one": 1}'
    for seq in (10, 2, 1):
        first.write(DEVICE, f"{seq}.update", f"file {seq}".encode())
    first.write(DEVICE, "2.update", b"file 2, again")
    assert second.devices() == [DEVICE]
    assert second.files(DEVICE) == ["1.update", "2.update", "10.update"]
    assert second.read(DEVICE, "2.update") == b"file 2, again"
    second.delete(DEVICE, "1.update")
    second.delete(DEVICE, "1.update")
    assert first.files(DEVICE) == ["2.update", "10.update"]
    with pytest.raises(SyncTransportError) as info:
        first.read(DEVICE, "1.update")
    assert info.value.params["reason"] == "missing"
    assert first.files("ffffffffffffffffffffffffffffffff") == []


def test_names_that_are_not_sync_files_are_never_used(tmp_path: Path) -> None:
    transport = FolderTransport(tmp_path / "sync")
    transport.write(DEVICE, "1.update", b"one")
    folder = tmp_path / "sync" / DEVICE
    for stray in ("1 (conflicted copy).update", ".1.update.tmp", "2.update.sync-conflict", "x"):
        (folder / stray).write_bytes(b"?")
    (tmp_path / "sync" / "not-a-device").mkdir()
    (tmp_path / "sync" / ".stfolder").mkdir()
    assert transport.devices() == [DEVICE]
    assert transport.files(DEVICE) == ["1.update"]
    for device, name in ((DEVICE, "../sync.json"), ("..", "1.update"), (DEVICE, "a/1.update")):
        with pytest.raises(ValueError, match="not a sync file name"):
            transport.read(device, name)
    with pytest.raises(ValueError, match="not a sync file name"):
        transport.write("../elsewhere", "1.update", b"")


def test_a_full_folder_is_a_transport_error(tmp_path: Path) -> None:
    (tmp_path / "sync").write_bytes(b"a file where the folder should be")
    with pytest.raises(SyncTransportError) as info:
        FolderTransport(tmp_path / "sync").write(DEVICE, "1.update", b"x")
    assert info.value.params["reason"] in {"io", "permission", "disk_full"}


def test_webdav_errors_say_what_went_wrong(tmp_path: Path) -> None:
    with WebDavServer(tmp_path / "dav") as server:
        wrong = WebDavTransport(server.url, (USER, "not the password"))
        with pytest.raises(SyncTransportError) as info:
            wrong.devices()
        assert info.value.params["reason"] == "auth"
        assert "not the password" not in repr(wrong) + str(info.value)
        wrong.close()
        url = server.url
    gone = WebDavTransport(url, (USER, "x"), timeout=2)
    with pytest.raises(SyncTransportError) as info:
        gone.read_header()
    assert info.value.params["reason"] == "unreachable"
    gone.close()
