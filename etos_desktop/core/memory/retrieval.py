"""Per-turn automatic retrieval and the memory block the model sees (DESIGN §5.3, §8).

Retrieval always runs (tool calling is not needed for memory to work): the query is the user's
current message, plus the previous one only when the current message refers back to it
(``gating.refers_back``: "and for that?", "那它呢"); a question about the shared past widens the
search. The relevance floor in the engine decides whether anything is sent at all, and whether
the stricter floor for impersonal questions applies is judged on the current message alone.

Every line of the block carries a date, and the label says that where a memory, the profile or
a summary disagree the later date holds (issue 18): a memory's date is the day its statement
holds from (``valid_from``: its saving, or a restatement merged into it), plus the day it was
last changed when that is later (an edit in Settings may change what it says). Dates are local
calendar days, like the summaries' and the profile's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Final

from etos_desktop.core.context.assembler import ContextBlock, TraceMemory
from etos_desktop.core.context.language import Language
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.records import Memory
from etos_desktop.core.memory.search import Hit
from etos_desktop.core.retrieval.block import MEMORY_BLOCK_LABEL
from etos_desktop.core.retrieval.gating import RecallCue, addresses_user, recall_cue, refers_back
from etos_desktop.core.time_words import TimeWindow

#: How much of the previous message and of the current one goes into the query.
PREVIOUS_CONTEXT_CHARS = 300
QUERY_MAX_CHARS = 2000
#: A question about the shared past searches this many times top-K.
RECALL_WIDENING = 2
#: At most this many memories of these kinds per turn (long episodes crowd out facts).
PER_KIND_CAP: Final[Mapping[str, int]] = MappingProxyType({"episode": 2, "insight": 2})

_KIND_WORDS: Final[Mapping[Language, Mapping[str, str]]] = MappingProxyType(
    {
        "en": MappingProxyType({}),
        "zh": MappingProxyType(
            {
                "fact": "事实",
                "preference": "偏好",
                "instruction": "指示",
                "episode": "经历",
                "insight": "观察",
            }
        ),
    }
)


@dataclass(frozen=True)
class Retrieval:
    """What one turn's retrieval found.

    Attributes:
        query: The text that was searched.
        cue: The recall cue that widened the search, if the message asked about the past.
        hits: The memories to send, best first (possibly none).
        window: The period the search text names ("last week"), whose memories were boosted.
        memories: The sent memories as stored, by id: their lines' dates come from them.
    """

    query: str
    cue: RecallCue | None
    hits: tuple[Hit, ...]
    window: TimeWindow | None = None
    memories: Mapping[int, Memory] = field(default_factory=lambda: MappingProxyType({}))

    def window_text(self) -> str:
        """The window for the trace: its dates and the words that named it, or ``""``."""
        if self.window is None:
            return ""
        return f"{self.window.describe()} ({self.window.phrase})"


def build_query(current: str, previous_user: str | None) -> str:
    """The search text for one turn: the message, plus the previous one if it refers back."""
    text = current.strip()
    if previous_user and refers_back(text):
        return f"{previous_user.strip()[-PREVIOUS_CONTEXT_CHARS:]}\n{text}"
    return text[:QUERY_MAX_CHARS]


def cap_by_kind(hits: Sequence[Hit], k: int) -> tuple[Hit, ...]:
    """Keep the best ``k`` hits, at most ``PER_KIND_CAP`` of the capped kinds."""
    kept: list[Hit] = []
    counts: dict[str, int] = {}
    for hit in hits:
        cap = PER_KIND_CAP.get(hit.kind)
        if cap is not None and counts.get(hit.kind, 0) >= cap:
            continue
        counts[hit.kind] = counts.get(hit.kind, 0) + 1
        kept.append(hit)
        if len(kept) == k:
            break
    return tuple(kept)


async def retrieve(
    access: MemoryAccess, current: str, previous_user: str | None, top_k: int
) -> Retrieval:
    """Search the memories relevant to this turn (runs off the event loop).

    Args:
        access: The memory engine facade.
        current: The user's current message.
        previous_user: The user's previous message in this conversation, if any.
        top_k: The most memories to send (setting ``memory.retrieval_top_k``).
    """
    cue = recall_cue(current)
    k = top_k * RECALL_WIDENING if cue is not None else top_k
    query = build_query(current, previous_user)
    # Ask for more than k so the per-kind caps can skip some and still fill k.
    # The gate judges this message: an unrelated question after a personal one ("What is the
    # capital of France?") must not inherit the earlier turn's first person; a follow-up that
    # refers back ("and for that?") is about what the earlier turn was about.
    personal = addresses_user(current) or (
        previous_user is not None and refers_back(current.strip())
    )
    hits = await access.search(query, k=k * 2, mode="hybrid", personal=personal)
    window = access.engine.time_window(query)
    kept = cap_by_kind(hits, k)
    # The hits carry only the saving time; the lines need the statement's own dates.
    memories = await access.get_many([hit.id for hit in kept]) if kept else {}
    return Retrieval(
        query=query, cue=cue, hits=kept, window=window, memories=MappingProxyType(memories)
    )


def local_date(when: datetime) -> str:
    """A moment as the local calendar day (ISO), as the summaries and the profile show theirs."""
    return when.astimezone().date().isoformat()


def memory_dates(hit: Hit, memory: Memory | None = None) -> tuple[str, str | None]:
    """The dates a memory's line shows: since when it holds, and when it was last changed.

    Args:
        hit: The search result.
        memory: The memory as stored (``None``: only the hit's saving time is known).

    Returns:
        ``(since, changed)``: the day its statement holds from (``valid_from``; the saving
        day without ``memory``), and the day it was last changed when that is a later day,
        else ``None``.
    """
    if memory is None:
        return local_date(hit.created_at), None
    since = local_date(memory.valid_from)
    changed = local_date(memory.updated_at)
    return since, changed if changed > since else None


def memory_block(
    hits: Sequence[Hit], lang: Language, memories: Mapping[int, Memory] | None = None
) -> ContextBlock | None:
    """The labelled block of retrieved memories (id, kind, dates, confidence), or ``None``.

    Args:
        hits: The memories to send, best first.
        lang: The conversation's language.
        memories: The memories as stored, by id (``Retrieval.memories``), for their dates.
    """
    if not hits:
        return None
    kinds = _KIND_WORDS[lang]
    stored = memories or {}
    lines = []
    for hit in hits:
        kind = kinds.get(hit.kind, hit.kind)
        since, changed = memory_dates(hit, stored.get(hit.id))
        text = " ".join(hit.text.split())
        if lang == "zh":
            date = since if changed is None else f"{since}，{changed} 修改"
            lines.append(f"- #{hit.id}（{kind}，{date}，可信度 {hit.confidence:.1f}）{text}")
        else:
            date = since if changed is None else f"{since}, edited {changed}"
            lines.append(f"- #{hit.id} ({kind}, {date}, confidence {hit.confidence:.1f}) {text}")
    return ContextBlock(kind="memories", label=MEMORY_BLOCK_LABEL[lang], content="\n".join(lines))


def trace_memories(
    hits: Sequence[Hit], memories: Mapping[int, Memory] | None = None
) -> tuple[TraceMemory, ...]:
    """The trace entries of the sent memories: score parts, why each was eligible, its date.

    Args:
        hits: The sent memories.
        memories: The memories as stored, by id, for the date their line showed.
    """
    entries = []
    for hit in hits:
        reasons = []
        if hit.parts.get("eligible_vector"):
            reasons.append(
                f"vector {hit.parts.get('vector', 0.0):.2f} ≥ floor {hit.parts.get('floor', 0.0):.2f}"
            )
        if hit.parts.get("eligible_keyword"):
            reasons.append(f"keyword {hit.parts.get('keyword', 0.0):.2f}")
        if hit.parts.get("eligible_time"):
            reasons.append("from the period the message names")
        entries.append(
            TraceMemory(
                id=hit.id,
                kind=hit.kind,
                date=memory_dates(hit, (memories or {}).get(hit.id))[0],
                confidence=hit.confidence,
                score=hit.score,
                parts=tuple(sorted(hit.parts.items())),
                reason="; ".join(reasons) or "ranked",
            )
        )
    return tuple(entries)
