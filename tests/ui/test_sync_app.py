"""Sync in the window app: set up on Settings → Sync, two app instances over one sync folder.

Two ``EtosApp``s run in this process, each on its own data folder (two devices), plus the
command line as a third; the sync folder is a folder in the test's temporary dir, or a real
WebDAV server on 127.0.0.1 (``tests/helpers/webdav_server.py``). Everything is done through the
real page: its fields, its buttons, the folder chooser (the one stand-in: it is answered with a
path) and the confirmation box. Time is each app's ``FakeClock``: the debounced and the
periodic passes are fired as their timers would, after the test checked when they are due.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import io
import json
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from unittest import mock

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from etos_desktop import cli
from etos_desktop.app import EtosApp, setup_logging
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.records import Memory
from etos_desktop.core.settings import paths
from etos_desktop.core.sync.state import default_device_name
from etos_desktop.services.sync_runner import DEBOUNCE, INTERVAL, PERIODIC_JOB, SOON_JOB
from etos_desktop.ui.settings.memory_page import MemoryPage
from etos_desktop.ui.settings.sync_page import SyncPage
from tests.helpers.chat_app import idle, start_app, stop_app
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.keyrings import ThreadRecordingKeyring
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import answer_box, choose_file, click, type_text, wait_until
from tests.helpers.webdav_server import PASSWORD, USER, WebDavServer

PASSPHRASE = "blue lantern 市场 47"
TIMEOUT = 30

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@contextlib.asynccontextmanager
async def running(
    qapp: QApplication, server: FakeOpenAIServer, data_dir: Path
) -> AsyncIterator[tuple[EtosApp, FakeClock]]:
    clock = FakeClock()
    app = await start_app(qapp, server, data_dir, clock=clock)
    try:
        yield app, clock
    finally:
        await stop_app(app)


async def sync_page(app: EtosApp) -> SyncPage:
    """Open Settings → Sync, as the user does."""
    app.window.settings_action.trigger()
    await wait_until(lambda: app._settings_dialog is not None)
    dialog = app._settings_dialog
    dialog.show_page("sync")
    page = dialog.sync_page
    assert isinstance(page, SyncPage)
    await wait_until(page.isVisible)
    return page


async def settle(app: EtosApp, page: SyncPage) -> None:
    """Wait for the page's action and the passes it started."""
    await page.wait_idle()
    assert app.sync is not None
    await asyncio.wait_for(app.sync.wait_idle(), TIMEOUT)
    await idle(app)


async def turn_on_with_folder(
    app: EtosApp, folder: Path, passphrase: str = PASSPHRASE, *, name: str = ""
) -> SyncPage:
    page = await sync_page(app)
    assert page.setup_box.isVisible()
    assert not page.status_box.isVisible()
    assert page.kind_combo.currentData() == "folder"
    await click(page.choose_button)
    await choose_file(str(folder))
    await wait_until(lambda: page.folder_edit.text() == str(folder))
    await type_text(page.passphrase_edit, passphrase)
    await type_text(page.confirm_edit, passphrase)
    if name:
        await type_text(page.name_edit, name)
    await click(page.turn_on_button)
    await settle(app, page)
    return page


async def memory_page(app: EtosApp) -> MemoryPage:
    dialog = app._settings_dialog
    assert dialog is not None
    page = dialog.memory_page
    assert isinstance(page, MemoryPage)
    if page.isVisible():
        return page
    refreshed = expect_signal(page.refreshed)
    dialog.show_page("memory")
    await asyncio.wait_for(refreshed, TIMEOUT)
    await page.wait_idle()
    return page


def listed(page: MemoryPage) -> list[tuple[str, bool]]:
    """What the Memory page lists: each memory's text, and whether it is shown archived."""
    return sorted((m.content, m.archived_at is not None) for m in page.model.records())


def fact(page: SyncPage, name: str) -> str:
    return page._facts[name][1].text()


def run_cli(*args: str, env: dict[str, str]) -> str:
    """One ``etos-desktop-cli`` command in this process, as another device with its own keyring
    (none: its 0600 file)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, env),
        mock.patch.object(keyring, "get_keyring", fail.Keyring),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = cli.main(list(args))
    assert code == 0, err.getvalue()
    return out.getvalue()


def cli_list(data: Path, env: dict[str, str]) -> list[dict[str, object]]:
    out = run_cli("memory", "list", "--all", "--data-dir", str(data), env=env)
    return [json.loads(line) for line in out.splitlines()]


async def only_memory(app: EtosApp) -> Memory:
    assert app.memory is not None
    (memory,) = await app.memory.memories(include_inactive=True)
    return memory


async def test_two_apps_over_one_folder_see_each_others_memory_and_archive(
    qapp: QApplication, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    folder = tmp_path / "Syncthing" / "ETOS"
    folder.mkdir(parents=True)
    home, work, third = tmp_path / "home", tmp_path / "work", tmp_path / "tablet"
    env = {"ETOS_SYNC_PASSPHRASE": PASSPHRASE}
    async with (
        running(qapp, server, home) as (desktop, desktop_clock),
        running(qapp, server, work) as (laptop, _laptop_clock),
    ):
        assert desktop.sync is not None
        assert laptop.sync is not None
        page = await turn_on_with_folder(desktop, folder, name="Desktop")
        assert page.status_box.isVisible()
        assert not page.setup_box.isVisible()
        assert page.state_label.property("state") == "ok", page.state_label.text()
        assert page.where_field.text() == str(folder)
        assert (folder / "sync.json").is_file()
        assert desktop.settings.get_bool("sync.enabled")
        assert desktop.settings.get_str("sync.device_name") == "Desktop"
        assert page.passphrase_edit.text() == ""  # not kept in the page either
        dialog = desktop._settings_dialog
        assert not dialog.is_modified()  # the name typed was saved with it
        assert dialog.status_label.text() == ""

        # A memory saved on the desktop is sent by the debounced pass.
        assert desktop.memory is not None
        await desktop.memory.save("I take my coffee black", "preference")
        scheduler = desktop.sync.scheduler
        assert scheduler.run_time(SOON_JOB) == desktop_clock.now() + DEBOUNCE
        await wait_until(lambda: fact(page, "pending") == "1 local change")
        await scheduler.fire(SOON_JOB)
        await settle(desktop, page)
        assert fact(page, "pending") == "None"
        assert scheduler.run_time(PERIODIC_JOB) == desktop_clock.now() + INTERVAL

        # The laptop is set up on the same folder: its first pass brings the memory in, and its
        # open Memory page lists it.
        other = await turn_on_with_folder(laptop, folder, name="Laptop")
        assert fact(other, "devices") == "Desktop"
        assert other.state_label.property("state") == "ok", other.state_label.text()
        assert "1 new memory from other devices." in other.state_label.text()
        memories = await memory_page(laptop)
        assert listed(memories) == [("I take my coffee black", False)]
        assert laptop.window.chat.welcome.memory_count == 1

        # Archived on the laptop; the desktop's next periodic pass brings the archive in.
        copy = await only_memory(laptop)
        assert laptop.memory is not None
        refreshed = expect_signal(memories.refreshed)
        await laptop.memory.archive(copy.id)
        await asyncio.wait_for(refreshed, TIMEOUT)
        assert listed(memories) == [("I take my coffee black", True)]
        await laptop.sync.scheduler.fire(SOON_JOB)
        await settle(laptop, other)
        desktop_memories = await memory_page(desktop)
        assert listed(desktop_memories) == [("I take my coffee black", False)]
        refreshed = expect_signal(desktop_memories.refreshed)
        desktop_clock.advance(minutes=5)
        await scheduler.fire(PERIODIC_JOB)
        await asyncio.wait_for(refreshed, TIMEOUT)
        assert listed(desktop_memories) == [("I take my coffee black", True)]
        archived = await only_memory(desktop)
        assert archived.archived_at is not None
        await settle(desktop, page)

        # A memory the laptop's user adds comes over with "Sync now" on the desktop.
        await laptop.memory.save("Deadline is on Friday", "episode")
        await laptop.sync.scheduler.fire(SOON_JOB)
        await settle(laptop, other)
        sync_page_again = await sync_page(desktop)
        await click(sync_page_again.sync_now_button)
        await settle(desktop, sync_page_again)
        await memory_page(desktop)
        await wait_until(
            lambda: (
                listed(desktop_memories)
                == [("Deadline is on Friday", False), ("I take my coffee black", True)]
            )
        )

    # The command line reads both data folders alike, and a third device gets the same.
    for data in (home, work):
        assert sorted((m["text"], m["archived"]) for m in cli_list(data, env)) == [
            ("Deadline is on Friday", False),
            ("I take my coffee black", True),
        ]
    run_cli("sync", "--data-dir", str(third), "--folder", str(folder), env=env)
    assert sorted((m["text"], m["archived"]) for m in cli_list(third, env)) == [
        ("Deadline is on Friday", False),
        ("I take my coffee black", True),
    ]
    for path in folder.rglob("*.update"):
        assert b"coffee" not in path.read_bytes()


async def test_a_wrong_passphrase_says_so_in_plain_words_and_changes_nothing(
    qapp: QApplication, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    folder = tmp_path / "Dropbox"
    folder.mkdir()
    run_cli(
        "sync", "--data-dir", str(tmp_path / "first"), "--folder", str(folder),
        env={"ETOS_SYNC_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip
    before = {p.relative_to(folder) for p in folder.rglob("*")}
    async with running(qapp, server, tmp_path / "second") as (app, _clock):
        assert app.memory is not None
        await app.memory.save("I live in Hangzhou")
        page = await turn_on_with_folder(app, folder, "another passphrase here")
        assert page.setup_box.isVisible()
        assert not page.status_box.isVisible()
        assert page.setup_error_label.isVisible()
        assert page.setup_error_label.text().startswith(
            "The passphrase does not open this sync folder"
        )
        assert "Nothing was changed on this device" in page.setup_error_label.text()
        assert page.passphrase_edit.text() == "another passphrase here"  # kept to correct
        assert not app.settings.get_bool("sync.enabled")
        assert [m.content for m in await app.memory.memories()] == ["I live in Hangzhou"]
        assert app.sync is not None
        assert app.sync.scheduler.run_time(SOON_JOB) is None
        assert {p.relative_to(folder) for p in folder.rglob("*")} == before
        secrets = paths.secrets_path(app.data_dir)
        assert not secrets.exists() or "sync:" not in secrets.read_text()

        # The right one works from the same form.
        await type_text(page.passphrase_edit, PASSPHRASE)
        await type_text(page.confirm_edit, PASSPHRASE)
        await click(page.turn_on_button)
        await settle(app, page)
        assert page.status_box.isVisible()
        assert page.state_label.property("state") == "ok", page.state_label.text()


async def test_errors_of_a_pass_are_said_in_plain_words(
    qapp: QApplication,
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "usb-stick"
    folder.mkdir()
    async with running(qapp, server, tmp_path / "data") as (app, _clock):
        page = await turn_on_with_folder(app, folder)
        assert app.memory is not None
        await app.memory.save("I play the violin")

        # The disk of the sync folder is full (the write fails with ENOSPC).
        from etos_desktop.core.sync import transport

        def full(*_args: object, **_kwargs: object) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(transport, "atomic_write_private", full)
        await click(page.sync_now_button)
        await settle(app, page)
        assert page.state_label.property("state") == "error"
        assert page.state_label.text().startswith("The disk of the sync folder")
        assert fact(page, "pending") == "1 local change"
        monkeypatch.undo()

        # The folder is gone (a drive not mounted): said, and not made again.
        folder.rename(tmp_path / "elsewhere")
        await click(page.sync_now_button)
        await settle(app, page)
        assert page.state_label.text().startswith(f"The sync folder {folder} is missing")
        assert not folder.exists()
        (tmp_path / "elsewhere").rename(folder)
        await click(page.sync_now_button)
        await settle(app, page)
        assert page.state_label.property("state") == "ok", page.state_label.text()
        assert fact(page, "pending") == "None"

        # Turning off asks first, then forgets the passphrase; the memories stay.
        await click(page.turn_off_button)
        text = await answer_box("Turn off")
        assert "Nothing is deleted" in text
        await settle(app, page)
        assert page.setup_box.isVisible()
        assert page.folder_edit.text() == str(folder)
        assert not app.settings.get_bool("sync.enabled")
        assert [m.content for m in await app.memory.memories()] == ["I play the violin"]


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> ThreadRecordingKeyring:
    recorder = ThreadRecordingKeyring()
    monkeypatch.setattr(keyring, "get_keyring", lambda: recorder)
    return recorder


async def test_over_webdav_the_secrets_stay_in_the_keyring(
    qapp: QApplication,
    server: FakeOpenAIServer,
    tmp_path: Path,
    backend: ThreadRecordingKeyring,
) -> None:
    data = tmp_path / "data"
    log_handler = setup_logging(data)
    try:
        with WebDavServer(tmp_path / "dav-root") as dav:
            url = dav.url + "ETOS/"
            async with running(qapp, server, data) as (app, _clock):
                page = await sync_page(app)
                page.kind_combo.setFocus()
                QTest.keyClick(page.kind_combo, Qt.Key.Key_Down)  # the next choice: WebDAV
                assert page.kind_combo.currentText() == "A WebDAV server"
                assert page.url_edit.isVisible()
                assert not page.folder_edit.isVisible()
                await type_text(page.url_edit, url)
                await type_text(page.user_edit, USER)
                await type_text(page.password_edit, PASSWORD)
                await type_text(page.passphrase_edit, PASSPHRASE)
                await type_text(page.confirm_edit, PASSPHRASE)
                await click(page.turn_on_button)
                await settle(app, page)
                assert page.state_label.property("state") == "ok", page.state_label.text()
                assert page.where_field.text() == f"{url} ({USER})"
                assert app.memory is not None
                await app.memory.save("My sister is called Mei")
                await click(page.sync_now_button)
                await settle(app, page)

                # The command line as the second device, over the same server.
                env = {
                    "ETOS_SYNC_PASSPHRASE": PASSPHRASE,
                    "ETOS_SYNC_WEBDAV_PASSWORD": PASSWORD,
                }
                other = tmp_path / "laptop"
                sync = ("sync", "--data-dir", str(other), "--webdav", url, "--webdav-user", USER)
                run_cli(*sync, env=env)
                assert [m["text"] for m in cli_list(other, env)] == ["My sister is called Mei"]
                run_cli("memory", "add", "I prefer green tea", "--data-dir", str(other), env=env)
                run_cli(*sync, env=env)
                memories = await memory_page(app)
                page = await sync_page(app)
                await click(page.sync_now_button)
                await settle(app, page)
                await memory_page(app)
                await wait_until(
                    lambda: (
                        listed(memories)
                        == [("I prefer green tea", False), ("My sister is called Mei", False)]
                    )
                )

                # The server stops answering.
                dav.__exit__(None, None, None)
                page = await sync_page(app)
                await click(page.sync_now_button)
                await settle(app, page)
                assert page.state_label.text().startswith("The server cannot be reached")

            stored = {k: base64.b64decode(v).decode() for k, v in backend.entries.items()}
            assert stored == {"sync:passphrase": PASSPHRASE, "sync:webdav-password": PASSWORD}
            assert backend.on_main_thread() == []
    finally:
        logging.getLogger().removeHandler(log_handler)
        log_handler.close()
    secrets = [
        s.encode() for s in (PASSPHRASE, PASSWORD, base64.b64encode(PASSPHRASE.encode()).decode())
    ]
    checked = []
    for name in ("etos.db", "etos.db-wal", "settings.json", "logs/etos.log", "secrets.json"):
        path = data / name
        if path.exists():
            checked.append(name)
            content = path.read_bytes()
            assert not [s for s in secrets if s in content], name
    assert {"etos.db", "settings.json", "logs/etos.log"} <= set(checked)
    assert "sync pass" in (data / "logs" / "etos.log").read_text()
    for path in (tmp_path / "dav-root").rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert not [s for s in secrets if s in content], path
            assert b"Mei" not in content


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_the_page_with_sync_on_fits_800_by_600_and_speaks_the_language(
    qapp: QApplication, server: FakeOpenAIServer, tmp_path: Path, language: str
) -> None:
    from tests.helpers.ui_texts import untranslated
    from tests.ui.test_texts_fit import cut_texts

    folder = tmp_path / "OneDrive" / "ETOS"
    folder.mkdir(parents=True)
    run_cli(
        "sync", "--data-dir", str(tmp_path / "laptop"), "--folder", str(folder),
        "--device-name", "ThinkPad", env={"ETOS_SYNC_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip
    # A file another program left in a device's folder: skipped, and said so.
    stray = folder / ("ab" * 16)
    stray.mkdir()
    (stray / "1.update").write_bytes(b"not a sync file at all, but long enough to be read")
    async with running(qapp, server, tmp_path / "data") as (app, _clock):
        app.settings.set("ui.language", language)
        app.settings.set("ui.font_size", 130)
        page = await turn_on_with_folder(app, folder, name="台式机" if language == "zh" else "")
        dialog = app._settings_dialog
        assert dialog is not None
        dialog.resize(800, 600)
        for _ in range(3):
            await asyncio.sleep(0.05)
        assert page.status_box.isVisible()
        assert page.state_label.property("state") == "warning", page.state_label.text()
        assert "ThinkPad" in fact(page, "devices")
        assert fact(page, "skipped") != "—"
        problems = cut_texts(dialog, "Settings › sync (on)")
        if language == "zh":
            problems += untranslated(
                dialog, data=["ThinkPad", "abababab"], phrases=[str(folder), default_device_name()]
            )
        assert not problems, "\n".join(problems)
