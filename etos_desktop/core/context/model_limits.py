"""Context-window sizes of known models (DESIGN §4).

A built-in table, looked up by exact id and then by the longest known prefix, so dated and
size-suffixed ids (``gpt-4o-2024-08-06``, ``Qwen/Qwen2.5-72B-Instruct``, ``llama3.1:8b``) find
their family. The user's per-model sizes from Settings win over the table; unknown models get
``DEFAULT_CONTEXT_WINDOW``.

Where a family's published window depends on the deployment (a "thinking" mode, a preview, a
small open-weights size), the table takes the smaller number: overestimating the window makes the
server refuse the request, underestimating only trims older history sooner.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

#: The window assumed for a model the table does not know (DESIGN §4: "32k when unknown").
DEFAULT_CONTEXT_WINDOW: Final = 32_768

_K128: Final = 128_000
_K131: Final = 131_072

#: Known context windows in tokens, keyed by lower-case model id or id prefix.
KNOWN_CONTEXT_WINDOWS: Final[Mapping[str, int]] = MappingProxyType(
    {
        # OpenAI
        "gpt-3.5-turbo": 16_385,
        "gpt-3.5-turbo-instruct": 4_096,
        "gpt-4": 8_192,
        "gpt-4-32k": 32_768,
        "gpt-4-turbo": _K128,
        "gpt-4-1106": _K128,
        "gpt-4-0125": _K128,
        "gpt-4-vision": _K128,
        "gpt-4o": _K128,
        "gpt-4o-mini": _K128,
        "chatgpt-4o": _K128,
        "gpt-4.5": _K128,
        "gpt-4.1": 1_047_576,
        "gpt-5": 400_000,
        "gpt-5-chat": _K128,
        "o1": 200_000,
        "o1-mini": _K128,
        "o1-preview": _K128,
        "o3": 200_000,
        "o3-mini": 200_000,
        "o4-mini": 200_000,
        "codex-mini": 200_000,
        "gpt-oss": _K131,
        # DeepSeek
        "deepseek-chat": _K128,
        "deepseek-reasoner": _K128,
        "deepseek-v3": _K128,
        "deepseek-r1": _K128,
        "deepseek-coder": 16_384,
        "deepseek-coder-v2": _K128,
        # Moonshot / Kimi
        "moonshot-v1-8k": 8_192,
        "moonshot-v1-32k": 32_768,
        "moonshot-v1-128k": _K131,
        "moonshot-v1-auto": _K131,
        "kimi-latest": _K131,
        "kimi-k2": _K131,
        "kimi-k2-0905": 262_144,
        "kimi-k2-instruct-0905": 262_144,
        "kimi-k2-turbo": 262_144,
        "kimi-k2-thinking": 262_144,
        # Qwen (DashScope names and open-weights names). qwen-turbo / qwen-plus reach 1M tokens
        # only outside thinking mode; 131,072 holds in both.
        "qwen-turbo": _K131,
        "qwen-plus": _K131,
        "qwen-max": 32_768,
        "qwen-long": 10_000_000,
        "qwen2": 32_768,
        "qwen2.5": _K131,
        "qwen2.5-7b-instruct-1m": 1_000_000,
        "qwen2.5-14b-instruct-1m": 1_000_000,
        "qwen3": _K131,
        "qwen3-max": 262_144,
        "qwen3-coder": 262_144,
        "qwen3-coder-plus": 1_000_000,
        "qwen3-next": 262_144,
        "qwen3-235b-a22b-instruct-2507": 262_144,
        "qwen3-235b-a22b-thinking-2507": 262_144,
        "qwen3-30b-a3b-instruct-2507": 262_144,
        "qwq": _K131,
        # Zhipu GLM
        "chatglm3": 8_192,
        "glm4": _K128,
        "glm-4": _K128,
        "glm-4-plus": _K128,
        "glm-4-air": _K128,
        "glm-4-airx": 8_192,
        "glm-4-flash": _K128,
        "glm-4-flashx": _K128,
        "glm-4-long": 1_000_000,
        "glm-4v": 8_192,
        "glm-4.5": _K128,
        "glm-4.5v": 64_000,
        "glm-4.6": 200_000,
        # Meta Llama (Ollama spells them without the dash)
        "llama2": 4_096,
        "llama-2": 4_096,
        "llama3": 8_192,
        "llama-3": 8_192,
        "llama3.1": _K131,
        "llama-3.1": _K131,
        "llama3.2": _K131,
        "llama-3.2": _K131,
        "llama3.3": _K131,
        "llama-3.3": _K131,
        # Mistral
        "mistral": 32_768,
        "mistral-small": 32_768,
        "mistral-medium": _K131,
        "mistral-large": _K131,
        "mistral-nemo": _K131,
        "open-mistral-nemo": _K131,
        "ministral": _K131,
        "mixtral": 32_768,
        "codestral": 32_768,
        "pixtral": _K131,
        # Google Gemma and Gemini
        "gemma": 8_192,
        "gemma2": 8_192,
        "gemma-2": 8_192,
        "gemma3": _K131,
        "gemma-3": _K131,
        "gemma3n": 32_768,
        "gemma-3n": 32_768,
        "gemini-1.5-flash": 1_048_576,
        "gemini-1.5-pro": 2_097_152,
        "gemini-2.0-flash": 1_048_576,
        "gemini-2.5": 1_048_576,
        # Microsoft Phi
        "phi3": 4_096,
        "phi-3": 4_096,
        "phi-3-mini-128k": _K131,
        "phi-3-medium-128k": _K131,
        "phi3.5": _K131,
        "phi-3.5": _K131,
        "phi4": 16_384,
        "phi-4": 16_384,
        # Others reachable through OpenRouter and similar gateways
        "claude": 200_000,
        "command-r": _K128,
        "grok-3": _K131,
        "grok-4": 256_000,
    }
)


def _family_name(model: str) -> str:
    """Lower-case ``model`` without its provider prefix and without an Ollama-style tag."""
    name = model.strip().lower()
    # "openai/gpt-4o", "deepseek-ai/DeepSeek-V3", "hf.co/user/repo:Q4_K_M"
    name = name.rsplit("/", 1)[-1]
    # OpenAI fine-tunes: "ft:gpt-4o-mini-2024-07-18:org:suffix:id"
    if name.startswith("ft:"):
        name = name[3:]
    # Ollama tags and OpenRouter variants: "llama3.1:8b", "qwen2.5:latest", "...:free"
    return name.split(":", 1)[0]


def _positive(value: object) -> int | None:
    # bool is an int subclass; a stray True must not become a 1-token window.
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def context_window_for(model: str, overrides: Mapping[str, int] | None = None) -> int:
    """Return the context window of ``model`` in tokens.

    Lookup order: the user's override for this exact id (then case-insensitively); the table by
    the exact lower-case id; then by the id without provider prefix and tag, exactly and by the
    longest known prefix; else ``DEFAULT_CONTEXT_WINDOW``. Overrides that are not positive
    integers are ignored.

    Args:
        model: The model id as the server names it.
        overrides: Per-model sizes the user set in Settings, keyed by model id.

    Returns:
        The window size in tokens.
    """
    if overrides:
        exact = _positive(overrides.get(model))
        if exact is not None:
            return exact
        folded = model.strip().casefold()
        for key, value in overrides.items():
            size = _positive(value)
            if size is not None and key.strip().casefold() == folded:
                return size
    lowered = model.strip().lower()
    if lowered in KNOWN_CONTEXT_WINDOWS:
        return KNOWN_CONTEXT_WINDOWS[lowered]
    name = _family_name(model)
    for end in range(len(name), 0, -1):
        size = KNOWN_CONTEXT_WINDOWS.get(name[:end])
        if size is not None:
            return size
    return DEFAULT_CONTEXT_WINDOW


#: Which known models accept images (OpenAI ``image_url`` content parts), keyed like
#: ``KNOWN_CONTEXT_WINDOWS``: lower-case id or id prefix, the longest prefix winning, so a
#: family's text-only members are listed as ``False`` under its ``True`` (``o3`` / ``o3-mini``).
#: A model the table does not know is taken as text-only: sending it an image makes most
#: servers refuse the whole request. Settings → Providers → *Images* overrides it per model.
KNOWN_VISION_MODELS: Final[Mapping[str, bool]] = MappingProxyType(
    {
        # OpenAI
        "gpt-3.5": False,
        "gpt-4": False,
        "gpt-4-turbo": True,
        "gpt-4-vision": True,
        "gpt-4-1106-vision": True,
        "gpt-4o": True,
        "gpt-4o-audio": False,
        "gpt-4o-mini-audio": False,
        "gpt-4o-realtime": False,
        "gpt-4o-mini-realtime": False,
        "gpt-4o-transcribe": False,
        "gpt-4o-mini-transcribe": False,
        "gpt-4o-mini-tts": False,
        "chatgpt-4o": True,
        "gpt-4.1": True,
        "gpt-4.5": True,
        "gpt-5": True,
        "o1": True,
        "o1-mini": False,
        "o1-preview": False,
        "o3": True,
        "o3-mini": False,
        "o4-mini": True,
        "gpt-oss": False,
        # Anthropic (through OpenRouter and similar gateways): Claude 3 and later
        "claude-3": True,
        "claude-sonnet": True,
        "claude-opus": True,
        "claude-haiku": True,
        "claude-2": False,
        "claude-instant": False,
        # Google
        "gemini": True,
        "gemma3": True,
        "gemma-3": True,
        "gemma3n": True,
        "gemma-3n": True,
        # Qwen
        "qwen-vl": True,
        "qwen2-vl": True,
        "qwen2.5-vl": True,
        "qwen3-vl": True,
        "qwen-omni": True,
        "qwen2.5-omni": True,
        "qwen3-omni": True,
        "qvq": True,
        # Zhipu GLM
        "glm-4v": True,
        "glm-4.1v": True,
        "glm-4.5v": True,
        "glm-4.6v": True,
        "cogvlm": True,
        # Moonshot / Kimi
        "kimi-vl": True,
        "moonshot-v1-8k-vision": True,
        "moonshot-v1-32k-vision": True,
        "moonshot-v1-128k-vision": True,
        # DeepSeek
        "deepseek-vl": True,
        "deepseek-vl2": True,
        # Open-weights vision models (Ollama, LM Studio, SiliconFlow names)
        "llava": True,
        "bakllava": True,
        "llama3.2-vision": True,
        "llama-3.2-11b-vision": True,
        "llama-3.2-90b-vision": True,
        "llama4": True,
        "llama-4": True,
        "minicpm-v": True,
        "minicpm-o": True,
        "moondream": True,
        "internvl": True,
        "internvl2": True,
        "internvl3": True,
        "pixtral": True,
        "mistral-small3.1": True,
        "mistral-small-3.1": True,
        "mistral-small3.2": True,
        "mistral-small-3.2": True,
        "mistral-medium-3": True,
        "phi-3-vision": True,
        "phi-3.5-vision": True,
        "phi-4-multimodal": True,
        "granite3.2-vision": True,
        "grok-2-vision": True,
        "grok-vision": True,
        "grok-4": True,
    }
)


def known_vision(model: str) -> bool:
    """Whether the built-in table says ``model`` accepts images (unknown models: ``False``).

    Looked up as ``context_window_for`` looks up windows: the exact lower-case id, then the id
    without provider prefix and tag, exactly and by the longest known prefix.
    """
    lowered = model.strip().lower()
    if lowered in KNOWN_VISION_MODELS:
        return KNOWN_VISION_MODELS[lowered]
    name = _family_name(model)
    for end in range(len(name), 0, -1):
        known = KNOWN_VISION_MODELS.get(name[:end])
        if known is not None:
            return known
    return False


def accepts_images(model: str, overrides: Mapping[str, bool] | None = None) -> bool:
    """Return whether ``model`` takes images in a chat request.

    The user's override for this exact id (then case-insensitively) wins over the table
    (``known_vision``); overrides that are not booleans are ignored.

    Args:
        model: The model id as the server names it.
        overrides: Per-model answers the user set in Settings, keyed by model id.

    Returns:
        Whether to send images to it.
    """
    if overrides:
        exact = overrides.get(model)
        if isinstance(exact, bool):
            return exact
        folded = model.strip().casefold()
        for key, value in overrides.items():
            if isinstance(value, bool) and key.strip().casefold() == folded:
                return value
    return known_vision(model)
