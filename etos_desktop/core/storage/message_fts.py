"""The SQLite-only part of message search: the FTS5 statements over ``message_fts`` (DDL: v10).

``message_fts`` is a contentless FTS5 table (``rowid`` = message id) over each message's
pre-segmented text (``segmentation.index_text`` of its first ``MAX_INDEXED_CHARS``). A message is
in it once it is no longer streaming; the chat repository keeps it in step in the same
transaction as each write (insert, edit, delete, conversation delete), and the background
indexer (``core/chat/search.py``) adds the messages a migration found (the backlog) and any a
crash left out. Every function here runs on the DB thread inside the caller's transaction. A
server database would replace this module, not its callers.

Contentless means a delete must pass the tokens that were indexed: they are computed again from
the message's text, which only the repository changes, and only rows that are in the index
(``message_fts_docsize`` has a row per indexed message) are deleted, so a row written around the
repository (a benchmark's bulk seed) is never "deleted" from an index that lacks it.

FTS5 records a delete as a marker in a newer segment; the old segment keeps the tokens until
segments merge. A real delete (DESIGN §3: delete means gone) needs them gone from the file:
each delete marks ``purge_pending`` in the same transaction, and the indexer merges the index
right after, a step at a time (:func:`purge_step`), or at the next start if the app was killed
first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlmodel import Session

from etos_desktop.core.text.segmentation import index_text

#: Only a message's first this many characters are searchable: segmenting costs ~1 µs a
#: character on the DB thread, in the transaction that saves the message (a 10 MB paste would
#: hold it for 10 s); 100,000 characters are ~0.1 s.
MAX_INDEXED_CHARS = 100_000

_BACKLOG = "backlog"
_PURGE = "purge_pending"


def body_for(content: str) -> str:
    """The token string indexed for a message's text (what a delete must pass again)."""
    return index_text(content[:MAX_INDEXED_CHARS])


def indexed_ids(session: Session, message_ids: Iterable[int]) -> set[int]:
    """Which of ``message_ids`` are in the index."""
    ids = list(message_ids)
    if not ids:
        return set()
    found = session.execute(
        text("SELECT id FROM message_fts_docsize WHERE id IN (SELECT value FROM json_each(:ids))"),
        {"ids": json.dumps(ids)},
    )
    return {int(row[0]) for row in found}


def add(session: Session, rows: Sequence[tuple[int, str]]) -> None:
    """Index messages: ``(message id, text)`` pairs that are not in the index yet."""
    if rows:
        session.execute(
            text("INSERT INTO message_fts (rowid, body) VALUES (:id, :body)"),
            [{"id": message_id, "body": body_for(content)} for message_id, content in rows],
        )


def remove(session: Session, rows: Sequence[tuple[int, str]]) -> int:
    """Take messages out of the index: ``(message id, the text that was indexed)`` pairs.

    Rows not in the index are skipped. Marks the index for :func:`purge`.

    Returns:
        How many were in the index.
    """
    present = indexed_ids(session, (message_id for message_id, _ in rows))
    doomed = [(message_id, content) for message_id, content in rows if message_id in present]
    if doomed:
        session.execute(
            text(
                "INSERT INTO message_fts (message_fts, rowid, body) VALUES ('delete', :id, :body)"
            ),
            [{"id": message_id, "body": body_for(content)} for message_id, content in doomed],
        )
        _set_flag(session, _PURGE, True)
    return len(doomed)


def replace(session: Session, message_id: int, old: str, new: str) -> None:
    """A message's text changed from ``old`` to ``new``: index the new one instead.

    No purge is asked for: an edit keeps the message (the old tokens go at the next merge).
    """
    if message_id in indexed_ids(session, [message_id]):
        session.execute(
            text(
                "INSERT INTO message_fts (message_fts, rowid, body) VALUES ('delete', :id, :body)"
            ),
            {"id": message_id, "body": body_for(old)},
        )
    add(session, [(message_id, new)])


def conversation_rows(session: Session, conversation_id: int) -> list[tuple[int, str]]:
    """The indexed messages of a conversation with their texts (before deleting it)."""
    found = session.execute(
        text(
            "SELECT message.id, message.content FROM message "
            "CROSS JOIN message_fts_docsize ON message_fts_docsize.id = message.id "
            "WHERE message.conversation_id = :cid"
        ),
        {"cid": conversation_id},
    )
    return [(int(row[0]), str(row[1])) for row in found]


# -- bookkeeping ------------------------------------------------------------------------------


def _flag(session: Session, key: str) -> bool:
    row = session.execute(
        text("SELECT value FROM message_index_state WHERE key = :key"), {"key": key}
    ).first()
    return row is not None and bool(row[0])


def _set_flag(session: Session, key: str, value: bool) -> None:
    if value:
        session.execute(
            text("INSERT OR REPLACE INTO message_index_state (key, value) VALUES (:key, 1)"),
            {"key": key},
        )
    else:
        session.execute(text("DELETE FROM message_index_state WHERE key = :key"), {"key": key})


def backlog_marked(session: Session) -> bool:
    """Whether messages that existed before the index (migration v10) may still be unindexed."""
    return _flag(session, _BACKLOG)


def clear_backlog(session: Session) -> None:
    """Every message is indexed: search is complete."""
    _set_flag(session, _BACKLOG, False)


def purge_pending(session: Session) -> bool:
    """Whether deleted messages' tokens may still be in the index's older segments."""
    return _flag(session, _PURGE)


#: Pages one merge step writes: ~0.1 s of the DB thread (0.3 s on a loaded machine).
MERGE_PAGES = 256


def purge_step(session: Session, pages: int = MERGE_PAGES) -> bool:
    """One step of merging the index, so deleted messages' tokens leave the file.

    A negative ``merge`` puts every segment on one level and merges them, ``pages`` at a time,
    so the DB thread is held for one step, not for the whole index (``optimize`` took 1.1-2.7 s
    at 50,000 messages). When a step finds nothing left to merge, every deleted token is gone:
    the mark is cleared in the same step, so a delete committed meanwhile keeps it set.
    ``secure_delete`` (set on every connection) zeroes the freed pages; the caller commits, and
    checkpoints the WAL once done.

    Returns:
        Whether the merge is complete.
    """
    changes = text("SELECT total_changes()")
    before = int(session.execute(changes).scalar_one())
    session.execute(
        text("INSERT INTO message_fts (message_fts, rank) VALUES ('merge', :pages)"),
        {"pages": -pages},
    )
    # FTS5's own test for it: a merge that wrote nothing changed fewer than two rows.
    if int(session.execute(changes).scalar_one()) - before >= 2:
        return False  # it merged: maybe more to do
    _set_flag(session, _PURGE, False)
    return True


@dataclass(frozen=True)
class IndexCount:
    """How much of the messages is searchable.

    Attributes:
        indexed: Messages in the index.
        total: Messages that belong in it (all but replies still streaming).
    """

    indexed: int
    total: int


def count(session: Session) -> IndexCount:
    """Indexed messages against all that belong in the index."""
    indexed = session.execute(text("SELECT count(*) FROM message_fts_docsize")).scalar_one()
    total = session.execute(
        text("SELECT count(*) FROM message WHERE status != 'streaming'")
    ).scalar_one()
    return IndexCount(int(indexed), int(total))


def unindexed(session: Session, *, below: int | None, chars: int) -> list[tuple[int, str]]:
    """The newest messages not in the index, below message id ``below``, about ``chars`` long.

    Newest first, so recent conversations become searchable first. At least one message is
    returned when any is left; more while their texts (capped at ``MAX_INDEXED_CHARS``) add up
    to less than ``chars``.
    """
    query = text(
        "SELECT message.id, substr(message.content, 1, :cap) FROM message "
        "WHERE message.id < :below AND message.status != 'streaming' "
        "AND NOT EXISTS (SELECT 1 FROM message_fts_docsize WHERE message_fts_docsize.id = "
        "message.id) ORDER BY message.id DESC LIMIT :limit"
    )
    params = {"below": below if below is not None else 2**62, "cap": MAX_INDEXED_CHARS}
    rows: list[tuple[int, str]] = []
    taken = 0
    limit = 64
    while taken < chars:
        found = session.execute(query, {**params, "limit": limit}).all()
        for message_id, content in found:
            rows.append((int(message_id), str(content)))
            taken += len(content)
            if taken >= chars:
                break
        if len(found) < limit:
            break
        params["below"] = rows[-1][0]
        limit = min(4 * limit, 1024)
    return rows


# -- search -----------------------------------------------------------------------------------


def match_expression(phrases: Sequence[Sequence[str]], *, prefix_last: bool = False) -> str:
    """An FTS5 query that ANDs ``phrases``, each quoted so no character has syntax meaning.

    Inside an FTS5 string a double quote is escaped by doubling it; ``*``, ``:``, ``^``, ``-``,
    parentheses, ``NEAR``, ``AND``/``OR``/``NOT`` are literal there.

    Args:
        phrases: Each a sequence of index tokens that must stand next to each other.
        prefix_last: The last phrase's last token may be the start of a longer one (the word
            being typed).

    Returns:
        The expression, or ``""`` when there are no phrases (callers then skip the query).
    """
    parts = []
    for phrase in phrases:
        tokens = [token.replace('"', '""') for token in phrase if token]
        if tokens:
            parts.append('"' + " ".join(tokens) + '"')
    if parts and prefix_last:
        parts[-1] += "*"
    return " AND ".join(parts)


#: The best ``:n`` matches by BM25 from the index alone (newer first on ties): the messages'
#: rows are read for these only, not for every message that contains the words.
_RANKED = text(
    "SELECT rowid FROM message_fts WHERE message_fts MATCH :q "
    "ORDER BY bm25(message_fts), rowid DESC LIMIT :n"
)

_VISIBLE = (
    "message.hidden_at IS NULL AND message.is_current = 1 AND message.role IN ('user', 'assistant')"
)

#: Every match that is shown in a conversation, ranked: when many of the best are not (an
#: edit hid them, a regenerated reply replaced them).
_RANKED_VISIBLE = text(
    "SELECT message_fts.rowid FROM message_fts "
    "CROSS JOIN message ON message.id = message_fts.rowid "
    f"WHERE message_fts MATCH :q AND {_VISIBLE} "
    "ORDER BY bm25(message_fts), message_fts.rowid DESC LIMIT :n"
)

_VISIBLE_OF = text(
    "SELECT message.id FROM message WHERE message.id IN (SELECT value FROM json_each(:ids)) "
    f"AND {_VISIBLE}"
)


def ranked_ids(session: Session, expression: str, *, limit: int, offset: int) -> list[int]:
    """The ids of the shown messages matching ``expression``, best first, from ``offset``.

    Args:
        session: A session on the DB thread.
        expression: From :func:`match_expression` (not empty).
        limit: At most this many.
        offset: Skip this many of the best.
    """
    wanted = offset + limit
    fetch = 2 * wanted + 16
    ranked = [int(row[0]) for row in session.execute(_RANKED, {"q": expression, "n": fetch})]
    shown = {int(row[0]) for row in session.execute(_VISIBLE_OF, {"ids": json.dumps(ranked)})}
    ids = [message_id for message_id in ranked if message_id in shown]
    if len(ids) < wanted and len(ranked) >= fetch:
        found = session.execute(_RANKED_VISIBLE, {"q": expression, "n": wanted})
        ids = [int(row[0]) for row in found]
    return ids[offset:wanted]
