"""The check-in job: when the companion starts a conversation (issue 23).

One job, ``checkins``, at the time the pure rule gives (``core/checkins/rule.py``), derived at
start-up (never sooner than ``STARTUP_DELAY`` after it), after every reply and when a setting it
follows changes. When it fires it asks the rule again — a message, a setting or the clock may
have moved meanwhile — and only then has ``core/checkins/writing.py`` write the check-in. The run
is recorded by ``services/runs.py``; a shown check-in is published on the change hub
(``ConversationChanged`` and ``CheckinShown``, which the app turns into a notification). A
failure is counted in the check-in log, so the rule moves the next one to the next due time:
no loop. Qt-free.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import timedelta, tzinfo

from etos_desktop.core.changes import ChangeHub, CheckinShown, ConversationChanged, JobsChanged
from etos_desktop.core.checkins import rule
from etos_desktop.core.checkins.access import CheckinAccess
from etos_desktop.core.checkins.records import CheckinSettings, Persona
from etos_desktop.core.checkins.writing import CheckinRun, CheckinWriter
from etos_desktop.core.clock import Clock
from etos_desktop.core.jobs import JobName
from etos_desktop.core.providers.registry import ProviderSource
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.services.runs import RunRecorder
from etos_desktop.services.scheduler import JobScheduler

log = logging.getLogger(__name__)

#: The scheduler id of the check-in job.
CHECKIN_JOB_ID = JobName.CHECKINS.value


class CheckinJobs:
    """Schedules the check-in job and runs it in the jobs' lane.

    Args:
        checkins: The check-in log.
        writer: Writes a check-in.
        settings: ``checkins.*`` and ``memory.enabled``.
        providers: Whether a provider is set up.
        clock: The clock run times are computed on.
        zone: The user's local time zone now.
        scheduler: The scheduler on the running loop.
        recorder: Records each run.
        changes: The app's change hub.
        lane: Held while a job runs (jobs run one at a time).
        startup_delay: How long after start-up an overdue check-in waits.
    """

    def __init__(
        self,
        *,
        checkins: CheckinAccess,
        writer: CheckinWriter,
        settings: SettingsStore,
        providers: ProviderSource,
        clock: Clock,
        zone: Callable[[], tzinfo],
        scheduler: JobScheduler,
        recorder: RunRecorder,
        changes: ChangeHub,
        lane: asyncio.Lock,
        startup_delay: timedelta,
    ) -> None:
        self.checkins = checkins
        self._writer = writer
        self._settings = settings
        self._providers = providers
        self._clock = clock
        self._zone = zone
        self._scheduler = scheduler
        self._recorder = recorder
        self._changes = changes
        self._lane = lane
        self._startup_delay = startup_delay
        self._closed = False
        self._said = ""

    def close(self) -> None:
        """Schedule nothing more (the app quits)."""
        self._closed = True

    async def personas(self) -> list[Persona]:
        """Who may check in, the most recently used first."""
        return await self.checkins.personas()

    async def decide(self) -> rule.Decision:
        """The rule's decision now."""
        settings = CheckinSettings.from_settings(self._settings)
        if not settings.enabled:
            return rule.Decision(None, "off")
        personas = await self.checkins.personas()
        return rule.decide(
            settings,
            await self.checkins.state(),
            self._clock.now(),
            self._zone(),
            memory_enabled=self._settings.get_bool("memory.enabled"),
            provider_configured=self._providers.is_configured(),
            persona_available=any(p.key not in settings.personas_off for p in personas),
        )

    async def derive(self, *, startup: bool = False) -> rule.Decision:
        """Schedule, move or drop the check-in job from the rule."""
        decision = await self.decide()
        if self._closed:
            return decision
        if decision.at is None:
            self._scheduler.cancel(CHECKIN_JOB_ID)
            if decision.reason not in ("off", self._said):
                # Said once, not on every reply: why an enabled check-in will not come.
                log.info("check-ins wait: %s", decision.reason)
            self._said = decision.reason
            await self._recorder.rows.set_next(JobName.CHECKINS, None)
        else:
            self._said = ""
            when = decision.at
            if startup:
                when = max(when, self._clock.now() + self._startup_delay)
            self._scheduler.schedule(CHECKIN_JOB_ID, when, self.run)
            await self._recorder.rows.set_next(JobName.CHECKINS, when)
        self._changes.publish(JobsChanged())
        return decision

    def next_run(self) -> rule.Decision | None:
        """The pending job's time, as a decision (``None``: none is scheduled)."""
        when = self._scheduler.run_time(CHECKIN_JOB_ID)
        return None if when is None else rule.Decision(when, "waiting")

    async def run(self) -> CheckinRun | None:
        """The job: write a check-in if the rule still says one is due; schedule the next.

        Returns:
            What the check-in did, or ``None`` when none was due after all.
        """
        result: CheckinRun | None = None
        async with self._lane:
            if not self._closed and (await self.decide()).due(self._clock.now()):
                settings = CheckinSettings.from_settings(self._settings)
                result = await self._recorder.run(
                    JobName.CHECKINS,
                    lambda: self._writer.write(settings.mode, settings.personas_off),
                )
        if result is not None and result.conversation_id is not None:
            self._changes.publish(ConversationChanged(result.conversation_id))
            self._changes.publish(
                CheckinShown(result.conversation_id, result.companion, result.text)
            )
        if not self._closed:
            await self.derive()
        return result
