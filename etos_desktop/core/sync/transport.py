"""Where sync files live: a local folder (kept in step by Syncthing, Dropbox…) or a WebDAV server.

Both transports offer the same small interface (:class:`Transport`). The layout is::

    <root>/sync.json                      the plaintext header (``crypto.FolderHeader``)
    <root>/<device id>/<seq>.update       one device's encrypted updates, written only by it

Every write goes to a temporary name first and is then renamed (or ``MOVE``d), so a reader
never sees half a file under a final name; names that are not ``<digits>.update`` (temporary
files, a sync service's conflict copies) are never listed. Server ETags and timestamps are not
used for anything (DESIGN §11): the order of updates is the CRDT's business.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Final, Protocol, TypeVar

from etos_desktop.core.errors import StorageError
from etos_desktop.core.settings.paths import atomic_write_private, storage_error
from etos_desktop.core.sync.errors import SyncTransportError

T = TypeVar("T")

#: The header file at the root of a sync folder.
HEADER_NAME: Final = "sync.json"
#: A device's folder name: its id as 32 lowercase hex digits.
DEVICE_RE: Final = re.compile(r"^[0-9a-f]{32}$")
#: An update file's name.
UPDATE_RE: Final = re.compile(r"^([0-9]{1,19})\.update$")


def update_name(seq: int) -> str:
    """The file name of update ``seq``."""
    return f"{seq}.update"


def update_seq(name: str) -> int | None:
    """The seq of an update file's name, or ``None`` for any other name."""
    match = UPDATE_RE.match(name)
    return int(match.group(1)) if match else None


class Transport(Protocol):
    """The operations sync needs from a folder or server. Blocking; call off the UI thread."""

    def read_header(self) -> bytes | None:
        """``sync.json``'s bytes, or ``None`` when the folder has none yet."""
        ...

    def create_header(self, data: bytes) -> bool:
        """Write ``sync.json`` unless one exists; ``False`` when another device was first."""
        ...

    def devices(self) -> list[str]:
        """The device ids that have a folder, sorted."""
        ...

    def files(self, device: str) -> list[str]:
        """The update files of ``device`` (names only), sorted by seq."""
        ...

    def read(self, device: str, name: str) -> bytes:
        """One file's bytes; :class:`SyncTransportError` ``"missing"`` when it is gone."""
        ...

    def write(self, device: str, name: str, data: bytes) -> None:
        """Write one of this device's files atomically (temporary name, then rename)."""
        ...

    def delete(self, device: str, name: str) -> None:
        """Remove one file (no error when it is gone already)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


def _sorted_updates(names: list[str]) -> list[str]:
    numbered = [(seq, name) for name in names if (seq := update_seq(name)) is not None]
    return [name for _, name in sorted(numbered)]


def _check_parts(device: str, name: str) -> None:
    # Names come from listings of a shared folder: nothing may climb out of it.
    if not DEVICE_RE.match(device) or (name != HEADER_NAME and update_seq(name) is None):
        raise ValueError(f"not a sync file name: {device}/{name}")


class FolderTransport:
    """Sync files in a local folder (a sync service's folder, a network share, a USB stick).

    Args:
        root: The sync folder (created when missing).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"<FolderTransport {self.root}>"

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except StorageError as exc:
            raise SyncTransportError(
                exc.detail, reason=exc.params.get("reason", "io"), path=str(self.root)
            ) from exc
        except FileNotFoundError as exc:
            raise SyncTransportError(str(exc), reason="missing", path=str(self.root)) from exc
        except OSError as exc:
            error = storage_error(exc, self.root)
            raise SyncTransportError(
                error.detail, reason=error.params.get("reason", "io"), path=str(self.root)
            ) from exc

    def read_header(self) -> bytes | None:
        """See :class:`Transport`."""
        path = self.root / HEADER_NAME

        def read() -> bytes | None:
            try:
                return path.read_bytes()
            except FileNotFoundError:
                return None

        return self._guard(read)

    def create_header(self, data: bytes) -> bool:
        """See :class:`Transport`; exclusive through a hard link where the file system has them."""

        def create() -> bool:
            self.root.mkdir(parents=True, exist_ok=True)
            target = self.root / HEADER_NAME
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{HEADER_NAME}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                try:
                    os.link(tmp, target)
                except FileExistsError:
                    return False
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                        raise
                    # FAT and some network file systems have no hard links.
                    try:
                        with open(target, "xb") as handle:
                            handle.write(data)
                    except FileExistsError:
                        return False
                return True
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

        return self._guard(create)

    def devices(self) -> list[str]:
        """See :class:`Transport`."""

        def listing() -> list[str]:
            if not self.root.is_dir():
                return []
            return sorted(
                entry.name
                for entry in os.scandir(self.root)
                if entry.is_dir() and DEVICE_RE.match(entry.name)
            )

        return self._guard(listing)

    def files(self, device: str) -> list[str]:
        """See :class:`Transport`."""
        folder = self.root / device

        def listing() -> list[str]:
            if not folder.is_dir():
                return []
            return _sorted_updates([entry.name for entry in os.scandir(folder) if entry.is_file()])

        return self._guard(listing)

    def read(self, device: str, name: str) -> bytes:
        """See :class:`Transport`."""
        _check_parts(device, name)
        return self._guard(lambda: (self.root / device / name).read_bytes())

    def write(self, device: str, name: str, data: bytes) -> None:
        """See :class:`Transport`."""
        _check_parts(device, name)
        folder = self.root / device

        def write() -> None:
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_private(folder / name, data)

        self._guard(write)

    def delete(self, device: str, name: str) -> None:
        """See :class:`Transport`."""
        _check_parts(device, name)

        def delete() -> None:
            with contextlib.suppress(FileNotFoundError):
                (self.root / device / name).unlink()

        self._guard(delete)

    def close(self) -> None:
        """Nothing to release."""


class WebDavTransport:
    """Sync files on a WebDAV server (Nextcloud, 坚果云, any RFC 4918 server) via ``webdav4``.

    Args:
        url: The folder's URL (created with ``MKCOL`` when missing, one level).
        auth: ``(user, password)`` or ``None``; the password comes from the keyring.
        timeout: Seconds for connecting and for each read.
        client: A ``webdav4.client.Client`` to use instead (tests).
    """

    def __init__(
        self,
        url: str,
        auth: tuple[str, str] | None = None,
        *,
        timeout: float = 30.0,
        client: Any = None,
    ) -> None:
        from webdav4.client import Client  # only when WebDAV is used: it loads httpx

        self.url = url
        # webdav4's own retries are on: they back off on 5xx and connection resets only.
        self._client: Any = client or Client(url, auth=auth, timeout=timeout)
        self._root_checked = False

    def __repr__(self) -> str:
        # Never the credentials: only the URL, without any user info in it.
        return f"<WebDavTransport {self.url.split('@')[-1]}>"

    def _guard(self, fn: Callable[[], T]) -> T:
        import httpx
        from webdav4 import client as dav

        try:
            return fn()
        except dav.ResourceNotFound as exc:
            raise SyncTransportError(str(exc), reason="missing", url=repr(self)) from exc
        except dav.InsufficientStorage as exc:
            raise SyncTransportError(str(exc), reason="disk_full", url=repr(self)) from exc
        except dav.HTTPError as exc:
            status = int(getattr(exc, "status_code", 0) or 0)
            reason = "auth" if status in (401, 403) else "disk_full" if status == 507 else "io"
            raise SyncTransportError(
                f"HTTP {status}", reason=reason, status=status, url=repr(self)
            ) from exc
        except dav.ClientError as exc:
            raise SyncTransportError(str(exc), reason="io", url=repr(self)) from exc
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            reason = "auth" if status in (401, 403) else "disk_full" if status == 507 else "io"
            raise SyncTransportError(
                f"HTTP {status}", reason=reason, status=status, url=repr(self)
            ) from exc
        except httpx.HTTPError as exc:
            raise SyncTransportError(
                type(exc).__name__, reason="unreachable", url=repr(self)
            ) from exc

    def _names(self, path: str, kind: str) -> list[str]:
        from webdav4 import client as dav

        try:
            entries = self._client.ls(path, detail=True)
        except dav.ResourceNotFound:
            return []
        return [
            PurePosixPath(str(entry["name"]).rstrip("/")).name
            for entry in entries
            if entry.get("type") == kind
        ]

    def _mkdir(self, path: str) -> None:
        from webdav4 import client as dav

        with contextlib.suppress(dav.ResourceAlreadyExists):
            self._client.mkdir(path)

    def _ensure_root(self) -> None:
        if not self._root_checked:
            if not self._client.exists(""):
                self._mkdir("")
            self._root_checked = True

    def _put(self, final: str, data: bytes, *, overwrite: bool) -> bool:
        from webdav4 import client as dav

        folder = str(PurePosixPath(final).parent)
        prefix = "" if folder in ("", ".") else f"{folder}/"
        tmp = f"{prefix}.{PurePosixPath(final).name}.{secrets.token_hex(6)}.tmp"
        self._client.upload_fileobj(io.BytesIO(data), tmp, overwrite=True)
        try:
            self._client.move(tmp, final, overwrite=overwrite)
        except dav.ResourceAlreadyExists:
            return False
        finally:
            with contextlib.suppress(dav.ClientError):
                if self._client.exists(tmp):
                    self._client.remove(tmp)
        return True

    def read_header(self) -> bytes | None:
        """See :class:`Transport`."""

        def read() -> bytes | None:
            self._ensure_root()
            if not self._client.exists(HEADER_NAME):
                return None
            return self._download(HEADER_NAME)

        return self._guard(read)

    def _download(self, path: str) -> bytes:
        buffer = io.BytesIO()
        self._client.download_fileobj(path, buffer)
        return buffer.getvalue()

    def create_header(self, data: bytes) -> bool:
        """See :class:`Transport`; exclusive through ``MOVE`` with ``Overwrite: F``."""

        def create() -> bool:
            self._ensure_root()
            return self._put(HEADER_NAME, data, overwrite=False)

        return self._guard(create)

    def devices(self) -> list[str]:
        """See :class:`Transport`."""
        return self._guard(
            lambda: sorted(n for n in self._names("", "directory") if DEVICE_RE.match(n))
        )

    def files(self, device: str) -> list[str]:
        """See :class:`Transport`."""
        return self._guard(lambda: _sorted_updates(self._names(device, "file")))

    def read(self, device: str, name: str) -> bytes:
        """See :class:`Transport`."""
        _check_parts(device, name)
        return self._guard(lambda: self._download(f"{device}/{name}"))

    def write(self, device: str, name: str, data: bytes) -> None:
        """See :class:`Transport`."""
        _check_parts(device, name)

        def write() -> None:
            self._ensure_root()
            self._mkdir(device)
            self._put(f"{device}/{name}", data, overwrite=True)

        self._guard(write)

    def delete(self, device: str, name: str) -> None:
        """See :class:`Transport`."""
        from webdav4 import client as dav

        _check_parts(device, name)

        def delete() -> None:
            with contextlib.suppress(dav.ResourceNotFound):
                self._client.remove(f"{device}/{name}")

        self._guard(delete)

    def close(self) -> None:
        """Close the HTTP connections."""
        with contextlib.suppress(Exception):
            self._client.http.close()
