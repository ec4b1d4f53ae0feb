"""The write checks every stored text passes, and what they raise: pure functions, no DB, no clock.

Every memory write passes :func:`check_content` (the tool, Settings, Remember, imports,
consolidation), and so do session summaries (the editor, imports); it is where such a text is
cleaned as all incoming text is (``core.text.cleaning``). The profile runs the secrets filter
(``core.text.secrets``) itself and refuses with :class:`MemorySecret` too.

::

    InvalidInput (core.errors)
    └── MemoryRejected             a write check said no (``params["reason"]`` says which)
        ├── MemoryEmpty            nothing but white space
        ├── MemoryTooLong          over the limit (params: length, limit)
        ├── MemorySecret           looks like a secret (params: reason, e.g. "api_key")
        └── MemoryLimitReached     (``core.memory.errors``: too many active memories)

The errors keep the names and codes they had when memories were the only checked text: the codes
(``memory_empty``…) are what the UI and the model's tool results map.
"""

from __future__ import annotations

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.secrets import secret_reason


class MemoryRejected(InvalidInput):
    """A text was not written because a write check refused it."""

    code = "memory_rejected"


class MemoryEmpty(MemoryRejected):
    """The text is empty or only white space."""

    code = "memory_empty"


class MemoryTooLong(MemoryRejected):
    """The text is longer than the configured limit."""

    code = "memory_too_long"


class MemorySecret(MemoryRejected):
    """The text contains what looks like a secret or a sensitive identifier."""

    code = "memory_secret"


def check_content(text: str, *, max_chars: int | None) -> str:
    r"""Run the write checks on a text to be stored (a memory's, a summary's).

    Args:
        text: The proposed content.
        max_chars: The longest accepted content (``None``: no limit, for bulk loads).

    Returns:
        The content cleaned (no NUL or other control characters, ``\n`` line ends) and with
        surrounding white space removed.

    Raises:
        MemoryEmpty: Nothing but white space.
        MemoryTooLong: Longer than ``max_chars``.
        MemorySecret: Looks like a secret; ``params["reason"]`` names the kind.
    """
    content = clean_text(text).strip()
    if not content:
        raise MemoryEmpty("empty memory", reason="empty")
    if max_chars is not None and len(content) > max_chars:
        raise MemoryTooLong(
            f"{len(content)} > {max_chars} characters",
            reason="too_long",
            length=len(content),
            limit=max_chars,
        )
    reason = secret_reason(content)
    if reason is not None:
        # The detail never repeats the text: it holds the secret.
        raise MemorySecret(f"refused: looks like {reason}", reason=reason)
    return content
