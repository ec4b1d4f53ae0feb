"""Composition root: builds every object, wires them together, and runs the qasync loop.

Start-up order keeps the first frame fast: settings (a small JSON file) → window shown →
heavy imports (openai, sqlmodel) in a worker thread → database opened on its own thread →
services attached to the window. Nothing else in the program constructs services.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace, TracebackType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QLocale, Qt, QTimer, QTranslator
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from etos_desktop import __version__
from etos_desktop.core.changes import (
    ChangeHub,
    CheckinShown,
    ConversationChanged,
    DataChange,
    Layer,
)
from etos_desktop.core.errors import EtosError, redact
from etos_desktop.core.settings import key_groups, paths
from etos_desktop.core.settings.store import (
    EMBEDDINGS_ENDPOINT_KEY,
    MODEL_PRICES_KEY,
    SettingsStore,
)
from etos_desktop.resources import resource_path
from etos_desktop.ui.gc_guard import GarbageCollector
from etos_desktop.ui.main_window import MainWindow
from etos_desktop.ui.task_set import TaskSet

if TYPE_CHECKING:
    from etos_desktop.core.chat.search import MessageIndexer
    from etos_desktop.core.clock import Clock
    from etos_desktop.core.memory.access import MemoryAccess
    from etos_desktop.core.profile.access import ProfileAccess
    from etos_desktop.core.providers.config import ProviderConfig
    from etos_desktop.core.providers.registry import ProviderRegistry
    from etos_desktop.core.providers.secrets import SecretStore
    from etos_desktop.core.storage.database import Database
    from etos_desktop.core.summaries.access import SummaryAccess
    from etos_desktop.services.jobs import BackgroundJobs
    from etos_desktop.services.sync_runner import SyncRunner
    from etos_desktop.ui.changes_bridge import ChangesBridge
    from etos_desktop.ui.chat_controller import ChatController

log = logging.getLogger("etos_desktop")

#: When the single-instance socket starts listening, after the window shows.
_LISTEN_DELAY_MS = 300
#: Modules imported off the UI thread once the window is visible (they take ~0.5 s together).
HEAVY_MODULES = (
    "etos_desktop.core.providers.openai_provider",
    "etos_desktop.core.memory.engine",
    "etos_desktop.core.storage.repositories",
    "etos_desktop.core.chat.service",
    # The scheduler (APScheduler) too: it is never imported before the first frame.
    "etos_desktop.services.jobs",
    # Sync (pycrdt, cryptography): its page exists whether sync is on or not.
    "etos_desktop.services.sync_runner",
    # Imported by the scheduler's start; on the UI thread it waited for the import lock held
    # by these imports (a 74 ms stall measured right after start-up).
    "apscheduler.executors.asyncio",
    "etos_desktop.ui.chat_controller",
    "etos_desktop.ui.settings.dialog",
    "etos_desktop.ui.markdown_render",
    # The openai client imports its transport and its chat/embeddings resources lazily, at the
    # first request: 150-250 ms on the UI thread at the first send.
    "httpcore2",
    "anyio._backends._asyncio",
    "encodings.idna",
    "openai.pagination",
    "openai.resources.chat.chat",
    "openai.resources.chat.completions",
    "openai.resources.embeddings",
    "openai.resources.models",
    "openai.lib._chat_completion_resources",
)


def _import_heavy() -> None:
    for name in HEAVY_MODULES:
        importlib.import_module(name)
    # The first reply's first render would otherwise import the Markdown parser and the
    # highlighter's lexers on the UI thread (a 100-200 ms stall); rendering is pure Python.
    from etos_desktop.ui.markdown_render import render_markdown

    render_markdown("**warm** `up`\n\n- a\n\n```python\nx = 1\n```\n```bash\nls\n```\n")


def parse_args(argv: Sequence[str]) -> Any:
    """Parse the command line (argparse costs ~15 ms of start-up, so only when there is one)."""
    if not argv:
        return SimpleNamespace(data_dir=None, self_check=False)
    import argparse

    parser = argparse.ArgumentParser(prog="etos-desktop", description="ETOS Desktop")
    parser.add_argument("--data-dir", help="use this data folder (same as ETOS_DATA_DIR)")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help=(
            "start offscreen in a temporary data folder (unless --data-dir is given), run the "
            "checks of etos_desktop/self_check.py and exit 0, or 1 with the reasons on stderr"
        ),
    )
    parser.add_argument("--version", action="version", version=f"ETOS Desktop {__version__}")
    return parser.parse_args(argv)


def setup_logging(data_dir: Path) -> logging.Handler:
    """Log to a rotating, owner-only file in the data folder; never keys, tokens or request URLs.

    Every record is redacted on the handler (``SecretRedactionFilter``: keys, ``Authorization``
    headers, bearer tokens, credentials in URLs, in messages and in tracebacks). The HTTP
    client's INFO line ("HTTP Request: POST <full URL> ...", one per request) is not written:
    a URL can carry a key (``?key=…``), and the line adds nothing a failure does not report.

    Returns:
        The file handler (tests remove it again).
    """
    from etos_desktop.core.errors import SecretRedactionFilter

    # After the first frame: logging.handlers pulls in socket and pickle.
    from etos_desktop.core.log_file import PrivateRotatingFileHandler

    # 0700 and its files 0600, an older version's looser ones tightened (DESIGN §9).
    log_dir = paths.make_private_dir(paths.logs_dir(data_dir))
    handler = PrivateRotatingFileHandler(log_dir / "etos.log", max_bytes=1_000_000, backup_count=3)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SecretRedactionFilter())
    for client in ("httpx2", "httpx", "httpcore2", "httpcore"):
        logging.getLogger(client).setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


class EtosApp:
    """Owns the window and every service for one run of the program.

    Args:
        qt_app: The QApplication.
        env: The process environment (data dir, OPENAI_* defaults).
        local_candidates: Base URLs probed for a local model server on first run.
        provider_factory: Builds a provider from a configuration and key (tests pass one with
            short timeouts); default ``OpenAIProvider`` with the design's timeouts.
        clock: The time every rule and job reads (tests pass a ``FakeClock``).
        background_jobs: Run the background jobs (titles, summaries, consolidation, backup);
            the start-up benchmark turns them off to measure what they cost.
        translations: Loads the translators for a UI locale (tests pass their own); default
            Qt's own and the app's ``.qm`` files (``load_translations``).
        use_factory: Builds the built-in USE embedder when memory search chooses it (tests
            pass one that hands out a model loaded once per process); default a new
            ``UseEmbedder``.
    """

    def __init__(
        self,
        qt_app: QApplication,
        env: Mapping[str, str],
        *,
        local_candidates: Sequence[str] | None = None,
        provider_factory: Callable[[ProviderConfig, str | None], Any] | None = None,
        clock: Clock | None = None,
        background_jobs: bool = True,
        translations: Callable[[QLocale], Sequence[QTranslator]] | None = None,
        use_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.qt_app = qt_app
        self.env = dict(env)
        self.garbage_collector = GarbageCollector(qt_app)
        self.garbage_collector.start()
        self.data_dir = paths.data_dir(self.env)
        self.settings = SettingsStore(paths.settings_path(self.data_dir))
        self.settings.load()
        self._translators: list[QTranslator] = []
        self._load_translations = translations or load_translations
        self._initial_locale = QLocale()
        self.ui_locale = QLocale()
        self.ui_language = "en"
        self._theme_setting = "system"
        self._follows_color_scheme = False
        self.theme: Any = None
        self._font: Any = None
        self.install_language(str(self.settings.get("ui.language")))
        self.apply_theme(str(self.settings.get("ui.theme")))
        self.window = MainWindow(
            qsettings_path=paths.qsettings_path(self.data_dir), data_dir=self.data_dir
        )
        self.window.setWindowIcon(QIcon(str(resource_path("icons", "etos.svg"))))
        # The welcome of the first frame names the companion as it will be once started.
        self.window.chat.set_persona(self.settings.get_str("persona.name"), self.ui_language)
        self.window.chat.set_model_prices(self.settings.model_prices())
        self.window.settings_requested.connect(self._on_window_settings_requested)
        self.window.context_requested.connect(self._on_window_context_requested)
        self.window.closing.connect(self._on_window_closing)
        self.tray = self._make_tray()
        self.instance: Any = None
        self._provider_factory = provider_factory
        self._local_candidates = list(local_candidates) if local_candidates is not None else None
        self.db: Database | None = None
        self.secrets: SecretStore | None = None
        self.registry: ProviderRegistry | None = None
        self.controller: ChatController | None = None
        self.memory: MemoryAccess | None = None
        self.summaries: SummaryAccess | None = None
        self.profile: ProfileAccess | None = None
        self.jobs: BackgroundJobs | None = None
        self.sync: SyncRunner | None = None
        self.message_indexer: MessageIndexer | None = None
        self.changes_bridge: ChangesBridge | None = None
        self._clock = clock
        self._background_jobs = background_jobs
        self._embedder_task: Any = None
        self._use_factory = use_factory
        self._unsubscribe: list[Callable[[], None]] = []
        self._reschedule_queued = False
        self._checkins_queued = False
        # Background work of the app itself (choosing the embedder…): failures are shown in the
        # status bar with what was not done, and logged once.
        self._tasks = TaskSet(report=self._on_task_failed)
        # Work that lives as long as the app (the message indexer's loop): apart, so that
        # waiting for the app's background work to end does not wait for the app to quit.
        self._resident = TaskSet(report=self._on_task_failed)
        self._reembed_cancel = threading.Event()
        # Created by ``run_app`` on the running loop: asyncio is imported after the first frame.
        self.closed: Any = None
        self._settings_dialog: Any = None
        self._avatar_path: str | None = None
        self._context_dialogs: list[Any] = []

    # -- look and language --------------------------------------------------------------------

    def install_language(self, language: str) -> None:
        """Switch the UI to ``language`` ("auto" follows the system locale), live.

        The translators are swapped (Qt then sends every widget a ``LanguageChange``), the
        locale of dates and numbers follows, and so does the font's family order
        (``ui.fonts``).
        """
        locale = QLocale.system() if language == "auto" else QLocale(language)
        for translator in self._translators:
            self.qt_app.removeTranslator(translator)
        self._translators = list(self._load_translations(locale))
        for translator in self._translators:
            self.qt_app.installTranslator(translator)
        changed = locale != self.ui_locale
        QLocale.setDefault(locale)
        self.ui_locale = locale
        self.ui_language = "zh" if locale.language() == QLocale.Language.Chinese else "en"
        if changed:
            for widget in self.qt_app.topLevelWidgets():
                # Resolved again from the new default: each gets a LocaleChange (dates, numbers).
                widget.unsetLocale()
        self.apply_font()

    def apply_font(self) -> None:
        """Set the UI font: the language's family order at the ``ui.font_size`` percentage."""
        from PySide6.QtGui import QFontDatabase

        from etos_desktop.ui.fonts import ui_font

        system = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
        self._font = ui_font(self.ui_locale, system, self.settings.get_int("ui.font_size"))
        self._apply_look()

    def apply_theme(self, theme: str) -> None:
        """Apply the light or dark theme; "system" follows the platform's colour scheme, live."""
        self._theme_setting = theme
        if not self._follows_color_scheme:
            self.qt_app.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)
            self._follows_color_scheme = True
        self._apply_look()

    def _apply_look(self, scheme: Qt.ColorScheme | None = None) -> None:
        from etos_desktop.ui import theme as themes

        if self._font is None:
            return
        if scheme is None:
            scheme = self.qt_app.styleHints().colorScheme()
        name = themes.resolve_theme(self._theme_setting, scheme)
        self.theme = themes.apply_look(self.qt_app, name, self._font)

    def _on_color_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self._theme_setting == "system":
            self._apply_look(scheme)

    # -- desktop ------------------------------------------------------------------------------

    def _make_tray(self) -> Any:
        """The tray icon, where the desktop has a tray (``None`` elsewhere)."""
        from etos_desktop.ui.tray import TrayIcon, tray_available

        if not tray_available():
            return None
        tray = TrayIcon(self.window, self.window.windowIcon(), self.qt_app)
        tray.new_conversation_requested.connect(self.window.new_action.trigger)
        tray.quit_requested.connect(self.window.close)
        tray.checkin_open_requested.connect(self._open_checkin)
        tray.show()
        return tray

    def show_window(self) -> None:
        """Bring the window to the front (another launch, the tray)."""
        from etos_desktop.ui.tray import show_window

        show_window(self.window)

    def keep_instance(self, guard: Any) -> None:
        """Hold the data folder's single-instance claim; later launches show this window."""
        self.instance = guard
        guard.show_requested.connect(self.show_window)
        # Listening loads QtNetwork (~15 ms): after the first frame and the list are up. A
        # launch in the meantime keeps trying for seconds.
        QTimer.singleShot(_LISTEN_DELAY_MS, guard.listen)

    # -- start-up -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Bring the services up behind the visible window; errors are shown, not raised."""
        try:
            await self._start_services()
        except EtosError as exc:
            log.error("start-up failed: %s %s", exc.code, exc.detail)
            self.window.statusBar().showMessage(exc.detail)
            self.window.start_failed()
            self._show_fatal(exc)
            raise

    async def _start_services(self) -> None:
        import asyncio

        from etos_desktop.core.storage.peek import peek_conversations

        loop = asyncio.get_running_loop()
        # First frame: the conversation list straight from the file (sqlite3 only, read-only),
        # before the slow imports; the full start-up below replaces it.
        summaries = await loop.run_in_executor(
            None, peek_conversations, paths.database_path(self.data_dir)
        )
        if summaries:
            self.window.sidebar.set_conversations(summaries, None)  # type: ignore[arg-type]
        await loop.run_in_executor(None, _import_heavy)

        from etos_desktop.core.chat.search import MessageIndexer, MessageSearch
        from etos_desktop.core.chat.service import ChatService
        from etos_desktop.core.clock import SystemClock
        from etos_desktop.core.context.language import language_for_locale
        from etos_desktop.core.memory.access import MemoryAccess
        from etos_desktop.core.memory.engine import MemoryEngine
        from etos_desktop.core.profile.access import ProfileAccess
        from etos_desktop.core.providers import openai_provider
        from etos_desktop.core.providers.presets import LOCAL_CANDIDATES
        from etos_desktop.core.providers.registry import ProviderRegistry
        from etos_desktop.core.providers.secrets import SecretStore
        from etos_desktop.core.storage.attachments import (
            AttachmentRepository,
            BlobStore,
            blob_root,
        )
        from etos_desktop.core.storage.database import Database
        from etos_desktop.core.storage.repositories import ChatRepository
        from etos_desktop.core.summaries.access import SummaryAccess
        from etos_desktop.ui.changes_bridge import ChangesBridge
        from etos_desktop.ui.chat_controller import ChatController

        def make_provider(config: ProviderConfig, key: str | None) -> Any:
            return openai_provider.OpenAIProvider(config.base_url, key)

        clock = self._clock or SystemClock()
        self._clock = clock
        # The sidebar's date groups (Today, Yesterday…) by the clock every rule reads.
        self.window.sidebar.set_today(lambda: clock.now().astimezone().date())
        self.db = Database(
            paths.database_path(self.data_dir), paths.backups_dir(self.data_dir), clock=clock
        )
        recovered = await self.db.open_async()
        # The keyring may block (D-Bus, an unlock prompt): open it and read the keys off the UI
        # thread, so resolving a provider on every send is a memory lookup.
        self.secrets = await loop.run_in_executor(None, SecretStore, self.data_dir)
        await loop.run_in_executor(
            None, self.secrets.warm, [config.id for config in self.settings.providers()]
        )
        self.registry = ProviderRegistry(
            self.settings, self.secrets, self.env, self._provider_factory or make_provider
        )
        # Indexes the messages from before the search index once the window is up, and merges
        # the index after deletes (core/chat/search.py); the repository keeps it in step.
        self.message_indexer = MessageIndexer(self.db)
        repo = ChatRepository(self.db, after_delete=self.message_indexer.note_deleted)
        attachments = AttachmentRepository(self.db, BlobStore(blob_root(self.data_dir)))
        # The one hub every data change is published on; the bridge re-emits it for the UI.
        changes = ChangeHub()
        self.changes_bridge = ChangesBridge(changes, self.window)
        self.changes_bridge.changed.connect(self._on_changes_changed)
        engine = MemoryEngine(self.db, embedder=None, clock=clock)
        self.memory = MemoryAccess(engine, changes=changes)
        self._apply_memory_limits()
        # Summary recall matches by meaning with whatever embedder memory search uses now.
        self.summaries = SummaryAccess(
            self.db,
            clock=clock,
            embedding=lambda: (engine.embedder, engine.tuning),
            changes=changes,
        )
        self.profile = ProfileAccess(self.db, clock=clock, changes=changes)
        chat = ChatService(
            repo,
            self.registry,
            self.settings,
            memory=self.memory,
            summaries=self.summaries,
            clock=clock,
            profile=self.profile,
            ui_language=lambda: language_for_locale(self.ui_locale.name()),
            changes=changes,
            attachments=attachments,
        )
        self.controller = ChatController(repo, chat, attachments=attachments)
        if self._background_jobs:
            self._build_jobs(changes, clock)
            self._build_sync(changes, clock)
        self._follow_settings()
        self._probe = openai_provider.probe_local_servers
        if self._local_candidates is None:
            self._local_candidates = list(LOCAL_CANDIDATES)
        self.window.attach(self.controller)
        self.window.message_search.attach(
            self.controller, MessageSearch(self.db), self.message_indexer
        )
        self._apply_render_interval()
        self.refresh_providers()
        # Kept as functions, so the notice is put into words again when the language changes.
        notices: list[Callable[[], str]] = []
        secrets, settings = self.secrets, self.settings
        if secrets.using_file_fallback:
            notices.append(
                lambda: QCoreApplication.translate(
                    "EtosApp", "API keys are kept in {path} (no system keyring found)"
                ).format(path=secrets.fallback_path)
            )
        if settings.load_problem:
            notices.append(lambda: _settings_problem_text(settings))
        if recovered:
            notices.append(lambda: self.window.recovered_replies_text(recovered))
        if notices:
            self.window.set_notice(
                lambda: "⚠ " + notices[0](), lambda: "\n".join(n() for n in notices)
            )
        await repo.delete_empty_conversations()
        # Files no message names any more (a crash between a delete and their removal).
        self._tasks.spawn(
            attachments.sweep(),
            QCoreApplication.translate("EtosApp", "Unused attachment files were not removed."),
        )
        await self.controller.refresh_conversations()
        # The window opened on a new conversation; what the user began to write there since
        # the first frame stays there (a message sent is queued for it), so the last
        # conversation is opened only for a user who has not started writing.
        if not self.window.chat.has_draft():
            rows = await repo.list_conversations(limit=1)
            if rows and rows[0].id is not None:
                await self.controller.open_conversation(rows[0].id)
        # Last: it sends a message queued since the first frame, into what is shown now.
        self.window.set_ready(True)
        if not self.registry.is_configured():
            self.open_settings("providers", first_run=True)
        self.switch_embedder()
        self._resident.spawn(
            self.message_indexer.run(),
            QCoreApplication.translate("EtosApp", "Older messages were not indexed for search."),
        )
        self.window.chat.warm_up()
        self.garbage_collector.freeze_startup_objects()
        if self.jobs is not None:
            # After the window shows and the services are up: derive the jobs, start the timer.
            # Not awaited: its database reads queue behind the embedder's start-up work (0.7 s
            # measured in tests/bench/jobs_startup.py), and nothing else waits for the jobs.
            self._tasks.spawn(
                self.jobs.start(),
                QCoreApplication.translate("EtosApp", "The background jobs did not start."),
            )
        if self.sync is not None:
            # Its first pass runs now, on its own thread (it waits for nothing of the jobs').
            self._tasks.spawn(
                self.sync.start(),
                QCoreApplication.translate("EtosApp", "Sync did not start."),
            )

    def _build_jobs(self, changes: ChangeHub, clock: Clock) -> None:
        """The background jobs (after the heavy imports)."""
        import asyncio

        from etos_desktop.services.jobs import BackgroundJobs
        from etos_desktop.services.scheduler import JobScheduler

        assert self.db is not None
        assert self.registry is not None
        assert self.summaries is not None
        logging.getLogger("apscheduler").setLevel(logging.WARNING)
        self.jobs = BackgroundJobs(
            db=self.db,
            changes=changes,
            summaries=self.summaries,
            providers=self.registry,
            settings=self.settings,
            clock=clock,
            scheduler=JobScheduler(clock, loop=asyncio.get_running_loop()),
            memory=self.memory,
            backup_dir=paths.backups_dir(self.data_dir),
            profile=self.profile,
        )

    def _build_sync(self, changes: ChangeHub, clock: Clock) -> None:
        """The sync runner, on the background jobs' scheduler (after the heavy imports)."""
        from etos_desktop.services.sync_runner import SyncRunner

        assert self.db is not None
        assert self.secrets is not None
        assert self.jobs is not None
        self.sync = SyncRunner(
            db=self.db,
            settings=self.settings,
            secrets=self.secrets,
            changes=changes,
            scheduler=self.jobs.scheduler,
            clock=clock,
            memory=self.memory,
        )

    def _on_changes_changed(self, change: DataChange) -> None:
        if isinstance(change, ConversationChanged) and self.controller is not None:
            self.controller.conversation_updated(change.conversation_id)
        if change.touches(Layer.MEMORIES):
            # Saved by the chat, or edited in Settings: the welcome's count follows.
            self.window.refresh_memory_count()
        if isinstance(change, CheckinShown):
            self._on_checkin_shown(change)

    def _on_checkin_shown(self, change: CheckinShown) -> None:
        """The companion started a conversation: say so where the user will see it."""
        if self.tray is not None:
            self.tray.notify_checkin(change.conversation_id, change.companion, change.text)
            return
        # No tray on this desktop: the status bar, and the window asks for attention.
        self.window.statusBar().showMessage(
            QCoreApplication.translate(
                "EtosApp", "{name} checked in: see the conversation list"
            ).format(name=change.companion),
            60000,
        )
        QApplication.alert(self.window)

    def _open_checkin(self, conversation_id: int) -> None:
        """A check-in's notification was clicked: open its conversation."""
        if self.controller is not None:
            self.controller.open_conversation(conversation_id)

    # -- following the settings ---------------------------------------------------------------

    def _follow_settings(self) -> None:
        """Subscribe each consumer to the settings it uses: the one key → action table.

        For a key several rows follow, the rows run in this order (the language before what
        shows words in it). A key that is not a setting raises ``KeyError`` here, at start-up.
        """
        assert self.controller is not None
        get = self.settings.get_str
        table: tuple[tuple[Iterable[str], Callable[[], object]], ...] = (
            (["ui.language"], lambda: self.install_language(get("ui.language"))),
            (["ui.theme"], lambda: self.apply_theme(get("ui.theme"))),
            (["ui.font_size"], self.apply_font),
            (key_groups.PROVIDER_VIEW, self.refresh_providers),
            (key_groups.MESSAGE_ROOM, self.controller.refresh_message_room),
            (["chat.stream_render_interval_ms"], self._apply_render_interval),
            (["memory.embedder"], self.switch_embedder),
            ([EMBEDDINGS_ENDPOINT_KEY], self._on_endpoint_changed),
            (key_groups.RETRIEVAL_TUNING, self.retune_memory),
            (key_groups.MEMORY_LIMITS, self._apply_memory_limits),
            (key_groups.JOB_SCHEDULE, self._reschedule_jobs),
            (key_groups.CHECKIN_SCHEDULE, self._reschedule_checkins),
            ([MODEL_PRICES_KEY], self._apply_model_prices),
        )
        for keys, action in table:
            self._unsubscribe.append(self.settings.subscribe(lambda _key, a=action: a(), keys))

    def _apply_model_prices(self) -> None:
        self.window.chat.set_model_prices(self.settings.model_prices())

    def _apply_render_interval(self) -> None:
        self.window.chat.render_interval_ms = self.settings.get_int(
            "chat.stream_render_interval_ms"
        )

    def _apply_memory_limits(self) -> None:
        if self.memory is not None:
            self.memory.engine.max_content_chars = self.settings.get_int("memory.max_content_chars")
            self.memory.engine.max_active = self.settings.get_int("memory.max_active")

    def _on_endpoint_changed(self) -> None:
        # Only "automatic" matching uses the provider's embedding model.
        if self.settings.get_str("memory.embedder") == "auto":
            self.switch_embedder()

    def _reschedule_jobs(self) -> None:
        # A Save sets its keys one after another: the jobs are derived again once, after them.
        if self.jobs is not None and not self._reschedule_queued:
            self._reschedule_queued = True
            self._tasks.spawn(
                self._reschedule(self.jobs),
                QCoreApplication.translate(
                    "EtosApp", "Summaries were not rescheduled for the new settings."
                ),
            )

    def _reschedule_checkins(self) -> None:
        # Like _reschedule_jobs: once after a Save's keys.
        if self.jobs is not None and not self._checkins_queued:
            self._checkins_queued = True
            self._tasks.spawn(
                self._reschedule_checkins_now(self.jobs),
                QCoreApplication.translate(
                    "EtosApp", "Check-ins were not rescheduled for the new settings."
                ),
            )

    async def _reschedule_checkins_now(self, jobs: BackgroundJobs) -> None:
        self._checkins_queued = False
        await jobs.checkins_changed()

    async def _reschedule(self, jobs: BackgroundJobs) -> None:
        self._reschedule_queued = False
        await jobs.settings_changed()

    def retune_memory(self) -> None:
        """Apply the relevance setting to the embedder in use, which stays (no re-embedding)."""
        if self.memory is not None:
            embedder = self.memory.engine.embedder
            self.memory.set_embedder(embedder, self._tuning_for(embedder.key if embedder else None))

    def _tuning_for(self, key: str | None) -> Any:
        from etos_desktop.core.retrieval.tuning import tuning_for, with_strictness

        return with_strictness(tuning_for(key), self.settings.get_str("memory.strictness"))

    def switch_embedder(self) -> Any:
        """Stop any re-embedding under way and choose the embedder again (setting changed)."""
        self._reembed_cancel.set()
        if self._embedder_task is not None and not self._embedder_task.done():
            self._embedder_task.cancel()
        self._reembed_cancel = threading.Event()
        self._embedder_task = self._spawn_choose_embedder()
        return self._embedder_task

    def _spawn_choose_embedder(self) -> Any:
        return self._tasks.spawn(
            self.choose_embedder(),
            QCoreApplication.translate(
                "EtosApp",
                "Matching memories by meaning could not be started; memory search uses keywords.",
            ),
        )

    def _on_task_failed(self, what: str, error: BaseException) -> None:
        from etos_desktop.ui.error_text import failure_text

        text = failure_text(what, error)
        self.window.statusBar().showMessage(text, 30000)
        self.window.set_notice("⚠ " + what, text)

    async def choose_embedder(self) -> None:
        """Pick the embedder (endpoint → built-in USE → keywords) off the UI thread.

        Until it is ready, memory search runs on keywords; memories without a vector for the
        chosen embedder are embedded in the background (the engine resumes where it stopped).
        """
        import asyncio

        from etos_desktop.core.providers.embedders import (
            EndpointSettings,
            UseEmbedder,
            choose_embedder,
        )

        if self.memory is None or self.registry is None:
            return
        mode = self.settings.get_str("memory.embedder")
        if mode == "keywords":
            self.memory.set_embedder(None, self._tuning_for(None))
            return
        loop = asyncio.get_running_loop()
        endpoint = None
        default = self.registry.default()
        if mode == "auto" and default is not None and default.embedding_model:
            endpoint = EndpointSettings(
                await self.registry.live_provider(default),
                default.embedding_model,
                default.base_url,
            )
        use_factory = self._use_factory or UseEmbedder
        choice = await loop.run_in_executor(
            None,
            lambda: choose_embedder(endpoint, loop=loop, use_factory=use_factory, load_use=True),
        )
        for skipped in choice.skipped:
            log.info(
                "embedder %s skipped: %s %s",
                skipped.candidate,
                skipped.reason,
                skipped.error_code or "",
            )
        if choice.embedder is None:
            return
        self.memory.set_embedder(choice.embedder, self._tuning_for(choice.embedder.key))
        log.info("memory embedder: %s", choice.embedder.key)
        embedded = await self.memory.reembed(cancel=self._reembed_cancel)
        if embedded:
            log.info("embedded %d memories for %s", embedded, choice.embedder.key)

    def refresh_providers(self) -> None:
        """Show the providers in the chat header and the default one in the status bar."""
        if self.registry is None:
            return
        from etos_desktop.core.providers.config import ENVIRONMENT_PROVIDER_ID
        from etos_desktop.core.providers.presets import preset

        def name_of(config: ProviderConfig) -> str:
            # A saved provider's name is the user's; the Environment one's is the app's words.
            if config.id == ENVIRONMENT_PROVIDER_ID:
                return QCoreApplication.translate("EtosApp", "Environment")
            return config.name

        entries = []
        for config in self.registry.configs():
            models = [m for m in (config.chat_model, *preset(config.preset).suggested_models) if m]
            entries.append((config.id, name_of(config), list(dict.fromkeys(models))))
        self.window.chat.set_providers(entries)
        default = self.registry.default()
        if default is None:
            self.window.set_provider_text(QCoreApplication.translate("EtosApp", "No provider"))
        else:
            self.window.set_provider_text(f"{name_of(default)} · {default.chat_model or '—'}")
        from etos_desktop.core.context.prompts import DEFAULT_PERSONA_NAME, DEFAULT_PERSONA_PROMPT

        lang = self.ui_language
        chosen = self.settings.get_str("persona.name")
        name = chosen or DEFAULT_PERSONA_NAME[lang]
        prompt = self.settings.get_str("persona.prompt") or DEFAULT_PERSONA_PROMPT[lang]
        self.window.global_persona = (name, prompt)
        if self.controller is not None:
            self.controller.persona_choice = (chosen, lang)
        self.window.chat.set_persona(chosen, lang)
        self.refresh_companion()
        if self.controller is not None and self.controller.current is not None:
            self.window.chat.set_conversation_header(self.controller.current)

    def refresh_companion(self) -> None:
        """Show the companion's avatar beside its replies, and the memory state."""
        chat = self.window.chat
        path = self.settings.get_str("persona.avatar")
        if path != self._avatar_path or chat.companion_avatar is None:
            self._avatar_path = path
            self._tasks.spawn(
                self._load_avatar(path),
                QCoreApplication.translate("EtosApp", "The avatar image was not read."),
            )
        self.window.memory_enabled = bool(self.settings.get("memory.enabled"))
        self.window.refresh_memory_count()

    async def _load_avatar(self, path: str) -> None:
        import asyncio

        from etos_desktop.ui.avatar import load_avatar_image

        image = await asyncio.get_running_loop().run_in_executor(None, load_avatar_image, path)
        if path == self._avatar_path:
            chat = self.window.chat
            chat.set_companion_avatar(None if image.isNull() else image)

    # -- dialogs ------------------------------------------------------------------------------

    def open_settings(self, page: str = "", *, first_run: bool = False) -> Any:
        """Show the settings dialog (non-modal), at ``page`` if given."""
        if self.registry is None or self.secrets is None:
            return None
        from etos_desktop.ui.settings.dialog import SettingsDialog

        if self._settings_dialog is None:
            dialog = SettingsDialog(
                self.settings,
                self.secrets,
                self.registry,
                probe=self._probe,
                local_candidates=self._local_candidates or [],
                env=self.env,
                first_run=first_run,
                memory=self.memory,
                summaries=self.summaries,
                profile=self.profile,
                jobs=self.jobs,
                changes=self.changes_bridge,
                clock=self._clock,
                sync=self.sync,
                parent=self.window,
            )
            dialog.finished.connect(self._on_dialog_finished)
            self._settings_dialog = dialog
        if page:
            self._settings_dialog.show_page(page)
        self._settings_dialog.show()
        self._settings_dialog.raise_()
        self._settings_dialog.activateWindow()
        return self._settings_dialog

    def _on_window_settings_requested(self, page: str) -> None:
        self.open_settings(page)

    def _on_dialog_finished(self, _result: int) -> None:
        dialog, self._settings_dialog = self._settings_dialog, None
        if dialog is not None:
            dialog.deleteLater()

    def _on_window_context_requested(self, message_id: int) -> None:
        if self.controller is None:
            return
        from etos_desktop.core.usage.store import UsageRepository
        from etos_desktop.ui.context_dialog import show_context

        usage = UsageRepository(self.db) if self.db is not None else None
        show_context(
            self.window,
            self.controller,
            message_id,
            usage=usage,
            prices=self.settings.model_prices(),
        )

    def _show_fatal(self, error: EtosError) -> None:
        text = fatal_text(error, self.data_dir)
        print(f"ETOS Desktop cannot start: {text}", file=sys.stderr)
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Critical)
        box.setWindowTitle(QCoreApplication.translate("EtosApp", "ETOS Desktop cannot start"))
        box.setText(text)
        box.setDetailedText(redact(error.detail))
        box.open()

    # -- shutdown -----------------------------------------------------------------------------

    def _on_window_closing(self) -> None:
        if self.controller is not None:
            self.controller.stop()
        if self.closed is not None:
            self.closed.set()

    async def shutdown(self) -> None:
        """Stop replies, close connections and the database."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self.changes_bridge is not None:
            self.changes_bridge.detach()
        self.window.message_search.detach()
        if self.controller is not None:
            self.controller.stop()
            await self.controller.wait_idle()
        self._reembed_cancel.set()
        self._tasks.cancel_all()
        self._resident.cancel_all()
        await self._tasks.wait_idle()
        await self._resident.wait_idle()
        if self.sync is not None:
            # A running pass ends on its thread first: it writes the database.
            await self.sync.shutdown()
        if self.jobs is not None:
            # A running job is cancelled at its next await; its writes are single shielded
            # transactions, finished before the database closes.
            await self.jobs.shutdown()
        if self.controller is not None:
            await self.controller.wait_idle()
        if self.summaries is not None:
            import asyncio

            summaries, self.summaries = self.summaries, None
            await asyncio.get_running_loop().run_in_executor(None, summaries.close)
        if self.memory is not None:
            import asyncio

            memory, self.memory = self.memory, None
            await asyncio.get_running_loop().run_in_executor(None, memory.close)
        if self.registry is not None:
            await self.registry.aclose()
        if self.db is not None:
            import asyncio

            db, self.db = self.db, None
            await asyncio.get_running_loop().run_in_executor(None, db.close)
        self.garbage_collector.stop()
        self.release_look()

    def release_look(self) -> None:
        """Undo what this run put on the desktop and the application.

        The translators and the default locale, the tray icon, the data folder's claim, and
        following the OS colour scheme.
        """
        for translator in self._translators:
            self.qt_app.removeTranslator(translator)
        self._translators.clear()
        QLocale.setDefault(self._initial_locale)
        if self.tray is not None:
            # Gone with the window: its menu has no parent, and would hear the next language.
            self.tray.close()
        if self.instance is not None:
            self.instance.release()
        if self._follows_color_scheme:
            self.qt_app.styleHints().colorSchemeChanged.disconnect(self._on_color_scheme_changed)
            self._follows_color_scheme = False


def fatal_text(error: EtosError, data_dir: Path) -> str:
    """Which fatal start-up error ``error`` is, in words, and that nothing was changed."""
    reason = error.params.get("reason")
    database = paths.database_path(data_dir)
    if reason == "corrupt":
        what = QCoreApplication.translate(
            "EtosApp", "The database file {path} is damaged and cannot be read."
        ).format(path=database)
    elif reason == "foreign":
        what = QCoreApplication.translate(
            "EtosApp", "The file {path} is another program's database, not ETOS Desktop's."
        ).format(path=database)
    elif reason == "newer_schema":
        what = QCoreApplication.translate(
            "EtosApp",
            "The database {path} was written by a newer version of ETOS Desktop; "
            "start that version to open it.",
        ).format(path=database)
    elif reason in ("permission", "read_only"):
        what = QCoreApplication.translate(
            "EtosApp", "ETOS Desktop has no permission to write in its data folder {folder}."
        ).format(folder=data_dir)
    elif reason == "disk_full":
        what = QCoreApplication.translate("EtosApp", "The disk of the data folder is full.")
    else:
        what = QCoreApplication.translate("EtosApp", "The data could not be opened.")
    unchanged = QCoreApplication.translate("EtosApp", "Nothing was changed.")
    return f"{what} {unchanged}"


def from_command_line() -> bool:
    """Whether this run was started from a terminal (it prints there instead of a window)."""
    return sys.stdin is not None and sys.stdin.isatty()


def _settings_problem_text(settings: SettingsStore) -> str:
    """What was wrong with the settings file, in words (its technical details are in the log)."""
    if settings.corrupt_backup is not None:
        return QCoreApplication.translate(
            "EtosApp",
            "The settings file could not be read; it was kept as {name} and the defaults are used.",
        ).format(name=settings.corrupt_backup.name)
    if settings.invalid_keys:
        return QCoreApplication.translate(
            "EtosApp", "Settings with invalid values were reset to their defaults: {keys}"
        ).format(keys=", ".join(settings.invalid_keys))
    return QCoreApplication.translate(
        "EtosApp",
        "Parts of the settings file could not be used and were left out; the details are in the log.",
    )


def load_translations(locale: QLocale) -> list[QTranslator]:
    """The app's translations for ``locale``, and Qt's own (standard buttons, file dialogs).

    A locale the app has no translation for gets the closest one it has (Simplified Chinese for
    any Chinese, else English), and Qt's words in that language with it, so a window never
    mixes two languages. English has a ``.qm`` too: Qt's plural forms ("1 memory",
    "%n memories") need one even for the language the source is written in.
    """
    from PySide6.QtCore import QLibraryInfo

    folder = str(resource_path("translations"))
    app_own = QTranslator()
    if not app_own.load(locale, "etos", "_", folder):
        chinese = locale.language() == QLocale.Language.Chinese
        locale = QLocale("zh_CN") if chinese else QLocale(QLocale.Language.English)
        app_own.load(locale, "etos", "_", folder)
    found = []
    qt_own = QTranslator()
    if qt_own.load(
        locale, "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    ):
        found.append(qt_own)
    if not app_own.isEmpty():
        found.append(app_own)
    return found


def install_excepthook(window_getter: Any) -> None:
    """Route uncaught exceptions (including those from ``@asyncSlot``s) to the log and a dialog."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        text = redact("".join(traceback.format_exception(exc_type, exc, tb)))
        log.error("uncaught exception:\n%s", text)
        window = window_getter()
        if window is not None:
            box = QMessageBox(window)
            box.setIcon(QMessageBox.Icon.Warning)
            box.setWindowTitle(QCoreApplication.translate("EtosApp", "Unexpected error"))
            box.setText(
                QCoreApplication.translate(
                    "EtosApp", "Something went wrong. Your messages are saved."
                )
            )
            box.setDetailedText(text)
            box.open()

    sys.excepthook = hook


async def run_app(app: EtosApp, *, self_check: bool) -> int:
    """Run until the window closes (or, with ``self_check``, until start-up finished)."""
    import asyncio

    app.closed = asyncio.Event()
    app.window.show()
    # Let the first frame paint before the heavy imports start.
    await asyncio.sleep(0)
    if self_check:
        from etos_desktop.self_check import run_self_check

        return await run_self_check(app)
    try:
        await app.start()
    except EtosError:
        await app.closed.wait()
        return 1
    await app.closed.wait()
    await app.shutdown()
    return 0


def show_first_frame(argv: Sequence[str]) -> tuple[QApplication, EtosApp, Any]:
    """Create the application and paint the window, before asyncio and qasync are imported.

    Returns:
        The QApplication, the EtosApp and the parsed arguments.
    """
    args = parse_args(argv)
    if args.data_dir:
        os.environ[paths.DATA_DIR_ENV] = str(Path(args.data_dir).expanduser())
    args.scratch_dir = None
    if args.self_check:
        from etos_desktop.self_check import prepare_environment

        args.scratch_dir = prepare_environment(os.environ)
    qt_app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(qt_app, QApplication)
    qt_app.setApplicationName("ETOS Desktop")
    qt_app.setOrganizationName("ETOS Desktop")
    qt_app.setApplicationVersion(__version__)
    qt_app.setQuitOnLastWindowClosed(False)
    guard = claim_data_folder(self_check=args.self_check)
    etos = EtosApp(qt_app, os.environ)
    if guard is not None:
        etos.keep_instance(guard)
    etos.window.show()
    qt_app.processEvents()
    return qt_app, etos, args


def claim_data_folder(*, self_check: bool) -> Any:
    """Be the one app running on the data folder, or show the running one and exit 0.

    A running app that does not answer (frozen) is said to, with Wait and Quit it.

    Returns:
        The claim (an ``InstanceGuard``); ``None`` for a self-check, which runs beside an open
        app on purpose (package smoke tests).

    Raises:
        SystemExit: 0 when the running app showed its window; 1 when the folder cannot be
            written, or the running app does not answer and the user closed (a second app
            must not open the same database).
    """
    if self_check:
        return None
    from etos_desktop.core.errors import StorageError
    from etos_desktop.ui.single_instance import InstanceGuard, ask_running_to_show

    data_dir = paths.data_dir(os.environ, create=False)
    try:
        guard = InstanceGuard(data_dir)
        if guard.claim():
            return guard
    except StorageError as exc:
        # A folder that cannot be written (read-only, no permission) is not another app.
        log.error("start-up failed: %s %s", exc.code, exc.detail)
        _refuse_start(fatal_text(exc, data_dir), exc.detail)
        raise SystemExit(1) from None
    while True:
        if ask_running_to_show(data_dir):
            raise SystemExit(0)
        choice = _ask_about_unresponsive(guard)
        if choice == "quit":
            from etos_desktop.ui.single_instance import end_process

            pid = guard.holder_pid()
            if pid is not None and end_process(pid) and guard.claim():
                return guard
        elif choice != "wait":
            raise SystemExit(1)


def _refuse_start(text: str, detail: str) -> None:
    """Say that the app cannot start, before its window exists.

    It is printed, and shown in a window unless this run came from a terminal.
    """
    print(f"ETOS Desktop cannot start: {text}", file=sys.stderr)
    if from_command_line():
        return
    box = QMessageBox(QMessageBox.Icon.Critical, "", text, QMessageBox.StandardButton.Ok)
    box.setWindowTitle(QCoreApplication.translate("EtosApp", "ETOS Desktop cannot start"))
    box.setDetailedText(redact(detail))
    # No event loop runs yet (qasync starts after the first frame): exec() is the only wait.
    box.exec()


def _ask_about_unresponsive(guard: Any) -> str:
    """Ask what to do about a running app that does not answer: "wait", "quit" or "close"."""
    text = QCoreApplication.translate(
        "EtosApp", "ETOS Desktop is already running but does not respond."
    )
    print(f"{text} ({guard.data_dir})", file=sys.stderr)
    if from_command_line():
        return "close"
    box = QMessageBox(QMessageBox.Icon.Warning, "ETOS Desktop", text)
    box.setInformativeText(
        QCoreApplication.translate(
            "EtosApp", "It may be busy. Wait for it, or quit it and start again."
        )
    )
    wait = box.addButton(
        QCoreApplication.translate("EtosApp", "Wait"), QMessageBox.ButtonRole.AcceptRole
    )
    quit_it = None
    if os.name == "posix":  # ending a process by its id: only SIGTERM/SIGKILL are relied on
        quit_it = box.addButton(
            QCoreApplication.translate("EtosApp", "Quit it"), QMessageBox.ButtonRole.DestructiveRole
        )
    box.addButton(QMessageBox.StandardButton.Close)
    box.setDefaultButton(wait)
    # Before the event loop exists (as in ``_refuse_start``).
    box.exec()
    if box.clickedButton() is wait:
        return "wait"
    if quit_it is None or box.clickedButton() is not quit_it:
        return "close"
    confirm = QMessageBox(
        QMessageBox.Icon.Question,
        "ETOS Desktop",
        QCoreApplication.translate("EtosApp", "Quit the ETOS Desktop that does not respond?"),
    )
    confirm.setInformativeText(
        QCoreApplication.translate("EtosApp", "What it has not saved yet is lost.")
    )
    yes = confirm.addButton(
        QCoreApplication.translate("EtosApp", "Quit ETOS Desktop"),
        QMessageBox.ButtonRole.DestructiveRole,
    )
    confirm.addButton(QMessageBox.StandardButton.Cancel)
    confirm.exec()
    return "quit" if confirm.clickedButton() is yes else "wait"


def install_asyncgen_hooks(loop: Any) -> None:
    """Let ``loop`` finalise abandoned async generators, as asyncio's own loops do.

    qasync's loop does not install these hooks, so an async generator dropped without
    ``aclose()`` (the HTTP client's byte stream after a Stop) was closed synchronously by the
    garbage collector, outside any loop, and raised there. With the hooks, its ``aclose()`` runs
    as a task on the loop.
    """
    sys.set_asyncgen_hooks(
        firstiter=loop._asyncgen_firstiter_hook, finalizer=loop._asyncgen_finalizer_hook
    )


def run_event_loop(qt_app: QApplication, etos: EtosApp, *, self_check: bool) -> int:
    """Start the qasync loop and the services; return when the window closes."""
    import asyncio

    import qasync

    loop = qasync.QEventLoop(qt_app)
    asyncio.set_event_loop(loop)
    install_asyncgen_hooks(loop)
    with loop:
        return loop.run_until_complete(run_app(etos, self_check=self_check))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``etos-desktop`` and ``python -m etos_desktop``."""
    qt_app, etos, args = show_first_frame(sys.argv[1:] if argv is None else argv)
    log_handler = setup_logging(etos.data_dir)
    install_excepthook(lambda: etos.window)
    if not args.self_check:
        return run_event_loop(qt_app, etos, self_check=False)
    from etos_desktop.self_check import arm_deadline

    arm_deadline()  # never hang a smoke test
    try:
        return run_event_loop(qt_app, etos, self_check=True)
    finally:
        if args.scratch_dir is not None:
            import shutil

            logging.getLogger().removeHandler(log_handler)
            log_handler.close()
            shutil.rmtree(args.scratch_dir, ignore_errors=True)
