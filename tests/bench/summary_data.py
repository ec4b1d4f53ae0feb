"""Conversations that look like real users' for the summary benchmarks (deterministic).

Chinese and English conversations about everyday topics, with message lengths spread like a
chat's (short questions, longer answers, now and then a pasted block), turn counts from 1 to 40,
and summary bookkeeping in every state the rule meets: never summarised, summarised and up to
date, summarised with new turns since, skipped, failed with a backoff. Written straight into the
database through the app's tables, dated within the last 7 days of ``now``.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

TOPICS_EN = (
    ("Kyoto trip", "hotels near Kyoto Station", "a three-day plan with temples and food"),
    ("Flaky tests", "a pytest suite that hangs in CI", "using pytest-timeout and open()"),
    ("Marathon training", "the week before the race", "tapering and carbohydrates"),
    ("Sourdough", "a starter that does not rise", "feeding it twice a day"),
    ("Job offer", "comparing two offers", "asking about remote work"),
    ("Garden", "tomatoes on a balcony", "watering in the morning"),
)
TOPICS_ZH = (
    ("京都旅行", "京都站附近的酒店", "三天的寺庙和美食行程"),
    ("装修预算", "厨房装修的费用", "先定好橱柜再选电器"),
    ("孩子上学", "小学的兴趣班", "每周只报两个班"),
    ("学习日语", "五十音图记不住", "每天用卡片复习十分钟"),
    ("换工作", "两个录用通知怎么选", "问清楚能否远程办公"),
    ("养猫", "猫咪不爱喝水", "买一个流动饮水机"),
)


def _user_text(rng: random.Random, zh: bool, topic: tuple[str, str, str], n: int) -> str:
    _title, subject, plan = topic
    if zh:
        options = [
            f"关于{subject}，你有什么建议？",
            f"我还在想{plan}这个办法行不行。",
            f"第{n}个问题：{subject}还有别的要注意的吗？",
            "好的，谢谢！",
            f"我把情况详细说一下：{subject}" + "，另外还有一些细节" * rng.randint(2, 12) + "。",
        ]
    else:
        options = [
            f"What do you suggest about {subject}?",
            f"I am still not sure about {plan}.",
            f"Question {n}: anything else about {subject} I should know?",
            "Thanks, that helps!",
            f"Let me give you the details about {subject}: "
            + "one more thing, " * rng.randint(3, 20),
        ]
    return rng.choice(options)


def _reply_text(rng: random.Random, zh: bool, topic: tuple[str, str, str]) -> str:
    _title, subject, plan = topic
    if zh:
        sentence = f"关于{subject}，可以考虑{plan}。"
    else:
        sentence = f"For {subject}, you could consider {plan}. "
    return sentence * rng.randint(1, 8)


def seed_conversations(db: Any, count: int, now: datetime, *, seed: int = 11) -> dict[str, int]:
    """Write ``count`` conversations active within 7 days of ``now``; return how many of each state."""
    from etos_desktop.core.storage.tables import (
        ConversationRow,
        MessageRow,
        SessionSummaryRow,
        SummaryStateRow,
    )

    rng = random.Random(seed)
    states: dict[str, int] = {}

    def fill(session: Any) -> None:
        for c in range(count):
            zh = c % 2 == 1
            topic = (TOPICS_ZH if zh else TOPICS_EN)[c % 6]
            started = now - timedelta(days=rng.uniform(0, 7))
            turns = rng.choice([1, 2, 3, 4, 5, 6, 6, 7, 8, 10, 12, 15, 20, 25, 40])
            conversation = ConversationRow(
                title=f"{topic[0]} {c}",
                created_at=started,
                updated_at=started + timedelta(minutes=2 * turns),
                temporary=rng.random() < 0.03,
            )
            session.add(conversation)
            session.flush()
            last_id = 0
            rows = []
            for t in range(turns):
                moment = started + timedelta(minutes=2 * t)
                rows.append(
                    MessageRow(
                        conversation_id=conversation.id,
                        role="user",
                        content=_user_text(rng, zh, topic, t),
                        created_at=moment,
                    )
                )
                rows.append(
                    MessageRow(
                        conversation_id=conversation.id,
                        role="assistant",
                        content=_reply_text(rng, zh, topic),
                        created_at=moment + timedelta(seconds=30),
                    )
                )
            session.add_all(rows)
            session.flush()
            last_id = rows[-1].id or 0
            state = "never"
            if turns >= 6:
                state = rng.choice(["never", "up_to_date", "new_turns", "skipped", "failed"])
            states[state] = states.get(state, 0) + 1
            if state == "never":
                continue
            covered = last_id if state in ("up_to_date", "skipped") else rows[len(rows) // 2].id
            succeeded = started + timedelta(minutes=turns)
            session.add(
                SummaryStateRow(
                    conversation_id=conversation.id,
                    covered_until_message_id=covered,
                    succeeded_at=None if state == "failed" else succeeded,
                    attempted_at=succeeded,
                    retry_at=succeeded + timedelta(minutes=30) if state == "failed" else None,
                    error_count=1 if state == "failed" else 0,
                    last_outcome={"skipped": "skip", "failed": "error"}.get(state, "summary"),
                )
            )
            if state in ("up_to_date", "new_turns"):
                session.add(
                    SessionSummaryRow(
                        conversation_id=conversation.id,
                        conversation_title=conversation.title,
                        content=_reply_text(rng, zh, topic),
                        language="zh" if zh else "en",
                        created_at=succeeded,
                        updated_at=succeeded,
                        covers_until_message_id=covered,
                        user_turns_covered=turns // 2,
                    )
                )
        session.commit()

    db.call(fill)
    return states
