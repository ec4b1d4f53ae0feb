import pytest

from etos_desktop.core.context.tokens import (
    IMAGE_PART_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    cjk_share,
    count_cjk,
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_tokens,
    letter_counts,
)

MEGABYTE = 1_000_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),
        ("abcd", 1),
        ("abcde", 2),
        ("Hello, world!", 4),  # 13 characters
        ("你好世界", 4),
        ("こんにちは", 5),  # hiragana
        ("カタカナ", 4),  # katakana
        ("안녕하세요", 5),  # hangul
        ("，。！？「」", 6),  # full-width and CJK punctuation
        ("ＡＢＣ", 3),  # full-width Latin
        ("𠀀𪚥", 2),  # ideographs outside the BMP (extension B)
        ("我用 Python", 2 + 2),  # 2 CJK + ceil(7 / 4)
    ],
)
def test_estimate_tokens(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


def test_count_cjk_mixed() -> None:
    assert count_cjk("我用 Python 写了一个 script。") == 7


def test_letter_counts_ignore_digits_punctuation_and_spaces() -> None:
    assert letter_counts("2024年3月5日，hi!") == (3, 5)
    assert letter_counts("") == (0, 0)
    assert letter_counts("123 !?， ") == (0, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0.0),
        ("1234", 0.0),
        ("hello", 0.0),
        ("你好", 1.0),
        ("你好ab", 0.5),
        ("こんにちは", 1.0),
    ],
)
def test_cjk_share(text: str, expected: float) -> None:
    assert cjk_share(text) == pytest.approx(expected)


def test_message_tokens_plain() -> None:
    message = {"role": "user", "content": "你好世界"}
    assert estimate_message_tokens(message) == 4 + MESSAGE_OVERHEAD_TOKENS


def test_message_tokens_none_content() -> None:
    assert estimate_message_tokens({"role": "assistant", "content": None}) == 4


def test_message_tokens_content_parts() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "abcdefgh"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "你好"},
        ],
    }
    assert estimate_message_tokens(message) == 2 + IMAGE_PART_TOKENS + 2 + MESSAGE_OVERHEAD_TOKENS


def test_message_tokens_unknown_part_counts_its_json() -> None:
    message = {"role": "user", "content": [{"type": "input_audio", "data": "x" * 400}]}
    assert estimate_message_tokens(message) > 100


def test_message_tokens_tool_calls_and_tool_result() -> None:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "save_memory", "arguments": '{"content": "uses pnpm"}'},
            }
        ],
    }
    # "save_memory": 11 characters -> 3; the arguments: 24 characters -> 6
    assert estimate_message_tokens(call) == 3 + 6 + MESSAGE_OVERHEAD_TOKENS
    result = {"role": "tool", "tool_call_id": "call_1", "content": "saved as #12"}
    assert estimate_message_tokens(result) == 2 + 3 + MESSAGE_OVERHEAD_TOKENS


def test_messages_tokens_is_the_sum() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "你好"}]
    assert estimate_messages_tokens(messages) == sum(estimate_message_tokens(m) for m in messages)
    assert estimate_messages_tokens([]) == 0


@pytest.mark.parametrize(
    ("unit", "cjk_per_unit"),
    [
        ("The quick brown fox jumps over the lazy dog. ", 0),
        ("我们今天去公园散步，天气很好。", 15),
        ("Python 是一种 programming 语言。", 6),
    ],
    ids=["en", "zh", "mixed"],
)
def test_one_megabyte(unit: str, cjk_per_unit: int) -> None:
    # Its speed is measured by tests/bench/text_speed.py.
    text = unit * (MEGABYTE // len(unit))
    cjk = cjk_per_unit * (MEGABYTE // len(unit))
    assert estimate_tokens(text) == cjk + -(-(len(text) - cjk) // 4)


def test_cjk_share_on_one_megabyte() -> None:
    text = "Python 是一种 programming 语言。" * 40_000
    assert cjk_share(text) == pytest.approx(5 / (5 + 17))
