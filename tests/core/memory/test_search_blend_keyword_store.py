"""Hybrid never loses to keyword search on a keyword-dominated dialogue store (issue 18).

``test_search_blend`` holds the property on a store where meaning matters most; this one is the
other side: two friends chatting, their names in every turn, chit-chat about the same topics in
the same words, and facts that share one rare word (a title, a breed, a place) with the short
third-person question that asks for them. Keyword search finds those; the embedder prefers the
chit-chat ("Wow, Nadia! Books have such an awesome power!"). Together with ``test_search_blend``
this fails when the blend weight is fixed at 0.95 (here) or at 0.05 (there).
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
from tests.core.memory.test_search_blend import channels

FACTS = (
    (
        "Tomas: Nadia, my sister adopted a greyhound called Biscotti.",
        "What is the greyhound called?",
    ),
    ("Nadia: Tomas, I signed up for a ceramics class on Thursdays.", "When is the ceramics class?"),
    ("Tomas: Nadia, the band I play in is called Velvet Tram.", "Which band does Tomas play in?"),
    ("Nadia: I booked a cabin in the Ardennes for May, Tomas.", "Where is the cabin Nadia booked?"),
    (
        "Tomas: Nadia, my doctor says my vitamin D is low.",
        "What is low for Tomas, says the doctor?",
    ),
    ("Nadia: Tomas, I'm learning the cello with Mr. Aalders.", "Who teaches Nadia the cello?"),
    ("Tomas: I bought a Brompton to fold on the train, Nadia.", "Which bike is the Brompton for?"),
    (
        "Nadia: Tomas, we're repainting the kitchen sage green.",
        "What colour is the kitchen repaint?",
    ),
    ("阿梅：小林，我报了一个陶艺班，每周四晚上上课。", "阿梅的陶艺班在星期几？"),
    ("小林：阿梅，我家的狗叫豆包，是只柯基。", "小林家的柯基叫什么？"),
    ("阿梅：小林，我最近在读《百年孤独》，写得真好。", "《百年孤独》是谁在读？"),
    ("小林：阿梅，下个月我去成都出差，顺便吃火锅。", "小林去成都做什么？"),
)
#: Beside each fact, turns about the same thing in the question's own words but without its
#: rare word: what an embedder ranks first.
DECOYS = (
    (
        "Nadia: Tomas, what name would you give a new dog?",
        "Tomas: Nadia, I forget the puppy's name again.",
    ),
    (
        "Tomas: Nadia, which evening is your pottery lesson again?",
        "Nadia: Tomas, I keep mixing up the days of my lessons.",
    ),
    (
        "Nadia: Tomas, what is your music group named these days?",
        "Tomas: Nadia, making music with friends is the best hobby.",
    ),
    (
        "Tomas: Where are we staying in May, Nadia?",
        "Nadia: Tomas, where should we go for the holiday?",
    ),
    (
        "Nadia: Tomas, what did the GP tell you at the checkup?",
        "Tomas: Nadia, my checkup results came back today.",
    ),
    (
        "Tomas: Who gives you music lessons now, Nadia?",
        "Nadia: Tomas, a good tutor makes all the difference.",
    ),
    (
        "Nadia: Tomas, how do you get to the station now?",
        "Tomas: Nadia, cycling to the train is such a hassle.",
    ),
    (
        "Tomas: Nadia, which shade will the walls be?",
        "Nadia: Tomas, choosing paint for the house is hard.",
    ),
    ("小林：阿梅，你的课是哪天来着？", "阿梅：小林，每周的课我总记不清是哪天。"),
    ("阿梅：小林，你的狗狗名字是啥来着？", "小林：阿梅，给小狗起名字真难。"),
    ("小林：阿梅，你最近看什么小说？", "阿梅：小林，好小说总是让人放不下。"),
    ("阿梅：小林，你下个月出差为了啥？", "小林：阿梅，出差的时候总想吃点好的。"),
)
CHAT_EN = (
    "{a}: Wow, {b}! Books have such an awesome power!",
    "{a}: {b}, music always cheers me up after work.",
    "{a}: Thanks {b}, the weekend was lovely and calm.",
    "{a}: {b}, I love talking about pets and dogs with you!",
    "{a}: Haha {b}, classes after work are so tiring.",
    "{a}: {b}, cooking and painting together sounds fun.",
    "{a}: {b}, my bike needs new tyres again, ugh.",
    "{a}: {b}, my sister says hi to you!",
    "{a}: {b}, the doctor was running late again today.",
    "{a}: {b}, a trip to the woods would do us good.",
)
CHAT_ZH = (
    "{a}：哇，{b}！读书真的很有意思。",
    "{a}：{b}，我家狗狗今天特别乖。",
    "{a}：{b}，周末一起去吃火锅吧。",
    "{a}：{b}，晚上上课好累啊。",
    "{a}：{b}，出差真的好辛苦。",
    "{a}：{b}，最近天气不错，适合出去走走。",
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, use_embedder: Any) -> Iterator[Any]:
    rng = random.Random(18)
    clock = FakeClock()
    path: Path = tmp_path_factory.mktemp("keyword-blend") / "m.db"
    engine = MemoryEngine.open(path, embedder=use_embedder, clock=clock)
    texts = []
    for _ in range(320):
        if rng.random() < 0.6:
            a, b = rng.sample(("Nadia", "Tomas"), 2)
            texts.append(rng.choice(CHAT_EN).format(a=a, b=b))
        else:
            a, b = rng.sample(("阿梅", "小林"), 2)
            texts.append(rng.choice(CHAT_ZH).format(a=a, b=b))
    for (fact, _), decoys in zip(FACTS, DECOYS, strict=True):
        at = rng.randrange(len(texts))
        texts[at:at] = [decoys[0], fact, decoys[1]]
    dated = [(t, clock.now() - timedelta(days=400 - i)) for i, t in enumerate(texts)]
    ids = engine.add_many([{"text": t, "kind": "episode", "created_at": w} for t, w in dated])
    by_text = dict(zip(texts, ids, strict=True))
    yield engine, [(by_text[fact], question) for fact, question in FACTS]
    engine.close()


@pytest.mark.parametrize("k", [1, 5, 10])
def test_hybrid_is_never_worse_than_either_channel_on_a_keyword_store(store: Any, k: int) -> None:
    engine, questions = store
    # The ranking (floor off): what search finds, as issue 18 measures the blend.
    keyword, vector, hybrid = channels(engine, questions, k, apply_floor=False)
    # The store is what it says: words find the fact first far more often than meaning does.
    at_one = channels(engine, questions, 1, apply_floor=False)
    assert at_one[0] >= at_one[1] + 0.3
    assert hybrid >= max(keyword, vector) - 0.01, (k, keyword, vector, hybrid)
