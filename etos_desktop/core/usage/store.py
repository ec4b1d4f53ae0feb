"""Usage read and written on the DB thread: background requests, and a conversation's replies."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from etos_desktop.core.providers.base import Usage
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import MessageRow, RequestUsageRow


@dataclass(frozen=True)
class JobUsage:
    """What one background job's requests used over a period.

    Attributes:
        requests: How many requests reported usage.
        usage: Their tokens together.
    """

    requests: int
    usage: Usage


class UsageRepository:
    """The ``request_usage`` table, and the usage stored on a conversation's replies.

    Args:
        db: The open database (schema v13 or later).
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, job: str, model: str, usage: Usage, now: datetime) -> None:
        """Keep what one background request of ``job`` used."""

        def write(session: Session) -> None:
            session.add(
                RequestUsageRow(
                    created_at=now,
                    job=job,
                    model=model,
                    prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens,
                    cached_tokens=usage.cached_tokens,
                )
            )
            session.commit()

        await self._db.run(write)

    async def by_job(self, since: datetime) -> dict[str, JobUsage]:
        """Each job's requests since ``since``, by job name (jobs without any are missing)."""

        def read(session: Session) -> dict[str, JobUsage]:
            # A few requests a day: summed here, in one pass over the period's rows.
            rows = session.exec(
                select(
                    RequestUsageRow.job,
                    RequestUsageRow.prompt_tokens,
                    RequestUsageRow.completion_tokens,
                    RequestUsageRow.cached_tokens,
                ).where(col(RequestUsageRow.created_at) >= since)
            ).all()
            totals: dict[str, JobUsage] = {}
            for job, prompt, completion, cached in rows:
                usage = Usage(prompt, completion, prompt + completion, cached)
                before = totals.get(job)
                totals[job] = (
                    JobUsage(1, usage)
                    if before is None
                    else JobUsage(before.requests + 1, before.usage + usage)
                )
            return totals

        return await self._db.run(read)

    async def conversation_replies(self, conversation_id: int) -> list[tuple[str | None, Usage]]:
        """The model and usage of every reply of a conversation that has usage.

        Every reply counts, earlier versions and replies hidden by an edit too: each was paid
        for.
        """

        def read(session: Session) -> list[tuple[str | None, Usage]]:
            rows = session.exec(
                select(
                    MessageRow.model,
                    MessageRow.prompt_tokens,
                    MessageRow.completion_tokens,
                    MessageRow.cached_tokens,
                )
                .where(MessageRow.conversation_id == conversation_id)
                .where(MessageRow.role == "assistant")
                .where(col(MessageRow.prompt_tokens).is_not(None))
                .order_by(col(MessageRow.id))
            ).all()
            return [
                (
                    model,
                    Usage(
                        prompt_tokens=prompt or 0,
                        completion_tokens=completion or 0,
                        total_tokens=(prompt or 0) + (completion or 0),
                        cached_tokens=cached or 0,
                    ),
                )
                for model, prompt, completion, cached in rows
            ]

        return await self._db.run(read)
