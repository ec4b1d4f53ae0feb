"""Words for sync: its errors and the reasons a file was skipped, in plain language.

Sync's errors carry a code and a reason (``core/sync/errors.py``); a recorded run keeps them as
``"sync_transport:unreachable"``. This module says what happened and what to do, and says that
nothing on this device was changed where that is so.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from etos_desktop.core.errors import EtosError


def sync_error_text(code: str, reason: str = "", *, where: str = "") -> str:
    """The words for a sync error from its code and reason.

    Args:
        code: ``"sync_wrong_passphrase"``, ``"sync_folder_invalid"``, ``"sync_transport"``…
        reason: Its ``params["reason"]``.
        where: The folder or server it is about, if known (shown as given).
    """
    if code == "sync_wrong_passphrase":
        return QCoreApplication.translate(
            "SyncText",
            "The passphrase does not open this sync folder: it was set up with another one. "
            "Nothing was changed on this device. Enter the passphrase your other devices use.",
        )
    if code == "sync_folder_invalid":
        return {
            "foreign": QCoreApplication.translate(
                "SyncText",
                "This folder holds another program's sync.json, not ETOS Desktop's. Choose "
                "another folder. Nothing was changed on this device.",
            ),
            "newer_format": QCoreApplication.translate(
                "SyncText",
                "The sync folder was set up by a newer version of ETOS Desktop. Update this one "
                "to sync with it. Nothing was changed on this device.",
            ),
            "missing": QCoreApplication.translate(
                "SyncText",
                "The sync folder's sync.json disappeared while it was being read. Try again.",
            ),
        }.get(
            reason,
            QCoreApplication.translate(
                "SyncText",
                "The sync folder's sync.json file is damaged, so its files cannot be opened. "
                "Nothing was changed on this device.",
            ),
        )
    if code == "sync_transport":
        if reason == "unreachable":
            return QCoreApplication.translate(
                "SyncText",
                "The server cannot be reached. Check the address and the network; sync tries "
                "again in a few minutes.",
            )
        if reason == "auth":
            return QCoreApplication.translate(
                "SyncText",
                "The server refused the user name or the password. Check them with the "
                "server's settings (Jianguoyun: an app password).",
            )
        if reason == "disk_full":
            return QCoreApplication.translate(
                "SyncText",
                "The disk of the sync folder, or the server's storage, is full. Free some space; "
                "nothing was lost, and sync tries again in a few minutes.",
            )
        if reason == "permission":
            return QCoreApplication.translate(
                "SyncText",
                "ETOS Desktop may not write in the sync folder. Check the folder's permissions.",
            )
        if reason == "missing":
            if where:
                return QCoreApplication.translate(
                    "SyncText",
                    "The sync folder {folder} is missing. Is its drive connected? Sync waits "
                    "for it and goes on when it is back.",
                ).format(folder=where)
            return QCoreApplication.translate(
                "SyncText", "The sync folder is missing. Sync goes on when it is back."
            )
        return QCoreApplication.translate(
            "SyncText",
            "The sync folder could not be read or written. Sync tries again in a few minutes.",
        )
    return QCoreApplication.translate("SyncText", "Sync did not work ({code}).").format(code=code)


def sync_error_words(error: EtosError) -> str:
    """The words for a sync error raised by a pass or by setting sync up."""
    reason = error.params.get("reason")
    where = error.params.get("path")
    return sync_error_text(
        error.code,
        reason if isinstance(reason, str) else "",
        where=where if isinstance(where, str) else "",
    )


def stored_sync_error_text(stored: str) -> str:
    """The words for a sync run's recorded error (``"code:reason"``)."""
    code, _, reason = stored.partition(":")
    return sync_error_text(code, reason)


def skipped_reason_text(reason: str, retried: bool) -> str:
    """Why one file of another device could not be used."""
    words = {
        "truncated": QCoreApplication.translate(
            "SyncText", "cut short (a sync service may still be copying it)"
        ),
        "foreign": QCoreApplication.translate("SyncText", "not a sync file of this folder"),
        "newer_format": QCoreApplication.translate(
            "SyncText", "written by a newer version of ETOS Desktop"
        ),
        "undecryptable": QCoreApplication.translate(
            "SyncText", "encrypted with another passphrase, or damaged"
        ),
        "unreadable": QCoreApplication.translate("SyncText", "damaged"),
        "missing": QCoreApplication.translate("SyncText", "gone before it could be read"),
    }.get(reason, QCoreApplication.translate("SyncText", "could not be read"))
    if retried:
        return QCoreApplication.translate("SyncText", "{reason}; tried again next time").format(
            reason=words
        )
    return words
