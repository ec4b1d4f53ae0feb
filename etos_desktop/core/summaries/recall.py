"""Recall of summaries for a question about the shared past (DESIGN §5.3, §6).

A message with a recall cue ("上次我们聊到哪", "what did we talk about last week") searches the
summaries of other conversations too, by meaning (the memory embedder's vectors) and by
keywords, and a period the message names ("last week", "上周") — resolved by the one date
resolver in ``core/time_words.py`` — makes the summaries written in it eligible. The best ones
join that turn's memory block, each with its source: the conversation's title and the date.

Pure functions of the candidates, their vectors and a tuning; the search runs off the event loop
(``SummaryAccess.recall``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

import numpy

from etos_desktop.core.context.assembler import ContextBlock
from etos_desktop.core.context.language import Language
from etos_desktop.core.retrieval.block import MEMORY_BLOCK_LABEL
from etos_desktop.core.retrieval.gating import recall_cue
from etos_desktop.core.retrieval.tuning import Tuning
from etos_desktop.core.retrieval.vectors import FloatArray
from etos_desktop.core.summaries.injection import UNTITLED
from etos_desktop.core.summaries.records import Summary
from etos_desktop.core.summaries.writing import summary_date
from etos_desktop.core.text.segmentation import (
    STOP_TERMS,
    query_terms,
    query_units,
    tokens,
)
from etos_desktop.core.text.stemming import stem
from etos_desktop.core.time_words import TimeWindow, without_time_words

#: At most this many summaries join one turn's memory block.
RECALL_COUNT: Final = 3
#: Score added to a summary written in the period the question names.
WINDOW_BOOST: Final = 0.25
#: A summary is eligible by keywords when it holds this share of the question's content terms.
#: Lower than memory search's floor: the question already asked about the past, and what is
#: left of it after the cue and the time words is a few words ("the Kyoto hotel").
RECALL_KEYWORD_FLOOR: Final = 0.4
#: Words that ask *about the past* rather than name what was talked about: not searched for.
_FILLER: Final = frozenset(
    stem(word)
    for word in [
        "last",
        "time",
        "before",
        "earlier",
        "previous",
        "previously",
        "ago",
        "again",
        "talk",
        "talked",
        "talking",
        "discuss",
        "discussed",
        "chat",
        "chatted",
        "say",
        "said",
        "tell",
        "told",
        "mention",
        "mentioned",
        "remember",
        "recall",
        "decide",
        "decided",
        "conversation",
        "conversations",
        "session",
        "we",
        "us",
        "our",
    ]
) | frozenset(
    [
        "上次",
        "上回",
        "之前",
        "以前",
        "那次",
        "聊",
        "聊到",
        "聊过",
        "谈",
        "说",
        "说过",
        "讲",
        "提",
        "提到",
        "记得",
        "我们",
        "咱们",
        "上",
        "次",
        "回",
        "之",
        "前",
        "以",
    ]
)


@dataclass(frozen=True)
class SummaryHit:
    """One recalled summary and why.

    Attributes:
        summary: The summary.
        score: What the hits are sorted by.
        parts: Score parts (``vector``, ``keyword``, ``time_window``, ``relevance``) and the
            ``eligible_*`` flags, for the trace.
    """

    summary: Summary
    score: float
    parts: dict[str, float] = field(hash=False)

    @property
    def reason(self) -> str:
        """Why it was eligible, in the trace's words."""
        reasons = []
        if self.parts.get("eligible_vector"):
            reasons.append(f"vector {self.parts.get('vector', 0.0):.2f}")
        if self.parts.get("eligible_keyword"):
            reasons.append(f"keyword {self.parts.get('keyword', 0.0):.2f}")
        if self.parts.get("eligible_time"):
            reasons.append("from the period the message names")
        return "; ".join(reasons) or "ranked"


def rank_summaries(
    query: str,
    candidates: Sequence[Summary],
    *,
    vectors: Mapping[int, FloatArray],
    query_vector: FloatArray | None,
    tuning: Tuning,
    window: TimeWindow | None,
    k: int = RECALL_COUNT,
) -> list[SummaryHit]:
    """Rank summaries for a recall question; only eligible ones are returned.

    A summary is eligible when its cosine reaches the embedder's floor, its keyword score the
    keyword floor, or it was written in the period the question names.

    Args:
        query: The user's message.
        candidates: The current summaries of other conversations.
        vectors: Their unit vectors of the active embedder, by id (missing: keyword only).
        query_vector: The query's unit vector (``None``: keyword only).
        tuning: The active embedder's floors and weights.
        window: The period the message names, if any.
        k: At most this many hits.

    Returns:
        The hits, best first.
    """
    if not candidates or k <= 0:
        return []
    terms = recall_terms(query, window)
    docs = {s.id: set(tokens(f"{s.conversation_title} {s.content}")) for s in candidates}
    weight = tuning.vector_weight(query_units(" ".join(terms)))
    span = max(tuning.vector_high - tuning.vector_low, 1e-6)
    hits: list[SummaryHit] = []
    for summary in candidates:
        doc = docs[summary.id]
        # Each content term counts the same: IDF over a handful of summaries is noise.
        keyword = sum(term in doc for term in terms) / len(terms) if terms else 0.0
        parts: dict[str, float] = {"keyword": keyword}
        vector = vectors.get(summary.id)
        cosine: float | None = None
        if query_vector is not None and vector is not None:
            cosine = float(numpy.dot(vector, query_vector))
            parts["vector"] = cosine
            parts["floor"] = tuning.floor
        in_window = window is not None and window.contains(summary.created_at)
        eligible_vector = cosine is not None and cosine >= tuning.floor
        eligible_keyword = keyword >= RECALL_KEYWORD_FLOOR
        if not (eligible_vector or eligible_keyword or in_window):
            continue
        scaled = 0.0 if cosine is None else min(max((cosine - tuning.vector_low) / span, 0.0), 1.0)
        relevance = weight * scaled + (1 - weight) * keyword if cosine is not None else keyword
        parts["relevance"] = relevance
        parts["eligible_vector"] = float(eligible_vector)
        parts["eligible_keyword"] = float(eligible_keyword)
        parts["eligible_time"] = float(in_window)
        score = relevance
        if in_window:
            parts["time_window"] = WINDOW_BOOST
            score += WINDOW_BOOST
        # Ties (a bare "what did we talk about last week?") go to the newer summary.
        hits.append(SummaryHit(summary, score, parts))
    hits.sort(key=lambda h: (h.score, h.summary.created_at), reverse=True)
    return hits[:k]


def recall_terms(query: str, window: TimeWindow | None) -> list[str]:
    """The words of a recall question that say what was talked about.

    The time words (they choose the period instead), the recall cue ("did we talk about",
    "上次我们聊到") and other words about the past are left out.
    """
    text = without_time_words(query, window) if window is not None else query
    cue = recall_cue(text)
    if cue is not None:
        text = text.replace(cue.span, " ")
    # query_terms keeps stop words when nothing else is left; here nothing is better.
    return [term for term in query_terms(text) if term not in _FILLER and term not in STOP_TERMS]


_SOURCE: Final[Mapping[Language, str]] = MappingProxyType(
    {
        "en": "- summary of the conversation “{title}” ({date}): {text}",
        "zh": "- 对话「{title}」的摘要（{date}）：{text}",
    }
)


def recalled_line(hit: SummaryHit, lang: Language) -> str:
    """One recalled summary as a line of the memory block, with its source."""
    summary = hit.summary
    title = " ".join(summary.conversation_title.split()) or UNTITLED[lang]
    return _SOURCE[lang].format(
        title=title, date=summary_date(summary.created_at), text=" ".join(summary.content.split())
    )


def with_recalled(
    block: ContextBlock | None, hits: Sequence[SummaryHit], lang: Language
) -> ContextBlock | None:
    """The turn's memory block with the recalled summaries after its memories.

    Args:
        block: The memory block (``None``: no memory was relevant).
        hits: The recalled summaries.
        lang: The conversation's language.

    Returns:
        The block with one line per summary added (a new memory block if there was none), or
        ``block`` unchanged without hits.
    """
    if not hits:
        return block
    lines = "\n".join(recalled_line(hit, lang) for hit in hits)
    if block is None:
        return ContextBlock(kind="memories", label=MEMORY_BLOCK_LABEL[lang], content=lines)
    return ContextBlock(kind=block.kind, label=block.label, content=f"{block.content}\n{lines}")
