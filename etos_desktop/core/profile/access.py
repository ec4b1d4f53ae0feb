"""Async access to the user profile for code on the event loop (the UI, the chat, the jobs).

Every read and write runs on the DB worker thread (``Database.run``). The user's own changes
are checked here: the length limits, pinned lines that are in the text, and the secrets filter
every stored text passes (a secret is refused, never stored).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from etos_desktop.core.changes import ChangeHub, ProfileChanged
from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.profile import sections, store
from etos_desktop.core.profile.errors import ProfilePinsTooLong, ProfileTooLong
from etos_desktop.core.profile.records import (
    Material,
    PinnedLine,
    Profile,
    ProfileRevision,
    ProfileSource,
)
from etos_desktop.core.storage.database import Database
from etos_desktop.core.text.checks import MemorySecret
from etos_desktop.core.text.secrets import secret_reason

T = TypeVar("T")


def check_edit(content: str, pinned: Sequence[PinnedLine]) -> tuple[str, tuple[PinnedLine, ...]]:
    """Check a profile the user wrote.

    Args:
        content: The text.
        pinned: The pinned lines; a pin whose line is not in the text is dropped.

    Returns:
        The text (line ends and blank runs made uniform) and the pins that are in it.

    Raises:
        ProfileTooLong: Over ``sections.MAX_PROFILE_CHARS``.
        ProfilePinsTooLong: The pins over ``sections.MAX_PINNED_CHARS`` together.
        MemorySecret: The text holds what the secrets filter takes for a secret.
    """
    text = sections.normalised(content)
    if len(text) > sections.MAX_PROFILE_CHARS:
        raise ProfileTooLong(
            f"{len(text)} characters", length=len(text), limit=sections.MAX_PROFILE_CHARS
        )
    reason = secret_reason(text)
    if reason is not None:
        raise MemorySecret(f"the profile looks like it holds a {reason}", reason=reason)
    lines = {line.strip() for line in text.splitlines()}
    kept = tuple(dict.fromkeys(p for p in pinned if p.text and p.text in lines))
    length = sections.pinned_chars(kept)
    if length > sections.MAX_PINNED_CHARS:
        raise ProfilePinsTooLong(
            f"{length} pinned characters", length=length, limit=sections.MAX_PINNED_CHARS
        )
    return text, kept


class ProfileAccess:
    """The profile, its revisions and its refresh bookkeeping, off the event loop.

    Args:
        db: The open database (schema v5 or later).
        clock: The current time.
        changes: The app's change hub, where the user's changes (save, clear, restore) are
            published (``None``: nobody hears them).
    """

    def __init__(
        self, db: Database, *, clock: Clock | None = None, changes: ChangeHub | None = None
    ) -> None:
        self._db = db
        self._changes = changes
        self.clock: Clock = clock or SystemClock()

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await self._db.run(lambda session: fn(session, *args, **kwargs))

    # -- reading ----------------------------------------------------------------------------------

    async def current(self) -> Profile:
        """The current profile and its bookkeeping."""
        return await self._run(store.get)

    async def revisions(self) -> list[ProfileRevision]:
        """Every revision, newest first."""
        return await self._run(store.revisions)

    async def revision(self, revision_id: int) -> ProfileRevision:
        """One revision (``RevisionNotFound`` when it does not exist)."""
        return await self._run(store.revision, revision_id)

    def transfer_state(self) -> Profile:
        """The profile for the export and import.

        Blocking (it waits for the DB thread): for worker threads, never the UI thread.
        """
        return self._db.call(store.get)

    # -- changes by the user ----------------------------------------------------------------------

    async def save(
        self,
        content: str,
        pinned: Sequence[PinnedLine],
        *,
        base_revision_id: int | None = store.ANY_BASE,
    ) -> Profile:
        """Store the user's text and pins as a new revision (an empty text clears the profile).

        Args:
            content: The text.
            pinned: The pinned lines.
            base_revision_id: The revision the editor loaded (``ANY_BASE``: no check).

        Raises:
            ProfileTooLong, ProfilePinsTooLong, MemorySecret: The text was refused.
            ProfileStale: The profile changed since the editor loaded it.
        """
        text, pins = check_edit(content, pinned)
        source = ProfileSource.MANUAL if text else ProfileSource.CLEARED
        return await self._published(
            store.write_version,
            content=text,
            pinned=pins,
            source=source,
            now=self.clock.now(),
            base_revision_id=base_revision_id,
        )

    async def clear(self) -> Profile:
        """Empty the profile and its pins (the old text stays in the history)."""
        return await self._published(
            store.write_version,
            content="",
            pinned=(),
            source=ProfileSource.CLEARED,
            now=self.clock.now(),
        )

    async def restore(self, revision_id: int) -> Profile:
        """Make an earlier revision's text and pins the profile again (as a new revision)."""

        def write(session: Any) -> Profile:
            old = store.revision(session, revision_id)
            return store.write_version(
                session,
                content=old.content,
                pinned=old.pinned,
                source=ProfileSource.RESTORED,
                now=self.clock.now(),
                restored_from=old.id,
            )

        return await self._published(write)

    async def _published(self, fn: Callable[..., Profile], *args: Any, **kwargs: Any) -> Profile:
        profile = await self._run(fn, *args, **kwargs)
        # After the transaction committed, on the loop (the hub's contract).
        if self._changes is not None:
            self._changes.publish(ProfileChanged())
        return profile

    # -- the refresh ------------------------------------------------------------------------------

    async def material(self, since: datetime | None) -> Material:
        """The summaries and memories written or changed after ``since``, newest first."""
        return await self._run(store.material, since, self.clock.now())

    async def last_stated_change(self) -> datetime | None:
        """When a memory was last superseded by what the user said (``store.last_stated_change``)."""
        return await self._run(store.last_stated_change)

    async def recent_user_texts(self, limit: int = 40) -> list[str]:
        """The user's most recent messages (for the profile's language)."""
        return await self._run(store.recent_user_texts, limit)

    async def write_refresh(self, **values: Any) -> Profile:
        """Store a refreshed profile and its bookkeeping (``store.write_refresh``)."""
        return await self._run(store.write_refresh, now=self.clock.now(), **values)

    async def record_outcome(self, outcome: str, material_until: datetime | None) -> Profile:
        """A refresh that stored nothing new (``store.record_outcome``)."""
        return await self._run(store.record_outcome, outcome, self.clock.now(), material_until)

    async def record_error(self, code: str, retry_at: datetime) -> int:
        """A failed refresh, retried at ``retry_at``; returns the errors in a row."""
        return await self._run(store.record_error, code, self.clock.now(), retry_at)
