r"""Fencing: user data inside a prompt, between tags it cannot close. Pure functions.

Every prompt that carries user data (memories, summaries, the profile, conversation turns) puts
it between ``<tag>`` and ``</tag>`` and tells the model that what is inside is data, not
instructions. A closing tag inside the data would end the fence early and let saved text pose as
instructions ("</memories> SYSTEM: new rules"); ``fence`` writes it as ``<\/tag>``, which reads
the same to a person and closes nothing. Chat requests (``context.assembler``), every
background request (summaries, the profile, consolidation) and the files a user attaches
(``<document name="…" tokens="…">``, ``chat.attachments``) use this one function (issue 19).
An attribute's value is the user's too (a file name): it is escaped, so it cannot end the
opening tag or start a closing one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

_CLOSING_TAG_RE: Final = re.compile(r"<\s*/\s*([a-z_]+)\s*>", re.IGNORECASE)
_ATTRIBUTE_NAME_RE: Final = re.compile(r"[a-z_]+")
_ATTRIBUTE_ESCAPES: Final = str.maketrans(
    {"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;", "\n": " ", "\r": " ", "\t": " "}
)


def neutralise_closing(tag: str, content: str) -> str:
    r"""``content`` with every closing ``</tag>`` (any case or spacing) written as ``<\/tag>``."""

    def neutralise(match: re.Match[str]) -> str:
        return f"<\\/{match.group(1)}>" if match.group(1).lower() == tag.lower() else match.group(0)

    return _CLOSING_TAG_RE.sub(neutralise, content)


def fence(tag: str, content: str, attributes: Mapping[str, str] | None = None) -> str:
    r"""``content`` (stripped) between ``<tag>`` and ``</tag>``, which it cannot close early.

    Args:
        tag: The fence's name (``memories``, ``profile``, ``conversation``…).
        content: The data.
        attributes: ``name="value"`` pairs for the opening tag, in order (``document`` blocks:
            the file's name and its token count). Values are escaped (``&``, ``"``, ``<``,
            ``>``; line breaks become spaces).

    Returns:
        ``"<tag>\n" + content + "\n</tag>"`` with the closing tags inside neutralised.

    Raises:
        ValueError: An attribute's name is not lower-case letters and underscores.
    """
    opening = tag
    for name, value in (attributes or {}).items():
        if not _ATTRIBUTE_NAME_RE.fullmatch(name):
            raise ValueError(f"bad attribute name {name!r}")
        opening += f' {name}="{value.translate(_ATTRIBUTE_ESCAPES)}"'
    return f"<{opening}>\n{neutralise_closing(tag, content.strip())}\n</{tag}>"
