"""Built-in presets for OpenAI-compatible servers (DESIGN §4).

A preset only pre-fills a new provider configuration; every field stays editable. The model
lists are suggestions for the first pick: the settings page also lists the server's own
``/v1/models``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

#: The preset key of a server typed in by the user.
CUSTOM = "custom"


@dataclass(frozen=True)
class Preset:
    """A known OpenAI-compatible server.

    Attributes:
        key: Stable identifier, stored in provider configurations.
        name: Product name as the vendor writes it in English (the ``custom`` preset's name is
            a placeholder the UI replaces with translated text).
        base_url: The OpenAI-compatible base URL, without a trailing slash; empty for ``custom``.
        needs_key: The server refuses requests without an API key.
        local: The server runs on the user's own machine.
        suggested_models: Chat models to offer before the server's model list is loaded.
        docs_url: Where the vendor documents the API and its keys; empty when there is none.
        suggested_embedding_models: Embedding models the server is known to offer.
        name_zh: The name the vendor uses in Chinese (智谱 GLM, 通义千问), empty when it has
            none of its own; see :meth:`display_name`.
    """

    key: str
    name: str
    base_url: str
    needs_key: bool
    local: bool
    suggested_models: tuple[str, ...]
    docs_url: str
    suggested_embedding_models: tuple[str, ...] = ()
    name_zh: str = ""

    def display_name(self, language: str) -> str:
        """The name to show in ``language`` ("zh…" takes the Chinese name when there is one)."""
        return self.name_zh if language.startswith("zh") and self.name_zh else self.name


PRESETS: tuple[Preset, ...] = (
    Preset(
        "openai",
        "OpenAI",
        "https://api.openai.com/v1",
        needs_key=True,
        local=False,
        suggested_models=("gpt-4.1-mini", "gpt-4.1", "gpt-4o-mini", "gpt-4o"),
        docs_url="https://platform.openai.com/docs/api-reference",
        suggested_embedding_models=("text-embedding-3-small", "text-embedding-3-large"),
    ),
    Preset(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com/v1",
        needs_key=True,
        local=False,
        suggested_models=("deepseek-chat", "deepseek-reasoner"),
        docs_url="https://api-docs.deepseek.com/",
        name_zh="DeepSeek 深度求索",
    ),
    Preset(
        "moonshot",
        "Moonshot (Kimi)",
        "https://api.moonshot.cn/v1",
        needs_key=True,
        local=False,
        suggested_models=("kimi-latest", "moonshot-v1-32k", "moonshot-v1-128k"),
        docs_url="https://platform.moonshot.cn/docs",
        name_zh="月之暗面 Kimi",
    ),
    Preset(
        "qwen",
        "Qwen (DashScope)",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        needs_key=True,
        local=False,
        suggested_models=("qwen-plus", "qwen-turbo", "qwen-max"),
        docs_url="https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope",
        suggested_embedding_models=("text-embedding-v3",),
        name_zh="通义千问（阿里云百炼）",
    ),
    Preset(
        "zhipu",
        "Zhipu GLM",
        "https://open.bigmodel.cn/api/paas/v4",
        needs_key=True,
        local=False,
        suggested_models=("glm-4-plus", "glm-4-air", "glm-4-flash"),
        docs_url="https://open.bigmodel.cn/dev/api",
        suggested_embedding_models=("embedding-3",),
        name_zh="智谱 GLM",
    ),
    Preset(
        "siliconflow",
        "SiliconFlow",
        "https://api.siliconflow.cn/v1",
        needs_key=True,
        local=False,
        suggested_models=("deepseek-ai/DeepSeek-V3", "Qwen/Qwen2.5-72B-Instruct"),
        docs_url="https://docs.siliconflow.cn/",
        suggested_embedding_models=("BAAI/bge-m3",),
        name_zh="硅基流动 SiliconFlow",
    ),
    Preset(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        needs_key=True,
        local=False,
        suggested_models=("openai/gpt-4o-mini", "deepseek/deepseek-chat"),
        docs_url="https://openrouter.ai/docs",
    ),
    Preset(
        "ollama",
        "Ollama",
        "http://localhost:11434/v1",
        needs_key=False,
        local=True,
        suggested_models=("qwen2.5:7b", "llama3.1:8b"),
        docs_url="https://github.com/ollama/ollama/blob/main/docs/openai.md",
        suggested_embedding_models=("nomic-embed-text", "bge-m3"),
    ),
    Preset(
        "lmstudio",
        "LM Studio",
        "http://localhost:1234/v1",
        needs_key=False,
        local=True,
        # LM Studio serves whatever model the user loaded; its /v1/models is the only truth.
        suggested_models=(),
        docs_url="https://lmstudio.ai/docs/app/api/endpoints/openai",
    ),
    Preset(
        CUSTOM,
        "Custom",
        "",
        needs_key=False,
        local=False,
        suggested_models=(),
        docs_url="",
    ),
)

_BY_KEY: Mapping[str, Preset] = MappingProxyType({p.key: p for p in PRESETS})

#: Base URLs probed on first run to find a local server; callers pass these to the detector
#: so tests can pass their own.
LOCAL_CANDIDATES: tuple[str, ...] = tuple(p.base_url for p in PRESETS if p.local)


def preset(key: str) -> Preset:
    """Return the preset with ``key``.

    Args:
        key: A preset key such as ``"deepseek"``.

    Returns:
        The preset.

    Raises:
        KeyError: There is no such preset (a configuration from a newer version may name one;
            callers treat it as ``custom``).
    """
    return _BY_KEY[key]


def preset_for_url(base_url: str) -> Preset | None:
    """Return the preset whose base URL is ``base_url`` (trailing slashes and case ignored).

    Args:
        base_url: A base URL.

    Returns:
        The matching preset, or ``None`` (also for the empty string).
    """
    wanted = base_url.strip().rstrip("/").lower()
    if not wanted:
        return None
    for candidate in PRESETS:
        if candidate.base_url and candidate.base_url.lower() == wanted:
            return candidate
    return None
