import pytest

from etos_desktop.core.context.language import conversation_language, language_for_locale


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("zh_CN", "zh"),
        ("zh-Hant", "zh"),
        ("ZH", "zh"),
        ("en_US", "en"),
        ("de_DE", "en"),
        ("", "en"),
    ],
)
def test_language_for_locale(locale: str, expected: str) -> None:
    assert language_for_locale(locale) == expected


def test_all_chinese() -> None:
    assert conversation_language(["你好", "今天天气怎么样？"], "en_US") == "zh"


def test_all_english() -> None:
    assert conversation_language(["Hello there", "How is the weather?"], "zh_CN") == "en"


def test_chinese_with_english_terms_is_chinese() -> None:
    assert conversation_language(["帮我 debug 这个 function", "用 pnpm 还是 npm？"], "en") == "zh"


def test_english_with_a_chinese_word_is_english() -> None:
    assert conversation_language(["What does 加油 mean?", "My friend 王小明 said hi"], "zh") == "en"


def test_majority_of_messages_beats_one_long_paste() -> None:
    paste = "Traceback (most recent call last): " * 200
    texts = ["这个报错是什么意思？", paste, "还是不行", "谢谢"]
    assert conversation_language(texts, "en") == "zh"


def test_tie_is_settled_by_overall_share() -> None:
    assert conversation_language(["ok", "这个问题我想了很久还是不明白"], "en") == "zh"
    assert (
        conversation_language(["好", "I have been thinking about this for a while"], "zh") == "en"
    )


@pytest.mark.parametrize("texts", [[], [""], ["123", "👍", "  !?"]])
def test_no_letters_falls_back_to_ui_language(texts: list[str]) -> None:
    assert conversation_language(texts, "zh_CN") == "zh"
    assert conversation_language(texts, "en_US") == "en"


def test_japanese_and_korean_count_as_cjk() -> None:
    assert conversation_language(["こんにちは、元気ですか"], "en") == "zh"
    assert conversation_language(["안녕하세요"], "en") == "zh"
