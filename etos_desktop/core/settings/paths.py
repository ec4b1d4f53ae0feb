"""Where ETOS Desktop keeps its data, and how private files are written there.

Everything the app stores lives in one directory (DESIGN §2): the platformdirs user data dir
named ``ETOS Desktop``, or ``ETOS_DATA_DIR`` when set. Tests and benchmarks always set a
temporary one. The directory is created ``0700`` and every file in it is written ``0600``
(DESIGN §9); a folder or file found looser (made by an older version, or by hand) is tightened
when the app next uses it. File modes are POSIX only; on Windows nothing here changes them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
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

#: Less free room than this on a disk is a full disk (SQLite and Qt's lock file say only "I/O
#: error" when they cannot grow a file there).
FULL_BELOW_BYTES = 64 * 1024

_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_READ_ONLY = {errno.EROFS}
_PERMISSION = {errno.EACCES, errno.EPERM}


def data_dir(env: Mapping[str, str] | None = None, *, create: bool = True) -> Path:
    """Return the directory that holds all of the user's data.

    Args:
        env: Environment to read ``ETOS_DATA_DIR`` from; ``os.environ`` when ``None``. The
            platformdirs default itself always follows the process environment (``HOME``,
            ``XDG_DATA_HOME``, ``APPDATA``), so tests monkeypatch those.
        create: Create the directory (mode ``0700``) if it does not exist yet, or tighten an
            existing one to ``0700`` (:func:`make_private_dir`); the app does this at start-up.

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
    """Create ``path`` (and missing parents) if needed, mode ``0700``; tighten an existing one.

    An existing directory that others may read or enter (``0755``, ``0750``…) is set to
    ``0700``: the data folder holds deleted-memory backups and logs (DESIGN §9). Owner bits are
    never added, so a folder the user made read-only stays so.

    Args:
        path: The directory to create.

    Returns:
        ``path``.

    Raises:
        StorageError: The directory could not be created.
    """
    if path.is_dir():
        tighten_mode(path, _DIR_MODE)
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


def tightened_mode(mode: int, allowed: int) -> int | None:
    """The mode ``mode`` becomes when only the bits in ``allowed`` may stay; ``None``: keep it.

    Bits are only ever taken away: ``0o755`` becomes ``0o700`` for a folder, ``0o644`` becomes
    ``0o600`` for a file, and a read-only ``0o400`` file stays as it is.

    Args:
        mode: A ``st_mode`` (its file-type bits are ignored).
        allowed: The most permissive mode allowed.

    Returns:
        The new permission bits, or ``None`` when ``mode`` is already within ``allowed``.
    """
    current = stat.S_IMODE(mode)
    narrowed = current & allowed
    return None if narrowed == current else narrowed


def tighten_mode(path: Path, allowed: int) -> bool:
    """Clear the permission bits of ``path`` that ``allowed`` does not hold (POSIX; best effort).

    A file or folder the process does not own cannot be changed; that is left as it is rather
    than stopping the app.

    Args:
        path: An existing file or directory (a missing one is skipped).
        allowed: The most permissive mode it may keep (``0o700`` folders, ``0o600`` files).

    Returns:
        Whether the mode was changed.
    """
    if os.name != "posix":
        return False
    try:
        wanted = tightened_mode(path.stat().st_mode, allowed)
        if wanted is None:
            return False
        os.chmod(path, wanted)
    except OSError:
        return False
    return True


def make_private_file(path: Path) -> bool:
    """Make an existing file that another writer created (Qt, SQLite) owner-only, ``0600``.

    Returns:
        Whether the mode was changed.
    """
    return tighten_mode(path, _FILE_MODE)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode ``0600``, so whatever is written into it later is private.

    ``O_EXCL``: an existing file (or a link planted in its place) is an error, never reused.

    Raises:
        FileExistsError: ``path`` exists.
        OSError: It could not be created.
    """
    # The mode is applied by the kernel as the file is created (before any byte), so no umask
    # window; on Windows only its write bit counts (not read-only), which 0o600 keeps.
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, _FILE_MODE))


def private_opener(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` that creates files ``0600`` and tightens existing ones.

    Args:
        path: The file to open.
        flags: The ``os.open`` flags :func:`open` chose.

    Returns:
        The open file descriptor.
    """
    fd = os.open(path, flags, _FILE_MODE)
    if os.name == "posix":
        # An existing file (an older version's log) keeps its mode through O_CREAT: tighten it.
        with contextlib.suppress(OSError):
            wanted = tightened_mode(os.fstat(fd).st_mode, _FILE_MODE)
            if wanted is not None:
                os.fchmod(fd, wanted)
    return fd


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


def free_bytes(folder: Path) -> int | None:
    """Free bytes on the disk of ``folder`` (``None`` when that cannot be asked)."""
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def disk_is_full(folder: Path) -> bool:
    """Whether the disk of ``folder`` has less than :data:`FULL_BELOW_BYTES` free."""
    free = free_bytes(folder)
    return free is not None and free < FULL_BELOW_BYTES


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
