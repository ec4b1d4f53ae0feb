"""The tray icon, where the desktop has a tray: show or hide the window, new conversation, quit.

A click on the icon shows the window (raised and focused) or, when it is in front, hides it.
Closing the window still quits the app: the tray is a shortcut to it, not a place it hides in.
A check-in (the companion started a conversation) shows as the tray's notification; clicking
it opens that conversation.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMainWindow, QMenu, QSystemTrayIcon, QWidget


def tray_available() -> bool:
    """Whether the desktop shows tray icons now (an X11 tray host, Windows, macOS…)."""
    return QSystemTrayIcon.isSystemTrayAvailable()


class _TrayMenu(QMenu):
    """The tray icon's menu; it is a widget, so it hears about a new language."""

    language_changed = Signal()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.language_changed.emit()
        super().changeEvent(event)


class TrayIcon(QObject):
    """The tray icon of ``window`` and its menu.

    Signals:
        new_conversation_requested(): "New conversation" was chosen (the window is shown first).
        quit_requested(): "Quit" was chosen.
        checkin_open_requested(int): a check-in's notification was clicked: open this
            conversation (the window is shown first).
    """

    new_conversation_requested = Signal()
    quit_requested = Signal()
    checkin_open_requested = Signal(int)

    #: How long a check-in's notification stays, in milliseconds (the desktop may cap it).
    NOTIFICATION_MS = 15000
    #: The longest first message shown in a notification.
    NOTIFICATION_CHARS = 200

    def __init__(self, window: QMainWindow, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._window = window
        self.menu = _TrayMenu()
        self.menu.setObjectName("trayMenu")
        self.toggle_action = QAction(self.menu)
        self.new_action = QAction(self.menu)
        self.quit_action = QAction(self.menu)
        self.menu.addAction(self.toggle_action)
        self.menu.addAction(self.new_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.icon = QSystemTrayIcon(icon, self)
        self.icon.setContextMenu(self.menu)
        self.toggle_action.triggered.connect(self.toggle_window)
        self.new_action.triggered.connect(self._on_new_action_triggered)
        self.quit_action.triggered.connect(self.quit_requested)
        self.icon.activated.connect(self._on_icon_activated)
        self.icon.messageClicked.connect(self._on_icon_message_clicked)
        #: The conversation of the check-in notified last, and what the notification said.
        self.notified_conversation: int | None = None
        self.notification: tuple[str, str] | None = None
        self.menu.aboutToShow.connect(self.retranslate)
        self.menu.language_changed.connect(self.retranslate)
        self.retranslate()

    def show(self) -> None:
        """Put the icon in the tray."""
        self.icon.show()

    def hide(self) -> None:
        """Take the icon out of the tray."""
        self.icon.hide()

    def close(self) -> None:
        """Take the icon out of the tray and delete it with its menu (the window is closing)."""
        self.icon.hide()
        self.menu.deleteLater()
        self.deleteLater()

    def notify_checkin(self, conversation_id: int, companion: str, text: str) -> None:
        """Show that ``companion`` started a conversation, with the start of its message."""
        body = " ".join(text.split())
        if len(body) > self.NOTIFICATION_CHARS:
            body = body[: self.NOTIFICATION_CHARS - 1].rstrip() + "…"
        title = self.tr("{name} checked in").format(name=companion)
        self.notified_conversation = conversation_id
        self.notification = (title, body)
        self.icon.showMessage(
            title, body, QSystemTrayIcon.MessageIcon.Information, self.NOTIFICATION_MS
        )

    def _on_icon_message_clicked(self) -> None:
        if self.notified_conversation is None:
            return
        show_window(self._window)
        self.checkin_open_requested.emit(self.notified_conversation)

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.icon.setToolTip(self.tr("ETOS Desktop"))
        self.toggle_action.setText(
            self.tr("Hide window") if self._window_in_front() else self.tr("Show window")
        )
        self.new_action.setText(self.tr("New conversation"))
        self.quit_action.setText(self.tr("Quit"))

    def toggle_window(self) -> None:
        """Hide the window when it is in front, else bring it to the front."""
        if self._window_in_front():
            self._window.hide()
        else:
            show_window(self._window)
        self.retranslate()

    def _window_in_front(self) -> bool:
        return self._window.isVisible() and not self._window.isMinimized()

    def _on_icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.toggle_window()

    def _on_new_action_triggered(self) -> None:
        show_window(self._window)
        self.new_conversation_requested.emit()


def show_window(window: QWidget) -> None:
    """Bring ``window`` to the front: shown, not minimised, raised and focused."""
    if window.isMinimized():
        window.showNormal()
    else:
        window.show()
    window.raise_()
    window.activateWindow()
