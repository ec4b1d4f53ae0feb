"""The background jobs: titles, summaries, the user profile, consolidation and the daily backup.

DESIGN §6, §7, §5.1, §9. One service owns every job; ``app.py`` builds it once the database is open
and starts it after the window shows. Qt-free: the UI learns what happened through plain
callbacks (``add_listener``) that it bridges to Qt signals.

* **Titles** — after a new conversation's first reply (``ReplyCompleted`` from the chat
  service), a short detached request names it.
* **Summaries** — after every reply, and at start-up for the conversations changed in the last
  7 days, the pure rule (``core/summaries/rule.py``) decides: due now → a job now; due at the end
  of the gap or of an error's backoff → a job then (one per conversation, replacing a pending
  one); not due → no job. Jobs are derived from the database, so a restart derives them again,
  and a job checks the rule once more when it runs, so nothing is done twice. Summary jobs run
  one at a time.
* **Profile** — daily at ``profile.refresh_hour`` local time (APScheduler's cron trigger), and
  at start-up when the last refresh is more than a day old (the app is often closed at 04:00).
  A run reads the summaries and memories changed since the last refresh; with none it sends
  nothing. The background model rewrites the profile from the current one (the user's edits
  included) and the new material; the reply must pass ``core/profile/writing.py``'s rules, the
  pinned lines are put back by the program, and a rejected or failed refresh keeps the profile
  as it was and is retried after a backoff. A memory superseded because of what the user said
  (the model's ``save_memory`` with a change cue or ``supersedes=``, ``/remember``, an add in
  Settings) moves the job to 10 minutes after it (``profile.rule.CHANGE_REFRESH_DELAY``), so
  the profile does not contradict the change until the next day; the time is derived from the
  memories' histories, so a restart derives it again. Consolidation and imports do not.
* **Consolidation** — when at least 8 memories are new and the last run is 24 hours ago, the
  background model proposes merges and supersessions; they are applied by archiving.
* **Backup** — once a day, a copy with SQLite's backup API; the newest ``backup.keep_count``
  are kept (and the newest few pre-migration copies).

A failed job is logged and recorded in its ``JobRunRow`` (shown in Settings), never raised into
the chat. Every time is read on the injected clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Coroutine
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TypeVar

from etos_desktop.core.chat.events import ReplyCompleted
from etos_desktop.core.chat.service import ChatService
from etos_desktop.core.chat.titles import TitleWriter
from etos_desktop.core.clock import Clock
from etos_desktop.core.jobs import JobName, JobRunRepository, JobStatus, error_text, shielded
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.consolidation import (
    MIN_INTERVAL,
    ConsolidationRun,
    MemoryConsolidator,
)
from etos_desktop.core.memory.records import MemorySource
from etos_desktop.core.profile import rule as profile_rule
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.profile.writing import ProfileRun, ProfileWriter, Progress
from etos_desktop.core.providers.registry import ProviderSource
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage import backups
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.summaries import rule, store
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.summaries.records import SummaryActivity
from etos_desktop.core.summaries.writing import SummaryRun, SummaryWriter
from etos_desktop.services.scheduler import JobScheduler, local_zone, next_daily_time

log = logging.getLogger(__name__)

#: Maintenance jobs wait this long after start-up, so they never compete with it.
STARTUP_DELAY: Final = timedelta(minutes=2)
#: How often consolidation looks whether enough new memories arrived.
CONSOLIDATION_CHECK: Final = timedelta(hours=6)
#: Time between two daily backups.
BACKUP_INTERVAL: Final = timedelta(hours=24)
#: Job ids of the maintenance jobs; summary jobs are ``summary:<conversation id>``.
SUMMARY_PREFIX: Final = "summary:"
#: Sources of saves whose supersessions do not move the profile refresh forward.
_UNSTATED_SOURCES: Final = frozenset({MemorySource.CONSOLIDATION, MemorySource.IMPORTED})

#: What the listeners hear: ("conversation", id), ("summaries", None), ("profile", None) or
#: ("jobs", None).
Change = tuple[Literal["conversation", "summaries", "profile", "jobs"], int | None]
Listener = Callable[[Change], None]


class _Run(Protocol):
    """A job's result: it says whether the run failed."""

    @property
    def error(self) -> BaseException | None:
        """The failure (``None``: the run ended well)."""
        ...


RunT = TypeVar("RunT", bound=_Run)


def summary_job_id(conversation_id: int) -> str:
    """The scheduler id of a conversation's summary job."""
    return f"{SUMMARY_PREFIX}{conversation_id}"


class BackgroundJobs:
    """Owns the background jobs and their bookkeeping.

    Args:
        db: The open database.
        chat: The chat service (announces finished replies).
        summaries: Summary storage.
        providers: Resolves a conversation's provider and model (the background model).
        settings: ``summaries.*``, ``memory.enabled``, ``chat.auto_title``, ``backup.keep_count``.
        clock: The clock every run time is computed on.
        scheduler: The scheduler on the running loop.
        memory: Long-term memory, for consolidation (``None``: no consolidation).
        backup_dir: Where daily backups go (``None``: no backups).
        profile: The user profile (``None``: no profile job).
        zone: The local time zone the daily profile refresh follows (default: the computer's).
    """

    def __init__(
        self,
        *,
        db: Database,
        chat: ChatService,
        summaries: SummaryAccess,
        providers: ProviderSource,
        settings: SettingsStore,
        clock: Clock,
        scheduler: JobScheduler,
        memory: MemoryAccess | None = None,
        backup_dir: Path | None = None,
        profile: ProfileAccess | None = None,
        zone: tzinfo | None = None,
    ) -> None:
        self._db = db
        self._repo = ChatRepository(db)
        self._titles = TitleWriter(self._repo, providers, self._ui_setting)
        self._writer = SummaryWriter(summaries, self._repo, providers, clock, self._ui_setting)
        self._consolidator = (
            MemoryConsolidator(memory, providers, self._ui_setting) if memory else None
        )
        self._profile_writer = (
            ProfileWriter(profile, providers, clock, self._ui_setting) if profile else None
        )
        self.summaries = summaries
        self._providers = providers
        self._settings = settings
        self._clock = clock
        self.scheduler = scheduler
        self._memory = memory
        self._backup_dir = backup_dir
        self.profile = profile
        self._zone = zone
        self.runs = JobRunRepository(db)
        self._lane = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._titling: set[int] = set()
        self._running: set[JobName] = set()
        self._listeners: list[Listener] = []
        self._started = False
        self._closed = False
        self._ready = asyncio.Event()
        chat.add_reply_listener(self._on_reply_completed)
        if memory is not None:
            memory.add_supersede_listener(self._on_memory_superseded)

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Derive every job from the database and start the timer (after the window shows)."""
        if self._started or self._closed:
            return
        self._started = True
        try:
            if self._zone is None:
                # tzlocal reads /etc/localtime and imports tzdata: 250 ms measured on the UI
                # thread at start-up (tests/bench/stall.py's idle phase). It caches the zone.
                self._zone = await asyncio.to_thread(local_zone)
            self.scheduler.start()
            await self.derive_summary_jobs()
            await self._schedule_backup()
            await self._schedule_consolidation()
            await self._schedule_profile(startup=True)
        finally:
            self._ready.set()
        self._notify(("jobs", None))

    async def wait_started(self) -> None:
        """Wait until :meth:`start` has derived the jobs (or failed to)."""
        await self._ready.wait()

    async def shutdown(self) -> None:
        """Stop the timer; cancel running jobs at a safe point and wait for them."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await self.scheduler.shutdown()
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def wait_idle(self) -> None:
        """Wait until no job and no check is running, nor a job due at once waiting (tests)."""
        while self._tasks or self.scheduler.is_busy():
            if self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
            await self.scheduler.wait_idle()

    def busy(self) -> bool:
        """Whether a job or a check is running."""
        return bool(self._tasks) or self.scheduler.is_busy()

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener`` on the event loop when a title, a summary or a job status changes."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener``."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _notify(self, change: Change) -> None:
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:
                log.exception("a job listener failed")

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._on_task_done)
        return task

    def _on_task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work failed", exc_info=task.exception())

    # -- after a reply ------------------------------------------------------------------------

    def _on_reply_completed(self, event: ReplyCompleted) -> None:
        if self._closed:
            return
        conversation_id = event.conversation.id
        if conversation_id is None:
            return
        if self._settings.get_bool("chat.auto_title") and conversation_id not in self._titling:
            self._spawn(self._title(conversation_id))
        self._spawn(self.check_conversation(conversation_id))

    def _on_memory_superseded(self, _result: Any, source: str) -> None:
        # Consolidation and imports end memories too, but the user said nothing new; the
        # schedule is derived from the histories either way, this only saves the reading.
        if self._closed or not self._started or source in _UNSTATED_SOURCES:
            return
        self._spawn(self._schedule_profile())

    async def _title(self, conversation_id: int) -> None:
        if not await self._titles.needs_title(conversation_id):
            return
        self._titling.add(conversation_id)
        try:
            run = await self._run(JobName.TITLES, lambda: self._titles.write_title(conversation_id))
        finally:
            self._titling.discard(conversation_id)
        if run.title:
            self._notify(("conversation", conversation_id))

    # -- summaries: the rule --------------------------------------------------------------------

    def rule_settings(self) -> rule.RuleSettings:
        """The rule's settings as they are now."""
        return rule.RuleSettings(
            enabled=self._settings.get_bool("memory.enabled")
            and self._settings.get_bool("summaries.enabled"),
            min_user_turns=self._settings.get_int("summaries.min_user_turns"),
            min_gap=timedelta(minutes=self._settings.get_int("summaries.min_gap_minutes")),
        )

    def decide(self, activity: SummaryActivity) -> rule.Decision:
        """The rule's decision for one conversation now."""
        return rule.summary_due(activity, self.rule_settings(), self._clock.now())

    async def check_conversation(self, conversation_id: int) -> rule.Decision | None:
        """Apply the rule to one conversation and schedule, move or drop its summary job.

        Returns:
            The decision (``None``: the conversation does not exist).
        """
        activity = await self.summaries.activity(conversation_id)
        if activity is None:
            self.scheduler.cancel(summary_job_id(conversation_id))
            return None
        decision = self.decide(activity)
        self._apply(conversation_id, decision)
        await self._record_next_summary()
        return decision

    def _apply(self, conversation_id: int, decision: rule.Decision) -> None:
        job_id = summary_job_id(conversation_id)
        if self._closed:
            return
        if isinstance(decision, rule.Due):
            self.scheduler.schedule(job_id, self._clock.now(), self._summary_job(conversation_id))
        elif isinstance(decision, rule.DueAt):
            self.scheduler.schedule(job_id, decision.when, self._summary_job(conversation_id))
        else:
            self.scheduler.cancel(job_id)

    async def derive_summary_jobs(self) -> int:
        """Derive the summary jobs of the conversations changed in the last 7 days.

        The query and the rule run off the event loop; only the scheduling runs on it.

        Returns:
            How many jobs were scheduled.
        """
        now = self._clock.now()
        settings = self.rule_settings()
        since = now - rule.STARTUP_LOOKBACK
        decisions = await self._db.run(
            lambda session: _decide_recent(session, since, settings, now)
        )
        scheduled = 0
        for conversation_id, decision in decisions:
            self._apply(conversation_id, decision)
            scheduled += isinstance(decision, rule.Due | rule.DueAt)
        await self._record_next_summary()
        return scheduled

    async def settings_changed(self) -> None:
        """The summary settings may have changed: derive the jobs again."""
        for job_id in self.scheduler.pending(SUMMARY_PREFIX):
            self.scheduler.cancel(job_id)
        await self.derive_summary_jobs()
        await self._schedule_profile()
        self._notify(("jobs", None))

    def next_summary_at(self, conversation_id: int) -> datetime | None:
        """When the conversation's summary job runs (``None``: none is scheduled)."""
        return self.scheduler.run_time(summary_job_id(conversation_id))

    def summary_running(self, conversation_id: int) -> bool:
        """Whether the conversation is being summarised now."""
        return self.scheduler.is_running(summary_job_id(conversation_id))

    async def _record_next_summary(self) -> None:
        pending = self.scheduler.pending(SUMMARY_PREFIX)
        await self.runs.set_next(JobName.SUMMARIES, min(pending.values()) if pending else None)

    def _summary_job(self, conversation_id: int) -> Callable[[], Coroutine[Any, Any, None]]:
        async def job() -> None:
            await self.summarise(conversation_id)

        return job

    # -- summaries: the detached generation -------------------------------------------------------

    async def summarise_now(self, conversation_id: int) -> SummaryRun:
        """The user's "Summarise now": summarise whatever the gap and the backoff say.

        Raises:
            EtosError: The attempt failed (it is recorded, with its backoff, like any other).
        """
        self.scheduler.cancel(summary_job_id(conversation_id))
        result = await self.summarise(conversation_id, forced=True)
        if result.error is not None:
            raise result.error
        return result

    async def summarise(self, conversation_id: int, *, forced: bool = False) -> SummaryRun:
        """Summarise one conversation if the rule (or the user, ``forced``) says so.

        Runs one at a time. A cancellation (quit) stops it at its next ``await``; the summary
        and the bookkeeping of what it covered are written in one shielded transaction.
        """
        async with self._lane:
            try:
                return await self._summarise(conversation_id, forced)
            finally:
                if not self._closed:
                    await self.check_conversation(conversation_id)
                    self._notify(("summaries", None))
                    self._notify(("jobs", None))

    async def _summarise(self, conversation_id: int, forced: bool) -> SummaryRun:
        work = await self._writer.pending(
            conversation_id, forced=forced, due=lambda a: isinstance(self.decide(a), rule.Due)
        )
        if isinstance(work, SummaryRun):
            return work
        return await self._run(JobName.SUMMARIES, lambda: self._writer.write(work, forced=forced))

    def _ui_setting(self) -> str:
        return self._settings.get_str("ui.language")

    # -- the user profile -----------------------------------------------------------------------

    def profile_enabled(self) -> bool:
        """Whether the daily refresh runs (memory and the profile are on)."""
        return self._settings.get_bool("memory.enabled") and self._settings.get_bool(
            "profile.enabled"
        )

    def next_daily_refresh(self, after: datetime | None = None) -> datetime:
        """The next daily refresh time: ``profile.refresh_hour`` local, after ``after``."""
        zone = self._zone or local_zone()
        hour = self._settings.get_int("profile.refresh_hour")
        return next_daily_time(hour, after or self._clock.now(), zone)

    def next_profile_refresh_at(self) -> datetime | None:
        """When the profile job runs next (``None``: it is not scheduled)."""
        return self.scheduler.run_time(JobName.PROFILE.value)

    def profile_running(self) -> bool:
        """Whether a profile refresh is running now."""
        return JobName.PROFILE in self._running

    async def _schedule_profile(self, *, startup: bool = False) -> None:
        if self.profile is None or self._closed:
            return
        if not self.profile_enabled():
            self.scheduler.cancel(JobName.PROFILE.value)
            await self.runs.set_next(JobName.PROFILE, None)
            self._notify(("jobs", None))
            return
        profile = await self.profile.current()
        changed_at = await self.profile.last_stated_change()
        now = self._clock.now()
        when = profile_rule.next_run(
            profile,
            now,
            self.next_daily_refresh(now),
            startup=startup,
            startup_delay=STARTUP_DELAY,
            changed_at=changed_at,
        )
        await self._schedule(JobName.PROFILE, when, self._scheduled_profile_refresh)

    async def _scheduled_profile_refresh(self) -> None:
        await self.refresh_profile()

    async def refresh_profile_now(self, progress: Progress | None = None) -> ProfileRun:
        """The user's "Refresh now": refresh whatever the time, if there is new material.

        Cancelling the awaiting task stops it at its next ``await`` (the request is dropped,
        nothing is written).

        Raises:
            EtosError: The refresh failed or the reply was rejected (recorded, with its
                backoff, like a scheduled one; the profile is as it was).
        """
        result = await self.refresh_profile(forced=True, progress=progress)
        if result.error is not None:
            raise result.error
        return result

    async def refresh_profile(
        self, *, forced: bool = False, progress: Progress | None = None
    ) -> ProfileRun:
        """Refresh the profile from the summaries and memories changed since the last refresh.

        Runs one at a time (with every other job); schedules the next run afterwards.

        Args:
            forced: The user asked ("Refresh now"): run even when the profile is turned off.
            progress: Told which stage the refresh is at.
        """
        writer = self._profile_writer
        if writer is None:
            return ProfileRun("disabled")
        tell = progress or (lambda _stage: None)
        async with self._lane:
            try:
                if not forced and not self.profile_enabled():
                    return ProfileRun("disabled")
                return await self._refresh_profile(writer, forced, tell)
            finally:
                if not self._closed:
                    await self._schedule_profile()
                    self._notify(("profile", None))
                    self._notify(("jobs", None))

    async def _refresh_profile(
        self, writer: ProfileWriter, forced: bool, tell: Progress
    ) -> ProfileRun:
        start = await writer.pending(tell)
        if isinstance(start, ProfileRun):
            return start
        return await self._run(
            JobName.PROFILE, lambda: writer.refresh(start, forced=forced, progress=tell)
        )

    # -- backup ---------------------------------------------------------------------------------

    async def _schedule_backup(self) -> None:
        if self._backup_dir is None:
            return
        row = await self.runs.get(JobName.BACKUP)
        now = self._clock.now()
        earliest = now + STARTUP_DELAY
        last = row.last_success_at if row is not None else None
        when = max(last + BACKUP_INTERVAL, earliest) if last is not None else earliest
        await self._schedule(JobName.BACKUP, when, self.backup)

    async def backup(self) -> backups.BackupResult | None:
        """Take the daily backup now and rotate the folder; schedule the next one.

        Returns:
            What was written, or ``None`` if it failed (recorded in the job's row).
        """
        if self._backup_dir is None:
            return None
        backup_dir = self._backup_dir
        keep = self._settings.get_int("backup.keep_count")
        async with self._lane:
            now = self._clock.now()
            run = await self._run(
                JobName.BACKUP,
                lambda: backups.take_daily_backup(self._db, backup_dir, now, keep=keep),
            )
        await self._schedule(JobName.BACKUP, self._clock.now() + BACKUP_INTERVAL, self.backup)
        return run.result

    # -- consolidation --------------------------------------------------------------------------

    async def _schedule_consolidation(self) -> None:
        if self._memory is None:
            return
        row = await self.runs.get(JobName.CONSOLIDATION)
        now = self._clock.now()
        earliest = now + STARTUP_DELAY
        last = row.last_success_at if row is not None else None
        when = max(last + MIN_INTERVAL, earliest) if last is not None else earliest
        await self._schedule(JobName.CONSOLIDATION, when, self.consolidate)

    async def consolidate(self) -> ConsolidationRun | None:
        """Consolidate memories if enough are new; schedule the next check.

        Returns:
            What the run did, or ``None`` when it did not run.
        """
        consolidator = self._consolidator
        if consolidator is None:
            return None
        applied: ConsolidationRun | None = None
        async with self._lane:
            row = await self.runs.get(JobName.CONSOLIDATION)
            last = row.last_success_at if row is not None else None
            active = await consolidator.pending(last, self._clock.now())
            if self._settings.get_bool("memory.enabled") and active is not None:
                applied = await self._run(
                    JobName.CONSOLIDATION, lambda: consolidator.consolidate(active)
                )
        await self._schedule(
            JobName.CONSOLIDATION, self._clock.now() + CONSOLIDATION_CHECK, self.consolidate
        )
        return applied

    # -- shared -----------------------------------------------------------------------------------

    async def _run(self, name: JobName, work: Callable[[], Awaitable[RunT]]) -> RunT:
        """Run one job's work with its bookkeeping: the one place runs are recorded.

        The start is recorded, then the success, or the failure the result reports (its
        ``error``); an exception (a bug) is recorded as a failure and raised on. A cancellation
        (a quit) records neither: the run stays started, as it was cut short.
        """
        self._running.add(name)
        try:
            await self.runs.started(name, self._clock.now())
            self._notify(("jobs", None))
            try:
                result = await work()
            except Exception as exc:
                await shielded(self.runs.failed(name, self._clock.now(), error_text(exc)))
                raise
            if result.error is None:
                await shielded(self.runs.succeeded(name, self._clock.now()))
            else:
                await shielded(self.runs.failed(name, self._clock.now(), error_text(result.error)))
            return result
        finally:
            self._running.discard(name)
            self._notify(("jobs", None))

    async def _schedule(
        self,
        name: JobName,
        when: datetime,
        function: Callable[[], Coroutine[Any, Any, Any]],
    ) -> None:
        if self._closed:
            return

        async def job() -> None:
            await function()

        self.scheduler.schedule(name.value, when, job)
        await self.runs.set_next(name, when)
        self._notify(("jobs", None))

    async def statuses(self) -> list[JobStatus]:
        """Every job's status for Settings, in ``JobName`` order."""
        rows = await self.runs.all()
        statuses = []
        for name in JobName:
            status = JobStatus.from_row(name, rows.get(name.value), running=name in self._running)
            if name == JobName.PROFILE:
                if self.profile is None:
                    status = JobStatus(name, available=False)
                else:
                    status = _with_next(status, self.scheduler.run_time(name.value))
            elif name == JobName.SUMMARIES:
                pending = self.scheduler.pending(SUMMARY_PREFIX)
                status = _with_next(status, min(pending.values()) if pending else None)
            elif name == JobName.TITLES:
                status = _with_next(status, None)
            else:
                status = _with_next(status, self.scheduler.run_time(name.value))
            statuses.append(status)
        return statuses


def _with_next(status: JobStatus, when: datetime | None) -> JobStatus:
    return dataclasses.replace(status, next_run_at=when)


def _decide_recent(
    session: Any, since: datetime, settings: rule.RuleSettings, now: datetime
) -> list[tuple[int, rule.Decision]]:
    """The rule's decision for every conversation changed since ``since`` (on the DB thread)."""
    return [
        (activity.conversation_id, rule.summary_due(activity, settings, now))
        for activity in store.recent_activity(session, since)
    ]
