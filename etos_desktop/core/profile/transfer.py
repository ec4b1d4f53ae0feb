"""The user profile in the export document and its import (DESIGN §9).

The export document (``core/transfer/document.py``) carries a ``"profile"`` object beside
``"memories"`` and ``"summaries"``: the text, its pinned lines with their sections, and when it
last changed; the Markdown export gives it a section of its own (:func:`markdown_lines`).
The import checks it like a profile the user wrote (cleaning, length, pinned lines, secrets)
and, when it differs from the local profile, makes it the profile in the same transaction as the
memories — as a new revision with the source ``imported``, so the local text stays in the
history and can be restored. An equal profile, or an empty one, changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlmodel import Session

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.profile import sections, store
from etos_desktop.core.profile.access import check_edit
from etos_desktop.core.profile.errors import ProfileStale
from etos_desktop.core.profile.records import PinnedLine, Profile, ProfileSource, as_dict
from etos_desktop.core.text.cleaning import clean_text

ProfileProblemReason = Literal["bad_field", "too_long", "pins_too_long", "secret"]

#: The most pinned lines a file may carry (their length is capped too).
MAX_PINS = 200


@dataclass(frozen=True)
class ProfileEntry:
    """The valid profile of an import file."""

    content: str
    pinned: tuple[PinnedLine, ...]
    updated_at: datetime | None


@dataclass(frozen=True)
class ProfilePlan:
    """What an import does to the profile.

    Attributes:
        entry: The file's profile, when it is valid and not empty.
        replace: It differs from the local one and becomes the profile.
        base_revision_id: The local revision the preview saw (the write is refused when the
            profile changed since).
        invalid: Why the file's profile is skipped (``None``: it is not).
        invalid_field: The offending field.
    """

    entry: ProfileEntry | None = None
    replace: bool = False
    base_revision_id: int | None = None
    invalid: ProfileProblemReason | None = None
    invalid_field: str | None = None

    @property
    def has_changes(self) -> bool:
        """Whether applying would change the profile."""
        return self.replace


def export_record(profile: Profile | None) -> dict[str, Any] | None:
    """The profile as an export entry (JSON-ready), or ``None`` when there is none."""
    if profile is None or profile.empty:
        return None
    return {
        "content": profile.content,
        "pinned": [as_dict(p) for p in profile.pinned],
        "updated_at": None
        if profile.updated_at is None
        else profile.updated_at.astimezone(UTC).isoformat(),
    }


def markdown_lines(profile: Profile | None, heading: str) -> list[str]:
    """The profile's section of the Markdown export (none for an empty profile).

    Args:
        profile: The profile.
        heading: The section's heading.
    """
    if profile is None or profile.empty:
        return []
    # The profile is Markdown already: its "## Section" headings go one level under ours.
    body = [
        f"#{line}" if line.lstrip().startswith("#") else line
        for line in profile.content.splitlines()
    ]
    return [f"## {heading}", "", *body, ""]


class _Bad(Exception):
    def __init__(self, reason: ProfileProblemReason, field: str) -> None:
        super().__init__(reason)
        self.reason: ProfileProblemReason = reason
        self.field = field


def _pins(raw: object) -> tuple[PinnedLine, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > MAX_PINS:
        raise _Bad("bad_field", "pinned")
    pins = []
    for item in raw:
        if not isinstance(item, dict):
            raise _Bad("bad_field", "pinned")
        text, section = item.get("text"), item.get("section", "")
        if not isinstance(text, str) or not isinstance(section, str):
            raise _Bad("bad_field", "pinned")
        # Cleaned like the profile's text, or a pin would no longer match its line.
        text, section = clean_text(text).strip(), clean_text(section)
        if "\n" in text:
            raise _Bad("bad_field", "pinned")
        if len(text) > sections.MAX_PINNED_CHARS or len(section) > 200:
            raise _Bad("pins_too_long", "pinned")
        if text:
            pins.append(PinnedLine(text, section))
    return tuple(pins)


def _entry(raw: object) -> ProfileEntry | None:
    if not isinstance(raw, dict):
        raise _Bad("bad_field", "profile")
    content = raw.get("content")
    if not isinstance(content, str):
        raise _Bad("bad_field", "content")
    if len(content) > sections.MAX_PROFILE_CHARS * 2:
        raise _Bad("too_long", "content")
    pins = _pins(raw.get("pinned"))
    updated: datetime | None = None
    value = raw.get("updated_at")
    if value is not None:
        if not isinstance(value, str) or len(value) > 64:
            raise _Bad("bad_field", "updated_at")
        try:
            updated = datetime.fromisoformat(value)
        except ValueError as exc:
            raise _Bad("bad_field", "updated_at") from exc
        updated = updated if updated.tzinfo else updated.replace(tzinfo=UTC)
    try:
        text, kept = check_edit(content, pins)
    except InvalidInput as exc:
        reasons: dict[str, ProfileProblemReason] = {
            "profile_too_long": "too_long",
            "profile_pins_too_long": "pins_too_long",
            "memory_secret": "secret",
        }
        raise _Bad(reasons.get(exc.code, "bad_field"), "content") from exc
    if not text:
        return None
    return ProfileEntry(text, kept, updated)


def plan(raw: object, local: Profile | None) -> ProfilePlan:
    """Check the ``"profile"`` of an import file and match it against the local profile.

    Args:
        raw: The file's ``"profile"`` value (``None``: the file has none).
        local: The local profile.

    Returns:
        The plan; an invalid profile is skipped with its reason, the rest of the file is not.
    """
    if raw is None:
        return ProfilePlan()
    try:
        entry = _entry(raw)
    except _Bad as bad:
        return ProfilePlan(invalid=bad.reason, invalid_field=bad.field)
    if entry is None:
        return ProfilePlan()
    local = local or Profile()
    same = sections.same_profile(entry.content, local.content) and set(entry.pinned) == set(
        local.pinned
    )
    return ProfilePlan(entry=entry, replace=not same, base_revision_id=local.revision_id)


def write(session: Session, profile_plan: ProfilePlan, now: datetime) -> bool:
    """Write a plan in the caller's transaction (on the DB thread; the caller commits).

    Returns:
        Whether the profile was replaced.

    Raises:
        ProfileStale: The profile changed since the preview (the whole import is refused).
    """
    if not profile_plan.replace or profile_plan.entry is None:
        return False
    entry = profile_plan.entry
    try:
        store.write_version(
            session,
            content=entry.content,
            pinned=entry.pinned,
            source=ProfileSource.IMPORTED,
            now=now,
            base_revision_id=profile_plan.base_revision_id,
            commit=False,
        )
    except ProfileStale as exc:
        raise ProfileImportStale(exc.detail) from exc
    return True


class ProfileImportStale(InvalidInput):
    """The profile changed between the import's preview and its writing; nothing was changed."""

    code = "memory_import_stale"
