"""What changed in the data: one typed event after each operation that changed it, and its hub.

Like Anki's ``operation_did_execute(changes)``: the code that changes data (the chat service,
the memory access, the background jobs) publishes one frozen :class:`DataChange` after the
operation, on one :class:`ChangeHub` that ``app.py`` builds and hands to each of them. Whoever
cares subscribes, to the event types it uses (the jobs hear finished replies and superseded
memories), or to everything (``ui/changes_bridge.py`` re-emits each change as one Qt signal, and
every open page decides from the change's :attr:`DataChange.layers` whether to refresh).

Contract: a change is published on the event loop's thread, after the operation's transaction
committed (work done on a worker thread is awaited back on the loop first). Subscribers are called
at once, in the order they subscribed; they must not block (start work, don't do it), and one that
raises is logged and disturbs neither the publisher nor the other subscribers. Qt-free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeVar, overload

if TYPE_CHECKING:
    # Only named in annotations: importing the tables (sqlmodel) here would load them into the
    # first frame of every window that names a change type.
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow

log = logging.getLogger(__name__)


class Layer(StrEnum):
    """A part of the data a change may touch (what an open view refreshes for)."""

    CONVERSATIONS = "conversations"
    MEMORIES = "memories"
    SUMMARIES = "summaries"
    PROFILE = "profile"
    JOBS = "jobs"
    SYNC = "sync"


@dataclass(frozen=True)
class DataChange:
    """Something in the data changed; each concrete change says which layers it touches."""

    #: The layers every change of this type touches.
    layers: ClassVar[frozenset[Layer]] = frozenset()

    def touches(self, *layers: Layer) -> bool:
        """Whether this change touches any of ``layers``."""
        return not self.layers.isdisjoint(layers)


@dataclass(frozen=True)
class ReplyCompleted(DataChange):
    """A reply finished (complete, or interrupted with what arrived) and is saved.

    Published by the chat service; the background jobs start a title or a summary check.

    Attributes:
        conversation: The conversation as it was when the message was sent.
        message: The reply's final row.
    """

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.CONVERSATIONS})
    conversation: ConversationRow
    message: MessageRow


class MemoryChange(StrEnum):
    """What an operation did to memories."""

    SAVED = "saved"
    EDITED = "edited"
    ARCHIVED = "archived"
    RESTORED = "restored"
    DELETED = "deleted"
    BROUGHT_BACK = "brought_back"
    IMPORTED = "imported"
    SYNCED = "synced"


@dataclass(frozen=True)
class MemoriesChanged(DataChange):
    """Memories were saved, edited, archived, restored, deleted, brought back, imported or synced.

    Published by the memory access (every write goes through it: the Memory page, the chat's
    ``save_memory`` and ``/remember``, consolidation), by the import, and by the sync runner
    after a pass wrote other devices' changes (``reason`` ``SYNCED``, ``source`` ``"sync"``).

    Attributes:
        ids: The memories the operation wrote (a save that merged names the memory it merged
            into; an import the memories it added and updated).
        reason: What the operation did.
        source: Who did it: a save's or an import's ``MemorySource`` value (``"manual"``,
            ``"user_statement"``, ``"consolidation"``…), else the actor (``"user"``,
            ``"consolidation"``, ``"system"``).
        superseded: The older memories a save ended (a stated change of the same slot).
    """

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.MEMORIES})
    ids: tuple[int, ...]
    reason: MemoryChange
    source: str
    superseded: tuple[int, ...] = ()


@dataclass(frozen=True)
class SummariesChanged(DataChange):
    """A summary was written (or an attempt recorded), or summaries were imported.

    Attributes:
        conversation_id: The conversation summarised (``None``: any or several).
    """

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.SUMMARIES})
    conversation_id: int | None = None


@dataclass(frozen=True)
class ProfileChanged(DataChange):
    """The profile was refreshed (or a refresh recorded), or replaced by an import."""

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.PROFILE})


@dataclass(frozen=True)
class ConversationChanged(DataChange):
    """A conversation's row changed outside the chat controller (a job wrote its title).

    Attributes:
        conversation_id: The conversation.
    """

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.CONVERSATIONS})
    conversation_id: int


@dataclass(frozen=True)
class CheckinShown(DataChange):
    """The companion started a conversation: a check-in (``core/checkins``) was written.

    Published by the background jobs after the conversation and its first message committed;
    the app shows a notification that opens it.

    Attributes:
        conversation_id: The new conversation.
        companion: The name of the companion that wrote it.
        text: Its first message.
    """

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.CONVERSATIONS})
    conversation_id: int
    companion: str
    text: str


@dataclass(frozen=True)
class JobsChanged(DataChange):
    """A background job started, ended or was scheduled (its status in Settings)."""

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.JOBS})


@dataclass(frozen=True)
class SyncStatusChanged(DataChange):
    """Sync was turned on or off, or a sync pass started or ended (Settings → Sync shows it)."""

    layers: ClassVar[frozenset[Layer]] = frozenset({Layer.SYNC})


ChangeT = TypeVar("ChangeT", bound=DataChange)
#: Ends a subscription; calling it again is harmless.
Unsubscribe = Callable[[], None]

_EVERY_CHANGE: Final[tuple[type[DataChange], ...]] = (DataChange,)


class ChangeHub:
    """Carries every :class:`DataChange` from the code that made it to its subscribers.

    One per app (built by ``app.py`` and handed to each publisher). Used on the event loop's
    thread only; touches no Qt object.
    """

    def __init__(self) -> None:
        self._subscribers: list[tuple[Callable[[Any], object], tuple[type[DataChange], ...]]] = []

    @overload
    def subscribe(self, callback: Callable[[DataChange], object]) -> Unsubscribe: ...

    @overload
    def subscribe(
        self, callback: Callable[[ChangeT], object], *types: type[ChangeT]
    ) -> Unsubscribe: ...

    def subscribe(self, callback: Callable[[Any], object], *types: type[DataChange]) -> Unsubscribe:
        """Call ``callback`` with every published change of ``types`` (none named: every change).

        Args:
            callback: Called on the event loop, right after the publisher's operation; must not
                block.
            types: The change types it hears (their subclasses too).

        Returns:
            Ends this subscription (harmless to call twice).
        """
        entry = (callback, types or _EVERY_CHANGE)
        self._subscribers.append(entry)

        def unsubscribe() -> None:
            # By identity: two subscriptions of one callback are ended one at a time.
            for index, subscribed in enumerate(self._subscribers):
                if subscribed is entry:
                    del self._subscribers[index]
                    return

        return unsubscribe

    def publish(self, change: DataChange) -> None:
        """Tell the subscribers of ``change``'s type, in the order they subscribed.

        Call it on the event loop's thread once the operation committed. A subscriber that
        raises is logged and stops neither the others nor the publisher; one subscribed or
        ended meanwhile takes effect from the next change.
        """
        for callback, types in list(self._subscribers):
            if not isinstance(change, types):
                continue
            try:
                callback(change)
            except Exception:
                log.exception("a subscriber to %s failed", type(change).__name__)
