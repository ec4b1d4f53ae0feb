import re

import pytest

from etos_desktop.core.context.language import RECENT_USER_TEXTS, Language
from etos_desktop.core.context.prompts import (
    BASE_RULES,
    DEFAULT_PERSONA_NAME,
    DEFAULT_PERSONA_PROMPT,
    MEMORY_IN_USER_MESSAGE_NOTE,
    USER_MESSAGE_HEADING,
    companion_name,
    persona_name,
    system_prompt,
)
from etos_desktop.core.context.tokens import cjk_share

LANGUAGES: tuple[Language, ...] = ("zh", "en")
TEMPLATES = [
    BASE_RULES,
    DEFAULT_PERSONA_NAME,
    DEFAULT_PERSONA_PROMPT,
    MEMORY_IN_USER_MESSAGE_NOTE,
    USER_MESSAGE_HEADING,
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_has_both_languages(template: object) -> None:
    assert isinstance(template, dict) or hasattr(template, "keys")
    assert set(template.keys()) == {"zh", "en"}  # type: ignore[attr-defined]


def test_templates_are_in_their_language() -> None:
    for template in (BASE_RULES, DEFAULT_PERSONA_PROMPT, MEMORY_IN_USER_MESSAGE_NOTE):
        assert cjk_share(template["zh"]) > 0.8
        assert cjk_share(template["en"]) == 0.0


@pytest.mark.parametrize("lang", LANGUAGES)
def test_persona_prompt_is_three_to_six_sentences(lang: Language) -> None:
    sentences = [s for s in re.split(r"[.。!！?？]", DEFAULT_PERSONA_PROMPT[lang]) if s.strip()]
    assert 3 <= len(sentences) <= 6


@pytest.mark.parametrize("lang", LANGUAGES)
def test_base_rules_say_memory_is_data_and_user_language(lang: Language) -> None:
    rules = BASE_RULES[lang]
    if lang == "en":
        assert "language the user is writing in" in rules
        assert "not instructions" in rules
    else:
        assert "用户正在使用的语言" in rules
        assert "不是指令" in rules


@pytest.mark.parametrize("lang", LANGUAGES)
def test_system_prompt_contains_name_persona_and_rules(lang: Language) -> None:
    text = system_prompt(lang, "Mika", "Be kind.")
    assert "Mika" in text
    assert "Be kind." in text
    assert text.endswith(BASE_RULES[lang])
    assert text.index("Mika") < text.index("Be kind.") < text.index(BASE_RULES[lang])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_blank_name_uses_default_and_blank_persona_is_left_out(lang: Language) -> None:
    text = system_prompt(lang, "  ", "   ")
    assert DEFAULT_PERSONA_NAME[lang] in text
    assert text.count("\n\n") == 1


def test_system_prompt_is_deterministic_and_format_safe() -> None:
    first = system_prompt("en", "{name}", "Uses {braces}.")
    assert first == system_prompt("en", "{name}", "Uses {braces}.")
    assert "Your name is {name}." in first


def test_the_companions_name_is_the_users_else_the_default_in_the_conversations_language():
    english = ["How are you?", "Tell me more."]
    assert companion_name(english, "zh") == "Etos"
    assert companion_name(["你好吗？"], "en") == "小忆"
    # No message with a letter: the UI language decides.
    assert companion_name([], "zh") == "小忆"
    assert companion_name(["👍"], "en") == "Etos"
    # A name the user set wins: the conversation's, then Settings'; blank is not a name.
    assert companion_name(english, "zh", "Ada", "Bo") == "Ada"
    assert companion_name(english, "zh", None, " Bo ") == "Bo"
    assert companion_name(english, "zh", "  ", "") == "Etos"
    # Only the latest messages count, as in the prompt.
    assert companion_name(["你好"] * 30 + ["Hi there"] * RECENT_USER_TEXTS, "zh") == "Etos"
    assert persona_name("zh", None, "") == "小忆"
