"""``etos-desktop-cli``: sync and memory commands for scripts and tests (issue 22).

::

    etos-desktop-cli sync --data-dir DIR [--folder PATH | --webdav URL [--webdav-user USER]]
    etos-desktop-cli memory add TEXT [--kind KIND] --data-dir DIR
    etos-desktop-cli memory list [--all] --data-dir DIR
    etos-desktop-cli memory archive GID --data-dir DIR
    etos-desktop-cli memory delete GID --data-dir DIR

Anything else is handed to the app's own ``main`` (``etos-desktop-cli --self-check`` on
Windows, where the windowed program has no stdout). Memories are named by their global ids.
``sync`` without ``--folder`` or ``--webdav`` syncs where Settings → Sync set the data folder up.
The sync passphrase comes from ``ETOS_SYNC_PASSPHRASE``, the keyring, or a prompt, and is kept in
the keyring after the first pass that worked; a WebDAV password from ``ETOS_SYNC_WEBDAV_PASSWORD``
or the keyring (where Settings → Sync keeps it).

Exit codes: 0 done, 1 the operation failed (the reason on stderr), 2 bad usage, 3 the window
app is running on this data folder (it holds the database; this command never writes beside it).
Imports no Qt: the running app is recognised by its lock file, as ``ui/single_instance.py``
writes it (``QLockFile``: the holder's pid on the first line, its host on the third).
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import json
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from etos_desktop.core.errors import EtosError
from etos_desktop.core.settings import paths

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_APP_RUNNING = 3
PASSPHRASE_ENV = "ETOS_SYNC_PASSPHRASE"
WEBDAV_PASSWORD_ENV = "ETOS_SYNC_WEBDAV_PASSWORD"
_COMMANDS = frozenset({"sync", "memory"})


def app_holds(data_dir: Path) -> int | None:
    """The pid of a running app that holds ``data_dir``, or ``None``."""
    try:
        lines = (data_dir / "instance.lock").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    parts = lines.splitlines()
    try:
        pid = int(parts[0])
    except (IndexError, ValueError):
        return None
    host = parts[2] if len(parts) > 2 else ""
    if pid <= 0 or (host and host != socket.gethostname()):
        return None
    try:
        os.kill(pid, 0)
    except PermissionError:
        return pid
    except OSError:
        return None
    return pid


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", type=Path, help="the data folder (default: the app's)")
    parser = argparse.ArgumentParser(prog="etos-desktop-cli")
    commands = parser.add_subparsers(dest="command", required=True)
    sync = commands.add_parser("sync", parents=[common], help="one sync pass")
    where = sync.add_mutually_exclusive_group()
    where.add_argument("--folder", type=Path, help="a sync folder (Syncthing, a cloud folder…)")
    where.add_argument("--webdav", help="a WebDAV folder URL")
    sync.add_argument("--webdav-user", default="", help="the WebDAV user")
    sync.add_argument("--device-name", help="this device's name in the other devices' histories")
    memory = commands.add_parser("memory", help="long-term memories")
    actions = memory.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", parents=[common], help="save a memory")
    add.add_argument("text")
    add.add_argument("--kind", default="fact")
    listing = actions.add_parser("list", parents=[common], help="active memories as JSON lines")
    listing.add_argument("--all", action="store_true", help="archived ones too")
    for name in ("archive", "delete"):
        action = actions.add_parser(name, parents=[common], help=f"{name} a memory")
        action.add_argument("gid")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in _COMMANDS:
        if args_list and args_list[0] in ("-h", "--help"):
            _parser().print_help()
            return 0
        from etos_desktop.__main__ import main as app_main

        return app_main()
    args = _parser().parse_args(args_list)
    data_dir: Path = (args.data_dir or paths.data_dir()).expanduser()
    holder = app_holds(data_dir)
    if holder is not None:
        what = (
            "it syncs by itself: use Settings → Sync → Sync now there, or close it first"
            if args.command == "sync"
            else "close it first, or make the change in the app"
        )
        print(
            f"etos-desktop-cli: ETOS Desktop is running on {data_dir} (process {holder}); {what}",
            file=sys.stderr,
        )
        return EXIT_APP_RUNNING
    try:
        if args.command == "sync":
            return _sync(args, data_dir)
        return _memory(args, data_dir)
    except EtosError as exc:
        print(f"etos-desktop-cli: {exc.code}: {exc.detail or exc.code}", file=sys.stderr)
        return EXIT_FAILED


def _open_db(data_dir: Path) -> Any:
    from etos_desktop.core.storage.database import Database

    db = Database(paths.database_path(data_dir), paths.backups_dir(data_dir))
    db.open()
    return db


def _sync(args: argparse.Namespace, data_dir: Path) -> int:
    from etos_desktop.core.providers.secrets import SecretStore
    from etos_desktop.core.sync import state
    from etos_desktop.core.sync.secrets import SyncPassphrase, WebDavPassword
    from etos_desktop.core.sync.service import SyncService
    from etos_desktop.core.sync.transport import FolderTransport, Transport, WebDavTransport

    folder: Path | None = args.folder
    url: str | None = args.webdav
    user: str = args.webdav_user
    if folder is None and url is None:
        # Where Settings → Sync set this data folder up.
        from etos_desktop.core.settings.store import SettingsStore

        settings = SettingsStore(paths.settings_path(data_dir))
        settings.load()
        if not settings.get_bool("sync.enabled"):
            print(
                "etos-desktop-cli: sync is not set up for this data folder: give --folder or "
                "--webdav, or set it up in Settings → Sync",
                file=sys.stderr,
            )
            return EXIT_USAGE
        if settings.get_str("sync.transport") == "webdav":
            url, user = settings.get_str("sync.webdav_url"), settings.get_str("sync.webdav_user")
        else:
            folder = Path(settings.get_str("sync.folder"))
    secrets = SecretStore(data_dir)
    stored = SyncPassphrase(secrets)
    passphrase = os.environ.get(PASSPHRASE_ENV) or stored.get()
    if not passphrase and sys.stdin.isatty():
        passphrase = getpass.getpass("Sync passphrase: ")
    if not passphrase:
        print(
            f"etos-desktop-cli: no sync passphrase: set {PASSPHRASE_ENV} or run in a terminal",
            file=sys.stderr,
        )
        return EXIT_USAGE
    transport: Transport
    if folder is not None:
        transport = FolderTransport(folder.expanduser())
    else:
        assert url is not None
        password = os.environ.get(WEBDAV_PASSWORD_ENV) or WebDavPassword(secrets).get() or ""
        auth = (user, password) if user else None
        transport = WebDavTransport(url, auth)
    db = _open_db(data_dir)
    try:
        service = SyncService(db, transport, passphrase, device_name=args.device_name)
        folder_id = str(service.key().folder_id)

        def bind(session: Any) -> None:
            state.bind_folder(session, folder_id)
            session.commit()

        db.call(bind)
        report = service.sync_once()
    finally:
        transport.close()
        db.close()
    if stored.get() != passphrase:
        stored.set(passphrase)
    print(json.dumps(dataclasses.asdict(report), ensure_ascii=False))
    return 0


def _memory(args: argparse.Namespace, data_dir: Path) -> int:
    from sqlmodel import col, select

    from etos_desktop.core.memory.engine import MemoryEngine
    from etos_desktop.core.memory.errors import MemoryNotFound
    from etos_desktop.core.storage.tables import MemoryRow

    db = _open_db(data_dir)
    engine = MemoryEngine(db)
    try:

        def gids() -> dict[int, str]:
            rows = db.call(lambda s: s.exec(select(col(MemoryRow.id), col(MemoryRow.gid))).all())
            return {int(i): str(g) for i, g in rows}

        def local_id(gid: str) -> int:
            for memory_id, known in gids().items():
                if known == gid:
                    return memory_id
            raise MemoryNotFound(f"no memory {gid}", gid=gid)

        if args.action == "add":
            saved = engine.save(args.text, args.kind)
            print(json.dumps({"id": gids()[saved.id], "merged": saved.merged}))
        elif args.action == "list":
            by_id = gids()
            for memory in sorted(engine.memories(include_inactive=args.all), key=lambda m: m.id):
                line: dict[str, Any] = {
                    "id": by_id[memory.id],
                    "text": memory.content,
                    "kind": memory.kind,
                    "created_at": memory.created_at.isoformat(),
                }
                if args.all:
                    line["archived"] = memory.archived_at is not None
                print(json.dumps(line, ensure_ascii=False))
        elif args.action == "archive":
            engine.archive(local_id(args.gid))
        else:
            engine.delete(local_id(args.gid))
    finally:
        engine.close()
        db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
