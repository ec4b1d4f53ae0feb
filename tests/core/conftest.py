"""Core tests fail on a WARNING (or worse) log line they did not ask for, as UI tests do.

A test that expects one says so with ``@pytest.mark.logs(r"query embedding failed")`` (regexes
over ``"LEVEL logger: message"``) or ``log_guard.expect(...)``, or it reads the lines itself
through ``caplog``, which takes them over.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest


@dataclass
class LogGuard:
    """The WARNING+ lines a core test logged, and the ones it said it expects."""

    records: list[str] = field(default_factory=list)
    expected: list[re.Pattern[str]] = field(default_factory=list)
    taken_over: bool = False

    def expect(self, pattern: str) -> None:
        """Allow WARNING+ lines matching ``pattern`` (a regex over the formatted message)."""
        self.expected.append(re.compile(pattern, re.S))

    def unexpected(self) -> list[str]:
        if self.taken_over:
            return []
        return [r for r in self.records if not any(p.search(r) for p in self.expected)]


class _Records(logging.Handler):
    def __init__(self, guard: LogGuard) -> None:
        super().__init__(logging.WARNING)
        self.guard = guard

    def emit(self, record: logging.LogRecord) -> None:
        self.guard.records.append(f"{record.levelname} {record.name}: {record.getMessage()}")


@pytest.fixture(autouse=True)
def log_guard(request: pytest.FixtureRequest) -> Iterator[LogGuard]:
    """Fail the test on a WARNING, ERROR or CRITICAL log line it did not expect."""
    guard = LogGuard(taken_over="caplog" in request.fixturenames)
    for marker in request.node.iter_markers("logs"):
        for pattern in marker.args:
            guard.expect(pattern)
    handler = _Records(guard)
    root = logging.getLogger()
    root.addHandler(handler)
    yield guard
    root.removeHandler(handler)
    problems = guard.unexpected()
    assert not problems, "the core test logged:\n" + "\n".join(problems)
