"""The errors of sync, under the project's tree (``core/errors.py``).

::

    UserFacingError
    └── SyncError                       sync could not do what was asked
        ├── WrongPassphrase             the passphrase does not open this sync folder
        ├── SyncFolderInvalid           ``sync.json`` is missing, damaged, foreign or newer
        ├── SyncFileRejected            one update file cannot be read (skipped, reported)
        └── SyncTransportError          the folder or server could not be reached or written
"""

from __future__ import annotations

from etos_desktop.core.errors import UserFacingError


class SyncError(UserFacingError):
    """Sync could not do what was asked."""

    code = "sync"


class WrongPassphrase(SyncError):
    """The passphrase does not open this sync folder (its key check does not match)."""

    code = "sync_wrong_passphrase"


class SyncFolderInvalid(SyncError):
    """The folder's ``sync.json`` header is damaged, another program's, or of a newer format.

    ``params["reason"]``: ``"damaged"``, ``"foreign"``, ``"newer_format"`` or ``"missing"``.
    """

    code = "sync_folder_invalid"


class SyncFileRejected(SyncError):
    """One update file cannot be read; it is skipped and named in the pass's report.

    ``params["reason"]``: ``"truncated"``, ``"foreign"`` (not a sync file, or another folder's
    or device's), ``"newer_format"``, ``"undecryptable"`` (wrong passphrase or damaged) or
    ``"unreadable"`` (decrypted, but not an update this program understands).
    """

    code = "sync_file_rejected"


class SyncTransportError(SyncError):
    """The sync folder or WebDAV server could not be reached, read or written.

    ``params["reason"]``: ``"unreachable"``, ``"auth"``, ``"disk_full"``, ``"permission"``
    or ``"io"``.
    """

    code = "sync_transport"
    retryable = True
