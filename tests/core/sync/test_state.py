"""Sync's bookkeeping belongs to one sync folder (``state.bind_folder``)."""

from __future__ import annotations

from collections.abc import Callable

from etos_desktop.core.sync import state
from tests.core.sync.conftest import SyncDevice


def _bind(device: SyncDevice, folder_id: str) -> bool:
    def bind(session: object) -> bool:
        started_over = state.bind_folder(session, folder_id)  # type: ignore[arg-type]
        session.commit()  # type: ignore[attr-defined]
        return started_over

    return bool(device.db.call(bind))


def test_another_folder_starts_the_bookkeeping_over_and_keeps_the_device(
    make_device: Callable[..., SyncDevice],
) -> None:
    desktop = make_device("desktop")
    desktop.engine.save("I use pnpm for JavaScript projects", "preference")
    assert not _bind(desktop, "folder-a")  # nothing to forget yet
    desktop.sync()
    before = desktop.db.call(state.load)
    assert before.own_seq == 1
    assert before.published
    assert not _bind(desktop, "folder-a")  # the same folder: nothing changes
    assert desktop.db.call(state.load).own_seq == 1

    assert _bind(desktop, "folder-b")
    after = desktop.db.call(state.load)
    assert (after.device_id, after.device_name) == (before.device_id, before.device_name)
    assert (after.own_seq, after.published, after.doc, after.applied) == (0, b"", b"", {})
    # The next pass publishes its whole document again (here it finds its own file in the
    # folder, as in a folder it used before, and writes the next one, never one name twice).
    report = desktop.sync()
    assert report.published == "2.update"
    assert desktop.db.call(state.load).own_seq == 2


def test_bookkeeping_from_before_folders_were_recorded_starts_over(
    make_device: Callable[..., SyncDevice],
) -> None:
    desktop = make_device("desktop")
    desktop.engine.save("I live in Hangzhou")
    desktop.sync()  # as the command line of an earlier version did, recording no folder
    assert _bind(desktop, "folder-a")
    assert not _bind(desktop, "folder-a")
