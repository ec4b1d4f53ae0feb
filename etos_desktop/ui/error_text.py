"""Words for errors: the core's error codes turned into translated, actionable text."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

from etos_desktop.core.errors import EtosError


def _tr(text: str) -> str:
    return QCoreApplication.translate("ErrorText", text)


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
            _tr("The server rejected the API key. Check the key in Settings."), "settings"
        )
    if code == "model_not_found":
        model = p.get("model") or ""
        text = _tr("The server does not know the model “{model}”. Pick another model in Settings.")
        return ErrorText(text.format(model=model), "settings")
    if code == "rate_limited":
        return ErrorText(
            _tr(
                "The server is rate limiting requests and kept refusing after retries. Try again in a minute."
            ),
            "retry",
        )
    if code == "server_error":
        return ErrorText(_tr("The model server had an internal error. Try again."), "retry")
    if code == "timeout":
        phase = p.get("phase", "")
        if phase == "first_token":
            return ErrorText(
                _tr(
                    "The model took too long to start answering (a local model may still be loading). Try again."
                ),
                "retry",
            )
        return ErrorText(_tr("The server stopped answering in time. Try again."), "retry")
    if code == "unavailable":
        return ErrorText(
            _tr(
                "Cannot reach the model server. Check that it is running and the address in Settings is right."
            ),
            "settings",
        )
    if code == "context_too_long":
        return ErrorText(
            _tr(
                "The conversation is too long for this model. Start a new conversation or pick a model with a larger context."
            ),
            "",
        )
    if code == "message_too_long":
        return ErrorText(
            _tr(
                "This message is too long for the model on its own. Shorten it or pick a model with a larger context, then edit and resend."
            ),
            "",
        )
    if code == "malformed_response":
        return ErrorText(_tr("The server sent a reply the app could not read. Try again."), "retry")
    if code == "bad_request":
        return ErrorText(
            _tr("The server refused the request: {detail}").format(detail=error.detail[:200]), ""
        )
    if code == "not_configured":
        if p.get("what") == "model":
            return ErrorText(_tr("Choose a chat model for this provider in Settings."), "settings")
        return ErrorText(_tr("No model provider is set up yet. Add one in Settings."), "settings")
    memory_words = _memory_words(error)
    if memory_words is not None:
        return ErrorText(memory_words, "")
    if code == "invalid_input":
        reason = p.get("reason")
        if reason == "empty":
            return ErrorText(_tr("The message is empty."), "")
        if reason == "too_large":
            return ErrorText(_tr("The message is far too large to send."), "")
        if reason == "busy":
            return ErrorText(_tr("Wait for the current reply to finish, or stop it."), "")
        return ErrorText(
            _tr("That value cannot be used: {detail}").format(detail=error.detail[:200]), ""
        )
    if code == "storage":
        if p.get("reason") == "disk_full":
            return ErrorText(
                _tr("The disk is full: nothing new could be saved. Free some space and try again."),
                "",
            )
        return ErrorText(
            _tr("Saving failed: {detail}. Your earlier data is unchanged.").format(
                detail=error.detail[:200]
            ),
            "",
        )
    return ErrorText(
        _tr("Something went wrong: {detail}").format(detail=error.detail[:200] or code), ""
    )


def _secret_kind(reason: str) -> str:
    """Words for a kind of secret the memory write check recognises (``policy.SECRET_REASONS``)."""
    kinds = {
        "private_key": _tr("a private key"),
        "api_key": _tr("an API key"),
        "password": _tr("a password"),
        "id_number": _tr("an ID number"),
        "card_number": _tr("a card number"),
        "ssn": _tr("a social security number"),
        "bank_account": _tr("a bank account number"),
    }
    return kinds.get(reason, _tr("a secret or a sensitive number"))


def _memory_words(error: EtosError) -> str | None:
    """Words for the memory write checks and for memory being unavailable, else ``None``."""
    p = error.params
    code = error.code
    if code == "memory_empty":
        return _tr("Nothing to remember: the text is empty.")
    if code == "memory_too_long":
        return _tr(
            "Too long to remember ({length} characters; the limit is {limit}). Keep one or a few "
            "short sentences."
        ).format(length=p.get("length", "?"), limit=p.get("limit", "?"))
    if code == "memory_secret":
        what = _secret_kind(str(p.get("reason", "")))
        return _tr(
            "Not saved: this looks like {what}. Secrets and ID numbers are never kept in memory."
        ).format(what=what)
    if code == "memory_limit":
        return _tr(
            "Not saved: the memory is full ({limit} active memories). Archive or delete some in "
            "Settings → Memory."
        ).format(limit=p.get("limit", "?"))
    if code == "memory_not_found":
        memory_id = p.get("memory_id")
        if memory_id is None:
            return _tr("That memory no longer exists.")
        return _tr("Memory #{id} no longer exists.").format(id=memory_id)
    if code == "memory_rejected":
        return _tr("Not saved to memory: {detail}").format(detail=error.detail[:200])
    if code == "invalid_input":
        reason = p.get("reason")
        if reason == "memory_off":
            return _tr("Memory is turned off. Turn it on in Settings → Memory to save memories.")
        if reason == "temporary":
            return _tr("This is a temporary conversation: nothing is saved to or read from memory.")
        if reason == "empty" and "memory" in error.detail:
            return _tr("Write what to remember after /remember, e.g. “/remember I use pnpm”.")
    return None


def status_text(status: str, error_code: str | None) -> str:
    """Short words for a message's status (shown under interrupted or failed replies)."""
    if status == "interrupted":
        if error_code == "stopped":
            return _tr("Stopped")
        if error_code is None:
            # Found still streaming when the database was opened: the app closed or crashed.
            return _tr("Interrupted — the app closed before the reply finished")
        return _tr("Interrupted — the server ended the reply early")
    if status == "streaming":
        return _tr("Writing…")
    if status == "error":
        return _tr("Failed")
    return ""


def retry_reason_text(reason: str) -> str:
    """Why a request is being retried; the message widget adds the live "retrying in N s"."""
    if reason == "rate_limited":
        return _tr("Rate limited")
    if reason == "unavailable":
        return _tr("Cannot reach the server")
    if reason == "timeout":
        return _tr("The server is not answering")
    return _tr("Server busy")


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
        why = _tr("An unexpected error occurred; the details are in the log file.")
    return f"{what} {why}".strip() if what else why
