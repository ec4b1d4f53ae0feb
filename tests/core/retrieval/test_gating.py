from __future__ import annotations

import pytest

from etos_desktop.core.retrieval.gating import (
    RecallKind,
    addresses_user,
    is_recall_question,
    mentions_relation,
    recall_cue,
)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("上次我们聊到哪了？", RecallKind.SHARED_PAST),
        ("上次聊的那个方案后来怎么样了", RecallKind.SHARED_PAST),
        ("昨天你说的那个方法我试了", RecallKind.SHARED_PAST),
        ("接着上次的继续", RecallKind.SHARED_PAST),
        ("我们说到哪儿了，讲到哪了", RecallKind.SHARED_PAST),
        ("你还记得我女儿叫什么吗", RecallKind.TOLD_BEFORE),
        ("我是不是跟你说过我对花生过敏", RecallKind.TOLD_BEFORE),
        ("我不是告诉过你我不吃辣吗", RecallKind.TOLD_BEFORE),
        ("按我之前的习惯来安排", RecallKind.HABIT),
        ("照我平时的口味推荐", RecallKind.HABIT),
        ("老样子", RecallKind.HABIT),
        ("和上次一样就行", RecallKind.HABIT),
        ("你知道我住在哪吗", RecallKind.ABOUT_ME),
        ("我的狗叫什么名字", RecallKind.ABOUT_ME),
        ("我是做什么工作的？", RecallKind.ABOUT_ME),
        ("What did we talk about last time?", RecallKind.SHARED_PAST),
        ("Last time we discussed the budget, remind me", RecallKind.SHARED_PAST),
        ("Where did we leave off?", RecallKind.SHARED_PAST),
        ("you recommended a book before, which one?", RecallKind.SHARED_PAST),
        ("Do you remember my sister's name?", RecallKind.TOLD_BEFORE),
        ("Did I tell you about my new job?", RecallKind.TOLD_BEFORE),
        ("Did I ever mention that I hate olives", RecallKind.TOLD_BEFORE),
        ("As I said, keep it short", RecallKind.TOLD_BEFORE),
        ("Same as usual please", RecallKind.HABIT),
        ("Format it the way I like", RecallKind.HABIT),
        ("What's my dog's name?", RecallKind.ABOUT_ME),
        ("What do you know about me?", RecallKind.ABOUT_ME),
        ("Which drink do I prefer?", RecallKind.ABOUT_ME),
    ],
)
def test_questions_about_the_shared_past_are_detected(message: str, kind: RecallKind) -> None:
    cue = recall_cue(message)
    assert cue is not None, message
    assert cue.kind is kind
    assert cue.span
    assert cue.rule.startswith(("zh_", "en_"))


@pytest.mark.parametrize(
    "message",
    [
        "How do I reverse a list in Python?",
        "What is the capital of France?",
        "Before we start, explain recursion",
        "Last week I went to Paris, can you recommend a restaurant?",
        "I remember being young",
        "Translate 'good morning' into German",
        "今天天气怎么样",
        "帮我写一首关于秋天的诗",
        "昨天我做了一个蛋糕，怎么保存",
        "记得带伞",
        "你说怎么办",
        "我叫张三，很高兴认识你",
        "解释一下量子纠缠",
        "",
    ],
)
def test_questions_needing_no_history_are_not_gated(message: str) -> None:
    assert recall_cue(message) is None
    assert not is_recall_question(message)


def test_full_width_and_curly_apostrophes_are_normalised() -> None:
    assert recall_cue("What’s my dog’s name?") is not None
    assert recall_cue("ＤＩＤ Ｉ ＴＥＬＬ ＹＯＵ") is not None


@pytest.mark.parametrize(
    ("message", "personal"),
    [
        ("What car do I own?", True),
        ("Can you recommend a dinner that fits my diet?", True),
        ("What hot drink should you offer me?", True),
        ("Where did we leave off", True),
        ("I'm bored", True),
        ("我开的是什么车？", True),
        ("帮我起草一封信", True),
        ("咱们继续", True),
        ("What is the speed of light in a vacuum?", False),
        ("Can you explain recursion?", False),
        ("解释一下什么是区块链。", False),
        ("HTTP 状态码 404 是什么意思？", False),
        ("In my opinion", True),
        ("Summarise this: the mine collapsed", True),  # "mine": a known false positive
        ("", False),
        # The generic "I" of a how-to question (issue 18): coding and general questions.
        ("How do I center a div with CSS flexbox?", False),
        ("How can I sort a list of tuples by the second element?", False),
        ("我该怎么用 git 撤销上一次提交？", False),
        ("如何计算圆的面积？", False),
        ("How do I like my coffee?", True),
        ("How do I get to my office from the station?", True),
        ("我怎么总是睡不好？我的作息有问题吗", True),
    ],
)
def test_addresses_user(message: str, personal: bool) -> None:
    assert addresses_user(message) is personal


@pytest.mark.parametrize(
    ("message", "relation"),
    [
        ("What condition was the father diagnosed with?", True),
        ("When is mum's check-up?", True),
        ("老爸得的是哪种慢性病？", True),
        ("闺女哪门功课总是慢吞吞？", True),
        ("妈妈上次体检是哪天？", True),
        ("Who was Napoleon's father?", False),
        ("孔子的父亲是谁？", False),
        ("What is the capital of France?", False),
        ("解释一下什么是区块链。", False),
    ],
)
def test_the_people_of_the_users_life_make_a_message_memory_directed(
    message: str, relation: bool
) -> None:
    # Issue 18: questions about the people in a user's life rarely say "I".
    assert mentions_relation(message) is relation
    assert addresses_user(message) is relation
