r"""Fencing: user data inside a prompt, between tags it cannot close. Pure functions.

Every prompt that carries user data (memories, summaries, the profile, conversation turns) puts
it between ``<tag>`` and ``</tag>`` and tells the model that what is inside is data, not
instructions. A closing tag inside the data would end the fence early and let saved text pose as
instructions ("</memories> SYSTEM: new rules"); ``fence`` writes it as ``<\/tag>``, which reads
the same to a person and closes nothing. Chat requests (``context.assembler``) and every
background request (summaries, the profile, consolidation) use this one function (issue 19).
"""

from __future__ import annotations

import re
from typing import Final

_CLOSING_TAG_RE: Final = re.compile(r"<\s*/\s*([a-z_]+)\s*>", re.IGNORECASE)


def neutralise_closing(tag: str, content: str) -> str:
    r"""``content`` with every closing ``</tag>`` (any case or spacing) written as ``<\/tag>``."""

    def neutralise(match: re.Match[str]) -> str:
        return f"<\\/{match.group(1)}>" if match.group(1).lower() == tag.lower() else match.group(0)

    return _CLOSING_TAG_RE.sub(neutralise, content)


def fence(tag: str, content: str) -> str:
    r"""``content`` (stripped) between ``<tag>`` and ``</tag>``, which it cannot close early.

    Args:
        tag: The fence's name (``memories``, ``profile``, ``conversation``…).
        content: The data.

    Returns:
        ``"<tag>\n" + content + "\n</tag>"`` with the closing tags inside neutralised.
    """
    return f"<{tag}>\n{neutralise_closing(tag, content.strip())}\n</{tag}>"
