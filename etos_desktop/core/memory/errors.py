"""Errors of the memory store: each has a stable ``code`` the UI and the model's tool result map.

::

    InvalidInput (core.errors)
    ├── MemoryRejected             a write check said no (``params["reason"]`` says which)
    │   ├── MemoryEmpty            nothing but white space
    │   ├── MemoryTooLong          over ``memory.max_content_chars`` (params: length, limit)
    │   ├── MemorySecret           looks like a secret (params: reason, e.g. "api_key")
    │   └── MemoryLimitReached     ``memory.max_active`` active memories already (params: limit)
    └── MemoryNotFound             no such memory (or it was deleted) (params: memory_id)
"""

from __future__ import annotations

from etos_desktop.core.errors import InvalidInput


class MemoryRejected(InvalidInput):
    """A memory was not written because a write check refused it."""

    code = "memory_rejected"


class MemoryEmpty(MemoryRejected):
    """The memory's text is empty or only white space."""

    code = "memory_empty"


class MemoryTooLong(MemoryRejected):
    """The memory's text is longer than the configured limit."""

    code = "memory_too_long"


class MemorySecret(MemoryRejected):
    """The memory's text contains what looks like a secret or a sensitive identifier."""

    code = "memory_secret"


class MemoryLimitReached(MemoryRejected):
    """The store already holds the configured number of active memories."""

    code = "memory_limit"


class MemoryNotFound(InvalidInput):
    """No memory has this id (it never existed or was deleted)."""

    code = "memory_not_found"
