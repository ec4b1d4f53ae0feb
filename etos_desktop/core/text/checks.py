"""Write checks for memories: pure functions, no DB, no clock.

Every memory write passes ``check_content`` (the tool, Settings, Remember, imports, consolidation),
so it is where a memory's text is cleaned as all incoming text is (``core.text.cleaning``). The
secrets filter itself is shared by every layer (``core.text.secrets``).
"""

from __future__ import annotations

from etos_desktop.core.memory.errors import MemoryEmpty, MemorySecret, MemoryTooLong
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.secrets import secret_reason


def check_content(text: str, *, max_chars: int | None) -> str:
    r"""Run the write checks on a memory's text.

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
