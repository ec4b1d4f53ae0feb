"""Every text in both themes reaches WCAG AA (4.5:1), measured on the rendered windows.

The main window with the showcase conversation (tests/helpers/showcase.py), each Settings page
and the context inspector are rendered in the light and the dark theme, grabbed as composited,
and every visible text widget is measured (tests/helpers/contrast.py). Secondary text
(timestamps, notices, placeholders, help lines) is held to the same bar. Check boxes and the
dialogs' Close icon are held to WCAG's 3:1 for controls and icons (1.4.11).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.app import EtosApp
from etos_desktop.ui.context_dialog import ContextDialog
from tests.helpers import showcase
from tests.helpers.chat_app import history, idle, start_app, stop_app
from tests.helpers.contrast import (
    AA,
    NON_TEXT,
    contrast_ratio,
    image_array,
    low_contrast,
    measure,
    measure_checkbox,
    measure_icon,
    measure_window,
)
from tests.helpers.fake_openai_server import FakeOpenAIServer
from tests.helpers.ui_driver import click, wait_until

TIMEOUT = 15


def _report(where: str, findings: list[object]) -> str:
    return f"{where}: text below {AA}:1\n  " + "\n  ".join(map(str, findings))


async def _settle() -> None:
    # The loop runs Qt's events meanwhile (a nested processEvents would drop qasync's tasks).
    await asyncio.sleep(0.06)


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    app = await start_app(qapp, server, isolated_environment)
    app.window.resize(1400, 900)
    await showcase.fill(app, server)
    yield app
    await stop_app(app)
    app.apply_theme("light")


# -- the measure itself -----------------------------------------------------------------------


def _swatch(qtbot: object, color: str, background: str) -> QWidget:
    box = QWidget()
    box.setStyleSheet(f"background: {background};")
    label = QLabel("Readable text, 可读的文字 — 12:30", box)
    label.setStyleSheet(f"color: {color};")
    QVBoxLayout(box).addWidget(label)
    qtbot.addWidget(box)  # type: ignore[attr-defined]
    box.resize(320, 60)
    box.show()
    return box


def test_the_measure_tells_readable_from_unreadable_text(qtbot: object) -> None:
    assert contrast_ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    black = measure_window(_swatch(qtbot, "#000000", "#ffffff"))
    assert len(black) == 1
    assert black[0].measure.ink > 10
    # Today's dark theme: the palette's black text on the near-black chat background.
    dark = measure_window(_swatch(qtbot, "#000000", "#1e1f24"))
    assert dark[0].measure.ink < 1.5
    # A mid grey on white (3.9:1) fails, as a grey timestamp did.
    grey = measure_window(_swatch(qtbot, "#808080", "#ffffff"))
    assert grey[0].measure.ink < AA


# -- the app --------------------------------------------------------------------------------


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_main_window_text_reaches_aa(etos: EtosApp, theme: str) -> None:
    etos.apply_theme(theme)
    await _settle()
    chat = etos.window.chat
    assert chat.banner.isVisible()
    assert chat.memory_notes()
    measured = " ".join(f.what for f in measure_window(etos.window))
    # Not vacuous: the secondary texts, the note, the banner and a code line were measured.
    for part in ("messageTime", "memoryNoteText", "errorBanner", "messageStatus", "df.head()"):
        assert part in measured, part
    problems = low_contrast(etos.window)
    # The welcome of a new conversation too.
    etos.window.new_action.trigger()
    await idle(etos)
    await wait_until(lambda: etos.window.chat.welcome.memory_count is not None)
    await _settle()
    measured = " ".join(f.what for f in measure_window(etos.window))
    assert "welcomeMemory" in measured
    assert "welcomeTeach" in measured
    problems += low_contrast(etos.window)
    assert not problems, _report(f"main window, {theme}", problems)


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_settings_pages_and_inspector_reach_aa(etos: EtosApp, theme: str) -> None:
    etos.apply_theme(theme)
    await _settle()
    dialog = etos.open_settings()
    assert dialog is not None
    problems: list[str] = []
    for name in dialog.page_names():
        dialog.show_page(name)
        await dialog.wait_idle()
        await _settle()
        problems += [f"{name}: {f}" for f in low_contrast(dialog)]
        if name == "profile":
            # Not vacuous: the profile, its pinned line, its history and the coloured diff.
            measured = " ".join(f.what for f in measure_window(dialog))
            for part in ("profileEditor", "profileHistory", "profileDiff '+ ", "profileDiff '− "):
                assert part in measured, part
    dialog.reject()

    rows = await history(etos)
    reply = next(r for r in rows if r.role == "assistant")
    widget = etos.window.chat.widget(reply.id)
    assert widget is not None
    button = widget.findChild(QToolButton, "contextButton")
    assert button is not None
    await click(button)
    await idle(etos)
    inspector = await wait_until(
        lambda: next((d for d in etos.window.findChildren(ContextDialog) if d.isVisible()), None),
        TIMEOUT,
    )
    await _settle()
    problems += [f"inspector: {f}" for f in low_contrast(inspector)]
    inspector.close()
    assert not problems, _report(theme, problems)


# -- controls and icons (3:1) ------------------------------------------------------------------


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_checkbox_indicators_stand_out(etos: EtosApp, theme: str) -> None:
    etos.apply_theme(theme)
    # "Temporary" is enabled for a new conversation only (WCAG exempts a disabled control).
    etos.window.new_action.trigger()
    await idle(etos)
    await _settle()
    boxes = {
        "Show archived": etos.window.sidebar.archived,
        "Temporary": etos.window.chat.temporary,
    }
    measured: dict[str, float] = {}
    for name, box in boxes.items():
        assert box.isVisible(), name
        assert box.isEnabled(), name
        for checked in (False, True):
            box.blockSignals(True)  # the look, not what checking does
            was = box.isChecked()
            box.setChecked(checked)
            measured[f"{name} {'checked' if checked else 'unchecked'}"] = measure_checkbox(box)
            box.setChecked(was)
            box.blockSignals(False)
    low = {what: f"{ratio:.2f}:1" for what, ratio in measured.items() if ratio < NON_TEXT}
    assert not low, f"{theme}: check boxes below {NON_TEXT}:1: {low}"


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_dialog_close_icon_stands_out(etos: EtosApp, theme: str) -> None:
    etos.apply_theme(theme)
    # Linux desktops (X11, Wayland) put icons on dialog buttons; the offscreen platform does
    # not, so the platform's hint is given here, as a style sheet rule, before the dialog is built.
    qapp = QApplication.instance()
    assert isinstance(qapp, QApplication)
    qapp.setStyleSheet(
        qapp.styleSheet() + "\nQDialogButtonBox { dialogbuttonbox-buttons-have-icons: 1; }"
    )
    await _settle()
    dialog = etos.window.show_about()
    await _settle()
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    close = buttons.button(QDialogButtonBox.StandardButton.Close)
    found = measure_icon(close)
    dialog.close()
    assert found is not None, "the Close button shows no icon"
    assert found.glyph_pixels > 20, found
    assert found.ink >= NON_TEXT, f"{theme}: Close icon {found.ink:.2f}:1 on {found.background}"


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_status_bar_messages_reach_aa(etos: EtosApp, theme: str) -> None:
    # QStatusBar paints its message itself (no label widget to walk): grab the bar and measure.
    etos.apply_theme(theme)
    bar = etos.window.statusBar()
    bar.showMessage("Exported to /home/user/etos-export.json — 已导出", 8000)
    await _settle()
    assert bar.isVisible()
    found = measure(image_array(bar.grab().toImage()))
    assert found is not None
    assert found.glyph_pixels > 50, "no message text was drawn"
    assert found.ink >= AA, f"{theme}: status-bar message {found.ink:.2f}:1 (< {AA}:1)"
