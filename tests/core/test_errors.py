"""Secrets are removed from error texts and log records (DESIGN §9, issue 9 defect 8)."""

from __future__ import annotations

import logging

import pytest

from etos_desktop.core.errors import SecretRedactionFilter, ServerError, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Incorrect API key provided: sk-proj-abc123def", "Incorrect API key provided: [redacted]"),
        ("Authorization: Bearer abc.def-123", "Authorization: [redacted]"),
        (
            "{'authorization': 'Basic dXNlcjpwYXNz', 'x': 1}",
            "{'authorization': '[redacted]', 'x': 1}",
        ),
        ("sent Bearer plain-token-1 upstream", "sent Bearer [redacted] upstream"),
        ('{"api_key": "plain-9", "model": "m"}', '{"api_key": "[redacted]", "model": "m"}'),
        ("x-api-key: zz88", "x-api-key: [redacted]"),
        (
            "GET https://h/v1/models?key=AIzaSy01&alt=json",
            "GET https://h/v1/models?key=[redacted]&alt=json",
        ),
        ("wss://h/ws?access_token=t0k3n", "wss://h/ws?access_token=[redacted]"),
        # Ordinary words stay.
        (
            "the api key provided was wrong; a keyboard key=value",
            "the api key provided was wrong; a keyboard key=value",
        ),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_errors_are_redacted() -> None:
    error = ServerError("upstream said: Authorization: Bearer sk-live-123456789", status=500)
    assert "sk-live" not in str(error)
    assert "sk-live" not in error.detail


def test_the_log_filter_redacts_message_arguments_and_traceback() -> None:
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Collect()
    handler.addFilter(SecretRedactionFilter())
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("tests.redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("headers %s", {"Authorization": "Bearer sk-abcdef123456"})
        try:
            raise RuntimeError("server body: invalid key sk-abcdef123456")
        except RuntimeError:
            log.exception("failed with %s", "api_key=plain-secret-1")
        log.info("stack", stack_info=True, extra={"note": "x"})
    finally:
        log.removeHandler(handler)
        log.propagate = True
    text = "\n".join(records)
    assert "sk-abcdef" not in text
    assert "plain-secret-1" not in text
    assert "RuntimeError: server body: invalid key [redacted]" in text
    assert "headers {'Authorization': '[redacted]'}" in text
    assert "failed with api_key=[redacted]" in text
