"""When the background jobs run: titles, summaries, the user profile, consolidation, the backup.

DESIGN §6, §7, §5.1, §9. Each job's workflow — build the prompt, ask the background model,
check the reply, write the result — lives in the core package of what it writes and returns
what it did: ``core/chat/titles.py``, ``core/summaries/writing.py``, ``core/profile/writing.py``,
``core/memory/consolidation.py``, ``core/storage/backups.py``. This service decides *when* they
run, on the scheduler (``services/scheduler.py``); ``services/runs.py`` records each run; what
the jobs changed is published on the app's change hub (``core/changes.py``), where they also hear
what they react to. Jobs are derived from the database, so a restart derives them again.

* Titles: after a new conversation's first reply (``ReplyCompleted`` from the chat service).
* Summaries: one job per conversation, from the rule, after each reply and at start-up
  (``services/summary_jobs.py``).
* Profile: daily at ``profile.refresh_hour`` local time (APScheduler's cron trigger), at
  start-up when the last refresh is a day old, after a failure's backoff, and 10 minutes after a
  memory was superseded because of what the user said (``core/profile/rule.py``).
* Consolidation: checked every 6 hours; runs when 8 memories are new and the last run is a day
  old (``core/memory/consolidation.py``). Backup: daily.
* Check-ins: at the time ``core/checkins/rule.py`` gives, derived at start-up, after each reply
  and when their settings change (``services/checkin_jobs.py``).

All but titles run one at a time. A failure is logged and recorded, never raised into the chat.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Final

from etos_desktop.core.changes import (
    ChangeHub,
    ConversationChanged,
    JobsChanged,
    MemoriesChanged,
    ProfileChanged,
    ReplyCompleted,
)
from etos_desktop.core.chat.titles import TitleWriter
from etos_desktop.core.checkins.access import CheckinAccess
from etos_desktop.core.checkins.records import Persona
from etos_desktop.core.checkins.rule import Decision as CheckinDecision
from etos_desktop.core.checkins.writing import CheckinRun, CheckinWriter
from etos_desktop.core.clock import Clock
from etos_desktop.core.jobs import USAGE_DAYS, JobName, JobStatus, job_statuses
from etos_desktop.core.memory import consolidation
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.records import MemorySource
from etos_desktop.core.profile import rule as profile_rule
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.profile.writing import ProfileRun, ProfileWriter, Progress
from etos_desktop.core.providers.base import Usage
from etos_desktop.core.providers.registry import ProviderSource
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage import backups
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.summaries import rule
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.summaries.records import SummaryActivity
from etos_desktop.core.summaries.writing import SummaryRun, SummaryWriter
from etos_desktop.core.usage.metering import MeteredProviders
from etos_desktop.core.usage.store import UsageRepository
from etos_desktop.services.checkin_jobs import CheckinJobs
from etos_desktop.services.runs import RunRecorder
from etos_desktop.services.scheduler import JobScheduler, local_zone, next_daily_time
from etos_desktop.services.summary_jobs import SummaryJobs, summary_job_id

#: Maintenance jobs wait this long after start-up, so they never compete with it.
STARTUP_DELAY: Final = timedelta(minutes=2)
#: How often consolidation looks whether enough new memories arrived.
CONSOLIDATION_CHECK: Final = timedelta(hours=6)
#: Time between two daily backups.
BACKUP_INTERVAL: Final = timedelta(hours=24)
#: Sources of saves whose supersessions do not move the profile refresh forward.
_UNSTATED_SOURCES: Final = frozenset({MemorySource.CONSOLIDATION, MemorySource.IMPORTED})


class BackgroundJobs:
    """Schedules the background jobs and runs them through the run recorder.

    Args:
        db: The open database.
        changes: The app's change hub: the jobs hear finished replies (``ReplyCompleted``) and
            superseded memories (``MemoriesChanged``) there, and publish what they changed.
        summaries: Summary storage.
        providers: Resolves a conversation's provider and model (the background model).
        settings: ``summaries.*``, ``profile.*``, ``memory.enabled``, ``chat.auto_title``,
            ``backup.keep_count`` and ``ui.language``.
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
        changes: ChangeHub,
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
        self._settings = settings
        self._clock = clock
        self.scheduler = scheduler
        self._backup_dir = backup_dir
        self._profile = profile
        self._zone = zone
        self._changes = changes
        self._recorder = RunRecorder(db, clock, changes)
        self.runs = self._recorder.rows
        repo = ChatRepository(db)
        ui_language = functools.partial(settings.get_str, "ui.language")
        self._usage = UsageRepository(db)
        metered = functools.partial(self._metered, providers)
        self._titles = TitleWriter(repo, metered(JobName.TITLES), ui_language)
        self._consolidator = (
            consolidation.MemoryConsolidator(memory, metered(JobName.CONSOLIDATION), ui_language)
            if memory
            else None
        )
        self._refresher = (
            ProfileWriter(profile, metered(JobName.PROFILE), clock, ui_language)
            if profile
            else None
        )
        self._lane = asyncio.Lock()
        self._summary_jobs = SummaryJobs(
            db=db,
            summaries=summaries,
            writer=SummaryWriter(summaries, repo, metered(JobName.SUMMARIES), clock, ui_language),
            settings=settings,
            clock=clock,
            scheduler=scheduler,
            recorder=self._recorder,
            changes=changes,
            lane=self._lane,
        )
        checkins = CheckinAccess(db)
        self._checkin_jobs = CheckinJobs(
            checkins=checkins,
            writer=CheckinWriter(
                checkins,
                metered(JobName.CHECKINS),
                settings,
                clock,
                ui_language,
                self._local_zone,
                profile=profile,
                summaries=summaries,
            ),
            settings=settings,
            providers=providers,
            clock=clock,
            zone=self._local_zone,
            scheduler=scheduler,
            recorder=self._recorder,
            changes=changes,
            lane=self._lane,
            startup_delay=STARTUP_DELAY,
        )
        self._titling: set[int] = set()
        self._started = False
        self._closed = False
        self._ready = asyncio.Event()
        self._unsubscribe = [changes.subscribe(self._on_reply_completed, ReplyCompleted)]
        if memory is not None:
            self._unsubscribe.append(changes.subscribe(self._on_memories_changed, MemoriesChanged))

    def _metered(self, providers: ProviderSource, job: JobName) -> MeteredProviders:
        """``providers`` for ``job``'s workflow: each request's usage is kept under its name."""

        async def keep(name: str, model: str, usage: Usage) -> None:
            await self._usage.record(name, model, usage, self._clock.now())

        return MeteredProviders(providers, job.value, keep)

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
            await self._summary_jobs.derive()
            if self._backup_dir is not None:
                await self._schedule_after_last(JobName.BACKUP, BACKUP_INTERVAL, self.backup)
            if self._consolidator is not None:
                await self._schedule_after_last(
                    JobName.CONSOLIDATION, consolidation.MIN_INTERVAL, self.consolidate
                )
            await self._schedule_profile(startup=True)
            await self._checkin_jobs.derive(startup=True)
        finally:
            self._ready.set()
        self._changes.publish(JobsChanged())

    async def wait_started(self) -> None:
        """Wait until :meth:`start` has derived the jobs (or failed to)."""
        await self._ready.wait()

    async def shutdown(self) -> None:
        """Stop the timer; cancel running jobs and checks at a safe point and wait for them."""
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._summary_jobs.close()
        self._checkin_jobs.close()
        await self.scheduler.shutdown()

    async def wait_idle(self) -> None:
        """Wait until no job and no check is running, nor a job due at once waiting (tests)."""
        await self.scheduler.wait_idle()

    def busy(self) -> bool:
        """Whether a job or a check is running."""
        return self.scheduler.is_busy()

    def _on_reply_completed(self, event: ReplyCompleted) -> None:
        if self._closed:
            return
        conversation_id = event.conversation.id
        if conversation_id is None:
            return
        if self._settings.get_bool("chat.auto_title") and conversation_id not in self._titling:
            self.scheduler.spawn(self._title(conversation_id))
        self.scheduler.spawn(self._summary_jobs.check_conversation(conversation_id))
        if self._started:
            # The user wrote: the silence starts again, and none comes mid-conversation.
            self.scheduler.spawn(self._checkin_jobs.derive())

    def _on_memories_changed(self, change: MemoriesChanged) -> None:
        # Consolidation and imports end memories too, but the user said nothing new; the
        # schedule is derived from the histories either way, this only saves the reading.
        if not change.superseded or change.source in _UNSTATED_SOURCES:
            return
        if self._closed or not self._started:
            return
        self.scheduler.spawn(self._schedule_profile())

    async def _title(self, conversation_id: int) -> None:
        if not await self._titles.needs_title(conversation_id):
            return
        self._titling.add(conversation_id)
        try:
            run = await self._recorder.run(
                JobName.TITLES, lambda: self._titles.write_title(conversation_id)
            )
        finally:
            self._titling.discard(conversation_id)
        if run.title:
            self._changes.publish(ConversationChanged(conversation_id))

    # -- summaries (services/summary_jobs.py) ---------------------------------------------------

    def rule_settings(self) -> rule.RuleSettings:
        """The summary rule's settings as they are now."""
        return self._summary_jobs.rule_settings()

    def decide(self, activity: SummaryActivity) -> rule.Decision:
        """The summary rule's decision for one conversation now."""
        return self._summary_jobs.decide(activity)

    async def check_conversation(self, conversation_id: int) -> rule.Decision | None:
        """Schedule, move or drop a conversation's summary job (``None``: no such conversation)."""
        return await self._summary_jobs.check_conversation(conversation_id)

    async def summarise_now(self, conversation_id: int) -> SummaryRun:
        """The user's "Summarise now" (raises the failure: ``SummaryJobs.summarise_now``)."""
        return await self._summary_jobs.summarise_now(conversation_id)

    def next_summary_at(self, conversation_id: int) -> datetime | None:
        """When the conversation's summary job runs (``None``: none is scheduled)."""
        return self.scheduler.run_time(summary_job_id(conversation_id))

    def summary_running(self, conversation_id: int) -> bool:
        """Whether the conversation is being summarised now."""
        return self.scheduler.is_running(summary_job_id(conversation_id))

    async def settings_changed(self) -> None:
        """The summary or profile settings may have changed: derive their jobs again."""
        await self._summary_jobs.derive_again()
        await self._schedule_profile()
        self._changes.publish(JobsChanged())

    # -- check-ins (services/checkin_jobs.py) ----------------------------------------------------

    def _local_zone(self) -> tzinfo:
        return self._zone or local_zone()

    async def checkins_changed(self) -> CheckinDecision:
        """A check-in setting (or the providers, or memory) changed: derive the job again."""
        if not self._started or self._closed:
            return await self._checkin_jobs.decide()
        return await self._checkin_jobs.derive()

    async def checkin_decision(self) -> CheckinDecision:
        """When the next check-in comes (its job's time once scheduled), or why none will."""
        decision = await self._checkin_jobs.decide()
        scheduled = self.next_checkin_at()
        if decision.at is not None and scheduled is not None:
            return dataclasses.replace(decision, at=scheduled)
        return decision

    async def checkin_personas(self) -> list[Persona]:
        """Who may check in, the most recently used first."""
        return await self._checkin_jobs.personas()

    def next_checkin_at(self) -> datetime | None:
        """When the check-in job runs (``None``: none is scheduled)."""
        return self.scheduler.run_time(JobName.CHECKINS.value)

    async def check_in(self) -> CheckinRun | None:
        """Run the check-in job as its timer would (``CheckinJobs.run``)."""
        return await self._checkin_jobs.run()

    # -- the user profile -----------------------------------------------------------------------

    def profile_enabled(self) -> bool:
        """Whether the daily refresh runs (memory and the profile are on)."""
        return all(self._settings.get_bool(key) for key in ("memory.enabled", "profile.enabled"))

    def next_daily_refresh(self, after: datetime | None = None) -> datetime:
        """The next daily refresh time: ``profile.refresh_hour`` local, after ``after``."""
        zone = self._zone or local_zone()
        hour = self._settings.get_int("profile.refresh_hour")
        return next_daily_time(hour, after or self._clock.now(), zone)

    def next_profile_refresh_at(self) -> datetime | None:
        """When the profile job runs next (``None``: it is not scheduled)."""
        return self.scheduler.run_time(JobName.PROFILE.value)

    async def _schedule_profile(self, *, startup: bool = False) -> None:
        if self._profile is None or self._closed:
            return
        if not self.profile_enabled():
            self.scheduler.cancel(JobName.PROFILE.value)
            await self.runs.set_next(JobName.PROFILE, None)
            self._changes.publish(JobsChanged())
            return
        profile = await self._profile.current()
        changed_at = await self._profile.last_stated_change()
        now = self._clock.now()
        when = profile_rule.next_run(
            profile,
            now,
            self.next_daily_refresh(now),
            startup=startup,
            startup_delay=STARTUP_DELAY,
            changed_at=changed_at,
        )
        await self._schedule(JobName.PROFILE, when, self.refresh_profile)

    async def refresh_profile_now(self, progress: Progress | None = None) -> ProfileRun:
        """The user's "Refresh now": refresh whatever the time, if there is new material.

        Raises:
            EtosError: The refresh failed or the reply was rejected (recorded with its backoff
                like a scheduled one; the profile is as it was).
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
        refresher = self._refresher
        if refresher is None:
            return ProfileRun("disabled")
        tell = progress or (lambda _stage: None)
        async with self._lane:
            try:
                if not forced and not self.profile_enabled():
                    return ProfileRun("disabled")
                start = await refresher.pending(tell)
                if isinstance(start, ProfileRun):
                    return start
                return await self._recorder.run(
                    JobName.PROFILE, lambda: refresher.refresh(start, forced=forced, progress=tell)
                )
            finally:
                if not self._closed:
                    await self._schedule_profile()
                    self._changes.publish(ProfileChanged())
                    self._changes.publish(JobsChanged())

    # -- maintenance: the backup, consolidation, and scheduling them ----------------------------

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
            run = await self._recorder.run(
                JobName.BACKUP,
                lambda: backups.take_daily_backup(self._db, backup_dir, now, keep=keep),
            )
        await self._schedule(JobName.BACKUP, self._clock.now() + BACKUP_INTERVAL, self.backup)
        return run.result

    async def consolidate(self) -> consolidation.ConsolidationRun | None:
        """Consolidate memories if enough are new; schedule the next check.

        Returns:
            What the run did, or ``None`` when it did not run.
        """
        consolidator = self._consolidator
        if consolidator is None:
            return None
        result: consolidation.ConsolidationRun | None = None
        async with self._lane:
            last = await self.runs.last_success(JobName.CONSOLIDATION)
            active = await consolidator.pending(last, self._clock.now())
            if self._settings.get_bool("memory.enabled") and active is not None:
                result = await self._recorder.run(
                    JobName.CONSOLIDATION, lambda: consolidator.consolidate(active)
                )
        await self._schedule(
            JobName.CONSOLIDATION, self._clock.now() + CONSOLIDATION_CHECK, self.consolidate
        )
        return result

    async def _schedule_after_last(
        self, name: JobName, interval: timedelta, function: Callable[[], Awaitable[object]]
    ) -> None:
        """Schedule ``name`` ``interval`` after its last success; never during start-up."""
        last = await self.runs.last_success(name)
        when = self._clock.now() + STARTUP_DELAY
        await self._schedule(name, max(last + interval, when) if last else when, function)

    async def _schedule(
        self, name: JobName, when: datetime, function: Callable[[], Awaitable[object]]
    ) -> None:
        if self._closed:
            return
        self.scheduler.schedule(name.value, when, function)
        await self.runs.set_next(name, when)
        self._changes.publish(JobsChanged())

    async def statuses(self) -> list[JobStatus]:
        """Every job's status for Settings, in ``JobName`` order."""
        next_runs = {name: self.scheduler.run_time(name.value) for name in JobName}
        next_runs[JobName.SUMMARIES] = self._summary_jobs.next_run()
        next_runs[JobName.TITLES] = None
        unavailable = [] if self._profile is not None else [JobName.PROFILE]
        if not self._settings.get_bool("sync.enabled"):
            # Sync's passes are run by services/sync_runner.py, on this scheduler.
            unavailable.append(JobName.SYNC)
        rows = await self.runs.all()
        statuses = job_statuses(rows, next_runs, self._recorder.running, unavailable)
        used = await self._usage.by_job(self._clock.now() - timedelta(days=USAGE_DAYS))
        return [dataclasses.replace(s, usage=used.get(s.name.value)) for s in statuses]
