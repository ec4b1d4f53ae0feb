"""The Providers page's controller: the rules that need no widget."""

from __future__ import annotations

import pytest

from etos_desktop.ui.settings.providers_controller import first_chat_model, key_is_malformed


@pytest.mark.parametrize(
    ("models", "chosen"),
    [
        (["text-embedding-3-large", "whisper-1", "tts-1", "gpt-4o"], "gpt-4o"),
        (["BAAI/bge-reranker-v2-m3", "bge-m3", "e5-large", "deepseek-chat"], "deepseek-chat"),
        (["nomic-embed-text:latest", "qwen2.5:7b"], "qwen2.5:7b"),
        (["gte-qwen2", "m3e-base"], ""),
        (["gemma3:4b"], "gemma3:4b"),  # "e5" only as a name part of its own
        ([], ""),
    ],
)
def test_the_first_chat_model_skips_embedding_rerank_and_speech_models(
    models: list[str], chosen: str
) -> None:
    assert first_chat_model(models) == chosen


def test_a_key_with_spaces_or_control_characters_is_malformed() -> None:
    assert not key_is_malformed("  sk-abc123  ")
    assert key_is_malformed("sk-abc 123")
    assert key_is_malformed("sk-abc\x00")
