from __future__ import annotations

import pytest

from etos_desktop.core.text.segmentation import (
    STOP_TERMS,
    duplicate_key,
    index_text,
    normalize,
    phrase_spans,
    query_phrases,
    query_terms,
    query_units,
    stem,
    token_spans,
    tokens,
)


def test_english_words_are_lowercased_stemmed_and_stripped_of_punctuation() -> None:
    assert tokens("I'm ALLERGIC to Peanuts!") == ["im", "allerg", "to", "peanut"]
    assert tokens("The user's café") == ["the", "user", "cafe"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("allergies", "allergi"),
        ("allergy", "allergi"),
        ("cooking", "cook"),
        ("cooked", "cook"),
        ("hopping", "hop"),
        ("hoping", "hope"),
        ("caresses", "caress"),
        ("cats", "cat"),
        ("pnpm", "pnpm"),
        ("bus", "bus"),
        ("café", "café"),
    ],
)
def test_stem_folds_inflections(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("restoring", "restoration"),
        ("confident", "confidence"),
        ("recommended", "recommendation"),
    ],
)
def test_stem_folds_derivations(a: str, b: str) -> None:
    # Porter's step 1 alone (the stemmer before issue 18) kept these apart.
    assert stem(a) == stem(b)


def test_chinese_becomes_characters_and_bigrams() -> None:
    assert tokens("喜欢咖啡") == ["喜", "喜欢", "欢", "欢咖", "咖", "咖啡", "啡"]


def test_mixed_text_keeps_order_and_splits_scripts() -> None:
    assert tokens("我用pnpm管理JS项目") == [
        "我", "我用", "用", "pnpm", "管", "管理", "理", "js", "项", "项目", "目",
    ]  # fmt: skip


def test_full_width_and_kana_hangul() -> None:
    assert tokens("ＡＢＣ１２３") == ["abc123"]
    assert tokens("すし") == ["す", "すし", "し"]
    assert tokens("김치") == ["김", "김치", "치"]


def test_index_text_is_space_separated_tokens() -> None:
    assert index_text("猫 cats") == "猫 cat"


@pytest.mark.parametrize("query", ["猫", "花生", "我"])
def test_one_and_two_character_cjk_queries_keep_their_terms(query: str) -> None:
    terms = query_terms(query)
    assert terms
    assert set(terms) <= set(tokens(query))
    # the query's own form is among the terms, so it matches the index of any text containing it
    assert query in terms or len(query) == 1


def test_query_terms_drop_stop_terms_unless_nothing_else_remains() -> None:
    assert query_terms("what is my dog's name?") == ["dog", "name"]
    assert query_terms("the") == ["the"]
    assert "我们" not in query_terms("上次我们聊到哪")
    assert "聊到" in query_terms("上次我们聊到哪")


def test_query_terms_are_distinct_and_capped() -> None:
    assert query_terms("cat cat cats") == ["cat"]
    assert len(query_terms(" ".join(f"w{i}" for i in range(500)), limit=10)) == 10


@pytest.mark.parametrize(
    "query",
    ['"', '""', "*", "a*", "NEAR(a b)", "x:y", "^start", "-not", "(", ")", "AND OR NOT", "'", "\\"],
)
def test_fts_syntax_characters_never_reach_terms(query: str) -> None:
    for term in query_terms(query):
        assert term.isalnum()


def test_empty_and_punctuation_only_queries_have_no_terms() -> None:
    assert query_terms("") == []
    assert query_terms("  ?!。，  ") == []


def test_query_units_count_words_and_half_cjk_characters() -> None:
    assert query_units("where did we leave off") == 5
    assert query_units("上次我们聊到哪") == 3.5
    assert query_units("") == 0


def test_duplicate_key_ignores_case_width_spacing_and_punctuation() -> None:
    assert duplicate_key("I use pnpm.") == duplicate_key("i  use PNPM")
    assert duplicate_key("我用 pnpm。") == duplicate_key("我用pnpm")
    assert duplicate_key("I use pnpm") != duplicate_key("I use npm")


def test_normalize_is_nfkc_casefold() -> None:
    assert normalize("ＳＴＲＡßE") == "strasse"


def test_stop_terms_are_stemmed_like_tokens() -> None:
    assert "abov" in STOP_TERMS  # "above", stemmed
    assert "above" not in STOP_TERMS
    assert tokens("above")[0] in STOP_TERMS


@pytest.mark.parametrize(
    "text",
    [
        "我的咖啡机坏了, don't worry about John's Café ＡＢＣ running!",
        "用Python写一个 CLI 工具，version 2.0 — 好吗？",
        "Ünïcödé naïve résumé, 東京とソウル, 한국어 텍스트",
        "rock'n'roll’s fine; e-mail: a_b@example.com",
        "",
    ],
)
def test_token_spans_are_the_tokens_with_where_they_stand(text: str) -> None:
    spans = token_spans(text)
    assert [token for token, _, _ in spans] == tokens(text)
    for token, start, end in spans:
        assert 0 <= start < end <= len(text)
        assert token in tokens(text[start:end])


def test_token_spans_point_at_the_characters_a_token_came_from() -> None:
    text = "咖啡机 Running"
    assert [(t, text[a:b]) for t, a, b in token_spans(text)] == [
        ("咖", "咖"),
        ("咖啡", "咖啡"),
        ("啡", "啡"),
        ("啡机", "啡机"),
        ("机", "机"),
        ("run", "Running"),
    ]


def test_query_phrases_keep_a_cjk_run_together_and_drop_stop_words() -> None:
    assert query_phrases("咖啡机 and the running 猫") == [
        ("咖", "咖啡", "啡", "啡机", "机"),
        ("run",),
        ("猫",),
    ]
    assert query_phrases("the") == [("the",)]
    assert query_phrases("咖啡 咖啡") == [("咖", "咖啡", "啡")]
    assert query_phrases("?!*") == []


def _by_tokens(text: str, phrase: tuple[str, ...], prefix: bool) -> list[tuple[int, int]]:
    spans = token_spans(text)
    words = [t for t, _, _ in spans]
    found = []
    for i in range(len(words) - len(phrase) + 1):
        head, last = words[i : i + len(phrase) - 1], words[i + len(phrase) - 1]
        if head == list(phrase[:-1]) and (
            last == phrase[-1] or (prefix and last.startswith(phrase[-1]))
        ):
            found.append((spans[i][1], spans[i + len(phrase) - 1][2]))
    return found


@pytest.mark.parametrize(
    ("text", "query", "prefix"),
    [
        ("The coffee machines kept RUNNING; my machine runs. Machinery!", "machine running", False),
        ("I worried, he worries, they worry — worrying.", "worry", False),
        ("用Python写一个咖啡机的程序，咖啡机坏了又修咖啡机", "咖啡机 python", False),
        ("Don't tell John's sister about Johnny", "john dont", False),
        ("descaling the machine, the machinist", "mach", True),
        ("hoping for hope, hopping", "hope", False),
    ],
)
def test_phrase_spans_find_what_the_tokens_find(text: str, query: str, prefix: bool) -> None:
    for n, phrase in enumerate(query_phrases(query)):
        last = prefix and n == len(query_phrases(query)) - 1
        assert phrase_spans(text, phrase, prefix=last) == _by_tokens(text, phrase, last), phrase
