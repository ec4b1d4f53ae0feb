"""The keyword-dominated dialogue set: a deterministic generator of a chat store between friends.

Run::

    python tests/bench/keyword_set.py --check     # fail if the committed JSON differs
    python tests/bench/keyword_set.py --write     # regenerate tests/bench/data/keyword_set.json
    python tests/bench/keyword_set.py --measure --vector-cache /tmp/use.npz
                                                  # keyword vs vector hit@10 (floor off)

Why it exists (issue 18): the two other sets favour meaning over words (the bilingual set caps
token overlap at 30 %; the conversational set's questions reuse some words). Public
long-conversation benchmarks look different: two named friends chat over many dated sessions,
every turn carries a name, most turns are chit-chat on the same few topics, and the question is
short and shares one rare word (a title, a pet's name, a place) with the turn that answers it. On
such stores keyword search beats vector search, and a blend or floor tuned on the other sets can
lose what keyword alone finds. This set is that shape, in original content:

* 20 sessions (10 English between Nadia and Tomas, with Jules in some; 10 Chinese between 小林 and
  阿梅, with 老赵 in some), 100 turns each, every turn starting with its speaker's name and most
  naming the other; dated every two weeks from March to December 2025.
* 80 fact turns (4 per session), each stating one specific thing with one rare term ("the
  tortoise … named him Sir Wobbles"), wrapped in chatter as people say it.
* For every fact, 3 decoy turns in the same session: chit-chat by the same two people about the
  same subject in other words ("Tomas, you always have the best stories about pet turtles!"),
  semantically close to the question but without its rare term; plus chit-chat on the session's
  topics that shares the names and the topic words ("Wow, Nadia! Books have such an awesome
  power!").
* 80 short third-person questions, one per fact ("What is the name of Tomas's tortoise?",
  "阿梅养的狗叫什么？", category ``single``), and 15 general questions no turn answers
  (``nothing``). ``rare_shared`` lists the tokens (``dataset_overlap.tokens``) a question shares
  with its fact turn that occur in at most 3 turns of the store — empty when it shares only
  the name and common words. Calibration / test alternate within category and language.

The JSON has the conversational set's layout (memories with ``id``, ``session``, ``lang``,
``speaker``, ``topic``, ``text``, ``created_at``; queries with ``targets``, ``stale``, ``split``),
so ``retrieval_quality.ConversationStore`` loads it unchanged. Pure Python, fixed seed; changing
it after it is committed makes earlier figures incomparable.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "keyword_set.json"
SEED = 18_2025
TURNS_PER_SESSION = 100
DECOYS_PER_FACT = 3
RARE_MAX_TURNS = 3
REFERENCE_NOW = "2025-12-20T20:00:00+00:00"
FIRST_SESSION = datetime.fromisoformat("2025-03-02T19:00:00+00:00")

EN_PEOPLE = ("Nadia", "Tomas")
ZH_PEOPLE = ("阿梅", "小林")
EN_THIRD = "Jules"
ZH_THIRD = "老赵"

# -- facts: (speaker index 0/1, topic, fact in the speaker's words, question, near phrase) --------
# The near phrase names the fact's subject without its rare term, for decoy chit-chat.
EN_FACTS: tuple[tuple[int, str, str, str, str], ...] = (
    (
        0,
        "books",
        "I finished The Lighthouse Ledger by Odile Marchetti and cried at the ending.",
        "Who wrote The Lighthouse Ledger?",
        "sad novels with twist endings",
    ),
    (
        1,
        "books",
        "I keep recommending Salt and Saffron to everyone at work, a memoir about a spice "
        "merchant in Zanzibar.",
        "Which book does Tomas keep recommending?",
        "memoirs about food and family",
    ),
    (
        0,
        "books",
        "my book club picked The Glass Orchard next, so I read it on the tram every morning.",
        "Which title did Nadia's book club pick?",
        "what the reading group chooses",
    ),
    (
        1,
        "books",
        "I found a first edition of Winter Harbour at a flea market in Ghent for eight euros.",
        "Where did Tomas find the first edition?",
        "rare old books from second-hand stalls",
    ),
    (
        1,
        "pets",
        "we adopted a tortoise and the kids named him Sir Wobbles.",
        "What is the name of Tomas's tortoise?",
        "pet turtles and what to call them",
    ),
    (
        0,
        "pets",
        "my parrot Kiwi learned to whistle the theme tune of the evening news.",
        "What can Kiwi whistle?",
        "talking birds that copy sounds",
    ),
    (
        1,
        "pets",
        "Biscotti, our greyhound, won second prize at the dog show in Haarlem.",
        "Which prize did Biscotti win?",
        "dogs winning competitions",
    ),
    (
        0,
        "pets",
        "the vet said my rabbit Clover needs her teeth filed every three months.",
        "How often does Clover need her teeth filed?",
        "bunnies and their dental care",
    ),
    (
        0,
        "music",
        "I started the cello and my teacher Mrs. Okafor is very strict about posture.",
        "Who teaches Nadia the cello?",
        "learning a string instrument",
    ),
    (
        1,
        "music",
        "I bought a second-hand accordion from a sailor in Rotterdam, it smells of the sea.",
        "Where did Tomas get the accordion?",
        "buying a used instrument",
    ),
    (
        0,
        "music",
        "the band we saw in Utrecht, Velvet Marigold, played for almost three hours.",
        "How long did Velvet Marigold play?",
        "long concerts by great bands",
    ),
    (
        1,
        "music",
        "my daughter plays the oboe in the school orchestra and practises every evening.",
        "Which instrument does Tomas's daughter play in the orchestra?",
        "kids learning music at school",
    ),
    (
        1,
        "food",
        "my signature dish these days is a smoked aubergine stew with pomegranate.",
        "What is Tomas's signature dish?",
        "the dish someone cooks best",
    ),
    (
        0,
        "food",
        "we had the best ramen of my life at a tiny place called Menya Hoshi by the station.",
        "Where did Nadia have the best ramen?",
        "amazing noodle soup restaurants",
    ),
    (
        1,
        "food",
        "I burned the quince jam again, third time this autumn, the flat smelled of caramel.",
        "How many times did Tomas burn the quince jam?",
        "kitchen disasters with fruit",
    ),
    (
        0,
        "food",
        "I'm allergic to fennel now, the doctor thinks it is mild but I stay away from it.",
        "What is Nadia allergic to?",
        "foods that make someone ill",
    ),
    (
        0,
        "travel",
        "we're going to Tromsø to see the northern lights, the cabin is booked already.",
        "Why is Nadia going to Tromsø?",
        "trips up north in winter",
    ),
    (
        1,
        "travel",
        "on the Lisbon trip my suitcase got lost and turned up four days later in Dublin.",
        "Where did Tomas's lost suitcase turn up?",
        "airlines losing luggage",
    ),
    (
        0,
        "travel",
        "we hiked the Rota Vicentina for six days and my feet are still recovering.",
        "How many days did Nadia hike the Rota Vicentina?",
        "long walking holidays by the coast",
    ),
    (
        1,
        "travel",
        "my favourite city in the world is still Valparaíso, all those colourful hills.",
        "What is Tomas's favourite city?",
        "beautiful places to visit abroad",
    ),
    (
        0,
        "hobby",
        "my pottery class is making teapots and mine leans like the tower of Pisa.",
        "What is Nadia's pottery class making?",
        "making things out of clay",
    ),
    (
        1,
        "hobby",
        "I finished the 2,000-piece jigsaw of the Amsterdam canals, it took seven weeks.",
        "How long did Tomas's jigsaw take?",
        "big puzzles on the kitchen table",
    ),
    (
        0,
        "hobby",
        "I'm knitting a scarf in mustard yellow for my brother Idris.",
        "Who is Nadia knitting the scarf for?",
        "handmade winter presents",
    ),
    (
        1,
        "hobby",
        "I joined a chess club that meets in the back room of the Gouden Leeuw café.",
        "Where does Tomas's chess club meet?",
        "board game evenings with friends",
    ),
    (
        0,
        "work",
        "I got promoted to head of the archive department at the library.",
        "What was Nadia promoted to?",
        "good news at work and new jobs",
    ),
    (
        1,
        "work",
        "our office is moving to the Westerdok building in the spring.",
        "Where is Tomas's office moving?",
        "changes at the workplace",
    ),
    (
        0,
        "work",
        "my new colleague Benedikt brings a different cheese to every Friday meeting.",
        "What does Benedikt bring to the Friday meeting?",
        "funny coworkers and their habits",
    ),
    (
        1,
        "work",
        "I'm giving a talk about bridge maintenance at the engineering conference in Bilbao.",
        "What is Tomas's talk in Bilbao about?",
        "presenting at big conferences",
    ),
    (
        0,
        "family",
        "my grandmother turns ninety-five soon and wants a picnic in the Vondelpark.",
        "Where does Nadia's grandmother want her picnic?",
        "birthday plans for old relatives",
    ),
    (
        1,
        "family",
        "my son Felix lost his first tooth at the swimming pool.",
        "Where did Felix lose his first tooth?",
        "little kids growing up fast",
    ),
    (
        0,
        "family",
        "my sister Samira is getting married in a lighthouse in Zeeland.",
        "Where is Samira getting married?",
        "weddings in the family",
    ),
    (
        1,
        "family",
        "my dad restored a 1968 Vespa in his garage over the winter.",
        "What did Tomas's dad restore?",
        "parents and their projects at home",
    ),
    (
        0,
        "garden",
        "my dahlias finally bloomed, the dark red ones called Night Butterfly.",
        "Which dahlias bloomed for Nadia?",
        "flowers opening in the garden",
    ),
    (
        1,
        "garden",
        "a hedgehog has moved into the compost heap behind our shed.",
        "What moved into Tomas's compost heap?",
        "wild animals visiting the garden",
    ),
    (
        0,
        "garden",
        "I grew a pumpkin this year that weighed eleven kilos.",
        "How heavy was Nadia's pumpkin?",
        "growing huge vegetables",
    ),
    (
        1,
        "garden",
        "we planted an apricot tree for Felix's birthday.",
        "Which tree was planted for Felix's birthday?",
        "planting trees with the kids",
    ),
    (
        0,
        "sport",
        "I ran the Egmond half marathon in 1:52, a personal best.",
        "What was Nadia's time at the Egmond half marathon?",
        "running races and personal records",
    ),
    (
        1,
        "sport",
        "I've taken up fencing, sabre, on Tuesday nights at the sports hall.",
        "Which kind of fencing did Tomas take up?",
        "trying a new sport in the evenings",
    ),
    (
        0,
        "sport",
        "I climbed Mont Ventoux on my bike, the last six kilometres were brutal.",
        "Which mountain did Nadia climb by bike?",
        "hard cycling trips in the hills",
    ),
    (
        1,
        "sport",
        "our korfball team lost the final 14 to 13 in extra time.",
        "What was the score of Tomas's korfball final?",
        "losing an important match",
    ),
)

ZH_FACTS: tuple[tuple[int, str, str, str, str], ...] = (
    (
        0,
        "books",
        "我最近在读《雪落香杉树》，看到法庭那一段根本停不下来。",
        "阿梅最近在读什么书？",
        "好看的小说",
    ),
    (
        1,
        "books",
        "我把《长安的荔枝》推荐给了我们部门所有人，大家都说好看。",
        "小林推荐给同事的是哪本书？",
        "值得推荐的好书",
    ),
    (
        0,
        "books",
        "读书会这次选了《额尔古纳河右岸》，我每天在地铁上读一点。",
        "读书会这次选的是哪本书？",
        "读书会挑的书",
    ),
    (
        1,
        "books",
        "我在旧书摊淘到一本一九八二年版的《围城》，才十五块钱。",
        "小林在旧书摊淘到了什么？",
        "逛旧书市场",
    ),
    (
        0,
        "pets",
        "我们家新养的狗叫芝麻糊，是只两岁的柴犬，特别黏人。",
        "阿梅养的狗叫什么？",
        "小狗起名字",
    ),
    (
        1,
        "pets",
        "我养的鹦鹉豆包现在会学微波炉叮的那一声，太好笑了。",
        "豆包会学什么声音？",
        "会学舌的鸟",
    ),
    (0, "pets", "我家的龙猫团子昨天晚上把充电线啃坏了。", "团子啃坏了什么？", "宠物在家捣乱"),
    (
        1,
        "pets",
        "我们家的金鱼一共有七条，最大的那条叫将军。",
        "小林家一共有几条金鱼？",
        "养鱼的乐趣",
    ),
    (
        0,
        "music",
        "我从春天开始学古筝，老师姓苏，对坐姿要求特别严。",
        "阿梅的古筝老师姓什么？",
        "学一门民族乐器",
    ),
    (
        1,
        "music",
        "我在二手市场买了一把口琴，是上海国光牌的，音色还不错。",
        "小林的口琴是什么牌子的？",
        "买二手乐器",
    ),
    (
        0,
        "music",
        "上周去听了白鲸乐队的现场，他们足足唱了两个半小时。",
        "白鲸乐队的现场唱了多久？",
        "听演唱会",
    ),
    (
        1,
        "music",
        "女儿现在在学校乐团吹单簧管，每天晚上都练。",
        "小林的女儿在乐团吹什么？",
        "孩子学音乐",
    ),
    (
        1,
        "food",
        "我现在最拿手的是腌笃鲜，春笋一定要新鲜才好吃。",
        "小林最拿手的菜是什么？",
        "最会做的一道菜",
    ),
    (
        0,
        "food",
        "车站旁边那家马记拉面，是我吃过最好吃的一家。",
        "阿梅觉得哪家拉面最好吃？",
        "好吃的面馆",
    ),
    (
        1,
        "food",
        "我又把桂花酒酿煮糊了，这已经是今年第三次了。",
        "小林煮糊了几次桂花酒酿？",
        "厨房里的失败",
    ),
    (0, "food", "医生说我对芒果过敏，以后一口都不能吃了。", "阿梅对什么水果过敏？", "吃东西过敏"),
    (
        0,
        "travel",
        "我们二月要去漠河看极光，木屋已经订好了。",
        "阿梅为什么要去漠河？",
        "冬天去北方旅行",
    ),
    (
        1,
        "travel",
        "去厦门那次行李丢了，四天以后才在福州找到。",
        "小林丢的行李最后在哪找到的？",
        "航空公司弄丢行李",
    ),
    (0, "travel", "我们在雨崩徒步了五天，脚到现在还疼。", "阿梅在雨崩徒步了几天？", "长途徒步"),
    (
        1,
        "travel",
        "我最喜欢的城市还是泉州，老街和寺庙都特别好看。",
        "小林最喜欢哪个城市？",
        "值得去的地方",
    ),
    (
        0,
        "hobby",
        "陶艺课这个月在做茶壶，我做的那个歪得像比萨斜塔。",
        "阿梅的陶艺课在做什么？",
        "用黏土做东西",
    ),
    (
        1,
        "hobby",
        "我终于拼完了一千五百片的西湖拼图，花了整整六个星期。",
        "小林的西湖拼图花了多久？",
        "在桌上拼大图",
    ),
    (
        0,
        "hobby",
        "我在给弟弟织一条姜黄色的围巾，想赶在冬天前织完。",
        "阿梅在给谁织围巾？",
        "亲手做的冬天礼物",
    ),
    (
        1,
        "hobby",
        "我加入了一个围棋社，每周在茶馆二楼活动。",
        "小林的围棋社在哪里活动？",
        "和朋友下棋",
    ),
    (0, "work", "我升职了，现在是档案室主任，管六个人。", "阿梅升职成了什么？", "工作上的好消息"),
    (1, "work", "我们公司明年春天要搬到滨江的新大楼。", "小林的公司要搬到哪里？", "单位的变动"),
    (
        0,
        "work",
        "新来的同事老谭每周五都会带一种不同的茶叶来。",
        "老谭每周五带什么来？",
        "有趣的同事",
    ),
    (
        1,
        "work",
        "我要去成都的行业大会上讲桥梁检测，正在做幻灯片。",
        "小林在成都的大会上讲什么？",
        "在大会上发言",
    ),
    (
        0,
        "family",
        "奶奶快过九十五岁生日了，她想去西湖边野餐。",
        "阿梅的奶奶想在哪里过生日？",
        "给老人过生日",
    ),
    (
        1,
        "family",
        "儿子在游泳池里掉了第一颗牙，自己还挺骄傲。",
        "小林的儿子在哪里掉了第一颗牙？",
        "小孩长大",
    ),
    (
        0,
        "family",
        "我姐姐要在海边的灯塔办婚礼，我当伴娘。",
        "阿梅的姐姐在哪办婚礼？",
        "家里有人结婚",
    ),
    (
        1,
        "family",
        "我爸冬天在车库里修好了一辆一九七五年的永久自行车。",
        "小林的爸爸修好了什么？",
        "爸妈在家忙的事",
    ),
    (
        0,
        "garden",
        "阳台上的月季终于开了，是深红色的黑魔术。",
        "阿梅阳台上开的月季是什么品种？",
        "花园里开花",
    ),
    (
        1,
        "garden",
        "一只刺猬住进了我们院子后面的柴堆里。",
        "什么动物住进了小林家的柴堆？",
        "野生动物来院子里",
    ),
    (
        0,
        "garden",
        "我今年种出了一个十一斤的冬瓜，全楼都来看。",
        "阿梅种的冬瓜有多重？",
        "种出大蔬菜",
    ),
    (
        1,
        "garden",
        "我们给儿子过生日的时候种了一棵杏树。",
        "小林给儿子过生日种了什么树？",
        "和孩子一起种树",
    ),
    (
        0,
        "sport",
        "我在厦门半程马拉松跑了一小时五十二分，个人最好成绩。",
        "阿梅的半马成绩是多少？",
        "跑步比赛的成绩",
    ),
    (
        1,
        "sport",
        "我开始练击剑了，练的是佩剑，每周二晚上去体育馆。",
        "小林练的是哪种剑？",
        "晚上练一项新运动",
    ),
    (0, "sport", "我骑车爬上了武功山，最后六公里差点放弃。", "阿梅骑车爬上了哪座山？", "骑车爬坡"),
    (
        1,
        "sport",
        "我们的门球队在决赛里十四比十三输了，太可惜了。",
        "小林的门球队决赛比分是多少？",
        "输掉重要的比赛",
    ),
)

NOTHING: tuple[tuple[str, str], ...] = (
    ("en", "Who wrote Hamlet?"),
    ("en", "How many strings does a violin have?"),
    ("en", "What is the capital of Peru?"),
    ("en", "When did the Titanic sink?"),
    ("en", "How many players are on a rugby team?"),
    ("en", "Which is larger, Mars or Venus?"),
    ("en", "Who invented the telescope?"),
    ("en", "At what temperature does water boil in Fahrenheit?"),
    ("zh", "《红楼梦》的作者是谁？"),
    ("zh", "秘鲁的首都是哪里？"),
    ("zh", "泰坦尼克号是哪一年沉没的？"),
    ("zh", "小提琴有几根弦？"),
    ("zh", "金星和火星哪个更大？"),
    ("zh", "望远镜是谁发明的？"),
    ("zh", "篮球比赛每队上场几个人？"),
)

# -- chit-chat -------------------------------------------------------------------------------------
# {a} speaks to {b}; {t} is a topic phrase, {n} a fact's near phrase.
# fmt: off
EN_TOPICS = {
    "books": ["books", "novels", "reading", "stories", "the library"],
    "pets": ["pets", "animals", "dogs and cats", "our furry friends", "the vet"],
    "music": ["music", "instruments", "concerts", "practising", "songs"],
    "food": ["cooking", "good food", "recipes", "dinner parties", "the kitchen"],
    "travel": ["travel", "trips", "holidays", "flights", "new places"],
    "hobby": ["hobbies", "crafts", "weekend projects", "making things", "puzzles"],
    "work": ["work", "the office", "colleagues", "meetings", "deadlines"],
    "family": ["family", "the kids", "parents", "family dinners", "relatives"],
    "garden": ["the garden", "plants", "flowers", "the allotment", "vegetables"],
    "sport": ["sport", "training", "races", "the gym", "matches"],
}
ZH_TOPICS = {
    "books": ["读书", "小说", "看书", "书店", "图书馆"],
    "pets": ["养宠物", "小动物", "猫猫狗狗", "宠物医院", "铲屎"],
    "music": ["音乐", "乐器", "演出", "练琴", "唱歌"],
    "food": ["做饭", "美食", "菜谱", "请客吃饭", "厨房"],
    "travel": ["旅行", "出去玩", "度假", "坐飞机", "新地方"],
    "hobby": ["爱好", "手工", "周末的小项目", "做东西", "拼图"],
    "work": ["工作", "单位", "同事", "开会", "赶进度"],
    "family": ["家里", "孩子", "爸妈", "家庭聚餐", "亲戚"],
    "garden": ["花园", "种花", "植物", "阳台", "种菜"],
    "sport": ["运动", "训练", "比赛", "健身房", "锻炼"],
}
EN_CHAT = [
    "{a}: Wow, {b}! There is such an awesome power in {t}!",
    "{a}: {b}, I totally agree, nothing helps me unwind after a long day like {t}.",
    "{a}: That's so true, {b}. I feel exactly the same about {t}.",
    "{a}: Haha, {b}, you and {t}! Never change.",
    "{a}: Thanks, {b}! I'll think about {t} more this weekend.",
    "{a}: {b}, how have you been? Anything new with {t}?",
    "{a}: It's been such a busy week, {b}, I barely had time for {t}.",
    "{a}: {b}, that reminds me how much I care about {t}.",
    "{a}: Sounds great, {b}! Keep me posted about {t}.",
    "{a}: Oh {b}, talking about {t} always cheers me up, no matter what.",
    "{a}: I know, right, {b}? People really underrate {t}.",
    "{a}: {b}, you inspire me to spend more time on {t}.",
]
EN_DECOY = [
    "{a}: Oh {b}, I love hearing about {n}, it always makes my day.",
    "{a}: {b}, you always have the best stories about {n}!",
    "{a}: Ha, {b}, {n} again? You really are obsessed, and I love it.",
    "{a}: I was just thinking about {n} this morning, {b}, funny you bring it up.",
    "{a}: {b}, tell me more about {n} some time, I never get tired of it.",
    "{a}: Honestly, {b}, {n} is such a lovely thing to talk about.",
]
EN_EXTRA = [
    "The weather has been awful lately.", "I'm so tired today, work was crazy.",
    "We should grab a coffee soon!", "My phone keeps dying, it's so annoying.",
    "Did you see the match last night?", "I can't believe how fast this year is going.",
    "Anyway, how are you doing?", "Let's catch up properly on the weekend.",
    "I really needed this chat.", "The tram was late again this morning.",
    "I made way too much pasta yesterday.", "My neighbours are renovating again.",
]
EN_FACT_INTRO = [
    "{a}: Oh, {b}, before I forget: ", "{a}: Guess what, {b}, ", "{a}: {b}, big news, ",
    "{a}: So, {b}, ", "{a}: Anyway, {b}, ",
]
ZH_CHAT = [
    "{a}：哇，{b}！{t}真的太有魅力了！",
    "{a}：{b}，我特别同意，累了一天以后{t}最放松了。",
    "{a}：对对对，{b}，说到{t}我也是这么觉得。",
    "{a}：哈哈，{b}，你和{t}啊！千万别变。",
    "{a}：谢谢你，{b}！这个周末我再好好想想{t}的事。",
    "{a}：{b}，最近怎么样？{t}那边有什么新鲜事吗？",
    "{a}：这周忙死了，{b}，根本没时间顾得上{t}。",
    "{a}：{b}，这让我想起{t}对我来说有多重要。",
    "{a}：听起来不错啊，{b}！{t}有什么进展记得告诉我。",
    "{a}：哎呀{b}，不管怎样，{t}总能让我开心起来。",
    "{a}：就是说嘛，{b}？{t}真的被低估了。",
    "{a}：{b}，你让我也想多花点时间在{t}上了。",
]
ZH_DECOY = [
    "{a}：哇，{b}！说到{n}，我真是百听不厌。",
    "{a}：{b}，你讲{n}的事总是特别有意思。",
    "{a}：哈哈{b}，又是{n}？你真是太投入了，我喜欢。",
    "{a}：今天早上我还在想{n}呢，{b}，你就提起来了。",
    "{a}：{b}，下次再多跟我讲讲{n}吧，我一点都不腻。",
    "{a}：说真的，{b}，聊{n}真是件开心的事。",
]
ZH_EXTRA = [
    "最近天气真差，连着下了一个星期的雨，衣服都晾不干。", "今天好累，上班忙疯了，午饭都是在工位上随便吃的。",
    "改天一起喝杯咖啡吧，好久没有好好坐下来聊聊了！", "我手机老是没电，烦死了，可能得换个电池了。",
    "昨晚的比赛你看了吗？最后几分钟太紧张了。", "一年过得真快啊，感觉上个月才刚过完年。",
    "对了，你最近还好吗？上次听你说睡得不太好。", "周末我们好好聊聊，到时候我给你打电话。",
    "跟你聊聊天心情好多了，今天本来挺郁闷的。", "今天早上公交又晚点了，差点迟到。",
    "昨天面条煮多了，一个人吃了两顿才吃完。", "楼上邻居又在装修了，电钻声从早响到晚。",
]
ZH_FACT_INTRO = ["{a}：对了，{b}，跟你说，", "{a}：你猜怎么着，{b}，", "{a}：{b}，告诉你个消息，",
                 "{a}：话说，{b}，", "{a}：{b}，"]
# fmt: on


def _capital(text: str) -> str:
    return text[0].upper() + text[1:]


def _chat(rng: random.Random, lang: str, a: str, b: str, topic: str) -> str:
    """One chit-chat turn on ``topic``, sometimes with a line of small talk after it."""
    topics = EN_TOPICS if lang == "en" else ZH_TOPICS
    template = rng.choice(EN_CHAT if lang == "en" else ZH_CHAT)
    phrase = rng.choice(topics[topic])
    text = template.format(a=a, b=b, t=phrase, T=_capital(phrase))
    return _extra(rng, lang, text, 0.7 if lang == "en" else 0.95)


def _extra(rng: random.Random, lang: str, text: str, share: float) -> str:
    extra = EN_EXTRA if lang == "en" else ZH_EXTRA
    if rng.random() < share:
        text += (" " if lang == "en" else "") + rng.choice(extra)
    if rng.random() < (share / 3 if lang == "en" else share / 2):
        text += (" " if lang == "en" else "") + rng.choice(extra)
    return text


def _decoy(rng: random.Random, lang: str, a: str, b: str, near: str) -> str:
    template = rng.choice(EN_DECOY if lang == "en" else ZH_DECOY)
    return _extra(rng, lang, template.format(a=a, b=b, n=near), 0.5 if lang == "en" else 0.9)


def _fact_text(rng: random.Random, lang: str, a: str, b: str, core: str) -> str:
    intro = rng.choice(EN_FACT_INTRO if lang == "en" else ZH_FACT_INTRO).format(a=a, b=b)
    return _extra(rng, lang, intro + core, 0.6)


def _sessions() -> list[tuple[str, str, datetime]]:
    """(key, language, start) of the 20 sessions: en and zh alternating, every two weeks."""
    return [
        (f"k{i + 1:02d}", "en" if i % 2 == 0 else "zh", FIRST_SESSION + timedelta(days=14 * i))
        for i in range(20)
    ]


def generate() -> dict:
    """Build the set (deterministic)."""
    rng = random.Random(SEED)
    sessions = _sessions()
    memories: list[dict] = []
    fact_ids: list[tuple[str, str, str]] = []  # (memory id, lang, question)
    seen: set[str] = set()
    for lang, facts in (("en", EN_FACTS), ("zh", ZH_FACTS)):
        people = EN_PEOPLE if lang == "en" else ZH_PEOPLE
        third = EN_THIRD if lang == "en" else ZH_THIRD
        keys = [s for s in sessions if s[1] == lang]
        for n, (key, _, start) in enumerate(keys):
            planted = facts[4 * n : 4 * n + 4]
            topics = sorted({f[1] for f in planted})
            # Facts in the middle, each with its decoys within a few turns of it.
            slots = sorted(rng.sample(range(8, TURNS_PER_SESSION - 8, 12), len(planted)))
            plan: dict[int, tuple[str, int, str]] = {}
            for j, slot in enumerate(slots):
                plan[slot] = ("fact", j, "")
                for d, offset in enumerate(rng.sample((-4, -3, -2, -1, 1, 2, 3, 4), 3)):
                    plan.setdefault(slot + offset, ("decoy", j, str(d)))
            for turn in range(TURNS_PER_SESSION):
                kind, j, _ = plan.get(turn, ("chat", -1, ""))
                speaker = turn % 2
                a, b = people[speaker], people[1 - speaker]
                if kind == "chat" and n % 3 == 2 and rng.random() < 0.15:
                    a = third
                if kind == "fact":
                    fact = planted[j]
                    a, b = people[fact[0]], people[1 - fact[0]]
                    text = _fact_text(rng, lang, a, b, fact[2])
                    memory_id = f"kf-{lang}-{4 * n + j + 1:02d}"
                    fact_ids.append((memory_id, lang, fact[3]))
                    topic = fact[1]
                elif kind == "decoy":
                    fact = planted[j]
                    text = _decoy(rng, lang, a, b, fact[4])
                    while text in seen:
                        text = _decoy(rng, lang, a, b, fact[4])
                    memory_id = f"{key}-t{turn:03d}"
                    topic = fact[1]
                else:
                    topic = (
                        rng.choice(topics) if rng.random() < 0.75 else rng.choice(list(EN_TOPICS))
                    )
                    text = _chat(rng, lang, a, b, topic)
                    while text in seen:
                        text = _chat(rng, lang, a, b, topic)
                    memory_id = f"{key}-t{turn:03d}"
                seen.add(text)
                memories.append(
                    {
                        "id": memory_id,
                        "session": key,
                        "lang": lang,
                        "speaker": text.split(":" if lang == "en" else "：", 1)[0],
                        "topic": topic,
                        "kind": kind,
                        "text": text,
                        "created_at": (start + timedelta(minutes=turn)).isoformat(),
                    }
                )
    memories.sort(key=lambda m: (m["created_at"], m["id"]))
    queries = _queries(memories, fact_ids)
    return {
        "name": "keyword_set",
        "version": 1,
        "description": (
            "Generated keyword-dominated dialogue store (two named friends chatting over dated "
            "sessions, en + zh) with fact turns, decoys and short third-person questions; see "
            "tests/bench/keyword_set.py."
        ),
        "reference_now": REFERENCE_NOW,
        "seed": SEED,
        "sessions": [
            {"id": key, "lang": lang, "start": start.isoformat()} for key, lang, start in sessions
        ],
        "memories": memories,
        "queries": queries,
    }


def _queries(memories: list[dict], fact_ids: list[tuple[str, str, str]]) -> list[dict]:
    """The questions, with their shared rare tokens and the alternating split."""
    import dataset_overlap  # tokens like the keyword index; the bench folder is on sys.path

    tokens = {m["id"]: dataset_overlap.tokens(m["text"]) for m in memories}
    frequency: dict[str, int] = {}
    for toks in tokens.values():
        for t in toks:
            frequency[t] = frequency.get(t, 0) + 1
    rows = []
    for memory_id, lang, text in fact_ids:
        shared = dataset_overlap.tokens(text) & tokens[memory_id]
        rare = sorted(t for t in shared if frequency[t] <= RARE_MAX_TURNS)
        rows.append((lang, "single", text, [memory_id], rare))
    rows += [(lang, "nothing", text, [], []) for lang, text in NOTHING]
    queries = []
    counters: dict[tuple[str, str], int] = {}
    for lang, category, text, targets, rare in rows:
        n = counters.get((category, lang), 0)
        counters[(category, lang)] = n + 1
        queries.append(
            {
                "id": f"qk-{lang}-{category}-{n + 1:02d}",
                "lang": lang,
                "category": category,
                "text": text,
                "targets": targets,
                "stale": [],
                "split": "calibration" if n % 2 == 0 else "test",
                **({"rare_shared": rare} if targets else {}),
            }
        )
    return queries


def load(path: Path = DEFAULT_PATH) -> dict:
    """Read the committed set (and check its questions: no first person, split alternating)."""
    import dataset_overlap

    data: dict = json.loads(path.read_text(encoding="utf-8"))
    problems = dataset_overlap.check_questions({**data, "queries": []}, data["queries"], None)
    if problems:
        raise ValueError(f"{path.name}: " + "; ".join(problems))
    return data


def dump(data: dict) -> str:
    """The JSON text (one memory or query per line keeps diffs readable)."""
    import conversation_set

    return conversation_set.dump(data)


def print_counts(data: dict) -> None:
    """Print what the set holds."""
    memories, queries = data["memories"], data["queries"]
    kinds: dict[str, int] = {}
    for m in memories:
        kinds[m["kind"]] = kinds.get(m["kind"], 0) + 1
    for lang in ("en", "zh"):
        turns = [m for m in memories if m["lang"] == lang]
        print(
            f"Keyword set ({lang}): {len(turns)} turns in "
            f"{len({m['session'] for m in turns})} sessions, mean "
            f"{sum(len(m['text']) for m in turns) / len(turns):.0f} characters a turn; speakers "
            + ", ".join(sorted({m["speaker"] for m in turns}))
        )
    print(
        f"Keyword set: {len(memories)} turns (fact {kinds.get('fact', 0)}, decoy "
        f"{kinds.get('decoy', 0)}, chit-chat {kinds.get('chat', 0)}), mean "
        f"{sum(len(m['text']) for m in memories) / len(memories):.0f} characters a turn"
    )
    cats: dict[tuple[str, str], list[int]] = {}
    for q in queries:
        pair = cats.setdefault((q["category"], q["lang"]), [0, 0])
        pair[0 if q["split"] == "calibration" else 1] += 1
    print(
        "Questions (calibration/test): "
        + ", ".join(f"{c}/{lang} {a}/{b}" for (c, lang), (a, b) in sorted(cats.items()))
        + f"; total {len(queries)}"
    )


def measure(data: dict, cache: Path | None) -> None:
    """Print keyword-only vs vector-only hit@1/@10 (floor off) with the built-in USE, per language."""
    import tempfile

    import retrieval_quality as rq

    use = rq.make_use_embedder(cache)
    use.prefetch([m["text"] for m in data["memories"]])
    use.save()
    with tempfile.TemporaryDirectory(prefix="etos-kw-") as tmp:
        store = rq.ConversationStore(data, use, Path(tmp))
        for lang in ("en", "zh", None):
            targeted = [q for q in data["queries"] if q["targets"] and lang in (None, q["lang"])]
            cells = []
            for mode in rq.MODES:
                ranks = [
                    rq.rank_of(q["targets"], store.search(q["text"], mode, False)) for q in targeted
                ]
                cells.append(
                    f"{mode} {sum(rq.within(r, 1) for r in ranks) / len(ranks):.2f}"
                    f"/{sum(rq.within(r, 10) for r in ranks) / len(ranks):.2f}"
                )
            print(
                f"  hit@1/hit@10 floor off ({lang or 'all'}, n={len(targeted)}): "
                + ", ".join(cells)
            )
        store.close()


def main() -> int:
    """Write the set, check the committed one, or measure it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="compare, don't write")
    action.add_argument("--write", action="store_true", help="regenerate the JSON")
    action.add_argument("--measure", action="store_true", help="keyword vs vector hit@10")
    parser.add_argument("--vector-cache", type=Path, help="USE vectors kept between runs")
    args = parser.parse_args()
    if args.measure:
        data = load(args.path)
        print_counts(data)
        measure(data, args.vector_cache)
        return 0
    data = generate()
    text = dump(data)
    print_counts(data)
    if args.check:
        same = args.path.read_text(encoding="utf-8") == text
        print("committed set matches the generator" if same else "committed set DIFFERS")
        return 0 if same else 1
    args.path.write_text(text, encoding="utf-8")
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main())
