"""Words for errors: the core's error codes turned into translated, actionable text."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

from etos_desktop.core.errors import EtosError


@dataclass(frozen=True)
class ErrorText:
    """What the user reads about an error, and what they can do about it."""

    message: str
    #: "settings" (open provider settings), "retry" (regenerate), or "" (nothing to do here).
    action: str


def describe(error: EtosError) -> ErrorText:
    """Return the user-facing words for ``error`` (never containing a key)."""
    p = error.params
    code = error.code
    if code == "auth":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText", "The server rejected the API key. Check the key in Settings."
            ),
            "settings",
        )
    if code == "model_not_found":
        model = p.get("model") or ""
        text = QCoreApplication.translate(
            "ErrorText",
            "The server does not know the model “{model}”. Pick another model in Settings.",
        )
        return ErrorText(text.format(model=model), "settings")
    if code == "rate_limited":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText",
                "The server is rate limiting requests and kept refusing after retries. Try again in a minute.",
            ),
            "retry",
        )
    if code == "server_error":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText", "The model server had an internal error. Try again."
            ),
            "retry",
        )
    if code == "timeout":
        phase = p.get("phase", "")
        if phase == "first_token":
            return ErrorText(
                QCoreApplication.translate(
                    "ErrorText",
                    "The model took too long to start answering (a local model may still be loading). Try again.",
                ),
                "retry",
            )
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText", "The server stopped answering in time. Try again."
            ),
            "retry",
        )
    if code == "unavailable":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText",
                "Cannot reach the model server. Check that it is running and the address in Settings is right.",
            ),
            "settings",
        )
    if code == "context_too_long":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText",
                "The conversation is too long for this model. Start a new conversation or pick a model with a larger context.",
            ),
            "",
        )
    if code == "message_too_long":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText",
                "This message is too long for the model on its own. Shorten it or pick a model with a larger context, then edit and resend.",
            ),
            "",
        )
    if code == "malformed_response":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText", "The server sent a reply the app could not read. Try again."
            ),
            "retry",
        )
    if code == "bad_request":
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText", "The server refused the request: {detail}"
            ).format(detail=error.detail[:200]),
            "",
        )
    if code == "not_configured":
        if p.get("what") == "model":
            return ErrorText(
                QCoreApplication.translate(
                    "ErrorText", "Choose a chat model for this provider in Settings."
                ),
                "settings",
            )
        return ErrorText(
            QCoreApplication.translate(
                "ErrorText", "No model provider is set up yet. Add one in Settings."
            ),
            "settings",
        )
    if code == "images_not_accepted":
        text = QCoreApplication.translate(
            "ErrorText",
            "{model} does not accept images, so nothing was sent. Remove the images or pick a "
            "model that accepts them; if this one does, say so in Settings → Providers.",
        )
        return ErrorText(text.format(model=p.get("model") or ""), "settings")
    if code == "attachment_refused":
        return ErrorText(_attachment_words(error), "")
    memory_words = _memory_words(error)
    if memory_words is not None:
        return ErrorText(memory_words, "")
    if code == "invalid_input":
        reason = p.get("reason")
        if reason == "empty":
            return ErrorText(QCoreApplication.translate("ErrorText", "The message is empty."), "")
        if reason == "too_large":
            return ErrorText(
                QCoreApplication.translate("ErrorText", "The message is far too large to send."), ""
            )
        if reason == "busy":
            return ErrorText(
                QCoreApplication.translate(
                    "ErrorText", "Wait for the current reply to finish, or stop it."
                ),
                "",
            )
        if reason == "missing":
            return ErrorText(
                QCoreApplication.translate(
                    "ErrorText", "It no longer exists: it may have been deleted meanwhile."
                ),
                "",
            )
        return ErrorText(
            QCoreApplication.translate("ErrorText", "That value cannot be used: {detail}").format(
                detail=error.detail[:200]
            ),
            "",
        )
    if code == "storage":
        return ErrorText(_storage_words(error), "")
    if code.startswith("sync"):
        from etos_desktop.ui.sync_text import sync_error_words

        return ErrorText(sync_error_words(error), "")
    return ErrorText(
        QCoreApplication.translate("ErrorText", "Something went wrong: {detail}").format(
            detail=error.detail[:200] or code
        ),
        "",
    )


def _attachment_words(error: EtosError) -> str:
    """Why a file was not attached (``AttachmentRefused`` reasons)."""
    from etos_desktop.core.text.cleaning import neutralise_bidi

    p = error.params
    name = neutralise_bidi(str(p.get("name") or ""))
    reason = str(p.get("reason", ""))
    if reason == "too_large":
        limit = int(p.get("limit") or 0)
        return QCoreApplication.translate(
            "ErrorText", "“{name}” was not attached: it is larger than {size} MB."
        ).format(name=name, size=max(1, limit // (1024 * 1024)))
    if reason == "too_many":
        return QCoreApplication.translate(
            "ErrorText", "At most {limit} files can go with one message."
        ).format(limit=p.get("limit", "?"))
    words = {
        "empty": QCoreApplication.translate(
            "ErrorText", "“{name}” was not attached: the file is empty."
        ),
        "binary": QCoreApplication.translate(
            "ErrorText", "“{name}” was not attached: it is not a text file, whatever its name says."
        ),
        "unsupported": QCoreApplication.translate(
            "ErrorText",
            "“{name}” was not attached: only images (PNG, JPEG, GIF, WebP, BMP), PDFs and text "
            "files (text, Markdown, code, CSV, JSON…) can be attached.",
        ),
        "not_image": QCoreApplication.translate(
            "ErrorText", "“{name}” was not attached: it is not an image the app can read."
        ),
        "too_many_pixels": QCoreApplication.translate(
            "ErrorText", "“{name}” was not attached: the image has too many pixels."
        ),
        "encrypted": QCoreApplication.translate(
            "ErrorText", "“{name}” was not attached: the PDF is protected by a password."
        ),
        "no_text": QCoreApplication.translate(
            "ErrorText",
            "“{name}” was not attached: the PDF has no text to read (scanned pages?).",
        ),
        "unavailable": QCoreApplication.translate(
            "ErrorText", "Attachments are not available right now."
        ),
    }
    text = words.get(
        reason,
        QCoreApplication.translate("ErrorText", "“{name}” was not attached: it could not be read."),
    )
    return text.format(name=name)


def _storage_words(error: EtosError) -> str:
    """Words for a failed read or write of the data (``StorageError`` reasons)."""
    words = {
        "disk_full": QCoreApplication.translate(
            "ErrorText",
            "The disk is full: nothing new could be saved. Free some space and try again.",
        ),
        "read_only": QCoreApplication.translate(
            "ErrorText",
            "The data folder is read-only: nothing new could be saved. Your earlier data is unchanged.",
        ),
        "permission": QCoreApplication.translate(
            "ErrorText",
            "The app is not allowed to write to its data folder. Your earlier data is unchanged.",
        ),
        "corrupt": QCoreApplication.translate(
            "ErrorText",
            "The database file is damaged. Quit the app and restore a backup (see the README).",
        ),
        "newer_schema": QCoreApplication.translate(
            "ErrorText",
            "The data was written by a newer version of ETOS Desktop. Update the app to open it.",
        ),
        "migration": QCoreApplication.translate(
            "ErrorText",
            "Upgrading the database failed; it was left as it was. A copy is in the backups folder.",
        ),
        "closed": QCoreApplication.translate(
            "ErrorText", "The database is closed: the app is shutting down."
        ),
    }
    reason = str(error.params.get("reason", ""))
    if reason in words:
        return words[reason]
    # The operating system's or SQLite's own words: technical, but they say what failed.
    return QCoreApplication.translate(
        "ErrorText", "Saving failed: {detail}. Your earlier data is unchanged."
    ).format(detail=error.detail[:200])


def _secret_kind(reason: str) -> str:
    """Words for a kind of secret the memory write check recognises (``core.text.secrets.SECRET_REASONS``)."""
    kinds = {
        "private_key": QCoreApplication.translate("ErrorText", "a private key"),
        "api_key": QCoreApplication.translate("ErrorText", "an API key"),
        "password": QCoreApplication.translate("ErrorText", "a password"),
        "id_number": QCoreApplication.translate("ErrorText", "an ID number"),
        "card_number": QCoreApplication.translate("ErrorText", "a card number"),
        "ssn": QCoreApplication.translate("ErrorText", "a social security number"),
        "bank_account": QCoreApplication.translate("ErrorText", "a bank account number"),
    }
    return kinds.get(
        reason, QCoreApplication.translate("ErrorText", "a secret or a sensitive number")
    )


def _memory_words(error: EtosError) -> str | None:
    """Words for the memory write checks and for memory being unavailable, else ``None``."""
    p = error.params
    code = error.code
    if code == "memory_empty":
        return QCoreApplication.translate("ErrorText", "Nothing to remember: the text is empty.")
    if code == "memory_too_long":
        return QCoreApplication.translate(
            "ErrorText",
            "Too long to remember ({length} characters; the limit is {limit}). Keep one or a few "
            "short sentences.",
        ).format(length=p.get("length", "?"), limit=p.get("limit", "?"))
    if code == "memory_secret":
        what = _secret_kind(str(p.get("reason", "")))
        return QCoreApplication.translate(
            "ErrorText",
            "Not saved: this looks like {what}. Secrets and ID numbers are never kept in memory.",
        ).format(what=what)
    if code == "memory_limit":
        return QCoreApplication.translate(
            "ErrorText",
            "Not saved: the memory is full ({limit} active memories). Archive or delete some in "
            "Settings → Memory.",
        ).format(limit=p.get("limit", "?"))
    if code == "memory_not_found":
        memory_id = p.get("memory_id")
        if memory_id is None:
            return QCoreApplication.translate("ErrorText", "That memory no longer exists.")
        return QCoreApplication.translate("ErrorText", "Memory #{id} no longer exists.").format(
            id=memory_id
        )
    if code == "memory_rejected":
        return QCoreApplication.translate("ErrorText", "Not saved to memory: {detail}").format(
            detail=error.detail[:200]
        )
    if code == "invalid_input":
        reason = p.get("reason")
        if reason == "memory_off":
            return QCoreApplication.translate(
                "ErrorText",
                "Memory is turned off. Turn it on in Settings → Memory to save memories.",
            )
        if reason == "temporary":
            return QCoreApplication.translate(
                "ErrorText",
                "This is a temporary conversation: nothing is saved to or read from memory.",
            )
        if reason == "empty" and "memory" in error.detail:
            return QCoreApplication.translate(
                "ErrorText", "Write what to remember after /remember, e.g. “/remember I use pnpm”."
            )
    return None


def status_text(status: str, error_code: str | None) -> str:
    """Short words for a message's status (shown under interrupted or failed replies)."""
    if status == "interrupted":
        if error_code == "stopped":
            return QCoreApplication.translate("ErrorText", "Stopped")
        if error_code is None:
            # Found still streaming when the database was opened: the app closed or crashed.
            return QCoreApplication.translate(
                "ErrorText", "Interrupted — the app closed before the reply finished"
            )
        return QCoreApplication.translate(
            "ErrorText", "Interrupted — the server ended the reply early"
        )
    if status == "streaming":
        return QCoreApplication.translate("ErrorText", "Writing…")
    if status == "error":
        return QCoreApplication.translate("ErrorText", "Failed")
    return ""


def retry_reason_text(reason: str) -> str:
    """Why a request is being retried; the message widget adds the live "retrying in N s"."""
    if reason == "rate_limited":
        return QCoreApplication.translate("ErrorText", "Rate limited")
    if reason == "unavailable":
        return QCoreApplication.translate("ErrorText", "Cannot reach the server")
    if reason == "timeout":
        return QCoreApplication.translate("ErrorText", "The server is not answering")
    return QCoreApplication.translate("ErrorText", "Server busy")


def failure_text(what: str, error: BaseException) -> str:
    """What was not done and why, for a page's or a dialog's own status line.

    Args:
        what: What was not done, already translated ("The memory was not added.").
        error: Why: an ``EtosError`` is described in words the user can act on; anything else is
            a bug, said as such (its traceback is in the log).
    """
    if isinstance(error, EtosError):
        why = describe(error).message
    else:
        why = QCoreApplication.translate(
            "ErrorText", "An unexpected error occurred; the details are in the log file."
        )
    return f"{what} {why}".strip() if what else why
