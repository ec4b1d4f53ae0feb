"""The change hub: typed changes reach their subscribers in order; a failing one is only logged."""

from __future__ import annotations

import pytest

from etos_desktop.core.changes import (
    ChangeHub,
    ConversationChanged,
    DataChange,
    JobsChanged,
    Layer,
    MemoriesChanged,
    MemoryChange,
    ProfileChanged,
    SummariesChanged,
)

SAVED = MemoriesChanged((7,), MemoryChange.SAVED, "manual")


def test_subscribers_hear_every_change_in_the_order_they_subscribed() -> None:
    hub = ChangeHub()
    heard: list[tuple[str, DataChange]] = []
    hub.subscribe(lambda change: heard.append(("first", change)))
    hub.subscribe(lambda change: heard.append(("second", change)))
    hub.publish(JobsChanged())
    hub.publish(SAVED)
    assert heard == [
        ("first", JobsChanged()),
        ("second", JobsChanged()),
        ("first", SAVED),
        ("second", SAVED),
    ]


def test_a_subscriber_to_types_hears_only_those() -> None:
    hub = ChangeHub()
    memories: list[MemoriesChanged] = []
    layers: list[DataChange] = []
    hub.subscribe(memories.append, MemoriesChanged)
    hub.subscribe(layers.append, SummariesChanged, ProfileChanged)
    for change in (JobsChanged(), SAVED, ProfileChanged(), SummariesChanged(3)):
        hub.publish(change)
    assert memories == [SAVED]
    assert layers == [ProfileChanged(), SummariesChanged(3)]


def test_unsubscribing_ends_one_subscription_and_twice_is_harmless() -> None:
    hub = ChangeHub()
    heard: list[DataChange] = []
    first = hub.subscribe(heard.append)
    hub.subscribe(heard.append)
    first()
    first()
    hub.publish(JobsChanged())
    assert heard == [JobsChanged()]


def test_subscribing_or_ending_during_a_publish_takes_effect_from_the_next() -> None:
    hub = ChangeHub()
    heard: list[str] = []
    ends: list[object] = []

    def late(_change: DataChange) -> None:
        heard.append("late")

    def first(_change: DataChange) -> None:
        heard.append("first")
        if not ends:
            ends.append(hub.subscribe(late))
        end_second()

    hub.subscribe(first)
    end_second = hub.subscribe(lambda _change: heard.append("second"))
    hub.publish(JobsChanged())
    assert heard == ["first", "second"]
    hub.publish(JobsChanged())
    assert heard == ["first", "second", "first", "late"]


@pytest.mark.logs(r"^ERROR etos_desktop\.core\.changes: a subscriber to ProfileChanged failed$")
def test_a_failing_subscriber_is_logged_and_stops_neither_the_others_nor_the_publisher() -> None:
    hub = ChangeHub()
    heard: list[DataChange] = []

    def broken(_change: DataChange) -> None:
        raise RuntimeError("subscriber bug")

    hub.subscribe(broken)
    hub.subscribe(heard.append)
    hub.publish(ProfileChanged())  # does not raise
    assert heard == [ProfileChanged()]


def test_each_change_says_which_layers_it_touches() -> None:
    assert SAVED.touches(Layer.MEMORIES)
    assert not SAVED.touches(Layer.SUMMARIES, Layer.JOBS)
    assert SummariesChanged().touches(Layer.JOBS, Layer.SUMMARIES)
    assert ConversationChanged(4).layers == {Layer.CONVERSATIONS}
    assert ProfileChanged().layers == {Layer.PROFILE}
    assert JobsChanged().layers == {Layer.JOBS}
    assert not DataChange().touches(*Layer)
