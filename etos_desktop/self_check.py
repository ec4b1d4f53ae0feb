"""``etos-desktop --self-check``: start the app, run named checks, exit 0 or say what failed.

Package smoke tests run it on the installed binary; a user can run it to see whether an install
works. It starts offscreen (unless ``QT_QPA_PLATFORM`` is set) in a temporary data folder that is
removed afterwards (unless ``--data-dir`` or ``ETOS_DATA_DIR`` names one), brings every service up
as a normal start does, then runs :data:`SELF_CHECKS` in order. Each check prints one line on
stdout when it passes; a failure prints the check's name and the reason on stderr, the other
checks still run, and the exit code is 1. Start-up failing is exit 1 too; a run that hangs is
ended after :data:`DEADLINE_SECONDS` with exit 3.

Adding a check: write ``async def check_x(app) -> str`` that returns
what it found in a few words and raises with the reason, and add ``SelfCheck("x", check_x)``
to :data:`SELF_CHECKS`.

Nothing here runs unless ``--self-check`` is given; the normal start-up never imports this module.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from etos_desktop import __version__
from etos_desktop.core.errors import EtosError, redact
from etos_desktop.core.settings import paths

if TYPE_CHECKING:
    from etos_desktop.app import EtosApp

#: A run that has not finished by then is stuck: exit 3 rather than hang a smoke test.
DEADLINE_SECONDS = 90
#: The longest one check may take (loading the embedded model is the slowest, ~1-3 s).
CHECK_TIMEOUT_SECONDS = 45

# The memory round trip: a statement and a question that share no word, so only matching by
# meaning (the embedded model's vectors) finds it.
PROBE_MEMORY = "The lighthouse keeper paints the front door teal every spring."
PROBE_QUERY = "What colour does the lighthouse keeper use for the door?"


class SelfCheckFailed(Exception):
    """A check found something wrong; the message is the reason shown on stderr."""


@dataclass(frozen=True)
class SelfCheck:
    """One named check of a started app.

    Attributes:
        name: Shown on the line it prints ("database", "embedder"…).
        run: Returns what it found in a few words; raises with the reason when something is wrong.
    """

    name: str
    run: Callable[[EtosApp], Awaitable[str]]


# -- the checks ------------------------------------------------------------------------------


async def check_database(app: EtosApp) -> str:
    """The database file is open at the newest schema version, in WAL mode."""
    from etos_desktop.core.storage.migrations import LATEST_VERSION

    if app.db is None:
        raise SelfCheckFailed("the database was not opened")

    def read(session: Any) -> tuple[int, str]:
        connection = session.connection()
        version = connection.exec_driver_sql("PRAGMA user_version").scalar()
        mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
        return int(version), str(mode)

    version, mode = await app.db.run(read)
    if version != LATEST_VERSION:
        raise SelfCheckFailed(f"schema version {version}, expected {LATEST_VERSION}")
    if mode.lower() != "wal":
        raise SelfCheckFailed(f"journal mode {mode}, expected wal")
    return f"{app.db.path} at schema v{version}, WAL"


async def check_resources(app: EtosApp) -> str:
    """Icons, themes and the stylesheet are there, and SVG icons render (Qt's SVG plugin)."""
    from PySide6.QtGui import QIcon

    from etos_desktop.resources import resource_path, resources_root

    root = resources_root()
    for parts in (
        ("icons", "etos.svg"),
        ("icons", "avatar-default.svg"),
        ("themes", "light.qss"),
        ("themes", "dark.qss"),
    ):
        if not resource_path(*parts).is_file():
            raise SelfCheckFailed(f"{resource_path(*parts)} is missing")
    for name in ("etos.svg", "avatar-default.svg"):
        if QIcon(str(resource_path("icons", name))).pixmap(64, 64).isNull():
            raise SelfCheckFailed(
                f"icons/{name} does not render: Qt's SVG icon plugin (qsvgicon) or QtSvg is missing"
            )
    if not app.qt_app.styleSheet():
        raise SelfCheckFailed("no theme stylesheet was applied")
    return f"{root}: icons render, theme applied, Qt platform {app.qt_app.platformName()}"


async def check_translations(app: EtosApp) -> str:
    """The translations folder exists and every compiled translation in it loads."""
    from PySide6.QtCore import QTranslator

    from etos_desktop.resources import resource_path

    folder = resource_path("translations")
    if not folder.is_dir():
        raise SelfCheckFailed(f"{folder} is missing")
    compiled = sorted(folder.glob("*.qm"))
    # Without them the UI is English under 中文, and English says "1 memories".
    missing = {"etos_zh_CN.qm", "etos_en.qm"} - {path.name for path in compiled}
    if missing:
        raise SelfCheckFailed(f"{folder}: {', '.join(sorted(missing))} missing")
    for path in compiled:
        translator = QTranslator()
        if not translator.load(str(path)) or translator.isEmpty():
            raise SelfCheckFailed(f"{path.name} does not load")
    return f"{folder}: {len(compiled)} compiled translation(s) load"


async def check_tls(app: EtosApp) -> str:
    """The HTTP client's TLS context finds CA certificates (HTTPS model servers need them).

    A bundle carries its own OpenSSL, which looks for the system's certificates where the build
    machine keeps them; on Linux the package depends on ``ca-certificates`` for that reason.
    """
    import ssl

    try:
        import httpcore2

        context = httpcore2.default_ssl_context()
    except ImportError:  # a later openai client without httpcore2: the standard context
        context = ssl.create_default_context()
    if sys.platform in ("win32", "darwin"):
        # The OS verifies certificates there (truststore); nothing is loaded up front.
        return f"{type(context).__module__} context from the system trust store"
    found = context.cert_store_stats()["x509_ca"]
    if found == 0:
        where = ssl.get_default_verify_paths()
        raise SelfCheckFailed(
            f"no CA certificates at {where.openssl_cafile} or {where.openssl_capath}: "
            "HTTPS model servers cannot be verified (install ca-certificates)"
        )
    return f"{found} CA certificates"


async def _embedder_chosen(app: EtosApp) -> None:
    """Wait until the app has chosen its embedder (start-up leaves that task running)."""
    task = getattr(app, "_embedder_task", None)
    if task is not None:
        await asyncio.shield(task)


async def check_embedder(app: EtosApp) -> str:
    """The embedded multilingual model loads from the install and embeds text.

    Loads it even when the app chose the user's endpoint: the point is that the package carries
    the model. Also checks that threadpoolctl finds the bundled BLAS, without which the model
    ignores its thread limit and runs on every core.
    """
    import numpy
    import threadpoolctl

    from etos_desktop.core.providers.embedders import UseEmbedder

    await _embedder_chosen(app)
    chosen = app.memory.engine.embedder if app.memory is not None else None
    embedder = chosen if isinstance(chosen, UseEmbedder) else UseEmbedder()
    loop = asyncio.get_running_loop()
    vectors = await loop.run_in_executor(None, embedder.embed, ["self-check 自检"])
    if vectors.shape != (1, embedder.dimension):
        raise SelfCheckFailed(f"embedding has shape {vectors.shape}")
    norm = float(numpy.linalg.norm(vectors[0]))
    if abs(norm - 1.0) > 1e-3:
        raise SelfCheckFailed(f"embedding has length {norm:.3f}, expected 1")
    blas = [pool for pool in threadpoolctl.threadpool_info() if pool.get("user_api") == "blas"]
    if not blas:
        raise SelfCheckFailed("threadpoolctl finds no BLAS library: the thread limit is ignored")
    seconds = embedder.load_seconds or 0.0
    return (
        f"{embedder.key} loaded in {seconds:.1f} s, "
        f"{blas[0].get('internal_api')} limited to {embedder.threads} thread(s)"
    )


async def check_memory_search(app: EtosApp) -> str:
    """A memory is found by meaning.

    In an empty store (the temporary data folder, or any fresh one) a probe memory is saved,
    found with a question that shares none of its words, and deleted again. A store that holds
    memories is never written to: the question is searched read-only.
    """
    from etos_desktop.core.providers.embedders import UseEmbedder

    await _embedder_chosen(app)
    memory = app.memory
    if memory is None:
        raise SelfCheckFailed("the memory engine was not started")
    embedder = memory.engine.embedder
    if embedder is None:
        raise SelfCheckFailed("no embedder: memory search would match keywords only")
    if await memory.memories(include_inactive=True):
        hits = await memory.search(PROBE_QUERY, k=3, mode="vector", from_user=False)
        return f"read-only search on existing memories with {embedder.key}: {len(hits)} hit(s)"
    saved = await memory.save(PROBE_MEMORY, "fact")
    try:
        # from_user=False: the app wrote this query, as it writes search_memory's.
        hits = await memory.search(PROBE_QUERY, k=3, mode="vector", from_user=False)
    finally:
        await memory.delete(saved.id, actor="system")
    if not hits or hits[0].id != saved.id:
        floor = memory.engine.tuning.vector_floor(True)
        raise SelfCheckFailed(
            f"the probe memory was not found by meaning with {embedder.key} (floor {floor:.2f})"
        )
    kind = "embedded model" if isinstance(embedder, UseEmbedder) else "endpoint"
    return f"found by meaning with the {kind} {embedder.key} (cosine {hits[0].parts['vector']:.2f})"


async def check_scheduler(app: EtosApp) -> str:
    """The background jobs are up: derived from the database, and the scheduler's timer fires.

    A probe job due now must run through APScheduler's own timer (a frozen bundle that lost a
    piece of APScheduler would start and never run a summary or a backup).
    """
    from datetime import UTC, datetime

    jobs = app.jobs
    if jobs is None:
        raise SelfCheckFailed("the background jobs were not started")
    await jobs.wait_started()
    scheduler = jobs.scheduler
    if not scheduler.running:
        raise SelfCheckFailed("the scheduler is not running")
    fired = asyncio.Event()

    async def probe() -> None:
        fired.set()

    scheduler.schedule("self-check", datetime.now(UTC), probe)
    await asyncio.wait_for(fired.wait(), 10)
    backup = scheduler.run_time("backup")
    when = backup.astimezone().strftime("%Y-%m-%d %H:%M") if backup else "not scheduled"
    return f"timer fires; {len(scheduler.pending())} job(s) pending, next backup {when}"


async def check_single_instance(app: EtosApp) -> str:
    """A second launch reaches the first over the local socket (QtNetwork is in the install).

    Run on a folder of its own, so it does not matter whether an app is open on the real one.
    """
    from etos_desktop.ui.single_instance import InstanceGuard, ask_running_to_show

    with tempfile.TemporaryDirectory(prefix="etos-self-check-instance-") as folder:
        guard = InstanceGuard(Path(folder))
        try:
            if not guard.claim():
                raise SelfCheckFailed("a fresh folder's lock could not be taken")
            guard.listen()
            if not guard.listening:
                raise SelfCheckFailed("no local socket (is QtNetwork missing?)")
            asked = asyncio.get_running_loop().create_future()
            guard.show_requested.connect(lambda: asked.done() or asked.set_result(True))
            if not await asyncio.to_thread(ask_running_to_show, Path(folder), seconds=5):
                raise SelfCheckFailed("a second launch could not reach the first")
            await asyncio.wait_for(asked, 10)
        finally:
            guard.release()
    return "a second launch reaches the running window"


async def check_about(app: EtosApp) -> str:
    """Help → About can list the bundled parts and their licences (their metadata is there)."""
    from etos_desktop.ui.about import bundled_parts

    parts = await asyncio.to_thread(bundled_parts)
    names = {re.sub(r"[-_.]+", "-", part.name).lower() for part in parts}
    missing = [name for name in ("pyside6-essentials", "openai", "sqlmodel") if name not in names]
    if missing:
        raise SelfCheckFailed(f"no licence metadata for {', '.join(missing)}")
    return f"{len(parts)} bundled parts with their licences"


#: The checks, in order.
SELF_CHECKS: tuple[SelfCheck, ...] = (
    SelfCheck("database", check_database),
    SelfCheck("resources", check_resources),
    SelfCheck("translations", check_translations),
    SelfCheck("tls", check_tls),
    SelfCheck("embedder", check_embedder),
    SelfCheck("memory search", check_memory_search),
    SelfCheck("scheduler", check_scheduler),
    SelfCheck("single instance", check_single_instance),
    SelfCheck("about", check_about),
)


# -- running them ----------------------------------------------------------------------------


def reason(exc: BaseException) -> str:
    """One line saying why ``exc`` happened, without secrets."""
    if isinstance(exc, SelfCheckFailed):
        return redact(str(exc))
    if isinstance(exc, EtosError):
        return f"{exc.code}: {exc.detail}"
    if isinstance(exc, TimeoutError):
        return f"no answer within {CHECK_TIMEOUT_SECONDS} s"
    return redact(f"{type(exc).__name__}: {exc}")


async def run_checks(
    app: EtosApp,
    checks: tuple[SelfCheck, ...] = SELF_CHECKS,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> list[str]:
    """Run ``checks`` on a started app; print one line each; return the names that failed."""
    out = out or sys.stdout
    err = err or sys.stderr
    failed = []
    for check in checks:
        started = time.perf_counter()
        try:
            detail = await asyncio.wait_for(check.run(app), CHECK_TIMEOUT_SECONDS)
        except Exception as exc:  # every failure is reported the same way: name and reason
            failed.append(check.name)
            print(f"self-check: {check.name}: FAILED: {reason(exc)}", file=err, flush=True)
        else:
            ms = (time.perf_counter() - started) * 1000
            print(f"self-check: {check.name}: ok: {detail} ({ms:.0f} ms)", file=out, flush=True)
    return failed


async def run_self_check(app: EtosApp, checks: tuple[SelfCheck, ...] = SELF_CHECKS) -> int:
    """Start ``app``, run ``checks``, shut it down; return the exit code (0 when all passed)."""
    try:
        await app.start()
    except Exception as exc:  # start-up failing in any way is the answer the check gives
        print(
            f"ETOS Desktop {__version__} self-check failed: start-up: {reason(exc)}",
            file=sys.stderr,
            flush=True,
        )
        return 1
    failed = await run_checks(app, checks)
    try:
        await app.shutdown()
    except Exception as exc:  # a service that does not stop cleanly is a failure too
        failed.append("shutdown")
        print(f"self-check: shutdown: FAILED: {reason(exc)}", file=sys.stderr, flush=True)
    if failed:
        print(
            f"ETOS Desktop {__version__} self-check failed: {', '.join(failed)}",
            file=sys.stderr,
            flush=True,
        )
        return 1
    print(f"ETOS Desktop {__version__} self-check ok: data dir {app.data_dir}", flush=True)
    return 0


def prepare_environment(environ: MutableMapping[str, str]) -> Path | None:
    """Offscreen unless a platform is chosen; a temporary data folder unless one is given.

    Call before the QApplication exists.

    Returns:
        The temporary data folder to remove afterwards, or ``None`` when the user named one.
    """
    environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if environ["QT_QPA_PLATFORM"] == "offscreen":
        _quiet_offscreen_notes()
    if environ.get(paths.DATA_DIR_ENV, "").strip():
        return None
    scratch = Path(tempfile.mkdtemp(prefix="etos-self-check-"))
    environ[paths.DATA_DIR_ENV] = str(scratch)
    return scratch


#: What Qt's offscreen platform says of every window it cannot place or raise (it has no
#: screen): true, and no news to someone reading the self-check's report (issue 19).
_OFFSCREEN_NOTES = ("This plugin does not support",)


def _quiet_offscreen_notes() -> None:
    """Leave the offscreen platform's "does not support" notes out of the report."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    def handler(kind: QtMsgType, _context: object, message: str) -> None:
        if kind == QtMsgType.QtWarningMsg and message.startswith(_OFFSCREEN_NOTES):
            return
        print(message, file=sys.stderr, flush=True)

    qInstallMessageHandler(handler)


def arm_deadline(seconds: float = DEADLINE_SECONDS) -> None:
    """End the process with exit code 3 if it is still running after ``seconds``."""
    from PySide6.QtCore import QTimer

    def give_up() -> None:
        print(
            f"ETOS Desktop {__version__} self-check failed: not finished after {seconds:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        os._exit(3)

    QTimer.singleShot(int(seconds * 1000), give_up)
