"""Which language the prompt templates of a conversation use.

DESIGN §2, "Text for people vs text for models".

The conversation's language is the one most of the user's messages are written in, judged by the
share of CJK characters among their letters; with no usable message it is the UI language.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from etos_desktop.core.context.tokens import letter_counts

Language = Literal["zh", "en"]

#: A message is Chinese when at least this share of its letters are CJK. A Chinese character
#: carries about as much as 3-4 Latin letters, so at 0.2 the Chinese part holds about half of
#: the message: "帮我 debug 这个 function" (0.24) is Chinese, "What does 加油 mean?" (0.14) is not.
ZH_CJK_SHARE: Final = 0.2

#: How many of the user's latest messages decide a conversation's language: the prompt and the
#: screen judge the same ones, so the companion has one name in both.
RECENT_USER_TEXTS: Final = 20


def language_for_locale(locale: str) -> Language:
    """Map a UI locale name to a prompt language.

    Args:
        locale: A locale or language tag such as ``"zh_CN"``, ``"zh-Hant"``, ``"en_US"`` or ``""``.

    Returns:
        ``"zh"`` for any Chinese locale, else ``"en"``.
    """
    return "zh" if locale.strip().lower().replace("_", "-").startswith("zh") else "en"


def conversation_language(user_texts: Sequence[str], fallback: str) -> Language:
    """Choose the prompt language of a conversation from the user's own messages.

    Each message with at least one letter votes for ``"zh"`` (CJK share ≥ ``ZH_CJK_SHARE``) or
    ``"en"``; the majority wins, so one long pasted English log does not outvote many short
    Chinese messages. A tie is settled by the CJK share of all the messages together.

    Args:
        user_texts: The text of the user's messages in the conversation (or the recent ones).
        fallback: The UI locale, used when no message has a letter in it.

    Returns:
        ``"zh"`` or ``"en"``.
    """
    zh_votes = en_votes = 0
    cjk_total = letters_total = 0
    for text in user_texts:
        cjk, letters = letter_counts(text)
        if not letters:
            continue
        cjk_total += cjk
        letters_total += letters
        if cjk / letters >= ZH_CJK_SHARE:
            zh_votes += 1
        else:
            en_votes += 1
    if zh_votes != en_votes:
        return "zh" if zh_votes > en_votes else "en"
    if letters_total:
        return "zh" if cjk_total / letters_total >= ZH_CJK_SHARE else "en"
    return language_for_locale(fallback)
