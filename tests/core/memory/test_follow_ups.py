"""The refer-back rule: only a follow-up that needs the turn before it borrows it for search."""

from __future__ import annotations

import pytest

from etos_desktop.core.memory.retrieval import build_query
from etos_desktop.core.retrieval.gating import refers_back


@pytest.mark.parametrize(
    "message",
    [
        "and for that one?",
        "And for that?",
        "what about the backend?",
        "How about this one?",
        "does it work on Windows?",
        "same for the tests?",
        "why?",
        "那它呢？",
        "那这个呢",
        "还有呢？",
        "那个怎么装？",
        "为什么？",
        "前端呢？",
    ],
)
def test_follow_ups_that_refer_back(message: str) -> None:
    assert refers_back(message)


@pytest.mark.parametrize(
    "message",
    [
        "What is the capital of France?",
        "How do I center a div?",
        "法国的首都是哪里？",
        "光合作用的原理是什么？",
        "Which package manager should I use for this JavaScript project?",
        # long enough to stand on its own, even with "it" in it
        "Can you explain how the garbage collector in Python decides when to run it",
        "",
    ],
)
def test_messages_that_stand_on_their_own(message: str) -> None:
    assert not refers_back(message)


def test_the_previous_turn_is_searched_only_for_a_follow_up() -> None:
    previous = "Which package manager should I use?"
    assert build_query("What is the capital of France?", previous) == (
        "What is the capital of France?"
    )
    assert build_query("and for that one?", previous) == f"{previous}\nand for that one?"
    assert build_query("and for that one?", None) == "and for that one?"
