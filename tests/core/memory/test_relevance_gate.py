"""What is sent keeps what is found (issue 18): the relevance gate, not a first-person test.

A generated store in the shape of a real one — a user's life with the people in it (a partner, a
daughter, a colleague, a cat), several hundred dated entries, far more than the "All that fit"
budget (1,500 tokens) — and questions people ask about it without saying "I": about the people
("How old is Mia?", "Daniel 在哪里上班？"), comparisons and counts, plus general questions no
memory answers. Per-turn retrieval must send (floor on) at least 95 % of what the ranking finds
(floor off) at k = 1, 5, 10, and send something for at most 15 % of the general questions.
Before issue 18 every question without I/my/我 had to clear the 0.45 "impersonal" floor, so
the third-person questions got nothing.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.context.tokens import estimate_tokens
from etos_desktop.core.memory.engine import MemoryEngine

FACTS = {
    "mia_age": "The user's daughter Mia turned seven in March and loves drawing horses.",
    "mia_piano": "Mia has piano lessons with Mrs. Okafor every Saturday at ten.",
    "daniel_job": "Daniel, the user's partner, works as a structural engineer at a bridge firm.",
    "daniel_run": "Daniel runs the Rotterdam half marathon every April.",
    "pixel_food": "Pixel the cat only eats salmon pâté and sleeps on the radiator.",
    "priya_team": "Priya Raman leads the payments team and prefers written updates.",
    "mum_check": "妈妈十月十二号在社区医院做了体检，血压有点高。",
    "lele_school": "乐乐在阳光幼儿园上中班，最喜欢搭积木。",
    "daniel_zh": "Daniel 每周三晚上去攀岩馆练抱石。",
    "trip_porto": "The family flew to Porto in July and stayed near the Ribeira.",
    "trip_kyoto": "In October the user and Daniel spent a week in Kyoto visiting temples.",
    "grandpa": "爷爷今年八十岁，住在杭州西湖边。",
}
QUESTIONS = (
    ("How old is Mia now?", "mia_age"),
    ("Who teaches Mia the piano?", "mia_piano"),
    ("What does Daniel do for a living?", "daniel_job"),
    ("Which race does Daniel run each spring?", "daniel_run"),
    ("What does Pixel eat?", "pixel_food"),
    ("How does Priya like to get updates?", "priya_team"),
    ("妈妈上次体检是哪天？", "mum_check"),
    ("乐乐在哪个幼儿园？", "lele_school"),
    ("Daniel 每周几去攀岩？", "daniel_zh"),
    ("Which came first, the Porto trip or Kyoto?", "trip_porto"),
    ("How long was the stay in Kyoto?", "trip_kyoto"),
    ("爷爷住在哪个城市？", "grandpa"),
)
NOTHING = (
    "What is the speed of light in a vacuum?",
    "Which is bigger, Jupiter or Saturn?",
    "How many legs does a spider have?",
    "谁发明了电话？",
    "地球到月球有多远？",
    "How do I sort a list of tuples by the second element in Python?",
    "解释一下什么是区块链。",
)
FILLER = (
    "Tidied the garage and found the old {x} again.",
    "The weather was grey all week, so the {x} stayed inside.",
    "Ordered a new {x} online; delivery is on Thursday.",
    "Spent the evening sorting photos from the {x} weekend.",
    "周末在家整理了{y}，花了一下午。",
    "楼下的{y}又开始装修了，有点吵。",
    "今天在超市买了{y}，打折挺多。",
)
FILL_X = ("umbrella", "bicycle pump", "camping stove", "board game", "lamp", "kettle", "rug")
FILL_Y = ("书架", "阳台", "衣柜", "厨房", "面馆", "水果", "洗衣机")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, use_embedder: Any) -> Iterator[Any]:
    rng = random.Random(18)
    clock = FakeClock()
    path: Path = tmp_path_factory.mktemp("gate") / "m.db"
    engine = MemoryEngine.open(path, embedder=use_embedder, clock=clock)
    texts = [
        (
            rng.choice(FILLER).format(x=rng.choice(FILL_X), y=rng.choice(FILL_Y)),
            clock.now() - timedelta(days=rng.uniform(1, 400)),
        )
        for _ in range(300)
    ]
    names = list(FACTS)
    for name in names:
        texts.insert(
            rng.randrange(len(texts)),
            (FACTS[name], clock.now() - timedelta(days=rng.uniform(5, 300))),
        )
    ids = engine.add_many([{"text": t, "kind": "fact", "created_at": w} for t, w in texts])
    by_text = {t: i for (t, _), i in zip(texts, ids, strict=True)}
    assert sum(estimate_tokens(t) for t, _ in texts) > 1500  # retrieval chooses, not all-that-fit
    yield engine, {name: by_text[FACTS[name]] for name in names}
    engine.close()


def _hit_at(engine: MemoryEngine, targets: dict[str, int], k: int, floor: bool) -> float:
    found = 0
    for question, name in QUESTIONS:
        hits = engine.search(question, k=k, apply_floor=floor)
        found += targets[name] in [h.id for h in hits]
    return found / len(QUESTIONS)


@pytest.mark.parametrize("k", [1, 5, 10])
def test_what_is_sent_keeps_what_the_ranking_finds(store: Any, k: int) -> None:
    engine, targets = store
    found = _hit_at(engine, targets, k, floor=False)
    sent = _hit_at(engine, targets, k, floor=True)
    assert found >= 0.75, (k, found)
    assert sent >= 0.95 * found, (k, found, sent)


def test_general_questions_mostly_get_nothing(store: Any) -> None:
    engine, _ = store
    injected = [q for q in NOTHING if engine.search(q, k=5)]
    assert len(injected) / len(NOTHING) <= 0.15, injected
