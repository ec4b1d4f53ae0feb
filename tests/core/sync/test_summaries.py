"""Summaries and their state sync (issue 22): made once, the newer wins, the other stays."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from sqlmodel import Session, col, select

from etos_desktop.core.storage.tables import (
    ConversationRow,
    MessageRow,
    SessionSummaryRow,
    SummaryStateRow,
)
from etos_desktop.core.summaries import store
from tests.core.sync.conftest import SyncDevice

CONVERSATION = "0c0c0c0c-0000-4000-8000-000000000001"
MESSAGES = ("0c0c0c0c-0000-4000-8000-0000000000a1", "0c0c0c0c-0000-4000-8000-0000000000a2")


def _conversation(device: SyncDevice) -> tuple[int, list[int]]:
    """The same conversation (same gids) on a device, as conversation sync will bring it."""

    def write(session: Session) -> tuple[int, list[int]]:
        now = device.clock.now()
        conversation = ConversationRow(
            gid=CONVERSATION, title="trip", created_at=now, updated_at=now
        )
        session.add(conversation)
        session.flush()
        assert conversation.id is not None
        ids = []
        for gid, role in zip(MESSAGES, ("user", "assistant"), strict=True):
            message = MessageRow(
                gid=gid, conversation_id=conversation.id, role=role, content=role, created_at=now
            )
            session.add(message)
            session.flush()
            assert message.id is not None
            ids.append(message.id)
        session.commit()
        return conversation.id, ids

    result: tuple[int, list[int]] = device.db.call(write)
    return result


def _summarise(device: SyncDevice, text: str) -> None:
    conversation_id, messages = _conversation_ids(device)
    device.db.call(
        lambda s: store.write_summary(
            s,
            conversation_id=conversation_id,
            content=text,
            language="en",
            covers_until=messages[-1],
            user_turns=1,
            source="auto",
            now=device.clock.now(),
        )
    )


def _conversation_ids(device: SyncDevice) -> tuple[int, list[int]]:
    def read(session: Session) -> tuple[int, list[int]]:
        conversation = session.exec(
            select(ConversationRow).where(ConversationRow.gid == CONVERSATION)
        ).one()
        messages = session.exec(
            select(MessageRow.id)
            .where(MessageRow.conversation_id == conversation.id)
            .order_by(col(MessageRow.id))
        ).all()
        return int(conversation.id or 0), [int(m or 0) for m in messages]

    result: tuple[int, list[int]] = device.db.call(read)
    return result


def _summaries(device: SyncDevice) -> dict[str, dict[str, Any]]:
    def read(session: Session) -> dict[str, dict[str, Any]]:
        rows = session.exec(select(SessionSummaryRow)).all()
        out = {}
        for row in rows:
            conversation = session.get(ConversationRow, row.conversation_id or 0)
            message = session.get(MessageRow, row.covers_until_message_id or 0)
            out[row.gid] = {
                "content": row.content,
                "conversation": None if conversation is None else conversation.gid,
                "covers_until": None if message is None else message.gid,
                "created_at": row.created_at,
                "archived": row.archived_at is not None,
            }
        return out

    result: dict[str, dict[str, Any]] = device.db.call(read)
    return result


def _state(device: SyncDevice) -> tuple[str | None, Any, str | None]:
    conversation_id, _ = _conversation_ids(device)

    def read(session: Session) -> tuple[str | None, Any, str | None]:
        row = session.get(SummaryStateRow, conversation_id)
        assert row is not None
        message = session.get(MessageRow, row.covered_until_message_id or 0)
        return (None if message is None else message.gid, row.succeeded_at, row.last_outcome)

    result: tuple[str | None, Any, str | None] = device.db.call(read)
    return result


def _current(device: SyncDevice) -> str | None:
    conversation_id, _ = _conversation_ids(device)
    row = device.db.call(lambda s: store.current_row(s, conversation_id))
    return None if row is None else str(row.content)


def test_a_summary_made_on_one_device_is_not_made_again(
    three: tuple[SyncDevice, SyncDevice, SyncDevice],
) -> None:
    desktop, laptop, tablet = three
    for device in three:
        _conversation(device)
    _summarise(desktop, "We planned a trip to Kyoto.")
    assert desktop.sync().layers["summaries"].inserted == 0
    report = laptop.sync()
    assert report.layers["summaries"].inserted == 1
    assert report.layers["summary_state"].updated == 1
    tablet.sync()
    for device in (laptop, tablet):
        assert _summaries(device) == _summaries(desktop)
        assert _state(device) == _state(desktop)
        assert _state(device)[0] == MESSAGES[-1]
        # The rule's input says the conversation is covered: nothing left to summarise.
        conversation_id, messages = _conversation_ids(device)
        after = partial(
            store.messages_after, conversation_id=conversation_id, after_id=messages[-1]
        )
        assert device.db.call(after) == []
    # A pass with nothing new changes nothing.
    assert laptop.sync().layers["summaries"].inserted == 0


def test_two_offline_summaries_the_newer_wins_the_other_stays(
    three: tuple[SyncDevice, SyncDevice, SyncDevice],
) -> None:
    desktop, laptop, tablet = three
    for device in three:
        _conversation(device)
    for device in three:
        device.sync()
    _summarise(desktop, "Older: the desktop's summary.")
    laptop.clock.advance(minutes=5)
    _summarise(laptop, "Newer: the laptop's summary.")
    # Every order, files applied twice.
    laptop.sync()
    desktop.sync()
    tablet.sync()
    laptop.sync()
    desktop.sync()
    tablet.sync()
    first = _summaries(desktop)
    assert sorted(v["content"] for v in first.values()) == [
        "Newer: the laptop's summary.",
        "Older: the desktop's summary.",
    ]
    for device in three:
        assert _summaries(device) == first
        assert _current(device) == "Newer: the laptop's summary."
        assert _state(device) == _state(laptop)


def test_a_deleted_summary_is_deleted_everywhere(
    three: tuple[SyncDevice, SyncDevice, SyncDevice],
) -> None:
    desktop, laptop, tablet = three
    for device in three:
        _conversation(device)
    _summarise(desktop, "To be deleted.")
    for device in three:
        device.sync()
    assert len(_summaries(tablet)) == 1
    ids: list[int] = laptop.db.call(
        lambda s: [int(r.id or 0) for r in s.exec(select(SessionSummaryRow)).all()]
    )
    laptop.db.call(lambda s: store.delete_many(s, ids))
    laptop.sync()
    desktop.sync()
    report = tablet.sync()
    assert report.layers["summaries"].deleted == 1
    for device in three:
        assert _summaries(device) == {}


def test_a_summary_of_a_conversation_not_here_is_kept_unlinked(
    make_device: Callable[..., SyncDevice],
) -> None:
    desktop, laptop = make_device("desktop"), make_device("laptop")
    _conversation(desktop)
    _summarise(desktop, "Only the desktop has the conversation.")
    desktop.sync()
    laptop.sync()
    [summary] = _summaries(laptop).values()
    assert summary["content"] == "Only the desktop has the conversation."
    assert summary["conversation"] is None
    # The laptop's pass does not clear the link the desktop wrote.
    laptop.sync()
    desktop.sync()
    [back] = _summaries(desktop).values()
    assert back["conversation"] == CONVERSATION
    assert back["covers_until"] == MESSAGES[-1]
