"""Hybrid search never ranks worse than either of its own channels (DESIGN §5.3, issue 10).

A small generated store in the shape of a real one — many same-topic dialogue turns in English
and Chinese, a few turns carrying facts — and two kinds of questions: some answered best by
words (names, numbers), some only by meaning (paraphrases). The property, at k = 1, 5 and 10:
hybrid hit@k ≥ max(keyword hit@k, vector hit@k) − 0.01. Run with the app's default embedder.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine

TOPICS = {
    "cooking": (
        "I tried {x} again tonight and it came out a bit dry.",
        "How long should {x} stay in the oven?",
        "My partner liked {x}, but it was too salty for the kids.",
        "For {x}, keep the heat medium so nothing burns.",
        "我周末想做{y}，还得去买点调料。",
        "{y}出锅前再放葱花会更香。",
    ),
    "running": (
        "I ran along {x} this morning and my pace was better.",
        "My calf felt tight on {x}, should I rest tomorrow?",
        "Intervals along {x} once a week would help your speed.",
        "今天在{y}跑了十公里，有点累。",
        "在{y}慢跑的时候下雨了，但还是挺开心。",
    ),
    "work": (
        "Today my manager asked me to take over {x}.",
        "We had a long meeting about {x} and nothing was decided.",
        "Maybe block two hours in your calendar just for {x}.",
        "下午一直在弄{y}，比想象的慢。",
        "{y}越做越多，压力有点大。",
    ),
}
FILL = {
    "cooking": (
        ("the risotto", "the lentil curry", "the roast chicken", "the pumpkin soup"),
        ("红烧肉", "酸菜鱼", "麻婆豆腐", "葱油饼"),
    ),
    "running": (
        ("the river loop", "the park trail", "the canal path", "the harbour"),
        ("江边", "公园步道", "运河边", "体育场"),
    ),
    "work": (
        ("the billing service", "the data migration", "the quarterly review", "the dashboard"),
        ("结算系统", "数据迁移", "季度汇报", "监控大盘"),
    ),
}
# (fact turn, question). Words: names and numbers the question repeats. Meaning: paraphrases.
FACTS = (
    (
        "My commuter bike is a green Gazelle I bought second-hand for 240 euros.",
        "What did I pay for the Gazelle?",
    ),
    (
        "Our cat Biscuit is a ginger tabby from the shelter on the Mauritskade.",
        "Where did Biscuit come from?",
    ),
    (
        "My team lead is now Priya Raman, she wants one-to-ones on Thursdays.",
        "When are my meetings with Priya?",
    ),
    (
        "We booked two weeks in Porto from 20 July, flying from Eindhoven.",
        "Which airport do we fly from to Porto?",
    ),
    ("我们部门新来的总监叫林晓，以前在阿里做支付。", "林晓以前在哪家公司？"),
    ("我报名了明年四月的鹿特丹马拉松，目标四小时以内。", "鹿特丹马拉松我想跑进几小时？"),
    (
        "One thing for recipes: I'm allergic to cashews, they give me hives.",
        "Which nuts make me ill?",
    ),
    (
        "The dentist said I grind my teeth at night, so I wear a guard now.",
        "Why is my jaw sore in the mornings?",
    ),
    (
        "I'm terrified of flying, I take the train whenever I can.",
        "How do I prefer to travel long distances?",
    ),
    ("我对花粉过敏，春天出门一定要带药。", "春天我身体有什么问题？"),
    ("女儿最喜欢的科目是数学，最怕写作文。", "孩子在学校哪门课学得最开心？"),
    ("我每天晚上十点半就睡觉，早上六点起床。", "我的作息是怎样的？"),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, use_embedder: Any) -> Iterator[Any]:
    rng = random.Random(7)
    clock = FakeClock()
    path: Path = tmp_path_factory.mktemp("blend") / "m.db"
    engine = MemoryEngine.open(path, embedder=use_embedder, clock=clock)
    texts = []
    for i in range(240):
        topic = rng.choice(list(TOPICS))
        en, zh = FILL[topic]
        turn = [
            rng.choice(TOPICS[topic]).format(x=rng.choice(en), y=rng.choice(zh))
            for _ in range(rng.choice((1, 2, 3)))
        ]
        texts.append((" ".join(turn), clock.now() - timedelta(days=300 - i)))
    for fact, _ in FACTS:
        texts.insert(rng.randrange(len(texts)), (fact, clock.now() - timedelta(days=100)))
    ids = engine.add_many([{"text": t, "kind": "episode", "created_at": w} for t, w in texts])
    by_text = {t: i for (t, _), i in zip(texts, ids, strict=True)}
    yield engine, [(by_text[fact], question) for fact, question in FACTS]
    engine.close()


def hit_at(
    engine: MemoryEngine,
    questions: list[tuple[int, str]],
    mode: str,
    k: int,
    apply_floor: bool = True,
) -> float:
    found = 0
    for target, question in questions:
        hits = engine.search(question, k=k, mode=mode, apply_floor=apply_floor)
        found += target in [h.id for h in hits]
    return found / len(questions)


def channels(
    engine: MemoryEngine, questions: list[tuple[int, str]], k: int, apply_floor: bool = True
) -> tuple[float, float, float]:
    """hit@k of keyword, vector and hybrid search."""
    keyword, vector, hybrid = (
        hit_at(engine, questions, mode, k, apply_floor) for mode in ("keyword", "vector", "hybrid")
    )
    return keyword, vector, hybrid


@pytest.mark.parametrize("k", [1, 5, 10])
def test_hybrid_is_never_worse_than_either_channel(store: Any, k: int) -> None:
    engine, questions = store
    keyword, vector, hybrid = channels(engine, questions, k)
    assert hybrid >= max(keyword, vector) - 0.01, (k, keyword, vector, hybrid)
