"""A shared topic word is not a question about the user's memory (issue 18 item 2).

A generated store in the shape of a real one, larger than the "All that fit" budget, where a
few everyday topic words recur in fourteen memories each ("travel", "电话", "moon", "team") — each rare enough for the relevance gate (≤ 2 % of the store) — next to the
people and plans the user asks about without saying "I". General questions that happen to
use one of those words ("How fast does light travel?", "谁发明了电话？") share it with several
memories about equally; a question about the store's people picks one memory out. Before the
gate looked at whether the sharing memory stands out (``Tuning.gate_peak``), each topic word
let a general question through at the 0.15 floor, and every such memory was sent.
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
    "daniel_job": "Daniel, the user's partner, works as a structural engineer at a bridge firm.",
    "mia_piano": "Mia has piano lessons with Mrs. Okafor every Saturday at ten.",
    "pixel_food": "Pixel the cat only eats salmon pâté and sleeps on the radiator.",
    "priya_team": "Priya Raman leads the payments team and prefers written updates.",
    "trip_porto": "The family flew to Porto in July and stayed near the Ribeira.",
    "trip_kyoto": "In October the user and Daniel spent a week in Kyoto visiting temples.",
    "lele_school": "乐乐在阳光幼儿园上中班，最喜欢搭积木。",
    "daniel_zh": "Daniel 每周三晚上去攀岩馆练抱石。",
    "grandpa": "爷爷今年八十岁，住在杭州西湖边。",
}
QUESTIONS = (
    ("What does Daniel do for a living?", ("daniel_job",)),
    ("Who teaches Mia the piano?", ("mia_piano",)),
    ("What does Pixel eat?", ("pixel_food",)),
    ("How does Priya like to get updates?", ("priya_team",)),
    ("Which came first, the Porto trip or Kyoto?", ("trip_porto", "trip_kyoto")),
    ("Mia 和乐乐谁先上的兴趣班？", ("mia_piano", "lele_school")),
    ("乐乐在哪个幼儿园？", ("lele_school",)),
    ("Daniel 每周几去攀岩？", ("daniel_zh",)),
)
NOTHING = (
    "How fast does light travel?",
    "谁发明了电话？",
    "Why does the moon have phases?",
    "How many players are on a rugby team?",
    "What is the capital of Australia?",
    "解释一下什么是区块链。",
    "How do I sort a list of tuples by the second element in Python?",
)
#: Topic words, each in several memories (rare for the gate, ≤ 2 % of the store, yet common
#: enough that a general question using one matches several memories about equally).
TOPICS = (
    "Travel to Ghent takes four hours by train, so we left early.",
    "Booked travel insurance before the long weekend.",
    "The travel bag is still in the hallway, half unpacked.",
    "Travel costs for the conference were finally reimbursed.",
    "The neighbours lent us their travel cot for the visit.",
    "Travel plans for the spring are on hold until the budget is clear.",
    "Bought a travel adapter at the airport for far too much.",
    "在电话里跟物业说了厨房漏水的事。",
    "电话费这个月又涨了，得换个套餐。",
    "晚上接了好几个推销电话，烦死了。",
    "给房东打电话，暖气还是没修好。",
    "快递员打电话说包裹放在门卫室了。",
    "电话会议拖到了九点才结束。",
    "旧电话卡找不到了，得去营业厅补办。",
    "The moon was bright over the canal when we walked home.",
    "Took a blurry photo of the full moon from the balcony.",
    "The moon festival lanterns are still in the storage box.",
    "Read a picture book about the moon before bedtime.",
    "A moon-shaped lamp arrived from the online shop, slightly dented.",
    "The moon cakes from the colleague were too sweet.",
    "Stayed up to watch the moon rise behind the church tower.",
    "The office quiz team met in the pub on Thursday.",
    "The neighbourhood clean-up team picked up forty bags of litter.",
    "Signed up for the team lunch on Friday.",
    "The team outing is moved to the bowling alley.",
    "The volunteer team at the food bank needs drivers in December.",
    "The team photo from the summer party is on the fridge.",
    "The IT team replaced the laptop battery in ten minutes.",
)
FILLER = (
    "Tidied the garage and found the old {y} again.",
    "The weather was grey all week, so the {y} stayed inside.",
    "Ordered a new {y} online; delivery is on Thursday.",
    "Spent the evening sorting photos from {x}.",
    "周末在家整理了{z}，花了一下午。",
    "楼下的{z}又开始装修了，有点吵。",
    "今天在超市买了{z}，打折挺多。",
)
FILL_X = ("Utrecht", "Ghent", "Lille", "Bruges", "Leiden", "Delft")
FILL_Y = ("umbrella", "bicycle pump", "camping stove", "board game", "lamp", "kettle", "rug")
FILL_Z = ("书架", "阳台", "衣柜", "厨房", "面馆", "水果", "洗衣机")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, use_embedder: Any) -> Iterator[Any]:
    rng = random.Random(182)
    clock = FakeClock()
    path: Path = tmp_path_factory.mktemp("topics") / "m.db"
    engine = MemoryEngine.open(path, embedder=use_embedder, clock=clock)

    def fill(template: str) -> str:
        return template.format(x=rng.choice(FILL_X), y=rng.choice(FILL_Y), z=rng.choice(FILL_Z))

    # Each topic sentence twice, with another place or object: 14 memories a word, 1.8 %.
    topics = [f"{t} ({x})" for t in TOPICS for x in rng.sample(FILL_X + FILL_Y + FILL_Z, 2)]
    texts = [fill(rng.choice(FILLER)) for _ in range(700)] + topics
    rng.shuffle(texts)
    for name in FACTS:
        texts.insert(rng.randrange(len(texts)), FACTS[name])
    dated = [(t, clock.now() - timedelta(days=rng.uniform(1, 400))) for t in texts]
    ids = engine.add_many([{"text": t, "kind": "fact", "created_at": w} for t, w in dated])
    by_text = {t: i for (t, _), i in zip(dated, ids, strict=True)}
    assert sum(estimate_tokens(t) for t in texts) > 1500  # retrieval chooses, not all-that-fit
    yield engine, {name: by_text[FACTS[name]] for name in FACTS}
    engine.close()


def _hit_at(engine: MemoryEngine, targets: dict[str, int], k: int, floor: bool) -> float:
    found = 0
    for question, names in QUESTIONS:
        hits = {h.id for h in engine.search(question, k=k, apply_floor=floor)}
        found += any(targets[name] in hits for name in names)
    return found / len(QUESTIONS)


@pytest.mark.parametrize("k", [1, 5, 10])
def test_third_person_and_comparisons_are_sent(store: Any, k: int) -> None:
    engine, targets = store
    found = _hit_at(engine, targets, k, floor=False)
    sent = _hit_at(engine, targets, k, floor=True)
    assert found >= 0.75, (k, found)
    assert sent >= 0.95 * found, (k, found, sent)


def test_general_questions_sharing_a_topic_word_mostly_get_nothing(store: Any) -> None:
    # Before the standing-out check four of the seven were sent memories (every one sharing
    # a topic word: travel, 电话, moon, team); now two ("light travel", "moon"), whose two
    # near-identical best memories stand out from the rest of their topic. That is 0.29, not
    # the 0.15: the check is calibrated on the benchmark stores, whose packs are
    # denser than this one.
    engine, _ = store
    injected = [q for q in NOTHING if engine.search(q, k=5)]
    assert len(injected) <= 2, injected
    assert "谁发明了电话？" not in injected
    assert "How many players are on a rugby team?" not in injected


def test_a_paraphrase_sharing_no_word_is_sent_when_one_memory_stands_out(store: Any) -> None:
    # "How old is granddad?" shares no word with "爷爷今年八十岁…" (cosine under the 0.50
    # impersonal floor), but that memory leads the pack by more than ``impersonal_lead``:
    # the relative floor sends it. On main's gate (impersonal floor only) nothing was sent.
    engine, targets = store
    assert targets["grandpa"] in {h.id for h in engine.search("How old is granddad?", k=5)}
    # The general questions' packs are flat: no more of them are sent than before.
    injected = [q for q in NOTHING if engine.search(q, k=5)]
    assert len(injected) <= 2, injected
