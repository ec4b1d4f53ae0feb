"""Words for memories wherever the UI shows them: kinds, sources, states, cells, times, errors.

Every memory text shown through here has its invisible and control characters spelled out
(``escape_invisible``) and its markup shown as typed, as DESIGN §5.1 asks of the approval dialog.
Used by the Memory page in Settings and by the chat's memory dialogs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from PySide6.QtCore import QCoreApplication

from etos_desktop.core.errors import EtosError
from etos_desktop.core.memory.records import Memory, MemoryKind, MemorySource
from etos_desktop.ui.error_text import describe
from etos_desktop.ui.labels import escaped_html
from etos_desktop.ui.markdown_render import escape_invisible

#: The longest text shown in a table cell (the tooltip and the editor show all of it).
CELL_CHARS: Final = 200


def kind_name(kind: str) -> str:
    """The translated name of a memory kind."""
    names = {
        MemoryKind.FACT: QCoreApplication.translate("MemoryText", "Fact"),
        MemoryKind.PREFERENCE: QCoreApplication.translate("MemoryText", "Preference"),
        MemoryKind.INSTRUCTION: QCoreApplication.translate("MemoryText", "Instruction"),
        MemoryKind.EPISODE: QCoreApplication.translate("MemoryText", "Episode"),
        MemoryKind.INSIGHT: QCoreApplication.translate("MemoryText", "Insight"),
    }
    return names.get(kind, kind)


def source_name(source: str) -> str:
    """Who a memory came from, in the user's terms (the user's own words are credited to them)."""
    names = {
        # Settings → Memory → Add…
        MemorySource.MANUAL: QCoreApplication.translate("MemoryText", "Added by you"),
        # /remember and Remember… in the chat: the user's own words.
        MemorySource.USER_STATEMENT: QCoreApplication.translate("MemoryText", "Said by you"),
        MemorySource.ASSISTANT_ACTION: QCoreApplication.translate(
            "MemoryText", "Saved by the assistant"
        ),
        MemorySource.IMPORTED: QCoreApplication.translate("MemoryText", "Imported"),
        MemorySource.CONSOLIDATION: QCoreApplication.translate("MemoryText", "Consolidated"),
    }
    return names.get(source, source)


def status_of(memory: Memory, now: datetime) -> str:
    """``"active"``, ``"superseded"``, ``"archived"`` or ``"expired"``."""
    if memory.superseded_by is not None:
        return "superseded"
    if memory.archived_at is not None:
        return "archived"
    if not memory.is_active(now):
        return "expired"
    return "active"


def replaced_by_text(memory_id: int | str) -> str:
    """The status of a superseded memory: which memory replaced it."""
    return QCoreApplication.translate("MemoryText", "Replaced by #{id}").format(id=memory_id)


def status_name(memory: Memory, now: datetime) -> str:
    """The translated status of a memory, with its successor for a superseded one."""
    status = status_of(memory, now)
    if status == "superseded":
        return replaced_by_text(memory.superseded_by or "")
    return {
        "active": QCoreApplication.translate("MemoryText", "Active"),
        "archived": QCoreApplication.translate("MemoryText", "Archived"),
        "expired": QCoreApplication.translate("MemoryText", "Expired"),
    }[status]


def one_line(text: str) -> str:
    """Text for a table cell: invisible characters spelled out, line breaks shown as ⏎."""
    shown = escape_invisible(text).replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " ")
    return shown if len(shown) <= CELL_CHARS else shown[: CELL_CHARS - 1] + "…"


def rich_escaped(text: str) -> str:
    """Text as HTML: invisible characters spelled out, markup shown as typed."""
    return escaped_html(escape_invisible(text))


def local_time(value: datetime, fmt: str = "%Y-%m-%d") -> str:
    """A time as local-time text (a date by default)."""
    return value.astimezone().strftime(fmt)


def memory_error_text(error: EtosError) -> str:
    """Words for the errors memory actions raise; the write checks' words are in ``error_text``."""
    code = error.code
    params = error.params
    if code == "memory_import_stale":
        return QCoreApplication.translate(
            "MemoryText",
            "Memories changed while the import was being prepared. Import the file again.",
        )
    if code == "memory_import_invalid":
        reason = params.get("reason")
        if reason == "too_large":
            return QCoreApplication.translate(
                "MemoryText", "The file is too large to be a memory export."
            )
        if reason == "not_json":
            return QCoreApplication.translate(
                "MemoryText", "The file cannot be read: it is not a JSON file, or it is damaged."
            )
        if reason == "unsupported_version":
            return QCoreApplication.translate(
                "MemoryText",
                "The file was exported by a newer version of ETOS Desktop (format {version}). Update the app to import it.",
            ).format(version=params.get("version", "?"))
        if reason == "too_many":
            return QCoreApplication.translate(
                "MemoryText", "The file holds too many memories ({count}; at most {limit})."
            ).format(count=params.get("count", "?"), limit=params.get("limit", "?"))
        if reason == "duplicate_id":
            return QCoreApplication.translate(
                "MemoryText", "The file is damaged: two memories in it have the same number."
            )
        if reason == "not_text":
            return QCoreApplication.translate(
                "MemoryText",
                "The file cannot be read: it is neither a memory export nor a text list of "
                "facts, or it is damaged.",
            )
        if reason == "no_facts":
            return QCoreApplication.translate(
                "MemoryText",
                "The file holds no facts to import: only headings or empty lines.",
            )
        if reason == "bad_structure":
            return QCoreApplication.translate(
                "MemoryText", "The file is damaged: its list of memories cannot be read."
            )
        return QCoreApplication.translate(
            "MemoryText", "This file is not a memory export of ETOS Desktop."
        )
    return describe(error).message
