"""A message's token usage: the columns it is stored in, and reading it back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from etos_desktop.core.providers.base import Usage

if TYPE_CHECKING:
    # Only for its type: the chat view reads usage before the first frame, without SQLModel.
    from etos_desktop.core.storage.tables import MessageRow


def usage_columns(usage: Usage | None) -> dict[str, Any]:
    """The ``MessageRow`` values that store ``usage`` (all ``None`` when there is none)."""
    if usage is None:
        return {"prompt_tokens": None, "completion_tokens": None, "cached_tokens": None}
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
    }


def message_usage(row: MessageRow) -> Usage | None:
    """The usage the server reported for a stored reply (``None``: it reported none)."""
    if row.prompt_tokens is None and row.completion_tokens is None:
        return None
    prompt = row.prompt_tokens or 0
    completion = row.completion_tokens or 0
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cached_tokens=row.cached_tokens or 0,
    )


def usage_json(usage: Usage | None) -> dict[str, int] | None:
    """``usage`` as the plain data an export writes (``None`` when there is none)."""
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "cached_tokens": usage.cached_tokens,
    }
