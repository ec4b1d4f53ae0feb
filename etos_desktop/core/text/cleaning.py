r"""Cleaning: one rule for text that enters the app, one for text it shows. Pure functions.

``clean_text`` is applied wherever text comes in to be stored: what the user types, the model's
``save_memory`` arguments, every memory write (``text.checks.check_content``, so Settings edits
and imports too), and every summary and profile, written by the model, edited or imported
(issue 19). A chat reply is stored as the model sent it; the chat view has its own display
hygiene. The rule drops what no reader wants and some programs choke on: NUL (C code, Qt among
it, takes it for the end of the string) and the other C0 controls except tab and newline, DEL
and the C1 controls. Line ends become ``\n``. A lone surrogate, which cannot be written as UTF-8
at all, becomes U+FFFD. Everything else is kept as given: zero-width joiners inside emoji
sequences, Arabic and Hebrew letters, the bidi marks (U+200E, U+200F, U+061C) that right-to-left
writers use, even the bidi controls that ``neutralise_bidi`` defuses, since what is stored is
what was written and is shown exactly (escaped) in the dialogs that edit it.

``neutralise_bidi`` is applied where text the app does not control is shown: messages and their
code blocks in the chat view, conversation titles, tooltips, the error banner and status lines
(``ui.markdown_render``, ``ui.labels``). The embedding, override and isolate controls (U+202A–U+202E,
U+2066–U+2069) make the characters after them display in another order: "\u202egnp.exe" reads
as "exe.png". Each is shown as its code point between angle brackets, ``⟨U+202E⟩``: visible, so
the reader sees that something was there and can look it up, and inert, so nothing after it
moves. Angle brackets (U+27E8, U+27E9) rather than ASCII ones: Markdown gives them no meaning, so
a placeholder next to ``(…)`` never becomes a link.
"""

from __future__ import annotations

import re
from typing import Final

# C0 except tab (09) and newline (0A), DEL, C1; CR is folded into newlines first.
_CONTROL_RE: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE_RE: Final = re.compile("[\ud800-\udfff]")
_BIDI_CONTROL_RE: Final = re.compile("[\u202a-\u202e\u2066-\u2069]")


def clean_text(text: str) -> str:
    r"""``text`` as it may be stored: without control characters, with ``\n`` line ends.

    Drops NUL, the C0 controls other than tab and newline, DEL and the C1 controls
    (U+0080–U+009F); turns ``\r\n`` and a lone ``\r`` into ``\n`` and a lone surrogate into
    U+FFFD. Leaves white space at the ends alone: callers strip as their field needs.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_RE.sub("", text)
    return _SURROGATE_RE.sub("\ufffd", text)


def neutralise_bidi(text: str) -> str:
    """``text`` for display, each bidi embedding/override/isolate control shown as ``⟨U+XXXX⟩``."""
    return _BIDI_CONTROL_RE.sub(lambda match: f"⟨U+{ord(match.group()):04X}⟩", text)
