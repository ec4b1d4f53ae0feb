"""The detached background completion: one request on the side, to the background model.

DESIGN §6, §7, §5.1: a conversation's title, its summary, the profile refresh and memory
consolidation each send a separate, non-streamed request without tools, never added to a chat
history and never blocking sending. Every one of them names the provider's background model,
else the model the conversation (or the default provider) chats with
(:meth:`ProviderConfig.model_for_background <etos_desktop.core.providers.config.ProviderConfig.model_for_background>`).
"""

from __future__ import annotations

from etos_desktop.core.providers.base import ChatRequest, Completion, Message
from etos_desktop.core.providers.registry import ProviderSource


async def complete_in_background(
    providers: ProviderSource,
    messages: list[Message],
    *,
    temperature: float,
    max_tokens: int,
    provider_id: str | None = None,
    model: str | None = None,
) -> Completion:
    """Send one detached request to the background model and return its reply.

    Args:
        providers: Resolves the provider and the model.
        messages: The request's messages.
        temperature: Its sampling temperature.
        max_tokens: The most tokens the reply may have.
        provider_id: The conversation's provider (``None``: the default provider).
        model: The conversation's model (``None``: the provider's chat model).

    Returns:
        The reply (text and finish reason).

    Raises:
        NotConfigured: No provider, or no model, is configured.
        ProviderError: The server refused the request or could not be reached.
    """
    resolved = await providers.resolve(provider_id, model)
    return await resolved.provider.complete(
        ChatRequest(
            model=resolved.config.model_for_background(resolved.model),
            messages=messages,
            temperature=temperature,
            max_tokens=max_tokens,
        )
    )
