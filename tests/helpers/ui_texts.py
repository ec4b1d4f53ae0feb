"""Every text a window shows, and which of them are left in English.

``window_texts`` walks the widgets of a window that are shown and collects each text a person
sees or hears: labels, buttons, tooltips, placeholders, accessible names and descriptions,
window and group titles, combo box items, item views' headers and cells, tabs, spin box
suffixes, the actions of menus (the menu bar's, buttons' and widgets' own) and read-only
text panes. ``english`` says which of them hold English words: a text counts as untranslated
when, after the allowed parts are taken out, a word of two or more ASCII letters remains. The
allowed parts are the product name (ETOS), names of products, formats and models, URLs, paths,
key names (Ctrl+N, Esc), identifiers with a digit or "_" (OPENAI_API_KEY, gpt-4o), the
``/remember`` command, and the words of the user's own data that a test passes in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt
from PySide6.QtGui import QAction, QTextDocumentFragment
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QSpinBox,
    QTabBar,
    QTextEdit,
    QWidget,
)

#: Names kept as they are in every language: the product, other products, formats, terms.
ALLOWED_WORDS = frozenset(
    {
        "ETOS",
        "Desktop",  # only as "ETOS Desktop", see _ALLOWED
        "OpenAI",
        "DeepSeek",
        "Moonshot",
        "Kimi",
        "Qwen",
        "DashScope",
        "Zhipu",
        "GLM",
        "SiliconFlow",
        "OpenRouter",
        "Ollama",
        "Qt",
        "PySide",
        "MIT",
        "API",
        "URL",
        "JSON",
        "Markdown",
        "README",
        "token",
        "English",  # the language's own name in the language picker
        "AI",
        # Where sync files can live (Settings → Sync).
        "WebDAV",
        "Syncthing",
        "Dropbox",
        "OneDrive",
        "iCloud",
        "Nextcloud",
        "ChatGPT",  # the apps whose memory lists and character cards are imported
        "Claude",
        "SillyTavern",
        "PNG",
    }
)
_ALLOWED = (
    re.compile(r"ETOS Desktop"),
    re.compile(r"LM Studio"),
    re.compile(r"https?://\S+"),
    # A path: the data folder, a file name.
    re.compile(r"(?:[A-Za-z]:)?(?:[/\\][\w.\- ]+){2,}"),
    re.compile(r"\b[\w.-]+\.(?:json|md|db|png|svg|qm)\b"),
    # Keys, alone or combined: Ctrl+Shift+C, Shift+Enter, Esc, F2.
    re.compile(r"\b(?:(?:Ctrl|Shift|Alt|Meta|Cmd)\+)+\S+|\b(?:Esc|Enter|Tab|Up|F\d{1,2})\b"),
    # Identifiers: anything with a digit or an underscore (gpt-4o, OPENAI_API_KEY, v1).
    re.compile(r"[\w.-]*[_\d][\w.-]*"),
    re.compile(r"/remember\b"),
)
_WORD = re.compile(r"[A-Za-z]{2,}")


def english(text: str, data_words: Iterable[str] = (), phrases: Iterable[str] = ()) -> list[str]:
    """The English words ``text`` keeps once the allowed parts are taken out.

    Args:
        text: A text the UI shows.
        data_words: Words of the user's own data (allowed anywhere).
        phrases: Exact strings that are data (a model's name such as "fake-chat").
    """
    rest = text
    for phrase in phrases:
        rest = rest.replace(phrase, " ")
    for pattern in _ALLOWED:
        rest = pattern.sub(" ", rest)
    allowed = ALLOWED_WORDS | set(data_words)
    return [w for w in _WORD.findall(rest) if w not in allowed]


_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def chinese(text: str, allowed: Iterable[str] = ("中文",)) -> list[str]:
    """The runs of Chinese characters in ``text``, but for ``allowed`` (a language's own name)."""
    rest = text
    for phrase in allowed:
        rest = rest.replace(phrase, " ")
    return _HAN.findall(rest)


def _plain(text: str) -> str:
    if "<" in text and ">" in text:
        return QTextDocumentFragment.fromHtml(text).toPlainText()
    return text


def _describe(widget: QWidget) -> str:
    trail = []
    parent = widget.parentWidget()
    while parent is not None and len(trail) < 2:
        trail.append(parent.objectName() or type(parent).__name__)
        parent = parent.parentWidget()
    name = widget.objectName() or type(widget).__name__
    return "/".join([*reversed(trail), name])


def action_texts(actions: Iterable[QAction], where: str) -> Iterator[tuple[str, str]]:
    for action in actions:
        if action.isSeparator() or not action.isVisible():
            continue
        yield f"{where} action", action.text()
        if action.toolTip() != action.text().replace("&", ""):
            yield f"{where} action tooltip", action.toolTip()
        yield f"{where} action status tip", action.statusTip()
        menu = action.menu()
        if isinstance(menu, QMenu):
            yield f"{where} menu", menu.title()
            yield from action_texts(menu.actions(), f"{where}/{menu.title()}")


def _view_texts(view: QAbstractItemView, where: str, rows: int) -> Iterator[tuple[str, str]]:
    model = view.model()
    if model is None:
        return

    def columns(parent: QModelIndex) -> int:
        # A list model's columnCount() is private in PySide6.
        return 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)

    for column in range(columns(QModelIndex())):
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            value = model.headerData(column, Qt.Orientation.Horizontal, role)
            if isinstance(value, str):
                yield f"{where} header", value

    def walk(parent: QModelIndex) -> Iterator[tuple[str, str]]:
        for row in range(min(model.rowCount(parent), rows)):
            for column in range(columns(parent)):
                index = model.index(row, column, parent)
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                    value = index.data(role)
                    if isinstance(value, str):
                        yield f"{where} cell {row},{column}", value
            first = model.index(row, 0, parent)
            if not isinstance(model, QAbstractListModel) and model.hasChildren(first):
                yield from walk(first)

    yield from walk(QModelIndex())


def widget_texts(widget: QWidget, *, rows: int = 50) -> Iterator[tuple[str, str]]:
    """The texts one widget shows or gives to assistive technology, with where they are."""
    where = _describe(widget)
    if widget.isWindow():
        yield f"{where} title", widget.windowTitle()
    yield f"{where} tooltip", widget.toolTip()
    yield f"{where} accessible name", widget.accessibleName()
    yield f"{where} accessible description", widget.accessibleDescription()
    yield f"{where} status tip", widget.statusTip()
    if isinstance(widget, QLabel):
        yield where, widget.text()
    elif isinstance(widget, QAbstractButton):
        yield where, widget.text()
        menu = widget.menu() if hasattr(widget, "menu") else None
        if isinstance(menu, QMenu):
            yield from action_texts(menu.actions(), where)
    elif isinstance(widget, QLineEdit):
        yield f"{where} placeholder", widget.placeholderText()
    elif isinstance(widget, QPlainTextEdit | QTextEdit):
        yield f"{where} placeholder", widget.placeholderText()
        if widget.isReadOnly():
            yield where, widget.toPlainText()
    elif isinstance(widget, QGroupBox):
        yield f"{where} title", widget.title()
    elif isinstance(widget, QComboBox):
        for index in range(widget.count()):
            yield f"{where} item {index}", widget.itemText(index)
    elif isinstance(widget, QTabBar):
        for index in range(widget.count()):
            yield f"{where} tab {index}", widget.tabText(index)
    elif isinstance(widget, QAbstractItemView):
        yield from _view_texts(widget, where, rows)
    if isinstance(widget, QAbstractSpinBox):
        yield f"{where} special value", widget.specialValueText()
        if isinstance(widget, QSpinBox):
            yield f"{where} suffix", widget.suffix()
    yield from action_texts(widget.actions(), where)


def _inside(widget: QWidget, names: set[str], window: QWidget) -> bool:
    while widget is not None and widget is not window:
        if widget.objectName() in names:
            return True
        widget = widget.parentWidget()
    return False


def window_texts(window: QWidget, *, skip: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Every text of ``window``'s shown widgets (``skip``: object names whose text is data).

    A menu bar is walked with every menu and submenu (its actions).
    """
    skipped = set(skip)
    found: list[tuple[str, str]] = []
    widgets = [window, *window.findChildren(QWidget)]
    for widget in widgets:
        if widget is not window and (
            not widget.isVisibleTo(window) or widget.window() is not window
        ):
            continue
        if _inside(widget, skipped, window):
            continue
        if isinstance(widget, QMenu):  # walked from their actions
            continue
        found += [(where, _plain(text)) for where, text in widget_texts(widget) if text]
    return found


def untranslated(
    window: QWidget,
    *,
    data: Iterable[str] = (),
    phrases: Iterable[str] = (),
    skip: Iterable[str] = (),
) -> list[str]:
    """The texts of ``window`` that hold English words, as "where: text (words)" lines.

    ``data`` and ``phrases`` are the user's data (see :func:`english`); ``skip`` names widgets
    whose texts are data (a message's text).
    """
    words, exact = set(data), tuple(phrases)
    found = []
    for where, text in window_texts(window, skip=skip):
        left = english(text, words, exact)
        if left:
            found.append(f"{where}: {text!r} ({', '.join(left)})")
    return found
