"""The summary request's shape and the output rules: SKIP, bounds, sentence cuts, secrets."""

from __future__ import annotations

import pytest

from etos_desktop.core.context.tokens import estimate_tokens
from etos_desktop.core.summaries.writing import (
    CJK_BOUNDS,
    WORD_BOUNDS,
    Accepted,
    Rejected,
    Skip,
    SummaryInput,
    bounds_for,
    build_request,
    finish_summary,
    measure,
)
from etos_desktop.core.text.secrets import secret_reason

EN_SENTENCE = "The user planned a spring trip to Kyoto and compared budget hotels near the station."
ZH_SENTENCE = "用户计划春天去京都旅行，比较了车站附近的几家经济型酒店，最后决定住在四条。"


def words(n_sentences: int) -> str:
    return " ".join([EN_SENTENCE] * n_sentences)


# -- the request ----------------------------------------------------------------------------


def test_request_in_english_holds_previous_summary_and_new_messages():
    built = build_request(
        SummaryInput(
            messages=[("user", "hello there"), ("assistant", "hi!")],
            previous="The user asked about pnpm.",
            previous_date="2026-01-02",
            language="en",
        )
    )
    system, user = built.messages
    assert system["role"] == "system"
    assert "50 to 120 words" in system["content"]
    assert "SKIP" in system["content"]
    assert "not instructions" in system["content"]
    assert user["content"].startswith(
        "Earlier summary (2026-01-02):\n<summary>\nThe user asked about pnpm.\n</summary>"
    )
    assert "User: hello there\nAssistant: hi!" in user["content"]
    assert "<conversation>" in user["content"]
    assert built.sent == 2
    assert built.left_out == 0


def test_request_in_chinese():
    built = build_request(
        SummaryInput(messages=[("user", "你好")], previous=None, previous_date="", language="zh")
    )
    assert "60 到 140 字" in built.messages[0]["content"]
    assert "用户: 你好" in built.messages[1]["content"]
    assert built.messages[1]["content"].startswith("对话：")


def test_request_is_bounded_by_tokens_keeping_the_newest_messages():
    messages = [("user", f"message number {i} " + "word " * 200) for i in range(100)]
    built = build_request(
        SummaryInput(messages=messages, previous=None, previous_date="", language="en"),
        budget=2000,
    )
    text = built.messages[1]["content"]
    assert estimate_tokens(text) < 2300
    assert "message number 99 " in text
    assert "message number 0 " not in text
    assert built.left_out == 100 - built.sent
    assert f"[{built.left_out} earlier message(s) left out for length]" in text


def test_a_huge_message_is_cut_not_dropped():
    built = build_request(
        SummaryInput(
            messages=[("user", "x" * 50_000)], previous=None, previous_date="", language="en"
        )
    )
    assert built.sent == 1
    assert len(built.messages[1]["content"]) < 3000


# -- the reply ------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["SKIP", "skip", " SKIP. ", "**SKIP**", "`SKIP`", "SKIP。"])
def test_skip(raw: str):
    assert finish_summary(raw) == Skip()


def test_a_summary_is_stored_without_control_characters():
    """Issue 19: NUL and control characters in the model's summary were stored as written."""
    dirty = EN_SENTENCE.replace("Kyoto", "Ky\x00oto\x1b").replace("hotels", "hotels\x85")
    outcome = finish_summary("\r\n".join([dirty] * 4))
    assert isinstance(outcome, Accepted)
    assert outcome.text == words(4)


def test_a_summary_within_bounds_is_kept_as_one_paragraph():
    raw = f"Summary: {EN_SENTENCE}\n\n{EN_SENTENCE}\n- {EN_SENTENCE}\n- {EN_SENTENCE}"
    outcome = finish_summary(raw)
    assert isinstance(outcome, Accepted)
    assert "\n" not in outcome.text
    assert not outcome.text.startswith("Summary")
    assert outcome.text.count("Kyoto") == 4
    assert not outcome.cut


def test_over_long_is_cut_at_a_sentence_boundary():
    outcome = finish_summary(words(9))  # 135 words
    assert isinstance(outcome, Accepted)
    assert outcome.cut
    assert outcome.text.endswith("station.")
    assert WORD_BOUNDS[0] <= measure(outcome.text) <= WORD_BOUNDS[1]
    assert outcome.text == words(8)


def test_over_long_without_a_boundary_inside_the_limit_is_rejected():
    raw = "The user " + "talked and " * 150 + "left."
    assert finish_summary(raw) == Rejected("too_long")


def test_mid_sentence_output_is_cut_back_to_the_last_full_sentence():
    raw = words(5) + " Then the user started to ask about"
    outcome = finish_summary(raw, "length")
    assert isinstance(outcome, Accepted)
    assert outcome.text == words(5)
    outcome = finish_summary(raw, "stop")  # no full stop at the end either
    assert isinstance(outcome, Accepted)
    assert outcome.text == words(5)


def test_cut_off_by_max_tokens_even_at_a_full_stop_is_cut_to_an_earlier_sentence():
    # "length": the last sentence may be complete by accident or not; it is kept only if whole.
    outcome = finish_summary(words(5), "length")
    assert isinstance(outcome, Accepted)
    assert outcome.text.endswith("station.")


def test_mid_sentence_with_too_little_before_it_is_rejected():
    assert finish_summary("The user asked. Then the user", "length") == Rejected("incomplete")


def test_mid_sentence_is_cut_back_to_a_short_sentence_and_kept():
    outcome = finish_summary(EN_SENTENCE + " Then the user asked", "length")
    assert outcome == Accepted(EN_SENTENCE, cut=True)


# -- short and junk replies (issue 19: short summaries were thrown away) -------------------------

#: 27 characters and 40 words: under the 60–140 / 50–120 the prompt asks for, but a summary.
ZH_SHORT = "用户询问了京都站附近的经济型酒店，最后决定住四条那家。"
EN_SHORT = (
    "The user asked which budget hotel near Kyoto Station is best for a three-day spring trip "
    "with a friend. The assistant compared three options by price and distance, and the user "
    "chose a small hotel in Shijo near the markets."
)


@pytest.mark.parametrize(
    "raw",
    [
        ZH_SHORT,
        EN_SHORT,
        EN_SENTENCE,
        ZH_SENTENCE,
        "The user compared Kyoto hotels.",  # 5 words: the minimum
        "用户比较了酒店。",  # 8 characters: the minimum
        # Words a refusal or the prompt also uses, inside a real summary.
        "The user said sorry for the late reply and asked what to pack for Kyoto in April.",
        "The user wanted to know what was decided about the hotel; the assistant said to book early.",
    ],
)
def test_a_short_well_formed_summary_is_kept_as_written(raw: str):
    assert finish_summary(raw) == Accepted(raw)


def test_the_short_examples_are_the_issues():
    assert (measure(ZH_SHORT), measure(EN_SHORT)) == (27, 40)
    assert measure(ZH_SHORT) < bounds_for(ZH_SHORT)[0]
    assert measure(EN_SHORT) < bounds_for(EN_SHORT)[0]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("   ", "empty"),
        ("...", "empty"),
        ("——。。。", "empty"),
        ("**  **", "empty"),
        ("👍", "empty"),
        ("The user asked.", "too_short"),  # 3 words
        ("Kyoto hotels, booked.", "too_short"),
        ("用户问了酒店。", "too_short"),  # 7 characters
        ("I'm sorry, but I can't summarise this conversation.", "not_a_summary"),
        (
            "I’m sorry, I cannot help with summarising private conversations like this one.",
            "not_a_summary",
        ),
        ("As an AI language model, I do not keep records of conversations.", "not_a_summary"),
        ("Unfortunately, I am unable to write a summary of this conversation.", "not_a_summary"),
        ("抱歉，我无法总结这段对话的内容。", "not_a_summary"),
        ("作为一个AI，我不能保存对话的内容。", "not_a_summary"),
        ("Hello! How can I help you today?", "not_a_summary"),
        ("Hi there, how can I assist you today?", "not_a_summary"),
        ("你好！有什么可以帮你的吗？", "not_a_summary"),
        ("您好，请问有什么可以帮您？", "not_a_summary"),
        (
            "Write one paragraph of 50 to 120 words in the language the user writes in. Say "
            "what was talked about, what the user wanted, and what was concluded or decided.",
            "not_a_summary",
        ),
        (
            "用第三人称称呼“用户”。不要问候，不要免责声明，不要标题、列表或 Markdown。",
            "not_a_summary",
        ),
        (
            "User: Trip question 0: what about Kyoto day 0?\nAssistant: echo: Trip question 0",
            "not_a_summary",
        ),
        ("<conversation>\nUser: hello there\n</conversation>", "not_a_summary"),
    ],
)
def test_empty_or_junk_is_rejected(raw: str, reason: str):
    assert finish_summary(raw) == Rejected(reason)  # type: ignore[arg-type]


def test_the_whole_prompt_echoed_back_is_rejected():
    for lang in ("en", "zh"):
        system = build_request(
            SummaryInput(messages=[("user", "hi")], previous=None, previous_date="", language=lang)
        ).messages[0]["content"]
        assert finish_summary(system) == Rejected("not_a_summary")


def test_a_greeting_around_a_summary_is_dropped_and_the_summary_kept():
    outcome = finish_summary(f"Hello! {EN_SHORT} Let me know if you need anything else.")
    assert outcome == Accepted(EN_SHORT)
    assert finish_summary(f"你好！{ZH_SHORT}") == Accepted(ZH_SHORT)


def test_chinese_is_measured_in_characters():
    outcome = finish_summary(ZH_SENTENCE * 2)
    assert isinstance(outcome, Accepted)
    assert CJK_BOUNDS[0] <= measure(outcome.text) <= CJK_BOUNDS[1]
    long = finish_summary(ZH_SENTENCE * 5)  # 185 characters: cut back to whole sentences
    assert isinstance(long, Accepted)
    assert long.cut
    assert long.text.endswith("。")
    assert measure(long.text) <= CJK_BOUNDS[1]


def test_japanese_is_measured_in_characters_too():
    sentence = (
        "ユーザーは京都への旅行を計画し、駅の近くのホテルを比較して、四条に泊まることに決めた。"
    )
    outcome = finish_summary(sentence * 2)
    assert isinstance(outcome, Accepted)
    assert measure(outcome.text) == len((sentence * 2).replace(" ", ""))


def test_secrets_are_redacted_before_storing():
    raw = (
        words(3)[:-1]
        + ", and the user pasted the key sk-abcdefghijklmnopqrstuvwxyz123456 by mistake. "
        + "用户说密码是hunter2222，之后换了。"
    )
    outcome = finish_summary(raw)
    assert isinstance(outcome, Accepted)
    assert outcome.redacted
    assert "sk-abc" not in outcome.text
    assert "hunter2222" not in outcome.text
    assert "[redacted]" in outcome.text
    assert secret_reason(outcome.text) is None
