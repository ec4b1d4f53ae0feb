"""The long-term memory engine: store, embeddings, hybrid search — sync and Qt-free.

Usable from a plain script (benchmarks) and from the app's worker threads::

    engine = MemoryEngine.open(path, embedder=UseEmbedder())
    memory_id = engine.save("I use pnpm for JavaScript projects", kind="preference").id
    hits = engine.search("which package manager do I use for JavaScript?", k=5)
    engine.close()

Threads: every DB access goes through ``Database.call`` (the one DB thread); embedding and vector
math run in the calling thread. All methods may be called from any thread except the DB thread
(they wait for it) and never from the UI thread (they block). The vector index is derived data,
patched or rebuilt from rows when stale; every write goes through this engine so it knows what
went stale.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import functools
import json
import logging
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final, NamedTuple

import numpy
from sqlalchemy import or_
from sqlalchemy import text as sql_text
from sqlmodel import Session, col, select

from etos_desktop.core.clock import Clock, SystemClock
from etos_desktop.core.errors import InvalidInput, ProviderError
from etos_desktop.core.memory import fts, store, transfer
from etos_desktop.core.memory.errors import MemoryLimitReached, MemoryNotFound
from etos_desktop.core.memory.records import (
    DeletedMemory,
    Memory,
    MemoryDraft,
    MemoryKind,
    MemorySource,
    Revision,
    SaveResult,
)
from etos_desktop.core.memory.search import (
    Candidate,
    CandidateRow,
    Hit,
    KeywordScorer,
    SearchMode,
    rank,
)
from etos_desktop.core.memory.slots import change_cue, same_slot
from etos_desktop.core.providers.embedding import Embedder
from etos_desktop.core.retrieval.gating import (
    addresses_user,
    asks_only_what_was_said,
    refers_back,
)
from etos_desktop.core.retrieval.tuning import Tuning, tuning_for
from etos_desktop.core.retrieval.vectors import (
    FloatArray,
    VectorIndex,
    chunk_texts,
    exact_similarities,
)
from etos_desktop.core.storage import lookups, traces
from etos_desktop.core.storage.database import Database, checkpoint
from etos_desktop.core.storage.tables import MemoryRevisionRow, MemoryRow, RevisionAction
from etos_desktop.core.text.checks import check_content
from etos_desktop.core.text.segmentation import (
    STOP_TERMS,
    duplicate_key,
    name_terms,
    names_or_numbers,
    query_terms,
    query_units,
)
from etos_desktop.core.time_words import TimeWindow, resolve_time_window, without_time_words

log = logging.getLogger(__name__)

#: Full-text matches considered per query (best BM25 first).
KEYWORD_CANDIDATES: Final = 200
#: Vector matches considered per query, at least (4 × k when that is more).
VECTOR_CANDIDATES: Final = 100
#: How many recent query vectors the engine keeps (a few hundred KB at 512 dimensions).
QUERY_VECTOR_CACHE: Final = 128
#: The int8 scan hands this share more vector candidates than the pool keeps (at least
#: ``_SCAN_MARGIN_MIN``): the pool is then chosen by the exact cosines of the stored float32
#: vectors, as it was from the float32 matrix.
_SCAN_MARGIN: Final = 0.5
_SCAN_MARGIN_MIN: Final = 20
#: How far below the floor the scan still looks: more than the int8 error (~0.0012 at most).
_SCAN_SLACK: Final = 0.01
#: The stored vectors of a search's candidates (exact cosines; the index is int8). Run on the
#: driver's connection with the ids as one JSON array: 1.4 ms for 300 memories at 10k, against
#: 3.5 ms through SQLAlchemy with an expanding IN.
_VECTORS_SQL: Final = (
    "SELECT memory_id, vector FROM memory_vector "
    "WHERE embedder_key = ? AND dim = ? AND memory_id IN (SELECT value FROM json_each(?)) "
    "ORDER BY memory_id, chunk_no"
)
#: Memories from a named period ("last week") added to the candidates, newest first. Any other
#: candidate from the period is marked as in it too (by its dates). 1,000 made a two-month
#: window over a 10k store cost 0.6 s of reading and scoring (tests/bench/retrieval_speed.py).
WINDOW_CANDIDATES: Final = 200
#: Nearest active memories a new statement with a change cue is checked against (same slot).
SLOT_CANDIDATES: Final = 8
#: Above this share of the index going stale at once, the index is rebuilt instead of patched.
_PATCH_LIMIT: Final = 0.2

_ACTOR_BY_SOURCE: Final = {
    MemorySource.USER_STATEMENT: "user",
    MemorySource.ASSISTANT_ACTION: "assistant",
    MemorySource.MANUAL: "user",
    MemorySource.IMPORTED: "import",
    MemorySource.CONSOLIDATION: "consolidation",
}


class _Unset:
    """Marks an argument that was not given (``None`` is a meaningful value)."""


_UNSET: Final = _Unset()


def _validate(kind: str, source: str, importance: float, confidence: float) -> None:
    if kind not in MemoryKind.__members__.values():
        raise InvalidInput(f"unknown memory kind {kind!r}", field="kind")
    if source not in MemorySource.__members__.values():
        raise InvalidInput(f"unknown memory source {source!r}", field="source")
    for name, value in (("importance", importance), ("confidence", confidence)):
        if not 0.0 <= value <= 1.0:
            raise InvalidInput(f"{name} must be within 0..1, got {value}", field=name)


def _draft(item: str | MemoryDraft | Mapping[str, Any]) -> MemoryDraft:
    if isinstance(item, MemoryDraft):
        return item
    if isinstance(item, str):
        return MemoryDraft(text=item)
    fields = dict(item)
    if "tags" in fields:
        fields["tags"] = tuple(fields["tags"])
    return MemoryDraft(**fields)


#: A query term in more than this share of the memories does not pre-select candidates (it
#: still counts in the keyword score): BM25 ranks every row that matches a term, and a CJK
#: character or a common word matches most of a 10k store (p95 18 ms of FTS per search).
COMMON_TERM_SHARE: Final = 0.05
#: A store this small is searched with every term.
_COMMON_TERM_MIN_ROWS: Final = 200
#: When the rare terms pre-select fewer keyword candidates than this (or than k), the common
#: ones are added back one by one: on a dialogue store the names are in every turn, and dropping
#: them left a fifth of the keyword lists under 10 results (issue 18).
KEYWORD_MIN_CANDIDATES: Final = 20
#: A term in at most this many memories is rare for the relevance gate in any store.
GATE_MIN_DOC_FREQ: Final = 2


def gate_terms(
    terms: Sequence[str],
    names: Sequence[str],
    frequencies: Mapping[str, int],
    total: int,
    share: float,
) -> frozenset[str]:
    """The query terms the relevance gate counts (``search.rank``): rare content terms and names.

    Args:
        terms: The query's terms (stop terms already dropped).
        names: The index terms of the query's names (``segmentation.name_terms``).
        frequencies: How many memories contain each term.
        total: How many memories there are.
        share: ``Tuning.gate_rare_share``.

    Returns:
        Latin words and CJK bigrams found in at most ``max(GATE_MIN_DOC_FREQ, share × total)``
        memories, and every name. Numbers, single CJK characters and bigrams with a function
        character ("是什", "水的": they straddle words) never count.
    """
    limit = max(GATE_MIN_DOC_FREQ, share * total)
    rare = {
        t
        for t in terms
        if 0 < frequencies.get(t, 0) <= limit
        and not t.isdigit()
        and (t.isascii() or (len(t) > 1 and not any(ch in STOP_TERMS for ch in t)))
    }
    return frozenset(rare | set(names))


def selective_terms(terms: Sequence[str], frequencies: Mapping[str, int], total: int) -> list[str]:
    """The terms that pre-select keyword candidates: all but the very common ones.

    Args:
        terms: The query's terms.
        frequencies: How many memories contain each term.
        total: How many memories there are.

    Returns:
        The terms found in at most ``COMMON_TERM_SHARE`` of the memories, or, when every term
        is that common, the three rarest.
    """
    if total < _COMMON_TERM_MIN_ROWS:
        return list(terms)
    limit = total * COMMON_TERM_SHARE
    rare = [t for t in terms if frequencies.get(t, 0) <= limit]
    if rare:
        return rare
    return sorted(terms, key=lambda t: frequencies.get(t, 0))[:3]


class _Gathered(NamedTuple):
    """What a search reads on the DB thread (``MemoryEngine.search``)."""

    #: Bodies of the keyword matches and of the other candidates that contain a query term.
    matched: list[tuple[int, str]]
    #: The keyword matches (full-text MATCH).
    seen: set[int]
    scorer: KeywordScorer
    #: Every candidate's row (the scan's margin included), in id order.
    found: list[CandidateRow]
    in_window: set[int]
    gate: frozenset[str]
    #: The stored float32 vectors of the candidates that have them, by memory, in chunk order.
    blobs: dict[int, list[bytes]]
    #: The gate terms in at most ``GATE_MIN_DOC_FREQ`` memories (``search.rank``'s ``gate_unique``).
    unique: frozenset[str] = frozenset()


def _by_id(candidate: CandidateRow) -> int:
    return candidate.id


def _in_window(candidate: CandidateRow, window: TimeWindow) -> bool:
    """Whether ``candidate`` was created, or became valid, within ``window``."""
    return any(
        window.start <= moment < window.end
        for moment in (candidate.created_at, candidate.valid_from)
    )


class MemoryEngine:
    """Long-term memories: write checks, revisions, embeddings and search.

    Args:
        db: The open database (migrated to at least schema v2).
        embedder: The active embedder; ``None`` means keyword search only.
        clock: Source of the current time.
        max_content_chars: The longest memory accepted (setting ``memory.max_content_chars``).
        max_active: The most active memories (setting ``memory.max_active``).
        tuning: Floors and weights; ``None`` takes the defaults for the embedder.
    """

    def __init__(
        self,
        db: Database,
        *,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        max_content_chars: int = 1000,
        max_active: int = 10_000,
        tuning: Tuning | None = None,
    ) -> None:
        self._db = db
        self._clock: Clock = clock or SystemClock()
        self._embedder = embedder
        self._tuning = tuning or tuning_for(embedder.key if embedder else None)
        self.max_content_chars = max_content_chars
        self.max_active = max_active
        self._owns_db = False
        self._index: VectorIndex | None = None
        self._index_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._dirty: set[int] = set()
        self._rebuild = False
        # The newest query vectors, by (embedder, text): a retried or regenerated turn and a
        # question searched in several modes embed once (the built-in model takes 10-60 ms).
        self._query_vectors: collections.OrderedDict[tuple[int, str], FloatArray] = (
            collections.OrderedDict()
        )

    # -- life cycle ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        **options: Any,
    ) -> MemoryEngine:
        """Open (creating or migrating) a database file and return an engine that owns it.

        Args:
            path: The SQLite file; pre-migration backups go to ``backups/`` beside it.
            embedder: The active embedder (``None``: keyword search only).
            clock: Source of the current time (a ``FakeClock`` in tests and benchmarks).
            **options: ``max_content_chars``, ``max_active``, ``tuning`` (see the class).

        Returns:
            The engine; call :meth:`close` when done.

        Raises:
            StorageError: The file cannot be opened or migrated.
        """
        path = Path(path)
        db = Database(path, path.parent / "backups", clock=clock)
        db.open()
        engine = cls(db, embedder=embedder, clock=clock, **options)
        engine._owns_db = True
        return engine

    def close(self) -> None:
        """Drop the vector cache and, if :meth:`open` made the database, close it."""
        with self._index_lock:
            self._index = None
        if self._owns_db:
            self._db.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- configuration ------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        """The active embedder (``None``: keyword only)."""
        return self._embedder

    @property
    def tuning(self) -> Tuning:
        """The floors and weights search uses by default."""
        return self._tuning

    def set_embedder(self, embedder: Embedder | None, tuning: Tuning | None = None) -> None:
        """Switch the active embedder (and its tuning).

        Search immediately uses only the new embedder's vectors; memories that have none yet are
        found by keyword until :meth:`reembed` has given them one. A running :meth:`reembed` for
        the previous embedder stops after its current batch.

        Args:
            embedder: The new embedder, or ``None`` for keyword only.
            tuning: Its floors and weights; ``None`` takes the defaults for its key.
        """
        with self._state_lock:
            self._embedder = embedder
            self._tuning = tuning or tuning_for(embedder.key if embedder else None)
            self._rebuild = True
            self._query_vectors.clear()

    def clear_query_cache(self) -> None:
        """Forget the cached query vectors: the next search of any text embeds it again.

        Benchmarks call it to time a search as a new message's first one (the per-turn case).
        """
        with self._state_lock:
            self._query_vectors.clear()

    def changed_elsewhere(self, memory_ids: Iterable[int]) -> None:
        """Memories were written past the engine (a sync pass): read them again at next search.

        Their cached vectors are patched from the database at the next vector search; memories
        that arrived without vectors are found by keyword until :meth:`reembed` gives them one.
        Safe from any thread.
        """
        self._mark_dirty(*memory_ids)

    # -- internals ------------------------------------------------------------------------------

    def _query_vector(self, embedder: Embedder, query: str) -> FloatArray:
        """``query`` embedded as a query, from the cache of the newest ones when it is there."""
        key = (id(embedder), query)
        with self._state_lock:
            cached = self._query_vectors.get(key)
            if cached is not None:
                self._query_vectors.move_to_end(key)
                return cached
        # An embedder trained with query/passage prefixes (E5) embeds queries apart.
        encode = getattr(embedder, "embed_query", embedder.embed)
        vector: FloatArray = numpy.asarray(encode([query]), dtype=numpy.float32)[0]
        vector.setflags(write=False)
        with self._state_lock:
            if self._embedder is embedder:
                self._query_vectors[key] = vector
                while len(self._query_vectors) > QUERY_VECTOR_CACHE:
                    self._query_vectors.popitem(last=False)
        return vector

    def _call(self, fn: Callable[[Any], Any]) -> Any:
        if self._db.on_db_thread():
            raise RuntimeError("MemoryEngine methods must not be called on the DB thread")
        return self._db.call(fn)

    def _mark_dirty(self, *memory_ids: int | None) -> None:
        with self._state_lock:
            self._dirty.update(i for i in memory_ids if i is not None)

    def _vector_index(self, embedder: Embedder) -> VectorIndex:
        """The index of ``embedder``'s vectors, patched or rebuilt if stale."""
        with self._index_lock:
            with self._state_lock:
                dirty, self._dirty = self._dirty, set()
                rebuild, self._rebuild = self._rebuild, False
            index = self._index
            key, dim = embedder.key, embedder.dimension
            try:
                if (
                    index is None
                    or rebuild
                    or index.key != key
                    or index.dim != dim
                    or len(dirty) > max(64, _PATCH_LIMIT * len(index))
                ):
                    rows = self._call(lambda s: store.vector_rows(s, key, dim))
                    index = VectorIndex.from_rows(key, dim, rows)
                elif dirty:
                    rows = self._call(lambda s: store.vector_rows(s, key, dim, dirty))
                    index = index.patched(dirty, rows)
            except BaseException:
                with self._state_lock:
                    self._rebuild = True
                raise
            self._index = index
            return index

    def _embed(self, embedder: Embedder | None, texts: Sequence[str]) -> FloatArray | None:
        if embedder is None or not texts:
            return None
        try:
            vectors = numpy.asarray(embedder.embed(list(texts)), dtype=numpy.float32)
        except ProviderError as exc:
            # Saving must not depend on the embedding service; reembed() fills the gap later.
            log.warning("embedding failed, memory kept for keyword search only: %s", exc)
            return None
        if vectors.shape != (len(texts), embedder.dimension):
            raise ValueError(
                f"embedder {embedder.key} returned shape {vectors.shape}, "
                f"expected {(len(texts), embedder.dimension)}"
            )
        return vectors

    def _now(self) -> datetime:
        return self._clock.now()

    def _chunks(self, content: str, tuning: Tuning | None = None) -> list[str]:
        """The texts embedded for a memory: passages only when the tuning scores them."""
        return chunk_texts(content, passages=(tuning or self._tuning).passage_weight > 0)

    # -- writing --------------------------------------------------------------------------------

    def save(
        self,
        text: str,
        kind: str = MemoryKind.FACT,
        created_at: datetime | None = None,
        *,
        source: str = MemorySource.MANUAL,
        importance: float = 0.5,
        confidence: float = 1.0,
        tags: Sequence[str] = (),
        trigger_context: str | None = None,
        supersedes: int | None = None,
        valid_until: datetime | None = None,
        bulk: bool = False,
        actor: str | None = None,
        origin_conversation_id: int | None = None,
        origin_message_id: int | None = None,
    ) -> SaveResult:
        """Save a memory after the write checks; merge it into a near-duplicate if there is one.

        A text that states a change (``slots.change_cue``: "no longer", "switched to", "不再",
        "改用", "现在…了"…) is never merged; when an active memory of the same kind is about the
        same slot (``slots.same_slot``), it is superseded in the same transaction, as with
        ``supersedes`` (the result's ``superseded`` names it). Without a cue nothing is
        superseded automatically.

        Args:
            text: One or a few self-contained sentences.
            kind: A ``MemoryKind`` value.
            created_at: When it was said (default: now); benchmarks load dated histories.
            source: A ``MemorySource`` value.
            importance: 0–1.
            confidence: 0–1; inferred observations get a low value.
            tags: Free labels (indexed for keyword search).
            trigger_context: When it should be recalled (indexed for keyword search).
            supersedes: The id of a memory this one replaces: it gets ``valid_until`` = now, is
                archived and linked to the new one.
            valid_until: When the statement stops holding, if known.
            bulk: Skip duplicate-merging and the length and count limits (benchmark loads).
            actor: Who is saving, for the history (default: derived from ``source``).
            origin_conversation_id: The conversation it came from.
            origin_message_id: The message it came from.

        Returns:
            The id that holds the text now, whether it was merged into an existing memory, and
            the memory it superseded (given, or found by the same-slot rule).

        Raises:
            MemoryEmpty, MemoryTooLong, MemorySecret: A write check refused the text.
            MemoryLimitReached: ``max_active`` active memories exist already.
            MemoryNotFound: ``supersedes`` names no memory.
            InvalidInput: ``kind``, ``source``, ``importance`` or ``confidence`` is invalid.
            StorageError: The database failed.
        """
        content = check_content(text, max_chars=None if bulk else self.max_content_chars)
        _validate(kind, source, importance, confidence)
        who = actor or _ACTOR_BY_SOURCE.get(MemorySource(source), "user")
        now = self._now()
        when = created_at or now
        embedder, tuning = self._embedder, self._tuning
        vectors = self._embed(embedder, self._chunks(content, tuning))
        near_id: int | None = None
        # A stated change ("no longer", "改用"…) is never merged into what it contradicts,
        # however similar the wording: it may supersede it instead (slots.same_slot).
        cue = None if bulk or supersedes is not None else change_cue(content)
        slot_candidates: list[tuple[int, float]] = []
        if not bulk and supersedes is None and vectors is not None and embedder is not None:
            index = self._vector_index(embedder)
            if cue is None:
                near = index.nearest_whole_text(vectors[0], now)
                if near is not None and near[1] >= tuning.duplicate_similarity:
                    near_id = near[0]
            else:
                slot_candidates = index.nearest_whole_texts(
                    vectors[0], now, SLOT_CANDIDATES, at_least=tuning.same_slot_similarity
                )
        key = duplicate_key(content)
        row = MemoryRow(
            content=content,
            content_key=key,
            kind=str(kind),
            source=str(source),
            importance=importance,
            confidence=confidence,
            tags_json=json.dumps(list(tags), ensure_ascii=False),
            trigger_context=trigger_context,
            valid_from=when,
            valid_until=valid_until,
            created_at=when,
            updated_at=when,
            origin_conversation_id=origin_conversation_id,
            origin_message_id=origin_message_id,
        )
        vector_key = embedder.key if embedder is not None else ""

        def write(session: Any) -> SaveResult:
            old: MemoryRow | None = None
            if supersedes is not None:
                old = store.get(session, supersedes)
                if old is None:
                    raise MemoryNotFound(f"no memory #{supersedes}", memory_id=supersedes)
            elif not bulk:
                target = store.find_active_by_key(session, key, now)
                if target is None and slot_candidates:
                    old = self._same_slot(session, content, str(kind), slot_candidates, now, tuning)
                if target is None and near_id is not None:
                    candidate = store.get(session, near_id)
                    if candidate is not None and Memory.from_row(candidate).is_active(now):
                        target = candidate
                if target is not None:
                    self._merge_into(session, target, row, vectors, vector_key, who, now)
                    session.commit()
                    assert target.id is not None
                    return SaveResult(target.id, merged=True)
            if not bulk:
                active = store.count_active(session, now)
                if old is not None and Memory.from_row(old).is_active(now):
                    active -= 1
                if active >= self.max_active:
                    raise MemoryLimitReached(
                        f"{active} active memories", reason="limit", limit=self.max_active
                    )
            store.insert(session, [row], actor=who)
            assert row.id is not None
            if vectors is not None:
                store.write_vectors(session, row.id, vector_key, list(vectors))
            if old is not None:
                assert old.id is not None
                before = store.snapshot(old)
                old.valid_until = now
                old.archived_at = old.archived_at or now
                old.superseded_by = row.id
                old.updated_at = now
                session.add(old)
                store.add_revision(
                    session,
                    old.id,
                    RevisionAction.SUPERSEDE,
                    actor=who,
                    now=now,
                    before=before,
                    after=store.snapshot(old),
                )
            session.commit()
            return SaveResult(row.id, merged=False, superseded=None if old is None else old.id)

        result: SaveResult = self._call(write)
        self._mark_dirty(result.id, result.superseded)
        return result

    @staticmethod
    def _same_slot(
        session: Any,
        content: str,
        kind: str,
        candidates: Sequence[tuple[int, float]],
        now: datetime,
        tuning: Tuning,
    ) -> MemoryRow | None:
        """The active memory of ``kind`` that ``content`` (with a change cue) replaces, if any.

        ``candidates`` are the nearest memories by whole-text cosine, most similar first; the
        first active one of the same kind that passes ``slots.same_slot`` is it.
        """
        rows = store.rows_by_id(session, [memory_id for memory_id, _ in candidates])
        for memory_id, similarity in candidates:
            row = rows.get(memory_id)
            if row is None or row.kind != kind or not Memory.from_row(row).is_active(now):
                continue
            if same_slot(content, row.content, similarity, tuning.same_slot_similarity):
                return row
        return None

    @staticmethod
    def _merge_into(
        session: Any,
        target: MemoryRow,
        new: MemoryRow,
        vectors: FloatArray | None,
        vector_key: str,
        actor: str,
        now: datetime,
    ) -> None:
        """The existing memory takes the new wording; the old one stays in its history."""
        assert target.id is not None
        before = store.snapshot(target)
        changed = target.content != new.content
        target.content = new.content
        target.content_key = new.content_key
        target.importance = max(target.importance, new.importance)
        target.confidence = max(target.confidence, new.confidence)
        tags = list(dict.fromkeys([*json.loads(target.tags_json), *json.loads(new.tags_json)]))
        target.tags_json = json.dumps(tags, ensure_ascii=False)
        target.trigger_context = new.trigger_context or target.trigger_context
        # A restatement holds from now on: recency and "newer first" treat it as new.
        target.valid_from = max(target.valid_from, new.valid_from)
        target.updated_at = now
        session.add(target)
        store.reindex(session, target)
        if changed:
            store.drop_vectors(session, target.id)
            if vectors is not None:
                store.write_vectors(session, target.id, vector_key, list(vectors))
        store.add_revision(
            session,
            target.id,
            RevisionAction.MERGE,
            actor=actor,
            now=now,
            before=before,
            after=store.snapshot(target),
        )

    def add_many(
        self,
        items: Iterable[str | MemoryDraft | Mapping[str, Any]],
        *,
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
        actor: str = "import",
    ) -> list[int]:
        """Load many memories fast: no duplicate-merging, no limits, embedded in batches.

        Empty texts and secrets are still refused: every item is checked before anything is
        written, so a refusal leaves the store as it was and a retry duplicates nothing.

        Args:
            items: Texts, ``MemoryDraft`` values, or mappings of ``MemoryDraft`` fields.
            batch_size: Memories per embedding call and per transaction.
            progress: Called with ``(done, total)`` after each batch.
            actor: Who is loading, for the histories.

        Returns:
            The new ids, in input order.

        Raises:
            MemoryEmpty, MemorySecret: An item was refused; ``params["index"]`` is its
                position. Nothing was written.
            InvalidInput: An item has an invalid kind, source, importance or confidence (or is
                not a text, draft or mapping of draft fields); ``params["index"]`` as above.
        """
        drafts: list[MemoryDraft] = []
        contents: list[str] = []
        for index, item in enumerate(items):
            try:
                draft = _draft(item)
                contents.append(check_content(draft.text, max_chars=None))
                _validate(draft.kind, draft.source, draft.importance, draft.confidence)
            except InvalidInput as exc:
                raise type(exc)(f"item {index}: {exc.detail}", **exc.params, index=index) from exc
            except TypeError as exc:
                raise InvalidInput(f"item {index}: {exc}", index=index) from exc
            drafts.append(draft)
        ids: list[int] = []
        total = len(drafts)
        # Batch n is written on the DB thread while batch n + 1 is embedded here: with the
        # built-in model the embedding is most of the time, and the two overlap on two cores.
        pending: concurrent.futures.Future[list[int]] | None = None
        try:
            for start in range(0, total, max(1, batch_size)):
                batch = drafts[start : start + batch_size]
                now = self._now()
                values: list[dict[str, Any]] = []
                chunks: list[list[str]] = []
                for d, content in zip(batch, contents[start : start + batch_size], strict=True):
                    when = d.created_at or now
                    values.append(
                        {
                            "content": content,
                            "content_key": duplicate_key(content),
                            "kind": str(d.kind),
                            "source": str(d.source),
                            "importance": d.importance,
                            "confidence": d.confidence,
                            "tags_json": json.dumps(list(d.tags), ensure_ascii=False),
                            "trigger_context": d.trigger_context,
                            "valid_from": when,
                            "valid_until": d.valid_until,
                            "superseded_by": None,
                            "archived_at": None,
                            "created_at": when,
                            "updated_at": when,
                            "access_count": 0,
                            "last_accessed_at": None,
                            "origin_conversation_id": None,
                            "origin_message_id": None,
                        }
                    )
                    chunks.append(self._chunks(content))
                embedder = self._embedder
                vectors = self._embed(embedder, [t for group in chunks for t in group])
                vector_key = embedder.key if embedder is not None else ""
                if pending is not None:
                    self._batch_written(pending.result(), ids, total, progress)
                    pending = None
                pending = self._db.submit(
                    functools.partial(
                        self._insert_batch,
                        values=values,
                        chunks=chunks,
                        vectors=vectors,
                        vector_key=vector_key,
                        actor=actor,
                    )
                )
            if pending is not None:
                self._batch_written(pending.result(), ids, total, progress)
                pending = None
        finally:
            if pending is not None:
                # Leaving on an error here: the batch being written still finishes first.
                with contextlib.suppress(Exception):
                    self._mark_dirty(*pending.result())
        return ids

    def _batch_written(
        self,
        new_ids: list[int],
        ids: list[int],
        total: int,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        ids.extend(new_ids)
        self._mark_dirty(*new_ids)
        if progress is not None:
            progress(len(ids), total)

    @staticmethod
    def _insert_batch(
        session: Any,
        values: list[dict[str, Any]],
        chunks: list[list[str]],
        vectors: FloatArray | None,
        vector_key: str,
        actor: str,
    ) -> list[int]:
        """``store.insert`` from column values: ``MemoryRow`` objects cost ~0.35 ms each to build.

        The same rows, index entries and ``create`` revisions as ``store.insert`` writes.
        """
        table = MemoryRow.__table__  # type: ignore[attr-defined]
        statement = table.insert().returning(table.c.id, sort_by_parameter_order=True)
        ids = [int(memory_id) for memory_id in session.scalars(statement, values)]
        # The getter forms of store.body and store.snapshot, over the column values.
        fts.insert_many(
            session,
            [
                (memory_id, store._body(v.__getitem__))
                for memory_id, v in zip(ids, values, strict=True)
            ],
        )
        session.execute(
            MemoryRevisionRow.__table__.insert(),  # type: ignore[attr-defined]
            [
                {
                    "memory_id": memory_id,
                    "created_at": v["created_at"],
                    "action": RevisionAction.CREATE.value,
                    "actor": actor,
                    "before_json": None,
                    "after_json": json.dumps(store._snapshot(v.__getitem__), ensure_ascii=False),
                }
                for memory_id, v in zip(ids, values, strict=True)
            ],
        )
        if vectors is not None:
            items = []
            offset = 0
            for memory_id, group in zip(ids, chunks, strict=True):
                items.append((memory_id, list(vectors[offset : offset + len(group)])))
                offset += len(group)
            store.insert_vectors(session, vector_key, items)
        session.commit()
        return ids

    def edit(
        self,
        memory_id: int,
        text: str | None = None,
        *,
        kind: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        tags: Sequence[str] | None = None,
        trigger_context: str | _Unset | None = _UNSET,
        valid_until: datetime | _Unset | None = _UNSET,
        actor: str = "user",
    ) -> Memory:
        """Change a memory; a new text is checked like a new memory and re-embedded.

        Args:
            memory_id: The memory to change.
            text: The new content (``None``: unchanged).
            kind: The new kind.
            importance: The new importance.
            confidence: The new confidence.
            tags: The new tags.
            trigger_context: The new trigger context (``None`` clears it).
            valid_until: The new end of validity (``None`` clears it).
            actor: Who made the change.

        Returns:
            The memory after the change.

        Raises:
            MemoryNotFound: No such memory.
            MemoryEmpty, MemoryTooLong, MemorySecret: The new text was refused.
            InvalidInput: A field value is invalid.
        """
        content = None if text is None else check_content(text, max_chars=self.max_content_chars)
        embedder = self._embedder
        vectors = None if content is None else self._embed(embedder, self._chunks(content))
        vector_key = embedder.key if embedder is not None else ""
        now = self._now()

        def write(session: Any) -> Memory:
            row = self._require(session, memory_id)
            _validate(
                kind or row.kind,
                row.source,
                row.importance if importance is None else importance,
                row.confidence if confidence is None else confidence,
            )
            before = store.snapshot(row)
            text_changed = content is not None and content != row.content
            if content is not None:
                row.content = content
                row.content_key = duplicate_key(content)
            if kind is not None:
                row.kind = str(kind)
            if importance is not None:
                row.importance = importance
            if confidence is not None:
                row.confidence = confidence
            if tags is not None:
                row.tags_json = json.dumps(list(tags), ensure_ascii=False)
            if not isinstance(trigger_context, _Unset):
                row.trigger_context = trigger_context
            if not isinstance(valid_until, _Unset):
                row.valid_until = valid_until
            after = store.snapshot(row)
            if after == before:
                return Memory.from_row(row)
            row.updated_at = now
            session.add(row)
            store.reindex(session, row)
            if text_changed:
                # Every embedder's vectors describe the old text; reembed() refills the others.
                store.drop_vectors(session, memory_id)
                if vectors is not None:
                    store.write_vectors(session, memory_id, vector_key, list(vectors))
            store.add_revision(
                session,
                memory_id,
                RevisionAction.EDIT,
                actor=actor,
                now=now,
                before=before,
                after=after,
            )
            session.commit()
            return Memory.from_row(row)

        memory: Memory = self._call(write)
        self._mark_dirty(memory_id)
        return memory

    @staticmethod
    def _require(session: Any, memory_id: int) -> MemoryRow:
        row = store.get(session, memory_id)
        if row is None:
            raise MemoryNotFound(f"no memory #{memory_id}", memory_id=memory_id)
        return row

    def _change_state(
        self,
        memory_id: int,
        action: RevisionAction,
        apply: Callable[[MemoryRow, datetime], bool],
        actor: str,
        *,
        check_limit: bool = False,
    ) -> Memory:
        now = self._now()

        def write(session: Any) -> Memory:
            row = self._require(session, memory_id)
            before = store.snapshot(row)
            was_active = Memory.from_row(row).is_active(now)
            if not apply(row, now):
                return Memory.from_row(row)
            if (
                check_limit
                and not was_active
                and store.count_active(session, now) >= self.max_active
            ):
                raise MemoryLimitReached(
                    "restoring would exceed the limit", reason="limit", limit=self.max_active
                )
            row.updated_at = now
            session.add(row)
            store.add_revision(
                session,
                memory_id,
                action,
                actor=actor,
                now=now,
                before=before,
                after=store.snapshot(row),
            )
            session.commit()
            return Memory.from_row(row)

        memory: Memory = self._call(write)
        self._mark_dirty(memory_id)
        return memory

    def archive(self, memory_id: int, *, actor: str = "user") -> Memory:
        """Archive a memory: kept with its text and vectors, never retrieved, restorable.

        Args:
            memory_id: The memory.
            actor: Who archived it.

        Returns:
            The memory after the change (unchanged if it was archived already).

        Raises:
            MemoryNotFound: No such memory.
        """

        def apply(row: MemoryRow, now: datetime) -> bool:
            if row.archived_at is not None:
                return False
            row.archived_at = now
            return True

        return self._change_state(memory_id, RevisionAction.ARCHIVE, apply, actor)

    def restore(self, memory_id: int, *, actor: str = "user") -> Memory:
        """Make an archived, superseded or expired memory active again.

        Clears ``archived_at``, ``valid_until`` and ``superseded_by``; the memory that superseded
        it stays as it is (the user decides about that one).

        Args:
            memory_id: The memory.
            actor: Who restored it.

        Returns:
            The memory after the change (unchanged if it was active already).

        Raises:
            MemoryNotFound: No such memory.
            MemoryLimitReached: ``max_active`` active memories exist already.
        """

        def apply(row: MemoryRow, now: datetime) -> bool:
            if row.archived_at is None and row.valid_until is None and row.superseded_by is None:
                return False
            row.archived_at = None
            row.valid_until = None
            row.superseded_by = None
            return True

        return self._change_state(memory_id, RevisionAction.RESTORE, apply, actor, check_limit=True)

    def archive_many(self, memory_ids: Sequence[int], *, actor: str = "user") -> list[int]:
        """Archive several memories in one transaction (Archive of many rows, or of all).

        Args:
            memory_ids: The memories; those archived already are skipped.
            actor: Who archived them.

        Returns:
            The ids archived now, in the order given.

        Raises:
            MemoryNotFound: One of them does not exist (nothing was archived).
        """
        return self._set_archived_many(memory_ids, archive=True, actor=actor)

    def restore_many(
        self, memory_ids: Sequence[int], *, actor: str = "user", archive_only: bool = False
    ) -> list[int]:
        """Restore several memories in one transaction (see :meth:`restore`).

        Args:
            memory_ids: The memories; those active already are skipped.
            actor: Who restored them.
            archive_only: Clear only ``archived_at`` (the undo of an archive: an expiry the
                memory had before stays).

        Returns:
            The ids restored, in the order given.

        Raises:
            MemoryNotFound: One of them does not exist (nothing was restored).
            MemoryLimitReached: Restoring them would make more than ``max_active`` memories
                active (nothing was restored).
        """
        return self._set_archived_many(
            memory_ids, archive=False, archive_only=archive_only, actor=actor
        )

    def _set_archived_many(
        self, memory_ids: Sequence[int], *, archive: bool, actor: str, archive_only: bool = False
    ) -> list[int]:
        now = self._now()

        def write(session: Any) -> list[int]:
            try:
                changed, became_active, missing = store.set_archived_many(
                    session,
                    memory_ids,
                    archive=archive,
                    archive_only=archive_only,
                    actor=actor,
                    now=now,
                )
                if missing:
                    raise MemoryNotFound(f"no memory #{missing[0]}", memory_id=missing[0])
                if became_active and store.count_active(session, now) > self.max_active:
                    raise MemoryLimitReached(
                        "restoring would exceed the limit", reason="limit", limit=self.max_active
                    )
            except BaseException:
                session.rollback()
                raise
            session.commit()
            return changed

        changed: list[int] = self._call(write)
        self._mark_dirty(*changed)
        return changed

    def supersede(
        self,
        old_id: int,
        new_text: str,
        *,
        kind: str | None = None,
        source: str = MemorySource.MANUAL,
        importance: float | None = None,
        confidence: float = 1.0,
        tags: Sequence[str] | None = None,
        trigger_context: str | None = None,
        actor: str | None = None,
    ) -> int:
        """Replace a memory by a newer statement: the old one is ended, archived and linked.

        Args:
            old_id: The memory that no longer holds.
            new_text: What holds now.
            kind: The new memory's kind (default: the old one's).
            source: The new memory's source.
            importance: Its importance (default: the old one's).
            confidence: Its confidence.
            tags: Its tags (default: the old one's).
            trigger_context: Its trigger context.
            actor: Who made the change (default: derived from ``source``).

        Returns:
            The new memory's id.

        Raises:
            MemoryNotFound: ``old_id`` names no memory.
            MemoryEmpty, MemoryTooLong, MemorySecret: The new text was refused.
        """
        old = self.get(old_id)
        if old is None:
            raise MemoryNotFound(f"no memory #{old_id}", memory_id=old_id)
        return self.save(
            new_text,
            kind or old.kind,
            source=source,
            importance=old.importance if importance is None else importance,
            confidence=confidence,
            tags=old.tags if tags is None else tags,
            trigger_context=trigger_context,
            supersedes=old_id,
            actor=actor,
        ).id

    def delete(self, memory_id: int, *, actor: str = "user") -> DeletedMemory:
        """Really delete a memory; only a tombstone (id, time, action) stays in its history.

        Args:
            memory_id: The memory.
            actor: Who deleted it.

        Returns:
            Everything needed for :meth:`undo_delete`; hold it in memory only (it contains the
            deleted text) and drop it when the undo is no longer offered.

        Raises:
            MemoryNotFound: No such memory.
        """
        return self.delete_many([memory_id], actor=actor)[0]

    def delete_many(self, memory_ids: Sequence[int], *, actor: str = "user") -> list[DeletedMemory]:
        """Really delete several memories in one transaction (bulk delete, Clear all).

        With them go their vectors, index entries and revision texts, and their texts in the
        stored context traces (replaced by ``[deleted memory #id]``); freed pages are zeroed
        and the WAL is checkpointed, so the texts leave the files. The conversations' own
        messages keep their words.

        Args:
            memory_ids: The memories; all are deleted or, if one is missing, none.
            actor: Who deleted them.

        Returns:
            One undo snapshot per memory, in the order given (see :meth:`delete`).

        Raises:
            MemoryNotFound: One of them does not exist (nothing was deleted).
        """
        now = self._now()
        wanted = list(dict.fromkeys(memory_ids))

        def write(session: Any) -> list[DeletedMemory]:
            try:
                rows = store.columns_by_id(session, wanted)
                missing = [memory_id for memory_id in wanted if memory_id not in rows]
                if missing:
                    raise MemoryNotFound(f"no memory #{missing[0]}", memory_id=missing[0])
                revisions = store.revisions_of(session, wanted)
                vectors = store.vectors_of(session, wanted)
                superseded = store.superseded_by_any(session, wanted)
                indexed = fts.bodies_of(session, wanted)
                erased = traces.erase_from_traces(session, wanted)
                snapshots = [
                    DeletedMemory(
                        row=rows[memory_id],
                        revisions=tuple(revisions.get(memory_id, ())),
                        vectors=tuple(vectors.get(memory_id, ())),
                        superseded_ids=tuple(superseded.get(memory_id, ())),
                        deleted_at=now,
                        trace_lines=tuple(erased.get(memory_id, ())),
                        indexed=indexed.get(memory_id, ""),
                    )
                    for memory_id in wanted
                ]
                store.erase_many(session, wanted, actor=actor, now=now)
            except BaseException:
                session.rollback()
                raise
            session.commit()
            # After the commit: fold the WAL back so the old pages leave it too.
            checkpoint(session)
            return snapshots

        deleted: list[DeletedMemory] = self._call(write)
        touched = list(wanted)
        for snapshot in deleted:
            touched.extend(snapshot.superseded_ids)
        self._mark_dirty(*touched)
        return deleted

    def undo_delete(self, deleted: DeletedMemory, *, actor: str = "user") -> Memory:
        """Write a deleted memory back from the snapshot :meth:`delete` returned.

        The tombstone is replaced by the old history plus an ``undelete`` revision; links from
        memories it had superseded, and its text in the context traces, are restored.

        Args:
            deleted: The snapshot.
            actor: Who undid the delete.

        Returns:
            The memory, as it was.

        Raises:
            InvalidInput: A memory with that id exists (the delete was already undone).
        """
        return self.undo_delete_many([deleted], actor=actor)[0]

    def undo_delete_many(
        self, deleted: Sequence[DeletedMemory], *, actor: str = "user"
    ) -> list[Memory]:
        """Undo a bulk delete in one transaction (see :meth:`undo_delete`).

        Args:
            deleted: The snapshots :meth:`delete_many` returned.
            actor: Who undid the delete.

        Returns:
            The memories, as they were, in the order given.

        Raises:
            InvalidInput: One of the memories exists again (nothing was written back).
        """
        now = self._now()
        snapshots = list({d.memory_id: d for d in deleted}.values())
        ids = [d.memory_id for d in snapshots]

        def write(session: Any) -> list[Memory]:
            try:
                existing = store.rows_by_id(session, ids)
                if existing:
                    memory_id = min(existing)
                    raise InvalidInput(f"memory #{memory_id} exists", memory_id=memory_id)
                store.write_back(
                    session,
                    [{**d.row, "superseded_by": None} for d in snapshots],
                    bodies={d.memory_id: d.indexed for d in snapshots if d.indexed},
                    revisions=[r for d in snapshots for r in d.revisions],
                    vectors=[(d.memory_id, v) for d in snapshots for v in d.vectors],
                    actor=actor,
                    now=now,
                )
                # Links last: a memory and its successor may come back in the same undo.
                links = [(d.memory_id, d.row.get("superseded_by")) for d in snapshots]
                links += [(old, d.memory_id) for d in snapshots for old in d.superseded_ids]
                store.relink(session, links)
                traces.restore_in_traces(
                    session, [line for d in snapshots for line in d.trace_lines]
                )
                session.commit()
            except BaseException:
                session.rollback()
                raise
            restored = store.rows_by_id(session, ids)
            return [Memory.from_row(restored[d.memory_id]) for d in deleted]

        memories: list[Memory] = self._call(write)
        touched = list(ids)
        for snapshot in snapshots:
            touched.extend(snapshot.superseded_ids)
        self._mark_dirty(*touched)
        return memories

    def mark_accessed(self, memory_ids: Iterable[int]) -> None:
        """Count a retrieval of these memories into a conversation (no revision: no change)."""
        ids = sorted(set(memory_ids))
        if not ids:
            return
        now = self._now()

        def write(session: Any) -> None:
            for row in store.rows_by_id(session, ids).values():
                row.access_count += 1
                row.last_accessed_at = now
                session.add(row)
            session.commit()

        self._call(write)

    # -- reading --------------------------------------------------------------------------------

    def get(self, memory_id: int) -> Memory | None:
        """One memory, or ``None`` if it does not exist (or was deleted)."""
        row = self._call(lambda s: store.get(s, memory_id))
        return None if row is None else Memory.from_row(row)

    def memories(self, *, include_inactive: bool = False) -> list[Memory]:
        """All active memories (or all memories), newest first."""
        now = self._now()

        def read(session: Any) -> list[MemoryRow]:
            statement = select(MemoryRow).order_by(col(MemoryRow.id).desc())
            if not include_inactive:
                statement = statement.where(lookups.active_memory(now))
            return list(session.exec(statement).all())

        return [Memory.from_row(row) for row in self._call(read)]

    def saved_from_messages(self, message_ids: Sequence[int]) -> list[Memory]:
        """The active memories that were saved from these messages (notes under replies)."""
        if not message_ids:
            return []
        now = self._now()
        wanted = list(message_ids)

        def read(session: Any) -> list[MemoryRow]:
            statement = (
                select(MemoryRow)
                .where(col(MemoryRow.origin_message_id).in_(wanted))
                .where(lookups.active_memory(now))
                .order_by(col(MemoryRow.id))
            )
            return list(session.exec(statement).all())

        return [Memory.from_row(row) for row in self._call(read)]

    def history(self, memory_id: int) -> list[Revision]:
        """A memory's revisions, oldest first (a deleted memory: just its tombstone)."""
        rows = self._call(lambda s: store.revisions(s, memory_id))
        return [Revision.from_row(row) for row in rows]

    def count_active(self) -> int:
        """How many memories are active now (not archived, not expired)."""
        now = self._now()
        return int(self._call(lambda s: store.count_active(s, now)))

    def search(
        self,
        query: str,
        k: int = 5,
        mode: str = SearchMode.HYBRID,
        apply_floor: bool = True,
        *,
        tuning: Tuning | None = None,
        from_user: bool = True,
        personal: bool | None = None,
    ) -> list[Hit]:
        """Find the active memories relevant to ``query``; possibly none.

        Args:
            query: The query text (any language; FTS syntax characters are harmless).
            k: The most hits returned.
            mode: ``"hybrid"`` (default), ``"vector"`` or ``"keyword"``.
            apply_floor: ``False`` returns the best ``k`` even when they are not relevant
                (benchmarks measure the floor with it).
            tuning: Floors and weights for this call only (calibration sweeps).
            from_user: ``True`` when the query is the user's own message (per-turn retrieval):
                the relevance gate decides its floor — ``floor`` when it addresses the user,
                asks about the past or refers back, ``shared_floor`` when a best candidate
                shares a name or a rare term with it, else the strict ``impersonal_floor``.
                ``False`` for queries the model or the app wrote (``search_memory``), which are
                third-person by nature and always get ``floor``.
            personal: Whether the query is about the user, when the caller knows better than
                ``query``'s wording (per-turn retrieval judges the current message, not the
                search text that may include an earlier turn); ``None`` decides as above.

        Returns:
            Up to ``k`` hits, best first, each with its score parts. Archived and expired
            memories never appear. Vector mode returns nothing without an embedder.

        Raises:
            ProviderError: Vector mode only, when the query could not be embedded (hybrid
                falls back to keyword).
            InvalidInput: Unknown mode.
        """
        try:
            search_mode = SearchMode(mode)
        except ValueError as exc:
            raise InvalidInput(f"unknown search mode {mode!r}", field="mode") from exc
        with self._state_lock:
            embedder, active_tuning = self._embedder, self._tuning
        tuning = tuning or active_tuning
        now = self._now()
        if personal is None:
            personal = not from_user or addresses_user(query) or refers_back(query)
        window = self.time_window(query)
        # The time phrase says when, not what: "last week" must not match every turn that
        # mentions a week. "Recently" names no period: it only prefers newer memories.
        keyword_text = query if window is None else without_time_words(query, window)
        prefer_recent = window is not None and window.soft
        if prefer_recent:
            window = None
        time_only = window is not None and asks_only_what_was_said(keyword_text)
        terms = [] if search_mode is SearchMode.VECTOR or time_only else query_terms(keyword_text)
        names = [] if not terms else name_terms(keyword_text)
        wants_vectors = (
            search_mode is not SearchMode.KEYWORD and embedder is not None and bool(query.strip())
        )
        if search_mode is SearchMode.VECTOR and not wants_vectors:
            return []
        if search_mode is SearchMode.KEYWORD and not terms and window is None:
            return []
        # Before the DB thread gets the gather below: building or patching the index needs
        # that thread, and the gather waits there for the vector candidates.
        index = self._vector_index(embedder) if wants_vectors and embedder is not None else None
        vector_key = "" if embedder is None else embedder.key
        dim = 0 if embedder is None else embedder.dimension
        # The int8 scan's best memories (more than the pool: the pool is chosen by exact cosines).
        scanned: concurrent.futures.Future[list[int]] = concurrent.futures.Future()

        def gather(session: Any) -> _Gathered:
            in_window = set() if window is None else self._window_ids(session, window, now)
            matched: list[tuple[int, str]] = []
            rows: list[CandidateRow] = []
            frequencies: dict[str, int] = {}
            total = 0
            if terms:
                frequencies, total = fts.term_statistics(session, terms)
                selective = selective_terms(terms, frequencies, total)
                ranked = fts.ranked_candidates(
                    session, selective, now=now, limit=KEYWORD_CANDIDATES
                )
                # Too few: add the dropped terms back, least common first, until enough match
                # (a ranked MATCH on a term in every row costs ~18 ms at 10k memories).
                dropped = sorted(
                    (t for t in terms if t not in selective), key=lambda t: frequencies.get(t, 0)
                )
                while dropped and len(ranked) < max(k, KEYWORD_MIN_CANDIDATES):
                    selective = [*selective, dropped.pop(0)]
                    ranked = fts.ranked_candidates(
                        session, selective, now=now, limit=KEYWORD_CANDIDATES
                    )
                # The matches come with their rows: every one is a candidate.
                rows = [row for row, _ in ranked]
                matched = [(row.id, body) for row, body in ranked]
            seen = {row.id for row in rows}

            def add(memory_ids: Iterable[int]) -> list[CandidateRow]:
                # Candidates that did not match (the period's, the vector side's), with their
                # bodies when the query has terms: a body without one simply scores 0.
                wanted = [i for i in memory_ids if i not in seen]
                if not terms:
                    return store.candidates(session, wanted, now)
                added = store.candidates_with_bodies(session, wanted, now)
                matched.extend((row.id, body) for row, body in added if body is not None)
                return [row for row, _ in added]

            # The keyword side's rows and float vectors are read while the caller scans.
            found = rows + add(in_window)
            blobs: dict[int, list[bytes]] = {}
            rescore = index is not None and index.quantized
            if rescore:
                blobs = self._stored_vectors(session, vector_key, dim, [c.id for c in found])
            near = scanned.result()
            if near:
                have = {c.id for c in found}
                # In KEYWORD mode there is no scan; in VECTOR mode no terms (no bodies).
                more = add(i for i in near if i not in have)
                if more and rescore:
                    blobs.update(
                        self._stored_vectors(session, vector_key, dim, [c.id for c in more])
                    )
                found += more
            found.sort(key=_by_id)
            scorer = KeywordScorer(terms, frequencies, total)
            gate = gate_terms(terms, names, frequencies, total, tuning.gate_rare_share)
            unique = frozenset(t for t in gate if 0 < frequencies.get(t, 0) <= GATE_MIN_DOC_FREQ)
            return _Gathered(matched, seen, scorer, found, in_window, gate, blobs, unique)

        # The DB thread matches the full-text index while this thread embeds the query and
        # scans the vectors: on two cores the two overlap.
        pending = self._db.submit(gather)
        query_vector: FloatArray | None = None
        sims: FloatArray | None = None
        pool = 0
        try:
            near: list[int] = []
            if index is not None and embedder is not None:
                try:
                    query_vector = self._query_vector(embedder, query)
                except ProviderError:
                    if search_mode is SearchMode.VECTOR:
                        raise
                    log.warning("query embedding failed; keyword search only", exc_info=True)
                if query_vector is not None and len(index):
                    pool = min(len(index), max(VECTOR_CANDIDATES, 4 * k))
                    near, sims = self._scan(index, query_vector, now, tuning, apply_floor, pool)
            scanned.set_result(near)
        except BaseException as exc:
            scanned.set_exception(exc)
            with contextlib.suppress(BaseException):
                pending.result()
            raise
        gathered: _Gathered = pending.result()
        found = gathered.found
        vectors: dict[int, FloatArray] = {}
        cosines: dict[int, float] = {}
        if index is not None and sims is not None and not index.quantized:
            # A float32 index: its cosines are exact, and the scan chose the pool itself.
            positions = [(c.id, index.position(c.id)) for c in found]
            have = [(i, p) for i, p in positions if p is not None]
            if have:
                values = sims[[p for _, p in have]].tolist()
                cosines = {i: v for (i, _), v in zip(have, values, strict=True)}
        elif query_vector is not None:
            cosines, vectors = exact_similarities(
                gathered.blobs, dim, query_vector, tuning.passage_weight
            )
            # The pool the float32 matrix chose: the best live cosines, at the floor or above.
            floor = tuning.floor if apply_floor else -math.inf
            live = {c.id for c in found if c.id in cosines and cosines[c.id] >= floor}
            keep = set(sorted(live, key=lambda i: -cosines[i])[:pool])
            found = [
                c
                for c in found
                if c.id in keep or c.id in gathered.seen or c.id in gathered.in_window
            ]
        keyword: dict[int, float] = {}
        shared: dict[int, frozenset[str]] = {}
        term_set = frozenset(terms)
        scorer = gathered.scorer
        for memory_id, indexed in gathered.matched:
            tokens = indexed.split()
            # The query terms it contains are all the score reads of its tokens (no set of
            # every token: a few hundred bodies per search).
            common = term_set.intersection(tokens)
            keyword[memory_id] = scorer.score(common, len(tokens))
            shared[memory_id] = common
        in_window = gathered.in_window
        no_terms: frozenset[str] = frozenset()
        candidates = [
            Candidate(
                *c,
                cosines.get(c.id),
                keyword.get(c.id, 0.0),
                c.id in in_window or (window is not None and _in_window(c, window)),
                shared.get(c.id, no_terms),
            )
            for c in found
        ]
        gate = gathered.gate

        def vectors_of(memory_ids: Sequence[int]) -> dict[int, FloatArray]:
            if index is not None and not index.quantized:
                return index.whole_text_vectors(memory_ids)
            return {i: vectors[i] for i in memory_ids if i in vectors}

        return rank(
            candidates,
            mode=search_mode,
            tuning=tuning,
            query_units=query_units(query),
            now=now,
            k=k,
            apply_floor=apply_floor,
            personal=personal,
            whole_text_vectors=None if query_vector is None else vectors_of,
            time_only=time_only,
            query_names=names_or_numbers(keyword_text),
            gate_terms=gate,
            prefer_recent=prefer_recent,
            gate_names=gate.intersection(names),
            gate_unique=gathered.unique,
        )

    @staticmethod
    def _scan(
        index: VectorIndex,
        query_vector: FloatArray,
        now: datetime,
        tuning: Tuning,
        apply_floor: bool,
        pool: int,
    ) -> tuple[list[int], FloatArray]:
        """The vector pool: the best ``pool`` live memories at the floor, and every cosine.

        From an int8 index, ``pool`` plus a margin, best first: the exact pool (the best by
        float32 cosine) is chosen from these after their stored vectors are read; the int8
        cosines are off by ~0.0005 (at most ~0.0012), which reorders memories whose cosines are
        that close, never by more than the margin.
        """
        sims = index.similarities(query_vector, tuning.passage_weight)
        masked = numpy.where(index.live(now), sims, -numpy.inf)
        slack = _SCAN_SLACK if index.quantized else 0.0
        if apply_floor:
            # The lowest floor the gate may choose (less the int8 error): the gate decides
            # after gathering.
            masked = numpy.where(masked >= tuning.floor - slack, masked, -numpy.inf)
        wide = pool
        if index.quantized:
            wide = min(len(masked), pool + max(_SCAN_MARGIN_MIN, int(_SCAN_MARGIN * pool)))
        top = numpy.argpartition(-masked, wide - 1)[:wide]
        top = top[numpy.isfinite(masked[top])]
        top = top[numpy.argsort(-masked[top], kind="stable")]
        ids: list[int] = index.ids[top].tolist()
        return ids, sims

    @staticmethod
    def _stored_vectors(
        session: Any, key: str, dim: int, memory_ids: Sequence[int]
    ) -> dict[int, list[bytes]]:
        """The stored float32 vectors of these memories for ``key``, by memory, chunk order."""
        out: dict[int, list[bytes]] = {}
        if not memory_ids:
            return out
        width = dim * 4
        driver = session.connection().connection.driver_connection
        for memory_id, blob in driver.execute(
            _VECTORS_SQL, (key, dim, json.dumps(list(memory_ids)))
        ):
            if len(blob) == width:
                out.setdefault(int(memory_id), []).append(bytes(blob))
        return out

    def time_window(self, query: str) -> TimeWindow | None:
        """The period ``query`` names ("last week", "上周", "三月份"), if any.

        Resolved on this engine's clock in the local time zone; search boosts memories from it.

        Args:
            query: A query or message.

        Returns:
            The window, or ``None`` when the text names no period.
        """
        return resolve_time_window(query, self._now().astimezone())

    @staticmethod
    def _window_ids(session: Any, window: TimeWindow, now: datetime) -> set[int]:
        """Active memories created, or valid from, within ``window`` (newest first, bounded)."""
        statement = (
            select(MemoryRow.id)
            .where(
                lookups.active_memory(now),
                or_(
                    (col(MemoryRow.created_at) >= window.start)
                    & (col(MemoryRow.created_at) < window.end),
                    (col(MemoryRow.valid_from) >= window.start)
                    & (col(MemoryRow.valid_from) < window.end),
                ),
            )
            .order_by(col(MemoryRow.created_at).desc())
            .limit(WINDOW_CANDIDATES)
        )
        return {int(memory_id) for memory_id in session.exec(statement) if memory_id is not None}

    # -- import (the entries and the matching live in transfer.py) ----------------------------

    def preview_import(self, document: transfer.MemoryEntries) -> transfer.MemoryPlan:
        """Say what importing a parsed file's memories would add and update; nothing is written.

        Args:
            document: The memories of a file (``core.transfer.document.parse_import`` reads one).

        Returns:
            The plan to show, then to pass to :meth:`import_memories`.
        """
        local = self._call(transfer.local_memories)
        return transfer.plan_import(document, local, now=self._now(), max_active=self.max_active)

    def import_memories(
        self,
        preview: transfer.MemoryPlan,
        *,
        actor: str = "import",
        alongside: Callable[[Session, datetime], None] | None = None,
    ) -> transfer.MemoryImportResult:
        """Apply an import plan in one transaction: all of it, or on any error nothing.

        New and changed texts are embedded first; if the embedder fails they are kept for
        keyword search until :meth:`reembed` gives them vectors.

        Args:
            preview: What :meth:`preview_import` returned.
            actor: Who is importing, for the histories.
            alongside: Writes the other layers' part of the same import in the same
                transaction, after the memories (with the session and the import's time, on the
                DB thread); what it raises undoes the whole import.

        Returns:
            The ids added and updated.

        Raises:
            ImportStale: A matched memory changed or was deleted since the preview.
            MemoryLimitReached: The import would exceed ``max_active`` active memories.
            StorageError: The database failed.
        """
        embedder = self._embedder
        texts = transfer.texts_to_embed(preview)
        vectors: dict[int, list[FloatArray]] = {}
        order = list(texts)
        for start in range(0, len(order), 64):
            batch = order[start : start + 64]
            chunks = [self._chunks(texts[i]) for i in batch]
            flat = self._embed(embedder, [t for group in chunks for t in group])
            if flat is None:
                continue
            offset = 0
            for index, group in zip(batch, chunks, strict=True):
                vectors[index] = list(flat[offset : offset + len(group)])
                offset += len(group)
        now = self._now()

        def write(session: Session) -> transfer.MemoryImportResult:
            written = transfer.write_import(
                session,
                preview=preview,
                vectors=vectors,
                vector_key=embedder.key if embedder is not None else "",
                now=now,
                actor=actor,
                max_active=self.max_active,
            )
            if alongside is not None:
                alongside(session, now)
            session.commit()
            return written

        result: transfer.MemoryImportResult = self._call(write)
        self._mark_dirty(*result.added, *result.updated)
        return result

    # -- embeddings -----------------------------------------------------------------------------

    def reembed(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
        *,
        batch_size: int = 32,
    ) -> int:
        """Give every memory (archived ones too) a vector from the active embedder.

        Only memories without one are embedded, a batch per transaction, so a cancelled or
        crashed run resumes where it stopped. Search keeps working meanwhile: memories not yet
        embedded are found by keyword. Stops after the current batch when ``cancel`` is set or
        the embedder is switched.

        Args:
            progress: Called with ``(done, total)`` before the first and after every batch.
            cancel: Set it to stop.
            batch_size: Memories per embedding call.

        Returns:
            How many memories were embedded by this call.

        Raises:
            ProviderError: The embedder failed (what was done so far is kept).
        """
        embedder = self._embedder
        if embedder is None:
            return 0
        key = embedder.key
        passages = self._tuning.passage_weight > 0
        todo: list[int] = self._call(lambda s: self._ids_to_embed(s, key, passages))
        total = len(todo)
        done = 0
        if progress is not None:
            progress(0, total)
        for start in range(0, total, max(1, batch_size)):
            if (cancel is not None and cancel.is_set()) or self._embedder is not embedder:
                break
            batch = todo[start : start + batch_size]
            texts: dict[int, str] = self._call(functools.partial(store.contents, memory_ids=batch))
            order = list(texts)
            chunks = [self._chunks(texts[i]) for i in order]
            flat = [t for group in chunks for t in group]
            if flat:
                vectors = numpy.asarray(embedder.embed(flat), dtype=numpy.float32)
                self._call(
                    functools.partial(
                        self._write_reembedded, key=key, texts=texts, chunks=chunks, vectors=vectors
                    )
                )
            self._mark_dirty(*order)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        return done

    @staticmethod
    def _ids_to_embed(session: Any, key: str, passages: bool) -> list[int]:
        """Memories without vectors for ``key``, or with other passages than they should have.

        Stores written before sentence passages existed (issue 10) have only chunk 0 for most
        memories; re-embedding gives them their passages (or drops them for an embedder whose
        tuning does not use them). No schema change is needed: ``memory_vector.chunk_no``
        already numbers them.
        """
        sql = sql_text(
            "SELECT m.id, m.content, COUNT(v.chunk_no) FROM memory AS m "
            "LEFT JOIN memory_vector AS v ON v.memory_id = m.id AND v.embedder_key = :key "
            "GROUP BY m.id ORDER BY m.id"
        )
        return [
            int(memory_id)
            for memory_id, content, count in session.execute(sql, {"key": key})
            if int(count) != len(chunk_texts(str(content), passages=passages))
        ]

    @staticmethod
    def _write_reembedded(
        session: Any,
        *,
        key: str,
        texts: dict[int, str],
        chunks: list[list[str]],
        vectors: FloatArray,
    ) -> None:
        current = store.contents(session, texts)
        items = []
        offset = 0
        for memory_id, group in zip(texts, chunks, strict=True):
            # Skip memories deleted or edited since they were read: an edit embeds by itself.
            if current.get(memory_id) == texts[memory_id]:
                items.append((memory_id, list(vectors[offset : offset + len(group)])))
            offset += len(group)
        store.delete_vectors(session, key, [memory_id for memory_id, _ in items])
        store.insert_vectors(session, key, items)
        session.commit()

    def embedding_status(self) -> tuple[int, int]:
        """``(memories with a vector for the active embedder, all memories)``."""
        embedder = self._embedder

        def read(session: Any) -> tuple[int, int]:
            total = store.count_all(session)
            return (store.count_with_vector(session, embedder.key) if embedder else 0), total

        result: tuple[int, int] = self._call(read)
        return result

    def vector_cache_bytes(self) -> int:
        """Memory held by the cached vector index (0 before the first vector search)."""
        index = self._index
        return 0 if index is None else index.nbytes

    def with_tuning(self, **changes: Any) -> Tuning:
        """The active tuning with some values changed (for ``search(..., tuning=…)``)."""
        return dataclasses.replace(self._tuning, **changes)
