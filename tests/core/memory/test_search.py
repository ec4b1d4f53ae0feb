"""Search modes, floors, score parts and the pure ranking functions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy
import numpy.typing
import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.errors import InvalidInput, ProviderUnavailable
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.memory.search import Candidate, SearchMode, idf, keyword_score, rank
from etos_desktop.core.retrieval.tuning import Tuning
from tests.helpers.embedders import HashEmbedder

MEMORIES = [
    "I am allergic to peanuts",
    "My daughter Lily is six years old",
    "I use pnpm for JavaScript projects",
    "我住在杭州西湖区",
    "我养了一只叫豆豆的柯基",
    "我每天早上跑步五公里",
    "Please answer in short bullet points",
]

WEIRD_QUERIES = [
    '"',
    '""',
    "*",
    "pn*",
    "NEAR(peanut allergic)",
    "peanut NOT lily",
    "a:b",
    "^peanut",
    "-peanut",
    "(((",
    "' OR 1=1 --",
    "memory_fts MATCH x",
    "",
    "   ",
    "😀",
]


class FlakyEmbedder(HashEmbedder):
    """A hash embedder whose service can be switched off."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
        if self.down:
            raise ProviderUnavailable("connection refused")
        return super().embed(texts)


@pytest.fixture
def filled(engine: MemoryEngine) -> tuple[MemoryEngine, list[int]]:
    return engine, engine.add_many(MEMORIES)


def test_keyword_mode_finds_words_and_short_cjk(filled: tuple[MemoryEngine, list[int]]) -> None:
    engine, ids = filled
    assert [h.id for h in engine.search("peanuts", mode="keyword")] == [ids[0]]
    assert [h.id for h in engine.search("杭", mode="keyword")] == [ids[3]]
    assert [h.id for h in engine.search("柯基", mode="keyword")] == [ids[4]]
    assert [h.id for h in engine.search("PNPM?", mode="keyword")] == [ids[2]]
    hit = engine.search("跑步", mode="keyword")[0]
    assert hit.id == ids[5]
    assert hit.score == hit.parts["keyword"] == pytest.approx(1.0)
    assert hit.text == MEMORIES[5]
    assert hit.kind == "fact"


def test_keyword_queries_or_their_terms(filled: tuple[MemoryEngine, list[int]]) -> None:
    engine, ids = filled
    hits = engine.search("peanuts daughter", mode="keyword", apply_floor=False)
    assert {h.id for h in hits} == {ids[0], ids[1]}


@pytest.mark.parametrize("query", WEIRD_QUERIES)
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_fts_syntax_in_queries_never_errors(
    filled: tuple[MemoryEngine, list[int]], query: str, mode: str
) -> None:
    engine, ids = filled
    hits = engine.search(query, mode=mode, apply_floor=False)
    assert all(h.id in ids for h in hits)


def test_vector_mode_ranks_by_cosine(filled: tuple[MemoryEngine, list[int]]) -> None:
    engine, ids = filled
    hits = engine.search("my daughter Lily", mode="vector")
    assert hits[0].id == ids[1]
    assert hits[0].score == hits[0].parts["vector"]
    assert all(h.parts["vector"] >= engine.tuning.floor for h in hits)


def test_vector_mode_without_embedder_returns_nothing(lexical: MemoryEngine) -> None:
    lexical.save("I am allergic to peanuts")
    assert lexical.search("peanuts", mode="vector", apply_floor=False) == []
    [hit] = lexical.search("peanuts")
    assert "vector" not in hit.parts
    assert hit.parts["relevance"] == hit.parts["keyword"]


def test_hybrid_hits_carry_their_score_parts(filled: tuple[MemoryEngine, list[int]]) -> None:
    engine, ids = filled
    [hit, *_] = engine.search("allergic to peanuts")
    assert hit.id == ids[0]
    parts = hit.parts
    assert {"vector", "keyword", "vector_weight", "relevance", "recency", "importance"} <= set(
        parts
    )
    assert parts["eligible_vector"] == 1.0
    assert parts["eligible_keyword"] == 1.0
    tuning = engine.tuning
    expected = (
        parts["vector_weight"] * tuning.scale_vector(parts["vector"])
        + (1 - parts["vector_weight"]) * parts["keyword"]
    )
    assert parts["relevance"] == pytest.approx(expected)
    assert hit.score == pytest.approx(
        parts["relevance"] + parts["recency"] + parts["importance"] + parts["confidence"]
    )


def test_vector_weight_follows_the_query_shape(filled: tuple[MemoryEngine, list[int]]) -> None:
    engine, _ = filled
    short = engine.search("peanuts allergy", apply_floor=False)[0].parts["vector_weight"]
    long_query = (
        "so the other day we were talking about what I can and cannot eat at the party and I "
        "said that peanuts are a problem for me, what was it exactly that I told you then"
    )
    long = engine.search(long_query, apply_floor=False)[0].parts["vector_weight"]
    assert short == engine.tuning.vector_weight_short
    assert long == engine.tuning.vector_weight_long
    assert long > short


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_unrelated_queries_return_nothing(
    filled: tuple[MemoryEngine, list[int]], mode: str
) -> None:
    engine, _ = filled
    for query in ("How do I reverse a list in Python?", "解释一下量子纠缠", "capital of France"):
        assert engine.search(query, mode=mode) == []
    assert engine.search("How do I reverse a list in Python?", mode=mode, apply_floor=False) or (
        mode == "keyword"
    )


def test_weak_keyword_match_alone_is_not_enough(filled: tuple[MemoryEngine, list[int]]) -> None:
    engine, ids = filled
    # "projects" matches one memory, but it is a small part of the question
    query = "how should I structure large projects with many modules and tests"
    hits = engine.search(query, mode="keyword", apply_floor=False)
    assert [h.id for h in hits] == [ids[2]]
    assert hits[0].parts["keyword"] < engine.tuning.keyword_floor
    assert engine.search(query, mode="keyword") == []


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_archived_and_expired_are_never_returned(
    engine: MemoryEngine, clock: FakeClock, mode: str
) -> None:
    archived = engine.save("I love hiking in the Alps").id
    engine.save("I love hiking in Norway", valid_until=clock.now() + timedelta(hours=1))
    live = engine.save("I love hiking in Japan").id
    engine.archive(archived)
    clock.advance(hours=1)
    hits = engine.search("love hiking", mode=mode, apply_floor=False, k=10)
    assert [h.id for h in hits] == [live]


@pytest.mark.logs(r"embedding failed, memory kept for keyword search only")
def test_memories_without_a_vector_fall_back_to_keyword(tmp_path: Path, clock: FakeClock) -> None:
    embedder = FlakyEmbedder()
    with MemoryEngine.open(tmp_path / "m.db", embedder=embedder, clock=clock) as engine:
        embedder.down = True
        saved = engine.save("I am allergic to peanuts").id  # saved although embedding failed
        embedder.down = False
        engine.save("peanut butter is in the cupboard")
        hits = {h.id: h for h in engine.search("allergic peanuts", apply_floor=False)}
        assert "vector" not in hits[saved].parts
        assert hits[saved].parts["relevance"] == hits[saved].parts["keyword"]
        assert engine.search("allergic peanuts", mode="vector", k=10, apply_floor=False)
        assert saved not in {h.id for h in engine.search("allergic", mode="vector", k=10)}
        assert engine.embedding_status() == (1, 2)
        assert engine.reembed() == 1
        assert "vector" in engine.search("allergic peanuts")[0].parts


@pytest.mark.logs(
    r"embedding failed, memory kept for keyword search only",
    r"query embedding failed; keyword search only",
)
def test_query_embedding_failure(tmp_path: Path, clock: FakeClock) -> None:
    embedder = FlakyEmbedder()
    with MemoryEngine.open(tmp_path / "m.db", embedder=embedder, clock=clock) as engine:
        memory_id = engine.save("I am allergic to peanuts").id
        embedder.down = True
        [hit] = engine.search("allergic peanuts")
        assert hit.id == memory_id
        assert "vector" not in hit.parts
        with pytest.raises(ProviderUnavailable):
            engine.search("allergic peanuts", mode="vector")


def test_unknown_mode_is_refused(engine: MemoryEngine) -> None:
    with pytest.raises(InvalidInput):
        engine.search("x", mode="fuzzy")
    assert engine.search("x", k=0, apply_floor=False) == []


def test_small_terms_order_equal_matches(engine: MemoryEngine, clock: FakeClock) -> None:
    unsure = engine.save("likes jazz music", confidence=0.3, bulk=True).id
    stated = engine.save("likes jazz music", bulk=True).id
    important = engine.save("likes jazz music", importance=1.0, bulk=True).id
    old = engine.save(
        "likes jazz music", created_at=clock.now() - timedelta(days=360), bulk=True
    ).id
    hits = engine.search("jazz music", k=4)
    assert [h.id for h in hits] == [important, stated, old, unsure]
    assert hits[2].parts["recency"] == pytest.approx(-0.05 * (1 - 0.25), abs=1e-3)


# -- pure functions ----------------------------------------------------------------------------


def test_idf_is_positive_and_decreasing() -> None:
    assert idf(1, 1) > 0
    assert idf(0, 100) > idf(1, 100) > idf(50, 100) > idf(100, 100) > 0
    assert idf(5, 3) > 0  # a racing count never makes it negative


def test_keyword_score_is_an_idf_weighted_share_with_a_length_factor() -> None:
    freqs = {"rare": 1, "common": 90}
    both = keyword_score(["rare", "common"], {"rare", "common"}, 10, freqs, 100)
    rare = keyword_score(["rare", "common"], {"rare"}, 10, freqs, 100)
    common = keyword_score(["rare", "common"], {"common"}, 10, freqs, 100)
    assert both == pytest.approx(1.0)
    assert rare + common == pytest.approx(1.0)
    assert rare > 0.8 > 0.2 > common
    assert keyword_score(["x"], {"y"}, 10, {}, 10) == 0.0
    assert keyword_score([], {"y"}, 10, {}, 10) == 0.0
    long = keyword_score(["rare"], {"rare"}, 48 * 16, freqs, 100)
    assert long == pytest.approx(0.5)


def _candidate(memory_id: int, **changes: object) -> Candidate:
    base = Candidate(
        id=memory_id,
        text=f"m{memory_id}",
        kind="fact",
        created_at=FakeClock().now(),
        valid_from=FakeClock().now(),
        importance=0.5,
        confidence=1.0,
        cosine=None,
        keyword=0.0,
    )
    return base._replace(**changes)  # type: ignore[arg-type]


def test_rank_applies_the_floors_per_mode() -> None:
    tuning = Tuning(floor=0.3, keyword_floor=0.5, vector_low=0.0, vector_high=1.0)
    now = FakeClock().now()
    candidates = [
        _candidate(1, cosine=0.9, keyword=0.0),
        _candidate(2, cosine=0.1, keyword=0.6),
        _candidate(3, cosine=0.2, keyword=0.2),
        _candidate(4, cosine=None, keyword=0.7),
    ]

    def ids(mode: SearchMode, apply_floor: bool = True) -> list[int]:
        hits = rank(
            candidates,
            mode=mode,
            tuning=tuning,
            query_units=3,
            now=now,
            k=10,
            apply_floor=apply_floor,
        )
        return [h.id for h in hits]

    assert ids(SearchMode.VECTOR) == [1]
    assert ids(SearchMode.VECTOR, apply_floor=False) == [1, 3, 2]
    assert ids(SearchMode.KEYWORD) == [4, 2]
    assert ids(SearchMode.KEYWORD, apply_floor=False) == [4, 2, 3]
    assert ids(SearchMode.HYBRID) == [4, 1, 2]
    assert set(ids(SearchMode.HYBRID, apply_floor=False)) == {1, 2, 3, 4}
    assert rank([], mode=SearchMode.HYBRID, tuning=tuning, query_units=1, now=now, k=3) == []


def test_impersonal_queries_need_the_higher_floor(engine: MemoryEngine) -> None:
    memory_id = engine.save("the user drives a blue tesla to the office").id
    tuning = engine.with_tuning(floor=0.3, impersonal_floor=0.9)
    personal = engine.search("which tesla drives me to the office", tuning=tuning, mode="vector")
    assert [h.id for h in personal] == [memory_id]
    assert personal[0].parts["floor"] == 0.3
    assert engine.search("which tesla drives to the office", tuning=tuning, mode="vector") == []
    # the model's own search_memory queries are third-person by nature: plain floor
    hits = engine.search(
        "which tesla drives to the office", tuning=tuning, mode="vector", from_user=False
    )
    assert [h.id for h in hits] == [memory_id]
    assert tuning.vector_floor(personal=False) == 0.9
    assert engine.with_tuning(impersonal_floor=0.1).vector_floor(personal=False) == 0.3


def test_only_selective_terms_preselect_keyword_candidates() -> None:
    from etos_desktop.core.memory.engine import selective_terms

    frequencies = {"我": 9_000, "的": 8_000, "证书": 40, "复习": 450}
    # A big store: terms in more than a twentieth of it do not pre-select.
    assert selective_terms(["我", "的", "证书", "复习"], frequencies, 10_000) == ["证书", "复习"]
    # Every term common: the three rarest still do.
    assert selective_terms(
        ["我", "的", "在", "是"], {"我": 9_000, "的": 8_000, "在": 7_000, "是": 9_500}, 10_000
    ) == ["在", "的", "我"]
    # A small store: every term.
    assert selective_terms(["我", "证书"], {"我": 90, "证书": 2}, 100) == ["我", "证书"]
