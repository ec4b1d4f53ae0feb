"""The chat area: header, the stack of messages (loaded lazily), the error banner and composer."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QMimeData, QRegularExpression, Qt, QTimer, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QImage,
    QKeyEvent,
    QResizeEvent,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.context.prompts import companion_name
from etos_desktop.core.errors import EtosError
from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.ui import attachments as attached
from etos_desktop.ui import dialogs
from etos_desktop.ui.avatar import avatar_pixmap
from etos_desktop.ui.bubbles import bubble_max_width
from etos_desktop.ui.checkin_mark import CheckinMark
from etos_desktop.ui.composer_indicator import ModelTokenIndicator
from etos_desktop.ui.error_text import describe, failure_text, retry_reason_text, status_text
from etos_desktop.ui.labels import ElidedLabel, make_plain, plain_tooltip
from etos_desktop.ui.message_widget import MemoryNote, MessageWidget, wrap_mode_for
from etos_desktop.ui.task_set import TaskSet
from etos_desktop.ui.usage_text import reprice, show_usage

if TYPE_CHECKING:
    from etos_desktop.core.chat.attachments import PreparedAttachment
    from etos_desktop.core.chat.events import MemorySaved
    from etos_desktop.core.chat.service import MessageRoom
    from etos_desktop.core.storage.tables import ConversationRow, MessageRow
    from etos_desktop.core.usage.prices import ModelPrice


#: A paste longer than this (in characters), or with a line longer than ``LONG_LINE_CHARS``, is
#: kept beside the editor as pasted text (``PastedText``) and sent with the message. Qt's editor
#: lays out a whole line at every keystroke: a 1 MB line took it 1.3 s to take and 1.2 s per
#: keystroke after; 10 MB of short lines 0.2-0.25 s to take (2 shared cores). A 20,000-character
#: line costs ~10 ms a keystroke, 100,000 characters of short lines ~5 ms to take.
LARGE_PASTE_CHARS = 100_000
LONG_LINE_CHARS = 20_000
#: How many characters of pasted text the token count reads per pass of the event loop.
COUNT_STEP_CHARS = 200_000
_NON_SPACE = QRegularExpression(r"\S")
#: The companion's name shown follows the language of the user's messages, judged from this much
#: of each: judging a 1 MB message whole took 0.15 s on the UI thread as it was shown (the prompt
#: still judges it whole; only a message whose language changes after this far can differ).
NAME_SAMPLE_CHARS = 20_000


def is_large_paste(text: str) -> bool:
    """Whether ``text`` is kept as pasted text rather than put into the editor."""
    if len(text) > LARGE_PASTE_CHARS:
        return True
    return len(text) > LONG_LINE_CHARS and max(map(len, text.split("\n"))) > LONG_LINE_CHARS


class Composer(QPlainTextEdit):
    """Message editor: Enter sends, Shift+Enter inserts a new line, Up when empty edits.

    Signals:
        submitted(): Enter was pressed.
        edit_last_requested(): Up was pressed in the empty composer (edit the last message).
        large_text_pasted(str): a paste too long for the editor (``is_large_paste``): it was not
            inserted, and is for the chat panel to keep as pasted text.
        files_dropped(list): local files were dropped or pasted (their paths): to attach.
        image_pasted(object): an image (a ``QImage``) was pasted or dropped: to attach.
    """

    submitted = Signal()
    edit_last_requested = Signal()
    # ``object``, not ``str``: a str argument was converted to a QString and back on the way,
    # 74 ms of a 10 MB paste.
    large_text_pasted = Signal(object)
    files_dropped = Signal(list)
    image_pasted = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.textChanged.connect(self._on_text_changed)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return bool(_attachable(source)) or super().canInsertFromMimeData(source)

    def _on_text_changed(self) -> None:
        if self.document().isEmpty():
            self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)

    def insertFromMimeData(self, source: QMimeData) -> None:
        # A pasted run without spaces (minified JSON, base64) is wrapped anywhere: wrapping it at
        # word boundaries took Qt minutes for a 1 MB line (tests/bench/text_speed.py).
        kind = _attachable(source)
        if kind == "files":
            self.files_dropped.emit(
                [url.toLocalFile() for url in source.urls() if url.isLocalFile()]
            )
            return
        if kind == "image":
            self.image_pasted.emit(source.imageData())
            return
        if source.hasText():
            text = source.text()
            if is_large_paste(text):
                self.large_text_pasted.emit(text)
                return
            self._fit_wrap_mode(text)
        super().insertFromMimeData(source)

    def has_text(self) -> bool:
        """Whether the editor holds anything but whitespace (without copying its text out)."""
        document = self.document()
        return not document.isEmpty() and not document.find(_NON_SPACE).isNull()

    def setPlainText(self, text: str) -> None:
        self._fit_wrap_mode(text)
        super().setPlainText(text)

    def _fit_wrap_mode(self, added: str) -> None:
        mode = wrap_mode_for(added)
        if mode != self.wordWrapMode() and (
            mode == QTextOption.WrapMode.WrapAnywhere or self.document().isEmpty()
        ):
            self.setWordWrapMode(mode)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.submitted.emit()
            return
        if (
            event.key() == Qt.Key.Key_Up
            and event.modifiers() == Qt.KeyboardModifier.NoModifier
            and self.document().isEmpty()
        ):
            self.edit_last_requested.emit()
            return
        super().keyPressEvent(event)


def _attachable(source: QMimeData) -> str:
    """``"files"`` (local files), ``"image"`` (a picture) or ``""``: what a drop or paste attaches."""
    if source.hasUrls() and any(url.isLocalFile() for url in source.urls()):
        return "files"
    if source.hasImage() and isinstance(source.imageData(), QImage):
        return "image"
    return ""


class PastedText(QFrame):
    """Text pasted beside the composer, too long for its editor; it is sent with the message.

    It shows its size; its token count is taken in steps (``count_step``), off the keystrokes.

    Signals:
        remove_requested(): the user removed it from the message.
    """

    remove_requested = Signal()

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pastedText")
        self.text = text
        #: CJK characters in ``text`` (``None`` until counted), and how far the count got.
        self.cjk: int | None = None
        self._counted = 0
        self._cjk_so_far = 0
        self._lines = text.count("\n") + 1
        self.label = QLabel(self)
        self.label.setObjectName("pastedTextLabel")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.remove_button = QToolButton(self)
        self.remove_button.setObjectName("pastedTextRemove")
        self.remove_button.setText("×")
        self.remove_button.setAutoRaise(True)
        self.remove_button.clicked.connect(self.remove_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 2, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.remove_button)
        self.retranslate()

    def count_step(self) -> bool:
        """Count the CJK characters of the next ``COUNT_STEP_CHARS``; return whether done."""
        from etos_desktop.core.context.tokens import count_cjk

        if self.cjk is not None:
            return True
        end = min(len(self.text), self._counted + COUNT_STEP_CHARS)
        self._cjk_so_far += count_cjk(self.text[self._counted : end])
        self._counted = end
        if end >= len(self.text):
            self.cjk = self._cjk_so_far
        return self.cjk is not None

    def retranslate(self) -> None:
        locale = self.locale()
        self.label.setText(
            self.tr("Pasted text: {chars} characters, %Ln line(s)", "", self._lines).format(
                chars=locale.toString(len(self.text))
            )
        )
        # Its beginning, as plain text.
        self.setToolTip(plain_tooltip(self.text[:300]))
        self.remove_button.setToolTip(self.tr("Remove the pasted text from the message"))
        self.remove_button.setAccessibleName(self.tr("Remove the pasted text"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        super().changeEvent(event)


#: The chat's text column is about this many characters of English text wide: longer lines are
#: hard to read (typographers' 45-90), and a wide window would otherwise stretch them to 200.
COLUMN_CHARACTERS = 80
_SAMPLE = "The quick brown fox jumps over the lazy dog, then rests. "


def text_column_width(font_metrics: QFontMetricsF) -> int:
    """The width of ``COLUMN_CHARACTERS`` characters of English text in this font."""
    return round(font_metrics.horizontalAdvance(_SAMPLE) / len(_SAMPLE) * COLUMN_CHARACTERS)


class _MessageList(QWidget):
    """The scrolled list of messages, laid out in a centred column ``column_width`` wide."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.column_width = 720
        #: Called after the column's width on screen changed (the bubbles follow it).
        self.fitted: Callable[[], None] | None = None

    def set_column_width(self, width: int) -> None:
        self.column_width = width
        self._fit()

    def shown_column_width(self) -> int:
        """How wide the column is on screen (narrower than ``column_width`` in a small window)."""
        layout = self.layout()
        margins = layout.contentsMargins() if layout is not None else None
        side = margins.left() + margins.right() if margins is not None else 24
        return max(0, min(self.column_width, self.width() - side))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        layout = self.layout()
        if layout is None:
            return
        side = max(12, (self.width() - self.column_width) // 2)
        margins = layout.contentsMargins()
        if (margins.left(), margins.right()) != (side, side):
            layout.setContentsMargins(side, margins.top(), side, margins.bottom())
        if self.fitted is not None:
            self.fitted()


class WelcomePanel(QWidget):
    """What a new conversation shows: who the companion is, what it remembers, how to teach it.

    Signals:
        memory_settings_requested(): the user wants to see the memories (Settings → Memory).
    """

    memory_settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        self._name = ""
        self._avatar: QImage | None = None
        self._count: int | None = None
        self._memory_on = True
        self._temporary = False
        self.avatar = QLabel(self)
        self.avatar.setObjectName("welcomeAvatar")
        self.avatar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title = make_plain(QLabel(self))
        self.title.setObjectName("welcomeTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.memory_line = QLabel(self)
        self.memory_line.setObjectName("welcomeMemory")
        self.memory_line.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.memory_line.setWordWrap(True)
        self.teach_line = QLabel(self)
        self.teach_line.setObjectName("welcomeTeach")
        self.teach_line.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.teach_line.setWordWrap(True)
        self.memory_button = QPushButton(self)
        self.memory_button.setObjectName("welcomeMemoryButton")
        self.memory_button.clicked.connect(self.memory_settings_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 48, 24, 24)
        layout.setSpacing(10)
        layout.addWidget(self.avatar, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(self.title)
        layout.addWidget(self.memory_line)
        layout.addWidget(self.teach_line)
        layout.addWidget(self.memory_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self._fit_fonts()
        self.retranslate()

    def set_companion(self, name: str, avatar: QImage | None) -> None:
        self._name = name
        self._avatar = avatar
        self._draw_avatar()
        self.retranslate()

    def set_memory(self, *, count: int | None, enabled: bool, temporary: bool) -> None:
        """What to say about memory: ``count`` active memories (``None``: not known yet)."""
        self._count = count
        self._memory_on = enabled
        self._temporary = temporary
        self.retranslate()

    @property
    def memory_count(self) -> int | None:
        return self._count

    def retranslate(self) -> None:
        self.title.setText(self.tr("Hi, I'm {name}.").format(name=self._name))
        if self._temporary:
            memory = self.tr(
                "This is a temporary conversation: I won't read or save any memories here."
            )
        elif not self._memory_on:
            memory = self.tr(
                "Memory is off: I won't remember anything from our conversations until it is "
                "turned on in Settings → Memory."
            )
        elif self._count is None:
            memory = ""
        elif self._count == 0:
            memory = self.tr("I don't remember anything about you yet.")
        else:
            memory = self.tr("I remember %n thing(s) about you.", "", self._count)
        self.memory_line.setText(memory)
        self.memory_line.setVisible(bool(memory))
        teaching = self._memory_on and not self._temporary
        self.teach_line.setText(
            self.tr(
                "Tell me things to remember, or type /remember followed by what to keep. "
                "You can see, change or delete everything I remember."
            )
        )
        self.teach_line.setVisible(teaching)
        self.memory_button.setText(self.tr("See what I remember"))
        self.memory_button.setVisible(not self._temporary)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.FontChange:
            self._fit_fonts()
        elif event.type() == QEvent.Type.PaletteChange:
            self._draw_avatar()
        super().changeEvent(event)

    def _fit_fonts(self) -> None:
        # The title's size is a style sheet rule relative to the UI font (ui.theme.font_rules).
        self._draw_avatar()

    def _draw_avatar(self) -> None:
        size = 4 * self.fontMetrics().height()
        self.avatar.setFixedSize(size, size)
        self.avatar.setPixmap(
            avatar_pixmap(self._avatar, self._name, size, self.devicePixelRatioF(), self.palette())
        )


class ChatPanel(QWidget):
    """Shows one conversation and takes the user's messages.

    Signals:
        send_requested(str): send a new message.
        send_with_attachments_requested(str, list): send a new message with the draft's
            attachments (``PreparedAttachment`` list); the text may be empty.
        edit_resend_requested(int, str): resend an edited user message (already confirmed).
        stop_requested(): stop the reply being written.
        regenerate_requested(int): user message id whose reply to regenerate/retry.
        version_requested(int, int): user message id, version index to show.
        delete_message_requested(int): delete a message (already confirmed).
        load_older_requested(int): load messages before this id.
        context_requested(int): show what was sent for an assistant message.
        model_change_requested(str, str): provider id ("" = default), model ("" = its default).
        temporary_toggled(bool): the temporary switch of a new conversation changed.
        settings_requested(): the user clicked an error's "Open settings".
        settings_page_requested(str): open Settings at a page ("memory" from the welcome).
        remember_requested(int, str): "Remember…" on a message: its id and text.
        memory_edit_requested(int, str): a memory note's Edit: memory id, its current text.
        memory_undo_requested(int, object, bool): a memory note's Undo: memory id, the memory it
            superseded (or ``None``), and whether the save was merged into an existing memory.
    """

    send_requested = Signal(str)
    send_with_attachments_requested = Signal(str, list)
    edit_resend_requested = Signal(int, str)
    stop_requested = Signal()
    regenerate_requested = Signal(int)
    version_requested = Signal(int, int)
    delete_message_requested = Signal(int)
    load_older_requested = Signal(int)
    context_requested = Signal(int)
    model_change_requested = Signal(str, str)
    temporary_toggled = Signal(bool)
    settings_requested = Signal()
    settings_page_requested = Signal(str)
    remember_requested = Signal(int, str)
    memory_edit_requested = Signal(int, str)
    memory_undo_requested = Signal(int, object, bool)

    def __init__(self, *, render_interval_ms: int = 80, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPanel")
        self.render_interval_ms = render_interval_ms
        # Set from the persona when the first conversation is shown, below (the welcome of the
        # first frame names the companion too).
        self.companion_name = ""
        self.companion_avatar: QImage | None = None
        # What the companion's name is judged from, as the prompt judges it: the name set in
        # Settings, the UI language, the conversation's own name and the user's messages shown.
        self._persona_choice = ("", "en")
        self._conversation_persona: str | None = None
        # The user's messages shown (their first NAME_SAMPLE_CHARS), for the companion's name.
        self._user_texts: dict[int, str] = {}
        self._widgets: dict[int, MessageWidget] = {}
        #: The prices per million tokens by model (Settings → Providers), for the usage lines.
        self.model_prices: dict[str, ModelPrice] = {}
        self._reply_of: dict[int, int] = {}  # assistant message id -> user message id
        self._reply_widget_for_user: dict[int, int] = {}
        self._first_id: int | None = None
        # An older page asked for by scrolling up and not shown yet (one request at a time).
        self._fetching_older = False
        # After an older page went in above: how far the view stays from the bottom.
        self._bottom_anchor: int | None = None
        self._editing_id: int | None = None
        self._error_action = ""
        self._error_user_message: int | None = None
        self._banner_words: Callable[[], str] | None = None
        self._busy = False
        self._temporary_conversation = False
        self._stick_to_bottom = True
        self._untitled = True
        self._memory_enabled = True
        # The composer text of a /remember on its way: cleared once it is saved, kept if refused.
        self._pending_remember: str | None = None
        self._tasks = TaskSet()
        # How long a message the open conversation takes (a core MessageRoom, or None), and
        # whether the draft is over it (then Send refuses it, saying why).
        self._room: MessageRoom | None = None
        self._too_long = False
        self._draft_tokens = 0
        # The pasted texts kept beside the editor, and a number that changes with every change
        # of the draft (a queued message goes only if the draft is still what was queued).
        self._pastes: list[PastedText] = []
        self._draft_revision = 0
        self._queued_revision = -1
        # What the banner's failure was ("reply", "remember" or ""): its success hides it.
        self._banner_source = ""
        # The text Enter queued while a reply was streaming or the app was still starting
        # (sent when the reply ends or the services are up), if any.
        self._queued: str | None = None
        # Until the app's services are up (the first frame comes before them), a message the
        # user sends is queued: typing starts at the first frame (issue 21).
        self._starting = False
        # Whether the draft has images and the model takes none (Send refuses it, saying why).
        self._no_images = False
        #: Reads a stored attachment's bytes by sha256 (set by the window: the controller's).
        self.attachment_reader: attached.Reader | None = None
        # Files being read and prepared for the draft (a Send waits for them).
        self._preparing = 0

        # Header
        # Written by the model: plain text, elided so a long one never widens the window.
        self.title = ElidedLabel(self)
        self.title.setObjectName("conversationTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.provider_combo = QComboBox(self)
        self.provider_combo.setObjectName("providerCombo")
        self.provider_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_combo = QComboBox(self)
        self.model_combo.setObjectName("modelCombo")
        self.model_combo.setEditable(True)
        self.model_combo.setMinimumContentsLength(16)
        self.temporary = QCheckBox(self)
        self.temporary.setObjectName("temporaryCheck")
        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.temporary)
        header.addWidget(self.provider_combo)
        header.addWidget(self.model_combo)

        # Messages
        self.messages = _MessageList(self)
        self.messages.setObjectName("messageList")
        self.messages.fitted = self._fit_bubbles
        self.older_button = QPushButton(self.messages)
        self.older_button.setObjectName("olderButton")
        self.older_button.setFlat(True)
        self.older_button.hide()
        self.message_layout = QVBoxLayout(self.messages)
        self.message_layout.setContentsMargins(12, 8, 12, 8)
        self.message_layout.setSpacing(12)
        self.message_layout.addWidget(self.older_button, 0, Qt.AlignmentFlag.AlignHCenter)
        # The second-to-last item of the list: "Loading…", or the welcome of a new conversation.
        self.placeholder = QWidget(self.messages)
        self.placeholder.setObjectName("messagePlaceholder")
        self.empty_label = QLabel(self.placeholder)
        self.empty_label.setObjectName("emptyLabel")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.welcome = WelcomePanel(self.placeholder)
        self.welcome.memory_settings_requested.connect(
            lambda: self.settings_page_requested.emit("memory")
        )
        placeholder_layout = QVBoxLayout(self.placeholder)
        placeholder_layout.setContentsMargins(0, 0, 0, 0)
        placeholder_layout.addWidget(self.empty_label)
        placeholder_layout.addWidget(self.welcome)
        self.message_layout.addWidget(self.placeholder)
        self.message_layout.addStretch(1)
        self.scroll = QScrollArea(self)
        self.scroll.setObjectName("messageScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.messages)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # The messages' own controls take the focus; the scroll area itself needs none.
        self.scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        bar = self.scroll.verticalScrollBar()
        bar.rangeChanged.connect(self._on_scroll_range_changed)
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.actionTriggered.connect(self._on_scroll_action_triggered)

        # What is below the messages keeps to their column: banner, edit bar and composer.
        self.bottom = QWidget(self)
        self.bottom.setObjectName("chatBottom")

        # Status / error banner
        self.banner = QFrame(self.bottom)
        self.banner.setObjectName("errorBanner")
        # The server's error body can be in it: plain text only.
        self.banner_label = make_plain(QLabel(self.banner))
        self.banner_label.setWordWrap(True)
        self.banner_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner_action = QPushButton(self.banner)
        self.banner_action.setObjectName("bannerAction")
        self.banner_close = QPushButton("×", self.banner)
        self.banner_close.setObjectName("bannerClose")
        self.banner_close.setFlat(True)
        close_font = QFont(self.banner_close.font())
        close_font.setBold(True)
        self.banner_close.setFont(close_font)
        banner_layout = QHBoxLayout(self.banner)
        banner_layout.setContentsMargins(10, 6, 6, 6)
        banner_layout.addWidget(self.banner_label, 1)
        banner_layout.addWidget(self.banner_action)
        banner_layout.addWidget(self.banner_close)
        self.banner.hide()

        # Composer
        self.edit_bar = QFrame(self.bottom)
        self.edit_bar.setObjectName("editBar")
        self.edit_label = QLabel(self.edit_bar)
        self.edit_cancel = QPushButton(self.edit_bar)
        self.edit_cancel.setObjectName("editCancel")
        self.edit_cancel.setFlat(True)
        edit_layout = QHBoxLayout(self.edit_bar)
        edit_layout.setContentsMargins(10, 2, 6, 2)
        edit_layout.addWidget(self.edit_label, 1)
        edit_layout.addWidget(self.edit_cancel)
        self.edit_bar.hide()
        self.composer = Composer(self.bottom)
        self.composer.setObjectName("composer")
        self.composer.setTabChangesFocus(True)
        self.composer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.send_button = QPushButton(self.bottom)
        self.send_button.setObjectName("sendButton")
        self.send_button.setDefault(True)
        self.attach_button = attached.AttachButton(self.bottom)
        composer_row = QHBoxLayout()
        composer_row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        composer_row.addWidget(self.composer, 1)
        composer_row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        bottom_layout = QVBoxLayout(self.bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.banner)
        bottom_layout.addWidget(self.edit_bar)
        # Pasted texts too long for the editor, each with its size and a remove button.
        self.pastes_box = QWidget(self.bottom)
        self.pastes_box.setObjectName("pastedTexts")
        self._pastes_layout = QVBoxLayout(self.pastes_box)
        self._pastes_layout.setContentsMargins(0, 0, 0, 0)
        self._pastes_layout.setSpacing(4)
        self.pastes_box.hide()
        bottom_layout.addWidget(self.pastes_box)
        # The files attached to the draft (images, documents), each with its × button.
        self.attachment_tray = attached.AttachmentTray(self.bottom)
        bottom_layout.addWidget(self.attachment_tray)
        bottom_layout.addLayout(composer_row)
        self.queue_label = QLabel(self.bottom)
        self.queue_label.setObjectName("queuedNote")
        self.queue_label.setWordWrap(True)
        self.queue_label.hide()
        bottom_layout.addWidget(self.queue_label)
        self.token_label = QLabel(self.bottom)
        self.token_label.setObjectName("tokenCount")
        self.token_label.setWordWrap(True)
        self.token_label.hide()
        # The quiet model and token line (ui/composer_indicator.py), right of the token line.
        self.model_indicator = ModelTokenIndicator(self.bottom)
        token_row = QHBoxLayout()
        token_row.setContentsMargins(0, 0, 0, 0)
        token_row.addWidget(self.token_label, 1)
        token_row.addWidget(
            self.model_indicator, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop
        )
        bottom_layout.addLayout(token_row)
        # Counting on every keystroke would stall typing in a long draft: once typing pauses.
        self._count_timer = QTimer(self)
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(150)
        self._count_timer.timeout.connect(self._update_token_count)
        # Pasted text is counted once, a step per pass of the event loop.
        self._paste_count_timer = QTimer(self)
        self._paste_count_timer.setInterval(0)
        self._paste_count_timer.timeout.connect(self._count_pastes)
        bottom_row = QHBoxLayout()
        bottom_row.addStretch(0)
        bottom_row.addWidget(self.bottom, 1)
        bottom_row.addStretch(0)

        # A conversation the companion started (a check-in) says so at its top.
        self.checkin_mark = CheckinMark(lambda: self.companion_name, self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 8, 8, 8)
        layout.addLayout(header)
        layout.addWidget(self.checkin_mark)
        layout.addWidget(self.scroll, 1)
        layout.addLayout(bottom_row)

        self.composer.submitted.connect(self._on_enter)
        self.composer.edit_last_requested.connect(self.edit_last_message)
        self.composer.textChanged.connect(self._on_draft_changed)
        self.composer.large_text_pasted.connect(self.add_pasted_text)
        self.composer.files_dropped.connect(self.attach_files)
        self.composer.image_pasted.connect(self.attach_image)
        self.attach_button.clicked.connect(self._on_attach_clicked)
        self.attachment_tray.changed.connect(self._on_draft_changed)
        # Files dropped anywhere on the chat attach to the draft.
        self.setAcceptDrops(True)
        self.send_button.clicked.connect(self._on_send_clicked)
        self.older_button.clicked.connect(self._on_older_clicked)
        self.banner_action.clicked.connect(self._on_banner_action)
        self.banner_close.clicked.connect(self.banner.hide)
        self.edit_cancel.clicked.connect(self.cancel_edit)
        self.temporary.toggled.connect(self.temporary_toggled)
        self.provider_combo.activated.connect(self._on_model_chosen)
        self.model_combo.activated.connect(self._on_model_chosen)
        if (line_edit := self.model_combo.lineEdit()) is not None:
            line_edit.editingFinished.connect(self._on_model_chosen)
        self._fit_to_font()
        self.retranslate()
        self.show_conversation(None, [], has_more=False)

    # -- look ---------------------------------------------------------------------------------

    def column_width(self) -> int:
        """How wide the messages' column is: the avatar and ~80 characters of text."""
        metrics = QFontMetricsF(self.font())
        return text_column_width(metrics) + 2 * round(metrics.height()) + 10

    def bubble_width(self) -> int:
        """The widest a user's bubble grows: three quarters of the column on screen."""
        return bubble_max_width(self.column_width(), self.messages.shown_column_width())

    def _fit_bubbles(self) -> None:
        width = self.bubble_width()
        for widget in self._widgets.values():
            if widget.is_user and widget.maximumWidth() != width:
                widget.setMaximumWidth(width)

    def _fit_to_font(self) -> None:
        # Sizes follow the UI font, so the font-size setting scales them (the title's is a
        # style sheet rule: ui.theme.font_rules).
        metrics = self.fontMetrics()
        self.composer.setFixedHeight(4 * metrics.lineSpacing() + 24)
        column = self.column_width()
        self.messages.set_column_width(column)
        self.bottom.setMaximumWidth(column)
        self._fit_bubbles()

    def set_persona(self, chosen_name: str, ui_language: str) -> None:
        """The name set in Settings ("" for none) and the UI language the default name is in.

        The name shown is the one the conversation's prompt gives: the conversation's own, else
        this one, else the default name in the conversation's language (``companion_name``).
        """
        self._persona_choice = (chosen_name, ui_language)
        self._show_companion_name()

    def set_companion_avatar(self, avatar: QImage | None) -> None:
        """The companion's avatar (``None``: its initial) beside its replies."""
        self.companion_avatar = avatar
        for widget in self._widgets.values():
            if widget.is_assistant:
                widget.set_avatar(avatar)
        self.welcome.set_companion(self.companion_name, avatar)

    def _show_companion_name(self) -> None:
        chosen, ui_language = self._persona_choice
        texts = [text for _id, text in sorted(self._user_texts.items())]
        name = companion_name(texts, ui_language, self._conversation_persona, chosen)
        if name == self.companion_name:
            return
        self.companion_name = name
        self.checkin_mark.retranslate()
        for widget in self._widgets.values():
            if widget.is_assistant:
                widget.set_author(name)
        self.welcome.set_companion(name, self.companion_avatar)

    def set_memory_state(self, *, enabled: bool, count: int | None = None) -> None:
        """What the welcome says about memory: on or off, and how many memories there are."""
        self._memory_enabled = enabled
        self.welcome.set_memory(
            count=count, enabled=enabled, temporary=self._temporary_conversation
        )

    def welcome_shown(self) -> bool:
        """Whether the welcome of a new conversation is on screen."""
        return self.welcome.isVisibleTo(self)

    # -- translation --------------------------------------------------------------------------

    def retranslate(self) -> None:
        self.temporary.setText(self.tr("Temporary"))
        self.composer.setAccessibleName(self.tr("Message"))
        self.provider_combo.setAccessibleName(self.tr("Provider"))
        self.model_combo.setAccessibleName(self.tr("Model"))
        self.banner_close.setAccessibleName(self.tr("Dismiss"))
        self.banner_close.setToolTip(self.tr("Dismiss this message"))
        self.scroll.setAccessibleName(self.tr("Messages"))
        self.temporary.setToolTip(
            self.tr("A temporary conversation reads and writes no memory, summaries or profile.")
        )
        self.provider_combo.setToolTip(self.tr("Provider for this conversation"))
        self.model_combo.setToolTip(self.tr("Model for this conversation"))
        self.older_button.setText(self.tr("Load earlier messages"))
        self.composer.setPlaceholderText(
            self.tr("Write a message — Enter to send, Shift+Enter for a new line")
        )
        self.edit_label.setText(self.tr("Editing a message: sending drops the replies after it."))
        self.edit_cancel.setText(self.tr("Cancel"))
        self.attach_button.setToolTip(
            self.tr("Attach images or files (or drop them here, or paste an image)")
        )
        self.attach_button.setAccessibleName(self.tr("Attach files"))
        self._update_token_count()
        self.queue_label.setText(self._queued_text())
        if self.empty_label.property("loading"):
            self.empty_label.setText(self.tr("Loading…"))
        self._update_send_button()
        if self._untitled:
            self.title.setText(self.checkin_mark.untitled() or self.tr("New conversation"))
        if self.provider_combo.count():
            self.provider_combo.setItemText(0, self.tr("Default provider"))
        if self.model_combo.count():
            self.model_combo.setItemText(0, self.tr("Provider's chat model"))
        if self._banner_words is not None:
            self.banner_label.setText(self._banner_words())
        if self.banner_action.isVisibleTo(self.banner):
            self.banner_action.setText(
                self.tr("Open settings") if self._error_action == "settings" else self.tr("Retry")
            )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.FontChange:
            self._fit_to_font()
        super().changeEvent(event)

    # -- providers ----------------------------------------------------------------------------

    def set_providers(self, providers: list[tuple[str, str, list[str]]]) -> None:
        """Fill the provider picker: (id, name, models) with "" meaning the default provider."""
        self._providers = providers
        self.provider_combo.blockSignals(True)
        self.provider_combo.clear()
        self.provider_combo.addItem(self.tr("Default provider"), "")
        for provider_id, name, _models in providers:
            self.provider_combo.addItem(name, provider_id)
        self.provider_combo.blockSignals(False)

    def _models_for(self, provider_id: str) -> list[str]:
        for pid, _name, models in getattr(self, "_providers", []):
            if pid == provider_id or (not provider_id and pid == self._default_provider_id()):
                return models
        return []

    def _default_provider_id(self) -> str:
        providers = getattr(self, "_providers", [])
        return providers[0][0] if providers else ""

    def _show_model(self, provider_id: str | None, model: str | None) -> None:
        self.provider_combo.blockSignals(True)
        self.model_combo.blockSignals(True)
        index = self.provider_combo.findData(provider_id or "")
        self.provider_combo.setCurrentIndex(max(index, 0))
        self.model_combo.clear()
        self.model_combo.addItem(self.tr("Provider's chat model"), "")
        for name in self._models_for(provider_id or ""):
            self.model_combo.addItem(name, name)
        if model:
            found = self.model_combo.findData(model)
            if found < 0:
                self.model_combo.addItem(model, model)
                found = self.model_combo.count() - 1
            self.model_combo.setCurrentIndex(found)
        else:
            self.model_combo.setCurrentIndex(0)
        self.provider_combo.blockSignals(False)
        self.model_combo.blockSignals(False)

    def _on_model_chosen(self) -> None:
        provider_id = str(self.provider_combo.currentData() or "")
        text = self.model_combo.currentText().strip()
        model = "" if text == self.model_combo.itemText(0) else text
        self.model_change_requested.emit(provider_id, model)

    # -- conversation ------------------------------------------------------------------------

    def show_conversation(
        self, conversation: ConversationRow | None, messages: list[MessageRow], *, has_more: bool
    ) -> None:
        """Replace what is shown with ``messages`` (the newest page) of ``conversation``."""
        for widget in self._widgets.values():
            self._discard(widget)
        for note in self.memory_notes():
            if note.parentWidget() is self.messages:
                self._discard(note)
        self._widgets.clear()
        self._user_texts.clear()
        self._reply_of.clear()
        self._reply_widget_for_user.clear()
        self._first_id = None
        self.cancel_edit()
        self.banner.hide()
        self._temporary_conversation = conversation is not None and conversation.temporary
        self._conversation_persona = None
        self.checkin_mark.show_for(conversation)
        if conversation is None:
            self._untitled = True
            self.title.setText(self.tr("New conversation"))
            self._show_model(None, None)
            self.temporary.blockSignals(True)
            self.temporary.setChecked(False)
            self.temporary.blockSignals(False)
            self.temporary.setEnabled(True)
        else:
            self.set_conversation_header(conversation)
        self.empty_label.setProperty("loading", False)
        self.empty_label.clear()
        self.empty_label.hide()
        for row in messages:
            if row.role == "user":
                self._user_texts[row.id or 0] = row.content[:NAME_SAMPLE_CHARS]
        self._show_companion_name()
        for row in messages:
            self._add_widget(row, at_top=False)
        self._first_id = messages[0].id if messages else None
        self._fetching_older = False
        self.older_button.setVisible(has_more)
        self._show_welcome(not messages)
        self.temporary.setEnabled(not messages)
        self._stick_to_bottom = True
        self._scroll_to_bottom()
        self.composer.setFocus()

    def show_loading(self) -> None:
        """A conversation is being opened: show that at once instead of the previous one."""
        self.show_conversation(None, [], has_more=False)
        self._untitled = False
        self.title.setText("")
        self._show_welcome(False)
        self.empty_label.setProperty("loading", True)
        self.empty_label.setText(self.tr("Loading…"))
        self.empty_label.show()
        self.placeholder.show()
        self.temporary.setEnabled(False)

    def set_draft(self, *, temporary: bool) -> None:
        """Show the choices of a new conversation that has no message yet."""
        self.temporary.blockSignals(True)
        self.temporary.setChecked(temporary)
        self.temporary.blockSignals(False)
        self._temporary_conversation = temporary
        self.set_memory_state(enabled=self._memory_enabled, count=self.welcome.memory_count)

    def _show_welcome(self, shown: bool) -> None:
        self.welcome.set_memory(
            count=self.welcome.memory_count,
            enabled=self._memory_enabled,
            temporary=self._temporary_conversation,
        )
        self.welcome.setVisible(shown)
        self.placeholder.setVisible(shown or self.empty_label.isVisibleTo(self.placeholder))

    def set_conversation_header(self, conversation: ConversationRow) -> None:
        """Show the conversation's title, model, temporary state and companion's name."""
        self._conversation_persona = conversation.persona_name
        self._show_companion_name()
        self.checkin_mark.show_for(conversation)
        self._untitled = not conversation.title
        self.title.setText(
            conversation.title or self.checkin_mark.untitled() or self.tr("New conversation")
        )
        self._temporary_conversation = conversation.temporary
        self._show_model(conversation.provider_id, conversation.model)
        self.temporary.blockSignals(True)
        self.temporary.setChecked(conversation.temporary)
        self.temporary.blockSignals(False)
        # Temporary is chosen before the first message; switching later would be a lie.
        self.temporary.setEnabled(not self._widgets)

    def prepend_messages(self, messages: list[MessageRow], *, has_more: bool) -> None:
        """Insert an older page above what is shown, keeping the view where it was."""
        bar = self.scroll.verticalScrollBar()
        distance_from_bottom = bar.maximum() - bar.value()
        for row in messages:
            if row.role == "user":
                self._user_texts[row.id or 0] = row.content[:NAME_SAMPLE_CHARS]
        self._show_companion_name()
        for row in reversed(messages):
            self._add_widget(row, at_top=True)
        if messages:
            self._first_id = messages[0].id
        self._fetching_older = False
        self.older_button.setVisible(has_more)
        self._stick_to_bottom = False
        # Kept as the page is laid out (the range grows in steps, as the messages' documents
        # are laid out), until the user scrolls again.
        self._bottom_anchor = distance_from_bottom
        bar.setValue(bar.maximum() - distance_from_bottom)

    def _author(self, role: str) -> str:
        return self.tr("You") if role == "user" else self.companion_name

    def _add_widget(self, row: MessageRow, *, at_top: bool) -> MessageWidget:
        message_id = row.id or 0
        widget = MessageWidget(
            message_id,
            row.role,
            author=self._author(row.role),
            created_at=row.created_at,
            render_interval_ms=self.render_interval_ms,
            avatar=self.companion_avatar,
            parent=self.messages,
        )
        widget.set_text(row.content, streaming=False)
        widget.set_remember_available(not self._temporary_conversation)
        self._apply_status(widget, row)
        show_usage(widget, row, self.model_prices)
        widget.regenerate_requested.connect(self._on_widget_regenerate)
        widget.retry_requested.connect(self._on_widget_regenerate)
        widget.edit_requested.connect(self._on_widget_edit)
        widget.delete_requested.connect(self._on_widget_delete)
        widget.version_requested.connect(self._on_widget_version)
        widget.context_requested.connect(self.context_requested)
        widget.remember_requested.connect(self._on_widget_remember)
        if row.role == "assistant" and row.reply_to_id is not None:
            self._reply_of[message_id] = row.reply_to_id
            self._reply_widget_for_user[row.reply_to_id] = message_id
        elif row.role == "assistant":
            # A message the companion began with (a check-in) answers nothing to regenerate.
            widget.set_regenerate_available(False)
        self._widgets[message_id] = widget
        # Index 0 is the "load earlier" button; the last two items are the placeholder and stretch.
        position = 1 if at_top else self.message_layout.count() - 2
        if widget.is_user:
            widget.setMaximumWidth(self.bubble_width())
            self.message_layout.insertWidget(position, widget, 0, Qt.AlignmentFlag.AlignRight)
        else:
            self.message_layout.insertWidget(position, widget)
        self.placeholder.hide()
        return widget

    def _apply_status(self, widget: MessageWidget, row: MessageRow) -> None:
        quiet = (None, "stopped", "stream_ended")
        if row.status == "error" or (row.status == "interrupted" and row.error_code not in quiet):
            error = _error_from_row(row)
            widget.set_status(
                row.status, lambda: describe(error).message, retryable=_retryable(error)
            )
        else:
            widget.set_status(row.status, lambda: status_text(row.status, row.error_code))

    def _discard(self, widget: QWidget) -> None:
        # Keep the parent until Qt deletes it on this thread: an orphaned widget in a reference
        # cycle could be collected by Python's GC on the DB thread, which crashes Qt.
        self.message_layout.removeWidget(widget)
        widget.hide()
        widget.deleteLater()

    def warm_up(self) -> None:
        """Build and drop one message of each kind, off screen.

        The first message widget of a run creates ~50 of PySide's Python enum types lazily and
        formats its first dates: 50-150 ms on the UI thread, which the user's first message
        then waited for. Called once the app is idle after start-up.
        """
        for role in ("user", "assistant"):
            widget = MessageWidget(0, role, author="", parent=self)
            widget.hide()
            widget.set_text("**warm** `up`", streaming=False)
            widget.set_status("interrupted", lambda: status_text("interrupted", "stopped"))
            widget.set_status("complete")
            widget.deleteLater()

    def widget_count(self) -> int:
        return len(self._widgets)

    def loading_older(self) -> bool:
        """Whether an older page was asked for and is not shown yet."""
        return self._fetching_older

    def add_bar(self, bar: QWidget) -> None:
        """Show ``bar`` between the header and the messages (the find bar)."""
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(1, bar)

    def widget(self, message_id: int) -> MessageWidget | None:
        return self._widgets.get(message_id)

    # -- live events --------------------------------------------------------------------------

    def add_user_message(self, row: MessageRow) -> None:
        self._user_texts[row.id or 0] = row.content[:NAME_SAMPLE_CHARS]
        self._show_companion_name()
        self._add_widget(row, at_top=False)
        self.temporary.setEnabled(False)
        self._stick_to_bottom = True
        if self._editing_id is not None:
            self.cancel_edit()
        self._clear_draft()
        self.banner.hide()

    def drop_from(self, message_id: int) -> None:
        """An edit hid ``message_id`` and everything after it: take them off the view."""
        widget = self._widgets.get(message_id)
        if widget is None:
            return
        start = self.message_layout.indexOf(widget)
        doomed = []
        for index in range(start, self.message_layout.count()):
            item = self.message_layout.itemAt(index)
            shown = item.widget() if item is not None else None
            if shown is not None and shown is not self.placeholder:
                doomed.append(shown)
        for shown in doomed:
            if isinstance(shown, MessageWidget):
                self._forget(shown.message_id)
            self._discard(shown)

    def _forget(self, message_id: int) -> None:
        self._widgets.pop(message_id, None)
        if self._user_texts.pop(message_id, None) is not None:
            self._show_companion_name()
        user_id = self._reply_of.pop(message_id, None)
        if user_id is not None and self._reply_widget_for_user.get(user_id) == message_id:
            del self._reply_widget_for_user[user_id]

    def start_reply(self, row: MessageRow) -> None:
        old = self._reply_widget_for_user.get(row.reply_to_id or -1)
        widget = self._add_widget(row, at_top=False)
        if old is not None and old in self._widgets:
            # A regenerated version replaces the old one in place.
            old_widget = self._widgets.pop(old)
            index = self.message_layout.indexOf(old_widget)
            self.message_layout.removeWidget(widget)
            self.message_layout.insertWidget(index, widget)
            self._discard(old_widget)
        widget.set_status("streaming", lambda: status_text("streaming", None))
        self._stick_to_bottom = True

    def update_reply(self, message_id: int, text: str) -> None:
        widget = self._widgets.get(message_id)
        if widget is not None:
            widget.set_text(text, streaming=True)
            widget.set_status("streaming", lambda: status_text("streaming", None))

    def show_retry(self, message_id: int, seconds: float, reason: str) -> None:
        widget = self._widgets.get(message_id)
        if widget is not None:
            widget.set_status("streaming", lambda: retry_reason_text(reason), retry_in=seconds)

    def finish_reply(self, row: MessageRow) -> None:
        widget = self._widgets.get(row.id or 0)
        if widget is not None:
            widget.set_text(row.content, streaming=False)
            self._apply_status(widget, row)
            show_usage(widget, row, self.model_prices)
        if row.status == "complete" and self._banner_source == "reply":
            # A retry (or the next reply) worked: the failure is over.
            self.banner.hide()

    def fail_reply(self, row: MessageRow, error: EtosError) -> None:
        widget = self._widgets.get(row.id or 0)
        if widget is not None:
            widget.set_text(row.content, streaming=False)
            widget.set_status(
                row.status, lambda: describe(error).message, retryable=_retryable(error)
            )
        self.show_error(error, user_message_id=row.reply_to_id)

    def set_model_prices(self, prices: dict[str, ModelPrice]) -> None:
        """Cost the replies shown at these prices from now on (Settings → Providers changed)."""
        self.model_prices = dict(prices)
        reprice(self._widgets.values(), self.model_prices)

    def set_versions(self, user_message_id: int, index: int, count: int) -> None:
        widget_id = self._reply_widget_for_user.get(user_message_id)
        if widget_id is not None and widget_id in self._widgets:
            self._widgets[widget_id].set_versions(index, count)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._update_send_button()
        # The reply ended: the message Enter queued goes now, as if sent just then.
        self._send_queued()

    def set_starting(self, starting: bool) -> None:
        """Whether the app's services are still starting: sending queues the message until then.

        The composer takes text from the first frame; a message sent before the database and
        the provider are up waits, shown as queued, and goes out when this is set to ``False``.
        """
        self._starting = starting
        self._update_send_button()
        if self._queued is not None:
            self.queue_label.setText(self._queued_text())
        self._send_queued()

    def queued_message(self) -> str | None:
        """The message waiting to be sent (for a reply to end, or for the app to start), if any."""
        return self._queued

    def discard_queued(self) -> None:
        """Forget the queued message (quitting without sending it); its text stays in the composer."""
        self._queued = None
        self.queue_label.hide()

    def _send_queued(self) -> None:
        if self._busy or self._starting or self._queued is None:
            return
        self._queued = None
        self.queue_label.hide()
        if self._draft_revision == self._queued_revision:
            self._on_send_clicked()

    def _on_enter(self) -> None:
        """Enter sends; while a reply streams it queues the message (only Esc and Stop stop)."""
        if not self._busy and not self._starting:
            self._on_send_clicked()
            return
        self._queue()

    def _queue(self) -> None:
        if not self.has_text() or self._editing_id is not None:
            return
        self._queued = self.draft_text()
        self._queued_revision = self._draft_revision
        self.queue_label.setText(self._queued_text())
        self.queue_label.show()

    def _queued_text(self) -> str:
        if self._starting:
            return self.tr(
                "Queued: your message is sent as soon as ETOS Desktop has started. "
                "Edit it to cancel."
            )
        return self.tr("Queued: your message is sent when the reply ends. Edit it to cancel.")

    # -- the draft: the editor's text and the pasted texts ------------------------------------

    def draft_text(self) -> str:
        """The message being written: the editor's text, then each pasted text, a blank line apart."""
        typed = self.composer.toPlainText()
        parts = [typed] if typed.strip() or not self._pastes else []
        return "\n\n".join([*parts, *(paste.text for paste in self._pastes)])

    def has_text(self) -> bool:
        """Whether the draft holds anything to send (whitespace alone is not a message).

        Attached files are something to send on their own.
        """
        return bool(self._pastes) or bool(self.attachment_tray.chips()) or self.composer.has_text()

    def pasted_texts(self) -> list[PastedText]:
        """The pasted texts kept beside the editor, in the order they were pasted."""
        return list(self._pastes)

    def add_pasted_text(self, text: str) -> PastedText:
        """Keep ``text`` beside the editor as pasted text, sent with the message."""
        paste = PastedText(text, self.pastes_box)
        paste.remove_requested.connect(lambda: self._remove_paste(paste))
        self._pastes.append(paste)
        self._pastes_layout.addWidget(paste)
        self.pastes_box.show()
        self._paste_count_timer.start()
        self._on_draft_changed()
        return paste

    def _remove_paste(self, paste: PastedText) -> None:
        if paste not in self._pastes:
            return
        self._pastes.remove(paste)
        self._pastes_layout.removeWidget(paste)
        paste.hide()
        paste.deleteLater()
        self.pastes_box.setVisible(bool(self._pastes))
        self._on_draft_changed()
        self.composer.setFocus()

    def _set_draft(self, text: str) -> None:
        """Put ``text`` in the composer (as pasted text when it is too long for the editor)."""
        self._clear_pastes()
        self.attachment_tray.clear()
        if is_large_paste(text):
            self.composer.clear()
            self.add_pasted_text(text)
        else:
            self.composer.setPlainText(text)

    def _clear_draft(self) -> None:
        self._clear_pastes()
        self.attachment_tray.clear()
        self.composer.clear()

    def _clear_pastes(self) -> None:
        for paste in list(self._pastes):
            self._remove_paste(paste)

    def _on_draft_changed(self) -> None:
        # Per keystroke: nothing here reads the whole text (a 10 MB draft stalled typing).
        self._draft_revision += 1
        if self._queued is not None and self._draft_revision != self._queued_revision:
            self._queued = None  # Changed after Enter: it waits for the next Enter.
            self.queue_label.hide()
        self._update_send_button()
        if self._room is not None:
            self._count_timer.start()

    def _count_pastes(self) -> None:
        pending = next((paste for paste in self._pastes if paste.cjk is None), None)
        if pending is not None:
            pending.count_step()
        if all(paste.cjk is not None for paste in self._pastes):
            self._paste_count_timer.stop()
            self._update_token_count()

    def _finish_counts(self) -> None:
        """Count the rest of the pasted texts now (before a send decides)."""
        for paste in self._pastes:
            while not paste.count_step():
                pass
        self._paste_count_timer.stop()
        self._update_token_count()

    def _update_send_button(self) -> None:
        self.send_button.setText(self.tr("Stop") if self._busy else self.tr("Send"))
        # Whitespace alone is not a message: Send waits for text (Stop is always there).
        self.send_button.setEnabled(
            self._busy or (not self.composer.isReadOnly() and self.has_text())
        )
        self.send_button.setToolTip(
            self.tr("Stop the reply (what arrived is kept)")
            if self._busy
            else self._no_images_text()
            if self._no_images
            else self._too_long_text()
            if self._too_long
            else self.tr("Send (Enter)")
        )

    # -- the message's length -----------------------------------------------------------------

    def set_message_room(self, room: MessageRoom | None) -> None:
        """How long a message the open conversation takes (a ``MessageRoom``; ``None``: unknown)."""
        self._room = room
        self._update_token_count()

    def draft_tokens(self) -> int | None:
        """The draft's token estimate (``estimate_message_tokens`` of ``draft_text()``).

        Taken from the pasted texts' counts (``None`` while one is being counted) and the
        editor's text, without joining them: the editor's text is the only part read here.
        """
        from etos_desktop.core.context.tokens import (
            CHARS_PER_TOKEN,
            MESSAGE_OVERHEAD_TOKENS,
            count_cjk,
        )

        if any(paste.cjk is None for paste in self._pastes):
            return None
        typed = self.composer.toPlainText()
        parts = [typed] if typed.strip() or not self._pastes else []
        parts_chars = sum(map(len, parts)) + sum(len(paste.text) for paste in self._pastes)
        chars = parts_chars + 2 * max(0, len(parts) + len(self._pastes) - 1)
        files = self.draft_attachments()
        if not chars and not files:
            return 0
        cjk = sum(map(count_cjk, parts)) + sum(paste.cjk or 0 for paste in self._pastes)
        text = MESSAGE_OVERHEAD_TOKENS + cjk + -(-(chars - cjk) // CHARS_PER_TOKEN)
        return text + _attachment_cost(files)

    def _update_token_count(self) -> None:
        """Near the model's limit, say how much of it the draft takes; over it, refuse it."""
        self._count_timer.stop()
        room = self._room
        # Without a limit there is nothing to say, and nothing to count.
        tokens = self.draft_tokens() if room is not None and self.has_text() else 0
        if tokens is None:
            return  # a pasted text is being counted: this runs again when it is
        self._draft_tokens = tokens
        self._too_long = room is not None and tokens > room.tokens
        self._no_images = (
            room is not None
            and not room.images
            and any(a.kind == "image" for a in self.draft_attachments())
        )
        locale = self.locale()
        if self._no_images:
            self.token_label.setText(self._no_images_text())
            kind = "error"
        elif self._too_long:
            self.token_label.setText(self._too_long_text())
            kind = "error"
        elif room is not None and tokens and tokens >= room.tokens // 2:
            self.token_label.setText(
                self.tr("About {tokens} of the {room} tokens {model} takes for a message").format(
                    tokens=locale.toString(tokens),
                    room=locale.toString(room.tokens),
                    model=room.model,
                )
            )
            kind = ""
        else:
            kind = None
        self.token_label.setVisible(kind is not None)
        self.model_indicator.show_state(
            room.model if room is not None else "", tokens, room.tokens if room is not None else 0
        )
        if kind is not None and self.token_label.property("kind") != kind:
            self.token_label.setProperty("kind", kind)
            self.token_label.style().unpolish(self.token_label)
            self.token_label.style().polish(self.token_label)
        self._update_send_button()

    def _too_long_text(self) -> str:
        room = self._room
        if room is None:
            return ""
        locale = self.locale()
        return self.tr(
            "Too long to send: about {tokens} tokens, and {model} takes {room} for a message in "
            "this conversation. Shorten it, or pick a model with a larger context."
        ).format(
            tokens=locale.toString(self._draft_tokens),
            room=locale.toString(room.tokens),
            model=room.model,
        )

    def _no_images_text(self) -> str:
        room = self._room
        if room is None:
            return ""
        return self.tr(
            "{model} does not accept images. Remove the images, pick a model that accepts "
            "them, or say in Settings → Providers that this one does."
        ).format(model=room.model)

    # -- attachments --------------------------------------------------------------------------

    def draft_attachments(self) -> list[PreparedAttachment]:
        """The files attached to the draft, in order."""
        return self.attachment_tray.attachments()

    def _on_attach_clicked(self) -> None:
        self._tasks.spawn(self._choose_files())

    async def _choose_files(self) -> None:
        paths = await dialogs.choose_open_paths(
            self,
            self.tr("Attach files"),
            self.tr("Images and documents ({patterns});;All files (*)").format(
                patterns=_ATTACH_PATTERNS
            ),
        )
        if paths:
            self.attach_files(paths)

    def attach_files(self, paths: list[str]) -> None:
        """Read and prepare files for the draft off the UI thread; a refusal says why.

        One after another, so their chips come in the order the files were given.
        """
        if paths:
            self._preparing += len(paths)
            self._tasks.spawn(self._prepare_all(list(paths)))

    async def _prepare_all(self, paths: list[str]) -> None:
        for path in paths:
            await self._prepare(lambda p=path: attached.prepare_file(p))

    def attach_image(self, image: QImage) -> None:
        """Attach a pasted or dropped picture (named after the time it was pasted)."""
        from datetime import datetime

        name = f"pasted-image-{datetime.now():%Y%m%d-%H%M%S}.png"
        copy = QImage(image)
        self._preparing += 1
        self._tasks.spawn(self._prepare(lambda: attached.prepare_pasted(copy, name)))

    async def _prepare(self, work: Callable[[], attached.Draft]) -> None:
        import asyncio

        from etos_desktop.core.chat.attachments import MAX_ATTACHMENTS
        from etos_desktop.core.errors import AttachmentRefused

        try:
            draft = await asyncio.to_thread(work)
        except AttachmentRefused as error:
            self.show_error(error, source="attachment")
            return
        finally:
            self._preparing -= 1
        if len(self.attachment_tray.chips()) >= MAX_ATTACHMENTS:
            self.show_error(
                AttachmentRefused(
                    "too many", name=draft.attachment.name, reason="too_many", limit=MAX_ATTACHMENTS
                ),
                source="attachment",
            )
            return
        if self._banner_source == "attachment":
            self.banner.hide()
        self.attachment_tray.add(draft)

    def preparing_attachments(self) -> int:
        """How many files are still being read for the draft."""
        return self._preparing

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _attachable(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if _attachable(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        mime = event.mimeData()
        kind = _attachable(mime)
        if not kind:
            super().dropEvent(event)
            return
        event.acceptProposedAction()
        if kind == "files":
            self.attach_files([url.toLocalFile() for url in mime.urls() if url.isLocalFile()])
        else:
            self.attach_image(mime.imageData())
        self.composer.setFocus()

    def show_attachments(self, shown: dict[int, list[attached.Shown]]) -> None:
        """Show the attachments of messages on screen (by message id), under their headers."""
        for message_id, items in shown.items():
            widget = self._widgets.get(message_id)
            if widget is None or not items:
                continue
            strip = attached.MessageAttachments(items)
            strip.open_requested.connect(self._on_attachment_open_requested)
            widget.set_attachments(strip)

    def _on_attachment_open_requested(self, record: object) -> None:
        self._tasks.spawn(self._open_attachment(record))

    async def _open_attachment(self, record: object) -> None:
        import asyncio

        reader = self.attachment_reader
        if reader is None:
            return
        kind, name, sha = (getattr(record, key) for key in ("kind", "name", "sha256"))
        try:
            data = await reader(sha)
        except Exception as error:  # a file removed by hand: say so, in the banner
            self.show_error(error, what=self.tr("The attachment was not opened."))
            return
        if kind == "image":
            image = await asyncio.to_thread(attached.full_image, data)
            dialog: QWidget = attached.ImageViewerDialog(name, image, self.window())
        else:
            text = data.decode("utf-8", errors="replace")
            dialog = attached.DocumentViewerDialog(name, text, getattr(record, "tokens", 0), self)
        dialog.open()  # type: ignore[attr-defined]

    # -- memory -------------------------------------------------------------------------------

    def show_memory_saved(self, event: MemorySaved, *, under: int | None = None) -> MemoryNote:
        """Show a note that a memory was saved, with Edit and Undo.

        Args:
            event: The save.
            under: The message to show it under (default: the event's reply). Without one shown
                here, the note stands on its own at the end of the chat (``/remember``).
        """
        note = MemoryNote(
            event.memory_id,
            event.content,
            merged=event.merged,
            superseded=event.superseded,
            parent=self.messages,
        )
        note.edit_requested.connect(self._on_note_edit)
        note.undo_requested.connect(self._on_note_undo)
        anchor = self._widgets.get(under if under is not None else event.message_id or -1)
        if anchor is not None:
            anchor.add_note(note)
        else:
            self.message_layout.insertWidget(self.message_layout.count() - 2, note)
            self.placeholder.hide()
            self._stick_to_bottom = True
        return note

    def memory_notes(self, memory_id: int | None = None) -> list[MemoryNote]:
        """The memory notes shown (those of ``memory_id`` only, if given), in creation order."""
        notes = self.messages.findChildren(MemoryNote)
        return [n for n in notes if memory_id is None or n.memory_id == memory_id]

    def set_memory_text(self, memory_id: int, text: str) -> None:
        """A memory was edited: its notes show the new text."""
        for note in self.memory_notes(memory_id):
            note.set_content(text)
            note.set_busy(False)

    def mark_memory_undone(self, memory_id: int) -> None:
        """A save was undone: its notes say so."""
        for note in self.memory_notes(memory_id):
            note.set_undone()

    def set_memory_busy(self, memory_id: int, busy: bool) -> None:
        """Disable the notes' buttons of ``memory_id`` while an action on it runs."""
        for note in self.memory_notes(memory_id):
            note.set_busy(busy)

    def show_memory_error(self, memory_id: int, text: str) -> None:
        """An action on a note failed: the note says why."""
        for note in self.memory_notes(memory_id):
            note.set_error(text)

    def remember_command_saved(self, event: MemorySaved) -> MemoryNote:
        """The composer's ``/remember`` was saved: clear the composer and show a note."""
        pending, self._pending_remember = self._pending_remember, None
        if pending is not None and self.draft_text() == pending:
            self._clear_draft()
        if self._banner_source == "remember":
            self.banner.hide()  # An earlier /remember was refused; this one is saved.
        return self.show_memory_saved(event)

    def remember_command_failed(self) -> None:
        """The composer's ``/remember`` was refused: its text stays for the user to fix."""
        self._pending_remember = None

    def _on_note_edit(self, memory_id: int) -> None:
        notes = self.memory_notes(memory_id)
        if notes:
            self.memory_edit_requested.emit(memory_id, notes[-1].content)

    def _on_note_undo(self, memory_id: int) -> None:
        notes = self.memory_notes(memory_id)
        if notes:
            note = notes[-1]
            self.set_memory_busy(memory_id, True)
            self.memory_undo_requested.emit(memory_id, note.superseded, note.merged)

    def _on_widget_remember(self, message_id: int) -> None:
        widget = self._widgets.get(message_id)
        if widget is not None and widget.text().strip():
            self.remember_requested.emit(message_id, widget.text())

    # -- errors -------------------------------------------------------------------------------

    def show_error(
        self,
        error: BaseException,
        *,
        what: str = "",
        user_message_id: int | None = None,
        source: str = "",
    ) -> None:
        """Show a failure in the banner, with the action that can fix it (settings, retry).

        Args:
            error: Why; anything but an ``EtosError`` is a bug and is said to be one.
            what: What was not done ("The conversation was not exported."), if not the reply.
            user_message_id: The user message whose reply failed (its Retry regenerates it).
            source: What failed, so its later success takes the banner away: ``"reply"`` (a
                reply that then completes), ``"remember"`` (a ``/remember`` that then saves).
        """
        self._banner_source = source or ("reply" if user_message_id is not None else "")
        action = ""
        if isinstance(error, EtosError):
            words = describe(error)
            action = words.action if _retryable(error) or words.action != "retry" else ""
        # Put into words again on a new language (``what`` was translated by the caller).
        # The words may quote the server ("The server refused the request: …").
        self._banner_words = lambda: neutralise_bidi(failure_text(what, error))
        self.banner_label.setText(self._banner_words())
        self._error_action = action
        self._error_user_message = user_message_id
        if action == "settings":
            self.banner_action.setText(self.tr("Open settings"))
            self.banner_action.show()
        elif action == "retry" and user_message_id is not None:
            self.banner_action.setText(self.tr("Retry"))
            self.banner_action.show()
        else:
            self.banner_action.hide()
        self.banner.show()

    def _on_banner_action(self) -> None:
        if self._error_action == "settings":
            self.settings_requested.emit()
        elif self._error_action == "retry" and self._error_user_message is not None:
            self.banner.hide()
            self.regenerate_requested.emit(self._error_user_message)

    # -- user actions -------------------------------------------------------------------------

    def _on_send_clicked(self) -> None:
        if self._busy:
            self.stop_requested.emit()
            return
        if self._starting:
            # Nothing can be saved or sent yet: it waits, shown as queued, and goes out then.
            self._queue()
            return
        if not self.has_text():
            return
        if self._count_timer.isActive() or self._paste_count_timer.isActive():
            self._finish_counts()
        text = self.draft_text()
        if self._preparing:
            return  # a file is still being read: Send again once its chip is there
        if self._too_long or self._no_images:
            # Refused here, before anything is saved: the text stays for the user to shorten.
            self.token_label.show()
            return
        if self._editing_id is not None:
            self._tasks.spawn(self._confirm_edit_resend(self._editing_id, text))
            return
        # Imported here: the chat service pulls in the storage and memory stacks, which load
        # after the first frame (app.HEAVY_MODULES); by the time anything is sent they are in.
        from etos_desktop.core.chat.service import REMEMBER_COMMAND

        if REMEMBER_COMMAND.match(text.strip()):
            self._pending_remember = text
        elif self.draft_attachments():
            # Cleared with the text once the message is saved; kept if it is refused.
            self.send_with_attachments_requested.emit(text, self.draft_attachments())
            return
        self.send_requested.emit(text)

    def _on_widget_regenerate(self, message_id: int) -> None:
        user_id = self._reply_of.get(message_id, message_id)
        self.regenerate_requested.emit(user_id)

    def _on_widget_edit(self, message_id: int) -> None:
        widget = self._widgets.get(message_id)
        if widget is None or self._busy:
            return
        self._editing_id = message_id
        self._set_draft(widget.text())
        # The edited message keeps its own files; none are added while editing.
        self.attach_button.setEnabled(False)
        self.composer.moveCursor(QTextCursor.MoveOperation.End)
        self.edit_bar.show()
        self.composer.setFocus()

    def _widgets_in_order(self) -> list[MessageWidget]:
        items = (self.message_layout.itemAt(i) for i in range(self.message_layout.count()))
        return [
            w
            for item in items
            if item is not None and isinstance(w := item.widget(), MessageWidget)
        ]

    def has_draft(self) -> bool:
        """Whether the user has written something in the composer (or queued a message)."""
        return (
            self._queued is not None
            or bool(self._pastes)
            or bool(self.attachment_tray.chips())
            or not self.composer.document().isEmpty()
        )

    def editing(self) -> bool:
        """Whether a sent message is being edited in the composer."""
        return self._editing_id is not None

    def last_reply(self) -> MessageWidget | None:
        """The newest reply shown, if any."""
        return next((w for w in reversed(self._widgets_in_order()) if w.is_assistant), None)

    def edit_last_message(self) -> bool:
        """Start editing the newest message the user wrote (Up in the empty composer)."""
        last = next((w for w in reversed(self._widgets_in_order()) if w.is_user), None)
        if last is None or self._busy:
            return False
        self._on_widget_edit(last.message_id)
        return self._editing_id == last.message_id

    def regenerate_last(self) -> bool:
        """Write the newest reply again (or answer the newest message that has none)."""
        shown = self._widgets_in_order()
        if self._busy or not shown:
            return False
        last = shown[-1]
        if last.is_assistant:
            self._on_widget_regenerate(last.message_id)
        else:
            self.regenerate_requested.emit(last.message_id)
        return True

    def copy_last_reply(self) -> bool:
        """Put the newest reply's Markdown on the clipboard."""
        reply = self.last_reply()
        if reply is None or not reply.text():
            return False
        QGuiApplication.clipboard().setText(reply.text())
        return True

    def focus_composer(self) -> None:
        """Put the keyboard focus in the composer, at the end of its text."""
        self.composer.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.composer.moveCursor(QTextCursor.MoveOperation.End)

    def cancel_edit(self) -> None:
        if self._editing_id is not None:
            self._editing_id = None
            self._clear_draft()
        self.edit_bar.hide()
        self.attach_button.setEnabled(True)

    async def _confirm_edit_resend(self, message_id: int, text: str) -> None:
        if await dialogs.confirm(
            self,
            self.tr("Resend edited message"),
            self.tr(
                "Send the edited message? The replies after the original are dropped from this conversation."
            ),
            self.tr("Send"),
        ):
            self.edit_resend_requested.emit(message_id, text)

    def _on_widget_delete(self, message_id: int) -> None:
        self._tasks.spawn(self._confirm_delete(message_id))

    async def _confirm_delete(self, message_id: int) -> None:
        if await dialogs.confirm(
            self,
            self.tr("Delete message"),
            self.tr("Delete this message? A message you wrote is deleted with its replies."),
            self.tr("Delete"),
            destructive=True,
        ):
            self.delete_message_requested.emit(message_id)

    def _on_widget_version(self, message_id: int, index: int) -> None:
        user_id = self._reply_of.get(message_id)
        if user_id is not None:
            self.version_requested.emit(user_id, index)

    def _on_older_clicked(self) -> None:
        if self._first_id is not None:
            self._fetching_older = True
            self.load_older_requested.emit(self._first_id)

    def _on_scroll_action_triggered(self, _action: int) -> None:
        # The user scrolled (wheel, keys, the scroll bar), not the view itself. Within half a
        # window of the top, the next older page is fetched, so scrolling up never runs into a
        # button to click; the position is adjusted before the value is set, hence
        # sliderPosition.
        self._bottom_anchor = None
        bar = self.scroll.verticalScrollBar()
        near_top = bar.sliderPosition() <= self.scroll.viewport().height() // 2
        if near_top and not self._fetching_older and self.older_button.isVisibleTo(self):
            self._on_older_clicked()

    # -- scrolling ----------------------------------------------------------------------------

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._stick_to_bottom:
            self._bottom_anchor = None
            self.scroll.verticalScrollBar().setValue(maximum)
        elif self._bottom_anchor is not None:
            self.scroll.verticalScrollBar().setValue(maximum - self._bottom_anchor)

    def _on_scroll_value_changed(self, value: int) -> None:
        bar = self.scroll.verticalScrollBar()
        self._stick_to_bottom = value >= bar.maximum() - 24

    def _scroll_to_bottom(self) -> None:
        bar = self.scroll.verticalScrollBar()
        bar.setValue(bar.maximum())


#: What the file chooser offers first (every kind ``core.chat.attachments`` attaches).
_ATTACH_PATTERNS = (
    "*.png *.jpg *.jpeg *.gif *.webp *.bmp *.pdf *.txt *.md *.markdown *.csv *.tsv *.json "
    "*.jsonl *.yaml *.yml *.xml *.html *.log *.py *.js *.ts *.java *.c *.cpp *.h *.cs *.go *.rs "
    "*.rb *.php *.swift *.kt *.sh *.sql *.toml *.ini"
)


def _attachment_cost(files: list[PreparedAttachment]) -> int:
    """The tokens the draft's files add (``core.chat.attachments.draft_cost``)."""
    if not files:
        return 0
    from etos_desktop.core.chat.attachments import draft_cost

    return draft_cost(files)


def _retryable(error: EtosError) -> bool:
    # Errors that are not user-facing outcomes (an unknown code) may well pass on a second try.
    return bool(getattr(error, "retryable", True))


def _error_from_row(row: MessageRow) -> EtosError:
    from etos_desktop.core import errors

    classes: dict[str, type[errors.EtosError]] = {}
    stack: list[type[errors.EtosError]] = [errors.EtosError]
    while stack:
        cls = stack.pop()
        classes.setdefault(cls.code, cls)
        stack.extend(cls.__subclasses__())
    cls = classes.get(row.error_code or "", errors.EtosError)
    return cls(row.error_detail or "")
