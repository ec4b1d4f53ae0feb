import pytest

from etos_desktop.core.context.model_limits import (
    DEFAULT_CONTEXT_WINDOW,
    KNOWN_CONTEXT_WINDOWS,
    context_window_for,
)


def test_default_is_32k() -> None:
    assert DEFAULT_CONTEXT_WINDOW == 32_768


def test_table_keys_are_lower_case_and_sizes_positive() -> None:
    for key, size in KNOWN_CONTEXT_WINDOWS.items():
        assert key == key.lower().strip()
        assert "/" not in key
        assert ":" not in key
        assert size > 0


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-5", 400_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gpt-3.5-turbo", 16_385),
        ("deepseek-chat", 128_000),
        ("deepseek-reasoner", 128_000),
        ("moonshot-v1-8k", 8_192),
        ("moonshot-v1-32k", 32_768),
        ("moonshot-v1-128k", 131_072),
        ("qwen-max", 32_768),
        ("glm-4", 128_000),
        ("glm-4-plus", 128_000),
        ("glm-4.5", 128_000),
        ("glm-4-flash", 128_000),
        ("llama3", 8_192),
        ("mistral", 32_768),
    ],
)
def test_exact_ids(model: str, expected: int) -> None:
    assert context_window_for(model) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-2024-08-06", 128_000),
        ("gpt-4o-mini-2024-07-18", 128_000),
        ("gpt-4-0613", 8_192),
        ("gpt-4-turbo-2024-04-09", 128_000),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-4.1-nano-2025-04-14", 1_047_576),
        ("gpt-5-mini", 400_000),
        ("gpt-5-chat-latest", 128_000),
        ("o1-mini-2024-09-12", 128_000),
        ("o3-mini-2025-01-31", 200_000),
        ("GPT-4o", 128_000),
        ("kimi-k2-0711-preview", 131_072),
        ("kimi-k2-0905-preview", 262_144),
        ("qwen-plus-latest", 131_072),
        ("qwen2.5-72b-instruct", 131_072),
        ("qwen3-235b-a22b", 131_072),
        ("qwen3-coder-plus-2025-07-22", 1_000_000),
        ("glm-4.5-air", 128_000),
        ("glm-4.6", 200_000),
        ("llama3.1-8b", 131_072),
        ("mistral-large-latest", 131_072),
        ("gemma3-27b", 131_072),
    ],
)
def test_longest_prefix(model: str, expected: int) -> None:
    assert context_window_for(model) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai/gpt-4o", 128_000),
        ("deepseek-ai/DeepSeek-V3", 128_000),
        ("deepseek-ai/DeepSeek-R1", 128_000),
        ("Qwen/Qwen2.5-7B-Instruct", 131_072),
        ("THUDM/glm-4-9b-chat", 128_000),
        ("meta-llama/llama-3.3-70b-instruct:free", 131_072),
        ("moonshotai/Kimi-K2-Instruct-0905", 262_144),
        ("anthropic/claude-3.5-sonnet", 200_000),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", 128_000),
    ],
)
def test_provider_prefix_is_stripped(model: str, expected: int) -> None:
    assert context_window_for(model) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("llama3:latest", 8_192),
        ("llama3.1:8b", 131_072),
        ("llama3.2:3b-instruct-q4_K_M", 131_072),
        ("qwen2.5:7b", 131_072),
        ("deepseek-r1:7b", 128_000),
        ("mistral:latest", 32_768),
        ("gemma2:9b", 8_192),
        ("hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", 131_072),
    ],
)
def test_ollama_tag_is_stripped(model: str, expected: int) -> None:
    assert context_window_for(model) == expected


def test_override_wins() -> None:
    assert context_window_for("gpt-4o", {"gpt-4o": 64_000}) == 64_000
    assert context_window_for("llama3.1:8b", {"llama3.1:8b": 8_192}) == 8_192
    assert context_window_for("my-local-model", {"my-local-model": 4_096}) == 4_096


def test_override_case_insensitive_and_exact_only() -> None:
    assert context_window_for("GPT-4o", {"gpt-4o": 64_000}) == 64_000
    # An override is for one model, not a prefix of others.
    assert context_window_for("gpt-4o-mini", {"gpt-4o": 64_000}) == 128_000


def test_invalid_overrides_are_ignored() -> None:
    overrides = {"gpt-4o": 0, "GPT-4O": -5, "x": True}
    assert context_window_for("gpt-4o", overrides) == 128_000
    assert context_window_for("x", overrides) == DEFAULT_CONTEXT_WINDOW


@pytest.mark.parametrize("model", ["", "   ", "totally-unknown-model", "acme/foo:latest", "qwen"])
def test_unknown_is_default(model: str) -> None:
    assert context_window_for(model) == DEFAULT_CONTEXT_WINDOW
    assert context_window_for(model, {}) == DEFAULT_CONTEXT_WINDOW
