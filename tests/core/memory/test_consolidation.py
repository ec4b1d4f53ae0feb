"""Consolidation's due check and what may be applied from the model's answer."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from etos_desktop.core.memory.consolidation import (
    MAX_ACTIONS,
    MIN_INTERVAL,
    MIN_NEW_MEMORIES,
    Merge,
    Proposals,
    Supersession,
    build_request,
    consolidation_due,
    parse_proposals,
)
from etos_desktop.core.memory.records import Memory
from tests.helpers.records import make_memory

NOW = datetime(2026, 5, 1, tzinfo=UTC)


def memory(mid: int, text: str = "x", days_ago: int = 0) -> Memory:
    return make_memory(mid, text, NOW - timedelta(days=days_ago))


def test_due_after_eight_new_memories_and_a_day():
    assert not consolidation_due(MIN_NEW_MEMORIES - 1, None, NOW)
    assert consolidation_due(MIN_NEW_MEMORIES, None, NOW)
    assert not consolidation_due(20, NOW - MIN_INTERVAL + timedelta(seconds=1), NOW)
    assert consolidation_due(20, NOW - MIN_INTERVAL, NOW)


def test_request_lists_memories_with_ids_as_data():
    messages = build_request([memory(4, "Likes  tea\nvery much")], "en")
    assert "JSON" in messages[0]["content"]
    assert (
        messages[1]["content"]
        == "<memories>\n#4 [fact, 2026-05-01] Likes tea very much\n</memories>"
    )
    assert "合并" in build_request([memory(1)], "zh")[0]["content"]


def test_only_safe_proposals_are_kept():
    shown = {i: memory(i, days_ago=10 - i) for i in range(1, 8)}
    answer = {
        "merge": [
            {"ids": [1, 2], "text": "  merged  "},
            {"ids": [2, 3], "text": "reuses 2"},  # an id used twice
            {"ids": [4], "text": "alone"},  # a merge of one
            {"ids": [5, 99], "text": "unknown id"},
            {"ids": [5, 6], "text": ""},  # no wording
            {"ids": [True, 6], "text": "a bool is no id"},
        ],
        "supersede": [
            {"old": 5, "new": 6},
            {"old": 7, "new": 3},  # the "newer" one is older
            {"old": 6, "new": 6},
        ],
    }
    text = "Here you go:\n```json\n" + json.dumps(answer) + "\n```"
    assert parse_proposals(text, shown) == Proposals(
        (Merge((1, 2), "merged"),), (Supersession(5, 6),)
    )


def test_unreadable_answers_and_too_many_actions():
    shown = {i: memory(i) for i in range(1, 100)}
    assert not parse_proposals("no json here", shown)
    assert not parse_proposals("{not json}", shown)
    assert not parse_proposals('["a list"]', shown)
    many = {"merge": [{"ids": [2 * i + 1, 2 * i + 2], "text": "m"} for i in range(40)]}
    assert len(parse_proposals(json.dumps(many), shown).merges) == MAX_ACTIONS
