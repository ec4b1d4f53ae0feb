"""The settings a user can change, declared once as data.

Each :class:`SettingSpec` carries its type, default, range and a one-sentence description; the
settings UI builds its pages from :data:`SETTINGS` and the store validates against it. Numbers
that are not user-tunable are named constants in their own modules, not settings.

Keys are ``<section>.<name>``; the section groups settings on one page. The descriptions are
English source text marked for extraction (``QT_TRANSLATE_NOOP``, context "SettingsSchema");
the UI translates them (``ui.settings.page.schema_tr``), never showing them untranslated.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.translation_marks import QT_TRANSLATE_NOOP

_short_repr = reprlib.Repr()
_short_repr.maxstring = 40
_short_repr.maxother = 40


@dataclass(frozen=True)
class SettingSpec:
    """The declaration of one setting.

    Attributes:
        key: Dotted key, ``<section>.<name>``.
        type: One of ``bool``, ``int``, ``float``, ``str``.
        default: The value used when the user has not set one.
        description: One full English sentence that says what the setting does.
        minimum: Lowest allowed number; for ``str`` settings the shortest allowed length.
        maximum: Highest allowed number; for ``str`` settings the longest allowed length.
        choices: When given, the value must be one of these.
    """

    key: str
    type: type
    default: object
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[object, ...] | None = None

    @property
    def section(self) -> str:
        """The part of the key before the first dot (the settings page it belongs on)."""
        return self.key.split(".", 1)[0]


SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        "ui.language",
        str,
        "auto",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The language of the user interface; automatic follows the system language.",
        ),
        choices=("auto", "en", "zh"),
    ),
    SettingSpec(
        "ui.theme",
        str,
        "system",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The colour theme of the window; system follows the operating system's light or dark mode.",
        ),
        choices=("system", "light", "dark"),
    ),
    SettingSpec(
        "ui.font_size",
        int,
        100,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The size of text in the window and the chat, in percent of the system's usual size.",
        ),
        minimum=80,
        maximum=200,
    ),
    SettingSpec(
        "chat.max_output_tokens",
        int,
        2048,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The most tokens a single reply may contain; this much room is kept free in the context.",
        ),
        minimum=64,
        maximum=65536,
    ),
    SettingSpec(
        "chat.temperature",
        float,
        0.7,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How varied the replies are: lower values give more focused answers, higher values more "
            "creative ones.",
        ),
        minimum=0.0,
        maximum=2.0,
    ),
    SettingSpec(
        "chat.stream_render_interval_ms",
        int,
        80,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How often, in milliseconds, a streaming reply is redrawn while it arrives.",
        ),
        minimum=16,
        maximum=1000,
    ),
    SettingSpec(
        "chat.auto_title",
        bool,
        True,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Whether a new conversation gets a short title generated from its first messages.",
        ),
    ),
    SettingSpec(
        "persona.name",
        str,
        "",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The companion's name; when empty, the default name for the conversation's language is "
            "used.",
        ),
        maximum=64,
    ),
    SettingSpec(
        "persona.prompt",
        str,
        "",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The companion's personality, sent as part of the system prompt; when empty, the warm "
            "default personality is used.",
        ),
        maximum=10000,
    ),
    SettingSpec(
        "persona.avatar",
        str,
        "",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The path of the image shown as the companion's avatar; when empty, the built-in avatar "
            "is used.",
        ),
    ),
    SettingSpec(
        "memory.enabled",
        bool,
        True,
        QT_TRANSLATE_NOOP(
            "SettingsSchema", "Whether long-term memories are saved and recalled in conversations."
        ),
    ),
    SettingSpec(
        "memory.embedder",
        str,
        "auto",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How memories are matched by meaning: automatic uses your provider's embedding model if "
            "one is set, else the built-in multilingual model; keywords only uses no embeddings.",
        ),
        choices=("auto", "builtin", "keywords"),
    ),
    SettingSpec(
        "memory.strictness",
        str,
        "balanced",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How relevant a memory must be to be sent: strict sends fewer, surer memories; broad "
            "sends more, including weaker matches.",
        ),
        choices=("strict", "balanced", "broad"),
    ),
    SettingSpec(
        "memory.approval",
        str,
        "notify",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "What happens when the model wants to save a memory: ask every time, save it and show a "
            "note with Undo, or never save.",
        ),
        choices=("ask", "notify", "never"),
    ),
    SettingSpec(
        "memory.max_content_chars",
        int,
        1000,
        QT_TRANSLATE_NOOP(
            "SettingsSchema", "The longest text, in characters, that a single memory may hold."
        ),
        minimum=50,
        maximum=10000,
    ),
    SettingSpec(
        "memory.max_active",
        int,
        10000,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The most active memories kept; saving more is refused until some are archived or deleted.",
        ),
        minimum=100,
        maximum=1_000_000,
    ),
    SettingSpec(
        "memory.per_message",
        str,
        "auto",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Which memories go with a message: automatic sends all of them while they fit the "
            "token budget below, else the best matches; a fixed number always sends only the best "
            "matches.",
        ),
        choices=("auto", "fixed"),
    ),
    SettingSpec(
        "memory.all_that_fit_tokens",
        int,
        1500,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The most tokens all memories together may take to be sent whole with every message; "
            "never more than a tenth of the model's context window.",
        ),
        minimum=200,
        maximum=20000,
    ),
    SettingSpec(
        "memory.retrieval_top_k",
        int,
        5,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The most memories sent with one message when they are chosen by relevance; fewer or "
            "none are sent when fewer are relevant.",
        ),
        minimum=1,
        maximum=50,
    ),
    SettingSpec(
        "summaries.enabled",
        bool,
        True,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Whether conversations are summarised in the background and recent summaries are sent "
            "with new messages.",
        ),
    ),
    SettingSpec(
        "summaries.min_user_turns",
        int,
        6,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How many messages the user must have written in a conversation before it is summarised.",
        ),
        minimum=1,
        maximum=200,
    ),
    SettingSpec(
        "summaries.min_gap_minutes",
        int,
        120,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The shortest time, in minutes, between two summaries of the same conversation.",
        ),
        minimum=1,
        maximum=10080,
    ),
    SettingSpec(
        "summaries.inject_count",
        int,
        5,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How many summaries of recent other conversations are sent with each message.",
        ),
        minimum=0,
        maximum=20,
    ),
    SettingSpec(
        "profile.enabled",
        bool,
        True,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Whether the user profile is refreshed daily and sent with every message.",
        ),
    ),
    SettingSpec(
        "profile.refresh_hour",
        int,
        4,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The hour of the day, in local time, at which the user profile is refreshed.",
        ),
        minimum=0,
        maximum=23,
    ),
    SettingSpec(
        "checkins.enabled",
        bool,
        False,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Whether the companion may start a conversation now and then: a short check-in written "
            "from your profile and recent conversation summaries, at most one a day.",
        ),
    ),
    SettingSpec(
        "checkins.mode",
        str,
        "silence",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "When the companion checks in: after some days without a conversation, or every day at "
            "a set time.",
        ),
        choices=("silence", "daily"),
    ),
    SettingSpec(
        "checkins.time",
        int,
        9 * 60,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The local time of the daily check-in, in minutes after midnight.",
        ),
        minimum=0,
        maximum=24 * 60 - 1,
    ),
    SettingSpec(
        "checkins.after_days",
        int,
        3,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How many days without a conversation pass before the companion checks in.",
        ),
        minimum=1,
        maximum=60,
    ),
    SettingSpec(
        "checkins.quiet_hours",
        bool,
        True,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Whether the companion stays quiet during the quiet hours; a check-in due then waits "
            "until they end.",
        ),
    ),
    SettingSpec(
        "checkins.quiet_start",
        int,
        22 * 60,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The local time the quiet hours begin, in minutes after midnight.",
        ),
        minimum=0,
        maximum=24 * 60 - 1,
    ),
    SettingSpec(
        "checkins.quiet_end",
        int,
        8 * 60,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The local time the quiet hours end, in minutes after midnight.",
        ),
        minimum=0,
        maximum=24 * 60 - 1,
    ),
    SettingSpec(
        "checkins.personas_off",
        str,
        "",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The companions that never check in, as a JSON list of their names; an empty name "
            "stands for the companion of the Persona page.",
        ),
        maximum=20000,
    ),
    SettingSpec(
        "backup.keep_count",
        int,
        7,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "How many daily database backups are kept before the oldest is removed.",
        ),
        minimum=1,
        maximum=365,
    ),
    # Sync (DESIGN §11): where this device syncs and what it is called. Per device, never
    # synced themselves; the passphrase and the WebDAV password are in the keyring, not here.
    SettingSpec(
        "sync.enabled",
        bool,
        False,
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Whether this device syncs its memories with your other devices through a folder or "
            "a WebDAV server.",
        ),
    ),
    SettingSpec(
        "sync.transport",
        str,
        "folder",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "Where the sync files are kept: a folder that a sync service keeps in step, or a "
            "WebDAV server.",
        ),
        choices=("folder", "webdav"),
    ),
    SettingSpec(
        "sync.folder",
        str,
        "",
        QT_TRANSLATE_NOOP(
            "SettingsSchema", "The folder on this computer that holds the sync files."
        ),
        maximum=4096,
    ),
    SettingSpec(
        "sync.webdav_url",
        str,
        "",
        QT_TRANSLATE_NOOP("SettingsSchema", "The address of the sync folder on the WebDAV server."),
        maximum=2048,
    ),
    SettingSpec(
        "sync.webdav_user",
        str,
        "",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The user name on the WebDAV server; its password is kept in the system keyring.",
        ),
        maximum=256,
    ),
    SettingSpec(
        "sync.device_name",
        str,
        "",
        QT_TRANSLATE_NOOP(
            "SettingsSchema",
            "The name your other devices show for this one in a memory's history; when empty, "
            "the computer's name is used.",
        ),
        maximum=64,
    ),
)

#: The specs by key.
SPECS: Mapping[str, SettingSpec] = MappingProxyType({spec.key: spec for spec in SETTINGS})


def spec_for(key: str) -> SettingSpec:
    """Return the spec of ``key``.

    Args:
        key: A dotted setting key.

    Returns:
        Its declaration.

    Raises:
        KeyError: No setting has that key (a programming error, not user input).
    """
    return SPECS[key]


def defaults() -> dict[str, object]:
    """Return a fresh dict of every setting's default value."""
    return {spec.key: spec.default for spec in SETTINGS}


def validate(spec: SettingSpec, value: object) -> object:
    """Check ``value`` against ``spec`` and return it in the spec's type.

    An integral float is accepted for an ``int`` setting and an ``int`` for a ``float`` setting
    (JSON does not keep that distinction); ``bool`` is never taken for a number.

    Args:
        spec: The setting's declaration.
        value: The candidate value.

    Returns:
        The value, converted to ``spec.type``.

    Raises:
        InvalidInput: The value has the wrong type, is out of range or not one of the choices.
            ``params`` has ``key`` and ``reason`` (``"wrong_type"``, ``"out_of_range"``,
            ``"too_short"``, ``"too_long"``, ``"not_a_choice"``) plus ``minimum``/``maximum`` or
            ``choices`` where they apply.
    """
    checked = _coerce(spec, value)
    if isinstance(checked, str):
        _check_length(spec, checked)
    elif isinstance(checked, int | float) and not isinstance(checked, bool):
        _check_range(spec, checked)
    if spec.choices is not None and checked not in spec.choices:
        raise InvalidInput(
            f"{spec.key}: {_short_repr.repr(value)} is not one of {spec.choices}",
            key=spec.key,
            reason="not_a_choice",
            choices=spec.choices,
        )
    return checked


def _coerce(spec: SettingSpec, value: object) -> object:
    expected = spec.type
    if expected is bool:
        if isinstance(value, bool):
            return value
    elif expected is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif expected is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
            if math.isfinite(number):
                return number
    elif expected is str:
        if isinstance(value, str):
            return value
    else:  # pragma: no cover - a spec with an unsupported type is a programming error
        raise TypeError(f"{spec.key}: unsupported setting type {expected!r}")
    raise InvalidInput(
        f"{spec.key}: expected {expected.__name__}, got {type(value).__name__} "
        f"{_short_repr.repr(value)}",
        key=spec.key,
        reason="wrong_type",
        expected=expected.__name__,
    )


def _check_range(spec: SettingSpec, number: float) -> None:
    if (spec.minimum is not None and number < spec.minimum) or (
        spec.maximum is not None and number > spec.maximum
    ):
        raise InvalidInput(
            f"{spec.key}: {number} is outside {spec.minimum}..{spec.maximum}",
            key=spec.key,
            reason="out_of_range",
            minimum=spec.minimum,
            maximum=spec.maximum,
        )


def _check_length(spec: SettingSpec, text: str) -> None:
    if spec.minimum is not None and len(text) < spec.minimum:
        raise InvalidInput(
            f"{spec.key}: shorter than {spec.minimum} characters",
            key=spec.key,
            reason="too_short",
            minimum=spec.minimum,
        )
    if spec.maximum is not None and len(text) > spec.maximum:
        raise InvalidInput(
            f"{spec.key}: longer than {spec.maximum} characters",
            key=spec.key,
            reason="too_long",
            maximum=spec.maximum,
        )
