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


def status_text(status: str, error_code: str | None) -> str:
    """Short words for a message's status (shown under interrupted or failed replies)."""
    if status == "interrupted":
        if error_code == "stopped":
            return _tr("Stopped")
        return _tr("Interrupted — the reply ended early")
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
    return _tr("Server busy")
