"""Token overlap between the retrieval set's queries and their targets, and the distractor generator.

Run: ``python tests/bench/dataset_overlap.py [--set PATH] [--quiet] [--regenerate-distractors]``;
``--questions tests/bench/data/retrieval_questions_v2.json`` checks the added third-person question
file instead (:func:`load_questions`: no first person, the same overlap limit, alternating split).

The retrieval set (``tests/bench/data/retrieval_set.json``) promises that every query shares at most
30 % of its tokens with its target, so keyword search cannot win by copying words. Tokens are made
the way the app segments text for its keyword index (DESIGN §5.3), implemented here on its own so the
measure does not move when the engine changes: NFKC, lower-case, ASCII words/numbers, plus every
CJK character and every CJK character bigram inside a run of CJK characters.

The enforced measure is the **share of the query's distinct tokens that also occur in the target**
(``|Q ∩ T| / |Q|``). It is stricter than Jaccard (``|Q ∩ T| / |Q ∪ T|``, also printed), which a long
target would dilute. Stop words are *not* removed: the keyword index keeps them too. Update queries
are measured against the newer memory (and the older one is printed); nothing-queries against the
memory they overlap most. Exit status 1 if any query with a target exceeds the limit, or if the
committed distractors differ from what the generator below makes.

A second, informative-but-also-enforced column ("app") uses the app's own segmentation when
``etos_desktop.core.text.segmentation`` is importable: the query's search terms
(``query_terms``: stemmed, stop terms dropped) against the target's index tokens. Stemming can
only add matches and dropping stop terms shrinks the denominator, so this is the view of the
keyword index itself; it must stay within the limit too.

Distractors (≥ 500 plausible memories about the same fictional user, on topics no query asks about)
are generated from the templates in this file with a fixed seed; ``--regenerate-distractors``
rewrites them into the JSON. The hand-written memories and queries live only in the JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DEFAULT_SET = Path(__file__).resolve().parent / "data" / "retrieval_set.json"
#: Third-person, comparison and count questions about the same store (issue 18).
QUESTIONS_V2 = DEFAULT_SET.parent / "retrieval_questions_v2.json"
MAX_SHARE = 0.30

#: First person in English or Chinese (the words ``gating.addresses_user`` looks for, copied so
#: the check does not move when the engine changes). Version-2 questions must not match it.
FIRST_PERSON_RE = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|us|our|ours"
    r"|ourselves)\b|[我咱俺]",
    re.IGNORECASE,
)

_RUN_RE = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def is_cjk(char: str) -> bool:
    """Whether ``char`` is a CJK ideograph (the ranges the app segments into characters/bigrams)."""
    code = ord(char)
    return 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF


def tokens(text: str) -> set[str]:
    """Distinct tokens of ``text``: lower-cased ASCII words, CJK characters and CJK bigrams."""
    out: set[str] = set()
    for run in _RUN_RE.findall(unicodedata.normalize("NFKC", text).lower()):
        if is_cjk(run[0]):
            out.update(run)
            out.update(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.add(run)
    return out


def app_share(query: str, target: str) -> float | None:
    """Share of the app's query terms found in the target's index tokens; None without the app."""
    try:
        from etos_desktop.core.text import segmentation
    except ImportError:
        return None
    terms = set(segmentation.query_terms(query))
    if not terms:
        return 0.0
    return len(terms & set(segmentation.tokens(target))) / len(terms)


def overlap(query: str, target: str) -> tuple[float, float, list[str]]:
    """Return (share of query tokens found in target, Jaccard, shared tokens)."""
    q, t = tokens(query), tokens(target)
    shared = q & t
    share = len(shared) / len(q) if q else 0.0
    jaccard = len(shared) / len(q | t) if q | t else 0.0
    return share, jaccard, sorted(shared)


# --------------------------------------------------------------------------------------------
# Distractor generator. Topics are chosen to stay clear of everything the queries ask about
# (food, drinks, sport, family, work, travel plans, music, films, books, plants, pets, health,
# schedules, tools…) and of the nothing-queries' subjects, so a distractor is never a right answer.
# --------------------------------------------------------------------------------------------

DISTRACTOR_SEED = 5150
DISTRACTORS_PER_LANGUAGE = 260

# Slot tables read better as dense lists than one item per line.
# fmt: off
_MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December"]
_MONTHS_ZH = ["一月", "二月", "三月", "四月", "五月", "六月", "七月", "八月", "九月", "十月",
              "十一月", "十二月"]
_CITIES_EN = ["Antwerp", "Utrecht", "Ghent", "Bruges", "Delft", "Haarlem", "Leiden", "Cologne",
              "Hamburg", "Copenhagen", "Maastricht", "Groningen"]
_CITIES_ZH = ["苏州", "南京", "厦门", "青岛", "长沙", "武汉", "天津", "宁波", "大连", "扬州",
              "绍兴", "泉州"]

_EN_TEMPLATES: list[tuple[str, str, dict[str, list[str]]]] = [
    ("fact", "In {month}, the user saw the {exhibit} exhibition at {museum} in {city} and bought {souvenir}.", {
        "month": _MONTHS_EN, "city": _CITIES_EN,
        "exhibit": ["Vermeer", "Bauhaus design", "Art Nouveau poster", "Mughal miniature",
                    "Inuit sculpture", "Dutch tile", "early photography", "medieval manuscript",
                    "Japanese woodblock print", "Scandinavian furniture", "antique clock"],
        "museum": ["the city museum", "a small private gallery", "the design museum",
                   "the maritime museum", "the national gallery"],
        "souvenir": ["a postcard set", "a fridge magnet", "the exhibition catalogue", "a tote bag",
                     "a small poster"]}),
    ("fact", "The user ordered a {item} from {shop}; it arrived {state} in {month}.", {
        "month": _MONTHS_EN,
        "item": ["floor lamp", "wool rug", "rain jacket", "set of linen towels", "shoe rack",
                 "wall clock", "full-length mirror", "laundry basket", "umbrella stand", "bath mat",
                 "doormat", "curtain rail"],
        "shop": ["an online home store", "a second-hand marketplace", "a local furniture shop",
                 "a department store website"],
        "state": ["two weeks late", "with a scratch on one side", "a day early", "in the wrong colour",
                  "perfectly packed"]}),
    ("fact", "The user's neighbour {name} {fact}.", {
        "name": ["Joost", "Fatima", "Mr. Verbeek", "Sanne", "Omar", "Mrs. de Vries", "Lotte", "Kees",
                 "Yara", "Bram", "Ingrid", "Mehmet"],
        "fact": ["keeps chickens in the back garden", "borrowed the user's ladder and hasn't returned it",
                 "repairs old radios as a hobby", "collects the building's parcels when the user is away",
                 "is a retired ship captain", "organises the street clean-up every spring",
                 "paints watercolours of the harbour", "once fixed the user's leaking tap",
                 "leaves cardboard boxes in the stairwell", "has lived in the building for thirty years"]}),
    ("fact", "The user lost {item} at {place} in {month} and {outcome}.", {
        "month": _MONTHS_EN,
        "item": ["a black umbrella", "a pair of gloves", "a wool scarf", "a spare house key",
                 "a water bottle", "sunglasses", "a USB stick", "a knitted hat"],
        "place": ["the train station", "a museum cloakroom", "the post office", "a street market",
                  "the town hall", "a hotel lobby"],
        "outcome": ["never found it", "got it back from the lost-and-found",
                    "a stranger handed it back", "bought a replacement the same day"]}),
    ("fact", "The user booked {service} for {day} {month}.", {
        "month": _MONTHS_EN, "day": [str(d) for d in range(2, 29)],
        "service": ["a haircut", "a dental cleaning", "new passport photos", "a boiler inspection",
                    "a chimney sweep visit", "a window-cleaning service", "a locksmith to change the locks",
                    "a washing-machine repair"]}),
    ("fact", "The user photographed {subject} in {city} using {camera}.", {
        "city": _CITIES_EN,
        "subject": ["old shop signs", "street tiles", "reflections in puddles", "fog over the river",
                    "tram lines", "rooftop antennas", "market stalls", "bridges at dusk", "church doors"],
        "camera": ["a 35 mm prime lens", "a borrowed film camera", "a vintage 50 mm lens",
                   "a wide-angle lens"]}),
    ("fact", "The user owns {count} {collectible}; the oldest is from {year}.", {
        "count": [str(n) for n in (12, 18, 25, 40, 63, 85, 120, 150, 210)],
        "collectible": ["stamps from former colonies", "enamel pins", "vintage matchbox labels",
                        "old railway timetables", "tram tickets", "glass marbles", "picture postcards",
                        "souvenir keyrings"],
        "year": [str(y) for y in range(1890, 1991, 7)]}),
    ("preference", "The user thinks {landmark} in {city} is overrated because {reason}.", {
        "city": _CITIES_EN,
        "landmark": ["the main cathedral", "the old market square", "the famous windmill",
                     "the harbour boat tour", "the observation tower", "the old town gate"],
        "reason": ["it is always packed with tour groups", "the queue takes over an hour",
                   "the tickets are too expensive", "there is scaffolding everywhere"]}),
    ("fact", "The user listens to a podcast about {topic} while {chore}.", {
        "topic": ["the history of maps", "shipping containers", "urban planning", "forgotten inventions",
                  "famous court cases", "the economics of airports", "lighthouses", "typography",
                  "bridges and tunnels"],
        "chore": ["ironing", "doing the laundry", "cleaning the windows", "folding clothes",
                  "vacuuming the hallway", "mopping the floor"]}),
    ("fact", "The user is working on a {pieces}-piece jigsaw puzzle of {image}.", {
        "pieces": ["500", "750", "1000", "1500", "2000", "3000"],
        "image": ["a lighthouse", "an old world map", "a hot-air balloon festival",
                  "a vintage railway poster", "a harbour full of sailing ships", "a crowded fish market",
                  "a snowy village", "a steam locomotive"]}),
    ("fact", "The user keeps {object} from {origin} on the windowsill.", {
        "object": ["a small brass compass", "a carved wooden elephant", "a ship in a bottle",
                   "a snow globe", "an old rotary telephone", "a smooth stone", "a tin robot"],
        "origin": ["a flea market in Brussels", "a trip to Morocco years ago",
                   "a colleague's farewell present", "an antique shop in Ghent", "a beach in Normandy"]}),
    ("fact", "In {month}, the user played {game} with {group} and {result}.", {
        "month": _MONTHS_EN,
        "game": ["Carcassonne", "Ticket to Ride", "Catan", "Azul", "Codenames", "Dixit", "Pandemic",
                 "chess", "Scrabble"],
        "group": ["the neighbours", "people from a board-game café", "the residents' committee",
                  "the upstairs tenants"],
        "result": ["won by a single point", "lost badly", "learned the rules from scratch",
                   "finished in second place"]}),
]

_ZH_TEMPLATES: list[tuple[str, str, dict[str, list[str]]]] = [
    ("fact", "用户{month}去{city}的{museum}看了{exhibit}展，买了{souvenir}。", {
        "month": _MONTHS_ZH, "city": _CITIES_ZH,
        "museum": ["市博物馆", "一家私人画廊", "设计博物馆", "海事博物馆", "美术馆"],
        "exhibit": ["印象派油画", "现代家具设计", "古地图", "老式钟表", "剪纸艺术", "皮影",
                    "民间刺绣", "老照片", "航海仪器"],
        "souvenir": ["一套明信片", "一个冰箱贴", "一本展览图录", "一个帆布袋", "一张海报"]}),
    ("fact", "用户在{shop}买了{item}，{month}到货时{state}。", {
        "month": _MONTHS_ZH,
        "shop": ["网上家居店", "二手平台", "本地家具店", "百货商城官网"],
        "item": ["一盏落地灯", "一块羊毛地毯", "一个挂钟", "一套亚麻毛巾", "一个鞋柜", "一面穿衣镜",
                 "一个脏衣篮", "一个伞架", "一块地垫", "一根窗帘杆"],
        "state": ["晚了两周", "侧面有一道划痕", "比预计早了一天", "颜色发错了", "包装完好"]}),
    ("fact", "用户的邻居{name}{fact}。", {
        "name": ["老周", "王阿姨", "小林", "陈先生", "刘姐", "孙老师", "小杨", "郑师傅", "何女士", "老郭"],
        "fact": ["在阳台上养了一群鸽子", "借走了用户的梯子一直没还", "退休前是远洋船长", "爱修老收音机",
                 "在用户不在家时帮忙代收快递", "每天清早在楼下扫落叶", "会写一手好毛笔字",
                 "经常在楼道里堆纸箱", "在这栋楼里住了三十年"]}),
    ("fact", "用户{month}在{place}丢了{item}，{outcome}。", {
        "month": _MONTHS_ZH,
        "place": ["火车站", "博物馆寄存处", "邮局", "夜市", "市政大厅", "酒店大堂"],
        "item": ["一把黑伞", "一副手套", "一条围巾", "一把备用钥匙", "一个保温杯", "一副墨镜",
                 "一个U盘", "一顶毛线帽"],
        "outcome": ["一直没找回来", "后来在失物招领处领了回来", "被一位路人送了回来", "当天就买了个新的"]}),
    ("fact", "用户约了{month}{day}号{service}。", {
        "month": _MONTHS_ZH, "day": [str(d) for d in range(2, 29)],
        "service": ["去理发店剪头发", "去洗牙", "拍护照照片", "请师傅上门检查热水器", "清洗空调",
                    "换门锁", "修洗衣机", "请人擦玻璃"]}),
    ("fact", "用户在{city}拍了一组{subject}的照片，用的是{camera}。", {
        "city": _CITIES_ZH,
        "subject": ["老街招牌", "雨后倒影", "江边晨雾", "屋顶天线", "菜市场摊位", "黄昏的桥",
                    "旧式门牌", "晾衣杆上的衣服", "教堂大门"],
        "camera": ["35毫米定焦镜头", "借来的胶片相机", "一支老式50毫米镜头", "广角镜头"]}),
    ("fact", "用户收藏了{count}张{collectible}，最早的一张是{year}年的。", {
        "count": [str(n) for n in (12, 18, 25, 40, 63, 85, 120, 150, 210)],
        "collectible": ["邮票", "火花", "旧车票", "老地图", "电话卡", "风景明信片", "电影票根",
                        "糖纸"],
        "year": [str(y) for y in range(1890, 1991, 7)]}),
    ("preference", "用户觉得{city}的{landmark}名不副实，因为{reason}。", {
        "city": _CITIES_ZH,
        "landmark": ["步行街", "古城墙", "夜游项目", "观景塔", "老码头", "网红打卡街区"],
        "reason": ["到处人挤人", "排队要一个多小时", "门票太贵", "到处在施工"]}),
    ("fact", "用户{chore}时常听一档讲{topic}的播客。", {
        "chore": ["熨衣服", "洗衣服", "擦窗户", "叠衣服", "拖地", "整理衣柜"],
        "topic": ["地图历史", "集装箱运输", "城市规划", "被遗忘的发明", "著名法庭案件", "机场经济学",
                  "灯塔", "字体设计", "桥梁与隧道"]}),
    ("fact", "用户正在拼一幅{pieces}片的{image}拼图。", {
        "pieces": ["500", "750", "1000", "1500", "2000", "3000"],
        "image": ["灯塔", "古老世界地图", "热气球节", "老火车海报", "江南水乡", "帆船港口",
                  "雪中小镇", "蒸汽机车"]}),
    ("fact", "用户窗台上摆着{object}，是{origin}。", {
        "object": ["一个黄铜指南针", "一只木雕大象", "一个瓶中船模型", "一个水晶球", "一部老式拨号电话",
                   "一块光滑的鹅卵石", "一个铁皮机器人"],
        "origin": ["在跳蚤市场淘的", "多年前去摩洛哥带回来的", "同事离职时送的", "在古玩街买的",
                   "在海边捡的"]}),
    ("fact", "用户{month}和{group}玩了{game}，{result}。", {
        "month": _MONTHS_ZH,
        "game": ["卡坦岛", "璀璨宝石", "狼人杀", "飞行棋", "象棋", "拼字游戏", "大富翁", "妙语说书人"],
        "group": ["邻居们", "桌游店认识的人", "业委会的几户人家", "楼上的租客"],
        "result": ["只差一分赢了", "输得很惨", "从头学了一遍规则", "拿了第二名"]}),
]
# fmt: on


def generate_distractors(
    seed: int = DISTRACTOR_SEED, per_language: int = DISTRACTORS_PER_LANGUAGE
) -> list[dict]:
    """Make the distractor memories: ``per_language`` per language, deterministic for ``seed``.

    Templates are used round-robin; slots are drawn at random and repeats are skipped, so every
    text is distinct. ``days_ago`` spreads the memories over about 500 days.
    """
    rng = random.Random(seed)
    out: list[dict] = []
    for lang, templates in (("en", _EN_TEMPLATES), ("zh", _ZH_TEMPLATES)):
        seen: set[str] = set()
        i = 0
        while len(seen) < per_language:
            kind, pattern, slots = templates[i % len(templates)]
            i += 1
            text = pattern.format(**{name: rng.choice(values) for name, values in slots.items()})
            if text in seen:
                continue
            seen.add(text)
            out.append(
                {
                    "id": f"x-{lang}-{len(seen):03d}",
                    "group": "distractor",
                    "lang": lang,
                    "kind": kind,
                    "text": text,
                    "days_ago": round(rng.uniform(1, 500), 2),
                }
            )
    return out


def load_set(path: Path) -> dict:
    """Read the retrieval set JSON."""
    return json.loads(path.read_text(encoding="utf-8"))


def first_person(text: str) -> bool:
    """Whether ``text`` says I/me/my/we/us/our or 我/咱/俺 (NFKC, curly apostrophes folded)."""
    folded = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    return FIRST_PERSON_RE.search(folded) is not None


def check_splits(queries: list[dict]) -> list[str]:
    """Problems with the calibration/test split: it must alternate within category and language."""
    problems = []
    seen: dict[tuple[str, str], int] = {}
    for q in queries:
        n = seen.get((q["category"], q["lang"]), 0)
        seen[(q["category"], q["lang"])] = n + 1
        want = "calibration" if n % 2 == 0 else "test"
        if q["split"] != want:
            problems.append(f"{q['id']}: split {q['split']}, expected {want} (alternating)")
    return problems


def check_questions(data: dict, questions: list[dict], max_share: float | None) -> list[str]:
    """Problems of an added question file against the store in ``data`` (empty: all fine).

    Checked: ids unique and new, targets and stale ids are memories of the store, no first
    person (:data:`FIRST_PERSON_RE`), split alternating within category and language, and —
    unless ``max_share`` is ``None`` — every targeted question within the token-overlap limit
    with its best-overlapping target, by this file's tokens and by the app's query terms.
    """
    problems = []
    ids = {m["id"] for m in data["memories"]}
    texts = {m["id"]: m["text"] for m in data["memories"]}
    taken = {q["id"] for q in data["queries"]}
    for q in questions:
        if q["id"] in taken:
            problems.append(f"{q['id']}: duplicate id")
        taken.add(q["id"])
        missing = [t for t in [*q["targets"], *q.get("stale", [])] if t not in ids]
        if missing:
            problems.append(f"{q['id']}: unknown memory ids {missing}")
        if first_person(q["text"]):
            problems.append(f"{q['id']}: first person in {q['text']!r}")
        if q["category"] == "nothing" and q["targets"]:
            problems.append(f"{q['id']}: a nothing-question with targets")
        if q["category"] != "nothing" and not q["targets"]:
            problems.append(f"{q['id']}: no targets")
        if max_share is not None and q["targets"] and not missing:
            share = max(overlap(q["text"], texts[t])[0] for t in q["targets"])
            app = max((app_share(q["text"], texts[t]) or 0.0) for t in q["targets"])
            if share > max_share or app > max_share:
                problems.append(f"{q['id']}: overlap {share:.2f} / app {app:.2f} > {max_share}")
    return problems + check_splits(questions)


def load_questions(path: Path, data: dict, max_share: float | None = MAX_SHARE) -> list[dict]:
    """Read an added question file (``{"queries": [...]}``) and check it against ``data``.

    Raises:
        ValueError: When :func:`check_questions` finds a problem.
    """
    questions: list[dict] = json.loads(path.read_text(encoding="utf-8"))["queries"]
    problems = check_questions(data, questions, max_share)
    if problems:
        raise ValueError(f"{path.name}: " + "; ".join(problems))
    return questions


def query_overlaps(data: dict) -> list[dict]:
    """One row per query: id, category, split, share, jaccard, shared tokens, against its target(s).

    For queries with several targets the best-overlapping target counts (the strictest reading);
    nothing-queries are measured against the memory they overlap most.
    """
    texts = {m["id"]: m["text"] for m in data["memories"]}
    rows = []
    for q in data["queries"]:
        candidates = q["targets"] or list(texts)
        best = max(((*overlap(q["text"], texts[t]), t) for t in candidates), key=lambda r: r[0])
        row = {
            "id": q["id"],
            "category": q["category"],
            "split": q["split"],
            "share": best[0],
            "jaccard": best[1],
            "shared": best[2],
            "against": best[3],
            "app": app_share(q["text"], texts[best[3]]),
        }
        for stale in q.get("stale", []):
            row["share_vs_stale"] = overlap(q["text"], texts[stale])[0]
        rows.append(row)
    return rows


def summarise(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Max and mean share/Jaccard per category (nothing-queries kept apart) and over all targeted queries."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["category"], []).append(row)
    groups["ALL (with target)"] = [r for r in rows if r["category"] != "nothing"]
    out = {}
    for name, g in groups.items():
        app = [r["app"] for r in g if r["app"] is not None]
        out[name] = {
            "n": len(g),
            "share_max": max(r["share"] for r in g),
            "share_mean": statistics.fmean(r["share"] for r in g),
            "jaccard_max": max(r["jaccard"] for r in g),
            "jaccard_mean": statistics.fmean(r["jaccard"] for r in g),
            "app_max": max(app) if app else float("nan"),
            "app_mean": statistics.fmean(app) if app else float("nan"),
        }
    return out


def print_report(data: dict, quiet: bool = False) -> bool:
    """Print per-query and summary overlap; return True when every targeted query is within the limit."""
    rows = query_overlaps(data)
    if not quiet:
        print(
            f"{'query':<18} {'category':<15} {'split':<11} {'share':>6} {'jacc':>6} {'app':>5}  shared tokens"
        )
        for r in rows:
            extra = f"  (vs older: {r['share_vs_stale']:.2f})" if "share_vs_stale" in r else ""
            against = f"  [max over memories: {r['against']}]" if r["category"] == "nothing" else ""
            app = "  n/a" if r["app"] is None else f"{r['app']:5.2f}"
            print(
                f"{r['id']:<18} {r['category']:<15} {r['split']:<11} {r['share']:6.2f} {r['jaccard']:6.2f}"
                f" {app}  {' '.join(r['shared'])}{extra}{against}"
            )
        print()
    print(
        "Token overlap (share = |Q∩T|/|Q|, enforced ≤ 0.30; Jaccard = |Q∩T|/|Q∪T|, for reference;"
    )
    print(
        "app = share with the app's own query terms/index tokens, also enforced; nothing-queries:"
    )
    print("against the memory they overlap most, not enforced):")
    print(
        f"  {'category':<20} {'n':>3} {'share max':>10} {'share mean':>11} {'jacc max':>9} {'jacc mean':>10}"
        f" {'app max':>8} {'app mean':>9}"
    )
    for name, s in summarise(rows).items():
        print(
            f"  {name:<20} {s['n']:>3} {s['share_max']:>10.2f} {s['share_mean']:>11.3f}"
            f" {s['jaccard_max']:>9.2f} {s['jaccard_mean']:>10.3f} {s['app_max']:>8.2f} {s['app_mean']:>9.3f}"
        )
    bad = [
        r
        for r in rows
        if r["category"] != "nothing" and (r["share"] > MAX_SHARE or (r["app"] or 0.0) > MAX_SHARE)
    ]
    for r in bad:
        print(f"  OVER LIMIT: {r['id']} share {r['share']:.2f} app {r['app']} shared {r['shared']}")
    return not bad


def print_counts(data: dict) -> None:
    """Print memory and query counts per group/category, language and split."""
    mem: dict[tuple[str, str], int] = {}
    for m in data["memories"]:
        mem[(m["group"], m["lang"])] = mem.get((m["group"], m["lang"]), 0) + 1
    print(
        "Memories:",
        ", ".join(f"{g}/{lang} {n}" for (g, lang), n in sorted(mem.items())),
        f"(total {len(data['memories'])})",
    )
    qs: dict[tuple[str, str, str], int] = {}
    for q in data["queries"]:
        key = (q["category"], q["lang"], q["split"])
        qs[key] = qs.get(key, 0) + 1
    cats = sorted({k[0] for k in qs})
    print("Queries (calibration/test):")
    for c in cats:
        parts = [
            f"{lang} {qs.get((c, lang, 'calibration'), 0)}/{qs.get((c, lang, 'test'), 0)}"
            for lang in ("en", "zh")
        ]
        print(f"  {c:<15} " + ", ".join(parts))
    print(f"  total {len(data['queries'])}")


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--quiet", action="store_true", help="summary only, no per-query lines")
    parser.add_argument(
        "--regenerate-distractors",
        action="store_true",
        help="rewrite the distractor memories in the JSON from the templates here",
    )
    parser.add_argument(
        "--questions",
        type=Path,
        help="check an added question file (e.g. data/retrieval_questions_v2.json) against the set",
    )
    args = parser.parse_args()
    data = load_set(args.set)
    if args.questions is not None:
        questions = json.loads(args.questions.read_text(encoding="utf-8"))["queries"]
        problems = check_questions(data, questions, MAX_SHARE)
        print_counts({**data, "queries": questions})
        print_report({**data, "queries": questions}, quiet=args.quiet)
        for problem in problems:
            print(f"  PROBLEM: {problem}")
        print(f"{args.questions.name}: {'ok' if not problems else f'{len(problems)} problems'}")
        return 0 if not problems else 1
    fresh = generate_distractors()
    if args.regenerate_distractors:
        data["memories"] = [m for m in data["memories"] if m["group"] != "distractor"] + fresh
        data["distractor_generator"] = {
            "script": "tests/bench/dataset_overlap.py --regenerate-distractors",
            "seed": DISTRACTOR_SEED,
            "per_language": DISTRACTORS_PER_LANGUAGE,
        }
        args.set.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(fresh)} distractors to {args.set}")
    committed = [m for m in data["memories"] if m["group"] == "distractor"]
    reproducible = committed == fresh
    print_counts(data)
    ok = print_report(data, quiet=args.quiet)
    print(f"Distractors reproducible from the generator: {'yes' if reproducible else 'NO'}")
    return 0 if ok and reproducible else 1


if __name__ == "__main__":
    sys.exit(main())
