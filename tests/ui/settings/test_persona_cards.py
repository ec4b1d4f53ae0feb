"""Settings → Persona: import a character card (preview first) and export the persona as one.

The real Settings dialog over real stores on the test's data folder: the page's buttons, the
file chooser (the one stand-in), the real preview dialog, Save; then the settings file, the
avatar file and the written card are read back.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtGui import QImage

from etos_desktop.core.transfer import cards, png_text
from etos_desktop.ui.settings.persona_cards import CardPreviewDialog
from tests.helpers.cards import card_png, png_image, text_chunk, v2_card, v3_card, with_chunks
from tests.helpers.qt_async import wait_signal
from tests.helpers.settings_env import SettingsEnv, close_settings, open_settings, type_into
from tests.helpers.ui_driver import button_with_text, choose_file, click, find_dialog, wait_until

SECRET = "sk-" + "Q9w8E7r6T5y4U3i2O1p0"
MIRA_PROMPT = (
    "Mira is a lighthouse keeper who writes letters to the user.\n\n"
    "Personality: patient, dry-humoured, curious\n\n"
    "Scenario: A stormy night at the lighthouse."
)


async def preview_of(page, path: Path) -> CardPreviewDialog:
    await click(page.import_card_button)
    await choose_file(str(path))
    return await find_dialog(CardPreviewDialog, name="cardPreview")


async def press(dialog, text: str) -> None:
    await click(button_with_text(dialog, text))
    await wait_until(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())


async def test_a_v2_card_is_previewed_then_fills_the_page_and_is_saved(
    qtbot, ctx: SettingsEnv, tmp_path: Path
) -> None:
    path = tmp_path / "Mira the keeper.png"
    path.write_bytes(card_png(v2_card(), image=png_image(600, 900)))
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    assert page.import_card_button.text() == "Import character card…"

    preview = await preview_of(page, path)
    assert preview.title_label.text() == "Character card V2 · PNG · Mira"
    assert preview.about_label.text() == "by etos-tests · version 1.2 · tags: calm, sea"
    assert preview.name_value.text() == "Mira"
    assert preview.prompt_view.toPlainText() == MIRA_PROMPT
    assert not preview.picture_label.pixmap().isNull()
    notes = preview.notes_label.text()
    assert (
        "Not used by ETOS Desktop: the first message, other greetings, example dialogue." in notes
    )
    assert "press Save to keep them" in notes
    await press(preview, "Cancel")
    await page.wait_idle()
    assert page.name_edit.text() == ""  # declined: nothing changed

    preview = await preview_of(page, path)
    await press(preview, "Use as persona")
    await page.wait_idle()
    assert page.name_edit.text() == "Mira"
    assert page.prompt_edit.toPlainText() == MIRA_PROMPT
    assert page.status() == ("ok", "The card “Mira” is on this page: press Save to use it.")
    avatar = Path(page.avatar_path)
    assert avatar.parent == ctx.data_dir / "avatars"
    assert page.avatar_path_label.text() == avatar.name
    stored = avatar.read_bytes()
    assert png_text.read_texts(stored, {"chara", "ccv3"}, limit=10**7) == {}  # the picture only
    image = QImage(str(avatar))
    assert (image.width(), image.height()) == (341, 512)  # the card's picture, scaled
    if os.name == "posix":
        assert stat.S_IMODE(avatar.stat().st_mode) == 0o600
    assert dialog.is_modified()

    assert await dialog.save()
    saved = ctx.reload_settings()
    assert saved.get("persona.name") == "Mira"
    assert saved.get("persona.prompt") == MIRA_PROMPT
    assert saved.get("persona.avatar") == str(avatar)
    await close_settings(dialog, ctx)


async def test_a_json_v3_card_keeps_the_avatar(qtbot, ctx: SettingsEnv, tmp_path: Path) -> None:
    path = tmp_path / "mira.json"
    path.write_text(json.dumps(v3_card(name="Mira V3")), encoding="utf-8")
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    preview = await preview_of(page, path)
    assert preview.title_label.text() == "Character card V3 · JSON · Mira V3"
    assert "The card has no picture: the avatar stays as it is." in preview.notes_label.text()
    await press(preview, "Use as persona")
    await page.wait_idle()
    assert page.name_edit.text() == "Mira V3"
    assert page.avatar_path == ""
    await close_settings(dialog, ctx)


async def test_secrets_and_invisible_characters_are_shown_for_what_they_are(
    qtbot, ctx: SettingsEnv, tmp_path: Path
) -> None:
    path = tmp_path / "sly.png"
    path.write_bytes(
        card_png(
            v2_card(
                name="Sly\u200b",
                description=f"Keeps the key {SECRET} and \u202eesrever writes.",
                personality="",
                scenario="",
            )
        )
    )
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    preview = await preview_of(page, path)
    assert preview.name_value.text() == "Sly\\u200b"
    shown = preview.prompt_view.toPlainText()
    assert shown == "Keeps the key [redacted] and \\u202eesrever writes."
    notes = preview.notes_label.text()
    assert (
        "Something that looks like a password, key or ID number in the description was "
        "replaced with [redacted]." in notes
    )
    assert "invisible characters" in notes
    await press(preview, "Use as persona")
    await page.wait_idle()
    assert SECRET not in page.prompt_edit.toPlainText()
    assert page.prompt_edit.toPlainText() == "Keeps the key [redacted] and \u202eesrever writes."
    assert await dialog.save()
    assert SECRET not in (ctx.data_dir / "settings.json").read_text(encoding="utf-8")
    await close_settings(dialog, ctx)


def _sparse(path: Path) -> None:
    with path.open("wb") as out:
        out.truncate(50 * 1024 * 1024)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.write_bytes(png_image()), "This PNG image holds no character card"),
        (lambda p: p.write_bytes(b"just some notes"), "This file is not a character card"),
        (
            lambda p: p.write_bytes(with_chunks(png_image(), text_chunk("chara", "%%%"))),
            "it is not base64 text",
        ),
        (
            lambda p: p.write_bytes(card_png({**v2_card(), "spec": "chara_card_v9"})),
            "The card is of a kind the app cannot read (“chara_card_v9”)",
        ),
        (lambda p: p.write_bytes(card_png(v2_card(name=7))), "its field “name” has the wrong type"),
        (_sparse, "The file is too large to be a character card."),
    ],
    ids=["no chunk", "not a card", "bad base64", "wrong spec", "wrong type", "50 MB"],
)
async def test_a_hostile_card_says_why_and_changes_nothing(
    qtbot, ctx: SettingsEnv, tmp_path: Path, make, words: str
) -> None:
    path = tmp_path / "odd name 'card' ; \u202egnp.png"
    make(path)
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    await type_into(page.name_edit, "Etos")
    await click(page.import_card_button)
    await choose_file(str(path))
    await page.wait_idle()
    state, text = page.status()
    assert state == "error"
    assert text.startswith("The character card was not imported. ")
    assert words in text
    assert not [w for w in page.findChildren(CardPreviewDialog) if w.isVisible()]
    assert page.name_edit.text() == "Etos"
    assert page.avatar_path == ""
    assert not (ctx.data_dir / "avatars").exists()
    await close_settings(dialog, ctx)


@pytest.mark.parametrize("suffix", [".png", ".json"])
async def test_the_persona_is_exported_as_a_v2_card_and_reads_back_the_same(
    qtbot, ctx: SettingsEnv, tmp_path: Path, suffix: str
) -> None:
    face = tmp_path / "face.png"
    face.write_bytes(png_image(30, 20, (10, 120, 200)))
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    await type_into(page.name_edit, "Juniper")
    page.prompt_edit.setPlainText("You are Juniper, a gardener.\n\nYou speak in short lines.")
    assert page.set_avatar_path(str(face))
    target = tmp_path / "out" / f"Juniper{suffix}"
    target.parent.mkdir()
    await click(page.export_card_button)
    await choose_file(str(target))
    await page.wait_idle()
    assert page.status() == ("ok", f"Exported “Juniper” as a character card to {target}.")
    if os.name == "posix":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
    card = cards.parse_card(target.read_bytes())
    assert card.spec == "v2"
    back = cards.persona_from_card(card, max_name=64, max_prompt=10_000)
    assert (back.name, back.prompt) == (
        "Juniper",
        "You are Juniper, a gardener.\n\nYou speak in short lines.",
    )
    if suffix == ".png":
        assert card.image_size == (30, 20)
        image = QImage()
        assert image.loadFromData(target.read_bytes())
        assert image.pixelColor(3, 3).name() == "#0a78c8"

    # And in again, on a fresh page: the same fields.
    page.name_edit.clear()
    page.prompt_edit.clear()
    preview = await preview_of(page, target)
    await press(preview, "Use as persona")
    await page.wait_idle()
    assert page.name_edit.text() == "Juniper"
    assert page.prompt_edit.toPlainText() == back.prompt
    await close_settings(dialog, ctx)


async def test_an_empty_persona_is_exported_with_the_defaults_and_the_built_in_avatar(
    qtbot, ctx: SettingsEnv, tmp_path: Path
) -> None:
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    target = tmp_path / "etos card"
    await click(page.export_card_button)
    await choose_file(str(target))
    await page.wait_idle()
    written = target.with_name("etos card.png")
    card = cards.parse_card(written.read_bytes())
    name, prompt = page.card_fields()
    assert (card.name, card.description) == (name, prompt)
    assert card.image_size == (512, 512)
    await close_settings(dialog, ctx)


async def test_saving_the_imported_persona_notifies_the_app(
    qtbot, ctx: SettingsEnv, tmp_path: Path
) -> None:
    path = tmp_path / "mira.png"
    path.write_bytes(card_png(v2_card()))
    dialog = open_settings(qtbot, ctx)
    dialog.show_page("persona")
    page = dialog.persona_page
    await press(await preview_of(page, path), "Use as persona")
    await page.wait_idle()
    await click(dialog.save_button, settle=False)
    await wait_signal(dialog.settings_saved)
    assert ctx.reload_settings().get("persona.name") == "Mira"
    await close_settings(dialog, ctx)
