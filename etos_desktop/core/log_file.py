"""The app's log file: rotating, and private (``0600``) like every file in the data folder.

DESIGN §9: a log holds conversation titles, model names and error texts, so it is owner-only
as the database is. Imported after the first frame (``logging.handlers`` pulls in socket and
pickle).
"""

from __future__ import annotations

import io
import logging.handlers
from pathlib import Path
from typing import cast

from etos_desktop.core.settings.paths import make_private_file, private_opener


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A ``RotatingFileHandler`` whose files are created ``0600`` and tightened when looser.

    The current file is opened through :func:`~etos_desktop.core.settings.paths.private_opener`
    (at start and after each rollover); rotated files are renames of it and keep its mode. The
    rotated files an older version left ``0644`` are tightened when the handler is created.
    POSIX only, like every file mode here; on Windows it is a plain ``RotatingFileHandler``.

    Args:
        path: The log file (its folder must exist).
        max_bytes: Size at which the file is rotated.
        backup_count: Rotated files kept (``etos.log.1`` …).
    """

    def __init__(self, path: Path, *, max_bytes: int, backup_count: int) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backup_count, encoding="utf-8")
        for number in range(1, backup_count + 1):
            make_private_file(Path(f"{self.baseFilename}.{number}"))

    def _open(self) -> io.TextIOWrapper:
        # The stdlib's _open has no opener argument; the rest is what it does. Text mode (the
        # mode is "a" or "w"), so a TextIOWrapper, which typeshed cannot see from a str mode.
        stream = open(  # noqa: SIM115 - the handler owns the stream and closes it
            self.baseFilename,
            self.mode,
            encoding=self.encoding,
            errors=self.errors,
            opener=private_opener,
        )
        return cast("io.TextIOWrapper", stream)
