"""A new conversation's title, asked of the background model (DESIGN §4).

After a new conversation's first reply the background jobs ask for a short title — a detached,
non-streamed request (:func:`~etos_desktop.core.providers.background.complete_in_background`)
that is never added to the history. The request holds the first user message and the first
reply (1,500 characters of each) and an instruction in the conversation's language. The reply's
first line, without quotes, Markdown marks or a final full stop and cut to ``TITLE_MAX_CHARS``,
becomes the title; an empty reply leaves the conversation untitled. A conversation that already
has a title (the user named it, or an earlier run did) is not asked about again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from etos_desktop.core.context.language import Language, conversation_language
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.providers.background import complete_in_background
from etos_desktop.core.providers.base import Message
from etos_desktop.core.providers.registry import ProviderSource
from etos_desktop.core.storage.repositories import ChatRepository

log = logging.getLogger(__name__)

#: The longest title stored (characters); a longer reply is cut.
TITLE_MAX_CHARS: Final = 40
#: Sampling temperature and reply size of the title request.
TEMPERATURE: Final = 0.2
MAX_OUTPUT_TOKENS: Final = 32
#: Characters of the first message and of the first reply sent.
EXCERPT_CHARS: Final = 1500

_INSTRUCTION: Final[Mapping[Language, str]] = MappingProxyType(
    {
        "zh": "用不超过12个字概括下面这段对话的主题，作为标题。只输出标题本身，不要引号和标点。",
        "en": "Give this conversation a title of at most 6 words. "
        "Reply with the title only, no quotes, no final punctuation.",
    }
)


@dataclass(frozen=True)
class TitleRun:
    """What one title request did.

    Attributes:
        outcome: ``"titled"`` (stored), ``"no_user_message"`` (nothing to title: nothing was
            sent), ``"empty_reply"`` (the model said nothing usable) or ``"error"``.
        title: The stored title, for ``"titled"``.
        error: The failure, for ``"error"`` (the conversation is gone, or the request failed).
    """

    outcome: Literal["titled", "no_user_message", "empty_reply", "error"]
    title: str | None = None
    error: EtosError | None = None


def clean_title(reply: str) -> str:
    """The title in a model's reply: its first line without quotes, marks or a final stop.

    Returns:
        At most ``TITLE_MAX_CHARS`` characters; ``""`` when the reply holds no title.
    """
    text = reply.strip()
    first = text.splitlines()[0] if text else ""
    return first.strip(" \"'“”「」《》#*").rstrip("。.!！")[:TITLE_MAX_CHARS].strip()


class TitleWriter:
    """Names new conversations with the background model.

    Runs on the event loop; the database is reached through the repository (DB thread).

    Args:
        repo: Conversations and messages.
        providers: Resolves the conversation's provider and model.
        ui_language: The ``ui.language`` setting now: the prompt's language when no message
            tells.
    """

    def __init__(
        self, repo: ChatRepository, providers: ProviderSource, ui_language: Callable[[], str]
    ) -> None:
        self._repo = repo
        self._providers = providers
        self._ui_language = ui_language

    async def needs_title(self, conversation_id: int) -> bool:
        """Whether the conversation exists and has no title yet."""
        conversation = await self._repo.get_conversation(conversation_id)
        return conversation is not None and not conversation.title

    async def write_title(self, conversation_id: int) -> TitleRun:
        """Ask the background model for a short title and store it.

        Returns:
            What happened; a failure is returned (``"error"``), not raised.
        """
        try:
            return await self._write_title(conversation_id)
        except EtosError as exc:
            log.info("title request failed: %s", exc.code)
            return TitleRun("error", error=exc)

    async def _write_title(self, conversation_id: int) -> TitleRun:
        conversation = await self._repo.get_conversation(conversation_id)
        if conversation is None:
            raise InvalidInput(f"no conversation {conversation_id}", reason="missing")
        history = await self._repo.current_history(conversation_id)
        first_user = next((m for m in history if m.role == "user"), None)
        first_reply = next((m for m in history if m.role == "assistant" and m.content), None)
        if first_user is None:
            return TitleRun("no_user_message")
        excerpt = first_user.content[:EXCERPT_CHARS]
        if first_reply is not None:
            excerpt += "\n\n" + first_reply.content[:EXCERPT_CHARS]
        lang = conversation_language([first_user.content], self._ui_language())
        messages: list[Message] = [
            {"role": "system", "content": _INSTRUCTION[lang]},
            {"role": "user", "content": excerpt},
        ]
        completion = await complete_in_background(
            self._providers,
            messages,
            temperature=TEMPERATURE,
            max_tokens=MAX_OUTPUT_TOKENS,
            provider_id=conversation.provider_id,
            model=conversation.model,
        )
        title = clean_title(completion.text)
        if not title:
            return TitleRun("empty_reply")
        await self._repo.update_conversation(conversation_id, title=title)
        return TitleRun("titled", title)
