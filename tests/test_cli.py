"""``etos-desktop-cli`` on temporary data folders: memory commands and sync.

The commands run in this process through ``cli.main`` (a fresh interpreter costs ~3 s a
command), except where the process itself is the point: the entry point of the first command,
the exit codes of a refusal and of a wrong passphrase.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from sqlmodel import Session

from etos_desktop import cli

PASSPHRASE = "two devices, one folder"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _cli(
    *args: str, env: dict[str, str], check: bool = True, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run one command: in this process, or (``process``) as ``python -m etos_desktop.cli``."""
    if process:
        result = subprocess.run(
            [sys.executable, "-m", "etos_desktop.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    else:
        out, err = io.StringIO(), io.StringIO()
        with (
            mock.patch.dict(os.environ, env, clear=True),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            code = cli.main(list(args))
        result = subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def env(isolated_environment: Path) -> dict[str, str]:
    values = dict(os.environ)
    values["ETOS_SYNC_PASSPHRASE"] = PASSPHRASE
    values["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    values.pop("QT_QPA_PLATFORM", None)
    return values


def _list(data: Path, env: dict[str, str], *extra: str) -> list[dict[str, object]]:
    out = _cli("memory", "list", *extra, "--data-dir", str(data), env=env).stdout
    return [json.loads(line) for line in out.splitlines()]


def test_two_data_folders_sync_through_the_command_line(
    tmp_path: Path, env: dict[str, str]
) -> None:
    home, work, folder = tmp_path / "home", tmp_path / "work", tmp_path / "sync"
    added = json.loads(
        _cli(
            "memory",
            "add",
            "I take my coffee black",
            "--data-dir",
            str(home),
            env=env,
            process=True,
        ).stdout
    )
    _cli(
        "memory",
        "add",
        "Deadline is on Friday",
        "--kind",
        "episode",
        "--data-dir",
        str(home),
        env=env,
    )
    first = json.loads(
        _cli("sync", "--data-dir", str(home), "--folder", str(folder), env=env).stdout
    )
    assert first["published"] == "1.update"
    second = json.loads(
        _cli("sync", "--data-dir", str(work), "--folder", str(folder), env=env).stdout
    )
    assert second["inserted"] == 2
    # Saved within the same second on the other machine: their order there is not the point.
    listed = sorted(_list(work, env), key=lambda m: m["text"] != "I take my coffee black")
    assert [(m["text"], m["kind"]) for m in listed] == [
        ("I take my coffee black", "fact"),
        ("Deadline is on Friday", "episode"),
    ]
    assert listed[0]["id"] == added["id"]
    assert set(listed[0]) == {"id", "text", "kind", "created_at"}
    # Archive on one, delete on the other; both hold after a pass each way.
    _cli("memory", "archive", str(listed[0]["id"]), "--data-dir", str(work), env=env)
    _cli("memory", "delete", str(listed[1]["id"]), "--data-dir", str(home), env=env)
    for data in (work, home, work):
        _cli("sync", "--data-dir", str(data), "--folder", str(folder), env=env)
    for data in (home, work):
        assert _list(data, env) == []
        everything = _list(data, env, "--all")
        assert [(m["text"], m["archived"]) for m in everything] == [
            ("I take my coffee black", True)
        ]
    # The passphrase was kept (in the fallback file of this keyring-less test environment).
    del env["ETOS_SYNC_PASSPHRASE"]
    _cli("sync", "--data-dir", str(home), "--folder", str(folder), env=env)
    for path in folder.rglob("*.update"):
        assert b"coffee" not in path.read_bytes()


def test_a_summary_and_a_profile_edit_reach_the_other_data_folder(
    tmp_path: Path, env: dict[str, str]
) -> None:
    from datetime import UTC, datetime

    from etos_desktop.core.profile import store as profile_store
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow
    from etos_desktop.core.summaries import store as summary_store

    home, work, folder = tmp_path / "home", tmp_path / "work", tmp_path / "sync"
    now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def make(session: Session) -> None:
        conversation = ConversationRow(title="Kyoto", created_at=now, updated_at=now)
        session.add(conversation)
        session.flush()
        assert conversation.id is not None
        message = MessageRow(
            conversation_id=conversation.id, role="user", content="trip", created_at=now
        )
        session.add(message)
        session.commit()
        assert message.id is not None
        summary_store.write_summary(
            session,
            conversation_id=conversation.id,
            content="We planned a trip to Kyoto.",
            language="en",
            covers_until=message.id,
            user_turns=1,
            source="auto",
            now=now,
        )
        profile_store.write_version(
            session, content="# Identity\nLives in Lyon.", pinned=(), source="manual", now=now
        )

    with mock.patch.dict(os.environ, env, clear=True):
        db = cli._open_db(home)
        try:
            db.call(make)
        finally:
            db.close()
    _cli("sync", "--data-dir", str(home), "--folder", str(folder), env=env)
    _cli("sync", "--data-dir", str(work), "--folder", str(folder), env=env)
    with mock.patch.dict(os.environ, env, clear=True):
        db = cli._open_db(work)
        try:
            summaries = db.call(summary_store.list_all)
            profile = db.call(profile_store.get)
        finally:
            db.close()
    assert [s.content for s in summaries] == ["We planned a trip to Kyoto."]
    assert profile.content == "# Identity\nLives in Lyon."


def test_a_wrong_passphrase_fails_with_the_reason(tmp_path: Path, env: dict[str, str]) -> None:
    folder = tmp_path / "sync"
    _cli("sync", "--data-dir", str(tmp_path / "a"), "--folder", str(folder), env=env)
    env["ETOS_SYNC_PASSPHRASE"] = "something else"
    result = _cli(
        "sync",
        "--data-dir",
        str(tmp_path / "b"),
        "--folder",
        str(folder),
        env=env,
        check=False,
        process=True,
    )
    assert result.returncode == 1
    assert "sync_wrong_passphrase" in result.stderr
    unknown = _cli(
        "memory", "archive", "no-such-gid", "--data-dir", str(tmp_path / "a"), env=env, check=False
    )
    assert unknown.returncode == 1
    assert "no memory no-such-gid" in unknown.stderr


def test_it_refuses_while_the_app_holds_the_data_folder(
    tmp_path: Path, env: dict[str, str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    # What QLockFile writes for the running app: pid, app name, host name.
    (data / "instance.lock").write_text(f"{os.getpid()}\netos-desktop\n{socket.gethostname()}\n")
    for args in (("memory", "list"), ("sync", "--folder", str(tmp_path / "sync"))):
        result = _cli(*args, "--data-dir", str(data), env=env, check=False, process=True)
        assert result.returncode == 3
        assert "ETOS Desktop is running" in result.stderr
        if args[0] == "sync":
            assert "Settings → Sync → Sync now" in result.stderr
    assert not (data / "etos.db").exists()
    # A lock left by a process that is gone does not count.
    (data / "instance.lock").write_text(f"999999999\netos-desktop\n{socket.gethostname()}\n")
    assert _list(data, env) == []


def test_sync_without_a_place_uses_the_one_settings_set_up(
    tmp_path: Path, env: dict[str, str]
) -> None:
    from etos_desktop.core.providers.secrets import SecretStore
    from etos_desktop.core.settings.store import SettingsStore
    from etos_desktop.core.sync.secrets import SyncPassphrase

    data, folder = tmp_path / "data", tmp_path / "sync"
    refused = _cli("sync", "--data-dir", str(data), env=env, check=False)
    assert refused.returncode == 2
    assert "Settings → Sync" in refused.stderr
    # What Settings → Sync writes: the place in the settings, the passphrase in the keyring.
    settings = SettingsStore(data / "settings.json")
    settings.load()
    settings.set("sync.enabled", True)
    settings.set("sync.folder", str(folder))
    settings.save()
    SyncPassphrase(SecretStore(data)).set("set up in the app")
    del env["ETOS_SYNC_PASSPHRASE"]
    _cli("memory", "add", "I cycle to work", "--data-dir", str(data), env=env)
    report = json.loads(_cli("sync", "--data-dir", str(data), env=env).stdout)
    assert report["exported"] == 1
    assert (folder / "sync.json").is_file()
    assert [p.name for p in folder.rglob("*.update")] == ["1.update"]
