"""The error tree of ETOS Desktop.

Errors meant for the user carry a stable ``code`` and ``params``; ``ui/`` turns them into
translated words. ``core/`` never produces UI text, and no error text ever contains an API key.

::

    EtosError
    ├── UserFacingError                  something the user can act on
    │   ├── ProviderError                the model server said no or could not be reached
    │   │   ├── AuthError                401/403: wrong or missing key
    │   │   ├── ModelNotFound            404: unknown model (or wrong base URL)
    │   │   ├── RateLimited              429 after the retries ran out
    │   │   ├── ServerError              5xx after the retries ran out
    │   │   ├── ProviderTimeout          connect / first token / between chunks
    │   │   ├── ProviderUnavailable      connection refused, DNS, network down
    │   │   ├── ContextTooLong           the server refused the request as too long
    │   │   ├── BadRequest               other 4xx
    │   │   └── MalformedResponse        the server sent something the client could not read
    │   ├── MessageTooLong               refused before sending: the message alone is too long
    │   ├── ImagesNotAccepted            refused before sending: the model takes no images
    │   ├── NotConfigured                no provider / no model chosen yet
    │   └── InvalidInput                 a value the user typed is not acceptable
    │       └── AttachmentRefused        a file that cannot be attached (too large, binary…)
    └── EnvironmentFailure               the machine, not the program: disk full, read-only
        └── StorageError
"""

from __future__ import annotations

import logging
import re
import traceback
from typing import Any

_SECRET_RE = re.compile(
    r"sk-[A-Za-z0-9_\-]{6,}"
    # "Authorization: Bearer x", "'authorization': 'Basic x'", "api_key=x", "x-api-key: x"
    r"|(?P<name>authorization|api[_-]?key|apikey)(?P<sep>['\"]?\s*[:=]\s*['\"]?)"
    r"(?:(?:bearer|basic|token)\s+)?[^\s'\",}&]+"
    r"|(?P<scheme>Bearer\s+)\S+"
    # URL query parameters that carry credentials (?key=…, &access_token=…)
    r"|(?P<query>[?&](?:key|token|access_token|api[_-]?key)=)[^\s&#'\"]+",
    re.IGNORECASE,
)


def _redacted(match: re.Match[str]) -> str:
    # Keep the name of what was removed, so a log still says an Authorization header was there.
    if match.group("name"):
        return f"{match.group('name')}{match.group('sep')}[redacted]"
    return f"{match.group('scheme') or match.group('query') or ''}[redacted]"


def redact(text: str) -> str:
    """Remove anything that looks like an API key or bearer token from ``text``.

    Covers ``sk-…`` keys, ``Authorization`` headers, bearer tokens, ``api_key``/``api-key``/
    ``x-api-key`` values and ``key=``/``token=``/``access_token=`` URL parameters. A key that
    looks like none of these is removed where it is known (the provider scrubs its own key).

    Args:
        text: Free text, typically an error message from a server or library.

    Returns:
        The text with secrets replaced by ``[redacted]``.
    """
    return _SECRET_RE.sub(_redacted, text)


class SecretRedactionFilter(logging.Filter):
    """A log handler filter that runs :func:`redact` over everything a record will print.

    The message with its arguments, the exception's traceback and the stack are rendered here
    and redacted, so a key in a library's message or in an exception's text (a server's error
    body) never reaches the log file. The record is changed in place: handlers after this one
    see the redacted text too.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record; never drops it."""
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info is not None:
            if not record.exc_text:
                record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip()
            record.exc_info = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class EtosError(Exception):
    """Base of every error this program raises on purpose.

    Args:
        detail: Technical detail for logs and the "details" part of an error dialog (redacted).
        **params: Values the UI may put into the translated message.
    """

    code = "error"

    def __init__(self, detail: str = "", **params: Any) -> None:
        self.detail = redact(detail)
        self.params: dict[str, Any] = params
        super().__init__(self.detail or self.code)


class UserFacingError(EtosError):
    """An error the user can understand and act on."""

    code = "user_error"
    #: Whether retrying the same action later may succeed.
    retryable = False


class ProviderError(UserFacingError):
    """The model server refused the request or could not be reached."""

    code = "provider_error"


class AuthError(ProviderError):
    """The server rejected the API key (401/403)."""

    code = "auth"


class ModelNotFound(ProviderError):
    """The server does not know the model, or the base URL points at the wrong place (404)."""

    code = "model_not_found"


class RateLimited(ProviderError):
    """The server kept answering 429 after every retry."""

    code = "rate_limited"
    retryable = True


class ServerError(ProviderError):
    """The server kept failing (5xx) after every retry."""

    code = "server_error"
    retryable = True


class ProviderTimeout(ProviderError):
    """No answer in time: connecting, waiting for the first token, or between chunks."""

    code = "timeout"
    retryable = True


class ProviderUnavailable(ProviderError):
    """The server could not be reached at all (refused, DNS failure, network down)."""

    code = "unavailable"
    retryable = True


class ContextTooLong(ProviderError):
    """The server refused the request because it exceeds the model's context window."""

    code = "context_too_long"


class BadRequest(ProviderError):
    """Any other 4xx the server answered."""

    code = "bad_request"


class MalformedResponse(ProviderError):
    """The server's reply could not be parsed (a broken stream chunk, invalid JSON)."""

    code = "malformed_response"
    retryable = True


class MessageTooLong(UserFacingError):
    """The user's message alone does not fit the model's context budget; nothing was sent."""

    code = "message_too_long"


class ImagesNotAccepted(UserFacingError):
    """The message carries images and the chosen model does not take them; nothing was sent."""

    code = "images_not_accepted"


class NotConfigured(UserFacingError):
    """No provider or model is configured yet."""

    code = "not_configured"


class InvalidInput(UserFacingError):
    """A value the user entered cannot be accepted."""

    code = "invalid_input"


class AttachmentRefused(InvalidInput):
    """A file cannot be attached; nothing was read past what told why.

    ``params``: ``name`` and ``reason``: ``too_large`` (with ``limit`` in bytes), ``empty``,
    ``binary``, ``unsupported``, ``not_image``, ``too_many_pixels``, ``encrypted``,
    ``no_text``, ``unreadable``, ``too_many`` (with ``limit``) or ``unavailable``.
    """

    code = "attachment_refused"


class EnvironmentFailure(EtosError):
    """The environment failed (disk full, read-only file system), not the program."""

    code = "environment"


class StorageError(EnvironmentFailure):
    """Reading or writing the database or a data file failed."""

    code = "storage"


def error_text(error: BaseException) -> str:
    """A key-free description of a failure for a ``last_error`` column (a job's, a sync pass's).

    An ``EtosError`` gives its code (its detail may hold a server's words, so it is left out);
    anything else (a bug) gives its type name.
    """
    if isinstance(error, EtosError):
        reason = error.params.get("reason")
        return f"{error.code}:{reason}" if isinstance(reason, str) else error.code
    return f"bug:{type(error).__name__}"
