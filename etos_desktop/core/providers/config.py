"""Provider configurations: which server, which models — never the key (DESIGN §4, §9).

Configurations are saved in ``settings.json`` by the settings store; API keys live in the
:class:`~etos_desktop.core.providers.secrets.SecretStore`, keyed by the configuration's id.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.providers import presets
from etos_desktop.core.providers.presets import CUSTOM, preset_for_url

#: Id of the read-only provider built from the environment; it is never saved.
ENVIRONMENT_PROVIDER_ID = "env"
#: Where the Environment provider points when only ``OPENAI_API_KEY`` is set.
OPENAI_DEFAULT_BASE_URL = presets.preset("openai").base_url


@dataclass(frozen=True)
class ProviderConfig:
    """One saved (or environment) provider configuration.

    Attributes:
        id: Stable identifier; also the account name of its key in the keyring.
        name: The name the user gave it.
        preset: Key of the preset it was created from (``custom`` when typed in).
        base_url: OpenAI-compatible base URL, normalised (no trailing slash).
        chat_model: Model for chat replies; empty until chosen.
        background_model: Model for summaries, profile and consolidation; empty = chat model.
        embedding_model: Model for memory embeddings; empty = none from this provider.
        single_system_message: The server's chat template accepts one system message only, so
            retrieved memories go into the user message (DESIGN §8).
        read_only: Built from the environment; shown but never edited or saved.
    """

    id: str
    name: str
    preset: str
    base_url: str
    chat_model: str = ""
    background_model: str = ""
    embedding_model: str = ""
    single_system_message: bool = False
    read_only: bool = False

    def model_for_background(self, chosen: str) -> str:
        """The model a background request names: ``background_model``, else ``chosen``.

        The one place the fallback is written; every background request goes through
        :func:`~etos_desktop.core.providers.background.complete_in_background`.

        Args:
            chosen: The model the conversation (or the default provider) chats with.
        """
        return self.background_model or chosen

    @property
    def background_model_or_chat(self) -> str:
        """The model for background jobs: ``background_model``, else ``chat_model``."""
        return self.model_for_background(self.chat_model)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready form stored in ``settings.json``."""
        return {
            "id": self.id,
            "name": self.name,
            "preset": self.preset,
            "base_url": self.base_url,
            "chat_model": self.chat_model,
            "background_model": self.background_model,
            "embedding_model": self.embedding_model,
            "single_system_message": self.single_system_message,
            "read_only": self.read_only,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProviderConfig:
        """Build a configuration from its stored form.

        Missing fields get their defaults, unknown fields (such as any stray ``api_key``) are
        ignored, and fields of the wrong type are treated as missing.

        Args:
            data: A mapping as written by :meth:`to_dict`, possibly by another version.

        Returns:
            The configuration.

        Raises:
            InvalidInput: ``id`` is missing or empty (``params["reason"] == "missing_id"``).
        """
        provider_id = _text(data, "id").strip()
        if not provider_id:
            raise InvalidInput("provider entry without an id", key="id", reason="missing_id")
        preset_key = _text(data, "preset") or CUSTOM
        return cls(
            id=provider_id,
            name=_text(data, "name") or provider_id,
            preset=preset_key,
            base_url=_text(data, "base_url"),
            chat_model=_text(data, "chat_model"),
            background_model=_text(data, "background_model"),
            embedding_model=_text(data, "embedding_model"),
            single_system_message=_flag(data, "single_system_message"),
            read_only=_flag(data, "read_only"),
        )


def new_provider_id() -> str:
    """Return a fresh, unique provider id."""
    return uuid.uuid4().hex


def normalise_base_url(url: str) -> str:
    """Clean up a base URL the user typed.

    Surrounding spaces and trailing slashes are removed and the scheme is lower-cased.

    Args:
        url: The URL as typed.

    Returns:
        The normalised URL.

    Raises:
        InvalidInput: ``params["key"] == "base_url"`` and ``params["reason"]`` is ``"empty"``,
            ``"scheme"`` (not http/https), ``"host"`` (no host), ``"whitespace"`` or
            ``"credentials"`` (``user:password@`` in the URL, which would be stored in plain
            text). The URL itself is not put into the error, as it might hold a secret.
    """
    text = url.strip()
    if not text:
        raise InvalidInput("empty base URL", key="base_url", reason="empty")
    if any(ch.isspace() for ch in text):
        raise InvalidInput("base URL contains whitespace", key="base_url", reason="whitespace")
    try:
        parts = urlsplit(text)
        hostname = parts.hostname
    except ValueError:
        raise InvalidInput("base URL cannot be parsed", key="base_url", reason="host") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidInput("base URL must use http or https", key="base_url", reason="scheme")
    if not hostname:
        raise InvalidInput("base URL has no host", key="base_url", reason="host")
    if parts.username is not None or parts.password is not None:
        raise InvalidInput("base URL contains credentials", key="base_url", reason="credentials")
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, parts.netloc, path, parts.query, parts.fragment))


def environment_provider(env: Mapping[str, str]) -> ProviderConfig | None:
    """Return the read-only "Environment" provider described by ``env``, if any.

    ``OPENAI_BASE_URL`` and/or ``OPENAI_API_KEY`` make one: with only the key it points at
    OpenAI; a base URL without a key is valid (local servers). ``OPENAI_MODEL`` pre-selects the
    chat model. The key is not part of the result; read it with ``SecretStore.env_key``.

    Args:
        env: The environment, usually ``os.environ``.

    Returns:
        The configuration, or ``None`` when neither variable is set (or both are blank).

    Raises:
        InvalidInput: ``OPENAI_BASE_URL`` is set but not a usable URL
            (``params["key"] == "OPENAI_BASE_URL"``).
    """
    raw_url = env.get("OPENAI_BASE_URL", "").strip()
    has_key = bool(env.get("OPENAI_API_KEY", "").strip())
    if not raw_url and not has_key:
        return None
    if raw_url:
        try:
            base_url = normalise_base_url(raw_url)
        except InvalidInput as exc:
            raise InvalidInput(
                "OPENAI_BASE_URL is not a usable URL",
                key="OPENAI_BASE_URL",
                reason=exc.params.get("reason", "invalid"),
            ) from None
    else:
        base_url = OPENAI_DEFAULT_BASE_URL
    known = preset_for_url(base_url)
    return ProviderConfig(
        id=ENVIRONMENT_PROVIDER_ID,
        name="Environment",
        preset=known.key if known is not None else CUSTOM,
        base_url=base_url,
        chat_model=env.get("OPENAI_MODEL", "").strip(),
        read_only=True,
    )


def _text(data: Mapping[str, Any], field: str) -> str:
    value = data.get(field)
    return value if isinstance(value, str) else ""


def _flag(data: Mapping[str, Any], field: str) -> bool:
    value = data.get(field)
    return value if isinstance(value, bool) else False
