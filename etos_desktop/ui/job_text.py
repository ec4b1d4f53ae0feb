"""Words for background jobs wherever Settings shows them: names, times, recorded errors.

A job's failure is stored as a code (``"auth"``, ``"summary_rejected:too_long"``,
``"storage:disk_full"``, ``"bug:KeyError"``), never as a server's text; this module turns it into
a sentence a user can act on.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QCoreApplication

from etos_desktop.core.jobs import JobName


def job_name(name: JobName) -> str:
    """The translated name of a job."""
    return {
        JobName.TITLES: QCoreApplication.translate("JobText", "Conversation titles"),
        JobName.SUMMARIES: QCoreApplication.translate("JobText", "Session summaries"),
        JobName.PROFILE: QCoreApplication.translate("JobText", "User profile"),
        JobName.CONSOLIDATION: QCoreApplication.translate("JobText", "Memory consolidation"),
        JobName.BACKUP: QCoreApplication.translate("JobText", "Database backup"),
        JobName.SYNC: QCoreApplication.translate("JobText", "Sync across devices"),
        JobName.CHECKINS: QCoreApplication.translate("JobText", "Check-ins"),
    }[name]


def local_time(value: datetime | None, *, never: str | None = None, seconds: bool = False) -> str:
    """A time as the user reads it (local, minutes or ``seconds``), or ``never`` / "—" for ``None``."""
    if value is None:
        return never if never is not None else "—"
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def job_error_text(stored: str | None) -> str:
    """The words for a job's recorded error code; "—" when there is none."""
    if not stored:
        return "—"
    code, _, reason = stored.partition(":")
    if code == "summary_rejected":
        return {
            "too_long": QCoreApplication.translate(
                "JobText", "The model's summary was too long and could not be cut at a sentence."
            ),
            "too_short": QCoreApplication.translate(
                "JobText", "The model's summary was too short."
            ),
            "not_a_summary": QCoreApplication.translate(
                "JobText",
                "The model's reply was not a summary (a refusal, a greeting, or the request repeated).",
            ),
            "incomplete": QCoreApplication.translate(
                "JobText", "The model's summary stopped in the middle of a sentence."
            ),
            "empty": QCoreApplication.translate("JobText", "The model answered with nothing."),
        }.get(
            reason,
            QCoreApplication.translate(
                "JobText", "The model's summary broke the rules for summaries."
            ),
        )
    if code == "profile_rejected":
        return {
            "too_long": QCoreApplication.translate(
                "JobText", "The model's profile was longer than 4,000 characters."
            ),
            "no_sections": QCoreApplication.translate(
                "JobText", "The model's reply was not a profile with sections."
            ),
            "incomplete": QCoreApplication.translate("JobText", "The model's profile was cut off."),
            "empty": QCoreApplication.translate("JobText", "The model answered with nothing."),
        }.get(
            reason,
            QCoreApplication.translate(
                "JobText", "The model's profile broke the rules for profiles."
            ),
        )
    if code == "checkin_rejected":
        return QCoreApplication.translate(
            "JobText", "The model answered with nothing, so no check-in was shown."
        )
    if code == "profile_stale":
        return QCoreApplication.translate(
            "JobText", "The profile was edited while it was being refreshed; the edit was kept."
        )
    if code.startswith("sync"):
        from etos_desktop.ui.sync_text import stored_sync_error_text

        return stored_sync_error_text(stored)
    if code == "bug":
        return QCoreApplication.translate(
            "JobText", "An unexpected error ({kind}); details are in the log."
        ).format(kind=reason)
    words = {
        "auth": QCoreApplication.translate("JobText", "The server rejected the API key."),
        "model_not_found": QCoreApplication.translate(
            "JobText", "The server does not know the model."
        ),
        "rate_limited": QCoreApplication.translate(
            "JobText", "The server was rate limiting requests."
        ),
        "server_error": QCoreApplication.translate(
            "JobText", "The model server had an internal error."
        ),
        "timeout": QCoreApplication.translate("JobText", "The server did not answer in time."),
        "unavailable": QCoreApplication.translate(
            "JobText", "The model server could not be reached."
        ),
        "context_too_long": QCoreApplication.translate(
            "JobText", "The text was too long for the model."
        ),
        "bad_request": QCoreApplication.translate("JobText", "The server refused the request."),
        "malformed_response": QCoreApplication.translate(
            "JobText", "The server sent a reply the app could not read."
        ),
        "not_configured": QCoreApplication.translate("JobText", "No model provider is set up."),
        "storage": QCoreApplication.translate("JobText", "The disk is full.")
        if reason == "disk_full"
        else QCoreApplication.translate("JobText", "Saving failed."),
    }
    return words.get(code, stored)
