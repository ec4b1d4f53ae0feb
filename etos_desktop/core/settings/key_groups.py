"""The settings each consumer follows, as key groups checked against the schema on import.

``app.py`` subscribes each group to the action that applies it (its key → action table). A
group is checked with :func:`.store.check_keys` when this module is imported, at start-up, so a
typo or a renamed setting fails loudly instead of leaving a consumer deaf to its setting.
Consumers that read their settings where they use them (the chat service on every send, the
background jobs on every run) need no group.
"""

from __future__ import annotations

from etos_desktop.core.settings.store import (
    DEFAULT_PROVIDER_KEY,
    MODEL_CONTEXT_KEY,
    MODEL_VISION_KEY,
    PROVIDERS_KEY,
    check_keys,
)

#: What sets how long a message may be (the composer's limit): the model and its context
#: size, whether it takes images, the reply's reserve and the blocks sent with every message.
MESSAGE_ROOM = check_keys(
    {
        MODEL_CONTEXT_KEY,
        MODEL_VISION_KEY,
        PROVIDERS_KEY,
        DEFAULT_PROVIDER_KEY,
        "chat.max_output_tokens",
        "memory.enabled",
        "memory.per_message",
        "memory.all_that_fit_tokens",
        "profile.enabled",
        "summaries.enabled",
        "summaries.inject_count",
        "persona.name",
        "persona.prompt",
    }
)

#: What the chat header, the status bar and the companion's look show.
PROVIDER_VIEW = check_keys(
    {
        PROVIDERS_KEY,
        DEFAULT_PROVIDER_KEY,
        "ui.language",
        "persona.name",
        "persona.prompt",
        "persona.avatar",
        "memory.enabled",
    }
)

#: Retrieval tuning the engine takes without a new embedder: relevance moves the floors.
RETRIEVAL_TUNING = check_keys({"memory.strictness"})

#: The memory engine's write limits.
MEMORY_LIMITS = check_keys({"memory.max_content_chars", "memory.max_active"})

#: What the summary and profile jobs are scheduled by.
JOB_SCHEDULE = check_keys(
    {
        "memory.enabled",
        "summaries.enabled",
        "summaries.min_user_turns",
        "summaries.min_gap_minutes",
        "profile.enabled",
        "profile.refresh_hour",
    }
)

#: What the companion's check-ins are scheduled by (``core/checkins/rule.py``): their own
#: settings, memory (never while it is off) and whether a provider is set up.
CHECKIN_SCHEDULE = check_keys(
    {
        PROVIDERS_KEY,
        DEFAULT_PROVIDER_KEY,
        "memory.enabled",
        "checkins.enabled",
        "checkins.mode",
        "checkins.time",
        "checkins.after_days",
        "checkins.quiet_hours",
        "checkins.quiet_start",
        "checkins.quiet_end",
        "checkins.personas_off",
    }
)
