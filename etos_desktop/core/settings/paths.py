"""Where ETOS Desktop keeps its data, and how private files are written there.

Everything the app stores lives in one directory (DESIGN §2): the platformdirs user data dir
named ``ETOS Desktop``, or ``ETOS_DATA_DIR`` when set. Tests and benchmarks always set a
temporary one. The directory is created ``0700`` and every file in it is written ``0600``
(DESIGN §9).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from etos_desktop.core.errors import StorageError, redact

APP_NAME = "ETOS Desktop"
#: Environment variable that overrides the data directory.
DATA_DIR_ENV = "ETOS_DATA_DIR"

_DIR_MODE = 0o700
_FILE_MODE = 0o600

_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_READ_ONLY = {errno.EROFS}
_PERMISSION = {errno.EACCES, errno.EPERM}


def data_dir(env: Mapping[str, str] | None = None, *, create: bool = True) -> Path:
    """Return the directory that holds all of the user's data.

    Args:
        env: Environment to read ``ETOS_DATA_DIR`` from; ``os.environ`` when ``None``. The
            platformdirs default itself always follows the process environment (``HOME``,
            ``XDG_DATA_HOME``, ``APPDATA``), so tests monkeypatch those.
        create: Create the directory (mode ``0700``) if it does not exist yet.

    Returns:
        The absolute path of the data directory.

    Raises:
        StorageError: The directory could not be created.
    """
    source = os.environ if env is None else env
    override = source.get(DATA_DIR_ENV, "").strip()
    if override:
        path = Path(override).expanduser().absolute()
    else:
        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    if create:
        make_private_dir(path)
    return path


def make_private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) if needed; a new directory gets mode ``0700``.

    An existing directory keeps its mode: the user may have pointed ``ETOS_DATA_DIR`` at a
    directory whose permissions they chose themselves.

    Args:
        path: The directory to create.

    Returns:
        ``path``.

    Raises:
        StorageError: The directory could not be created.
    """
    if path.is_dir():
        return path
    try:
        path.mkdir(parents=True, mode=_DIR_MODE)
        # mkdir's mode is filtered by the umask; set it exactly.
        os.chmod(path, _DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise storage_error(
                FileExistsError(errno.EEXIST, "exists and is not a directory"), path
            ) from None
    except OSError as exc:
        raise storage_error(exc, path) from exc
    return path


def database_path(data_dir: Path) -> Path:
    """Return the SQLite database file inside ``data_dir``."""
    return data_dir / "etos.db"


def settings_path(data_dir: Path) -> Path:
    """Return the ``settings.json`` file inside ``data_dir``."""
    return data_dir / "settings.json"


def secrets_path(data_dir: Path) -> Path:
    """Return the key file used only when no OS keyring is usable (DESIGN §9)."""
    return data_dir / "secrets.json"


def backups_dir(data_dir: Path) -> Path:
    """Return the directory for database backups (not created here)."""
    return data_dir / "backups"


def logs_dir(data_dir: Path) -> Path:
    """Return the directory for log files (not created here)."""
    return data_dir / "logs"


def qsettings_path(data_dir: Path) -> Path:
    """Return the INI file ``QSettings`` uses for window geometry, never the platform default."""
    return data_dir / "window-state.ini"


def atomic_write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically; the file ends up with mode ``0600``.

    The data goes to a temporary file in the same directory, is flushed and fsynced, then moved
    over ``path`` with :func:`os.replace`. If anything fails the old file is left untouched and
    the temporary file is removed.

    Args:
        path: The file to write.
        data: Its complete new content.

    Raises:
        StorageError: Writing failed (disk full, read-only file system, permission denied).
            ``params["reason"]`` is ``"disk_full"``, ``"read_only"``, ``"permission"`` or
            ``"io"``; ``params["path"]`` is the file's path.
    """
    tmp_name: str | None = None
    try:
        # mkstemp creates the file 0600, so the data is never readable by others, not even briefly.
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, _FILE_MODE)
        os.replace(tmp_name, path)
        tmp_name = None
    except OSError as exc:
        raise storage_error(exc, path) from exc
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable on POSIX; Windows cannot open directories, and a failure
    # here does not make the written data wrong, so it is best effort.
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def storage_error(exc: OSError, path: Path) -> StorageError:
    """Turn an ``OSError`` about ``path`` into a :class:`StorageError` with a ``reason``.

    Args:
        exc: The error from the operating system.
        path: The file or directory it concerns.

    Returns:
        The error, with ``params["reason"]`` one of ``"disk_full"``, ``"read_only"``,
        ``"permission"``, ``"io"`` and ``params["path"]``.
    """
    if exc.errno in _DISK_FULL:
        reason = "disk_full"
    elif exc.errno in _READ_ONLY:
        reason = "read_only"
    elif exc.errno in _PERMISSION:
        reason = "permission"
    else:
        reason = "io"
    return StorageError(redact(f"{path}: {exc.strerror or exc}"), reason=reason, path=str(path))
