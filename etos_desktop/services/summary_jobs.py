"""The summary jobs: one per conversation, derived from the rule (DESIGN §6).

After every reply, and at start-up for the conversations changed in the last 7 days, the pure
rule (``core/summaries/rule.py``) decides: due now → a job now; due at the end of the gap or of
an error's backoff → a job then (one per conversation, ``summary:<id>``, replacing a pending
one); not due → no job. Jobs are derived from the database, so a restart derives them again,
and a job asks the rule once more when it runs, so nothing is done twice. The summary itself is
written by ``core/summaries/writing.py``; the run is recorded by ``services/runs.py``; each run
is published on the change hub (``SummariesChanged``, ``JobsChanged``). Qt-free.
"""

from __future__ import annotations

import asyncio
import functools
from datetime import datetime
from typing import Final

from etos_desktop.core.changes import ChangeHub, JobsChanged, SummariesChanged
from etos_desktop.core.clock import Clock
from etos_desktop.core.jobs import JobName
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.database import Database
from etos_desktop.core.summaries import rule, store
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.summaries.records import SummaryActivity
from etos_desktop.core.summaries.writing import SummaryRun, SummaryWriter
from etos_desktop.services.runs import RunRecorder
from etos_desktop.services.scheduler import JobScheduler

#: Summary jobs are ``summary:<conversation id>``.
SUMMARY_PREFIX: Final = "summary:"


def summary_job_id(conversation_id: int) -> str:
    """The scheduler id of a conversation's summary job."""
    return f"{SUMMARY_PREFIX}{conversation_id}"


class SummaryJobs:
    """Schedules the conversations' summary jobs and runs them, one at a time.

    Args:
        db: The open database (the start-up derivation reads it on the DB thread).
        summaries: Summary storage.
        writer: Writes a summary.
        settings: ``memory.enabled`` and ``summaries.*``.
        clock: The clock run times are computed on.
        scheduler: The scheduler on the running loop.
        recorder: Records each run.
        changes: The app's change hub (each run's end).
        lane: Held while a job runs (jobs run one at a time).
    """

    def __init__(
        self,
        *,
        db: Database,
        summaries: SummaryAccess,
        writer: SummaryWriter,
        settings: SettingsStore,
        clock: Clock,
        scheduler: JobScheduler,
        recorder: RunRecorder,
        changes: ChangeHub,
        lane: asyncio.Lock,
    ) -> None:
        self._db = db
        self._summaries = summaries
        self._writer = writer
        self._settings = settings
        self._clock = clock
        self._scheduler = scheduler
        self._recorder = recorder
        self._changes = changes
        self._lane = lane
        self._closed = False

    def close(self) -> None:
        """Schedule nothing more (the app quits)."""
        self._closed = True

    def rule_settings(self) -> rule.RuleSettings:
        """The rule's settings as they are now."""
        return rule.RuleSettings.from_settings(self._settings)

    def decide(self, activity: SummaryActivity) -> rule.Decision:
        """The rule's decision for one conversation now."""
        return rule.summary_due(activity, self.rule_settings(), self._clock.now())

    async def check_conversation(self, conversation_id: int) -> rule.Decision | None:
        """Apply the rule to one conversation and schedule, move or drop its summary job.

        Returns:
            The decision (``None``: the conversation does not exist).
        """
        activity = await self._summaries.activity(conversation_id)
        if activity is None:
            self._scheduler.cancel(summary_job_id(conversation_id))
            return None
        decision = self.decide(activity)
        self._apply(conversation_id, decision)
        await self._record_next()
        return decision

    def _apply(self, conversation_id: int, decision: rule.Decision) -> None:
        job_id = summary_job_id(conversation_id)
        if self._closed:
            return
        job = functools.partial(self.summarise, conversation_id)
        if isinstance(decision, rule.Due):
            self._scheduler.schedule(job_id, self._clock.now(), job)
        elif isinstance(decision, rule.DueAt):
            self._scheduler.schedule(job_id, decision.when, job)
        else:
            self._scheduler.cancel(job_id)

    async def derive(self) -> int:
        """Derive the summary jobs of the conversations changed in the last 7 days.

        The query and the rule run off the event loop; only the scheduling runs on it.

        Returns:
            How many jobs were scheduled.
        """
        now = self._clock.now()
        settings = self.rule_settings()
        since = now - rule.STARTUP_LOOKBACK
        decisions = await self._db.run(
            lambda session: rule.decisions(store.recent_activity(session, since), settings, now)
        )
        scheduled = 0
        for conversation_id, decision in decisions:
            self._apply(conversation_id, decision)
            scheduled += isinstance(decision, rule.Due | rule.DueAt)
        await self._record_next()
        return scheduled

    async def derive_again(self) -> int:
        """The settings may have changed: drop every pending job and derive them again."""
        for job_id in self._scheduler.pending(SUMMARY_PREFIX):
            self._scheduler.cancel(job_id)
        return await self.derive()

    def next_run(self) -> datetime | None:
        """When the first pending summary job runs (``None``: none is pending)."""
        pending = self._scheduler.pending(SUMMARY_PREFIX)
        return min(pending.values()) if pending else None

    async def _record_next(self) -> None:
        await self._recorder.rows.set_next(JobName.SUMMARIES, self.next_run())

    async def summarise_now(self, conversation_id: int) -> SummaryRun:
        """The user's "Summarise now": summarise whatever the gap and the backoff say.

        Raises:
            EtosError: The attempt failed (it is recorded, with its backoff, like any other).
        """
        self._scheduler.cancel(summary_job_id(conversation_id))
        result = await self.summarise(conversation_id, forced=True)
        if result.error is not None:
            raise result.error
        return result

    async def summarise(self, conversation_id: int, *, forced: bool = False) -> SummaryRun:
        """Summarise one conversation if the rule (or the user, ``forced``) says so.

        Runs one at a time; the conversation's job is derived again afterwards. A cancellation
        (quit) stops it at its next ``await``; the summary and what it covered are written in
        one transaction.
        """
        async with self._lane:
            try:
                work = await self._writer.pending(
                    conversation_id,
                    forced=forced,
                    due=lambda activity: isinstance(self.decide(activity), rule.Due),
                )
                if isinstance(work, SummaryRun):
                    return work
                return await self._recorder.run(
                    JobName.SUMMARIES, lambda: self._writer.write(work, forced=forced)
                )
            finally:
                if not self._closed:
                    await self.check_conversation(conversation_id)
                    self._changes.publish(SummariesChanged(conversation_id))
                    self._changes.publish(JobsChanged())
