"""Attachments in the real app: the paperclip, paste and drop; what the model is sent; storage.

Every test drives the real widgets (the composer, the file chooser, the Settings dialog) and
asserts on what the local server received: an image goes as an ``image_url`` part whose data URL
decodes to the downscaled image, a document as a fenced block with its token count, and
nothing reaches a background request (titles, summaries, the profile, consolidation).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QGuiApplication, QImage, QPainter
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QDialogButtonBox, QWidget

from etos_desktop.app import EtosApp
from etos_desktop.core.storage.attachments import blob_root
from etos_desktop.ui.attachments import (
    AttachmentChip,
    DocumentViewerDialog,
    ImageViewerDialog,
    MessageAttachments,
)
from etos_desktop.ui.message_widget import MessageWidget
from tests.helpers.attachment_files import minimal_pdf, sparse_file
from tests.helpers.chat_app import first_outcome, idle, start_app, stop_app
from tests.helpers.chat_view import assert_view_equals_reopen
from tests.helpers.fake_openai_server import FakeOpenAIServer, Text, background
from tests.helpers.qt_async import expect_signal
from tests.helpers.ui_driver import (
    answer_box,
    choose_file,
    click,
    find_dialog,
    type_text,
    visible_dialogs,
    wait_until,
)

TIMEOUT = 15
VISION_MODEL = "gpt-4o-mini"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(models=["fake-chat", VISION_MODEL, "fake-embed"]) as srv:
        yield srv


@pytest.fixture
async def etos(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    """The app on a model the built-in table knows to take images."""
    app = await start_app(qapp, server, isolated_environment, env={"OPENAI_MODEL": VISION_MODEL})
    yield app
    await stop_app(app)


@pytest.fixture
async def text_only(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path
) -> AsyncIterator[EtosApp]:
    """The app on a model the table does not know: text only."""
    app = await start_app(qapp, server, isolated_environment)
    yield app
    await stop_app(app)


def picture(width: int, height: int) -> QImage:
    """A real picture (a gradient and a disc), opaque."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#3060a0"))
    painter = QPainter(image)
    painter.setBrush(QColor("#f0c040"))
    painter.drawEllipse(width // 4, height // 4, width // 2, height // 2)
    painter.end()
    return image


def image_file(folder: Path, name: str, width: int, height: int, fmt: str = "JPEG") -> Path:
    path = folder / name
    assert picture(width, height).save(str(path), fmt)
    return path


def chips(app: EtosApp) -> list[AttachmentChip]:
    return app.window.chat.attachment_tray.chips()


async def wait_for_chips(app: EtosApp, count: int) -> list[AttachmentChip]:
    chat = app.window.chat
    await wait_until(
        lambda: len(chips(app)) == count and not chat.preparing_attachments(),
        TIMEOUT,
        f"{count} attachment chips",
    )
    return chips(app)


async def send_draft(app: EtosApp, text: str) -> tuple[Any, ...]:
    """Type ``text`` (may be empty) after the attachments, click Send, wait for the reply."""
    chat = app.window.chat
    outcome = asyncio.ensure_future(first_outcome(app))
    if text:
        await type_text(chat.composer, text)
    await click(chat.send_button)
    result = await asyncio.wait_for(outcome, TIMEOUT)
    await idle(app)
    return result


def last_user_content(server: FakeOpenAIServer) -> Any:
    chat = [r for r in server.chat_requests() if not background(r.body)]
    return chat[-1].body["messages"][-1]["content"]


def image_parts(content: Any) -> list[QImage]:
    """The images of a user message's ``image_url`` parts, decoded from their data URLs."""
    assert isinstance(content, list), content
    images = []
    for part in content:
        if part.get("type") == "image_url":
            url = part["image_url"]["url"]
            head, data = url.split(",", 1)
            assert head.startswith("data:image/")
            assert head.endswith(";base64")
            image = QImage.fromData(base64.b64decode(data))
            assert not image.isNull()
            images.append(image)
    return images


def drop(target: QWidget, mime: QMimeData) -> None:
    """A real drag-enter and drop of ``mime`` on ``target``, as a file manager delivers them."""
    point = target.rect().center()
    enter = QDragEnterEvent(
        point,
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted(), "the drop target refused the drag"
    event = QDropEvent(
        QPointF(point),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, event)


def file_urls(*paths: Path) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def message_strip(app: EtosApp, role: str = "user") -> MessageAttachments:
    widgets = [
        w for w in app.window.chat.findChildren(MessageWidget) if w.role == role and w.isVisible()
    ]
    strip = widgets[-1].findChild(MessageAttachments)
    assert strip is not None, "the message shows no attachments"
    return strip


# -- images --------------------------------------------------------------------------------


async def test_image_by_the_paperclip_goes_downscaled_and_opens_full_size(
    etos: EtosApp, server: FakeOpenAIServer, tmp_path: Path
):
    photo = image_file(tmp_path, "holiday.jpg", 3000, 2000)
    chat = etos.window.chat
    await click(chat.attach_button)
    await choose_file(str(photo))
    (chip,) = await wait_for_chips(etos, 1)
    assert "3000" not in chip.detail_label.text()  # shows the size it is sent at
    outcome = await send_draft(etos, "What is in this picture?")
    assert outcome[0] == "finished"

    content = last_user_content(server)
    assert content[0] == {"type": "text", "text": "What is in this picture?"}
    (sent,) = image_parts(content)
    # 6 MP scaled to at most 1.5 MP (and 1568 px on the longest side), aspect kept.
    assert (sent.width(), sent.height()) == (1500, 1000)
    assert content[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert not chips(etos), "the composer is cleared once the message is saved"

    view = await assert_view_equals_reopen(etos)
    user = next(m for m in view.messages if m.role == "user")
    assert user.attachments == (("holiday.jpg", True),)

    strip = message_strip(etos)
    (button,) = strip.buttons()
    assert button.focusPolicy() & Qt.FocusPolicy.TabFocus
    assert not button.icon().isNull()
    await click(button)
    viewer = await find_dialog(ImageViewerDialog)
    assert (viewer.image.width(), viewer.image.height()) == (1500, 1000)
    await click(viewer.buttons.button(QDialogButtonBox.StandardButton.Close))
    await wait_until(lambda: not visible_dialogs(ImageViewerDialog), TIMEOUT, "the viewer to close")


async def test_pasted_screenshot_goes_as_an_image_part(etos: EtosApp, server: FakeOpenAIServer):
    chat = etos.window.chat
    QGuiApplication.clipboard().setImage(picture(800, 600))
    chat.composer.setFocus()
    QTest.keyClick(chat.composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    (chip,) = await wait_for_chips(etos, 1)
    assert chip.attachment.name.startswith("pasted-image-")
    assert chat.composer.toPlainText() == ""  # the picture is not pasted as text
    outcome = await send_draft(etos, "")  # an image alone is a message
    assert outcome[0] == "finished"
    content = last_user_content(server)
    (sent,) = image_parts(content)
    assert (sent.width(), sent.height()) == (800, 600)
    assert all(part["type"] == "image_url" for part in content)  # no empty text part
    await assert_view_equals_reopen(etos)


@pytest.mark.parametrize("where", ["composer", "chat"])
async def test_dropped_image_file_goes_as_an_image_part(
    etos: EtosApp, server: FakeOpenAIServer, tmp_path: Path, where: str
):
    chat = etos.window.chat
    big = image_file(tmp_path, "scan.png", 4000, 1000, "PNG")
    target = chat.composer.viewport() if where == "composer" else chat
    drop(target, file_urls(big))
    (_chip,) = await wait_for_chips(etos, 1)
    outcome = await send_draft(etos, "Read this")
    assert outcome[0] == "finished"
    (sent,) = image_parts(last_user_content(server))
    # The longest side is held to 1568 px.
    assert (sent.width(), sent.height()) == (1568, 392)
    assert chat.composer.toPlainText() == ""  # the file's URL did not land in the text


async def test_images_of_older_messages_are_sent_as_notes(
    etos: EtosApp, server: FakeOpenAIServer, tmp_path: Path
):
    chat = etos.window.chat
    for number in range(4):
        drop(chat, file_urls(image_file(tmp_path, f"p{number}.jpg", 64, 48)))
        await wait_for_chips(etos, 1)
        await send_draft(etos, f"picture {number}")
    messages = [r for r in server.chat_requests() if not background(r.body)][-1].body["messages"]
    users = [m for m in messages if m["role"] == "user"]
    # The last three user messages carry their images; the first is a note naming it.
    assert isinstance(users[0]["content"], str)
    assert "p0.jpg" in users[0]["content"]
    assert "data:image" not in users[0]["content"]
    assert [len(image_parts(u["content"])) for u in users[1:]] == [1, 1, 1]


async def test_text_only_model_refuses_images_before_sending_and_keeps_the_draft(
    text_only: EtosApp, server: FakeOpenAIServer, tmp_path: Path
):
    chat = text_only.window.chat
    drop(chat, file_urls(image_file(tmp_path, "cat.jpg", 100, 80)))
    await wait_for_chips(text_only, 1)
    await type_text(chat.composer, "Is this a cat?")
    requests = len(server.chat_requests())
    await click(chat.send_button)
    await idle(text_only)
    assert len(server.chat_requests()) == requests, "nothing may be sent"
    assert chat.token_label.isVisible()
    assert "fake-chat does not accept images" in chat.token_label.text()
    assert chat.composer.toPlainText() == "Is this a cat?"
    assert len(chips(text_only)) == 1
    assert text_only.controller.current is None, "no conversation was created"

    # The service refuses too, should a send get past the composer: nothing saved or sent.
    text_only.controller.send("Is this a cat?", chat.draft_attachments())
    await idle(text_only)
    assert len(server.chat_requests()) == requests
    assert text_only.controller.current is None
    assert "fake-chat does not accept images" in chat.banner_label.text()
    assert len(chips(text_only)) == 1


async def test_settings_override_lets_a_model_take_images(
    text_only: EtosApp, server: FakeOpenAIServer, tmp_path: Path
):
    app = text_only
    chat = app.window.chat
    drop(chat, file_urls(image_file(tmp_path, "cat.jpg", 100, 80)))
    await wait_for_chips(app, 1)
    dialog = app.open_settings("providers")
    await wait_until(lambda: dialog.isVisible(), TIMEOUT, "Settings")
    combo = dialog.findChild(QComboBox, "visionCombo")
    assert combo.currentText() == "Automatic (text only)"
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)  # the next choice: "This model accepts images"
    assert combo.currentData() == "yes"
    saved_signal = expect_signal(dialog.settings_saved)
    await click(dialog.save_button)
    await asyncio.wait_for(saved_signal, TIMEOUT)
    assert app.settings.model_vision_overrides() == {"fake-chat": True}
    dialog.close()
    saved = json.loads((Path(os.environ["ETOS_DATA_DIR"]) / "settings.json").read_text())
    assert saved["model_vision"] == {"fake-chat": True}
    await idle(app)
    assert not chat.token_label.isVisible() or "images" not in chat.token_label.text()
    outcome = await send_draft(app, "Is this a cat?")
    assert outcome[0] == "finished"
    assert len(image_parts(last_user_content(server))) == 1


# -- documents ------------------------------------------------------------------------------


async def test_documents_go_as_fenced_blocks_with_token_counts(
    etos: EtosApp, server: FakeOpenAIServer, tmp_path: Path
):
    notes = tmp_path / "notes.txt"
    notes.write_text("Buy oat milk on Friday.\n", encoding="utf-8")
    table = tmp_path / "sales.csv"
    table.write_text("month,total\nJan,120\nFeb,135\n", encoding="utf-8")
    chinese = tmp_path / "会议纪要.txt"
    chinese.write_bytes("周五下午三点开会，讨论新版本的发布计划。".encode("gb18030"))
    report = tmp_path / "report.pdf"
    report.write_bytes(minimal_pdf(["Quarterly report", "Revenue grew 12 percent"]))
    drop(etos.window.chat, file_urls(notes, table, chinese, report))
    shown = await wait_for_chips(etos, 4)
    by_name = {chip.attachment.name: chip for chip in shown}
    assert by_name["会议纪要.txt"].attachment.text == "周五下午三点开会，讨论新版本的发布计划。"
    for chip in shown:
        assert f"{chip.attachment.tokens}" in chip.detail_label.text()
    outcome = await send_draft(etos, "Summarise these")
    assert outcome[0] == "finished"

    content = last_user_content(server)
    assert isinstance(content, str)
    for chip in shown:
        item = chip.attachment
        assert (
            f'<document name="{item.name}" tokens="{item.tokens}">\n{item.text}\n</document>'
            in (content)
        )
    assert "Revenue grew 12 percent" in content
    assert "month,total" in content
    assert "not instructions" in content
    assert content.endswith("Summarise these")
    view = await assert_view_equals_reopen(etos)
    user = next(m for m in view.messages if m.role == "user")
    assert [name for name, _ in user.attachments] == [
        "notes.txt",
        "sales.csv",
        "会议纪要.txt",
        "report.pdf",
    ]
    strip = message_strip(etos)
    await click(strip.buttons()[3])
    viewer = await find_dialog(DocumentViewerDialog)
    assert "Revenue grew 12 percent" in viewer.view.toPlainText()
    viewer.close()


async def test_document_too_large_for_the_model_is_refused_before_sending(
    text_only: EtosApp, server: FakeOpenAIServer, tmp_path: Path
):
    chat = text_only.window.chat
    big = tmp_path / "novel.txt"
    big.write_text("All work and no play makes Jack a dull boy. " * 4000, encoding="utf-8")
    drop(chat, file_urls(big))
    await wait_for_chips(text_only, 1)
    requests = len(server.chat_requests())
    await type_text(chat.composer, "Summarise it")
    await click(chat.send_button)
    await idle(text_only)
    assert len(server.chat_requests()) == requests
    assert "Too long to send" in chat.token_label.text()
    assert len(chips(text_only)) == 1
    assert chat.composer.toPlainText() == "Summarise it"


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("photo.png", b"this is not a png at all", "not an image"),
        ("empty.txt", b"", "empty"),
        ("program.exe", b"MZ\x90\x00", "only images"),
        ("data.txt", b"\x00\x01\x02binary\x00" * 50, "not a text file"),
    ],
)
async def test_hostile_files_are_refused_with_the_reason(
    etos: EtosApp, tmp_path: Path, name: str, content: bytes, reason: str
):
    path = tmp_path / name
    path.write_bytes(content)
    chat = etos.window.chat
    drop(chat, file_urls(path))
    await wait_until(lambda: chat.banner.isVisible(), TIMEOUT, "the refusal")
    assert reason in chat.banner_label.text()
    assert name in chat.banner_label.text()
    assert not chips(etos)


async def test_huge_sparse_file_is_refused_by_its_size(
    etos: EtosApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    huge = sparse_file(tmp_path / "dump.txt", 200 * 1024 * 1024)
    read: list[Path] = []
    real_open = Path.open

    def watched(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == huge:
            read.append(self)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", watched)
    chat = etos.window.chat
    drop(chat, file_urls(huge))
    await wait_until(lambda: chat.banner.isVisible(), TIMEOUT, "the refusal")
    assert "larger than 5 MB" in chat.banner_label.text()
    assert read == [], "the file was opened"


async def test_bidi_file_name_is_shown_inert(etos: EtosApp, tmp_path: Path):
    tricky = tmp_path / "invoice\u202etxt.exe.md"
    tricky.write_text("# Invoice\n", encoding="utf-8")
    drop(etos.window.chat, file_urls(tricky))
    (chip,) = await wait_for_chips(etos, 1)
    assert "\u202e" not in chip.name_label.full_text()
    assert "⟨U+202E⟩" in chip.name_label.full_text()
    assert "⟨U+202E⟩" in chip.remove_button.accessibleName()


# -- the composer's chips -----------------------------------------------------------------------


async def test_chip_remove_button_is_keyboard_reachable(etos: EtosApp, tmp_path: Path):
    chat = etos.window.chat
    first = tmp_path / "a.txt"
    first.write_text("one", encoding="utf-8")
    second = tmp_path / "b.txt"
    second.write_text("two", encoding="utf-8")
    drop(chat, file_urls(first, second))
    a, b = await wait_for_chips(etos, 2)
    assert a.remove_button.focusPolicy() & Qt.FocusPolicy.TabFocus
    assert a.remove_button.accessibleName() == "Remove a.txt"
    a.remove_button.setFocus()
    QTest.keyClick(a.remove_button, Qt.Key.Key_Space)
    await wait_until(lambda: len(chips(etos)) == 1, TIMEOUT, "the chip to go")
    assert chips(etos) == [b]


# -- storage: reopen, export, delete --------------------------------------------------------------


async def test_files_are_private_survive_a_restart_and_go_with_the_conversation(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path, tmp_path: Path
):
    app = await start_app(qapp, server, isolated_environment, env={"OPENAI_MODEL": VISION_MODEL})
    chat = app.window.chat
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\nShip on Monday.\n", encoding="utf-8")
    drop(chat, file_urls(image_file(tmp_path, "a.jpg", 320, 200), notes))
    await wait_for_chips(app, 2)
    await send_draft(app, "look")
    root = blob_root(isolated_environment)
    files = [p for p in root.rglob("*") if p.is_file()]
    assert len(files) == 2
    for path in files:
        assert len(path.name) == 64
        assert path.parent.name == path.name[:2]
        if os.name == "posix":
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    if os.name == "posix":
        assert stat.S_IMODE(root.stat().st_mode) == 0o700
    conversation_id = app.controller.current.id
    await stop_app(app)

    app = await start_app(qapp, server, isolated_environment, env={"OPENAI_MODEL": VISION_MODEL})
    try:
        await app.controller.open_conversation(conversation_id)
        await idle(app)
        strip = message_strip(app)
        assert strip.names() == ["a.jpg", "notes.md"]
        assert not strip.shown[0].thumbnail.isNull()

        # Export: JSON holds every file (images base64), Markdown links the images it writes.
        out = tmp_path / "out"
        out.mkdir()
        await app.controller.export(conversation_id, out / "chat.json", "json")
        await app.controller.export(conversation_id, out / "chat.md", "markdown")
        exported = json.loads((out / "chat.json").read_text(encoding="utf-8"))
        user = next(m for m in exported["messages"] if m["role"] == "user")
        image, document = user["attachments"]
        assert image["name"] == "a.jpg"
        assert image["mime"] == "image/jpeg"
        assert QImage.fromData(base64.b64decode(image["data_base64"])).width() == 320
        assert document["text"] == "# Plan\nShip on Monday."
        markdown = (out / "chat.md").read_text(encoding="utf-8")
        assert "![a.jpg](chat_files/1-a.jpg)" in markdown
        assert "Ship on Monday." in markdown
        written = out / "chat_files" / "1-a.jpg"
        assert QImage(str(written)).width() == 320
        if os.name == "posix":
            assert stat.S_IMODE(written.stat().st_mode) == 0o600

        # Delete means gone: the rows and the files.
        app.window.delete_action.trigger()
        await answer_box("Delete")
        await idle(app)
        await wait_until(lambda: app.controller.current is None, TIMEOUT, "the delete")
        await idle(app)
        assert [p for p in root.rglob("*") if p.is_file()] == []
    finally:
        await stop_app(app)


async def test_a_file_two_conversations_share_stays_until_both_are_gone(
    etos: EtosApp, tmp_path: Path
):
    chat = etos.window.chat
    notes = tmp_path / "same.txt"
    notes.write_text("shared words", encoding="utf-8")
    drop(chat, file_urls(notes))
    await wait_for_chips(etos, 1)
    await send_draft(etos, "first")
    first = etos.controller.current.id
    etos.controller.new_conversation()
    drop(chat, file_urls(notes))
    await wait_for_chips(etos, 1)
    await send_draft(etos, "second")
    root = blob_root(Path(os.environ["ETOS_DATA_DIR"]))
    assert len([p for p in root.rglob("*") if p.is_file()]) == 1  # stored once
    await etos.controller.delete_conversation(first)
    await idle(etos)
    assert len([p for p in root.rglob("*") if p.is_file()]) == 1


# -- background prompts ---------------------------------------------------------------------------


async def test_background_prompts_carry_no_attachment(
    qapp: QApplication, server: FakeOpenAIServer, isolated_environment: Path, tmp_path: Path
):
    marker = "ZEBRA-PINEAPPLE-7731"
    app = await start_app(
        qapp,
        server,
        isolated_environment,
        env={"OPENAI_MODEL": VISION_MODEL},
        auto_title=True,
        summaries=True,
    )
    try:
        server.script_when(background, Text("Trip planning"))
        # The reply is the model's own words (the local server would echo the whole message).
        server.script(Text("Lisbon's trams are lovely; here is a plan."))
        chat = app.window.chat
        secret_doc = tmp_path / "plan.txt"
        secret_doc.write_text(f"The code word is {marker}.", encoding="utf-8")
        drop(chat, file_urls(secret_doc, image_file(tmp_path, "map.jpg", 200, 100)))
        await wait_for_chips(app, 2)
        await send_draft(app, "I am planning a trip to Lisbon, remember that I love trams")
        conversation_id = app.controller.current.id
        chat_bodies = [json.dumps(r.body) for r in server.chat_requests() if not background(r.body)]
        assert marker in chat_bodies[-1]
        assert "data:image/jpeg" in chat_bodies[-1]

        server.script_when(
            background,
            Text("The user plans a trip to Lisbon and loves trams; they asked for help."),
        )
        assert app.jobs is not None
        await app.jobs.summarise_now(conversation_id)
        server.script_when(
            background,
            Text("## Interests\n- Trams and travel (2026)\n\n## Goals\n- A trip to Lisbon"),
        )
        await app.jobs.refresh_profile_now()
        await app.memory.save("I love trams", "preference", source="manual")
        await app.memory.save("I am planning a trip to Lisbon", "fact", source="manual")
        server.script_when(background, Text('{"actions": []}'))
        await app.jobs.consolidate()
        await idle(app)
        backgrounds = [
            json.dumps(r.body, ensure_ascii=False)
            for r in server.chat_requests()
            if background(r.body)
        ]
        assert len(backgrounds) >= 3, "a title, a summary and a profile request went out"
        for body in backgrounds:
            assert marker not in body
            assert "data:image" not in body
            assert "map.jpg" not in body
            assert "plan.txt" not in body
        for memory in await app.memory.memories(include_inactive=True):
            assert marker not in memory.content
    finally:
        await stop_app(app)
