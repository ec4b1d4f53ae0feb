"""Which stored context traces cite which memories, and erasing deleted texts from them.

A context trace keeps exactly what was sent with one reply, including the memory block
(``core/memory/retrieval.memory_block``, and the "All that fit" block of ``standing.py`` with the
same lines: one line per memory, ``- #<id> (<kind>, <date>,
confidence <c>) <text>``, or the Chinese form with full-width brackets). When a memory is
deleted its text must leave those copies too (DESIGN §3, issue 9): the line keeps its id and
metadata and the text becomes ``[deleted memory #<id>]``, so the context inspector still tells
truthfully that a memory was sent, and which, without keeping what it said.

A deleted session summary leaves them the same way: its line in a trace's summaries block
keeps the date and the conversation's title, and its text becomes ``[deleted summary #<id>]``.
Summary lines carry no id, so the traces holding one are found by its text.

``context_trace_memory`` (migration v3) links every trace to the memories it cites, so a delete
finds the traces to rewrite without reading them all. The pure functions here work on trace JSON
text and are also used by the migration; the session functions run on the DB thread inside the
caller's transaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

from sqlalchemy import bindparam, text
from sqlmodel import Session

#: The trace block kind that holds retrieved memories (``assembler.BLOCK_KINDS``).
MEMORY_BLOCK_KIND: Final = "memories"
#: The trace block kind of "All that fit": the whole store, in the system message.
STANDING_BLOCK_KIND: Final = "standing_memories"
#: Every block kind with memory lines; ``MEMORY_BLOCK_KIND`` as a ``kind`` argument means these.
_MEMORY_KINDS: Final = (MEMORY_BLOCK_KIND, STANDING_BLOCK_KIND)
#: The trace block kind that holds other conversations' summaries.
SUMMARY_BLOCK_KIND: Final = "summaries"
#: At most this many ids per ``IN (...)`` (old SQLite builds allow 999 parameters).
ID_CHUNK: Final = 500

# "- #12 (preference, 2026-01-02, confidence 0.9) text" or "- #12（偏好，2026-01-02，可信度 0.9）text".
_LINE_RE: Final = re.compile(r"^(- #(\d+)(?: ?[(（][^()（）\n]*[)）])?) ?(.*)$")


def deleted_text(memory_id: int) -> str:
    """What stands in a trace where a deleted memory's text was."""
    return f"[deleted memory #{memory_id}]"


def chunks(ids: Sequence[int], size: int = ID_CHUNK) -> Iterator[list[int]]:
    """``ids`` in slices small enough for one ``IN (...)``."""
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def _load(trace_json: str) -> dict[str, Any] | None:
    try:
        data = json.loads(trace_json)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _dump(data: dict[str, Any]) -> str:
    # The same form as ``ContextTrace.to_json``: compact, sorted keys.
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def deleted_summary_text(summary_id: int) -> str:
    """What stands in a trace where a deleted summary's text was."""
    return f"[deleted summary #{summary_id}]"


def _blocks(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    blocks = data.get("blocks")
    if not isinstance(blocks, list):
        return []
    kinds = _MEMORY_KINDS if kind == MEMORY_BLOCK_KIND else (kind,)
    return [
        b
        for b in blocks
        if isinstance(b, dict) and b.get("kind") in kinds and isinstance(b.get("text"), str)
    ]


def _memory_blocks(data: dict[str, Any]) -> list[dict[str, Any]]:
    # The per-turn block and the "all that fit" block hold the same lines.
    return _blocks(data, MEMORY_BLOCK_KIND)


def cited_memory_ids(trace_json: str) -> list[int]:
    """The ids of the memories a trace cites: its memory list and its memory block's lines.

    Args:
        trace_json: A trace as stored (``ContextTrace.to_json``); unreadable text cites nothing.

    Returns:
        Distinct ids, ascending.
    """
    data = _load(trace_json)
    if data is None:
        return []
    ids: set[int] = set()
    memories = data.get("memories")
    if isinstance(memories, list):
        for entry in memories:
            value = entry.get("id") if isinstance(entry, dict) else None
            if isinstance(value, int) and not isinstance(value, bool):
                ids.add(value)
    for block in _memory_blocks(data):
        for line in block["text"].splitlines():
            match = _LINE_RE.match(line)
            if match:
                ids.add(int(match.group(2)))
    return sorted(ids)


def erase_memory_texts(
    trace_json: str, memory_ids: Iterable[int]
) -> tuple[str, list[tuple[int, str, str]]]:
    """Replace the texts of ``memory_ids`` in a trace's memory block by ``[deleted memory #id]``.

    Args:
        trace_json: The stored trace.
        memory_ids: The memories being deleted.

    Returns:
        The new trace JSON (unchanged if nothing was cited), and ``(memory_id, original line,
        new line)`` for each line changed, which is what :func:`restore_memory_texts` needs.
    """
    wanted = set(memory_ids)
    data = _load(trace_json)
    if data is None or not wanted:
        return trace_json, []
    changes: list[tuple[int, str, str]] = []
    for block in _memory_blocks(data):
        lines = block["text"].split("\n")
        for index, line in enumerate(lines):
            match = _LINE_RE.match(line)
            if match is None or int(match.group(2)) not in wanted:
                continue
            memory_id = int(match.group(2))
            placeholder = deleted_text(memory_id)
            if match.group(3) == placeholder:
                continue
            lines[index] = f"{match.group(1)} {placeholder}"
            changes.append((memory_id, line, lines[index]))
        block["text"] = "\n".join(lines)
    if not changes:
        return trace_json, []
    return _dump(data), changes


def summary_text_key(content: str) -> str:
    """A summary's text as its line in a summaries block shows it (whitespace collapsed)."""
    return " ".join(content.split())


def erase_summary_texts(
    trace_json: str, texts: dict[int, str]
) -> tuple[str, list[tuple[int, str, str]]]:
    """Replace the given summaries' texts in a trace's summaries block.

    Args:
        trace_json: The stored trace.
        texts: Per deleted summary id, its text (as :func:`summary_text_key` gives it).

    Returns:
        The new trace JSON (unchanged if none was there), and ``(summary_id, original line,
        new line)`` for each line changed.
    """
    data = _load(trace_json)
    if data is None or not texts:
        return trace_json, []
    changes: list[tuple[int, str, str]] = []
    for block in _blocks(data, SUMMARY_BLOCK_KIND):
        lines = block["text"].split("\n")
        for index, line in enumerate(lines):
            for summary_id, content in texts.items():
                # A line is "- <date> · <title>: <text>": the text ends it.
                if content and line.endswith(content):
                    lines[index] = line[: -len(content)] + deleted_summary_text(summary_id)
                    changes.append((summary_id, line, lines[index]))
                    break
        block["text"] = "\n".join(lines)
    if not changes:
        return trace_json, []
    return _dump(data), changes


def restore_memory_texts(
    trace_json: str, lines: Iterable[tuple[str, str]], kind: str = MEMORY_BLOCK_KIND
) -> str:
    """Put erased lines back (undo of a delete).

    Args:
        trace_json: The stored trace.
        lines: ``(original line, erased line)`` pairs from :func:`erase_memory_texts` (or
            :func:`erase_summary_texts`, with ``kind`` ``SUMMARY_BLOCK_KIND``).
        kind: The kind of block the lines are in.

    Returns:
        The trace with each erased line replaced by its original (lines not found are skipped).
    """
    data = _load(trace_json)
    pairs = list(lines)
    if data is None or not pairs:
        return trace_json
    for block in _blocks(data, kind):
        block_lines = block["text"].split("\n")
        for original, erased in pairs:
            if erased in block_lines:
                block_lines[block_lines.index(erased)] = original
        block["text"] = "\n".join(block_lines)
    return _dump(data)


# -- on the DB thread ----------------------------------------------------------------------------

_CITING: Final = text(
    "SELECT DISTINCT message_id FROM context_trace_memory WHERE memory_id IN :ids"
).bindparams(bindparam("ids", expanding=True))
_TRACES: Final = text(
    "SELECT message_id, trace_json FROM context_trace WHERE message_id IN :ids"
).bindparams(bindparam("ids", expanding=True))
_UPDATE: Final = text("UPDATE context_trace SET trace_json = :t WHERE message_id = :m")


def link(session: Session, message_id: int, trace_json: str) -> None:
    """Record which memories the trace of ``message_id`` cites (replacing earlier links)."""
    session.execute(
        text("DELETE FROM context_trace_memory WHERE message_id = :m"), {"m": message_id}
    )
    ids = cited_memory_ids(trace_json)
    if ids:
        session.execute(
            text("INSERT INTO context_trace_memory (memory_id, message_id) VALUES (:i, :m)"),
            [{"i": memory_id, "m": message_id} for memory_id in ids],
        )


def erase_from_traces(
    session: Session, memory_ids: Sequence[int]
) -> dict[int, list[tuple[int, str, str]]]:
    """Erase the texts of ``memory_ids`` from every trace that cites them.

    The links stay: memory ids are never reused, and an undo puts the texts back.

    Args:
        session: A session on the DB thread; the caller commits.
        memory_ids: The memories being deleted.

    Returns:
        Per memory id, ``(message_id, original line, erased line)`` for each line changed.
    """
    message_ids: set[int] = set()
    for part in chunks(list(memory_ids)):
        message_ids.update(int(row[0]) for row in session.execute(_CITING, {"ids": part}))
    erased: dict[int, list[tuple[int, str, str]]] = {}
    wanted = set(memory_ids)
    for part in chunks(sorted(message_ids)):
        rows = session.execute(_TRACES, {"ids": part}).all()
        updates = []
        for message_id, trace_json in rows:
            new_json, changes = erase_memory_texts(str(trace_json), wanted)
            if not changes:
                continue
            updates.append({"m": int(message_id), "t": new_json})
            for memory_id, original, line in changes:
                erased.setdefault(memory_id, []).append((int(message_id), original, line))
        if updates:
            session.execute(_UPDATE, updates)
    return erased


_HOLDING: Final = text(
    "SELECT message_id, trace_json FROM context_trace WHERE instr(trace_json, :needle) > 0"
)


def erase_summaries_from_traces(
    session: Session, texts: dict[int, str]
) -> dict[int, list[tuple[int, str, str]]]:
    """Erase the texts of deleted summaries from every trace that sent them.

    Args:
        session: A session on the DB thread; the caller commits.
        texts: Per summary id, its text (as stored; collapsed here as the block shows it).

    Returns:
        Per summary id, ``(message_id, original line, erased line)`` for each line changed.
    """
    keys = {i: summary_text_key(t) for i, t in texts.items() if summary_text_key(t)}
    erased: dict[int, list[tuple[int, str, str]]] = {}
    for summary_id, key in keys.items():
        # The trace JSON keeps non-ASCII as is and escapes quotes and backslashes.
        needle = json.dumps(key, ensure_ascii=False)[1:-1]
        updates = []
        for message_id, trace_json in session.execute(_HOLDING, {"needle": needle}).all():
            new_json, changes = erase_summary_texts(str(trace_json), {summary_id: key})
            if not changes:
                continue
            updates.append({"m": int(message_id), "t": new_json})
            for _, original, line in changes:
                erased.setdefault(summary_id, []).append((int(message_id), original, line))
        if updates:
            session.execute(_UPDATE, updates)
    return erased


def restore_in_traces(
    session: Session, lines: Iterable[tuple[int, str, str]], kind: str = MEMORY_BLOCK_KIND
) -> None:
    """Undo :func:`erase_from_traces` for the given ``(message_id, original, erased)`` lines.

    ``kind`` is the block kind the lines are in (``SUMMARY_BLOCK_KIND`` to undo
    :func:`erase_summaries_from_traces`).
    """
    by_message: dict[int, list[tuple[str, str]]] = {}
    for message_id, original, erased in lines:
        by_message.setdefault(message_id, []).append((original, erased))
    for part in chunks(sorted(by_message)):
        rows = session.execute(_TRACES, {"ids": part}).all()
        updates = [
            {"m": int(m), "t": restore_memory_texts(str(t), by_message[int(m)], kind)}
            for m, t in rows
        ]
        if updates:
            session.execute(_UPDATE, updates)
