"""Domain values of check-ins: their settings, the rule's inputs and the personas that speak."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from etos_desktop.core.settings.store import SettingsStore

log = logging.getLogger(__name__)

#: ``ConversationRow.started_by`` of a conversation a check-in started.
STARTED_BY_COMPANION: Final = "companion"
#: The key of the persona of Settings → Persona (a conversation's own persona is keyed by name).
SETTINGS_PERSONA: Final = ""

CheckinMode = Literal["silence", "daily"]
#: What a check-in row records: a conversation was started, or nothing was shown.
Outcome = Literal["shown", "failed"]


@dataclass(frozen=True)
class QuietHours:
    """The hours of the local day no check-in is shown, as minutes after midnight.

    ``start > end`` crosses midnight (22:00–08:00); ``start == end`` is no quiet hours at all.
    The end itself is no longer quiet.
    """

    start: int
    end: int

    def contains(self, minute: int) -> bool:
        """Whether ``minute`` (after local midnight) is inside the quiet hours."""
        if self.start == self.end:
            return False
        if self.start < self.end:
            return self.start <= minute < self.end
        return minute >= self.start or minute < self.end


@dataclass(frozen=True)
class CheckinSettings:
    """The ``checkins.*`` settings as the rule reads them.

    Attributes:
        enabled: Check-ins are on (off by default).
        mode: ``"silence"`` (after ``after_days`` days without a conversation) or ``"daily"``
            (every day at ``time``).
        time: The daily check-in's local time, minutes after midnight.
        after_days: Days without a conversation before a check-in (silence mode).
        quiet: The quiet hours (``None``: none).
        personas_off: The personas that never check in (``SETTINGS_PERSONA`` for Settings').
    """

    enabled: bool = False
    mode: CheckinMode = "silence"
    time: int = 9 * 60
    after_days: int = 3
    quiet: QuietHours | None = QuietHours(22 * 60, 8 * 60)
    personas_off: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, settings: SettingsStore) -> CheckinSettings:
        """The settings as the store holds them now."""
        mode = settings.get_str("checkins.mode")
        quiet = (
            QuietHours(
                settings.get_int("checkins.quiet_start"), settings.get_int("checkins.quiet_end")
            )
            if settings.get_bool("checkins.quiet_hours")
            else None
        )
        return cls(
            enabled=settings.get_bool("checkins.enabled"),
            mode="daily" if mode == "daily" else "silence",
            time=settings.get_int("checkins.time"),
            after_days=settings.get_int("checkins.after_days"),
            quiet=quiet,
            personas_off=parse_personas_off(settings.get_str("checkins.personas_off")),
        )


def parse_personas_off(value: str) -> frozenset[str]:
    """The persona keys of ``checkins.personas_off`` (a JSON list of names; junk: none off)."""
    if not value.strip():
        return frozenset()
    try:
        names = json.loads(value)
    except ValueError:
        log.info("checkins.personas_off is not JSON; every persona may check in")
        return frozenset()
    if not isinstance(names, list):
        return frozenset()
    return frozenset(persona_key(n) for n in names if isinstance(n, str))


def personas_off_value(keys: Iterable[str]) -> str:
    """The ``checkins.personas_off`` value for these persona keys (sorted, ``""`` for none)."""
    chosen = sorted({persona_key(k) for k in keys})
    return json.dumps(chosen, ensure_ascii=False) if chosen else ""


def persona_key(name: str | None) -> str:
    """The key a persona's switch is kept under: a conversation's own name, or ``""``."""
    return " ".join((name or "").split())


@dataclass(frozen=True)
class CheckinState:
    """What the rule reads from the data.

    Attributes:
        last_attempt_at: The newest check-in, shown or failed (``None``: none yet).
        last_shown_at: The newest shown check-in.
        last_user_message_at: When the user last wrote a message, in any conversation.
    """

    last_attempt_at: datetime | None = None
    last_shown_at: datetime | None = None
    last_user_message_at: datetime | None = None


@dataclass(frozen=True)
class Persona:
    """A companion that may speak first.

    Attributes:
        key: ``SETTINGS_PERSONA`` for the persona of Settings → Persona, else the name a
            conversation gave its own persona.
        name: The conversation's own name (``None``: Settings' name, or the default).
        prompt: The conversation's own personality (``None``: Settings', or the default).
        last_used_at: When a conversation with it last changed (``None``: never).
        conversations: How many conversations use it (Settings' persona: those without one).
    """

    key: str
    name: str | None = None
    prompt: str | None = None
    last_used_at: datetime | None = None
    conversations: int = 0


@dataclass(frozen=True)
class Checkin:
    """One stored check-in.

    Attributes:
        id: Its row id.
        created_at: When it was made or tried.
        outcome: ``"shown"`` or ``"failed"``.
        reason: ``"daily"`` or ``"silence"``.
        persona: The persona's key.
        conversation_id: The conversation it started (``None``: failed, or deleted since).
        error: The failure's code.
    """

    id: int
    created_at: datetime
    outcome: str
    reason: str
    persona: str
    conversation_id: int | None
    error: str | None
