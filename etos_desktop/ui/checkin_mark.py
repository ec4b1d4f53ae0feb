"""The marks of a conversation the companion started (a check-in, ``core/checkins``).

The conversation list puts :data:`CHECKIN_MARK` before its title (and names an untitled one
"Check-in"); the chat view shows :class:`CheckinMark` at the top of the conversation: who
started it, and when. Both come from the conversation's row (``started_by``), so a reopen
shows the same.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QCoreApplication, QDate, QDateTime, QEvent, QLocale, Qt, QTime
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget
from typing_extensions import override

from etos_desktop.core.checkins.records import STARTED_BY_COMPANION

#: Before a check-in's title in the conversation list (a wave: the companion said hello).
CHECKIN_MARK = "👋"


def started_by_companion(conversation: object) -> bool:
    """Whether a conversation row (or the first frame's ``SidebarRow``) is a check-in."""
    return getattr(conversation, "started_by", None) == STARTED_BY_COMPANION


def checkin_title() -> str:
    """What an untitled check-in is called in the list."""
    return QCoreApplication.translate("CheckinMark", "Check-in")


def checkin_tooltip() -> str:
    """The list's tooltip line of a check-in."""
    return QCoreApplication.translate(
        "CheckinMark", "Started by your companion (a check-in you turned on in Settings)"
    )


class CheckinMark(QLabel):
    """The line at the top of a conversation a check-in started; hidden for the others.

    Args:
        companion: Gives the companion's name as the chat shows it now.
        parent: The chat panel.
    """

    def __init__(self, companion: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("checkinMark")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._companion = companion
        self._started_at: datetime | None = None
        self.hide()

    def show_for(self, conversation: object | None) -> None:
        """Show the mark for ``conversation`` if a check-in started it, else hide it."""
        if conversation is None or not started_by_companion(conversation):
            self._started_at = None
            self.hide()
            return
        self._started_at = getattr(conversation, "created_at", None)
        self.retranslate()
        self.show()

    def untitled(self) -> str:
        """What an untitled conversation is called: "Check-in" when this mark is shown, or ""."""
        return checkin_title() if self._started_at is not None else ""

    def retranslate(self) -> None:
        """Put the mark into words again (the language, the companion's name)."""
        if self._started_at is None:
            self.clear()
            return
        local = self._started_at.astimezone()
        when = self.locale().toString(
            QDateTime(QDate(local.year, local.month, local.day), QTime(local.hour, local.minute)),
            QLocale.FormatType.ShortFormat,
        )
        text = self.tr("{mark} {name} started this conversation: a check-in, {when}").format(
            mark=CHECKIN_MARK, name=self._companion(), when=when
        )
        self.setText(text)
        self.setAccessibleName(text)

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        super().changeEvent(event)
