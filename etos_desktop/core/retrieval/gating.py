"""Retrieval gating: does a message ask about the shared past, or refer back? Bilingual rules.

Messages like "上次我们聊到哪", "did I tell you…", "按我之前的习惯" are strong triggers: the turn
searches memories *and* session summaries and widens the memory budget (DESIGN §5.3). Everything
else relies on the relevance floor alone. A short follow-up that refers back ("and for that?",
"那它呢") borrows the previous user turn for its search; any other message is searched as it
is. The rules are regular expressions, kept few and readable; pure functions, so they are
tested exhaustively.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from etos_desktop.core.text.segmentation import query_units


class RecallKind(StrEnum):
    """What kind of reference to the past a message makes."""

    #: Refers to an earlier conversation ("last time we talked about…").
    SHARED_PAST = "shared_past"
    #: Asks whether the assistant remembers something the user said ("did I tell you…").
    TOLD_BEFORE = "told_before"
    #: Refers to the user's habits or usual way ("按我之前的习惯", "as usual").
    HABIT = "habit"
    #: Asks about the user's own stored facts ("what's my dog's name", "你知道我…吗").
    ABOUT_ME = "about_me"


@dataclass(frozen=True)
class RecallCue:
    """A detected reference to the past.

    Attributes:
        kind: Which rule family matched.
        rule: The name of the rule that matched (for the trace and tests).
        span: The matched text.
    """

    kind: RecallKind
    rule: str
    span: str


_EN_PAST_TALK = (
    r"(talked|discussed|chatted|spoke|said|told|mentioned|decided|agreed|planned|went over"
    r"|covered|worked|recommended|suggested)"
)
_EN_BEFORE = (
    r"(last time|the other day|yesterday|earlier|before|previously|last (week|month|night"
    r"|session|conversation|chat))"
)

_RULES: tuple[tuple[RecallKind, str, re.Pattern[str]], ...] = tuple(
    (kind, name, re.compile(pattern, re.IGNORECASE))
    for kind, name, pattern in (
        # -- Chinese ---------------------------------------------------------------------------
        (
            RecallKind.SHARED_PAST,
            "zh_last_time",
            r"(上次|上回|那次|那天|之前|以前|先前|前面|前几天|昨天|前天|刚才|上周|上个月)"
            r".{0,6}(我们|咱们|我跟你|我和你|你跟我|你和我|跟你|和你|你)(一起)?.{0,3}"
            r"(聊|谈|讨论|商量|约定|说好|定的|提到|说过|讲过|提过|说的|讲的|提的|推荐|建议)"
            r"|(上次|上回|之前|刚才|那次)(聊|谈|讨论|说|讲|提)(的|到|过)",
        ),
        (
            RecallKind.SHARED_PAST,
            "zh_where_were_we",
            r"(聊到哪|说到哪|讲到哪|进行到哪|做到哪|接着(上次|之前|刚才)|继续(上次|之前|刚才))",
        ),
        (
            RecallKind.TOLD_BEFORE,
            "zh_remember",
            r"记(得|住)(吗|没|我|我们|上次|之前|那)|还记不记得|记不记得|你(是不是)?忘(了|记)",
        ),
        (
            RecallKind.TOLD_BEFORE,
            "zh_told_you",
            r"我(是不是|有没有|不是|已经|之前|以前|曾经|刚才)?(跟你|和你|对你|给你|向你)"
            r"(说|讲|提|提到|提起|聊|介绍)过"
            r"|我(是不是|有没有|之前|以前)(说|讲|提|告诉你)过|我(不是|已经|之前)告诉(过)?你",
        ),
        (
            RecallKind.HABIT,
            "zh_habit",
            r"(按|按照|照|根据|依|像)(着)?我(之前|以前|平时|平常|一贯|往常|一直|通常|惯常|的)"
            r".{0,4}(习惯|方式|偏好|喜好|要求|口味|风格|做法|设置|规矩)"
            r"|老样子|照旧|老规矩|(跟|和)(上次|之前|以前|往常)一样",
        ),
        (
            RecallKind.ABOUT_ME,
            "zh_about_me",
            r"你(知道|了解|记得)我.{0,12}(吗|么|什么|哪|多少|谁)"
            r"|我的.{1,12}(是什么|叫什么|是谁|是哪|在哪|多大|是多少|几岁)"
            r"|我(叫什么|住在哪|住哪|在哪(里|儿)?(工作|上班|上学)|做什么工作|是做什么(工作)?的"
            r"|喜欢什么|对什么过敏|几岁|多大了)",
        ),
        # -- English ---------------------------------------------------------------------------
        (
            RecallKind.SHARED_PAST,
            "en_last_time",
            rf"\b(last time|the other day|yesterday|last (week|month|night|session|conversation"
            rf"|chat))\b.{{0,40}}\b(we|you)\b.{{0,15}}\b{_EN_PAST_TALK}\b"
            rf"|\b(we|you)\b.{{0,15}}\b{_EN_PAST_TALK}\b.{{0,40}}\b{_EN_BEFORE}\b",
        ),
        (
            RecallKind.SHARED_PAST,
            "en_we_discussed",
            r"\bwe (talked|discussed|chatted|spoke|decided|agreed|planned|went over|were talking"
            r"|were discussing|covered|worked on)\b"
            r"|\b(did|have) we (ever |already )?(talk|discuss|chat|speak|spoken|talked|discussed"
            r"|decide|decided|agree|agreed|cover|covered)\b"
            r"|\bwhere (did|were) we (leave|left) off\b|\bpick up where\b|\bwhere were we\b"
            r"|\bour (last|previous|earlier) (conversation|chat|session|discussion)\b",
        ),
        (
            RecallKind.TOLD_BEFORE,
            "en_remember",
            r"\b(do|did|can|could) you (still )?(remember|recall)\b"
            r"|\bremember (when|what|that i|how|my|me|the time|our)\b"
            r"|\byou (forgot|forget|remembered)\b",
        ),
        (
            RecallKind.TOLD_BEFORE,
            "en_told_you",
            r"\b(did|have|had) i (ever |already )?(tell|told|mention|mentioned|say|said|share"
            r"|shared)( (it|this|that))?( (to|with))? you\b"
            r"|\b(did|have|had) i (ever |already )?(tell|told|mention|mentioned|say|said)\b"
            r"|\bi (already |once )?(told|mentioned to|said to|shared with|explained to) you\b"
            r"|\b(as|like) i (said|mentioned|told you|explained)\b"
            r"|\byou (said|told me|mentioned|suggested|recommended) (before|earlier|last time"
            r"|previously)\b",
        ),
        (
            RecallKind.HABIT,
            "en_habit",
            r"\b(as|like) (usual|always|before|last time)\b|\bthe usual\b|\bmy usual\b"
            r"|\b(my|the) (regular|normal|preferred) (way|style|format|order|setup|routine)\b"
            r"|\bthe way i (like|prefer|want|usually)\b|\bhow i (like|prefer|usually)\b"
            r"|\b(according to|based on|following) my (preference|habit|usual|style)",
        ),
        (
            RecallKind.ABOUT_ME,
            "en_about_me",
            r"\b(what|who|where|when|which)('s| is| was| are| were) my\b"
            r"|\b(what|which|where|who)( \w+)? (do|did) i (like|love|prefer|hate|dislike|eat|drink|use"
            r"|usually|normally|live|work|study)\b"
            r"|\bhow old (am i|is my|are my)\b|\bwhat do you know about me\b"
            r"|\bdo you know (my|what i|where i|who i|when i|how i)\b|\bam i allergic\b",
        ),
    )
)


def recall_cue(message: str) -> RecallCue | None:
    """Whether ``message`` asks about the shared past, and how.

    Args:
        message: The user's current message.

    Returns:
        The first matching cue (rule order: shared past, told before, habit, about me; Chinese
        before English), or ``None`` when the message makes no reference to the past.
    """
    text = unicodedata.normalize("NFKC", message).replace("\u2019", "'")
    for kind, name, pattern in _RULES:
        match = pattern.search(text)
        if match is not None:
            return RecallCue(kind=kind, rule=name, span=match.group(0))
    return None


_PERSONAL_RE = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|us|our|ours)\b|[我咱俺]",
    re.IGNORECASE,
)
#: "How do I…" / "我该怎么…" ask how a thing is done, not about the user ("How do I center a
#: div?"): the first person there is generic, so it does not make the message memory-directed.
_PROCEDURAL_RE = re.compile(
    r"\bhow (do|can|could|should|would|might|will) (i|we)\b"
    r"|\b(can|could|should|may|might) (i|we) (use|do|make|get|run|write|put|set|change|fix)\b"
    r"|\bis there a way (for me )?to\b"
    r"|我(们)?(该|应该|要|能|可以|需要)?(怎么|怎样|如何)",
    re.IGNORECASE,
)


#: The people of a user's life, named by their relation: "When is mum's check-up?", "老爸得的是
#:哪种慢性病？" ask about the user's memory without saying I (issue 18). Not after a name's
#: possessive ("Napoleon's father", "孔子的父亲"): that is general knowledge.
_RELATION_RE = re.compile(
    r"(?<![A-Za-z]'s )(?<![A-Za-z]s' )\b(mum|mom|mother|dad|father|parents|wife|husband|partner"
    r"|boyfriend|girlfriend|fianc[eé]e?|son|daughter|kids?|children|grandma|grandpa"
    r"|grandmother|grandfather|granny|brother|sister|sibling|aunt|uncle|cousin|in-laws?"
    r"|nephew|niece|boss|manager|colleague|coworker|flatmate|roommate)s?\b"
    r"|(?<![\u4e00-\u9fff]的)(妈妈|老妈|母亲|爸爸|老爸|父亲|爸妈|父母|老婆|老公|妻子|丈夫|爱人|对象"
    r"|男朋友|女朋友|儿子|女儿|闺女|孩子|宝宝|爷爷|奶奶|外公|外婆|姥姥|姥爷|公公|婆婆|岳父|岳母"
    r"|哥哥|姐姐|弟弟|妹妹|老板|领导|同事|室友)",
    re.IGNORECASE,
)


def mentions_relation(message: str) -> bool:
    """Whether ``message`` names one of the people in the user's life by the relation.

    Args:
        message: The user's message.

    Returns:
        ``True`` for "What did dad say about the car?", "闺女哪门功课总是慢吞吞？"; ``False``
        for "Who was Napoleon's father?" and "孔子的父亲是谁？".
    """
    text = unicodedata.normalize("NFKC", message).replace("\u2019", "'")
    return _RELATION_RE.search(text) is not None


def addresses_user(message: str) -> bool:
    """Whether ``message`` refers to the user or to "us" (first person, English or Chinese).

    A message that does not ("What is the speed of light?", "解释一下什么是区块链") is rarely about
    anything in the user's memories, so search asks more of its vector matches (the embedder's
    ``impersonal_floor``) unless the relevance gate finds a rare term or a name it shares
    with a memory. "you" does not count: "can you explain…" is about the topic; neither does
    the generic "I" of "how do I…" / "我该怎么…" (a procedure, not the user's life).

    Args:
        message: The user's message.

    Returns:
        ``True`` for first-person messages, every message with a recall cue, and messages
        about the people in the user's life by their relation (``mentions_relation``).
    """
    text = unicodedata.normalize("NFKC", message).replace("\u2019", "'")
    rest = _PROCEDURAL_RE.sub(" ", text)
    return (
        _PERSONAL_RE.search(rest) is not None
        or recall_cue(message) is not None
        or mentions_relation(message)
    )


def is_recall_question(message: str) -> bool:
    """Shorthand for ``recall_cue(message) is not None``."""
    return recall_cue(message) is not None


#: A follow-up longer than this (``segmentation.query_units``: words, CJK characters / 2) says
#: enough on its own; only shorter ones may borrow the previous turn.
FOLLOW_UP_MAX_UNITS = 8.0

_REFERS_BACK_RE = re.compile(
    # English: "and for that?", "what about it?", "how about the other one", "and this one?",
    # "same for them?", "does it…", "is that…", "why?".
    r"^\s*(and|also|so|but|or|then)\b"
    r"|^\s*(what|how) about\b"
    r"|^\s*(same|likewise)\b"
    r"|\b(that|this|those|these|the other) ones?\b"
    r"|\b(it|its|that|this|those|these|them|they|there|then)\s*[?？.!]*\s*$"
    r"|^\s*(is|does|did|can|could|would|will|should|was) (it|that|this|they|those)\b"
    r"|^\s*(why|how come|really|which one|how so)\s*[?？.!]*\s*$"
    # Chinese: "那它呢", "那这个呢", "还有呢", "为什么", "它…吗", "这个…", "那个…", "…呢？".
    r"|^\s*(那|那么|还有|另外|而且|然后|所以|可是|但是)"
    r"|[它他她]们?|这个|那个|这些|那些|这样|那样|这种|那种|上面|刚才"
    r"|呢\s*[?？]?\s*$"
    r"|^\s*(为什么|为啥|怎么说|真的吗|哪个)\s*[?？。!！]*\s*$",
    re.IGNORECASE,
)


def refers_back(message: str) -> bool:
    """Whether a message only makes sense with the turn before it ("and for that?", "那它呢").

    Per-turn retrieval adds the previous user turn to the search text only then (DESIGN §5.3);
    a short message that stands on its own ("What is the capital of France?") is searched as it
    is, so a memory relevant to the previous turn does not ride along.

    Args:
        message: The user's current message.

    Returns:
        ``True`` for a short message with an anaphor or a continuation word.
    """
    text = unicodedata.normalize("NFKC", message).replace("\u2019", "'").strip()
    if not text or query_units(text) > FOLLOW_UP_MAX_UNITS:
        return False
    return _REFERS_BACK_RE.search(text) is not None


_TALK_RE = re.compile(
    r"\b(what|which|did|do|does|we|you|i|me|us|talk|talked|talking|chat|chatted|discuss"
    r"|discussed|say|said|speak|spoke|tell|told|mention|mentioned|go|went|over|about|anything"
    r"|something|things?|topics?|the|all|were|was|have|had|again|remind|of|on)\b"
    r"|我们|咱们|你|我|聊天|聊|谈|说|讨论|提到|提|讲|过|了|些|什么|都|那|时候|的|到|哪儿|哪里|哪"
    r"|吗|呢|啥|内容|话题|东西|一下|记得|还",
    re.IGNORECASE,
)


def asks_only_what_was_said(text: str) -> bool:
    """Whether ``text`` (time words already removed) asks only what was talked about.

    "What did we talk about (last week)?" / "(上周)我们聊了些什么？" name no subject, so every
    memory from the period they name answers them; "what did we say about the car" does not.

    Args:
        text: A question with its time phrase taken out.

    Returns:
        ``True`` when nothing but talk words and punctuation is left.
    """
    rest = _TALK_RE.sub(" ", unicodedata.normalize("NFKC", text).replace("\u2019", "'"))
    return not re.search(r"[^\W_]", rest)
