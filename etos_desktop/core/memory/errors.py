"""Errors of the memory store: each has a stable ``code`` the UI and the model's tool result map.

The write checks' errors (empty, too long, a secret) are shared with the other layers and live
in ``core.text.checks``; ``MemoryLimitReached`` is one of that family.

::

    InvalidInput (core.errors)
    ├── MemoryRejected             (``core.text.checks``) a write check said no
    │   ├── MemoryEmpty, MemoryTooLong, MemorySecret   (``core.text.checks``)
    │   └── MemoryLimitReached     ``memory.max_active`` active memories already (params: limit)
    └── MemoryNotFound             no such memory (or it was deleted) (params: memory_id)
"""

from __future__ import annotations

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.text.checks import MemoryRejected


class MemoryLimitReached(MemoryRejected):
    """The store already holds the configured number of active memories."""

    code = "memory_limit"


class MemoryNotFound(InvalidInput):
    """No memory has this id (it never existed or was deleted)."""

    code = "memory_not_found"
