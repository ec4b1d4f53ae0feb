"""Real stores for the Settings dialog on a temporary data dir, and ways to look at its layout."""

from __future__ import annotations

import asyncio
import math
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QTranslator
from PySide6.QtGui import QInputMethodEvent
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QWidget

from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.providers.registry import ProviderRegistry
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.paths import settings_path
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.ui.settings.dialog import SettingsDialog
from tests.helpers.stack import fast_provider_factory
from tests.helpers.ui_driver import type_text


@dataclass
class SettingsEnv:
    """Real stores on the test's data dir, and what a dialog over them needs."""

    data_dir: Path
    settings: SettingsStore
    secrets: SecretStore
    env: dict[str, str]
    registry: ProviderRegistry

    def reload_settings(self) -> SettingsStore:
        """The settings file as a fresh store reads it."""
        store = SettingsStore(settings_path(self.data_dir))
        store.load()
        return store


def make_settings_env(
    data_dir: Path, env: Mapping[str, str] | None = None, *, secrets: SecretStore | None = None
) -> SettingsEnv:
    settings = SettingsStore(settings_path(data_dir))
    settings.load()
    store = secrets or SecretStore(data_dir)
    environ = dict(env or {})
    registry = ProviderRegistry(settings, store, environ, fast_provider_factory([]))
    return SettingsEnv(data_dir, settings, store, environ, registry)


async def no_servers(_candidates: Sequence[str]) -> list[str]:
    return []


def open_settings(
    qtbot: Any,
    ctx: SettingsEnv,
    *,
    probe: Any = no_servers,
    local_candidates: Sequence[str] = (),
    first_run: bool = False,
    memory: MemoryAccess | None = None,
    parent: QWidget | None = None,
) -> SettingsDialog:
    """A shown Settings dialog over ``ctx``'s stores."""
    dialog = SettingsDialog(
        ctx.settings,
        ctx.secrets,
        ctx.registry,
        probe=probe,
        local_candidates=local_candidates,
        env=ctx.env,
        first_run=first_run,
        memory=memory,
        parent=parent,
    )
    if parent is None:
        qtbot.addWidget(dialog)
    dialog.show()
    return dialog


async def close_settings(dialog: SettingsDialog, ctx: SettingsEnv) -> None:
    await dialog.wait_idle()
    dialog.done(0)
    await dialog.wait_idle()
    await ctx.registry.aclose()


async def type_into(widget: Any, text: str) -> None:
    """Replace a field's text as a user does (so ``textEdited`` fires).

    ASCII text is typed key by key; other text (Chinese) arrives the way an input method
    delivers it, as a committed string (QTest cannot press keys for it).
    """
    if text.isascii():
        await type_text(widget, text)
        return
    await type_text(widget, "")
    event = QInputMethodEvent()
    event.setCommitString(text)
    QCoreApplication.sendEvent(widget, event)
    await asyncio.sleep(0)


async def add_custom(dialog: SettingsDialog, *, name: str, url: str, key: str) -> str:
    """Add a custom provider through the Add menu and fill its fields; returns its id."""
    page = dialog.providers_page
    page.add_actions["custom"].trigger()
    provider_id = page.current_id
    assert provider_id is not None
    await type_into(page.name_edit, name)
    await type_into(page.url_edit, url)
    await type_into(page.key_edit, key)
    return provider_id


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class LongerTranslator(QTranslator):
    """A pseudo-translation: every text ~30 % longer, as German or French often are."""

    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        padding = "".join(ch for ch in source if ch not in "{}%\n")
        return source + padding[: math.ceil(len(source) * 0.3)]

    def isEmpty(self) -> bool:  # noqa: N802 (Qt override)
        return False


class MappingTranslator(QTranslator):
    """Translates the given source texts, leaves every other text alone."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        super().__init__()
        self.texts = dict(texts)

    def translate(
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        return self.texts.get(source, "")

    def isEmpty(self) -> bool:  # noqa: N802 (Qt override)
        return False


def clipped_widgets(window: QWidget) -> list[str]:
    """The visible labels, buttons and fixed combo boxes of ``window`` too narrow for their text.

    A word-wrapping label is clipped when its text needs more height than it has; a label's,
    a button's or a combo box's width must hold its size hint.
    """
    found: list[str] = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not window:
            continue
        if widget.objectName().startswith("qt_"):
            continue
        if isinstance(widget, QLabel):
            if not widget.text():
                continue
            if widget.wordWrap():
                if widget.heightForWidth(widget.width()) > widget.height() + 1:
                    found.append(
                        f"label {widget.text()!r}: needs {widget.heightForWidth(widget.width())} px"
                        f" of height, has {widget.height()}"
                    )
                continue
        elif isinstance(widget, QComboBox):
            # An editable combo scrolls its text like a line edit; a fixed one shows it whole.
            if widget.isEditable() or widget.minimumSizeHint().width() <= widget.width():
                continue
            found.append(
                f"combo {widget.currentText()!r}: needs {widget.minimumSizeHint().width()} px,"
                f" has {widget.width()}"
            )
            continue
        elif not isinstance(widget, QAbstractButton):
            continue
        if widget.sizeHint().width() > widget.width():
            found.append(
                f"{type(widget).__name__} {widget.text()!r}: needs"
                f" {widget.sizeHint().width()} px, has {widget.width()}"
            )
    return found
