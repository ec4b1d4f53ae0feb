"""Words for background jobs wherever Settings shows them: names, times, recorded errors.

A job's failure is stored as a code (``"auth"``, ``"summary_rejected:too_long"``,
``"storage:disk_full"``, ``"bug:KeyError"``), never as a server's text; this module turns it into
a sentence a user can act on.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QCoreApplication

from etos_desktop.core.jobs import JobName


def _tr(text: str, n: int = -1) -> str:
    return QCoreApplication.translate("JobText", text, None, n)


def job_name(name: JobName) -> str:
    """The translated name of a job."""
    return {
        JobName.TITLES: _tr("Conversation titles"),
        JobName.SUMMARIES: _tr("Session summaries"),
        JobName.PROFILE: _tr("User profile"),
        JobName.CONSOLIDATION: _tr("Memory consolidation"),
        JobName.BACKUP: _tr("Database backup"),
    }[name]


def local_time(value: datetime | None, *, never: str | None = None) -> str:
    """A time as the user reads it (local, minutes), or ``never`` / "—" for ``None``."""
    if value is None:
        return never if never is not None else "—"
    return value.astimezone().strftime("%Y-%m-%d %H:%M")


def job_error_text(stored: str | None) -> str:
    """The words for a job's recorded error code; "—" when there is none."""
    if not stored:
        return "—"
    code, _, reason = stored.partition(":")
    if code == "summary_rejected":
        return {
            "too_long": _tr("The model's summary was too long and could not be cut at a sentence."),
            "too_short": _tr("The model's summary was too short."),
            "incomplete": _tr("The model's summary stopped in the middle of a sentence."),
            "empty": _tr("The model answered with nothing."),
        }.get(reason, _tr("The model's summary broke the rules for summaries."))
    if code == "profile_rejected":
        return {
            "too_long": _tr("The model's profile was longer than 4,000 characters."),
            "no_sections": _tr("The model's reply was not a profile with sections."),
            "incomplete": _tr("The model's profile was cut off."),
            "empty": _tr("The model answered with nothing."),
        }.get(reason, _tr("The model's profile broke the rules for profiles."))
    if code == "profile_stale":
        return _tr("The profile was edited while it was being refreshed; the edit was kept.")
    if code == "bug":
        return _tr("An unexpected error ({kind}); details are in the log.").format(kind=reason)
    words = {
        "auth": _tr("The server rejected the API key."),
        "model_not_found": _tr("The server does not know the model."),
        "rate_limited": _tr("The server was rate limiting requests."),
        "server_error": _tr("The model server had an internal error."),
        "timeout": _tr("The server did not answer in time."),
        "unavailable": _tr("The model server could not be reached."),
        "context_too_long": _tr("The text was too long for the model."),
        "bad_request": _tr("The server refused the request."),
        "malformed_response": _tr("The server sent a reply the app could not read."),
        "not_configured": _tr("No model provider is set up."),
        "storage": _tr("The disk is full.") if reason == "disk_full" else _tr("Saving failed."),
    }
    return words.get(code, stored)
