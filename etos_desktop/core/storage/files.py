"""Files the user asked for that hold personal data: exports of conversations and memories.

They are written like the app's own private files (``settings.json``, the key file): readable by
the owner only, and atomically, so a failed or interrupted export never leaves half a file or
replaces a good one.
"""

from __future__ import annotations

import re
from pathlib import Path

from etos_desktop.core.settings.paths import atomic_write_private

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def write_private_text(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path``, mode ``0600``, atomically.

    The text goes to a temporary file in the same folder (created ``0600``), is flushed and
    fsynced, then moved over ``path`` with ``os.replace``: an existing file is replaced as a
    whole, so it does not keep its old mode (an earlier export written ``0644``), and on any
    failure it is left as it was and the temporary file is removed. Runs in the calling thread:
    call it from a worker thread, never from the UI thread.

    Lone surrogates (which UTF-8 cannot hold; they can come from a model's JSON) are written as
    U+FFFD instead of failing the whole export.

    Args:
        path: The file to write (its folder must exist).
        text: The complete content.

    Raises:
        StorageError: Writing failed; ``params["reason"]`` is ``"disk_full"``, ``"read_only"``,
            ``"permission"`` or ``"io"`` and ``params["path"]`` the file's path.
    """
    atomic_write_private(path, _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8"))
