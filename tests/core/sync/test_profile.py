"""The profile syncs (issue 22): edits merge, the lost value stays in history with its device."""

from __future__ import annotations

from etos_desktop.core.profile import store
from etos_desktop.core.profile.records import PinnedLine, ProfileSource
from tests.core.sync.conftest import SyncDevice


def _write(
    device: SyncDevice, content: str, pins: tuple[PinnedLine, ...] = (), source: str = "manual"
) -> None:
    device.db.call(
        lambda s: store.write_version(
            s, content=content, pinned=pins, source=source, now=device.clock.now()
        )
    )


def _profile(device: SyncDevice) -> tuple[str, tuple[PinnedLine, ...]]:
    profile = device.db.call(store.get)
    return profile.content, tuple(profile.pinned)


def test_a_profile_edit_reaches_every_device(
    three: tuple[SyncDevice, SyncDevice, SyncDevice],
) -> None:
    desktop, laptop, tablet = three
    _write(desktop, "# Identity\nLives in Lyon.")
    desktop.sync()
    assert laptop.sync().layers["profile"].inserted == 1
    tablet.sync()
    for device in three:
        assert _profile(device) == ("# Identity\nLives in Lyon.", ())
    [synced, *_] = laptop.db.call(store.revisions)
    assert synced.source == ProfileSource.SYNCED
    assert synced.device == "desktop"


def test_offline_edits_merge_and_the_lost_one_stays_in_history(
    three: tuple[SyncDevice, SyncDevice, SyncDevice],
) -> None:
    desktop, laptop, tablet = three
    _write(desktop, "Base.")
    for device in (desktop, laptop, tablet):
        device.sync()
    _write(desktop, "Desktop's text.")
    _write(laptop, "Laptop's text.")
    for _ in range(2):  # files applied twice
        for device in (laptop, tablet, desktop):
            device.sync()
    content = _profile(desktop)[0]
    assert content in {"Desktop's text.", "Laptop's text."}
    for device in three:
        assert _profile(device)[0] == content
        conflicts = [
            r for r in device.db.call(store.revisions) if r.source == ProfileSource.CONFLICT
        ]
        assert len(conflicts) == 1
        loser = "laptop" if content == "Desktop's text." else "desktop"
        assert conflicts[0].device == loser
        assert (
            conflicts[0].content
            == ({"desktop": "Desktop's text.", "laptop": "Laptop's text."})[loser]
        )


def test_pinned_on_one_device_refreshed_on_the_other(
    three: tuple[SyncDevice, SyncDevice, SyncDevice],
) -> None:
    desktop, laptop, tablet = three
    _write(desktop, "# Identity\nLives in Lyon.\n")
    for device in three:
        device.sync()
    pin = PinnedLine(text="Lives in Lyon.", section="identity")
    _write(desktop, "# Identity\nLives in Lyon.\n", (pin,))
    _write(laptop, "# Identity\nLives in Lyon.\nWorks as a nurse.\n", source="scheduled")
    for _ in range(2):
        for device in (desktop, laptop, tablet):
            device.sync()
    for device in three:
        assert _profile(device) == ("# Identity\nLives in Lyon.\nWorks as a nurse.\n", (pin,))
