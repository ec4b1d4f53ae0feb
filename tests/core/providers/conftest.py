"""Provider tests run with keyring's fail backend (tests/conftest.py), so the secret store says
once that keys go to its file: that line is expected here, every other WARNING still fails."""

from __future__ import annotations

import pytest

from tests.core.conftest import LogGuard


@pytest.fixture(autouse=True)
def keyring_fallback_is_expected(log_guard: LogGuard) -> None:
    log_guard.expect(r"^WARNING etos_desktop\.core\.providers\.secrets: no usable keyring \(")
