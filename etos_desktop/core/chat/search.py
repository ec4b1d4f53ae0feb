"""Searching every conversation's messages, and indexing the messages that existed before.

:class:`MessageSearch` answers a query from the full-text index (``core/storage/message_fts.py``,
kept in step by the chat repository): the shown messages that hold every word of the query, each
CJK run as a substring, best BM25 first and newer first on ties, each with its conversation,
date and a snippet whose matches are marked. It also finds a text inside one conversation (the
find bar's count). :class:`MessageIndexer` fills the index in the background with the messages
a migration found (the v10 backlog) and any a crash left out, and merges the index after
deletes so deleted words leave the file. Everything runs on the DB thread; Qt-free.

The query is segmented like the index (``core/text/segmentation.py``), so "咖啡机" finds
"我的咖啡机坏了", "running" finds "runs", and the characters of FTS5's query syntax are only
text. While the query is typed its last word also matches longer words ("mach" → "machine").
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from etos_desktop.core.storage import message_fts
from etos_desktop.core.storage.database import Database, checkpoint
from etos_desktop.core.storage.message_fts import IndexCount
from etos_desktop.core.storage.tables import ConversationRow, MessageRow
from etos_desktop.core.text.segmentation import phrase_spans, query_phrases, token_spans, tokens

__all__ = [
    "IndexCount",
    "MessageHit",
    "MessageIndexer",
    "MessageSearch",
    "MessageSearchResult",
    "SearchQuery",
    "Snippet",
    "make_snippet",
    "match_spans",
    "parse_query",
]

log = logging.getLogger(__name__)

#: How much of a message a snippet shows (characters), and how much of it comes before the
#: first match.
SNIPPET_CHARS = 120
SNIPPET_BEFORE = 30
#: A prefix shorter than this is not searched as one: "c*" would merge the lists of thousands
#: of words (there is no prefix index).
MIN_PREFIX = 3
#: Where the quick match (``segmentation.phrase_spans``) finds nothing, this much of a message
#: is segmented whole to find it (segmenting costs ~1 µs a character).
_TOKEN_SCAN_CHARS = 8000
_WORD_END = re.compile(r"[^\W_]$")
_LAST_WORD = re.compile(r"[^\W_]+$")
_SPACES = re.compile(r"\s+")
_SHOWN_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class SearchQuery:
    """A query as the index is searched with it.

    Attributes:
        phrases: Each a run of index tokens that must stand together in a message; all must.
        prefix_last: The last phrase's last token may begin a longer word (it is being typed).
    """

    phrases: tuple[tuple[str, ...], ...]
    prefix_last: bool = False

    @property
    def expression(self) -> str:
        """The FTS5 query (``""``: nothing to search for)."""
        return message_fts.match_expression(self.phrases, prefix_last=self.prefix_last)


def parse_query(text: str) -> SearchQuery:
    """The phrases of ``text`` (``segmentation.query_phrases``) and whether it ends mid-word.

    A query that ends in a Latin word of at least ``MIN_PREFIX`` characters (no space or
    punctuation after it) searches that word as a prefix too, so results come as it is typed.
    """
    phrases = tuple(query_phrases(text))
    prefix = False
    last = _LAST_WORD.search(text.rstrip("\n")) if _WORD_END.search(text) else None
    if phrases and last is not None:
        word_tokens = tokens(last.group(0))
        final = phrases[-1]
        prefix = (
            len(final) == 1
            and bool(word_tokens)
            and word_tokens[-1] == final[0]
            and final[0].isascii()
            and len(final[0]) >= MIN_PREFIX
        )
    return SearchQuery(phrases, prefix)


def match_spans(text: str, query: SearchQuery) -> list[tuple[int, int]]:
    """Where ``query``'s phrases occur in ``text``, as ``(start, end)`` spans of ``text``.

    Found as the index finds them, so what is marked is what matched: a CJK run as a
    substring, a word in any inflection ("runs" for "running"), the typed prefix
    (``segmentation.phrase_spans``; where that finds nothing, on every token of the text's
    first ``_TOKEN_SCAN_CHARS``, which finds what compatibility forms hide).

    Returns:
        Non-overlapping spans in text order (overlapping matches are merged).
    """
    if not query.phrases:
        return []
    last = len(query.phrases) - 1
    found: list[tuple[int, int]] = []
    for number, phrase in enumerate(query.phrases):
        found.extend(phrase_spans(text, phrase, prefix=query.prefix_last and number == last))
    if not found:
        found = _token_matches(text[:_TOKEN_SCAN_CHARS], query)
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _token_matches(text: str, query: SearchQuery) -> list[tuple[int, int]]:
    spans = token_spans(text)
    words = [token for token, _, _ in spans]
    found: list[tuple[int, int]] = []
    last = len(query.phrases) - 1
    for number, phrase in enumerate(query.phrases):
        size = len(phrase)
        prefix = query.prefix_last and number == last
        for i in range(len(words) - size + 1):
            if words[i : i + size - 1] != list(phrase[:-1]):
                continue
            final = words[i + size - 1]
            if final == phrase[-1] or (prefix and final.startswith(phrase[-1])):
                found.append((spans[i][1], spans[i + size - 1][2]))
    return found


@dataclass(frozen=True)
class Snippet:
    """A piece of a message around its first match, on one line.

    Attributes:
        text: The piece (runs of white space made one space).
        marks: The matches in it, as ``(start, end)`` of ``text``.
        cut_before: The message goes on before the piece.
        cut_after: The message goes on after it.
    """

    text: str
    marks: tuple[tuple[int, int], ...]
    cut_before: bool
    cut_after: bool


def make_snippet(
    text: str, query: SearchQuery, *, width: int = SNIPPET_CHARS, before: int = SNIPPET_BEFORE
) -> Snippet:
    """The piece of ``text`` to show for a search hit, its matches marked.

    Args:
        text: The message.
        query: What was searched.
        width: About how many characters to show.
        before: How many of them come before the first match.
    """
    spans = match_spans(text, query)
    begin = 0
    if spans:
        first = spans[0][0]
        begin = max(0, first - before)
        # Start at a word's beginning when a space is near (Latin text).
        space = text.find(" ", begin, first)
        if begin > 0 and 0 <= space - begin < 12:
            begin = space + 1
    end = min(len(text), begin + width)
    if spans and spans[0][1] > end:
        end = spans[0][1]
    # One line: every run of white space becomes one space; the marks move with the text.
    pieces: list[str] = []
    positions: list[int] = []
    for match in re.finditer(r"\s+|\S+", text[begin:end]):
        part = match.group(0)
        if part.isspace():
            if pieces and not pieces[-1].endswith(" "):
                pieces.append(" ")
                positions.append(begin + match.start())
            continue
        pieces.append(part)
        positions.append(begin + match.start())
    shown = "".join(pieces)
    # The original position of each shown character, to map the marks.
    origin: list[int] = []
    for part, position in zip(pieces, positions, strict=True):
        origin.extend(range(position, position + len(part)))
    marks = []
    for start, stop in spans:
        if stop <= begin or start >= end:
            continue
        inside = [i for i, o in enumerate(origin) if start <= o < stop]
        if inside:
            marks.append((inside[0], inside[-1] + 1))
    lead = len(shown) - len(shown.lstrip())
    shown = shown.strip()
    marks = [(max(0, a - lead), min(len(shown), b - lead)) for a, b in marks]
    return Snippet(
        text=shown,
        marks=tuple((a, b) for a, b in marks if a < b),
        cut_before=begin > 0 and bool(text[:begin].strip()),
        cut_after=end < len(text) and bool(text[end:].strip()),
    )


@dataclass(frozen=True)
class MessageHit:
    """One message that matches a search.

    Attributes:
        message_id: The message.
        conversation_id: Its conversation.
        conversation_title: The conversation's title ("" while it has none).
        role: ``"user"`` or ``"assistant"``.
        created_at: When the message was written (aware UTC).
        snippet: The matching piece of it.
        archived: The conversation is archived.
        temporary: The conversation is temporary.
    """

    message_id: int
    conversation_id: int
    conversation_title: str
    role: str
    created_at: datetime
    snippet: Snippet
    archived: bool = False
    temporary: bool = False


@dataclass(frozen=True)
class MessageSearchResult:
    """What a search found.

    Attributes:
        query: The query as typed.
        hits: The matching messages, best first.
        more: More hits follow (ask again with a larger ``offset``).
        indexing: While the messages from before the index are still being indexed, how far
            that got (the hits are from the indexed ones); ``None`` once all are.
    """

    query: str
    hits: tuple[MessageHit, ...]
    more: bool = False
    indexing: IndexCount | None = None


class MessageSearch:
    """Searches the messages of every conversation, and the text of one.

    Args:
        db: The open database (every query runs on its thread).
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    async def search_messages(
        self, query: str, limit: int = 30, offset: int = 0
    ) -> MessageSearchResult:
        """The shown messages that contain every word of ``query``, best first.

        Args:
            query: As typed; any character is taken as text (FTS5 syntax too).
            limit: At most this many hits.
            offset: Skip this many of the best (the next page).
        """
        return await self._db.run(lambda session: search_on_thread(session, query, limit, offset))

    async def find_in_conversation(
        self, conversation_id: int, needle: str
    ) -> list[tuple[int, int]]:
        """Where ``needle`` occurs in a conversation's shown messages (ignoring case).

        A plain substring, as a find bar finds it — not the index's words — over every message,
        loaded in the view or not.

        Returns:
            ``(message id, occurrences)`` for each message that holds it, oldest first.
        """
        folded = needle.casefold()
        if not folded.strip():
            return []

        def work(session: Session) -> list[tuple[int, int]]:
            query = (
                select(MessageRow.id, MessageRow.content)
                .where(MessageRow.conversation_id == conversation_id)
                .where(col(MessageRow.hidden_at).is_(None))
                .where(col(MessageRow.is_current).is_(True))
                .where(col(MessageRow.role).in_(_SHOWN_ROLES))
                .order_by(col(MessageRow.id))
            )
            found = []
            for message_id, content in session.exec(query):
                count = content.casefold().count(folded)
                if count and message_id is not None:
                    found.append((int(message_id), count))
            return found

        return await self._db.run(work)


def search_on_thread(session: Session, query: str, limit: int, offset: int) -> MessageSearchResult:
    """:meth:`MessageSearch.search_messages` on the DB thread (benchmarks call it directly)."""
    parsed = parse_query(query)
    indexing = message_fts.count(session) if message_fts.backlog_marked(session) else None
    expression = parsed.expression
    if not expression or limit <= 0:
        return MessageSearchResult(query, (), False, indexing)
    ids = message_fts.ranked_ids(session, expression, limit=limit + 1, offset=offset)
    more = len(ids) > limit
    ids = ids[:limit]
    # Columns, not rows: building 30 full ORM rows took longer than the ranking (~12 ms).
    rows = session.execute(
        sa_select(
            col(MessageRow.id),
            col(MessageRow.conversation_id),
            col(MessageRow.role),
            col(MessageRow.created_at),
            func.substr(col(MessageRow.content), 1, message_fts.MAX_INDEXED_CHARS),
            col(ConversationRow.title),
            col(ConversationRow.archived),
            col(ConversationRow.temporary),
        )
        .join(ConversationRow, col(ConversationRow.id) == col(MessageRow.conversation_id))
        .where(col(MessageRow.id).in_(ids))
    ).all()
    by_id = {row[0]: row for row in rows}
    hits = []
    for message_id in ids:
        if message_id not in by_id:
            continue
        _, conversation_id, role, created_at, content, title, archived, temporary = by_id[
            message_id
        ]
        hits.append(
            MessageHit(
                message_id=message_id,
                conversation_id=conversation_id,
                conversation_title=title,
                role=role,
                created_at=created_at,
                snippet=make_snippet(str(content), parsed),
                archived=bool(archived),
                temporary=bool(temporary),
            )
        )
    return MessageSearchResult(query, tuple(hits), more, indexing)


ProgressListener = Callable[[IndexCount | None], object]


class MessageIndexer:
    """Indexes the messages the index lacks, in batches on the DB thread, and purges deletes.

    :meth:`run` (a task the app starts once the window is shown) indexes every message not in
    the index, newest first, a batch of about ``batch_chars`` characters per transaction, with
    a pause between batches so the UI's own queries and the UI thread get their turn; then it
    waits, and after each delete (``note_deleted``) merges the index once deletes stop coming.

    Args:
        db: The open database.
        batch_chars: About how much text one batch segments (16,000: ~20 ms on the thread, 80
            on a loaded one; the app's own queries wait at most that long behind a batch).
        pause: Seconds between batches.
        purge_delay: Seconds after a delete before the index is merged (a burst merges once).
    """

    def __init__(
        self,
        db: Database,
        *,
        batch_chars: int = 16_000,
        pause: float = 0.02,
        purge_delay: float = 2.0,
    ) -> None:
        self._db = db
        self._batch_chars = batch_chars
        self._pause = pause
        self._purge_delay = purge_delay
        self._wake: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._listeners: list[ProgressListener] = []
        #: How far the backlog is indexed while it is (``None``: not indexing one).
        self.progress: IndexCount | None = None

    def subscribe(self, listener: ProgressListener) -> Callable[[], None]:
        """Call ``listener`` on the event loop with each new :attr:`progress` (``None``: done)."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _publish(self, progress: IndexCount | None) -> None:
        self.progress = progress
        for listener in list(self._listeners):
            try:
                listener(progress)
            except Exception:
                log.exception("a message index listener failed")

    def note_deleted(self) -> None:
        """Messages were taken out of the index: merge it soon (called on the event loop)."""
        if self._wake is not None and self._idle is not None:
            self._idle.clear()
            self._wake.set()

    async def idle(self) -> None:
        """Wait until :meth:`run` has indexed what was missing and merged after the deletes."""
        if self._idle is None:
            raise RuntimeError("the indexer is not running")
        await self._idle.wait()

    async def run(self) -> None:
        """Index what is missing, then purge after deletes, until cancelled."""
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        await self.index_pending()
        while True:
            if await self._db.run(message_fts.purge_pending):
                await asyncio.sleep(self._purge_delay)
                self._wake.clear()
                await self.purge()
            if not self._wake.is_set():
                self._idle.set()
            await self._wake.wait()
            self._wake.clear()

    async def index_pending(self) -> int:
        """Index every message that is not in the index (newest first); return how many."""
        backlog = await self._db.run(message_fts.backlog_marked)
        progress = await self._db.run(message_fts.count) if backlog else None
        if progress is not None:
            self._publish(progress)
        below: int | None = None
        done = 0
        while True:
            batch = await self._db.run(functools.partial(self._batch, below))
            if batch is None:
                break
            done += batch[0]
            below = batch[1]
            if progress is not None:
                # Counted once: messages saved meanwhile are indexed as they are saved.
                progress = IndexCount(
                    min(progress.total, progress.indexed + batch[0]), progress.total
                )
                self._publish(progress)
            await asyncio.sleep(self._pause)
        if backlog:
            await self._db.run(_clear_backlog)
            self._publish(None)
        return done

    def _batch(self, below: int | None, session: Session) -> tuple[int, int] | None:
        """Index one batch; return (how many, the lowest id), or ``None`` when none was left."""
        rows = message_fts.unindexed(session, below=below, chars=self._batch_chars)
        if not rows:
            return None
        message_fts.add(session, rows)
        session.commit()
        return len(rows), rows[-1][0]

    async def purge(self) -> int:
        """Merge the index, a step per DB job, so deleted messages' words leave the file.

        Returns:
            How many steps it took.
        """

        def step(session: Session) -> bool:
            done = message_fts.purge_step(session)
            session.commit()
            if done:
                checkpoint(session)
            return done

        steps = 1
        while not await self._db.run(step):
            steps += 1
            await asyncio.sleep(self._pause)
        return steps


def _clear_backlog(session: Session) -> None:
    message_fts.clear_backlog(session)
    session.commit()
