"""The Settings dialog as a whole: pages, Save and Close, languages, and its size on screen."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication, QSize
from PySide6.QtWidgets import QDialog, QWidget

from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.providers.config import ProviderConfig
from etos_desktop.core.settings.paths import settings_path
from etos_desktop.ui.settings.dialog import DEFAULT_SIZE, SettingsDialog
from tests.helpers.qt_async import expect_signal, wait_signal
from tests.helpers.settings_env import (
    LongerTranslator,
    MappingTranslator,
    SettingsEnv,
    clipped_widgets,
    close_settings,
    open_settings,
    type_into,
)
from tests.helpers.ui_driver import (
    answer_box,
    click,
    find_dialog,
    visible_dialogs,
    wait_until,
)


async def show_memory(dialog: SettingsDialog) -> None:
    page = dialog.memory_page
    assert page is not None
    refreshed = expect_signal(page.refreshed)
    dialog.show_page("memory")
    await asyncio.wait_for(refreshed, 10)
    await dialog.wait_idle()


async def test_show_page_by_name(qtbot, ctx: SettingsEnv, access: MemoryAccess) -> None:
    without = open_settings(qtbot, ctx)
    assert without.page_names() == ("providers", "persona", "general")
    with pytest.raises(ValueError, match="memory"):
        without.show_page("memory")
    await close_settings(without, ctx)

    dialog = open_settings(qtbot, ctx, memory=access)
    assert dialog.page_names() == ("providers", "persona", "general", "memory")
    for row, name in enumerate(dialog.page_names()):
        dialog.show_page(name)
        assert dialog.current_page_name() == name
        assert dialog.page_list.currentRow() == row
        assert dialog.page_list.item(row).text() == name.capitalize()
    with pytest.raises(ValueError, match="nowhere"):
        dialog.show_page("nowhere")
    await close_settings(dialog, ctx)


async def test_closing_with_unsaved_edits_asks_first(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    await type_into(dialog.persona_page.name_edit, "Mo")

    await click(dialog.close_button)
    assert await answer_box("Cancel") == (
        "Some settings were changed but not saved. Save them before closing?"
    )
    await dialog.wait_idle()
    assert dialog.isVisible()

    await click(dialog.close_button)
    await answer_box("Discard")
    await dialog.wait_idle()
    assert not dialog.isVisible()
    assert not settings_path(ctx.data_dir).exists()
    await close_settings(dialog, ctx)


async def test_closing_with_unsaved_edits_can_save_them(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    await type_into(dialog.persona_page.name_edit, "Mo")
    await click(dialog.close_button)
    await answer_box("Save")
    await dialog.wait_idle()
    assert not dialog.isVisible()
    assert ctx.reload_settings().get("persona.name") == "Mo"
    await close_settings(dialog, ctx)


async def test_closing_unchanged_dialog_does_not_ask(qtbot, ctx: SettingsEnv) -> None:
    dialog = open_settings(qtbot, ctx)
    await click(dialog.close_button)
    assert not dialog.isVisible()
    assert visible_dialogs() == []
    await close_settings(dialog, ctx)


async def test_the_memory_page_saves_its_settings_with_the_dialog(
    qtbot, ctx: SettingsEnv, access: MemoryAccess, engine: MemoryEngine
) -> None:
    memory_id = engine.save("Likes jazz").id
    dialog = open_settings(qtbot, ctx, memory=access)
    await show_memory(dialog)
    page = dialog.memory_page
    assert page is not None
    assert page.model.rowCount() == 1
    assert not dialog.is_modified()

    await click(page.enabled_check)
    assert not page.enabled_check.isChecked()
    page.embedder_combo.setCurrentIndex(page.embedder_combo.findData("keywords"))
    page.approval_combo.setCurrentIndex(page.approval_combo.findData("ask"))
    page.top_k_spin.setValue(9)
    assert dialog.is_modified()
    assert dialog.status_label.text() == "Unsaved changes"
    assert await dialog.save()
    reloaded = ctx.reload_settings()
    assert reloaded.get("memory.enabled") is False
    assert reloaded.get("memory.embedder") == "keywords"
    assert reloaded.get("memory.approval") == "ask"
    assert reloaded.get("memory.retrieval_top_k") == 9
    assert not dialog.is_modified()

    # Undo lives only as long as the dialog.
    page.select_ids([memory_id])
    await click(page.delete_button)
    await answer_box("Delete")
    await page.wait_idle()
    assert page.undo_available() == 1
    await click(dialog.close_button)
    assert page.undo_available() == 0
    await close_settings(dialog, ctx)


# -- every awaited dialog survives Settings closing under it (defect 3) -----------------------


async def _open_editor(dialog: SettingsDialog) -> None:
    assert dialog.memory_page is not None
    await click(dialog.memory_page.add_button)
    await find_dialog(name="memoryEditor")


async def _open_delete_confirmation(dialog: SettingsDialog) -> None:
    page = dialog.memory_page
    assert page is not None
    page.select_ids([m.id for m in page.model.memories()])
    await click(page.delete_button)
    await find_dialog(name="confirmBox")


async def _open_export_chooser(dialog: SettingsDialog) -> None:
    assert dialog.memory_page is not None
    dialog.memory_page.export_json_action.trigger()
    await find_dialog(name="saveFileDialog")


async def _open_avatar_chooser(dialog: SettingsDialog) -> None:
    dialog.show_page("persona")
    await click(dialog.persona_page.choose_avatar_button)
    await find_dialog(name="openFileDialog")


async def _open_remove_confirmation(dialog: SettingsDialog) -> None:
    dialog.show_page("providers")
    await click(dialog.providers_page.remove_button)
    await find_dialog(name="confirmBox")


@pytest.mark.parametrize(
    "open_one",
    [
        _open_editor,
        _open_delete_confirmation,
        _open_export_chooser,
        _open_avatar_chooser,
        _open_remove_confirmation,
    ],
)
@pytest.mark.parametrize("how", ["close", "delete"])
async def test_closing_settings_while_one_of_its_dialogs_is_open(
    qtbot,
    ctx: SettingsEnv,
    access: MemoryAccess,
    engine: MemoryEngine,
    open_one: Callable[[SettingsDialog], Any],
    how: str,
) -> None:
    engine.save("Likes jazz")
    ctx.settings.upsert_provider(
        ProviderConfig(id="p1", name="Mine", preset="custom", base_url="http://127.0.0.1:9/v1")
    )
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.resize(1000, 700)
    parent.show()
    dialog = open_settings(qtbot, ctx, memory=access, parent=parent)
    await show_memory(dialog)
    await open_one(dialog)
    opened = [d for d in visible_dialogs() if d is not dialog]
    assert len(opened) == 1

    if how == "close":
        dialog.close()  # the window's close button
    else:
        # What the app does when Settings finishes: the dialog and its children are deleted.
        destroyed = expect_signal(dialog.destroyed)
        dialog.done(0)
        dialog.deleteLater()
        await asyncio.wait_for(destroyed, 5)
    await asyncio.wait_for(dialog.wait_idle() if how == "close" else asyncio.sleep(0), 5)
    await wait_until(lambda: all(not shiboken6.isValid(d) or not d.isVisible() for d in opened))
    assert [d for d in visible_dialogs(QDialog) if d is not parent] == []
    assert [m.content for m in engine.memories()] == ["Likes jazz"]  # nothing was done
    assert [p.id for p in ctx.reload_settings().providers()] == []  # the file is untouched
    await ctx.registry.aclose()


# -- languages --------------------------------------------------------------------------------

#: A text of each page and the widget that shows it.
PAGE_TEXTS = {
    "providers": ("Fetch models", lambda d: d.providers_page.fetch_button.text()),
    "persona": ("Reset to default", lambda d: d.persona_page.reset_prompt_button.text()),
    "general": ("Interface", lambda d: d.general_page._groups["ui"].title()),
    "memory": ("Memories per message", lambda d: d.memory_page.per_message_label.text()),
    "dialog": ("Save", lambda d: d.save_button.text()),
}


@pytest.mark.parametrize("page", list(PAGE_TEXTS))
async def test_a_translator_switch_retranslates_each_page(
    qtbot, ctx: SettingsEnv, access: MemoryAccess, page: str
) -> None:
    source, shown = PAGE_TEXTS[page]
    dialog = open_settings(qtbot, ctx, memory=access)
    if page != "dialog":
        dialog.show_page(page)
    assert shown(dialog) == source
    translator = MappingTranslator({source: "译文"})
    QCoreApplication.installTranslator(translator)
    try:
        await wait_until(lambda: shown(dialog) == "译文", what=f"{page} to retranslate")
    finally:
        QCoreApplication.removeTranslator(translator)
    await wait_until(lambda: shown(dialog) == source)
    await close_settings(dialog, ctx)


# -- size and layout (defect 6) ---------------------------------------------------------------


async def _visit_every_page(dialog: SettingsDialog) -> dict[str, list[str]]:
    """Show each page; return what is clipped on each."""
    clipped: dict[str, list[str]] = {}
    for name in dialog.page_names():
        if name == "memory":
            await show_memory(dialog)
        else:
            dialog.show_page(name)
        await asyncio.sleep(0.05)  # let layouts settle
        clipped[name] = clipped_widgets(dialog)
    return clipped


@pytest.fixture
async def busy_settings(
    ctx: SettingsEnv, engine: MemoryEngine, populate: Callable[[], dict[str, int]]
) -> SettingsEnv:
    """Settings with something on every page: providers, memories of every kind and state."""
    populate()
    ctx.settings.upsert_provider(
        ProviderConfig(
            id="p1",
            name="Qwen (DashScope)",
            preset="qwen",
            base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
            chat_model="qwen-plus",
        )
    )
    return ctx


async def test_every_page_lays_out_at_the_default_size(
    qtbot, busy_settings: SettingsEnv, access: MemoryAccess
) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.resize(1000, 700)  # the main window's default size
    parent.show()
    dialog = open_settings(qtbot, busy_settings, memory=access, parent=parent, first_run=True)
    size = dialog.size()
    assert size.width() <= parent.width()
    assert size.height() <= parent.height()
    available = dialog.screen().availableGeometry()
    assert size.width() <= available.width()
    assert size.height() <= available.height()

    clipped = await _visit_every_page(dialog)

    assert clipped == {name: [] for name in dialog.page_names()}
    assert dialog.size() == size  # visiting the pages (Memory too) never grows it
    await close_settings(dialog, busy_settings)


async def test_longer_translations_fit_the_default_size(
    qtbot, busy_settings: SettingsEnv, access: MemoryAccess
) -> None:
    translator = LongerTranslator()
    QCoreApplication.installTranslator(translator)
    try:
        dialog = open_settings(qtbot, busy_settings, memory=access, first_run=True)
        dialog.resize(DEFAULT_SIZE)
        assert dialog.size() == DEFAULT_SIZE  # its minimum is not larger
        assert dialog.providers_page.fetch_button.text() == "Fetch modelsFetc"

        clipped = await _visit_every_page(dialog)

        assert clipped == {name: [] for name in dialog.page_names()}
        assert dialog.size() == DEFAULT_SIZE
        await close_settings(dialog, busy_settings)
    finally:
        QCoreApplication.removeTranslator(translator)


async def test_the_dialog_fits_a_smaller_main_window(
    qtbot, ctx: SettingsEnv, access: MemoryAccess
) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.resize(760, 520)
    parent.show()
    dialog = open_settings(qtbot, ctx, memory=access, parent=parent)
    assert dialog.size() == QSize(760, 520)
    assert await _visit_every_page(dialog) == {name: [] for name in dialog.page_names()}
    assert dialog.size() == QSize(760, 520)
    await close_settings(dialog, ctx)


async def test_the_model_list_does_not_widen_the_dialog(
    qtbot, ctx: SettingsEnv, tmp_path: Path
) -> None:
    from tests.helpers.fake_openai_server import FakeOpenAIServer

    models = [f"organisation-with-a-long-name/model-{i}-instruct-q4_K_M-gguf" for i in range(40)]
    with FakeOpenAIServer(models=models) as server:
        dialog = open_settings(qtbot, ctx)
        size = dialog.size()
        page = dialog.providers_page
        page.add_actions["custom"].trigger()
        await type_into(page.url_edit, server.base_url)
        await click(page.fetch_button)
        await wait_signal(page.models_fetched)
        assert page.chat_combo.currentText() == sorted(models)[0]
        assert dialog.size() == size
        assert dialog.minimumSizeHint().width() <= size.width()
        await close_settings(dialog, ctx)
