"""Scoring and ranking of search candidates: pure functions of the candidates and a tuning.

The engine gathers candidates (the best cosines from the vector index, the best full-text matches)
and their stored fields; this module turns them into ranked, explained hits:

* keyword score — the IDF-weighted share of the query's terms a memory contains (0–1), times a
  gentle length factor, so it is an absolute measure ("covers 80 % of the query") that a floor
  can be set on, unlike raw BM25 whose scale depends on the query and the store;
* vector score — the cosine to the query (best chunk);
* hybrid — ``w·scaled(cosine) + (1−w)·keyword`` with ``w`` chosen from the shape of the query
  and the entry (the query's length and whether it has names or numbers; the entry's length), plus
  small recency, importance and confidence terms; a memory without a vector for the active
  embedder is scored by keyword alone;
* blend weight — chosen from the query's shape and from how well its words are in the store:
  at least ``weak_keyword_vector_weight`` when no meaning-related candidate reaches
  ``weak_keyword``, at most ``strong_keyword_vector_weight`` when one reaches ``strong_keyword``
  (the bilingual set wants vectors, dialogue stores with names in every turn want keywords);
* relevance floor — a memory is eligible only when its cosine reaches the floor the relevance
  gate chose or its keyword score reaches the keyword floor (or, for a memory-directed message,
  it shares two content words), so a query can return nothing. The gate: a message that
  addresses the user, asks about the past or refers back gets ``floor``; one whose best
  candidates share a name or a rare term with it ``shared_floor``; any other (general knowledge,
  coding) the strict ``impersonal_floor``;
* time window — a query that names a period ("last week", "上周", "三月份"; ``core.time_words``)
  adds up to ``time_boost`` to matches from that period that are nearly as relevant as the best,
  and one that asks only what was talked about then ranks them first by that alone;
  "recently" names no period and only weighs recency more;
* newer first — between two active results about the same slot (``slots.same_slot``: the
  newer one states a change, they share key terms and are similar enough), the newer ranks
  first; nothing else is re-ordered by date.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

import numpy

from etos_desktop.core.memory.slots import change_cue, is_cjk, same_slot
from etos_desktop.core.retrieval.tuning import Tuning
from etos_desktop.core.retrieval.vectors import FloatArray
from etos_desktop.core.text.segmentation import rough_units

#: A memory of about this many index tokens (an English sentence of a dozen words, a Chinese one
#: of ~25 characters) gets no length penalty in the keyword score.
KEYWORD_REFERENCE_TOKENS = 48
#: How strongly longer memories are penalised: (reference / length) ** exponent. Gentle, because
#: a long dialogue entry must still be findable by its words; BM25's own normalisation (b=0.75)
#: would cut a 40× longer entry's score to a twentieth.
KEYWORD_LENGTH_EXPONENT = 0.25


#: At most this many of the best results are checked pairwise by the same-slot rule.
SLOT_HEAD = 50
#: A newer statement moves above an older one of its slot only when it matches the query at
#: least this well relative to it: on dialogue stores a chatty turn with "现在…了" was lifted
#: over the answer it merely resembled (issue 18).
NEWER_RELATIVE = 0.6


class SearchMode(StrEnum):
    """How search ranks."""

    HYBRID = "hybrid"
    VECTOR = "vector"
    KEYWORD = "keyword"


@dataclass(frozen=True)
class Hit:
    """One search result with the parts its score is made of.

    Attributes:
        id: The memory's id.
        score: What the results are sorted by (higher is better).
        parts: The score's ingredients, for the context trace. Keys (present when they apply):
            ``vector`` (cosine), ``floor`` (the vector floor applied), ``keyword`` (0–1),
            ``vector_weight``, ``relevance`` (the
            blend), ``recency``, ``importance`` and ``confidence`` (the small terms added to
            it), ``newer_first`` (the adjustment that put a newer statement of the same slot
            first),
            ``eligible_vector`` / ``eligible_keyword`` (1.0 when that side passed its floor).
        text: The memory's content.
        kind: The memory's kind.
        created_at: When the memory was saved.
        confidence: The memory's confidence, 0–1.
    """

    id: int
    score: float
    parts: dict[str, float] = field(hash=False)
    text: str
    kind: str
    created_at: datetime
    confidence: float = 1.0


class CandidateRow(NamedTuple):
    """A memory's stored fields as search reads them, before it is scored (``store.candidates``).

    A tuple, not a dataclass: a search reads a few hundred, and a frozen dataclass costs ~3 µs
    to build; the engine builds each :class:`Candidate` once, with its scores.
    """

    id: int
    text: str
    kind: str
    created_at: datetime
    valid_from: datetime
    importance: float
    confidence: float


class Candidate(NamedTuple):
    """A memory considered for a query, with what is known about it.

    A tuple like :class:`CandidateRow`, whose fields it starts with (``Candidate(*row, …)``):
    the engine builds a few hundred per search, ~1 µs each against ~6 for a frozen dataclass.

    Attributes:
        id: The memory's id.
        text: Its content.
        kind: Its kind.
        created_at: When it was saved.
        valid_from: Since when its statement holds (recency and "newer first" use it).
        importance: 0–1.
        confidence: 0–1.
        cosine: Its best chunk's cosine to the query, ``None`` without a vector for the active
            embedder (or without a query vector).
        keyword: Its keyword score (0 when it matched no term).
        in_window: It was created (or became valid) in the period the query names ("last
            week"), see ``core.time_words``.
        shared: The query's terms it contains (the relevance gate and the two-word keyword
            rule read them).
    """

    id: int
    text: str
    kind: str
    created_at: datetime
    valid_from: datetime
    importance: float
    confidence: float
    cosine: float | None
    keyword: float
    in_window: bool = False
    shared: frozenset[str] = frozenset()


#: How many of the best candidates (floor off) the gate looks at for a shared gate term.
GATE_HEAD = 10


def content_units(terms: Collection[str]) -> float:
    """How many content words ``terms`` amount to: Latin words count 1, CJK tokens a half.

    Two CJK bigrams make about one Chinese word ("最喜欢" is two); single CJK characters count
    for nothing (一, 的, 是 are in most memories).
    """
    units = 0.0
    for term in terms:
        if term.isascii():
            units += 1.0
        elif len(term) > 1:
            units += 0.5
    return units


def idf(doc_freq: int, n_docs: int) -> float:
    """A smoothed inverse document frequency that is always positive.

    FTS5's BM25 uses ``log((N − n + 0.5) / (n + 0.5))`` and clamps it to ~0 for terms in half the
    rows, which makes a small store's scores meaningless; ``log(1 + …)`` keeps the order and
    stays positive.
    """
    n_docs = max(n_docs, doc_freq)
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def keyword_score(
    terms: Sequence[str],
    doc_tokens: Collection[str],
    doc_length: int,
    doc_freqs: Mapping[str, int],
    n_docs: int,
) -> float:
    """How well a memory covers a query by words, 0–1.

    Args:
        terms: The query's distinct terms.
        doc_tokens: The memory's index tokens (a set is fastest).
        doc_length: How many tokens the memory has (repeats counted).
        doc_freqs: How many memories contain each term (missing: none).
        n_docs: How many memories are indexed.

    Returns:
        The IDF-weighted share of ``terms`` found in the memory, times
        ``(KEYWORD_REFERENCE_TOKENS / doc_length) ** KEYWORD_LENGTH_EXPONENT`` when the memory
        is longer than the reference.
    """
    return KeywordScorer(terms, doc_freqs, n_docs).score(doc_tokens, doc_length)


class KeywordScorer:
    """:func:`keyword_score` for one query, with the term weights computed once.

    Args:
        terms: The query's distinct terms.
        doc_freqs: How many memories contain each term (missing: none).
        n_docs: How many memories are indexed.
    """

    def __init__(self, terms: Sequence[str], doc_freqs: Mapping[str, int], n_docs: int) -> None:
        self._weights = {term: idf(doc_freqs.get(term, 0), n_docs) for term in terms}
        self._total = sum(self._weights.values())

    def score(self, doc_tokens: Collection[str], doc_length: int) -> float:
        """The keyword score of one memory.

        Args:
            doc_tokens: Its index tokens, or only the query's terms among them (all this reads).
            doc_length: How many index tokens it has (repeats counted).
        """
        if self._total <= 0.0 or not doc_tokens:
            # Most vector candidates contain no query term: nothing to add up.
            return 0.0
        matched = sum(w for term, w in self._weights.items() if term in doc_tokens)
        if matched <= 0.0:
            return 0.0
        length = max(doc_length, KEYWORD_REFERENCE_TOKENS)
        factor: float = (KEYWORD_REFERENCE_TOKENS / length) ** KEYWORD_LENGTH_EXPONENT
        return (matched / self._total) * factor


def _relevance(candidate: Candidate, *, mode: SearchMode, tuning: Tuning, weight: float) -> float:
    """The candidate's relevance in ``mode``, before the time boost and the small terms."""
    cosine, keyword = candidate.cosine, candidate.keyword
    if mode is SearchMode.KEYWORD:
        return keyword
    if mode is SearchMode.VECTOR:
        return -1.0 if cosine is None else cosine
    if cosine is None:
        return keyword
    return weight * tuning.scale_vector(cosine) + (1.0 - weight) * tuning.scale_keyword(keyword)


class _Scoring(NamedTuple):
    """What scoring every candidate of one query shares (:func:`rank`)."""

    mode: SearchMode
    tuning: Tuning
    floor: float
    now: datetime
    apply_floor: bool
    time_only: bool
    recency_weight: float
    directed: bool


def _eligibility(candidate: Candidate, how: _Scoring) -> tuple[bool, bool, bool]:
    """Whether the candidate passes the vector floor, the keyword floor, the period."""
    cosine, keyword = candidate.cosine, candidate.keyword
    by_vector = cosine is not None and cosine >= how.floor
    # Two shared content words make a match only for a memory-directed message: "how do I
    # sort a list by the second element" shares two words with a chat turn by chance.
    by_keyword = keyword > 0.0 and (
        keyword >= how.tuning.keyword_floor
        or (how.directed and content_units(candidate.shared) >= how.tuning.keyword_min_units)
    )
    # "What did we talk about last week?" names no subject: being from that week is relevance.
    by_time = candidate.in_window and how.time_only
    return by_vector, by_keyword, by_time


def _small_terms(candidate: Candidate, how: _Scoring) -> tuple[float, float, float]:
    """The hybrid score's recency, importance and confidence terms."""
    tuning = how.tuning
    age_days = (how.now - candidate.valid_from).total_seconds() / 86400.0
    return (
        how.recency_weight * (tuning.recency(age_days) - 1.0),
        tuning.importance_weight * (candidate.importance - 0.5),
        tuning.confidence_weight * (candidate.confidence - 1.0),
    )


def _score(candidate: Candidate, how: _Scoring, boost: float, relevance: float) -> float | None:
    """The candidate's score, or ``None`` when it is not eligible (:func:`_parts` explains it).

    Only the score: a search scores a few hundred candidates and shows ``k``, so the parts are
    put together for the best ones only, from the same expressions.
    """
    by_vector, by_keyword, by_time = _eligibility(candidate, how)
    cosine, keyword = candidate.cosine, candidate.keyword
    if how.mode is SearchMode.KEYWORD:
        eligible = (
            (by_keyword or by_time) if how.apply_floor else (keyword > 0.0 or candidate.in_window)
        )
        return keyword + boost if eligible else None
    if how.mode is SearchMode.VECTOR:
        if cosine is None or (how.apply_floor and not (by_vector or by_time)):
            return None
        return cosine + boost
    if how.apply_floor and not (by_vector or by_keyword or by_time):
        return None
    if not how.apply_floor and cosine is None and keyword <= 0.0 and not candidate.in_window:
        return None
    recency, importance, confidence = _small_terms(candidate, how)
    return relevance + boost + recency + importance + confidence


def _parts(
    candidate: Candidate, how: _Scoring, boost: float, relevance: float, vector_weight: float
) -> dict[str, float]:
    """What an eligible candidate's :func:`_score` is made of (``Hit.parts``)."""
    by_vector, by_keyword, by_time = _eligibility(candidate, how)
    cosine, keyword = candidate.cosine, candidate.keyword
    parts: dict[str, float] = {"keyword": keyword}
    if cosine is not None:
        parts["vector"] = cosine
        parts["floor"] = how.floor
    parts["eligible_vector"] = float(by_vector)
    parts["eligible_keyword"] = float(by_keyword)
    if candidate.in_window:
        parts["time_window"] = boost
        parts["eligible_time"] = float(by_time)
    if how.mode is SearchMode.HYBRID:
        if cosine is not None:
            parts["vector_weight"] = vector_weight
        parts["relevance"] = relevance
        parts["recency"], parts["importance"], parts["confidence"] = _small_terms(candidate, how)
    return parts


def _newer_in_slot(
    scored: list[tuple[float, dict[str, float], Candidate]],
    vectors: Mapping[int, FloatArray],
    threshold: float,
) -> None:
    """Put a newer statement above an older active one of the same slot (``slots.same_slot``).

    Pairwise and narrow on purpose: only a result whose text carries a change cue moves, only
    above an older result of the same kind that it shares key terms with and is at least
    ``threshold`` similar to. Re-sorting whole clusters of similar results by date (the step
    this replaces) chained most of a dialogue store's results into one group and put ranking
    below keyword search alone (issue 10).
    """
    cues = {c.id: change_cue(c.text) for _, _, c in scored}
    for j in range(1, len(scored)):
        score_b, parts_b, newer = scored[j]
        if cues[newer.id] is None or newer.id not in vectors:
            continue
        for i in range(j):
            score_a, parts_a, older = scored[i]
            if (
                older.kind != newer.kind
                or older.valid_from >= newer.valid_from
                or older.id not in vectors
                or (
                    # Across languages both channels under-rate one of the two statements:
                    # their meaning (same_slot below) decides.
                    is_cjk(newer.text) == is_cjk(older.text)
                    and parts_b.get("relevance", 0.0)
                    < NEWER_RELATIVE * parts_a.get("relevance", 0.0)
                )
            ):
                continue
            similarity = float(numpy.dot(vectors[older.id], vectors[newer.id]))
            if same_slot(newer.text, older.text, similarity, threshold) is None:
                continue
            lifted = score_a + 1e-6
            parts_b["newer_first"] = lifted - score_b
            scored.insert(i, (lifted, parts_b, newer))
            del scored[j + 1]
            break


def _gate_units(
    candidate: Candidate,
    terms: frozenset[str],
    names: frozenset[str],
    lead: float,
    tuning: Tuning,
    unique: frozenset[str] = frozenset(),
    best: bool = False,
) -> tuple[float, float]:
    """What one of the best candidates shares with the query, for the relevance gate.

    A shared name counts as much as any number of words (``math.inf``). Fewer rare words than
    ``tuning.gate_peak_units`` count only when the candidate stands out from the pack (its
    relevance at least ``tuning.gate_peak`` above the one at rank ``tuning.gate_peak_rank``) or
    is the best and shares a term found in at most two memories.

    Args:
        candidate: The candidate.
        terms: The query's gate terms (rare content terms and names).
        names: The query's names among them.
        lead: The candidate's relevance minus the one at rank ``tuning.gate_peak_rank``.
        tuning: The active tuning.
        unique: The gate terms found in at most two memories.
        best: The candidate is the best one (floor off).

    Returns:
        The units that count for the gate, and the units shared before the standing-out
        check (``rank`` gives the second ``weak_lead_floor``).
    """
    if candidate.shared & names:
        return math.inf, math.inf
    units = content_units(candidate.shared & terms)
    if (
        units < tuning.gate_peak_units
        and lead < tuning.gate_peak
        and not (best and candidate.shared & unique)
    ):
        return 0.0, units
    return units, units


def rank(
    candidates: Sequence[Candidate],
    *,
    mode: SearchMode,
    tuning: Tuning,
    query_units: float,
    now: datetime,
    k: int,
    apply_floor: bool = True,
    personal: bool = True,
    whole_text_vectors: Callable[[Sequence[int]], Mapping[int, FloatArray]] | None = None,
    time_only: bool = False,
    query_names: bool = False,
    gate_terms: Collection[str] = (),
    prefer_recent: bool = False,
    gate_names: Collection[str] = (),
    gate_unique: Collection[str] = (),
) -> list[Hit]:
    """Score, filter and order candidates.

    Args:
        candidates: Active memories with their cosine and keyword scores.
        mode: Hybrid, vector or keyword ranking.
        tuning: The active embedder's floors and weights.
        query_units: The query's length (``segmentation.query_units``); with ``query_names``
            and each entry's length it picks the vector weight (``Tuning.vector_weight``).
        now: The current time (for recency).
        k: The most hits returned.
        apply_floor: ``False`` returns the best ``k`` with any signal, eligible or not.
        personal: Whether the message itself is memory-directed (it addresses the user,
            carries a recall cue or refers back). When it is not, it still is when one of its
            ``GATE_HEAD`` best candidates shares a name or a rare term with it (the relevance
            gate, DESIGN §5.3; ``shared_floor`` then); otherwise the embedder's strict
            ``impersonal_floor`` applies.
        whole_text_vectors: Looks up memories' whole-text vectors for the same-slot rule
            between results (hybrid only; ``None`` skips that step).
        time_only: The query names a period and no subject ("what did we talk about last
            week?"): candidates from the period (``Candidate.in_window``) are eligible without
            a floor. Otherwise a candidate from the period gets ``tuning.time_boost`` only when
            its relevance is close to the best (``tuning.time_relative``): the period reorders
            matches of similar relevance and never lifts an unrelated memory over a matching one.
        query_names: The query has names, numbers or titles (``names_or_numbers``).
        gate_terms: The query's rare content terms and names (``engine.gate_terms``): a best
            candidate sharing one of ``gate_names`` or ``tuning.gate_min_units`` of these makes
            the query memory-directed.
        gate_names: The query's names among ``gate_terms``.
        gate_unique: The query's ``gate_terms`` found in at most two memories: the best
            candidate sharing one passes the gate without standing out (``Tuning.gate_peak``).
        prefer_recent: The query asks for recent things without naming a period ("recently",
            "最近"): recency weighs ``tuning.recent_weight`` (at least); no window.

    Returns:
        Up to ``k`` hits, best first; possibly none.
    """
    if k <= 0:
        return []
    by_entry = mode is SearchMode.HYBRID and tuning.long_entry_shift != 0.0
    # How well the query's words are covered in the store, by memories whose meaning is not
    # unrelated: a distractor sharing "favourite" (cosine 0.14) says nothing of the query.
    related = sorted(
        (
            c.keyword
            for c in candidates
            if c.cosine is None or c.cosine >= tuning.strong_keyword_min_cosine
        ),
        reverse=True,
    )
    keyword_max = related[0] if related else 0.0
    if tuning.keyword_peak_rank > 0:
        # How far the best word match stands out: a rare term (a title, a name) matches one
        # or two memories; a common word matches many about equally.
        nth = related[tuning.keyword_peak_rank] if len(related) > tuning.keyword_peak_rank else 0.0
        keyword_max -= nth
    if by_entry:
        weights = [
            tuning.blend_weight(query_units, query_names, rough_units(c.text), keyword_max)
            for c in candidates
        ]
    else:
        # Without the entry's length in it, the weight is the same for every candidate.
        weights = [tuning.blend_weight(query_units, query_names, None, keyword_max)] * len(
            candidates
        )
    relevances = [
        _relevance(c, mode=mode, tuning=tuning, weight=w)
        for c, w in zip(candidates, weights, strict=True)
    ]
    # How much the best candidates share with the query: a name counts as much as any words.
    shared_units = weak_units = 0.0
    if not personal and gate_terms:
        order = sorted(range(len(candidates)), key=lambda i: -relevances[i])
        peak_rank = tuning.gate_peak_rank
        pack = relevances[order[peak_rank]] if len(order) > peak_rank else 0.0
        terms, names = frozenset(gate_terms), frozenset(gate_names)
        unique = frozenset(gate_unique)
        for r, i in enumerate(order[:GATE_HEAD]):
            counted, found = _gate_units(
                candidates[i], terms, names, relevances[i] - pack, tuning, unique, r == 0
            )
            shared_units = max(shared_units, counted)
            weak_units = max(weak_units, found)
    shared = shared_units >= tuning.gate_min_units
    floor = tuning.vector_floor(personal, shared_units)
    if not personal and not shared and weak_units >= tuning.gate_min_units:
        # Shared words, but their memory does not stand out from the pack: weak evidence.
        floor = max(tuning.floor, min(tuning.weak_lead_floor, tuning.impersonal_floor))
    if not personal and not shared and weak_units < tuning.gate_min_units and apply_floor:
        # Nothing shared, but the best candidate stands far out of the pack: a paraphrase.
        order = sorted(range(len(candidates)), key=lambda i: -relevances[i])
        if len(order) > tuning.gate_peak_rank and (
            relevances[order[0]] - relevances[order[tuning.gate_peak_rank]]
            >= tuning.impersonal_lead
        ):
            floor = max(tuning.floor, min(floor, tuning.impersonal_lead_floor))
    best = max(relevances, default=0.0)
    recency_weight = (
        max(tuning.recency_weight, tuning.recent_weight) if prefer_recent else tuning.recency_weight
    )
    how = _Scoring(
        mode=mode,
        tuning=tuning,
        floor=floor,
        now=now,
        apply_floor=apply_floor,
        time_only=time_only,
        recency_weight=recency_weight,
        directed=personal or shared,
    )
    boosts: list[float] = []
    ranked: list[tuple[float, int]] = []
    for i, (candidate, relevance) in enumerate(zip(candidates, relevances, strict=True)):
        boost = 0.0
        if candidate.in_window and time_only:
            # "What did we talk about last week?": being from that week is the relevance, so
            # every memory from it ranks above every other, whatever their cosines.
            boost = 1.0
        elif candidate.in_window and best > 0.0 and relevance >= tuning.time_relative * best:
            # Full for a match as good as the best, a quarter at half of it: the period
            # reorders similar matches and never lifts a weaker one far (issue 18).
            boost = tuning.time_boost * min(1.0, relevance / best) ** 2
        boosts.append(boost)
        score = _score(candidate, how, boost, relevance)
        if score is not None:
            ranked.append((score, i))
    ranked.sort(key=lambda item: (-item[0], -candidates[item[1]].id))
    # Parts only for what can be shown: the head the same-slot rule reorders, and k.
    use_slots = mode is SearchMode.HYBRID and whole_text_vectors is not None and len(ranked) > 1
    head_size = min(max(2 * k, 10), SLOT_HEAD) if use_slots else 0
    directed = 1.0 if personal else 0.5 if shared else 0.0
    scored: list[tuple[float, dict[str, float], Candidate]] = []
    for score, i in ranked[: max(k, head_size)]:
        parts = _parts(candidates[i], how, boosts[i], relevances[i], weights[i])
        parts["directed"] = directed
        scored.append((score, parts, candidates[i]))
    if use_slots and whole_text_vectors is not None:
        # Pairwise and quadratic: only the head a caller can see is considered.
        head_items = scored[:head_size]
        _newer_in_slot(
            head_items,
            whole_text_vectors([c.id for _, _, c in head_items]),
            tuning.same_slot_query_similarity,
        )
        scored[: len(head_items)] = head_items
    return [
        Hit(
            id=c.id,
            score=float(score),
            parts={key: float(value) for key, value in parts.items()},
            text=c.text,
            kind=c.kind,
            created_at=c.created_at,
            confidence=c.confidence,
        )
        for score, parts, c in scored[:k]
    ]
