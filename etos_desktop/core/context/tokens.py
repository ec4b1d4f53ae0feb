"""Token estimates without a tokenizer (DESIGN §4).

``tiktoken`` would download its data at run time and knows only OpenAI's vocabularies, so the app
estimates: about one token per CJK character and one token per four other characters. The server's
``usage`` replaces the estimate when it is returned. Estimates err on the generous side for Chinese
(real tokenizers often fit 1.2-1.5 characters per token), which keeps requests under the window.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

#: Tokens a chat message costs beyond its text (role, separators of the chat template).
MESSAGE_OVERHEAD_TOKENS: Final = 4
#: Characters per token for text that is not CJK.
CHARS_PER_TOKEN: Final = 4
#: What one image part is counted as: OpenAI bills a 512x512 tile at high detail as 85 + 170
#: tokens; a typical photo is 2-4 tiles, so 765 (a 1024x1024 image) is a fair middle.
IMAGE_PART_TOKENS: Final = 765

# Every character that is roughly one token on its own: Hangul Jamo, CJK radicals, ideographic
# description characters, CJK symbols and punctuation, kana, Bopomofo, Hangul compatibility Jamo,
# Kanbun, enclosed and compatibility CJK, ideographs (the BMP blocks and extensions A-H), Hangul
# syllables, compatibility ideographs, vertical and compatibility forms, half-/full-width forms,
# the kana supplement. One range U+2E80-U+9FFF covers most of them in one go.
_CJK_CLASS = (
    "\u1100-\u11ff"
    "\u2e80-\u9fff"
    "\ua960-\ua97f"
    "\uac00-\ud7ff"
    "\uf900-\ufaff"
    "\ufe10-\ufe1f"
    "\ufe30-\ufe4f"
    "\uff00-\uffef"
    "\U0001b000-\U0001b16f"
    "\U00020000-\U0003ffff"
)
# Runs, not single characters: ``sub`` on runs is one C-level pass (≈ 7 ms for 1 MB of English,
# ≈ 13 ms for 1 MB of densely mixed text, measured on the dev machine).
_CJK_RUN_RE: Final = re.compile(f"[{_CJK_CLASS}]+")
# Unicode letters (no digits, no underscore): what language detection weighs.
_LETTER_RUN_RE: Final = re.compile(r"[^\W\d_]+")


def _count_matching(pattern: re.Pattern[str], text: str) -> int:
    return len(text) - len(pattern.sub("", text))


def count_cjk(text: str) -> int:
    """Count the characters of ``text`` that are CJK (ideographs, kana, Hangul, CJK punctuation).

    Args:
        text: Any text.

    Returns:
        The number of CJK characters, full-width forms included.
    """
    return _count_matching(_CJK_RUN_RE, text)


def estimate_tokens(text: str) -> int:
    """Estimate how many tokens ``text`` costs.

    One token per CJK character plus one per four other characters (rounded up).

    Args:
        text: Any text.

    Returns:
        The estimate; 0 for an empty string.
    """
    if not text:
        return 0
    cjk = count_cjk(text)
    other = len(text) - cjk
    return cjk + -(-other // CHARS_PER_TOKEN)


def letter_counts(text: str) -> tuple[int, int]:
    """Count the letters of ``text``, and how many of them are CJK.

    Digits, punctuation (full-width included), spaces and symbols are not letters, so a date or a
    line of code punctuation does not tip the balance either way.

    Args:
        text: Any text.

    Returns:
        ``(cjk_letters, all_letters)``.
    """
    letters = _LETTER_RUN_RE.findall(text)
    joined = "".join(letters)
    return count_cjk(joined), len(joined)


def cjk_share(text: str) -> float:
    """Share of the letters of ``text`` that are CJK characters.

    Args:
        text: Any text.

    Returns:
        A number from 0.0 (no CJK letters, or no letters at all) to 1.0 (only CJK letters).
    """
    cjk, total = letter_counts(text)
    return cjk / total if total else 0.0


def _content_tokens(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return estimate_tokens(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, Mapping):
                kind = part.get("type")
                if kind == "text" and isinstance(part.get("text"), str):
                    total += estimate_tokens(part["text"])
                    continue
                if kind in ("image_url", "input_image"):
                    total += IMAGE_PART_TOKENS
                    continue
            total += estimate_tokens(_dump(part))
        return total
    return estimate_tokens(_dump(content))


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """Estimate how many tokens one OpenAI-format chat message costs.

    Counts the content (a string or a list of content parts), the names and arguments of its tool
    calls, ``name`` and ``tool_call_id``, plus ``MESSAGE_OVERHEAD_TOKENS``.

    Args:
        message: A chat message dict (``{"role": ..., "content": ...}``).

    Returns:
        The estimate.
    """
    total = MESSAGE_OVERHEAD_TOKENS + _content_tokens(message.get("content"))
    for key in ("name", "tool_call_id"):
        value = message.get(key)
        if isinstance(value, str):
            total += estimate_tokens(value)
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        for call in tool_calls:
            if not isinstance(call, Mapping):
                total += estimate_tokens(_dump(call))
                continue
            function = call.get("function")
            if isinstance(function, Mapping):
                for key in ("name", "arguments"):
                    value = function.get(key)
                    if isinstance(value, str):
                        total += estimate_tokens(value)
                    elif value is not None:
                        total += estimate_tokens(_dump(value))
    return total


def estimate_messages_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """Estimate how many tokens a list of chat messages costs.

    Args:
        messages: Chat message dicts.

    Returns:
        The sum of ``estimate_message_tokens`` over ``messages``.
    """
    return sum(estimate_message_tokens(message) for message in messages)
