"""Searching messages: every conversation (Ctrl+Shift+F) and the open one (Ctrl+F).

``MessageSearchDialog`` searches as the user types (debounced, on the DB thread through
``core/chat/search.py``) and lists the hits with their conversation, date and a snippet whose
matches are marked; Up/Down and Enter, or a click, open the conversation at that message.
``FindBar`` finds a text in the open conversation — in every message, loaded in the view or not —
with the count and previous/next. ``MessageJump`` does the opening: it opens the conversation
through the chat controller and loads older pages as scrolling up would (so the view is what a
reopen shows), then scrolls to the message, marks it and its matches. ``MessageSearchUi`` owns
them and the window's two actions.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import (
    QAbstractListModel,
    QDate,
    QDateTime,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTime,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QKeyEvent,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMainWindow,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTextBrowser,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from etos_desktop.core.text.cleaning import neutralise_bidi
from etos_desktop.ui import theme
from etos_desktop.ui.task_set import TaskSet

if TYPE_CHECKING:
    from etos_desktop.core.chat.search import (
        IndexCount,
        MessageHit,
        MessageIndexer,
        MessageSearch,
        MessageSearchResult,
    )
    from etos_desktop.ui.chat_controller import ChatController
    from etos_desktop.ui.chat_panel import ChatPanel
    from etos_desktop.ui.message_widget import MessageWidget

#: Hits fetched at a time (the list asks for the next page as it is scrolled to its end).
PAGE = 30
#: Typing pauses this long before a search starts (one query per pause, not per key).
DEBOUNCE_MS = 200
#: How long to wait for a page of older messages while opening a conversation at a message.
_PAGE_TIMEOUT = 15.0
#: While the opened message's conversation is laid out (documents lay out in steps), the view
#: keeps the message in place for this long, unless the user scrolls first.
_PIN_MS = 1500

Search = Callable[[str, int, int], Awaitable["MessageSearchResult"]]

HitRole = Qt.ItemDataRole.UserRole + 1


def _date_text(moment: datetime, locale: Any) -> str:
    """A message's date as the sidebar would say it: the time today, else the date."""
    local = moment.astimezone() if moment.tzinfo else moment
    date = QDate(local.year, local.month, local.day)
    if date == QDate.currentDate():
        return str(locale.toString(QTime(local.hour, local.minute), locale.FormatType.ShortFormat))
    return str(locale.toString(date, locale.FormatType.ShortFormat))


def _long_date(moment: datetime, locale: Any) -> str:
    local = moment.astimezone() if moment.tzinfo else moment
    when = QDateTime(
        QDate(local.year, local.month, local.day), QTime(local.hour, local.minute, local.second)
    )
    return str(locale.toString(when, locale.FormatType.LongFormat))


def marked_html(text: str, marks: Sequence[tuple[int, int]], colors: theme.Colors) -> str:
    """``text`` as escaped HTML with ``marks`` (``(start, end)``) on the mark colour."""
    parts = []
    position = 0
    for start, end in marks:
        parts.append(html.escape(text[position:start]))
        parts.append(
            f'<span style="background-color: {colors.mark}; color: {colors.mark_text};">'
            f"{html.escape(text[start:end])}</span>"
        )
        position = end
    parts.append(html.escape(text[position:]))
    return "".join(parts)


class SearchHitsModel(QAbstractListModel):
    """The hits of one search: rows of ``MessageHit``, fetched a page at a time.

    Signals:
        more_requested(): the view reached the end of the rows and more hits exist.
    """

    more_requested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._hits: list[MessageHit] = []
        self._more = False
        self._asked = False
        self.untitled = ""

    def set_hits(self, hits: Sequence[MessageHit], more: bool) -> None:
        """Replace the rows."""
        self.beginResetModel()
        self._hits = list(hits)
        self._more = more
        self._asked = False
        self.endResetModel()

    def append_hits(self, hits: Sequence[MessageHit], more: bool) -> None:
        """Add the next page of hits."""
        self._more = more
        self._asked = False
        known = {hit.message_id for hit in self._hits}
        fresh = [hit for hit in hits if hit.message_id not in known]
        if fresh:
            first = len(self._hits)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            self._hits.extend(fresh)
            self.endInsertRows()

    def hit(self, row: int) -> MessageHit | None:
        """The hit in ``row``, or None outside the list."""
        return self._hits[row] if 0 <= row < len(self._hits) else None

    @property
    def more(self) -> bool:
        """Whether the search has more hits than those listed."""
        return self._more

    @override
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._hits)

    @override
    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        return not parent.isValid() and self._more and not self._asked and bool(self._hits)

    @override
    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self.canFetchMore(parent):
            self._asked = True
            self.more_requested.emit()

    @override
    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        hit = self.hit(index.row()) if index.isValid() else None
        if hit is None:
            return None
        if role == HitRole:
            return hit
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            title = neutralise_bidi(hit.conversation_title or self.untitled)
            return f"{title} — {_date_text(hit.created_at, self.parent_locale())}: " + (
                neutralise_bidi(hit.snippet.text)
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            return _long_date(hit.created_at, self.parent_locale())
        return None

    def parent_locale(self) -> Any:
        """The locale of the widget that shows the hits (dates are written in it)."""
        owner = self.parent()
        return owner.locale() if isinstance(owner, QWidget) else None


class SearchHitDelegate(QStyledItemDelegate):
    """Draws a hit: the conversation's title and the date on one line, the snippet below it.

    The snippet is the message's own text, escaped; only its marks are markup.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: The words a hit's row shows before the title ("🗄" archived, "⏳" temporary).
        self.untitled = ""
        self.you = ""
        self.companion = ""
        #: How the author stands before a snippet ("{author}: "; Chinese takes a full-width colon).
        self.author_format = "{author}: "

    def _lines(self, option: QStyleOptionViewItem) -> tuple[int, int]:
        line = option.fontMetrics.lineSpacing()
        return line, 6

    @override
    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        line, pad = self._lines(option)
        return QSize(200, 3 * line + 2 * pad + 4)

    @override
    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        hit: MessageHit | None = index.data(HitRole)
        if hit is None:
            return
        widget = option.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawPrimitive(
                QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget
            )
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        group = (
            QPalette.ColorGroup.Normal
            if option.state & QStyle.StateFlag.State_Enabled
            else QPalette.ColorGroup.Disabled
        )
        text_color = palette.color(
            group,
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text,
        )
        colors = theme.colors(widget)
        muted = text_color if selected else QColor(colors.muted)
        line, pad = self._lines(option)
        rect = option.rect.adjusted(pad + 2, pad, -pad - 2, -pad)
        painter.save()
        locale = widget.locale() if widget is not None else None
        date = _date_text(hit.created_at, locale) if locale is not None else ""
        date_width = option.fontMetrics.horizontalAdvance(date) + 8
        title_font = QFont(option.font)
        title_font.setBold(True)
        painter.setFont(title_font)
        painter.setPen(text_color)
        marker = ("🗄 " if hit.archived else "") + ("⏳ " if hit.temporary else "")
        title = marker + neutralise_bidi(
            " ".join((hit.conversation_title or self.untitled).split())
        )
        title_rect = QRect(rect.left(), rect.top(), rect.width() - date_width, line)
        elided = painter.fontMetrics().elidedText(
            title, Qt.TextElideMode.ElideRight, title_rect.width()
        )
        painter.drawText(title_rect, int(Qt.AlignmentFlag.AlignVCenter), elided)
        painter.setFont(option.font)
        painter.setPen(muted)
        painter.drawText(
            QRect(rect.right() - date_width, rect.top(), date_width, line),
            int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
            date,
        )
        # The snippet: two lines at most, its marks on the mark colour.
        snippet = hit.snippet
        author = self.you if hit.role == "user" else self.companion
        prefix = html.escape(self.author_format.format(author=author)) if author else ""
        body = marked_html(neutralise_bidi(snippet.text), snippet.marks, colors)
        document = QTextDocument()
        document.setDefaultFont(option.font)
        document.setDocumentMargin(0)
        document.setTextWidth(rect.width())
        lead = "… " if snippet.cut_before else ""
        tail = " …" if snippet.cut_after else ""
        document.setHtml(
            f'<span style="color: {muted.name()};">{prefix}</span>'
            f'<span style="color: {text_color.name()};">{lead}{body}{tail}</span>'
        )
        top = rect.top() + line + 2
        height = min(2 * line, rect.bottom() - top)
        block_layout = document.begin().layout()
        if block_layout is not None and block_layout.lineCount() >= 2:
            height = min(height, round(block_layout.lineAt(1).rect().bottom()) + 1)
        painter.translate(rect.left(), top)
        clip = QRect(0, 0, rect.width(), height)
        painter.setClipRect(clip)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.clip = clip
        context.palette.setColor(QPalette.ColorRole.Text, text_color)
        document.documentLayout().draw(painter, context)
        painter.restore()


def _takes_escape(event: QEvent) -> bool:
    """Whether ``event`` is Esc asking to be a shortcut, which a field that closes on Esc takes.

    The main window's Esc stops a reply; in these fields Esc closes what they are in.
    """
    if (
        event.type() == QEvent.Type.ShortcutOverride
        and isinstance(event, QKeyEvent)
        and event.key() == Qt.Key.Key_Escape
    ):
        event.accept()
        return True
    return False


class _SearchField(QLineEdit):
    """The query field: Up/Down/Page keys move through the hits, Enter opens the current one.

    Signals:
        moved(int): move the current hit by this many rows.
        chosen(): open the current hit.
        escaped(): close the dialog.
    """

    moved = Signal(int)
    chosen = Signal()
    escaped = Signal()

    def event(self, event: QEvent) -> bool:
        return True if _takes_escape(event) else super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.escaped.emit()
            return
        steps = {
            Qt.Key.Key_Down: 1,
            Qt.Key.Key_Up: -1,
            Qt.Key.Key_PageDown: 5,
            Qt.Key.Key_PageUp: -5,
        }
        if event.key() in steps:
            self.moved.emit(steps[Qt.Key(event.key())])
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.chosen.emit()
            return
        super().keyPressEvent(event)


class MessageSearchDialog(QDialog):
    """Search every conversation's messages (non-modal; closes when a hit is opened).

    Signals:
        open_requested(object): a ``MessageHit`` to open, and the query it was found with
            (``(hit, query)``).
        results_shown(object): a search's result is on screen (``MessageSearchResult``).
    """

    open_requested = Signal(object)
    results_shown = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, debounce_ms: int = DEBOUNCE_MS) -> None:
        super().__init__(parent)
        self.setObjectName("messageSearchDialog")
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
        self._search: Search | None = None
        self._tasks = TaskSet(report=self._on_failed)
        self._generation = 0
        self._query = ""
        self._result: MessageSearchResult | None = None
        self._progress: IndexCount | None = None
        self._failed = False
        self.field = _SearchField(self)
        self.field.setObjectName("messageSearchField")
        self.field.setClearButtonEnabled(True)
        self.status = QLabel(self)
        self.status.setObjectName("messageSearchStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.model = SearchHitsModel(self)
        self.delegate = SearchHitDelegate(self)
        self.results = QListView(self)
        self.results.setObjectName("messageSearchResults")
        self.results.setModel(self.model)
        self.results.setItemDelegate(self.delegate)
        self.results.setUniformItemSizes(True)
        self.results.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.results.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        layout = QVBoxLayout(self)
        layout.addWidget(self.field)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.field.textChanged.connect(self._on_field_text_changed)
        self.field.moved.connect(self._on_field_moved)
        self.field.chosen.connect(self._open_current)
        self.field.escaped.connect(self.close)
        self.results.clicked.connect(self._on_results_activated)
        self.results.activated.connect(self._on_results_activated)
        self.model.more_requested.connect(self._on_model_more_requested)
        self.resize(640, 520)
        self.retranslate()

    # -- wiring -------------------------------------------------------------------------------

    def set_search(self, search: Search | None) -> None:
        """What searches (``MessageSearch.search_messages``); ``None`` while the app starts."""
        self._search = search
        if search is not None and self.field.text().strip():
            self._timer.start()

    def set_progress(self, progress: IndexCount | None) -> None:
        """How far the background indexing is (``None``: every message is indexed)."""
        was = self._progress
        self._progress = progress
        self._show_status()
        if was is not None and progress is None and self.field.text().strip():
            self._timer.start()  # the rest is searchable now: ask again

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.setWindowTitle(self.tr("Search all messages"))
        self.field.setPlaceholderText(self.tr("Search every conversation"))
        self.field.setAccessibleName(self.tr("Search all messages"))
        self.results.setAccessibleName(self.tr("Messages found"))
        self.delegate.you = self.tr("You")
        self.delegate.author_format = self.tr("{author}: ")
        untitled = self.tr("New conversation")
        self.delegate.untitled = untitled
        self.model.untitled = untitled
        self._show_status()
        self.results.viewport().update()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        super().changeEvent(event)

    # -- searching ----------------------------------------------------------------------------

    def _on_field_text_changed(self, _text: str) -> None:
        self._timer.start()

    def _on_timer_timeout(self) -> None:
        self._generation += 1
        query = self.field.text()
        if not query.strip():
            self._query = ""
            self._result = None
            self.model.set_hits([], False)
            self._show_status()
            return
        if self._search is None:
            self._show_status()
            return
        self._tasks.spawn(self._run(self._generation, query, 0), self.tr("The search failed."))

    def _on_model_more_requested(self) -> None:
        if self._search is not None and self._query:
            self._tasks.spawn(
                self._run(self._generation, self._query, self.model.rowCount()),
                self.tr("The search failed."),
            )

    async def _run(self, generation: int, query: str, offset: int) -> None:
        assert self._search is not None
        result = await self._search(query, PAGE, offset)
        if generation != self._generation or not shiboken6.isValid(self):
            return  # typed on meanwhile: a newer search is on its way
        self._failed = False
        self._query = query
        self._result = result
        if offset:
            self.model.append_hits(result.hits, result.more)
        else:
            self.model.set_hits(result.hits, result.more)
            if result.hits:
                self.results.setCurrentIndex(self.model.index(0))
        if result.indexing is not None:
            self._progress = result.indexing
        self._show_status()
        self.results_shown.emit(result)

    def _on_failed(self, what: str, error: BaseException) -> None:
        self._failed = True
        self.status.setText(what)

    def _show_status(self) -> None:
        if self._failed:
            return
        locale = self.locale()
        lines = []
        progress = self._progress
        if progress is not None:
            lines.append(
                self.tr(
                    "Indexing messages… {done} of {total}. Until it is done, results come from "
                    "the messages indexed so far."
                ).format(
                    done=locale.toString(progress.indexed), total=locale.toString(progress.total)
                )
            )
        result = self._result
        if not self.field.text().strip():
            lines.append(self.tr("Type a word or a phrase to search every conversation."))
        elif self._search is None:
            lines.append(self.tr("Search is available once ETOS Desktop has started."))
        elif result is not None:
            count = self.model.rowCount()
            if not count:
                lines.append(
                    self.tr("No message contains “{query}”.").format(query=result.query.strip())
                )
            elif self.model.more:
                lines.append(self.tr("More than %n message(s) found; scroll for more.", "", count))
            else:
                lines.append(self.tr("%n message(s) found.", "", count))
        self.status.setText("\n".join(lines))

    # -- choosing -----------------------------------------------------------------------------

    def _on_field_moved(self, steps: int) -> None:
        rows = self.model.rowCount()
        if not rows:
            return
        current = self.results.currentIndex().row()
        row = max(0, min(rows - 1, (current if current >= 0 else -1) + steps))
        index = self.model.index(row)
        self.results.setCurrentIndex(index)
        self.results.scrollTo(index)

    def _open_current(self) -> None:
        if self._timer.isActive():
            return  # the list is of an earlier text; Enter again once it is searched
        index = self.results.currentIndex()
        if not index.isValid() and self.model.rowCount():
            index = self.model.index(0)
        self._on_results_activated(index)

    def _on_results_activated(self, index: QModelIndex) -> None:
        hit = self.model.hit(index.row()) if index.isValid() else None
        if hit is None:
            return
        self.open_requested.emit((hit, self._query))
        self.close()

    def show_search(self) -> None:
        """Show the dialog with its last query selected, ready to type."""
        self.show()
        self.raise_()
        self.activateWindow()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()


class _FindField(QLineEdit):
    """The find bar's field: Enter is the next (older) match, Shift+Enter the previous, Esc closes.

    Esc is taken before the window's shortcuts (Esc there stops a reply).

    Signals:
        stepped(int): +1 for the next (older) match, -1 for the previous (newer) one.
        escaped(): close the bar.
    """

    stepped = Signal(int)
    escaped = Signal()

    def event(self, event: QEvent) -> bool:
        return True if _takes_escape(event) else super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_Escape:
            self.escaped.emit()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.stepped.emit(-1 if shift else 1)
            return
        if key == Qt.Key.Key_Up:
            self.stepped.emit(1)
            return
        if key == Qt.Key.Key_Down:
            self.stepped.emit(-1)
            return
        super().keyPressEvent(event)


class FindBar(QFrame):
    """Find in the open conversation: a field, "3 of 17", older/newer and close.

    Matches are counted from the newest message (where the view starts): "1 of 17" is the
    newest, the next one is older.

    Signals:
        text_changed(str): what to find (debounced).
        stepped(int): go to the next (+1, older) or previous (-1, newer) match.
        closed(): the bar was closed.
    """

    text_changed = Signal(str)
    stepped = Signal(int)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None, *, debounce_ms: int = 150) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.field = _FindField(self)
        self.field.setObjectName("findField")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel(self)
        self.count.setObjectName("findCount")
        self.count.setTextFormat(Qt.TextFormat.PlainText)
        self.older_button = QToolButton(self)
        self.older_button.setObjectName("findOlder")
        self.older_button.setText("↑")
        self.newer_button = QToolButton(self)
        self.newer_button.setObjectName("findNewer")
        self.newer_button.setText("↓")
        self.close_button = QToolButton(self)
        self.close_button.setObjectName("findClose")
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.older_button)
        layout.addWidget(self.newer_button)
        layout.addWidget(self.close_button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(lambda: self.text_changed.emit(self.field.text()))
        self.field.textChanged.connect(lambda _t: self._timer.start())
        self.field.stepped.connect(self._step)
        self.field.escaped.connect(self.close_bar)
        self.older_button.clicked.connect(lambda: self._step(1))
        self.newer_button.clicked.connect(lambda: self._step(-1))
        self.close_button.clicked.connect(self.close_bar)
        self._state: tuple[int, int] | None = None
        self._searching = False
        self.retranslate()
        self.hide()

    def _step(self, direction: int) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.text_changed.emit(self.field.text())
            return
        self.stepped.emit(direction)

    def open_bar(self) -> None:
        """Show the bar with its text selected, ready to type."""
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def close_bar(self) -> None:
        """Hide the bar and say so (the view drops its marks)."""
        self._timer.stop()
        self.hide()
        self.closed.emit()

    def pending(self) -> bool:
        """Whether typed text waits for its find to start."""
        return self._timer.isActive()

    def set_count(self, current: int | None, total: int) -> None:
        """Show "current of total" (``current`` is 1-based; ``None`` with no matches)."""
        self._searching = False
        self._state = (current or 0, total)
        self._show_count()

    def set_searching(self) -> None:
        """Show that a find is running."""
        self._searching = True
        self._show_count()

    def clear_count(self) -> None:
        """Forget the last find's count."""
        self._state = None
        self._searching = False
        self._show_count()

    def _show_count(self) -> None:
        has = self._state is not None and self._state[1] > 0
        self.older_button.setEnabled(has)
        self.newer_button.setEnabled(has)
        if self._state is None:
            self.count.setText("")
            return
        current, total = self._state
        locale = self.locale()
        if not total:
            self.count.setText(self.tr("No matches"))
        else:
            self.count.setText(
                self.tr("{current} of {total}").format(
                    current=locale.toString(current), total=locale.toString(total)
                )
            )

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.field.setPlaceholderText(self.tr("Find in this conversation"))
        self.field.setAccessibleName(self.tr("Find in this conversation"))
        self.older_button.setToolTip(self.tr("Older match (Enter)"))
        self.older_button.setAccessibleName(self.tr("Older match"))
        self.newer_button.setToolTip(self.tr("Newer match (Shift+Enter)"))
        self.newer_button.setAccessibleName(self.tr("Newer match"))
        self.close_button.setToolTip(self.tr("Close (Esc)"))
        self.close_button.setAccessibleName(self.tr("Close the find bar"))
        self._show_count()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        super().changeEvent(event)


def content_browser(widget: MessageWidget) -> QTextBrowser | None:
    """The text browser that shows a message's content (one once a message is finished)."""
    for browser in widget.findChildren(QTextBrowser):
        if browser.objectName() == "messageContent" and browser.isVisibleTo(widget):
            return browser
    return None


def set_searched(widget: MessageWidget, searched: bool) -> None:
    """Mark (or unmark) a message as the one a search opened (``searchHit``, styled in QSS)."""
    if bool(widget.property("searchHit")) == searched:
        return
    widget.setProperty("searchHit", searched)
    widget.style().unpolish(widget)
    widget.style().polish(widget)
    widget.update()


@dataclass
class _Marks:
    """What is marked in one message: spans of its document's text, and the current one."""

    spans: list[tuple[int, int]]
    current: int | None = None


class MessageJump(QObject):
    """Opens a conversation at a message, scrolls to it and marks it and its matches.

    The conversation is opened through the controller and its older pages loaded as scrolling
    up loads them, so the view is the one a reopen shows. The view keeps the message in place
    while the pages are laid out, until the user scrolls.

    Signals:
        shown(int): a message was scrolled to and marked (its id).
        missing(int): the message is not in the conversation's shown history (an edit hid it,
            or it was deleted meanwhile).
    """

    shown = Signal(int)
    missing = Signal(int)

    def __init__(self, controller: ChatController, chat: ChatPanel) -> None:
        super().__init__(chat)
        self._controller = controller
        self._chat = chat
        self._marks: dict[int, _Marks] = {}
        self._searched: int | None = None
        self._pin: tuple[int, int | None] | None = None
        self._pin_timer = QTimer(self)
        self._pin_timer.setSingleShot(True)
        self._pin_timer.setInterval(_PIN_MS)
        self._pin_timer.timeout.connect(self._release)
        bar = chat.scroll.verticalScrollBar()
        bar.rangeChanged.connect(self._on_bar_range_changed)
        bar.actionTriggered.connect(lambda _action: self._release())
        controller.conversation_loading.connect(lambda _cid: self.clear())
        controller.conversation_closed.connect(self.clear)
        # A message sent takes the view to the bottom, as always: the held match lets go.
        controller.user_message_saved.connect(lambda _row: self._release())
        controller.older_messages_loaded.connect(lambda _rows, _more: self._apply_all())

    # -- opening ------------------------------------------------------------------------------

    async def open_message(
        self,
        conversation_id: int,
        message_id: int,
        marks: Callable[[str], list[tuple[int, int]]] | None = None,
    ) -> bool:
        """Open ``conversation_id`` scrolled to ``message_id``, marked; return whether shown.

        Args:
            conversation_id: The conversation.
            message_id: The message to show.
            marks: Where to mark in the message's shown text (the search's matches).
        """
        controller = self._controller
        current = controller.current
        if current is None or current.id != conversation_id:
            await controller.open_conversation(conversation_id)
        if not await self.load_until(conversation_id, message_id):
            self.missing.emit(message_id)
            return False
        widget = self._chat.widget(message_id)
        assert widget is not None
        self.clear()
        self.mark_searched(message_id)
        if marks is not None:
            browser = content_browser(widget)
            if browser is not None:
                self._marks[message_id] = _Marks(marks(browser.document().toPlainText()))
        self._apply(message_id)
        self.scroll_to(message_id)
        self.shown.emit(message_id)
        return True

    async def load_until(self, conversation_id: int, message_id: int) -> bool:
        """Load older pages of the open conversation until ``message_id`` is shown.

        Pages are asked for as the "Load earlier messages" button asks (one at a time, the one
        scrolling up asked for awaited first). Returns whether the message is shown: not when
        the conversation changed meanwhile, a page failed, or the message is not among the
        shown ones.
        """
        chat = self._chat
        controller = self._controller
        while chat.widget(message_id) is None:
            current = controller.current
            if current is None or current.id != conversation_id:
                return False
            fetching = chat.loading_older()
            if not fetching and not chat.older_button.isVisibleTo(chat):
                return False
            loaded = self._next_page()
            if not fetching:
                chat.older_button.click()
            if not await loaded:
                return False
        return True

    def _next_page(self) -> Awaitable[bool]:
        """An awaitable of the next older page: ``True`` when it came.

        ``False`` on a failure, another conversation or a timeout. Connected now, before the
        page is asked for.
        """
        import asyncio

        controller = self._controller
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def settle(value: bool) -> None:
            if not future.done():
                future.set_result(value)

        def on_loaded(_rows: object, _more: object) -> None:
            settle(True)

        def on_failed(_what: object, _error: object) -> None:
            settle(False)

        def on_loading(_cid: object) -> None:
            settle(False)

        controller.older_messages_loaded.connect(on_loaded)
        controller.task_failed.connect(on_failed)
        controller.conversation_loading.connect(on_loading)

        async def wait() -> bool:
            try:
                return await asyncio.wait_for(future, _PAGE_TIMEOUT)
            except TimeoutError:
                return False
            finally:
                controller.older_messages_loaded.disconnect(on_loaded)
                controller.task_failed.disconnect(on_failed)
                controller.conversation_loading.disconnect(on_loading)

        return wait()

    # -- marking ------------------------------------------------------------------------------

    def set_marks(self, marks: dict[int, _Marks]) -> None:
        """Mark these spans (by message id) instead of what was marked, the searched one kept."""
        for message_id in list(self._marks):
            if message_id not in marks:
                self._marks.pop(message_id)
                self._apply(message_id)
        self._marks.update(marks)
        for message_id in marks:
            self._apply(message_id)

    def mark_searched(self, message_id: int) -> None:
        """Mark ``message_id`` as the message searched for (the one marked before is not)."""
        previous, self._searched = self._searched, message_id
        if previous is not None and previous != message_id:
            widget = self._chat.widget(previous)
            if widget is not None:
                set_searched(widget, False)
        widget = self._chat.widget(message_id)
        if widget is not None:
            set_searched(widget, True)

    def clear(self) -> None:
        """Unmark everything (another conversation opens, a new search)."""
        self._release()
        searched, self._searched = self._searched, None
        if searched is not None:
            widget = self._chat.widget(searched)
            if widget is not None:
                set_searched(widget, False)
        doomed = list(self._marks)
        self._marks.clear()
        for message_id in doomed:
            self._apply(message_id)

    def marked(self) -> dict[int, list[tuple[int, int]]]:
        """What is marked now: spans by message id (tests read it)."""
        return {message_id: list(m.spans) for message_id, m in self._marks.items()}

    def _apply_all(self) -> None:
        for message_id in list(self._marks):
            self._apply(message_id)
        if self._searched is not None:
            widget = self._chat.widget(self._searched)
            if widget is not None:
                set_searched(widget, True)

    def _apply(self, message_id: int) -> None:
        widget = self._chat.widget(message_id)
        if widget is None:
            return
        browser = content_browser(widget)
        if browser is None:
            return
        marks = self._marks.get(message_id)
        if marks is None:
            browser.setExtraSelections([])
            return
        colors = theme.colors(widget)
        selections = []
        length = browser.document().characterCount()
        for number, (start, end) in enumerate(marks.spans):
            if end >= length:
                continue
            selection = QTextEdit.ExtraSelection()
            cursor = QTextCursor(browser.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor  # type: ignore[attr-defined]
            char = QTextCharFormat()
            char.setBackground(
                QColor(colors.mark_current if number == marks.current else colors.mark)
            )
            char.setForeground(QColor(colors.mark_text))
            selection.format = char  # type: ignore[attr-defined]
            selections.append(selection)
        browser.setExtraSelections(selections)
        # A theme switch renders the message again (a new document): mark it again then.
        if not widget.property("searchMarksFollow"):
            widget.setProperty("searchMarksFollow", True)
            widget.content_rendered.connect(lambda m=message_id: self._apply(m))

    # -- scrolling ----------------------------------------------------------------------------

    def scroll_to(self, message_id: int, span: tuple[int, int] | None = None) -> None:
        """Scroll so the message (or its span) stands in the upper part of the view, and hold it.

        The view holds it there while the pages above are laid out (their heights grow as
        their documents lay out), until the user scrolls or ``_PIN_MS`` passes.
        """
        self._pin = (message_id, span[0] if span is not None else None)
        self._place()
        self._pin_timer.start()

    def _release(self) -> None:
        self._pin = None
        self._pin_timer.stop()

    def _on_bar_range_changed(self, _minimum: int, _maximum: int) -> None:
        if self._pin is not None:
            self._place()

    def _place(self) -> None:
        if self._pin is None:
            return
        message_id, position = self._pin
        widget = self._chat.widget(message_id)
        if widget is None:
            return
        messages = self._chat.messages
        top = widget.mapTo(messages, QPoint(0, 0)).y()
        viewport = self._chat.scroll.viewport().height()
        target = top - viewport // 5
        if position is not None:
            browser = content_browser(widget)
            if browser is not None:
                cursor = QTextCursor(browser.document())
                cursor.setPosition(min(position, browser.document().characterCount() - 1))
                y = browser.mapTo(messages, browser.cursorRect(cursor).topLeft()).y()
                if y - top > viewport // 2:
                    target = y - viewport // 3
        bar = self._chat.scroll.verticalScrollBar()
        bar.setValue(max(bar.minimum(), min(bar.maximum(), target)))


class MessageSearchUi(QObject):
    """The window's message search: the dialog (Ctrl+Shift+F) and the find bar (Ctrl+F).

    Built with the window (its actions exist from the first frame); :meth:`attach` gives it the
    controller and the core search once the services are up.
    """

    def __init__(self, window: QWidget, chat: ChatPanel) -> None:
        super().__init__(window)
        self._window = window
        self._chat = chat
        self._controller: ChatController | None = None
        self._search: MessageSearch | None = None
        self._indexer: MessageIndexer | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._tasks = TaskSet()
        self.dialog: MessageSearchDialog | None = None
        self.find_bar = FindBar(chat)
        chat.add_bar(self.find_bar)
        self.jump: MessageJump | None = None
        self._find_generation = 0
        # The find's matches: (message id, occurrence in the message), newest first.
        self._matches: list[tuple[int, int]] = []
        self._position = 0
        self._find_text = ""
        self.find_bar.text_changed.connect(self._on_find_bar_text_changed)
        self.find_bar.stepped.connect(self._on_find_bar_stepped)
        self.find_bar.closed.connect(self._on_find_bar_closed)

    def attach(
        self,
        controller: ChatController,
        search: MessageSearch,
        indexer: MessageIndexer | None = None,
    ) -> None:
        """Connect to the chat controller and the core search (the services are up)."""
        self._controller = controller
        self._search = search
        self._indexer = indexer
        self.jump = MessageJump(controller, self._chat)
        self.jump.missing.connect(self._on_jump_missing)
        controller.conversation_opened.connect(self._on_controller_conversation_opened)
        # A reply that ends may hold the text: counted again, the view left where it is.
        controller.reply_finished.connect(lambda _row: self._refind(keep=True))
        if indexer is not None:
            self._unsubscribe = indexer.subscribe(self._on_indexer_progress)
        if self.dialog is not None:
            self.dialog.set_search(search.search_messages)
            self.dialog.set_progress(indexer.progress if indexer is not None else None)

    def detach(self) -> None:
        """Stop following the indexer (the app shuts down)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._tasks.cancel_all()

    # -- every conversation -------------------------------------------------------------------

    def open_search(self) -> MessageSearchDialog:
        """Show the search dialog (made at its first use)."""
        if self.dialog is None:
            dialog = MessageSearchDialog(self._window)
            dialog.open_requested.connect(self._on_dialog_open_requested)
            if self._search is not None:
                dialog.set_search(self._search.search_messages)
            if self._indexer is not None:
                dialog.set_progress(self._indexer.progress)
            self.dialog = dialog
        # Replies are shown under the companion's name (the one the window shows now).
        self.dialog.delegate.companion = self._chat.companion_name
        self.dialog.show_search()
        return self.dialog

    def _on_jump_missing(self, _message_id: int) -> None:
        # Deleted since it was found, or hidden by an edit: said where the user looks next.
        window = self._window
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(
                self.tr("That message is no longer shown in its conversation."), 8000
            )

    def _on_indexer_progress(self, progress: IndexCount | None) -> None:
        if self.dialog is not None:
            self.dialog.set_progress(progress)

    def _on_dialog_open_requested(self, chosen: tuple[MessageHit, str]) -> None:
        hit, query = chosen
        if self.find_bar.isVisible():
            self.find_bar.close_bar()
        self._tasks.spawn(
            self._open_hit(hit, query),
            self.tr("The message was not opened."),
        )

    async def _open_hit(self, hit: MessageHit, query: str) -> None:
        from etos_desktop.core.chat.search import match_spans, parse_query

        if self.jump is None:
            return
        parsed = parse_query(query)
        await self.jump.open_message(
            hit.conversation_id, hit.message_id, lambda text: match_spans(text, parsed)
        )

    # -- the open conversation ----------------------------------------------------------------

    def open_find(self) -> None:
        """Show the find bar (Ctrl+F) and find its text again."""
        self.find_bar.open_bar()
        if self.find_bar.field.text():
            self._refind()

    def _on_find_bar_closed(self) -> None:
        self._find_generation += 1
        self._matches = []
        self.find_bar.clear_count()
        if self.jump is not None:
            self.jump.clear()
        self._chat.focus_composer()

    def _on_controller_conversation_opened(self, *_args: Any) -> None:
        if self.find_bar.isVisible() and self.find_bar.field.text():
            self._refind()

    def _refind(self, *, keep: bool = False) -> None:
        if self.find_bar.isVisible():
            self._on_find_bar_text_changed(self.find_bar.field.text(), keep=keep)

    def _on_find_bar_text_changed(self, text: str, *, keep: bool = False) -> None:
        self._find_generation += 1
        self._find_text = text
        controller = self._controller
        conversation = controller.current if controller is not None else None
        if not text.strip() or self._search is None or conversation is None:
            self._matches = []
            self.find_bar.clear_count() if not text.strip() else self.find_bar.set_count(None, 0)
            if self.jump is not None:
                self.jump.set_marks({})
            return
        self.find_bar.set_searching()
        self._tasks.spawn(
            self._find(self._find_generation, conversation.id or 0, text, keep),
            self.tr("The conversation was not searched."),
        )

    async def _find(self, generation: int, conversation_id: int, text: str, keep: bool) -> None:
        assert self._search is not None
        found = await self._search.find_in_conversation(conversation_id, text)
        if generation != self._find_generation:
            return
        matches = [(message_id, k) for message_id, count in reversed(found) for k in range(count)]
        current = self._matches[self._position] if self._matches else None
        self._matches = matches
        stay = keep and current in matches
        self._position = matches.index(current) if stay and current is not None else 0
        if not matches:
            self.find_bar.set_count(None, 0)
            if self.jump is not None:
                self.jump.set_marks({})
            return
        await self._show_match(generation, scroll=not stay)

    def _on_find_bar_stepped(self, direction: int) -> None:
        if not self._matches:
            return
        self._position = (self._position + direction) % len(self._matches)
        self._find_generation += 1
        self._tasks.spawn(
            self._show_match(self._find_generation),
            self.tr("The conversation was not searched."),
        )

    async def _show_match(self, generation: int, *, scroll: bool = True) -> None:
        jump = self.jump
        controller = self._controller
        if jump is None or controller is None or controller.current is None:
            return
        conversation_id = controller.current.id or 0
        message_id, occurrence = self._matches[self._position]
        self.find_bar.set_count(self._position + 1, len(self._matches))
        if scroll and not await jump.load_until(conversation_id, message_id):
            return
        if generation != self._find_generation:
            return
        jump.set_marks(self._find_marks(message_id, occurrence))
        if not scroll:
            return
        current = jump.marked().get(message_id, [])
        index = min(occurrence, len(current) - 1) if current else -1
        jump.scroll_to(message_id, current[index] if index >= 0 else None)
        jump.mark_searched(message_id)

    def _find_marks(self, current_id: int, occurrence: int) -> dict[int, _Marks]:
        """The find's text in every message shown, its current occurrence apart."""
        needle = self._find_text
        marks: dict[int, _Marks] = {}
        shown = {message_id for message_id, _ in self._matches}
        for message_id in shown:
            widget = self._chat.widget(message_id)
            browser = content_browser(widget) if widget is not None else None
            if browser is None:
                continue
            document = browser.document()
            spans = []
            cursor = document.find(needle, 0)
            while not cursor.isNull():
                spans.append((cursor.selectionStart(), cursor.selectionEnd()))
                cursor = document.find(needle, cursor)
            if spans:
                current = min(occurrence, len(spans) - 1) if message_id == current_id else None
                marks[message_id] = _Marks(spans, current)
        return marks

    def matches(self) -> list[tuple[int, int]]:
        """The find's matches, newest first: (message id, occurrence in it)."""
        return list(self._matches)

    def position(self) -> int:
        """The current match's index in :meth:`matches`."""
        return self._position
