"""Devices for the sync tests: each a real data folder with a database, an engine and a service."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.settings import paths
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import MemoryRevisionRow, MemoryRow
from etos_desktop.core.sync import state
from etos_desktop.core.sync.crypto import KdfParams
from etos_desktop.core.sync.service import SyncReport, SyncService
from etos_desktop.core.sync.transport import FolderTransport, Transport, WebDavTransport
from tests.helpers.embedders import HashEmbedder
from tests.helpers.webdav_server import PASSWORD, USER, WebDavServer

PASSPHRASE = "blue lantern 市场 47"
#: scrypt at a test cost (the default takes ~0.1 s and 32 MiB per derivation).
CHEAP_KDF = KdfParams(n=2**4, r=1, p=1)


@dataclass
class SyncDevice:
    """One device: a data folder, its database, a memory engine and a sync service."""

    name: str
    data_dir: Path
    db: Database
    engine: MemoryEngine
    service: SyncService
    clock: FakeClock

    def sync(self) -> SyncReport:
        return self.service.sync_once()

    def device_id(self) -> str:
        return str(self.db.call(state.load).device_id)

    def gid(self, memory_id: int) -> str:
        row = self.db.call(lambda s: s.get(MemoryRow, memory_id))
        assert row is not None
        return str(row.gid)

    def id_of(self, gid: str) -> int | None:
        row = self.db.call(lambda s: s.exec(select(MemoryRow).where(MemoryRow.gid == gid)).first())
        return None if row is None else row.id

    def state(self) -> dict[str, dict[str, Any]]:
        """Every memory's synced fields by gid: what must be equal on converged devices."""

        def read(session: Any) -> dict[str, dict[str, Any]]:
            rows = session.exec(select(MemoryRow).order_by(col(MemoryRow.id))).all()
            gids = {row.id: row.gid for row in rows}
            return {
                row.gid: {
                    "content": row.content,
                    "kind": row.kind,
                    "tags": json.loads(row.tags_json),
                    "archived": row.archived_at is not None,
                    "valid_until": row.valid_until,
                    "superseded_by": gids.get(row.superseded_by),
                    "updated_at": row.updated_at,
                }
                for row in rows
            }

        return dict(self.db.call(read))

    def history(self, gid: str) -> list[MemoryRevisionRow]:
        memory_id = self.id_of(gid)
        assert memory_id is not None
        return list(
            self.db.call(
                lambda s: s.exec(
                    select(MemoryRevisionRow)
                    .where(MemoryRevisionRow.memory_id == memory_id)
                    .order_by(col(MemoryRevisionRow.id))
                ).all()
            )
        )


def converged(*devices: SyncDevice) -> bool:
    first = devices[0].state()
    return all(device.state() == first for device in devices[1:])


@pytest.fixture(params=["folder", "webdav"])
def transport_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], Transport]]:
    """Makes transports to one sync folder: a local folder, or a real WebDAV server."""
    made: list[Transport] = []
    if request.param == "folder":
        root = tmp_path / "sync-folder"

        def folder() -> Transport:
            made.append(FolderTransport(root))
            return made[-1]

        yield folder
    else:
        with WebDavServer(tmp_path / "webdav-root") as server:

            def webdav() -> Transport:
                made.append(WebDavTransport(server.url + "etos/", (USER, PASSWORD)))
                return made[-1]

            yield webdav
            for transport in made:
                transport.close()


@pytest.fixture
def make_device(
    tmp_path: Path, transport_factory: Callable[[], Transport]
) -> Iterator[Callable[..., SyncDevice]]:
    """Makes devices on the test's sync folder (each with its own data folder)."""
    devices: list[SyncDevice] = []

    def make(name: str, passphrase: str = PASSPHRASE) -> SyncDevice:
        data_dir = tmp_path / f"data-{name}"
        clock = FakeClock()
        db = Database(paths.database_path(data_dir), paths.backups_dir(data_dir), clock=clock)
        db.open()
        engine = MemoryEngine(db, embedder=HashEmbedder(), clock=clock)
        service = SyncService(
            db,
            transport_factory(),
            passphrase,
            clock=clock,
            kdf=CHEAP_KDF,
            device_name=name,
        )
        device = SyncDevice(name, data_dir, db, engine, service, clock)
        devices.append(device)
        return device

    yield make
    for device in devices:
        device.engine.close()
        device.db.close()


@pytest.fixture
def three(make_device: Callable[..., SyncDevice]) -> tuple[SyncDevice, SyncDevice, SyncDevice]:
    """Three devices on one sync folder: desktop, laptop and tablet."""
    return make_device("desktop"), make_device("laptop"), make_device("tablet")
