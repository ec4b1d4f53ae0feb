"""One chat message: who and when, its rendered Markdown, its status and its actions."""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QDate,
    QDateTime,
    QEvent,
    QLocale,
    QSize,
    Qt,
    QTime,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import (
    QDesktopServices,
    QEnterEvent,
    QGuiApplication,
    QImage,
    QPaintEvent,
    QPalette,
    QPixmap,
    QResizeEvent,
    QTextCursor,
    QTextDocumentFragment,
    QTextFormat,
    QTextOption,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.ui import theme
from etos_desktop.ui.avatar import avatar_pixmap
from etos_desktop.ui.bubbles import paint_bubble
from etos_desktop.ui.labels import plain_tooltip
from etos_desktop.ui.math_render import MathBrowserMixin
from etos_desktop.ui.message_actions import ActionBar, ActionButton

__all__ = ["MemoryNote", "MessageWidget"]

# Their look (object names userMessage/assistantMessage, messageRole…) is in resources/themes.

#: Must equal markdown_render.COPY_CODE_SCHEME (checked by a test); kept here so the module
#: can be imported without markdown.
_COPY_CODE_SCHEME = "copy-code"

STATUSES = ("complete", "streaming", "interrupted", "error")
_COPIED_FEEDBACK_MS = 1500
# While streaming, re-render no more often than this many times the last render took, so a very
# long reply cannot keep the UI thread busy rendering.
_ADAPTIVE_FACTOR = 3
#: A longer message shows its beginning and "Show all": laying out a 1 MB message took Qt
#: 1.5-2 s (and minutes for one unbroken line wrapped at word boundaries), all on the UI thread.
#: At 32,000 a conversation holding a long pasted message and a long reply took 110-170 ms to
#: open (rendering and laying out both previews, tests/bench/paste_stall.py); 16,000 characters
#: are still some 200 lines of a chat column.
PREVIEW_CHARS = 16_000
# A run this long without a space is wrapped anywhere: Qt's word-boundary-or-anywhere wrapping
# is quadratic in the length of an unbroken run (200,000 characters: 9.4 s; anywhere: 0.4 s).
_LONG_RUN_CHARS = 1000
_SPACE = re.compile(r"\s")


#: Where the avatar of a reply sits: the gap between it and the text, and its top margin.
_AVATAR_GAP = 10
_AVATAR_TOP = 6

#: While a reply streams, its finished part is rendered once in pieces of at least this many
#: characters, and only the rest is rendered again as it grows: re-rendering the whole reply every
#: 80 ms made the UI loop stall 58-118 ms on a long reply (tests/bench/stall.py).
STREAM_PIECE_CHARS = 1500
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COPY_LINK_RE = re.compile(r'href="' + _COPY_CODE_SCHEME + r':(\d+)"')


def stable_boundary(text: str, start: int) -> int:
    """Where the finished Markdown blocks of ``text[start:]`` end (``start`` when none did).

    A block is finished at a blank line outside a code fence that is followed by a line starting
    at the margin (so a list item's indented continuation is not cut off). ``start`` must itself be
    such a boundary (or 0).
    """
    fence = ""
    boundary = start
    position = start
    previous_blank = False
    for line in text[start:].splitlines(keepends=True):
        stripped = line.strip()
        if not fence and previous_blank and stripped and not line[0].isspace():
            boundary = position
        match = _FENCE_RE.match(line)
        if match:
            marker = match.group(1)
            if not fence:
                fence = marker
            elif (
                marker[0] == fence[0]
                and len(marker) >= len(fence)
                and not line[match.end() :].strip()
            ):
                fence = ""
        previous_blank = not stripped and not fence
        position += len(line)
    return boundary


@functools.cache
def _render_pool() -> ThreadPoolExecutor:
    # One thread: renders wait for each other; the Markdown renderer keeps no per-render state.
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="etos-render")


def _append_document(target: _ContentBrowser, source: _ContentBrowser) -> None:
    """Append ``source``'s document to ``target``'s, laid out as if rendered as one.

    A source that starts with a paragraph, heading or rule needs a new block for it; one that
    starts with a list or a frame (a code block, a table, a quote: an empty block before it)
    makes its own block when inserted, and another would add an empty line. Checked against
    the whole text rendered at once — the same text and height — at every piece boundary of
    every Markdown kind (tests/ui/test_message_widget.py).
    """
    document = source.document()
    first = document.begin()
    rule = first.blockFormat().hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth)
    makes_own_block = (first.length() == 1 and not rule) or first.textList() is not None
    cursor = QTextCursor(target.document())
    cursor.movePosition(QTextCursor.MoveOperation.End)
    if not makes_own_block:
        cursor.insertBlock(first.blockFormat(), first.charFormat())
    target.take_formula_images(source)
    cursor.insertFragment(QTextDocumentFragment(document))
    if source.math_watching:
        target.watch_pending_math()  # formulas still being laid out came along


def _renumber_copy_links(html: str, offset: int) -> str:
    if not offset:
        return html
    return _COPY_LINK_RE.sub(
        lambda m: f'href="{_COPY_CODE_SCHEME}:{int(m.group(1)) + offset}"', html
    )


#: The avatars drawn lately, by what they were drawn from: every reply of a conversation has the
#: same one, and drawing it took 4-7 ms per message widget of an opening conversation.
_AVATARS: dict[tuple[Any, ...], QPixmap] = {}
_AVATARS_KEPT = 8


def _cached_avatar(
    image: QImage | None, name: str, size: int, ratio: float, palette: QPalette
) -> QPixmap:
    key = (
        image.cacheKey() if image is not None else None,
        name.strip()[:1].upper(),
        size,
        ratio,
        palette.color(QPalette.ColorRole.Highlight).rgba(),
        palette.color(QPalette.ColorRole.HighlightedText).rgba(),
    )
    pixmap = _AVATARS.get(key)
    if pixmap is None:
        if len(_AVATARS) >= _AVATARS_KEPT:
            del _AVATARS[next(iter(_AVATARS))]
        pixmap = _AVATARS[key] = avatar_pixmap(image, name, size, ratio, palette)
    return pixmap


def _render_shown(length: int, shown: str, dark: bool) -> Any:
    """Render what is shown of a finished message ``length`` characters long.

    A message too long to be rendered as Markdown whole (``MAX_MARKDOWN_CHARS``) is plain text
    in its preview too, as "Show all" shows it: Markdown of a 10 MB line of JSON's preview took
    50 ms a message (its brackets are link syntax), on the UI thread of an opening conversation.
    """
    from etos_desktop.ui import markdown_render

    if length > markdown_render.MAX_MARKDOWN_CHARS:
        # The renderer's own plain form (sanitised the same way), of the preview only.
        text = markdown_render._sanitize(shown)
        return markdown_render.RenderedMarkdown(
            html=markdown_render._plain_html(text), code_blocks=()
        )
    return markdown_render.render_markdown(shown, dark=dark, streaming=False)


def wrap_mode_for(text: str) -> QTextOption.WrapMode:
    """How to wrap ``text``: at word boundaries, unless it holds a very long unbroken run."""
    if has_long_run(text):
        return QTextOption.WrapMode.WrapAnywhere
    return QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere


def has_long_run(text: str, length: int = _LONG_RUN_CHARS) -> bool:
    r"""Whether ``text`` holds ``length`` characters in a row without whitespace.

    Every such run covers one of the positions ``length - 1``, ``2 * length - 1``, …, so only
    the runs through those are measured (at most ``length`` characters each way). The regular
    expression ``\S{1000}`` tried every position: 0.8-0.9 s for 10 MB of prose, on the UI thread
    of a paste; this looks at about one character in a thousand.
    """
    size = len(text)
    for i in range(length - 1, size, length):
        if _SPACE.match(text, i):
            continue
        after = _SPACE.search(text, i, i + length)
        end = after.start() if after is not None else min(size, i + length)
        # The run through i ends at ``end``: it is long when the ``length`` characters before
        # ``end`` hold no whitespace (in prose the search stops after a few characters).
        begin = end - length
        if begin >= 0 and _SPACE.search(text, begin, i) is None:
            return True
    return False


class _ContentBrowser(MathBrowserMixin, QTextBrowser):
    """A read-only QTextBrowser without scrollbars whose height follows its document.

    Its formulas (images, copied as their LaTeX, put in place once laid out) are math_render's.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageContent")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        # Without a horizontal scrollbar, a long URL or hash must break rather than be cut off.
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.viewport().setAutoFillBackground(False)
        # Only Base is set here: the other roles stay inherited, so a theme switch recolours
        # the text (a copy of the whole palette would keep the old theme's text colour).
        palette = QPalette()
        palette.setColor(QPalette.ColorRole.Base, Qt.GlobalColor.transparent)
        self.setPalette(palette)
        self.document().setDocumentMargin(0)
        # Qt's default list indent is 40 px per level, too wide for a chat bubble.
        self.document().setIndentWidth(22)
        self.document().documentLayout().documentSizeChanged.connect(self._update_height)
        self._update_height()

    def _content_height(self) -> int:
        margins = self.contentsMargins()
        document_height = math.ceil(self.document().size().height())
        return document_height + margins.top() + margins.bottom()

    def _update_height(self) -> None:
        height = self._content_height()
        if height != self.height() or height != self.minimumHeight():
            self.setFixedHeight(height)
            self.updateGeometry()

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._content_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self._content_height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._update_height()

    def wheelEvent(self, event: QWheelEvent) -> None:
        # Nothing to scroll here: let the chat's scroll area have it.
        event.ignore()


class MessageWidget(QFrame):
    """One chat message, meant to be stacked in a QScrollArea.

    Shows the author and time, the message rendered from Markdown (selectable, links open in the
    browser, each code block with a Copy link), a status line (streaming, interrupted, error with a
    Retry button, retrying in N s) and an action row. It only *asks* for actions through signals;
    the chat controller decides. The raw Markdown is kept: ``text()`` returns it and Copy copies it.

    Signals:
        copy_requested(int): Copy was clicked (the raw Markdown is already on the clipboard).
        regenerate_requested(int): Regenerate was clicked on an assistant reply.
        edit_requested(int): Edit was clicked on a user message.
        delete_requested(int): Delete was clicked.
        retry_requested(int): Retry was clicked on a failed or interrupted reply.
        version_requested(int, int): A different version of the reply was asked for
            (message id, wanted version index, 0-based).
        context_requested(int): "Context" (show what was sent with this reply) was clicked.
        remember_requested(int): "Remember…" (save from this message to memory) was clicked.
        code_copied(int): A code block's Copy link put its code on the clipboard (block index).
        content_rendered(): The content was re-rendered (its height may have changed).
    """

    copy_requested = Signal(int)
    regenerate_requested = Signal(int)
    edit_requested = Signal(int)
    delete_requested = Signal(int)
    retry_requested = Signal(int)
    version_requested = Signal(int, int)
    context_requested = Signal(int)
    remember_requested = Signal(int)
    code_copied = Signal(int)
    content_rendered = Signal()

    def __init__(
        self,
        message_id: int,
        role: str,
        *,
        author: str,
        created_at: datetime | None = None,
        render_interval_ms: int = 80,
        avatar: QImage | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        # The widest line's width, for the text (the very object), font and cap it was taken at.
        self._natural_width: tuple[str, tuple[int, int], int] | None = None
        self._message_id = message_id
        self._role = role
        self._author = author
        self._avatar_image = avatar
        self._created_at = created_at
        self._render_interval_ms = render_interval_ms
        self._text = ""
        self._streaming = False
        self._dirty = False
        self._code_blocks: tuple[str, ...] = ()
        self._rendered_dark: bool | None = None
        self._last_render_at: float | None = None
        self._last_render_ms = 0.0
        self._status = "complete"
        self._error_words: Callable[[], str] = str
        self._retry_deadline: float | None = None
        self._version_index = 0
        self._version_count = 1
        self._retryable = True
        self._remember_available = True
        self._regenerable = True
        self._copied_shown = False

        self.setObjectName("userMessage" if self.is_user else "assistantMessage")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)

        # A finished reply made one document again (see _finish_pieces): a piece is appended to
        # the first per tick, or, for a reply cut to its preview, the preview rendered in the
        # background is polled here.
        self._consolidation: tuple[Future[Any] | None, str, bool] | None = None
        self._consolidation_timer = QTimer(self)
        self._consolidation_timer.setInterval(15)
        self._consolidation_timer.timeout.connect(self._on_consolidation_timer_timeout)
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.timeout.connect(self._on_render_timer_timeout)
        self._retry_timer = QTimer(self)
        self._retry_timer.setInterval(250)
        self._retry_timer.timeout.connect(self._update_status_line)
        self._copied_timer = QTimer(self)
        self._copied_timer.setSingleShot(True)
        self._copied_timer.setInterval(_COPIED_FEEDBACK_MS)
        self._copied_timer.timeout.connect(self._on_copied_timer_timeout)

        self._role_label = QLabel(self)
        self._role_label.setObjectName("messageRole")
        self._role_label.setTextFormat(Qt.TextFormat.PlainText)
        self._time_label = QLabel(self)
        self._time_label.setObjectName("messageTime")
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.setSpacing(8)
        header.addWidget(self._role_label)
        header.addWidget(self._time_label)
        header.addStretch(1)

        self._browser = self._make_browser()
        self._browser.setVisible(False)
        # The finished pieces of a streaming reply (rendered once), above the growing rest.
        self._pieces: list[_ContentBrowser] = []
        self._piece_codes: list[str] = []
        self._stable_len = 0
        self._expanded = False
        self._more_button = self._make_button("showAllButton", self._on_more_button_clicked)
        self._more_button.setVisible(False)

        self._status_label = QLabel(self)
        self._status_label.setObjectName("messageStatus")
        self._status_label.setTextFormat(Qt.TextFormat.PlainText)
        self._status_label.setWordWrap(True)
        self._status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._retry_button = self._make_button("retryButton", self._on_retry_button_clicked)
        self._status_row = QWidget(self)
        status_layout = QHBoxLayout(self._status_row)
        status_layout.setContentsMargins(0, 0, 0, 0)
        status_layout.setSpacing(6)
        status_layout.addWidget(self._status_label, 1)
        status_layout.addWidget(self._retry_button)
        self._status_row.setVisible(False)

        self._actions = self._make_actions()

        layout = QVBoxLayout(self)
        layout.setSpacing(4)
        layout.addLayout(header)
        layout.addWidget(self._browser)
        self._layout = layout
        layout.addWidget(self._more_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self._status_row)
        self._notes_layout = QVBoxLayout()
        self._notes_layout.setContentsMargins(0, 2, 0, 2)
        self._notes_layout.setSpacing(4)
        layout.addLayout(self._notes_layout)
        layout.addWidget(self._actions)
        # The companion's replies stand beside its avatar on the chat's background; the user's
        # own messages are tinted bubbles on the right (ChatPanel aligns them; resources/themes).
        # The avatar sits in the layout's left margin, so the layout stays one column.
        self._avatar_label: QLabel | None = None
        if self.is_assistant:
            self._avatar_label = QLabel(self)
            self._avatar_label.setObjectName("messageAvatar")
            self._avatar_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        else:
            layout.setContentsMargins(14, 8, 14, 4)
        self._draw_avatar()

        self._update_versions()
        self._update_actions()
        self.retranslate()

    # --- public API --------------------------------------------------------------------------------

    @property
    def message_id(self) -> int:
        return self._message_id

    @property
    def role(self) -> str:
        return self._role

    @property
    def is_user(self) -> bool:
        return self._role == "user"

    @property
    def is_assistant(self) -> bool:
        return self._role == "assistant"

    @property
    def status(self) -> str:
        return self._status

    @property
    def code_blocks(self) -> tuple[str, ...]:
        """The raw code of each fenced block as last rendered."""
        return self._code_blocks

    def text(self) -> str:
        """Return the raw Markdown (including anything not rendered yet)."""
        return self._text

    def set_text(self, text: str, *, streaming: bool) -> None:
        """Set the message's Markdown.

        When not streaming it is rendered at once. While streaming, renders are throttled to at
        most one per ``render_interval_ms`` (longer for replies that take long to render); the
        latest text is always rendered in the end.
        """
        if text == self._text and streaming == self._streaming and not self._dirty:
            return
        self._text = text
        self._streaming = streaming
        self._dirty = True
        self._update_actions()
        if not streaming:
            self._render_timer.stop()
            self._render()
            return
        if self._render_timer.isActive():
            return
        gap_ms = max(self._render_interval_ms, _ADAPTIVE_FACTOR * self._last_render_ms)
        if self._last_render_at is None:
            self._render()
            return
        elapsed_ms = (time.perf_counter() - self._last_render_at) * 1000
        if elapsed_ms >= gap_ms:
            self._render()
        else:
            self._render_timer.start(max(1, math.ceil(gap_ms - elapsed_ms)))

    def flush_render(self) -> None:
        """Render a pending throttled update now (e.g. before measuring or when streaming ends)."""
        self._render_timer.stop()
        if self._dirty:
            self._render()

    def set_status(
        self,
        status: str,
        error_text: str | Callable[[], str] = "",
        retry_in: float | None = None,
        *,
        retryable: bool = True,
    ) -> None:
        """Show the message's state.

        Args:
            status: One of "complete", "streaming", "interrupted", "error".
            error_text: Words for the status line, or a function that translates them (called
                again when the language changes); when empty, default words for the status are
                shown ("Streaming…", …). Nothing is shown for "complete".
            retry_in: Seconds until an automatic retry. The widget then shows
                "<error_text> — Retrying in N s" counting down (so ``error_text`` should name only
                the reason, e.g. "Rate limited") and hides Retry.
            retryable: Whether trying again could help (``UserFacingError.retryable``); Retry is
                offered only then (a message too long for the model would fail the same way).

        Raises:
            ValueError: For an unknown status.
        """
        if status not in STATUSES:
            raise ValueError(f"unknown message status {status!r}")
        self._status = status
        self._error_words = error_text if callable(error_text) else lambda: error_text
        self._retryable = retryable
        if retry_in is None:
            self._retry_deadline = None
            self._retry_timer.stop()
        else:
            self._retry_deadline = time.monotonic() + max(0.0, retry_in)
            self._retry_timer.start()
        self._update_status_line()
        self._update_actions()

    def set_versions(self, index: int, count: int) -> None:
        """Show which version of an assistant reply this is (``index`` 0-based of ``count``).

        Raises:
            ValueError: If ``count`` < 1 or ``index`` is out of range.
        """
        if count < 1 or not 0 <= index < count:
            raise ValueError(f"bad version {index} of {count}")
        self._version_index = index
        self._version_count = count
        self._update_versions()

    def set_attachments(self, strip: QWidget) -> None:
        """Show ``strip`` (the message's attachments) between its header and its text."""
        old = self.attachments()
        if old is not None:
            self._layout.removeWidget(old)
            old.hide()
            old.deleteLater()
        strip.setParent(self)
        self._attachments = strip
        self._layout.insertWidget(1, strip)
        strip.show()

    def attachments(self) -> QWidget | None:
        """The attachments' strip shown, if any."""
        return getattr(self, "_attachments", None)

    def add_note(self, note: QWidget) -> None:
        """Show ``note`` (e.g. a ``MemoryNote``) under the message, above its actions."""
        note.setParent(self)
        self._notes_layout.addWidget(note)
        note.show()

    def notes(self) -> list[QWidget]:
        """The notes shown under the message, oldest first."""
        items = (self._notes_layout.itemAt(i) for i in range(self._notes_layout.count()))
        return [w for item in items if item is not None and (w := item.widget()) is not None]

    def set_author(self, author: str) -> None:
        """Show another author name (the companion was renamed in Settings)."""
        if author != self._author:
            self._author = author
            self._update_role_label()
            self._draw_avatar()

    def set_avatar(self, image: QImage | None) -> None:
        """Show ``image`` as the companion's avatar (``None``: the name's first letter)."""
        self._avatar_image = image
        self._draw_avatar()

    def avatar_size(self) -> int:
        """The avatar's side in pixels: two lines of text, so it follows the font size."""
        return 2 * self.fontMetrics().height()

    def set_regenerate_available(self, available: bool) -> None:
        """Offer Regenerate or not (a message the companion began with answers nothing)."""
        self._regenerable = available
        if self._regenerate_button is not None:
            self._regenerate_button.setVisible(available)

    def set_remember_available(self, available: bool) -> None:
        """Offer Remember… or not (a temporary conversation writes nothing to memory)."""
        self._remember_available = available
        self._remember_button.setVisible(available)

    def retranslate(self) -> None:
        self._update_role_label()
        self._update_time_label()
        self._copy_button.set_words(
            self.tr("Copied") if self._copied_shown else self.tr("Copy the message as Markdown")
        )
        if self._regenerate_button is not None:
            self._regenerate_button.set_words(self.tr("Regenerate: write a new version"))
        if self._context_button is not None:
            self._context_button.set_words(self.tr("Show what was sent to the model"))
        if self._previous_button is not None and self._next_button is not None:
            self._previous_button.set_words(self.tr("Previous version"))
            self._next_button.set_words(self.tr("Next version"))
        if self._edit_button is not None:
            self._edit_button.set_words(self.tr("Edit and send again"))
        self._delete_button.set_words(self.tr("Delete this message"))
        self._remember_button.set_words(self.tr("Remember… (save to long-term memory)"))
        self._retry_button.setText(self.tr("Retry"))
        self._retry_button.setToolTip(self.tr("Try this reply again"))
        self._update_versions()
        self._update_status_line()
        if self._text:
            # The code blocks' Copy links are translated too.
            self._render()

    # --- Qt overrides ------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.LocaleChange:
            self._update_time_label()
        elif event.type() == QEvent.Type.FontChange:
            self._draw_avatar()
            self.updateGeometry()
        elif (
            event.type() == QEvent.Type.PaletteChange
            and self._text
            and self._rendered_dark is not None
            and self._rendered_dark != self._is_dark()
        ):
            self._render()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if not self.is_user:
            return hint
        # A user's bubble is as wide as its text (up to the maximum width ChatPanel sets), so
        # a short message makes a small bubble on the right.
        margins = self.layout().contentsMargins()
        text = max(self._natural_text_width(), self._actions.sizeHint().width())
        width = max(text + margins.left() + margins.right(), self.minimumSizeHint().width())
        return QSize(width, hint.height())

    # --- internals ---------------------------------------------------------------------------------

    def _natural_text_width(self) -> int:
        # The raw text's widest line (measuring the first 200 lines is enough for a bubble's
        # width; the bubble is capped by its maximum width anyway). Layout asks several times:
        # a 1 MB message was split whole and 200 lines measured each time (40 ms and more).
        metrics = self._browser.fontMetrics()
        key = (metrics.averageCharWidth(), self.maximumWidth())
        cached = self._natural_width
        if cached is not None and cached[0] is self._text and cached[1] == key:
            return cached[2]
        # A line is measured up to 400 characters, so 200 lines are in the first 80,200.
        lines = self._text[: 200 * 401].splitlines()[:200] or [""]
        widest = 0
        # Longest first: once one reaches the bubble's cap, the others cannot widen it.
        for line in sorted((line[:400] for line in lines), key=len, reverse=True):
            widest = max(widest, metrics.horizontalAdvance(line))
            if widest >= self.maximumWidth():
                break
        self._natural_width = (self._text, key, widest + 8)
        return widest + 8

    def _make_actions(self) -> ActionBar:
        """The icon buttons under the message (ui/message_actions.py: shown on hover or focus)."""
        bar = ActionBar(self, trailing=self.is_user)
        add = bar.add_button
        # Only the actions of the message's role are made (a long conversation opens faster).
        self._previous_button: ActionButton | None = None
        self._next_button: ActionButton | None = None
        self._version_label: QLabel | None = None
        self._regenerate_button: ActionButton | None = None
        self._context_button: ActionButton | None = None
        self._edit_button: ActionButton | None = None
        if self.is_assistant:
            self._previous_button = add(
                "previousVersionButton", "previous", self._on_previous_button_clicked, always=True
            )
            self._version_label = QLabel(bar)
            self._version_label.setObjectName("versionLabel")
            bar.add_widget(self._version_label)
            self._next_button = add(
                "nextVersionButton", "next", self._on_next_button_clicked, always=True
            )
        self._copy_button = add("copyButton", "copy", self._on_copy_button_clicked)
        if self.is_assistant:
            self._regenerate_button = add(
                "regenerateButton", "regenerate", self._on_regenerate_button_clicked
            )
        if self.is_user:
            self._edit_button = add("editButton", "edit", self._on_edit_button_clicked)
        self._delete_button = add("deleteButton", "delete", self._on_delete_button_clicked)
        if self.is_assistant:
            self._context_button = add("contextButton", "context", self._on_context_button_clicked)
        self._remember_button = add("rememberButton", "remember", self._on_remember_button_clicked)
        bar.finish()
        return bar

    def action_bar(self) -> ActionBar:
        """The row of the message's action buttons."""
        return self._actions

    @override
    def paintEvent(self, event: QPaintEvent) -> None:
        if self.is_user:
            # The bubble holds the text; the actions sit under it, on the chat's background.
            paint_bubble(self, self._actions.geometry().top() - self._layout.spacing() // 2)
        super().paintEvent(event)

    @override
    def enterEvent(self, event: QEnterEvent) -> None:
        super().enterEvent(event)
        self._actions.set_hovered(True)

    @override
    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        self._actions.set_hovered(False)

    def _draw_avatar(self) -> None:
        if self._avatar_label is None:
            return
        size = self.avatar_size()
        self._avatar_label.setFixedSize(size, size)
        self._avatar_label.move(0, _AVATAR_TOP)
        self._layout.setContentsMargins(size + _AVATAR_GAP, _AVATAR_TOP, 0, 2)
        self._avatar_label.setPixmap(
            _cached_avatar(
                self._avatar_image, self._author, size, self.devicePixelRatioF(), self.palette()
            )
        )

    def _make_button(self, name: str, slot: Callable[[], None]) -> QToolButton:
        button = QToolButton(self)
        button.setObjectName(name)
        button.setProperty("messageAction", True)
        button.setAutoRaise(True)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        button.clicked.connect(slot)
        return button

    def _is_dark(self) -> bool:
        # Judged by the text colour: the theme's stylesheet gives these frames translucent
        # backgrounds, which make the Window colour meaningless.
        return self.palette().color(QPalette.ColorRole.WindowText).lightness() > 128

    def _make_browser(self) -> _ContentBrowser:
        browser = _ContentBrowser(self)
        browser.anchorClicked.connect(self._on_browser_anchor_clicked)
        browser.highlighted.connect(self._on_browser_highlighted)
        return browser

    def _drop_pieces(self) -> None:
        for piece in self._pieces:
            self._layout.removeWidget(piece)
            piece.hide()
            piece.deleteLater()
        self._pieces.clear()
        self._piece_codes.clear()
        self._stable_len = 0

    def _render(self) -> None:
        started = time.perf_counter()
        dark = self._is_dark()
        self._consolidation = None
        if self._rendered_dark is not None and dark != self._rendered_dark:
            self._drop_pieces()
        if self._streaming:
            self._render_streaming(dark)
        elif self._pieces and self._stable_len <= len(self._text):
            self._finish_pieces(dark)
        else:
            self._render_whole(dark)
        self._rendered_dark = dark
        self._dirty = False
        finished = time.perf_counter()
        self._last_render_at = finished
        self._last_render_ms = (finished - started) * 1000
        self.content_rendered.emit()

    def _render_whole(self, dark: bool) -> None:
        # Imported on first render: markdown-it + Pygments cost ~30 ms of start-up otherwise.
        self._drop_pieces()
        cut = not self._expanded and len(self._text) > PREVIEW_CHARS
        shown = self._text[:PREVIEW_CHARS] if cut else self._text
        rendered = _render_shown(len(self._text), shown, dark)
        self._code_blocks = rendered.code_blocks
        self._show_html(self._browser, rendered.html, shown)
        self._browser.setVisible(bool(self._text))
        self._update_more_button(cut, len(shown))

    def _finish_pieces(self, dark: bool) -> None:
        """The reply ended: render only its rest as final, then join the pieces step by step.

        Rendering a long reply again as one document at its end was the worst stall of a
        streamed reply (a 5 KB reply: 47 ms of layout on the UI thread, ~10 ms a KB). Now the
        rest is rendered at once, and the pieces are joined into one document (one selection,
        one Ctrl+A) by appending one piece's laid-out document to the first per timer tick,
        ~7-10 ms each. A reply longer than the preview is cut, as if reopened: that one is
        rendered in a worker thread and laid out when it is ready.
        """
        from etos_desktop.ui.markdown_render import render_markdown

        rest = self._text[self._stable_len :]
        rendered = render_markdown(rest, dark=dark, streaming=False)
        html = _renumber_copy_links(rendered.html, len(self._piece_codes))
        self._show_html(self._browser, html, rest)
        self._code_blocks = (*self._piece_codes, *rendered.code_blocks)
        self._browser.setVisible(bool(rest))
        self._more_button.setVisible(False)
        future: Future[Any] | None = None
        if not self._expanded and len(self._text) > PREVIEW_CHARS:
            shown = self._text[:PREVIEW_CHARS]
            future = _render_pool().submit(_render_shown, len(self._text), shown, dark)
        self._consolidation = (future, self._text, dark)
        self._consolidation_timer.start()

    def _on_consolidation_timer_timeout(self) -> None:
        pending = self._consolidation
        if pending is None:
            self._consolidation_timer.stop()
            return
        future, text, dark = pending
        if text != self._text or self._streaming or dark != self._is_dark() or not self._pieces:
            self._consolidation_timer.stop()
            self._consolidation = None
            return
        if future is None:
            self._join_next_piece()
            return
        if not future.done():
            return
        self._consolidation_timer.stop()
        self._consolidation = None
        rendered = future.result()
        self._drop_pieces()
        shown = self._text[:PREVIEW_CHARS]
        self._code_blocks = rendered.code_blocks
        self._show_html(self._browser, rendered.html, shown)
        self._browser.setVisible(bool(self._text))
        self._update_more_button(True, len(shown))
        self.content_rendered.emit()

    def _join_next_piece(self) -> None:
        """Append the next piece (or, last, the rest) to the first piece's document."""
        first = self._pieces[0]
        if len(self._pieces) > 1:
            source = self._pieces.pop(1)
            _append_document(first, source)
            self._layout.removeWidget(source)
            source.hide()
            source.deleteLater()
            return
        # The first piece now holds all but the rest: it takes the rest and the main role.
        self._consolidation_timer.stop()
        self._consolidation = None
        old = self._browser
        if old.isVisibleTo(self):
            _append_document(first, old)
        self._layout.removeWidget(old)
        old.hide()
        old.deleteLater()
        self._browser = first
        self._pieces.clear()
        self._piece_codes.clear()
        self._stable_len = 0
        mode = wrap_mode_for(self._text)
        if first.wordWrapMode() != mode:
            first.setWordWrapMode(mode)
        self._update_role_label()
        self.content_rendered.emit()

    def _update_more_button(self, cut: bool, shown: int) -> None:
        self._more_button.setVisible(cut)
        if cut:
            self._more_button.setText(
                self.tr(
                    "Show the whole message (%n more characters)",
                    "",
                    len(self._text) - shown,
                )
            )

    def _render_streaming(self, dark: bool) -> None:
        from etos_desktop.ui.markdown_render import render_markdown

        boundary = stable_boundary(self._text, self._stable_len)
        if boundary - self._stable_len >= STREAM_PIECE_CHARS:
            piece_text = self._text[self._stable_len : boundary]
            rendered = render_markdown(piece_text, dark=dark, streaming=False)
            piece = self._make_browser()
            html = _renumber_copy_links(rendered.html, len(self._piece_codes))
            self._show_html(piece, html, piece_text)
            self._layout.insertWidget(self._layout.indexOf(self._browser), piece)
            piece.show()
            self._pieces.append(piece)
            self._piece_codes.extend(rendered.code_blocks)
            self._stable_len = boundary
        rest = self._text[self._stable_len :]
        rendered = render_markdown(rest, dark=dark, streaming=True)
        html = _renumber_copy_links(rendered.html, len(self._piece_codes))
        self._show_html(self._browser, html, rest)
        self._code_blocks = (*self._piece_codes, *rendered.code_blocks)
        self._browser.setVisible(bool(rest))
        self._more_button.setVisible(False)

    def _show_html(self, browser: _ContentBrowser, html: str, text: str) -> None:
        mode = wrap_mode_for(text)
        if browser.wordWrapMode() != mode:
            browser.setWordWrapMode(mode)
        browser.setHtml(html)

    def _update_role_label(self) -> None:
        author = self.tr("You") if self.is_user else self._author
        self._role_label.setText(author)
        self._browser.setAccessibleName(self.tr("Message from {author}").format(author=author))

    def _update_time_label(self) -> None:
        if self._created_at is None:
            self._time_label.clear()
            self._time_label.setToolTip("")
            return
        local = self._created_at.astimezone() if self._created_at.tzinfo else self._created_at
        date = QDate(local.year, local.month, local.day)
        moment = QTime(local.hour, local.minute, local.second)
        locale = self.locale()
        if date == QDate.currentDate():
            shown = locale.toString(moment, QLocale.FormatType.ShortFormat)
        else:
            shown = locale.toString(QDateTime(date, moment), QLocale.FormatType.ShortFormat)
        self._time_label.setText(shown)
        self._time_label.setToolTip(
            locale.toString(QDateTime(date, moment), QLocale.FormatType.LongFormat)
        )

    @property
    def _error_text(self) -> str:
        return self._error_words()

    def _update_status_line(self) -> None:
        kind = "info"
        retry_visible = False
        if self._retry_deadline is not None:
            remaining = math.ceil(self._retry_deadline - time.monotonic())
            if remaining <= 0:
                self._retry_timer.stop()
            if self._error_text and remaining > 0:
                text = self.tr("%1 — retrying in %n s", "", remaining).replace(
                    "%1", self._error_text
                )
            elif self._error_text:
                text = self.tr("%1 — retrying…").replace("%1", self._error_text)
            elif remaining > 0:
                text = self.tr("Retrying in %n s", "", remaining)
            else:
                text = self.tr("Retrying…")
            kind = "error" if self._status == "error" else "info"
        elif self._status == "streaming":
            text = self._error_text or self.tr("Streaming…")
        elif self._status == "interrupted":
            text = self._error_text or self.tr("Interrupted: the reply is incomplete.")
            retry_visible = self.is_assistant and self._retryable
        elif self._status == "error":
            text = self._error_text or self.tr("Something went wrong.")
            kind = "error"
            retry_visible = self._retryable
        else:
            text = ""
        # The error words may quote the server: its bidi overrides are shown, not obeyed.
        self._status_label.setText(neutralise_bidi(text))
        if self._status_label.property("kind") != kind:
            self._status_label.setProperty("kind", kind)
            # A dynamic property only restyles after a re-polish.
            self._status_label.style().unpolish(self._status_label)
            self._status_label.style().polish(self._status_label)
        self._retry_button.setVisible(retry_visible)
        # A stopped or failed reply offers one way to try again (Retry, which writes a new
        # version as Regenerate does), and none when trying again cannot help (issue 19).
        failed = self._status in ("interrupted", "error")
        if self._regenerate_button is not None:
            self._regenerate_button.setVisible(self._regenerable and not failed)
        self._status_row.setVisible(bool(text))

    def _update_versions(self) -> None:
        if self._version_label is not None:
            shown = self._version_count > 1
            for widget in (self._previous_button, self._version_label, self._next_button):
                if widget is not None:
                    widget.setVisible(shown)
            self._version_label.setText(f"{self._version_index + 1}/{self._version_count}")
        self._update_actions()

    def _update_actions(self) -> None:
        idle = self._status != "streaming"
        for button in (self._regenerate_button, self._edit_button, self._context_button):
            if button is not None:
                button.setEnabled(idle)
        self._delete_button.setEnabled(idle)
        self._retry_button.setEnabled(idle or self._status == "error")
        self._remember_button.setEnabled(idle and bool(self._text.strip()))
        if self._previous_button is not None and self._next_button is not None:
            self._previous_button.setEnabled(idle and self._version_index > 0)
            self._next_button.setEnabled(idle and self._version_index < self._version_count - 1)

    # --- slots -------------------------------------------------------------------------------------

    def _on_render_timer_timeout(self) -> None:
        if self._dirty:
            self._render()

    def _on_more_button_clicked(self) -> None:
        self._expanded = True
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            self._render()
        finally:
            QGuiApplication.restoreOverrideCursor()

    def _on_copy_button_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self._text)
        self._copied_shown = True
        self._copy_button.set_icon_name("check")
        self._copy_button.set_words(self.tr("Copied"))
        self._copied_timer.start()
        self.copy_requested.emit(self._message_id)

    def _on_copied_timer_timeout(self) -> None:
        self._copied_shown = False
        self._copy_button.set_icon_name("copy")
        self._copy_button.set_words(self.tr("Copy the message as Markdown"))

    def _on_regenerate_button_clicked(self) -> None:
        self.regenerate_requested.emit(self._message_id)

    def _on_edit_button_clicked(self) -> None:
        self.edit_requested.emit(self._message_id)

    def _on_delete_button_clicked(self) -> None:
        self.delete_requested.emit(self._message_id)

    def _on_context_button_clicked(self) -> None:
        self.context_requested.emit(self._message_id)

    def _on_remember_button_clicked(self) -> None:
        self.remember_requested.emit(self._message_id)

    def _on_retry_button_clicked(self) -> None:
        self.retry_requested.emit(self._message_id)

    def _on_previous_button_clicked(self) -> None:
        if self._version_index > 0:
            self.version_requested.emit(self._message_id, self._version_index - 1)

    def _on_next_button_clicked(self) -> None:
        if self._version_index < self._version_count - 1:
            self.version_requested.emit(self._message_id, self._version_index + 1)

    def _on_browser_anchor_clicked(self, url: QUrl) -> None:
        scheme = url.scheme().lower()
        if scheme == _COPY_CODE_SCHEME:
            try:
                index = int(url.path())
            except ValueError:
                return
            if 0 <= index < len(self._code_blocks):
                QGuiApplication.clipboard().setText(self._code_blocks[index])
                self.code_copied.emit(index)
        elif scheme in ("http", "https"):
            QDesktopServices.openUrl(url)

    def _on_browser_highlighted(self, url: QUrl) -> None:
        # Show where a link goes before it is clicked (link text can say anything).
        shown = url.toString() if url.scheme().lower() in ("http", "https") else ""
        browser = self.sender()
        if isinstance(browser, QTextBrowser):
            browser.setToolTip(plain_tooltip(shown))


#: A note shows at most this much of a memory; the whole text is in its tooltip.
_NOTE_PREVIEW_CHARS = 240


class MemoryNote(QFrame):
    """A note saying a memory was saved, with Edit and Undo (DESIGN §5.1, "save and notify").

    Shown under the reply whose ``save_memory`` call saved it, under the message the user
    remembered from, or on its own in the chat for ``/remember``. The memory's text is shown with
    invisible characters spelled out, so the note shows exactly what was stored.

    Args:
        memory_id: The memory that holds the text now.
        content: The saved text.
        merged: The text went into an existing near-duplicate (``memory_id``) instead.
        superseded: The memory this one replaced (archived by the save), if any.

    Signals:
        edit_requested(int): Edit was clicked (memory id).
        undo_requested(int): Undo was clicked (memory id).
    """

    edit_requested = Signal(int)
    undo_requested = Signal(int)

    def __init__(
        self,
        memory_id: int,
        content: str,
        *,
        merged: bool = False,
        superseded: int | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryNote")
        self.memory_id = memory_id
        self.merged = merged
        self.superseded = superseded
        self._content = content
        self._state = "saved"  # saved, edited, undone
        # Tinted like the message frames, so it reads in light and dark themes alike.
        self._apply_colors()
        self.label = QLabel(self)
        self.label.setObjectName("memoryNoteText")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.error_label = QLabel(self)
        self.error_label.setObjectName("memoryNoteError")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.edit_button = QToolButton(self)
        self.edit_button.setObjectName("memoryEditButton")
        self.undo_button = QToolButton(self)
        self.undo_button.setObjectName("memoryUndoButton")
        for button in (self.edit_button, self.undo_button):
            button.setProperty("messageAction", True)
            button.setAutoRaise(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.edit_button.clicked.connect(self._on_edit_button_clicked)
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        text_column = QVBoxLayout()
        text_column.setContentsMargins(0, 0, 0, 0)
        text_column.setSpacing(2)
        text_column.addWidget(self.label)
        text_column.addWidget(self.error_label)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(text_column, 1)
        layout.addWidget(self.edit_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)
        self.retranslate()

    @property
    def content(self) -> str:
        """The memory's text as last saved from this note."""
        return self._content

    @property
    def undone(self) -> bool:
        """Whether the save was undone."""
        return self._state == "undone"

    def set_content(self, content: str) -> None:
        """The memory was edited from this note: show its new text."""
        self._content = content
        self._state = "edited"
        self.set_error("")
        self.retranslate()

    def set_undone(self) -> None:
        """The save was undone: say so; there is nothing left to edit or undo."""
        self._state = "undone"
        self.set_error("")
        self.retranslate()

    def set_busy(self, busy: bool) -> None:
        """Disable the buttons while an edit or undo runs."""
        for button in (self.edit_button, self.undo_button):
            button.setEnabled(not busy)

    def set_error(self, text: str) -> None:
        """Show why the last action failed (``""`` hides it)."""
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))
        if text:
            self.set_busy(False)

    def retranslate(self) -> None:
        # Imported here: markdown_render pulls in markdown-it and Pygments (see MessageWidget._render).
        from etos_desktop.ui.markdown_render import escape_invisible

        shown = escape_invisible(self._content)
        preview = shown if len(shown) <= _NOTE_PREVIEW_CHARS else shown[:_NOTE_PREVIEW_CHARS] + "…"
        if self._state == "undone":
            if self.merged:
                text = self.tr("Undone — memory #{id} has its earlier wording again.")
            elif self.superseded is not None:
                text = self.tr("Undone — #{id} is no longer in memory, and #{old} is back.")
            else:
                text = self.tr("Undone — #{id} is no longer in memory.")
        elif self._state == "edited":
            text = self.tr("Memory #{id}, edited: {text}")
        elif self.merged:
            text = self.tr("Saved to memory — merged into #{id}: {text}")
        elif self.superseded is not None:
            text = self.tr("Saved to memory as #{id}, replaces #{old}: {text}")
        else:
            text = self.tr("Saved to memory as #{id}: {text}")
        self.label.setText(text.format(id=self.memory_id, old=self.superseded, text=preview))
        self.label.setToolTip(plain_tooltip(shown) if preview != shown else "")
        self.edit_button.setText(self.tr("Edit"))
        self.edit_button.setToolTip(self.tr("Change the wording of this memory"))
        self.undo_button.setText(self.tr("Undo"))
        if self.merged:
            self.undo_button.setToolTip(self.tr("Give the memory its earlier wording back"))
        elif self.superseded is not None:
            self.undo_button.setToolTip(
                self.tr("Delete this memory and bring back the one it replaced")
            )
        else:
            self.undo_button.setToolTip(self.tr("Delete this memory"))
        done = self._state == "undone"
        self.edit_button.setVisible(not done)
        self.undo_button.setVisible(not done)

    def _apply_colors(self) -> None:
        colors = theme.colors(self)
        sheet = (
            f"QFrame#memoryNote {{ background-color: {colors.accent_tint};"
            f" border: 1px solid {colors.accent_border}; border-radius: 6px; }}"
            f" QLabel#memoryNoteError {{ color: {colors.error}; }}"
        )
        # Setting a style sheet changes the palette again: only when it differs.
        if sheet != self.styleSheet():
            self.setStyleSheet(sheet)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            self._apply_colors()

    def _on_edit_button_clicked(self) -> None:
        self.edit_requested.emit(self.memory_id)

    def _on_undo_button_clicked(self) -> None:
        self.undo_requested.emit(self.memory_id)
