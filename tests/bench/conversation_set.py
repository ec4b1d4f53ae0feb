"""The conversational retrieval set: a deterministic generator of a multi-session dialogue store.

Run: ``python tests/bench/conversation_set.py [--check]`` writes (or, with ``--check``, compares
against) ``tests/bench/data/conversation_set.json``; ``--check`` also checks the hand-written
``conversation_questions_v2.json`` (:func:`load_questions`).

Why it exists (issue 10): the bilingual set (``retrieval_set.json``) holds short, distinct facts,
so it could not show that the old "newer first" step collapsed ranking on real conversational
stores, where dozens of turns are about the same thing. This set looks like a year of one
person's chats with their companion: 24 sessions (12 in English, 12 in Chinese) of about 210
turns each (user and assistant alternating, one to four sentences per turn), on two topics per
session out of fourteen, so every topic recurs in three or four sessions and most turns have many
same-topic neighbours. Hand-written turns carrying the facts that questions ask about are placed
among them. Every turn is dated (the session's start plus a minute per turn).

Questions are the kinds people ask a companion: a single fact, two facts (multi-hop), "when
did…", "what did we talk about last week / 上周 / 三月份", changed preferences (the older turn
and a later turn with a change cue are both in the store), and unrelated general questions that
must get nothing. Each question is in the calibration or the test half (alternating within each
category and language). Tune only on the calibration half.

The generator is pure Python with a fixed seed; the JSON it writes is committed, and ``--check``
fails if a fresh generation differs. Changing it afterwards makes earlier figures incomparable.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "conversation_set.json"
#: Hand-written third-person, comparison and count questions about the same store (issue 18).
QUESTIONS_V2 = DEFAULT_PATH.parent / "conversation_questions_v2.json"
SEED = 20261201
TURNS_PER_SESSION = 210
REFERENCE_NOW = "2026-06-17T20:00:00+00:00"

# (session key, start, language, topics). The dates put sessions in the windows the time
# questions ask about: last week (Mon 8 – Sun 14 June 2026: s21–s23), last weekend (s22, s23),
# yesterday (s24), last month (May: s16–s18), March (s12, s13), last year (2025: s01–s07).
SESSIONS: tuple[tuple[str, str, str, tuple[str, str]], ...] = (
    ("s01", "2025-10-05T18:30:00+00:00", "en", ("cooking", "work")),
    ("s02", "2025-10-19T09:10:00+00:00", "zh", ("running", "travel")),
    ("s03", "2025-11-02T20:05:00+00:00", "en", ("home", "finance")),
    ("s04", "2025-11-16T13:40:00+00:00", "zh", ("work", "kids")),
    ("s05", "2025-11-30T10:15:00+00:00", "en", ("garden", "books")),
    ("s06", "2025-12-14T19:20:00+00:00", "zh", ("health", "cooking")),
    ("s07", "2025-12-28T16:00:00+00:00", "en", ("travel", "music")),
    ("s08", "2026-01-11T11:30:00+00:00", "zh", ("pets", "home")),
    ("s09", "2026-01-25T17:45:00+00:00", "en", ("kids", "photo")),
    ("s10", "2026-02-08T21:00:00+00:00", "zh", ("finance", "books")),
    ("s11", "2026-02-22T08:50:00+00:00", "en", ("running", "car")),
    ("s12", "2026-03-07T14:25:00+00:00", "zh", ("music", "garden")),
    ("s13", "2026-03-21T19:35:00+00:00", "en", ("health", "work")),
    ("s14", "2026-04-04T10:05:00+00:00", "zh", ("photo", "travel")),
    ("s15", "2026-04-18T18:10:00+00:00", "en", ("pets", "cooking")),
    ("s16", "2026-05-03T15:00:00+00:00", "zh", ("car", "kids")),
    ("s17", "2026-05-17T20:40:00+00:00", "en", ("books", "finance")),
    ("s18", "2026-05-30T09:30:00+00:00", "zh", ("work", "health")),
    ("s19", "2026-06-02T19:00:00+00:00", "en", ("garden", "music")),
    ("s20", "2026-06-05T12:15:00+00:00", "zh", ("home", "running")),
    ("s21", "2026-06-09T18:45:00+00:00", "en", ("travel", "photo")),
    ("s22", "2026-06-13T10:20:00+00:00", "zh", ("cooking", "pets")),
    ("s23", "2026-06-14T16:30:00+00:00", "en", ("kids", "car")),
    ("s24", "2026-06-16T21:10:00+00:00", "zh", ("finance", "work")),
)

# -- filler turns: per topic and language, sentence templates with slots ------------------------

EN: dict[str, dict[str, list[str]]] = {
    "cooking": {
        "dish": [
            "the mushroom risotto",
            "a lentil curry",
            "the roast chicken",
            "a tomato soup",
            "the banana bread",
            "a stir-fried tofu dish",
            "the lasagne",
            "a pumpkin pie",
            "the dumplings",
            "a Thai green curry",
            "the pancakes",
            "a shakshuka",
        ],
        "item": [
            "the cast-iron pan",
            "fresh basil",
            "smoked paprika",
            "the slow cooker",
            "coconut milk",
            "the oven thermometer",
            "brown rice",
            "a sourdough starter",
            "fish sauce",
            "the stand mixer",
            "Greek yoghurt",
            "frozen peas",
        ],
        "t": [
            "I tried {dish} again and this time I used {item}.",
            "How long should {dish} stay in the oven if I add {item}?",
            "The recipe for {dish} says to prepare {item} the night before, is that needed?",
            "My partner liked {dish}, but {item} made it a bit too salty.",
            "Could I replace {item} with something else in {dish}?",
            "You can cook {dish} with {item}; keep the heat medium so it does not burn.",
            "For {dish}, adding {item} near the end keeps the flavour brighter.",
            "I'm planning {dish} for Sunday and I still need to buy {item}.",
            "Last time {dish} came out dry, maybe because I forgot {item}.",
            "A good trick for {dish} is to rest it for ten minutes before serving.",
        ],
    },
    "work": {
        "thing": [
            "the billing service",
            "the data migration",
            "the quarterly review",
            "the on-call rotation",
            "the API redesign",
            "the sprint planning",
            "the load tests",
            "the onboarding docs",
            "the release checklist",
            "the dashboard",
            "the code review backlog",
            "the incident report",
        ],
        "who": [
            "my manager",
            "the new intern",
            "the product owner",
            "the QA team",
            "a colleague from Berlin",
            "the tech lead",
            "the designer",
            "the client",
        ],
        "t": [
            "Today {who} asked me to take over {thing} and I am not sure I have time.",
            "I spent the whole afternoon on {thing}, it is slower than I expected.",
            "Should I push back on {who} about the deadline for {thing}?",
            "It might help to split {thing} into smaller tasks and agree on one with {who}.",
            "{who} thinks {thing} can ship next week, I doubt it.",
            "A short written summary of {thing} for {who} could save you a meeting.",
            "We had a long meeting about {thing} and nothing was decided.",
            "I finally fixed the flaky part of {thing} after lunch.",
            "Maybe block two hours in your calendar just for {thing}.",
            "I feel a bit stressed because {thing} keeps growing.",
        ],
    },
    "running": {
        "route": [
            "the river loop",
            "the park trail",
            "the hill by the stadium",
            "the canal path",
            "the track at the school",
            "the forest route",
            "the harbour path",
            "the long route past the bridge",
        ],
        "gear": [
            "my new running shoes",
            "the GPS watch",
            "a lighter jacket",
            "the knee strap",
            "energy gels",
            "the headlamp",
            "compression socks",
            "the running belt",
        ],
        "t": [
            "I ran {route} this morning with {gear}, my pace was a bit better.",
            "My left calf felt tight on {route}, should I rest tomorrow?",
            "Is {gear} worth it for someone who runs three times a week?",
            "An easy pace on {route} is fine; most of your runs should feel relaxed.",
            "I want to try {route} at the weekend if the weather holds.",
            "Stretching after {route} helps, and {gear} will not fix a tight calf by itself.",
            "I forgot {gear} and regretted it halfway along {route}.",
            "How should I build up to a longer run than {route}?",
            "Intervals on {route} once a week would help your speed.",
            "It rained the whole time on {route} but I still enjoyed it.",
        ],
    },
    "travel": {
        "place": [
            "Lisbon",
            "Kyoto",
            "the Scottish Highlands",
            "Vienna",
            "Barcelona",
            "the Norwegian fjords",
            "Prague",
            "Hoi An",
            "Copenhagen",
            "Seville",
            "the Dolomites",
            "Istanbul",
        ],
        "thing": [
            "the train tickets",
            "a cheap hotel",
            "the travel insurance",
            "a car rental",
            "the museum pass",
            "a food tour",
            "the airport transfer",
            "the packing list",
            "a day trip",
            "the visa papers",
        ],
        "t": [
            "We are thinking about {place} for the holidays, have you got tips about {thing}?",
            "I booked {thing} for {place}, it was more expensive than last year.",
            "In {place} it is usually easier to sort out {thing} in advance.",
            "Is {place} too crowded in summer?",
            "For {place}, three or four days is enough to see the main sights.",
            "I still have to arrange {thing} before we leave for {place}.",
            "The photos from {place} make me want to go back.",
            "Check whether {thing} can be cancelled for free, plans with {place} can change.",
            "We missed {thing} last time and lost half a day in {place}.",
            "What should we not miss in {place}?",
        ],
    },
    "home": {
        "room": [
            "the kitchen",
            "the bathroom",
            "the bedroom",
            "the hallway",
            "the balcony",
            "the living room",
            "the attic",
            "the study",
        ],
        "job": [
            "painting the walls",
            "fixing the leaking tap",
            "new shelves",
            "the heating",
            "a new floor",
            "the broken window latch",
            "the wallpaper",
            "better lighting",
            "sorting the boxes",
            "the mould near the window",
        ],
        "t": [
            "This weekend I want to do {job} in {room}.",
            "The landlord still has not replied about {job} in {room}.",
            "Do I need a professional for {job}, or can I do it myself?",
            "For {job} in {room}, measure twice before you buy anything.",
            "{room} looks so much better after {job}.",
            "I underestimated how long {job} would take.",
            "If {job} involves wiring, please get an electrician.",
            "We argued a bit about the colour for {room}.",
            "I found a cheaper shop for the things we need for {job}.",
            "A small plan for {room} could keep {job} from dragging on.",
        ],
    },
    "finance": {
        "thing": [
            "the monthly budget",
            "the savings account",
            "the tax return",
            "the electricity bill",
            "the index fund",
            "the insurance premium",
            "the emergency fund",
            "the credit card statement",
            "the pension plan",
            "the grocery spending",
        ],
        "t": [
            "I looked at {thing} tonight and we spent more than planned.",
            "Is it a good idea to move money from {thing} right now?",
            "Setting a fixed day each month to check {thing} makes it less stressful.",
            "{thing} went up again, I need to compare offers.",
            "Could you explain how {thing} works in simple words?",
            "A simple spreadsheet for {thing} is often enough.",
            "I keep forgetting to update {thing}.",
            "Automating transfers for {thing} removes the temptation to skip it.",
            "We should talk as a family about {thing}.",
            "I'm worried about {thing} since the prices went up.",
        ],
    },
    "kids": {
        "kid": ["my son", "my daughter", "the kids", "my youngest"],
        "thing": [
            "the school trip",
            "the swimming lessons",
            "homework",
            "the birthday party",
            "screen time",
            "the parent-teacher meeting",
            "the piano practice",
            "the new classmate",
            "bedtime",
            "the football club",
            "the reading log",
            "the lunch boxes",
        ],
        "t": [
            "{kid} was upset about {thing} after school today.",
            "How do other parents handle {thing}?",
            "I promised {kid} we would talk about {thing} at the weekend.",
            "It often helps to give {kid} two choices about {thing} instead of an order.",
            "{kid} surprised me with how well {thing} went.",
            "We still need to sign the form for {thing}.",
            "A fixed routine around {thing} usually reduces the arguments.",
            "Is it normal that {kid} keeps resisting {thing}?",
            "I had a nice chat with the teacher about {thing}.",
            "Praise the effort on {thing}, not only the result.",
        ],
    },
    "garden": {
        "plant": [
            "the tomatoes",
            "the roses",
            "the basil",
            "the lavender",
            "the apple tree",
            "the strawberries",
            "the hydrangea",
            "the chillies",
            "the herbs on the window",
            "the courgettes",
        ],
        "thing": [
            "aphids",
            "too much rain",
            "the compost",
            "slugs",
            "the new planter",
            "yellow leaves",
            "the watering schedule",
            "frost",
            "the mulch",
            "pruning",
        ],
        "t": [
            "{plant} have problems with {thing} again.",
            "When is the right moment to deal with {thing} for {plant}?",
            "I planted {plant} next to the fence this year.",
            "For {plant}, {thing} is usually manageable if you check every few days.",
            "{plant} are finally growing after I sorted out {thing}.",
            "Should I move {plant} to a sunnier spot?",
            "A layer of mulch around {plant} keeps the soil moist.",
            "The neighbour gave me advice about {thing}.",
            "I lost half of {plant} to {thing} last season.",
            "Water {plant} in the morning rather than in the evening.",
        ],
    },
    "books": {
        "book": [
            "the detective novel",
            "the history of the Silk Road",
            "the poetry collection",
            "the science fiction trilogy",
            "the biography of Marie Curie",
            "the book about habits",
            "the fantasy series",
            "the memoir",
            "the cookbook",
            "the short stories",
        ],
        "t": [
            "I'm halfway through {book} and it is slower than I hoped.",
            "Would you recommend something similar to {book}?",
            "The ending of {book} surprised me.",
            "If you liked {book}, you might enjoy something shorter next.",
            "My book club chose {book} for next month.",
            "I keep falling asleep after two pages of {book}.",
            "Reading {book} in the morning works better for me.",
            "Audiobooks can help when {book} feels heavy going.",
            "I lent {book} to a friend and never got it back.",
            "What did you think was the main idea of {book}?",
        ],
    },
    "health": {
        "thing": [
            "my back pain",
            "sleep",
            "the headaches",
            "my blood pressure",
            "the physiotherapy exercises",
            "the dentist appointment",
            "vitamin D",
            "the allergy season",
            "my posture at the desk",
            "drinking enough water",
        ],
        "t": [
            "{thing} has been bothering me all week.",
            "Should I see a doctor about {thing}?",
            "Small habits help with {thing}, for example a short walk after lunch.",
            "I started tracking {thing} in an app.",
            "If {thing} gets worse, please talk to your doctor.",
            "I read an article about {thing} that made me worry.",
            "{thing} is better since I changed my routine.",
            "Is there anything simple I can do today about {thing}?",
            "Try not to look at screens late in the evening; it helps with {thing}.",
            "I keep postponing things related to {thing}.",
        ],
    },
    "music": {
        "thing": [
            "the guitar",
            "the new song",
            "barre chords",
            "the metronome",
            "the ukulele",
            "the choir rehearsal",
            "fingerpicking",
            "the concert tickets",
            "music theory",
            "the amplifier",
        ],
        "t": [
            "I practised {thing} for half an hour and my fingers hurt.",
            "Is {thing} too hard for a beginner?",
            "With {thing}, slow and clean practice beats fast and messy.",
            "I want to play {thing} for my friends at the party.",
            "I watched a video about {thing} that finally made sense.",
            "Fifteen minutes a day of {thing} is better than two hours once a week.",
            "{thing} sounded terrible in the recording.",
            "Could you suggest a routine for {thing}?",
            "Recording yourself helps you hear what to fix in {thing}.",
            "I almost gave up on {thing} last month.",
        ],
    },
    "pets": {
        "pet": ["the cat", "the dog", "the rabbit", "the puppy"],
        "thing": [
            "the vet visit",
            "the new food",
            "scratching the sofa",
            "the long walks",
            "the flea treatment",
            "the vaccinations",
            "the toys",
            "barking at night",
            "the weight",
            "the litter box",
            "the grooming",
        ],
        "t": [
            "{pet} is having trouble with {thing} again.",
            "How often should I deal with {thing} for {pet}?",
            "{pet} loved {thing}, which surprised me.",
            "For {thing}, patience works better than punishment with {pet}.",
            "We finally sorted out {thing}.",
            "I'm not sure {thing} is good for {pet}.",
            "A routine usually helps {pet} with {thing}.",
            "{pet} has been sleeping all day since {thing}.",
            "The shop recommended something for {thing}.",
            "Ask the vet about {thing} at the next check-up.",
        ],
    },
    "car": {
        "thing": [
            "the tyres",
            "the brakes",
            "the car insurance",
            "the parking permit",
            "the bike chain",
            "the service",
            "the strange noise",
            "the battery",
            "the windscreen",
            "the fuel costs",
            "the bike lights",
            "the MOT test",
        ],
        "t": [
            "I need to do something about {thing} before winter.",
            "The garage quoted a lot for {thing}.",
            "Is it safe to wait a month with {thing}?",
            "For {thing}, get a second quote if the first seems high.",
            "{thing} reminded me how much the car costs us.",
            "I fixed {thing} myself with a video tutorial.",
            "Check {thing} regularly; small problems become expensive.",
            "We might sell the car because of {thing}.",
            "I keep hearing about {thing} from the neighbours.",
            "Remember to keep the receipt for {thing}.",
        ],
    },
    "photo": {
        "thing": [
            "the old camera",
            "portrait mode",
            "the tripod",
            "night photos",
            "the photo album",
            "editing in Lightroom",
            "the wide-angle lens",
            "street photography",
            "the printed photos",
            "the backup drive",
        ],
        "t": [
            "I spent the evening on {thing} and lost track of time.",
            "How do I get better at {thing}?",
            "For {thing}, light matters more than the equipment.",
            "My photos with {thing} look blurry.",
            "I'd like to make {thing} part of the holiday.",
            "Try shooting {thing} in the first hour after sunrise.",
            "I printed a few pictures for {thing}.",
            "Is it worth paying for {thing}?",
            "Keep two copies of everything, {thing} can fail.",
            "I showed my friends the results of {thing}.",
        ],
    },
}

ZH: dict[str, dict[str, list[str]]] = {
    "cooking": {
        "dish": [
            "红烧肉",
            "番茄炒蛋",
            "酸菜鱼",
            "麻婆豆腐",
            "饺子",
            "葱油饼",
            "咖喱鸡",
            "蒸鸡蛋羹",
            "糖醋排骨",
            "清炒时蔬",
            "牛肉面",
            "南瓜粥",
        ],
        "item": [
            "铸铁锅",
            "生抽",
            "八角",
            "电饭煲",
            "空气炸锅",
            "老抽",
            "冰糖",
            "花椒",
            "高压锅",
            "豆瓣酱",
            "香菜",
            "姜片",
        ],
        "t": [
            "今天又做了{dish}，这次用了{item}。",
            "做{dish}的时候放{item}要注意什么？",
            "{dish}要先腌一晚上吗？菜谱上说要提前准备{item}。",
            "家里人说{dish}好吃，就是{item}放多了有点咸。",
            "{dish}里的{item}可以换成别的吗？",
            "做{dish}用{item}没问题，火别太大，免得糊锅。",
            "{dish}快出锅时再放{item}，味道会更鲜。",
            "周末打算做{dish}，还得去买{item}。",
            "上次{dish}做得有点干，可能是忘了放{item}。",
            "{dish}出锅后焖几分钟再吃会更入味。",
        ],
    },
    "work": {
        "thing": [
            "结算系统",
            "数据迁移",
            "季度汇报",
            "值班安排",
            "接口重构",
            "迭代计划",
            "压力测试",
            "新人文档",
            "发布流程",
            "监控大盘",
            "代码评审",
            "故障复盘",
        ],
        "who": [
            "领导",
            "新来的实习生",
            "产品经理",
            "测试组",
            "隔壁组的同事",
            "技术负责人",
            "设计师",
            "客户",
        ],
        "t": [
            "今天{who}让我接手{thing}，我不确定有没有时间。",
            "下午一直在弄{thing}，比想象的慢很多。",
            "{thing}的截止时间要不要跟{who}再商量一下？",
            "可以把{thing}拆成小任务，先和{who}对齐一个。",
            "{who}觉得{thing}下周就能上线，我有点怀疑。",
            "给{who}写一段{thing}的书面总结，也许能省掉一个会。",
            "开了很长的会讨论{thing}，结果什么也没定下来。",
            "午饭后终于把{thing}里那个不稳定的问题修好了。",
            "可以在日历上专门给{thing}留出两个小时。",
            "{thing}越做越多，压力有点大。",
        ],
    },
    "running": {
        "route": [
            "江边那条路",
            "公园步道",
            "体育场旁边的坡",
            "运河边",
            "学校操场",
            "森林公园",
            "滨海栈道",
            "过桥的长线路",
        ],
        "gear": ["新跑鞋", "运动手表", "轻薄外套", "护膝", "能量胶", "头灯", "压缩袜", "跑步腰包"],
        "t": [
            "今天早上带着{gear}跑了{route}，配速好了一点。",
            "在{route}跑的时候左小腿有点紧，明天要休息吗？",
            "一周跑三次的人有必要买{gear}吗？",
            "在{route}慢跑就可以，大部分训练应该是轻松的。",
            "天气好的话周末想去{route}跑一跑。",
            "跑完{route}记得拉伸，{gear}解决不了小腿紧的问题。",
            "忘带{gear}了，跑到{route}一半就后悔了。",
            "怎么慢慢把距离加到比{route}更长？",
            "每周在{route}做一次间歇跑，对速度有帮助。",
            "在{route}跑的时候一直下雨，不过还是挺开心的。",
        ],
    },
    "travel": {
        "place": [
            "云南",
            "成都",
            "厦门",
            "西安",
            "青岛",
            "桂林",
            "三亚",
            "杭州",
            "大理",
            "哈尔滨",
            "敦煌",
            "苏州",
        ],
        "thing": [
            "火车票",
            "便宜的酒店",
            "旅游保险",
            "租车",
            "景点门票",
            "美食路线",
            "接机",
            "行李清单",
            "一日游",
            "签证材料",
        ],
        "t": [
            "假期在考虑去{place}，{thing}有什么建议吗？",
            "{place}的{thing}订好了，比去年贵了不少。",
            "去{place}的话，{thing}最好提前安排。",
            "夏天的{place}会不会人太多？",
            "{place}玩三四天就能把主要景点看完。",
            "出发去{place}之前还得把{thing}搞定。",
            "看了{place}的照片又想再去一次。",
            "看看{thing}能不能免费取消，去{place}的计划可能会变。",
            "上次没安排好{thing}，在{place}浪费了半天。",
            "{place}有什么一定不能错过的？",
        ],
    },
    "home": {
        "room": ["厨房", "卫生间", "卧室", "走廊", "阳台", "客厅", "储物间", "书房"],
        "job": [
            "刷墙",
            "修漏水的水龙头",
            "装新架子",
            "暖气",
            "换地板",
            "修窗户插销",
            "贴壁纸",
            "换灯具",
            "整理纸箱",
            "窗边的霉斑",
        ],
        "t": [
            "这个周末想把{room}的{job}弄好。",
            "{room}{job}的事，房东还没回复。",
            "{job}需要请师傅吗，还是自己能搞定？",
            "{room}要{job}的话，买东西前先量两遍尺寸。",
            "{job}之后{room}看起来好多了。",
            "{job}花的时间比我想的长多了。",
            "{job}如果涉及电线，还是请电工吧。",
            "为了{room}的颜色我们还小吵了一架。",
            "找到一家更便宜的店，可以买{job}要用的东西。",
            "给{room}做个小计划，{job}就不会拖太久。",
        ],
    },
    "finance": {
        "thing": [
            "每月预算",
            "储蓄账户",
            "个税申报",
            "电费",
            "指数基金",
            "保险费",
            "应急资金",
            "信用卡账单",
            "养老金",
            "买菜开销",
        ],
        "t": [
            "晚上看了一下{thing}，这个月花超了。",
            "现在把钱从{thing}里挪出来合适吗？",
            "每个月固定一天看{thing}，压力会小很多。",
            "{thing}又涨了，得比较一下别家。",
            "能用简单的话解释一下{thing}吗？",
            "{thing}用一个简单的表格记就够了。",
            "我老是忘记更新{thing}。",
            "{thing}设成自动转账，就不会偷懒跳过了。",
            "{thing}的事应该全家一起商量。",
            "物价涨了以后我有点担心{thing}。",
        ],
    },
    "kids": {
        "kid": ["儿子", "女儿", "孩子们", "小的那个"],
        "thing": [
            "春游",
            "游泳课",
            "作业",
            "生日会",
            "看屏幕的时间",
            "家长会",
            "练琴",
            "新同学",
            "睡觉时间",
            "足球队",
            "阅读打卡",
            "午饭便当",
        ],
        "t": [
            "{kid}放学回来因为{thing}不高兴。",
            "别的家长是怎么处理{thing}的？",
            "答应{kid}周末好好聊聊{thing}。",
            "关于{thing}，给{kid}两个选项往往比直接命令好。",
            "{thing}进行得这么顺利，{kid}让我很惊喜。",
            "{thing}的回执还没签。",
            "围绕{thing}定一个固定流程，通常能少吵很多。",
            "{kid}一直抗拒{thing}，这正常吗？",
            "和老师聊了聊{thing}，挺愉快的。",
            "表扬{kid}在{thing}上的努力，而不只是结果。",
        ],
    },
    "garden": {
        "plant": [
            "番茄",
            "月季",
            "罗勒",
            "薰衣草",
            "苹果树",
            "草莓",
            "绣球",
            "辣椒",
            "窗台上的香草",
            "西葫芦",
        ],
        "thing": [
            "蚜虫",
            "雨水太多",
            "堆肥",
            "蜗牛",
            "新花盆",
            "黄叶",
            "浇水计划",
            "霜冻",
            "覆盖物",
            "修剪",
        ],
        "t": [
            "{plant}又遇到{thing}的问题了。",
            "{plant}的{thing}什么时候处理最好？",
            "今年把{plant}种在了篱笆旁边。",
            "{plant}碰到{thing}，只要隔几天看一次一般都能控制。",
            "把{thing}的问题解决后，{plant}终于长起来了。",
            "要不要把{plant}挪到阳光更好的地方？",
            "在{plant}周围铺一层覆盖物可以保湿。",
            "邻居给了我一些关于{thing}的建议。",
            "上一季因为{thing}损失了一半的{plant}。",
            "{plant}最好早上浇水，别在晚上浇。",
        ],
    },
    "books": {
        "book": [
            "那本推理小说",
            "丝绸之路的历史书",
            "那本诗集",
            "科幻三部曲",
            "居里夫人传",
            "讲习惯的那本书",
            "奇幻系列",
            "那本回忆录",
            "那本菜谱",
            "短篇小说集",
        ],
        "t": [
            "{book}看到一半了，节奏比我想的慢。",
            "有没有和{book}类似的书推荐？",
            "{book}的结局让我很意外。",
            "喜欢{book}的话，下一本可以选短一点的。",
            "读书会下个月选了{book}。",
            "一看{book}两页就犯困。",
            "早上读{book}效果更好。",
            "{book}读起来吃力的时候，可以试试有声书。",
            "{book}借给朋友后就再也没还回来。",
            "你觉得{book}最想表达的是什么？",
        ],
    },
    "health": {
        "thing": [
            "腰疼",
            "睡眠",
            "头疼",
            "血压",
            "理疗动作",
            "看牙",
            "维生素D",
            "过敏季",
            "坐姿",
            "喝水太少",
        ],
        "t": [
            "这一周都被{thing}困扰。",
            "{thing}需要去看医生吗？",
            "一些小习惯对{thing}有帮助，比如午饭后散散步。",
            "开始用一个应用记录{thing}了。",
            "{thing}如果加重，还是要去问医生。",
            "看了一篇关于{thing}的文章，有点担心。",
            "调整作息以后，{thing}好多了。",
            "今天关于{thing}有什么简单能做的吗？",
            "晚上少看屏幕，对{thing}有好处。",
            "和{thing}有关的事我总是一拖再拖。",
        ],
    },
    "music": {
        "thing": [
            "吉他",
            "新歌",
            "横按和弦",
            "节拍器",
            "尤克里里",
            "合唱排练",
            "指弹",
            "演唱会门票",
            "乐理",
            "音箱",
        ],
        "t": [
            "练了半小时{thing}，手指好疼。",
            "{thing}对初学者来说会不会太难？",
            "练{thing}的时候，慢而干净比快而乱好。",
            "想在聚会上给朋友们表演{thing}。",
            "看了一个讲{thing}的视频，终于懂了。",
            "{thing}每天练十五分钟，比一周练一次两小时好。",
            "录下来的{thing}听起来很糟糕。",
            "能帮我排一个练{thing}的计划吗？",
            "给自己录音，能听出{thing}哪里要改。",
            "上个月差点放弃{thing}。",
        ],
    },
    "pets": {
        "pet": ["猫", "狗", "兔子", "小狗"],
        "thing": [
            "看兽医",
            "新猫粮",
            "抓沙发",
            "长时间散步",
            "驱虫",
            "打疫苗",
            "玩具",
            "晚上叫",
            "体重",
            "猫砂盆",
            "洗澡美容",
        ],
        "t": [
            "{pet}在{thing}上又出问题了。",
            "{pet}的{thing}多久一次合适？",
            "{pet}居然很喜欢{thing}，我挺意外的。",
            "{thing}这件事，对{pet}耐心比惩罚有用。",
            "{thing}的事终于解决了。",
            "不确定{thing}对{pet}好不好。",
            "固定的作息通常能帮{pet}适应{thing}。",
            "自从{thing}以后，{pet}一整天都在睡。",
            "店员推荐了一款东西，说对{thing}有用。",
            "下次体检时问问兽医{thing}的事。",
        ],
    },
    "car": {
        "thing": [
            "轮胎",
            "刹车",
            "车险",
            "停车证",
            "自行车链条",
            "保养",
            "奇怪的异响",
            "电瓶",
            "挡风玻璃",
            "油费",
            "车灯",
            "年检",
        ],
        "t": [
            "入冬前得把{thing}的事处理一下。",
            "修理厂给{thing}报了个高价。",
            "{thing}再等一个月安全吗？",
            "{thing}的报价太高的话，再找一家问问。",
            "{thing}让我想起养车有多贵。",
            "看着视频教程自己把{thing}搞定了。",
            "{thing}要定期检查，小问题拖久了会很贵。",
            "因为{thing}，我们可能要把车卖了。",
            "邻居们一直在聊{thing}。",
            "{thing}的发票记得留好。",
        ],
    },
    "photo": {
        "thing": [
            "老相机",
            "人像模式",
            "三脚架",
            "夜景照片",
            "相册",
            "后期修图",
            "广角镜头",
            "街头摄影",
            "冲印的照片",
            "备份硬盘",
        ],
        "t": [
            "一晚上都在弄{thing}，忘了时间。",
            "怎样才能把{thing}做得更好？",
            "{thing}这件事，光线比器材更重要。",
            "用{thing}拍的照片有点糊。",
            "想把{thing}当成假期的一部分。",
            "{thing}可以试试日出后的第一个小时。",
            "为{thing}冲印了几张照片。",
            "{thing}值得花钱吗？",
            "所有照片都存两份，{thing}也会坏。",
            "给朋友们看了{thing}的成果。",
        ],
    },
}

EN_CHATTER = [
    "That makes sense, thanks.",
    "Hmm, I'm not sure about that.",
    "Good point.",
    "Let me think about it.",
    "Okay, I'll try that.",
    "Honestly it has been a long day.",
    "Sorry, I got distracted for a moment.",
    "That sounds reasonable to me.",
    "Right, I had not thought of that.",
    "I'll let you know how it goes.",
]
ZH_CHATTER = [
    "有道理，谢谢。",
    "嗯，我不太确定。",
    "说得对。",
    "让我想想。",
    "好，我试试看。",
    "说实话今天挺累的。",
    "不好意思，刚才走神了。",
    "听起来挺合理的。",
    "对，我之前没想到这一点。",
    "之后告诉你效果怎么样。",
]

# -- hand-written turns with the facts the questions ask about ---------------------------------
# (id, session, topic, text). Each is a long turn in the session's language, with chatter around
# the fact, as people say it.
FACTS: tuple[tuple[str, str, str, str], ...] = (
    # English single facts
    (
        "f-en-sister",
        "s01",
        "work",
        "Oh, before I forget: my sister Anna got the job at the "
        "textile museum in Lyon, so she is moving there in September. Anyway, back to the "
        "billing service, I need a plan for tomorrow.",
    ),
    (
        "f-en-allergy",
        "s01",
        "cooking",
        "One thing you should know for recipes: I'm allergic to "
        "cashews, they give me hives, so please never suggest cashew cream or cashew pesto.",
    ),
    (
        "f-en-bike",
        "s11",
        "car",
        "My commuter bike is a green Gazelle that I bought second-hand "
        "for 240 euros, and honestly it has been more reliable than the car.",
    ),
    (
        "f-en-dentist",
        "s13",
        "health",
        "The dentist said I grind my teeth at night, so now I "
        "have to wear a night guard, which feels weird but my jaw is less sore.",
    ),
    (
        "f-en-band",
        "s07",
        "music",
        "The band I keep listening to on repeat is Khruangbin, their "
        "bass lines are exactly the kind of thing I want to learn on guitar.",
    ),
    (
        "f-en-cat",
        "s15",
        "pets",
        "Our cat is called Biscuit, she is a ginger tabby we adopted "
        "from the shelter on the Mauritskade, and she is afraid of the vacuum cleaner.",
    ),
    (
        "f-en-lead",
        "s13",
        "work",
        "Small update: my team lead is now Priya Raman, she came "
        "over from the payments team and she wants weekly one-to-ones on Thursdays.",
    ),
    (
        "f-en-garden",
        "s05",
        "garden",
        "We share an allotment plot number 14 with our neighbour "
        "Joost, so anything I plant there I have to agree with him first.",
    ),
    (
        "f-en-book",
        "s17",
        "books",
        "For the book club I'm reading Klara and the Sun by Kazuo "
        "Ishiguro, it's quiet and a bit sad but I like the narrator.",
    ),
    (
        "f-en-savings",
        "s17",
        "finance",
        "Our goal is to save 6,000 euros by December for a new "
        "kitchen, so we put 500 a month aside on the first of each month.",
    ),
    (
        "f-en-son-school",
        "s09",
        "kids",
        "My son Tim started at the Montessori school on the "
        "Rozenlaan in January, and he already has a best friend called Sem.",
    ),
    (
        "f-en-camera",
        "s09",
        "photo",
        "I finally bought a camera: a used Fujifilm X-T30 with "
        "a 35 mm lens, mostly to take better pictures of the kids.",
    ),
    (
        "f-en-trip",
        "s21",
        "travel",
        "We booked the summer trip: two weeks in Porto and the "
        "Douro valley from 20 July, flying from Eindhoven because it was much cheaper.",
    ),
    (
        "f-en-knee",
        "s11",
        "running",
        "The physio said the pain on the outside of my knee is "
        "IT band syndrome, so no downhill running for a month and foam rolling every day.",
    ),
    (
        "f-en-daughter-swim",
        "s23",
        "kids",
        "Great news: my daughter Lotte passed her swimming "
        "diploma A yesterday after six months of lessons, she was so proud.",
    ),
    (
        "f-en-car-brand",
        "s23",
        "car",
        "Our car is a 2014 Toyota Auris hybrid, it has 180,000 "
        "kilometres on it now and the garage says the brakes are fine.",
    ),
    (
        "f-en-bread",
        "s15",
        "cooking",
        "My sourdough starter is named Bubbles and it lives in "
        "the fridge; I feed it on Friday evening if I want to bake on Saturday.",
    ),
    (
        "f-en-guitar-teacher",
        "s19",
        "music",
        "I signed up for guitar lessons with a teacher "
        "called Marco, every Tuesday at seven in the evening near the station.",
    ),
    (
        "f-en-mortgage",
        "s03",
        "finance",
        "We have a fixed-rate mortgage at 3.1 percent until "
        "2031, so interest rate news does not scare me much right now.",
    ),
    (
        "f-en-hallway",
        "s03",
        "home",
        "We decided to paint the hallway in a soft sage green, "
        "after testing five samples on the wall for a week.",
    ),
    # Chinese single facts
    (
        "f-zh-mom",
        "s02",
        "travel",
        "对了，我妈妈下个月要来荷兰住三个月，她对花粉过敏，所以春天"
        "出门得带上药。我们先说回去成都的行程吧。",
    ),
    (
        "f-zh-marathon",
        "s02",
        "running",
        "我报名了明年四月的鹿特丹马拉松，目标是四小时以内跑完，现在每周跑四次。",
    ),
    (
        "f-zh-boss",
        "s04",
        "work",
        "我们部门新来的总监叫林晓，她以前在阿里做支付，开会特别讲究数据。",
    ),
    ("f-zh-daughter", "s04", "kids", "女儿今年上二年级，她最喜欢的科目是数学，最怕的是写作文。"),
    (
        "f-zh-blood",
        "s06",
        "health",
        "体检结果出来了，医生说我的血糖有点偏高，让我少吃精米白面，三个月后复查。",
    ),
    (
        "f-zh-dish",
        "s06",
        "cooking",
        "我老公最拿手的菜是可乐鸡翅，孩子们每次都抢着吃，我自己更喜欢他做的酸辣土豆丝。",
    ),
    (
        "f-zh-dog",
        "s08",
        "pets",
        "我们家的狗叫豆豆，是一只三岁的柯基，特别怕打雷，一打雷就躲到床底下。",
    ),
    (
        "f-zh-flat",
        "s08",
        "home",
        "我们租的房子在二楼，厨房朝北，冬天特别冷，房东答应明年换双层玻璃。",
    ),
    (
        "f-zh-fund",
        "s10",
        "finance",
        "我每个月定投一千欧的全球指数基金，已经坚持两年了，中间跌的时候也没停。",
    ),
    ("f-zh-book", "s10", "books", "最近在读余华的《活着》，读到福贵的儿子那一段哭了好久。"),
    (
        "f-zh-piano",
        "s12",
        "music",
        "儿子在学钢琴，老师姓周，每周六上午上课，他现在在练《小星星变奏曲》。",
    ),
    (
        "f-zh-balcony",
        "s12",
        "garden",
        "阳台上种的那盆柠檬树是去年搬家时同事送的，今年第一次结了三个果子。",
    ),
    (
        "f-zh-lens",
        "s14",
        "photo",
        "我新买了一个适马的十八到五十毫米镜头，花了五百欧，主要想拍旅行风景。",
    ),
    (
        "f-zh-wedding",
        "s14",
        "travel",
        "十月份要回杭州参加表妹的婚礼，已经买好了十月二号出发的机票。",
    ),
    (
        "f-zh-car-crash",
        "s16",
        "car",
        "上周倒车的时候把后保险杠蹭了，修理厂说要四百欧，我们决定走保险。",
    ),
    (
        "f-zh-son-friend",
        "s16",
        "kids",
        "儿子在学校交了个好朋友叫小宇，两个人都喜欢乐高，周末经常一起拼。",
    ),
    ("f-zh-project", "s18", "work", "我现在负责的项目叫天枢，是公司的新推荐系统，计划九月上线。"),
    (
        "f-zh-yoga",
        "s18",
        "health",
        "医生建议我每周做两次瑜伽来缓解腰疼，我报了家附近的一个晚班，每周二和周四。",
    ),
    ("f-zh-move", "s20", "home", "我们已经看好了新房子，在代尔夫特，三室一厅，八月一号交钥匙。"),
    (
        "f-zh-shoes",
        "s20",
        "running",
        "我现在跑步穿的是亚瑟士的 Novablast，已经跑了六百公里，鞋底磨得差不多了。",
    ),
    # multi-hop pairs (two turns in different sessions)
    (
        "m-en-anna-job",
        "s07",
        "travel",
        "We might visit Anna over Easter; she says the museum "
        "job is mostly restoring old silk fabrics, which sounds like a dream to her.",
    ),
    (
        "m-en-priya",
        "s19",
        "garden",
        "Funny thing, Priya from work turns out to have an "
        "allotment too, she grows chillies and gave me seedlings.",
    ),
    (
        "m-en-tim-sport",
        "s23",
        "kids",
        "Tim wants to join the football club where Sem plays, training is on Wednesday afternoons.",
    ),
    (
        "m-en-biscuit-vet",
        "s22",
        "pets",
        "Biscuit had her check-up at the vet on the "
        "Linnaeusstraat and she is two kilos too heavy, so it's diet food from now on.",
    ),
    (
        "m-en-porto-hotel",
        "s21",
        "photo",
        "In Porto we'll stay at a small guesthouse in "
        "Ribeira; I want to photograph the bridge at blue hour with the Fujifilm.",
    ),
    (
        "m-en-marco",
        "s19",
        "music",
        "Marco told me to practise the Khruangbin bass line with "
        "a metronome at 80 before I try it at full speed.",
    ),
    ("m-zh-mom-city", "s06", "health", "我妈妈住在苏州，她说那边今年冬天特别冷，血压又有点高了。"),
    ("m-zh-linxiao", "s24", "work", "林晓说天枢项目如果九月能按时上线，年底团队会有额外奖金。"),
    ("m-zh-doudou", "s22", "pets", "豆豆今天第一次见到邻居家的猫，吓得躲到了我身后。"),
    (
        "m-zh-xiaoyu",
        "s23",
        "kids",
        "Tim and 小宇 are in the same Lego club now, the club meets "
        "every Saturday morning at the library.",
    ),
    ("m-zh-lemon", "s12", "garden", "送我柠檬树的同事叫陈静，她自己家院子里种了一整排果树。"),
    (
        "m-zh-delft",
        "s24",
        "finance",
        "买代尔夫特的房子要准备百分之十的首付，所以今年的旅行预算得砍掉一半。",
    ),
    # changed preferences: (old, new with a change cue)
    (
        "p-en-milk-old",
        "s01",
        "cooking",
        "I always take my coffee with oat milk, it's the only "
        "plant milk that doesn't split in hot coffee for me.",
    ),
    (
        "p-en-milk-new",
        "s15",
        "cooking",
        "Small change in the kitchen: I no longer buy oat milk, "
        "I switched to soy milk in my coffee because it has more protein.",
    ),
    (
        "p-en-run-old",
        "s02",
        "running",
        "I like running early in the morning before work, around six, when the streets are empty.",
    ),
    (
        "p-en-run-new",
        "s20",
        "running",
        "I don't run in the mornings any more; since the "
        "knee trouble I switched to evening runs after dinner.",
    ),
    (
        "p-en-editor-old",
        "s01",
        "work",
        "At work I write everything in VS Code with the Vim "
        "plugin, I've used that setup for years.",
    ),
    (
        "p-en-editor-new",
        "s13",
        "work",
        "I switched from VS Code to Neovim for work last week, "
        "VS Code was getting too slow on our big repository.",
    ),
    (
        "p-en-read-old",
        "s05",
        "books",
        "I mostly read on my Kindle at night, paper books are too heavy to hold in bed.",
    ),
    (
        "p-en-read-new",
        "s17",
        "books",
        "I'm not reading on the Kindle any more, the screen "
        "broke and I went back to paper books from the library.",
    ),
    (
        "p-en-tea-old",
        "s07",
        "travel",
        "On trips I always pack my own green tea bags, hotel tea is usually awful.",
    ),
    (
        "p-en-tea-new",
        "s21",
        "travel",
        "I no longer drink green tea, the caffeine keeps me "
        "awake, so now I pack rooibos for trips instead.",
    ),
    (
        "p-en-answer-old",
        "s03",
        "finance",
        "When you explain money things to me, please give "
        "me the answer in English, the Dutch terms confuse me.",
    ),
    (
        "p-en-answer-new",
        "s17",
        "finance",
        "From now on answer finance questions in Dutch "
        "instead; I no longer want English for that because the forms are all in Dutch.",
    ),
    ("p-zh-coffee-old", "s04", "work", "我每天早上到公司先喝一杯美式咖啡，不加糖。"),
    (
        "p-zh-coffee-new",
        "s18",
        "work",
        "我现在不喝咖啡了，改喝绿茶，医生说咖啡因对我的睡眠影响太大。",
    ),
    ("p-zh-gym-old", "s02", "running", "除了跑步，我每周还去两次健身房练力量，主要是深蹲和卧推。"),
    ("p-zh-gym-new", "s20", "running", "我已经不去健身房了，改在家用弹力带练力量，省时间也省钱。"),
    ("p-zh-lunch-old", "s06", "cooking", "工作日的午饭我一般在公司食堂吃，选择挺多的。"),
    (
        "p-zh-lunch-new",
        "s22",
        "cooking",
        "我不再在食堂吃午饭了，改成每天自己带便当，主要是糙米和蔬菜，控制血糖。",
    ),
    ("p-zh-phone-old", "s10", "finance", "我们家的手机套餐是 KPN 的，每月三十欧，两张卡。"),
    (
        "p-zh-phone-new",
        "s24",
        "finance",
        "手机套餐我们改用 Lebara 了，每月只要十五欧，KPN 那个已经不用了。",
    ),
    ("p-zh-sleep-old", "s08", "home", "我一般晚上十二点以后才睡，早上七点起床。"),
    ("p-zh-sleep-new", "s18", "health", "我现在每天晚上十点半就睡了，早上六点起来，不再熬夜了。"),
    ("p-zh-reply-old", "s04", "kids", "你跟我说孩子教育的话题时，回答尽量长一点，多给几个例子。"),
    (
        "p-zh-reply-new",
        "s16",
        "kids",
        "以后聊孩子的事回答简短一点就行，不再需要那么多例子了，我没时间看长的。",
    ),
)

# (id, lang, category, text, targets, stale). "time" targets name sessions (every turn of them
# counts) or "session:topic" (that session's turns on that topic).
QUESTIONS: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    # single facts, English
    ("q-en-sister", "en", "single", "Where is my sister moving to?", ("f-en-sister",), ()),
    ("q-en-allergy", "en", "single", "What nut am I allergic to?", ("f-en-allergy",), ()),
    ("q-en-bike", "en", "single", "What kind of bike do I ride to work?", ("f-en-bike",), ()),
    (
        "q-en-dentist",
        "en",
        "single",
        "Why do I have to wear something in my mouth at night?",
        ("f-en-dentist",),
        (),
    ),
    ("q-en-band", "en", "single", "Which band have I been listening to a lot?", ("f-en-band",), ()),
    ("q-en-cat", "en", "single", "What is our cat's name?", ("f-en-cat",), ()),
    ("q-en-lead", "en", "single", "Who is my team lead now?", ("f-en-lead",), ()),
    ("q-en-garden", "en", "single", "Who do I share the allotment with?", ("f-en-garden",), ()),
    (
        "q-en-book",
        "en",
        "single",
        "Which novel am I reading for the book club?",
        ("f-en-book",),
        (),
    ),
    (
        "q-en-savings",
        "en",
        "single",
        "How much are we saving each month for the kitchen?",
        ("f-en-savings",),
        (),
    ),
    ("q-en-son-school", "en", "single", "Which school does Tim go to?", ("f-en-son-school",), ()),
    ("q-en-camera", "en", "single", "What camera did I buy?", ("f-en-camera",), ()),
    ("q-en-knee", "en", "single", "What did the physio say about my knee?", ("f-en-knee",), ()),
    ("q-en-car", "en", "single", "What car do we drive?", ("f-en-car-brand",), ()),
    ("q-en-bread", "en", "single", "When do I feed my sourdough starter?", ("f-en-bread",), ()),
    (
        "q-en-mortgage",
        "en",
        "single",
        "What is the interest rate on our mortgage?",
        ("f-en-mortgage",),
        (),
    ),
    # single facts, Chinese
    ("q-zh-mom", "zh", "single", "我妈妈对什么过敏？", ("f-zh-mom",), ()),
    ("q-zh-marathon", "zh", "single", "我报名了哪个马拉松？", ("f-zh-marathon",), ()),
    ("q-zh-boss", "zh", "single", "我们部门新来的总监叫什么名字？", ("f-zh-boss",), ()),
    ("q-zh-daughter", "zh", "single", "女儿最喜欢哪门课？", ("f-zh-daughter",), ()),
    ("q-zh-blood", "zh", "single", "体检时医生说我哪项指标有问题？", ("f-zh-blood",), ()),
    ("q-zh-dish", "zh", "single", "我老公最会做什么菜？", ("f-zh-dish",), ()),
    ("q-zh-dog", "zh", "single", "我家的狗怕什么？", ("f-zh-dog",), ()),
    ("q-zh-flat", "zh", "single", "房东答应给我们换什么？", ("f-zh-flat",), ()),
    ("q-zh-fund", "zh", "single", "我每个月定投多少钱？", ("f-zh-fund",), ()),
    ("q-zh-book", "zh", "single", "我最近在读谁的小说？", ("f-zh-book",), ()),
    ("q-zh-piano", "zh", "single", "儿子的钢琴老师姓什么？", ("f-zh-piano",), ()),
    ("q-zh-balcony", "zh", "single", "阳台上的柠檬树结了几个果子？", ("f-zh-balcony",), ()),
    ("q-zh-lens", "zh", "single", "我新买的镜头是什么牌子的？", ("f-zh-lens",), ()),
    ("q-zh-project", "zh", "single", "我负责的那个项目叫什么？", ("f-zh-project",), ()),
    ("q-zh-yoga", "zh", "single", "我每周几去上瑜伽课？", ("f-zh-yoga",), ()),
    ("q-zh-shoes", "zh", "single", "我现在穿什么跑鞋？", ("f-zh-shoes",), ()),
    # multi-hop
    (
        "q-en-m-anna",
        "en",
        "multi_hop",
        "What will my sister be doing in her new job, and in which city?",
        ("f-en-sister", "m-en-anna-job"),
        (),
    ),
    (
        "q-en-m-priya",
        "en",
        "multi_hop",
        "What does my team lead grow in her garden?",
        ("m-en-priya", "f-en-lead"),
        (),
    ),
    (
        "q-en-m-tim",
        "en",
        "multi_hop",
        "Which sport does my son want to do with his best friend?",
        ("m-en-tim-sport", "f-en-son-school"),
        (),
    ),
    (
        "q-en-m-biscuit",
        "en",
        "multi_hop",
        "Is our shelter cat too heavy?",
        ("m-en-biscuit-vet", "f-en-cat"),
        (),
    ),
    (
        "q-en-m-porto",
        "en",
        "multi_hop",
        "Where will we stay on the summer trip and what do I want to photograph there?",
        ("m-en-porto-hotel", "f-en-trip"),
        (),
    ),
    (
        "q-en-m-marco",
        "en",
        "multi_hop",
        "What tempo did my guitar teacher tell me to use for that band's bass line?",
        ("m-en-marco", "f-en-guitar-teacher"),
        (),
    ),
    (
        "q-zh-m-mom",
        "zh",
        "multi_hop",
        "对花粉过敏的是我妈妈，她住在哪个城市？",
        ("m-zh-mom-city", "f-zh-mom"),
        (),
    ),
    (
        "q-zh-m-linxiao",
        "zh",
        "multi_hop",
        "新总监说我负责的项目按时上线会怎样？",
        ("m-zh-linxiao", "f-zh-boss"),
        (),
    ),
    (
        "q-zh-m-doudou",
        "zh",
        "multi_hop",
        "我家柯基见到邻居的猫是什么反应？",
        ("m-zh-doudou", "f-zh-dog"),
        (),
    ),
    (
        "q-zh-m-xiaoyu",
        "zh",
        "multi_hop",
        "儿子和他的好朋友每周六在哪里玩乐高？",
        ("m-zh-xiaoyu", "f-zh-son-friend"),
        (),
    ),
    (
        "q-zh-m-lemon",
        "zh",
        "multi_hop",
        "送我柠檬树的同事叫什么？",
        ("m-zh-lemon", "f-zh-balcony"),
        (),
    ),
    (
        "q-zh-m-delft",
        "zh",
        "multi_hop",
        "为了新房子的首付，我们要在哪方面省钱？",
        ("m-zh-delft", "f-zh-move"),
        (),
    ),
    # when did…
    ("q-en-w-camera", "en", "when", "When did I buy the Fujifilm?", ("f-en-camera",), ()),
    (
        "q-en-w-knee",
        "en",
        "when",
        "When did the physio tell me to stop running downhill?",
        ("f-en-knee",),
        (),
    ),
    (
        "q-en-w-swim",
        "en",
        "when",
        "When did Lotte get her swimming diploma?",
        ("f-en-daughter-swim",),
        (),
    ),
    ("q-en-w-trip", "en", "when", "When did we book the Porto trip?", ("f-en-trip",), ()),
    (
        "q-en-w-guitar",
        "en",
        "when",
        "When did I sign up for guitar lessons?",
        ("f-en-guitar-teacher",),
        (),
    ),
    (
        "q-en-w-hallway",
        "en",
        "when",
        "When did we pick the colour for the hallway?",
        ("f-en-hallway",),
        (),
    ),
    ("q-zh-w-marathon", "zh", "when", "我是什么时候报名马拉松的？", ("f-zh-marathon",), ()),
    ("q-zh-w-blood", "zh", "when", "医生什么时候说我血糖偏高的？", ("f-zh-blood",), ()),
    ("q-zh-w-crash", "zh", "when", "我什么时候把车的保险杠蹭了？", ("f-zh-car-crash",), ()),
    ("q-zh-w-lens", "zh", "when", "我是什么时候买的新镜头？", ("f-zh-lens",), ()),
    ("q-zh-w-wedding", "zh", "when", "表妹婚礼的机票是什么时候订的？", ("f-zh-wedding",), ()),
    ("q-zh-w-move", "zh", "when", "我们什么时候看好的新房子？", ("f-zh-move",), ()),
    # what did we talk about (time windows)
    (
        "q-en-t-lastweek",
        "en",
        "time",
        "What did we talk about last week?",
        ("s21", "s22", "s23"),
        (),
    ),
    ("q-en-t-yesterday", "en", "time", "What did we chat about yesterday?", ("s24",), ()),
    ("q-en-t-march", "en", "time", "What did we discuss in March?", ("s12", "s13"), ()),
    (
        "q-en-t-weekend-car",
        "en",
        "time",
        "What did we say about the car last weekend?",
        ("s23:car",),
        (),
    ),
    (
        "q-en-t-lastmonth-books",
        "en",
        "time",
        "Which books did we talk about last month?",
        ("s17:books",),
        (),
    ),
    ("q-zh-t-lastweek", "zh", "time", "上周我们聊了些什么？", ("s21", "s22", "s23"), ()),
    (
        "q-zh-t-lastyear",
        "zh",
        "time",
        "去年我们都聊过什么？",
        ("s01", "s02", "s03", "s04", "s05", "s06", "s07"),
        (),
    ),
    ("q-zh-t-march-garden", "zh", "time", "三月份我们聊花园的时候说了什么？", ("s12:garden",), ()),
    ("q-zh-t-weekend-pets", "zh", "time", "上周末聊宠物的时候我说了什么？", ("s22:pets",), ()),
    ("q-zh-t-yesterday-work", "zh", "time", "昨天我们聊工作聊到哪了？", ("s24:work",), ()),
    # changed preferences: the newer statement is the answer
    (
        "q-en-p-milk",
        "en",
        "changed",
        "What milk do I take in my coffee?",
        ("p-en-milk-new",),
        ("p-en-milk-old",),
    ),
    (
        "q-en-p-run",
        "en",
        "changed",
        "What time of day do I go running?",
        ("p-en-run-new",),
        ("p-en-run-old",),
    ),
    (
        "q-en-p-editor",
        "en",
        "changed",
        "Which editor do I use at work?",
        ("p-en-editor-new",),
        ("p-en-editor-old",),
    ),
    (
        "q-en-p-read",
        "en",
        "changed",
        "How do I read books these days, Kindle or paper?",
        ("p-en-read-new",),
        ("p-en-read-old",),
    ),
    (
        "q-en-p-tea",
        "en",
        "changed",
        "What tea should I pack for the trip?",
        ("p-en-tea-new",),
        ("p-en-tea-old",),
    ),
    (
        "q-en-p-answer",
        "en",
        "changed",
        "Which language do I want finance answers in?",
        ("p-en-answer-new",),
        ("p-en-answer-old",),
    ),
    (
        "q-zh-p-coffee",
        "zh",
        "changed",
        "我早上到公司喝什么？",
        ("p-zh-coffee-new",),
        ("p-zh-coffee-old",),
    ),
    ("q-zh-p-gym", "zh", "changed", "我在哪里练力量？", ("p-zh-gym-new",), ("p-zh-gym-old",)),
    (
        "q-zh-p-lunch",
        "zh",
        "changed",
        "工作日的午饭我怎么解决？",
        ("p-zh-lunch-new",),
        ("p-zh-lunch-old",),
    ),
    (
        "q-zh-p-phone",
        "zh",
        "changed",
        "我们家的手机套餐是哪家的？",
        ("p-zh-phone-new",),
        ("p-zh-phone-old",),
    ),
    (
        "q-zh-p-sleep",
        "zh",
        "changed",
        "我一般晚上几点睡觉？",
        ("p-zh-sleep-new",),
        ("p-zh-sleep-old",),
    ),
    (
        "q-zh-p-reply",
        "zh",
        "changed",
        "聊孩子的事时你的回答应该多长？",
        ("p-zh-reply-new",),
        ("p-zh-reply-old",),
    ),
    # unrelated questions: nothing should come back
    ("q-en-n-capital", "en", "nothing", "What is the capital of Canada?", (), ()),
    (
        "q-en-n-regex",
        "en",
        "nothing",
        "How do I write a regular expression that matches an email address?",
        (),
        (),
    ),
    ("q-en-n-light", "en", "nothing", "How fast does light travel?", (), ()),
    (
        "q-en-n-sql",
        "en",
        "nothing",
        "What is the difference between an inner join and a left join in SQL?",
        (),
        (),
    ),
    ("q-en-n-moon", "en", "nothing", "Why does the moon have phases?", (), ()),
    ("q-en-n-prime", "en", "nothing", "Is 221 a prime number?", (), ()),
    (
        "q-en-n-french",
        "en",
        "nothing",
        "Who was the first president of the French Fifth Republic?",
        (),
        (),
    ),
    (
        "q-en-n-python",
        "en",
        "nothing",
        "How do I sort a list of tuples by the second element in Python?",
        (),
        (),
    ),
    ("q-en-n-volcano", "en", "nothing", "How are volcanoes formed?", (), ()),
    ("q-en-n-tcp", "en", "nothing", "Explain the TCP three-way handshake.", (), ()),
    ("q-zh-n-regex", "zh", "nothing", "正则表达式怎么匹配邮箱地址？", (), ()),
    ("q-zh-n-tang", "zh", "nothing", "唐朝是哪一年建立的？", (), ()),
    ("q-zh-n-photosyn", "zh", "nothing", "光合作用的原理是什么？", (), ()),
    ("q-zh-n-pythag", "zh", "nothing", "勾股定理是怎么证明的？", (), ()),
    ("q-zh-n-http", "zh", "nothing", "HTTP 状态码 502 是什么意思？", (), ()),
    ("q-zh-n-moon", "zh", "nothing", "地球到月球有多远？", (), ()),
    ("q-zh-n-js", "zh", "nothing", "JavaScript 里 let 和 var 有什么区别？", (), ()),
    ("q-zh-n-chem", "zh", "nothing", "水的化学式是什么？", (), ()),
    ("q-zh-n-poem", "zh", "nothing", "《静夜思》是谁写的？", (), ()),
    ("q-zh-n-gdp", "zh", "nothing", "什么是国内生产总值？", (), ()),
)


def _filler(rng: random.Random, lang: str, topic: str) -> str:
    """One generated turn: one to three topic sentences, sometimes with chatter around them."""
    pools = EN if lang == "en" else ZH
    spec = pools[topic]
    chatter = EN_CHATTER if lang == "en" else ZH_CHATTER
    sentences = []
    for template in rng.sample(spec["t"], rng.choice((1, 2, 2, 3, 3, 4))):
        values = {name: rng.choice(options) for name, options in spec.items() if name != "t"}
        sentence = template.format(**values)
        sentences.append(sentence[0].upper() + sentence[1:] if lang == "en" else sentence)
    if rng.random() < 0.3:
        sentences.insert(0, rng.choice(chatter))
    if rng.random() < 0.15:
        sentences.append(rng.choice(chatter))
    return (" " if lang == "en" else "").join(sentences)


def generate() -> dict:
    """Build the set (deterministic)."""
    rng = random.Random(SEED)
    facts_by_session: dict[str, list[tuple[str, str, str]]] = {}
    for fact_id, session, topic, text in FACTS:
        facts_by_session.setdefault(session, []).append((fact_id, topic, text))
    memories: list[dict] = []
    seen: set[str] = set()
    for key, start, lang, topics in SESSIONS:
        began = datetime.fromisoformat(start)
        planted = facts_by_session.get(key, [])
        slots = sorted(rng.sample(range(5, TURNS_PER_SESSION - 5), len(planted)))
        at = dict(zip(slots, planted, strict=True))
        for turn in range(TURNS_PER_SESSION):
            created = began + timedelta(minutes=turn)
            if turn in at:
                fact_id, topic, text = at[turn]
                memory_id = fact_id
            else:
                # Topic blocks, as real chats drift: the first topic, then the second, with
                # some back and forth in the middle.
                share = turn / TURNS_PER_SESSION
                topic = topics[0] if rng.random() > share else topics[1]
                text = _filler(rng, lang, topic)
                while text in seen:
                    text = _filler(rng, lang, topic)
                memory_id = f"{key}-t{turn:03d}"
            seen.add(text)
            memories.append(
                {
                    "id": memory_id,
                    "session": key,
                    "lang": lang,
                    "topic": topic,
                    "role": "user" if turn % 2 == 0 else "assistant",
                    "text": text,
                    "created_at": created.isoformat(),
                }
            )
    queries = []
    counters: dict[tuple[str, str], int] = {}
    for query_id, lang, category, text, targets, stale in QUESTIONS:
        n = counters.get((category, lang), 0)
        counters[(category, lang)] = n + 1
        queries.append(
            {
                "id": query_id,
                "lang": lang,
                "category": category,
                "text": text,
                "targets": _expand(targets, memories) if category == "time" else list(targets),
                "stale": list(stale),
                "split": "calibration" if n % 2 == 0 else "test",
            }
        )
    ids = {m["id"] for m in memories}
    for q in queries:
        missing = [t for t in [*q["targets"], *q["stale"]] if t not in ids]
        if missing:
            raise ValueError(f"{q['id']}: unknown targets {missing}")
    return {
        "name": "conversation_set",
        "version": 1,
        "description": (
            "Generated multi-session dialogue store (zh + en) with hand-written fact turns and "
            "questions; see tests/bench/conversation_set.py."
        ),
        "reference_now": REFERENCE_NOW,
        "seed": SEED,
        "sessions": [
            {"id": key, "start": start, "lang": lang, "topics": list(topics)}
            for key, start, lang, topics in SESSIONS
        ],
        "memories": memories,
        "queries": queries,
    }


def _expand(targets: tuple[str, ...], memories: list[dict]) -> list[str]:
    """Session targets ("s21", "s23:car") as the ids of the turns they cover."""
    out: list[str] = []
    for target in targets:
        session, _, topic = target.partition(":")
        out.extend(
            m["id"]
            for m in memories
            if m["session"] == session and (not topic or m["topic"] == topic)
        )
    return out


def load(path: Path = DEFAULT_PATH) -> dict:
    """Read the committed set."""
    data: dict = json.loads(path.read_text(encoding="utf-8"))
    return data


def load_questions(path: Path = QUESTIONS_V2, data: dict | None = None) -> list[dict]:
    """Read an added question file and check it against the store (``data``: the committed set).

    Checked (``dataset_overlap.check_questions``, no overlap limit here): ids new, targets and
    stale ids are turns of the store, no first person, split alternating within category and
    language; and no question is a verbatim part of a turn.

    Raises:
        ValueError: On any problem.
    """
    import dataset_overlap  # the bench folder is on sys.path when run from it

    data = load() if data is None else data
    questions: list[dict] = json.loads(path.read_text(encoding="utf-8"))["queries"]
    problems = dataset_overlap.check_questions(data, questions, None)
    texts = [m["text"].lower() for m in data["memories"]]
    for q in questions:
        words = q["text"].lower().rstrip("?？")
        if any(words in t for t in texts):
            problems.append(f"{q['id']}: copies a turn verbatim")
    if problems:
        raise ValueError(f"{path.name}: " + "; ".join(problems))
    return questions


def dump(data: dict) -> str:
    """The JSON text of the set (one memory or query per line keeps diffs readable)."""
    lines = ["{"]
    head = {k: v for k, v in data.items() if k not in ("memories", "queries")}
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    for name in ("memories", "queries"):
        lines.append(f'  "{name}": [')
        items = data[name]
        for i, item in enumerate(items):
            comma = "," if i + 1 < len(items) else ""
            lines.append("    " + json.dumps(item, ensure_ascii=False) + comma)
        lines.append("  ]" + ("," if name == "memories" else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def print_counts(data: dict) -> None:
    """Print what the set holds."""
    memories, queries = data["memories"], data["queries"]
    sessions = {m["session"] for m in memories}
    print(
        f"Conversation set: {len(memories)} turns in {len(sessions)} sessions "
        f"({sum(m['lang'] == 'en' for m in memories)} en, "
        f"{sum(m['lang'] == 'zh' for m in memories)} zh), "
        f"mean {sum(len(m['text']) for m in memories) / len(memories):.0f} characters a turn"
    )
    cats: dict[str, list[int]] = {}
    for q in queries:
        pair = cats.setdefault(q["category"], [0, 0])
        pair[0 if q["split"] == "calibration" else 1] += 1
    print(
        "Questions (calibration/test): " + ", ".join(f"{c} {a}/{b}" for c, (a, b) in cats.items())
    )


def main() -> int:
    """Write the set, or check the committed one against a fresh generation."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--check", action="store_true", help="compare, don't write")
    args = parser.parse_args()
    data = generate()
    text = dump(data)
    if args.check:
        same = args.path.read_text(encoding="utf-8") == text
        print_counts(data)
        print("committed set matches the generator" if same else "committed set DIFFERS")
        questions = load_questions(QUESTIONS_V2, data)
        print_counts({**data, "queries": questions})
        print(f"{QUESTIONS_V2.name}: {len(questions)} questions, checks passed")
        return 0 if same else 1
    args.path.write_text(text, encoding="utf-8")
    print_counts(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
