"""The context assembler: conversation state in, the exact request messages and a trace out.

One pure function (DESIGN §8) that also reports what it dropped to fit the model's window.

Order of the request, chosen so the stable part is a byte-identical prefix across the turns of a
session (provider prompt caches) and the volatile parts come last:

1. one system message: the system prompt, then the system blocks (the user profile first, then
   the recent summaries, then — with "All that fit" — every active memory, in id order);
2. the conversation history, trimmed to the budget by whole turns, oldest first;
3. the memories retrieved for this turn: a second system message, or (placement ``"user"``) a
   fenced block at the top of the current user message;
4. the current user message (then, inside a tool loop, this turn's tool calls and results).

The budget is ``context_window - max_output_tokens - safety_margin``: the reply's ``max_tokens``
is reserved, and the estimate error gets a small margin.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, get_args

from etos_desktop.core.context.language import Language
from etos_desktop.core.context.prompts import MEMORY_IN_USER_MESSAGE_NOTE, USER_MESSAGE_HEADING
from etos_desktop.core.context.tokens import estimate_message_tokens, estimate_tokens
from etos_desktop.core.errors import MessageTooLong
from etos_desktop.core.providers.base import Message
from etos_desktop.core.text.fencing import fence

BlockKind = Literal["system", "profile", "summaries", "memories", "standing_memories"]
#: How the memories of a request were chosen (``ContextTrace.memory_rule``): every active memory
#: because they fit the "All that fit" budget, retrieval because they did not, retrieval because
#: the user chose a fixed number, or ``""`` (memory off, or a trace older than the rule).
MemoryRule = Literal["", "all_that_fit", "retrieval", "fixed"]
Placement = Literal["system", "user"]

#: Every kind a ``ContextBlock`` may have. "system" blocks are trusted instructions and are
#: rendered as they are; the other kinds are data and are fenced.
BLOCK_KINDS: Final[tuple[str, ...]] = get_args(BlockKind)
#: The trace's label for the system prompt itself (the first block of the system message).
SYSTEM_PROMPT_LABEL: Final = "system_prompt"
#: Version of the JSON ``ContextTrace.to_json`` writes; ``from_json`` reads only this one.
TRACE_FORMAT_VERSION: Final = 1
#: Tokens kept free for the estimate's error (``ContextInput.safety_margin``).
SAFETY_MARGIN: Final = 64

_T = TypeVar("_T")


@dataclass(frozen=True)
class ContextBlock:
    """One block of injected context.

    Args:
        kind: ``"system"`` (instructions, rendered as they are), or a data kind — ``"profile"``,
            ``"summaries"``, ``"memories"`` (this turn's), ``"standing_memories"`` (the whole small
            store, "All that fit") — rendered fenced between ``<kind>`` tags.
        label: The heading the model sees; for data it says what the data is and that it is not an
            instruction (in the conversation's language).
        content: The block's text.

    Raises:
        ValueError: ``kind`` is not one of ``BLOCK_KINDS``.
    """

    kind: BlockKind
    label: str
    content: str

    def __post_init__(self) -> None:
        if self.kind not in BLOCK_KINDS:
            raise ValueError(f"unknown context block kind {self.kind!r}")


@dataclass(frozen=True)
class ContextInput:
    """Everything the assembler needs for one request.

    Args:
        system_prompt: The static system text (persona and base rules).
        history: The conversation's current history in order, without the current user message.
            It may hold assistant messages with ``tool_calls`` followed by their ``tool`` results.
        current: The current user message.
        model: The model id (reported in the trace and in ``MessageTooLong``).
        context_window: The model's context window in tokens.
        max_output_tokens: Tokens reserved for the reply (the request's ``max_tokens``).
        system_blocks: Blocks appended to the system message in order (profile, summaries, the
            standing memories of "All that fit").
        memory_block: The memories retrieved for this turn, if any.
        memory_placement: ``"system"`` puts the memory block in a second system message right
            before the current user message; ``"user"`` fences it at the top of the user message,
            for servers whose chat template takes a single system message.
        safety_margin: Tokens kept free for the estimate's error.
        language: Language of the assembler's own fence texts (placement ``"user"``).
        continuation: Messages of the current turn that follow the user message inside a tool loop
            (assistant ``tool_calls`` and ``tool`` results). Sent last and never trimmed.

    Raises:
        ValueError: A size is out of range, or ``current`` is not a user message.
    """

    system_prompt: str
    history: Sequence[Message]
    current: Message
    model: str
    context_window: int
    max_output_tokens: int
    system_blocks: Sequence[ContextBlock] = ()
    memory_block: ContextBlock | None = None
    memory_placement: Placement = "system"
    safety_margin: int = SAFETY_MARGIN
    language: Language = "en"
    continuation: Sequence[Message] = ()

    def __post_init__(self) -> None:
        if self.context_window <= 0:
            raise ValueError(f"context_window must be positive, got {self.context_window}")
        if self.max_output_tokens < 0 or self.safety_margin < 0:
            raise ValueError("max_output_tokens and safety_margin must not be negative")
        if self.memory_placement not in get_args(Placement):
            raise ValueError(f"unknown memory placement {self.memory_placement!r}")
        if self.current.get("role") != "user":
            raise ValueError("the current message must be a user message")


@dataclass(frozen=True)
class TraceBlock:
    """One injected block as it was sent.

    Args:
        kind: The block kind (see ``BLOCK_KINDS``).
        label: The block's label (``SYSTEM_PROMPT_LABEL`` for the system prompt).
        tokens: Token estimate of ``text``.
        text: Exactly the text that was sent for this block, fence included.
    """

    kind: str
    label: str
    tokens: int
    text: str


@dataclass(frozen=True)
class TraceMemory:
    """One memory that was sent, and why it was chosen.

    Args:
        id: The memory's id (``#id`` in the block).
        kind: Its kind.
        date: The date shown with it (ISO date).
        confidence: Its confidence, 0–1.
        score: The final ranking score.
        parts: The score's parts (vector, keyword, recency, importance, confidence…).
        reason: Why it was eligible (e.g. "vector 0.41 ≥ floor 0.15").
    """

    id: int
    kind: str
    date: str
    confidence: float
    score: float
    parts: tuple[tuple[str, float], ...]
    reason: str


@dataclass(frozen=True)
class TraceSummary:
    """One summary of another conversation that a recall question brought into the memory block.

    Args:
        id: The summary's id.
        title: Its conversation's title.
        date: Its date (ISO).
        score: Its ranking score.
        reason: Why it was eligible (vector, keyword, or the period the message names).
    """

    id: int
    title: str
    date: str
    score: float
    reason: str


@dataclass(frozen=True)
class TraceAttachment:
    """One file attached to a message of the request, and how it went.

    Args:
        message: ``"current"`` (the user's message now) or ``"history"`` (an earlier one).
        kind: ``"image"`` or ``"document"``.
        name: The file's name.
        tokens: Its token estimate.
        sent: ``"image"`` (an image part), ``"document"`` (a fenced block), ``"note"`` (an
            image named in a line, not sent: older than the replay rule, or the model takes
            none) or ``"missing"`` (its file is gone from the data folder).
    """

    message: str
    kind: str
    name: str
    tokens: int
    sent: str


@dataclass(frozen=True)
class ContextTrace:
    """What one request contained and what was left out: the data behind the context inspector.

    Args:
        model: The model id.
        context_window: The model's context window.
        max_output_tokens: Tokens reserved for the reply.
        safety_margin: Tokens kept free for the estimate's error.
        budget: ``context_window - max_output_tokens - safety_margin``.
        total_tokens: Token estimate of every message sent.
        blocks: The injected blocks as sent: the system prompt, the system blocks, the memories.
        history_total: Messages in the input history.
        history_kept: History messages sent.
        history_tokens: Token estimate of the history messages sent.
        dropped_turns: Whole turns left out to fit the budget.
        dropped_tokens: Token estimate of the history messages left out.
        dropped_message_indexes: Indexes into the input history of the messages left out.
        current_tokens: Token estimate of the user's current message as the user wrote it.
        placement: Where memories were to go (``"system"`` or ``"user"``).
        memory_dropped: Whether the memory block was left out because it did not fit.
    """

    model: str
    context_window: int
    max_output_tokens: int
    safety_margin: int
    budget: int
    total_tokens: int
    blocks: tuple[TraceBlock, ...]
    history_total: int
    history_kept: int
    history_tokens: int
    dropped_turns: int
    dropped_tokens: int
    dropped_message_indexes: tuple[int, ...]
    current_tokens: int
    placement: Placement
    memory_dropped: bool = False
    #: Indexes (into the input history) of the turns left out because they alone exceed the
    #: budget, whatever else is sent (among ``dropped_message_indexes``).
    oversized_message_indexes: tuple[int, ...] = ()
    #: How many turns those are (among ``dropped_turns``).
    oversized_turns: int = 0
    #: When the summaries block was taken (ISO; "" without one): the session's first request.
    summaries_snapshot_at: str = ""
    #: When the profile that was sent last changed (ISO; "" without a profile block).
    profile_updated_at: str = ""
    #: Summaries a recall question added to the memory block (filled in by the chat service).
    recalled_summaries: tuple[TraceSummary, ...] = ()
    #: The memories in the memory block, with their scores (filled in by the chat service).
    memories: tuple[TraceMemory, ...] = ()
    #: The text memories were searched with, and the recall cue that widened the search, if any.
    retrieval_query: str = ""
    recall_cue: str = ""
    #: The period the message named ("last week" → "2026-06-08 – 2026-06-14 (last week)") whose
    #: memories were boosted, or "".
    retrieval_window: str = ""
    #: Which rule chose the memories (see ``MemoryRule``), the active memories there were, the
    #: estimated tokens of the whole store's block ("all that fit"; 0 when it was not built) and
    #: the "All that fit" budget in tokens (0 in fixed-number mode).
    memory_rule: MemoryRule = ""
    memory_store_count: int = 0
    memory_store_tokens: int = 0
    memory_fit_budget: int = 0
    #: The files attached to the messages sent (filled in by the chat service).
    attachments: tuple[TraceAttachment, ...] = ()
    #: The current message when the app wrote it for a request of its own (a check-in's,
    #: ``core/checkins``); "" when it is the user's message.
    app_request: str = ""

    def to_json(self) -> str:
        """Serialise the trace for the database.

        Returns:
            Compact JSON with sorted keys: equal traces give equal strings.
        """
        data: dict[str, Any] = {
            "version": TRACE_FORMAT_VERSION,
            "model": self.model,
            "context_window": self.context_window,
            "max_output_tokens": self.max_output_tokens,
            "safety_margin": self.safety_margin,
            "budget": self.budget,
            "total_tokens": self.total_tokens,
            "blocks": [
                {"kind": b.kind, "label": b.label, "tokens": b.tokens, "text": b.text}
                for b in self.blocks
            ],
            "history_total": self.history_total,
            "history_kept": self.history_kept,
            "history_tokens": self.history_tokens,
            "dropped_turns": self.dropped_turns,
            "dropped_tokens": self.dropped_tokens,
            "dropped_message_indexes": list(self.dropped_message_indexes),
            "current_tokens": self.current_tokens,
            "placement": self.placement,
            "memory_dropped": self.memory_dropped,
            "oversized_message_indexes": list(self.oversized_message_indexes),
            "oversized_turns": self.oversized_turns,
            "summaries_snapshot_at": self.summaries_snapshot_at,
            "profile_updated_at": self.profile_updated_at,
            "recalled_summaries": [
                {"id": r.id, "title": r.title, "date": r.date, "score": r.score, "reason": r.reason}
                for r in self.recalled_summaries
            ],
            "memories": [
                {
                    "id": m.id,
                    "kind": m.kind,
                    "date": m.date,
                    "confidence": m.confidence,
                    "score": m.score,
                    "parts": [[name, value] for name, value in m.parts],
                    "reason": m.reason,
                }
                for m in self.memories
            ],
            "retrieval_query": self.retrieval_query,
            "recall_cue": self.recall_cue,
            "retrieval_window": self.retrieval_window,
            "memory_rule": self.memory_rule,
            "memory_store_count": self.memory_store_count,
            "memory_store_tokens": self.memory_store_tokens,
            "memory_fit_budget": self.memory_fit_budget,
            "attachments": [
                {
                    "message": a.message,
                    "kind": a.kind,
                    "name": a.name,
                    "tokens": a.tokens,
                    "sent": a.sent,
                }
                for a in self.attachments
            ],
        }
        if self.app_request:
            # Only then: the traces of the user's own requests stay as they were written.
            data["app_request"] = self.app_request
        return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, s: str) -> ContextTrace:
        """Read a trace written by ``to_json``.

        Args:
            s: The JSON text.

        Returns:
            The trace, equal to the one that was serialised.

        Raises:
            ValueError: The text is not a trace of a known format version.
        """
        try:
            data = json.loads(s)
            if not isinstance(data, dict) or data.get("version") != TRACE_FORMAT_VERSION:
                raise ValueError("not a context trace of a known version")
            placement = data["placement"]
            if placement not in get_args(Placement):
                raise ValueError(f"unknown memory placement {placement!r}")
            # Traces written before the rule was recorded have none: "".
            rule = data.get("memory_rule", "")
            if rule not in get_args(MemoryRule):
                raise ValueError(f"unknown memory rule {rule!r}")
            return cls(
                model=_typed(data, "model", str),
                context_window=_typed(data, "context_window", int),
                max_output_tokens=_typed(data, "max_output_tokens", int),
                safety_margin=_typed(data, "safety_margin", int),
                budget=_typed(data, "budget", int),
                total_tokens=_typed(data, "total_tokens", int),
                blocks=tuple(
                    TraceBlock(
                        kind=_typed(b, "kind", str),
                        label=_typed(b, "label", str),
                        tokens=_typed(b, "tokens", int),
                        text=_typed(b, "text", str),
                    )
                    for b in data["blocks"]
                ),
                history_total=_typed(data, "history_total", int),
                history_kept=_typed(data, "history_kept", int),
                history_tokens=_typed(data, "history_tokens", int),
                dropped_turns=_typed(data, "dropped_turns", int),
                dropped_tokens=_typed(data, "dropped_tokens", int),
                dropped_message_indexes=tuple(int(i) for i in data["dropped_message_indexes"]),
                current_tokens=_typed(data, "current_tokens", int),
                placement=placement,
                memory_dropped=_typed(data, "memory_dropped", bool),
                oversized_message_indexes=tuple(
                    int(i) for i in data.get("oversized_message_indexes", [])
                ),
                oversized_turns=int(data.get("oversized_turns", 0)),
                summaries_snapshot_at=str(data.get("summaries_snapshot_at", "")),
                profile_updated_at=str(data.get("profile_updated_at", "")),
                recalled_summaries=tuple(
                    TraceSummary(
                        id=_typed(r, "id", int),
                        title=_typed(r, "title", str),
                        date=_typed(r, "date", str),
                        score=float(r["score"]),
                        reason=_typed(r, "reason", str),
                    )
                    for r in data.get("recalled_summaries", [])
                ),
                memories=tuple(
                    TraceMemory(
                        id=_typed(m, "id", int),
                        kind=_typed(m, "kind", str),
                        date=_typed(m, "date", str),
                        confidence=float(m["confidence"]),
                        score=float(m["score"]),
                        parts=tuple((str(n), float(v)) for n, v in m["parts"]),
                        reason=_typed(m, "reason", str),
                    )
                    for m in data.get("memories", [])
                ),
                retrieval_query=str(data.get("retrieval_query", "")),
                recall_cue=str(data.get("recall_cue", "")),
                retrieval_window=str(data.get("retrieval_window", "")),
                memory_rule=rule,
                memory_store_count=int(data.get("memory_store_count", 0)),
                memory_store_tokens=int(data.get("memory_store_tokens", 0)),
                memory_fit_budget=int(data.get("memory_fit_budget", 0)),
                attachments=tuple(
                    TraceAttachment(
                        message=_typed(a, "message", str),
                        kind=_typed(a, "kind", str),
                        name=_typed(a, "name", str),
                        tokens=_typed(a, "tokens", int),
                        sent=_typed(a, "sent", str),
                    )
                    for a in data.get("attachments", [])
                ),
                app_request=str(data.get("app_request", "")),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed context trace: {exc}") from exc


def _typed(data: Mapping[str, Any], key: str, kind: type[_T]) -> _T:
    value = data[key]
    # bool is an int subclass; a JSON true must not pass as a token count.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{key} should be {kind.__name__}, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class AssembledContext:
    """The result of ``assemble_context``.

    Args:
        messages: The request's messages, new dicts owned by the caller.
        trace: What went in and what was left out.
    """

    messages: list[Message]
    trace: ContextTrace


def _fence(tag: str, label: str, content: str) -> str:
    head = f"## {label.strip()}\n" if label.strip() else ""
    return head + fence(tag, content)


def head_tokens(system_prompt: str, blocks: Sequence[ContextBlock]) -> int:
    """The token estimate of the system message ``assemble_context`` builds from these parts.

    It goes with every request whole, so a user message can be at most the budget less this.
    """
    parts = [system_prompt.strip()] if system_prompt.strip() else []
    parts.extend(render_block(b) for b in blocks if b.content.strip())
    if not parts:
        return 0
    return estimate_message_tokens({"role": "system", "content": "\n\n".join(parts)})


def render_block(block: ContextBlock) -> str:
    """The text a system-message block is sent as: fenced and labelled unless it is ``"system"``.

    Args:
        block: The block.

    Returns:
        Exactly what ``assemble_context`` puts into the system message for it.
    """
    if block.kind == "system":
        label = block.label.strip()
        content = block.content.strip()
        return f"## {label}\n{content}" if label else content
    return _fence(block.kind, block.label, block.content)


def _render_memory(block: ContextBlock) -> str:
    # Memories are data whatever kind the caller gave them.
    tag = block.kind if block.kind != "system" else "memories"
    return _fence(tag, block.label, block.content)


def _with_memory_on_top(current: Message, block_text: str, language: Language) -> Message:
    prefix = f"{block_text}\n\n{USER_MESSAGE_HEADING[language]}"
    message = copy.deepcopy(current)
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [{"type": "text", "text": prefix}, *content]
    else:
        message["content"] = f"{prefix}\n{content if isinstance(content, str) else ''}"
    return message


def _split_turns(history: Sequence[Message]) -> list[list[int]]:
    # A turn is a user message and everything up to the next one, so an assistant message with
    # tool_calls always stays together with its tool results. Messages before the first user
    # message (a greeting) form a turn of their own.
    turns: list[list[int]] = []
    for index, message in enumerate(history):
        if message.get("role") == "user" or not turns:
            turns.append([index])
        else:
            turns[-1].append(index)
    return turns


def assemble_context(inp: ContextInput) -> AssembledContext:
    """Build the exact messages of one chat request and the trace of how they were chosen.

    Pure and deterministic: equal inputs give byte-identical messages, the inputs are never
    mutated, and every returned message is a new dict.

    Args:
        inp: The conversation state and the model's limits.

    Returns:
        The messages, in the order described in the module docstring, and their trace. Their
        estimated total never exceeds the budget.

    Raises:
        MessageTooLong: The system message, the current message and this turn's tool messages
            alone exceed the budget (with ``needed``, ``budget`` and ``model`` as params). A memory
            block that does not fit is dropped instead, and the trace says so.
    """
    budget = inp.context_window - inp.max_output_tokens - inp.safety_margin

    # 1. The system message: the stable prefix.
    trace_blocks: list[TraceBlock] = []
    system_parts: list[str] = []
    prompt = inp.system_prompt.strip()
    if prompt:
        system_parts.append(prompt)
        trace_blocks.append(
            TraceBlock("system", SYSTEM_PROMPT_LABEL, estimate_tokens(prompt), prompt)
        )
    for block in inp.system_blocks:
        if not block.content.strip():
            continue
        text = render_block(block)
        system_parts.append(text)
        trace_blocks.append(TraceBlock(block.kind, block.label, estimate_tokens(text), text))
    head: list[Message] = (
        [{"role": "system", "content": "\n\n".join(system_parts)}] if system_parts else []
    )

    # 3.-4. The tail: memories, the current message, this turn's tool messages.
    continuation = [copy.deepcopy(message) for message in inp.continuation]
    plain_tail: list[Message] = [copy.deepcopy(inp.current), *continuation]
    tail = plain_tail
    memory_trace: TraceBlock | None = None
    memory = inp.memory_block
    if memory is not None and memory.content.strip():
        text = _render_memory(memory)
        if inp.memory_placement == "system":
            tail = [{"role": "system", "content": text}, *plain_tail]
        else:
            text = f"{MEMORY_IN_USER_MESSAGE_NOTE[inp.language]}\n{text}"
            tail = [_with_memory_on_top(inp.current, text, inp.language), *continuation]
        memory_trace = TraceBlock(memory.kind, memory.label, estimate_tokens(text), text)

    head_tokens = sum(estimate_message_tokens(message) for message in head)
    fixed = head_tokens + sum(estimate_message_tokens(message) for message in tail)
    memory_dropped = False
    if fixed > budget:
        plain_fixed = head_tokens + sum(estimate_message_tokens(m) for m in plain_tail)
        if memory_trace is None or plain_fixed > budget:
            raise MessageTooLong(
                f"the request needs {plain_fixed} tokens without history; the budget is {budget}",
                needed=plain_fixed,
                budget=budget,
                model=inp.model,
            )
        tail, fixed, memory_trace, memory_dropped = plain_tail, plain_fixed, None, True
    if memory_trace is not None:
        trace_blocks.append(memory_trace)

    # 2. The history: keep the newest whole turns that fit what is left. A turn that could
    # never fit (a huge paste the model refused) is left out alone: the turns before it are
    # still sent while they fit (issue 19: one such turn used to cut off all earlier context).
    history_costs = [estimate_message_tokens(message) for message in inp.history]
    turns = _split_turns(inp.history)
    room = budget - fixed
    remaining = room
    kept_turns: list[int] = []
    oversized: list[int] = []
    for position in range(len(turns) - 1, -1, -1):
        cost = sum(history_costs[i] for i in turns[position])
        if cost > room:
            oversized.append(position)
            continue
        if cost > remaining:
            break
        remaining -= cost
        kept_turns.append(position)
    kept_set = set(kept_turns)
    kept = [i for position in sorted(kept_set) for i in turns[position]]
    dropped = [i for position, turn in enumerate(turns) if position not in kept_set for i in turn]
    history = [copy.deepcopy(inp.history[i]) for i in kept]
    history_tokens = sum(history_costs[i] for i in kept)

    messages = [*head, *history, *tail]
    trace = ContextTrace(
        model=inp.model,
        context_window=inp.context_window,
        max_output_tokens=inp.max_output_tokens,
        safety_margin=inp.safety_margin,
        budget=budget,
        total_tokens=fixed + history_tokens,
        blocks=tuple(trace_blocks),
        history_total=len(inp.history),
        history_kept=len(kept),
        history_tokens=history_tokens,
        dropped_turns=len(turns) - len(kept_turns),
        oversized_message_indexes=tuple(
            i for position in sorted(oversized) for i in turns[position]
        ),
        oversized_turns=len(oversized),
        dropped_tokens=sum(history_costs[i] for i in dropped),
        dropped_message_indexes=tuple(dropped),
        current_tokens=estimate_message_tokens(inp.current),
        placement=inp.memory_placement,
        memory_dropped=memory_dropped,
    )
    return AssembledContext(messages=messages, trace=trace)
