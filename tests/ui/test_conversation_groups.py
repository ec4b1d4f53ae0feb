"""The sidebar grouped by date, with a preview line: the real list widget under an injected clock.

Conversations last active today, yesterday, five days ago and two months ago land under Today,
Yesterday, Previous 7 days and the month's name; in Chinese with the committed translations
(``.qm``) and the Chinese locale's month format. Each row shows its last message under its title.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QLocale, QPoint, Qt, QTranslator
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from etos_desktop.core.storage.tables import ConversationRow
from etos_desktop.ui.conversation_groups import (
    DateGroup,
    GroupHeaderRole,
    PreviewRole,
    date_group,
)
from etos_desktop.ui.conversation_list import ConversationListPanel

ROOT = Path(__file__).resolve().parents[2]
TODAY = date(2026, 3, 10)


def _row(cid: int, title: str, day: date, *, pinned: bool = False) -> ConversationRow:
    # Noon local time: the day is the same in every time zone the test machine may be in.
    moment = datetime.combine(day, time(12)).astimezone()
    return ConversationRow(id=cid, title=title, created_at=moment, updated_at=moment, pinned=pinned)


ROWS = [
    _row(1, "Pinned plan", TODAY - timedelta(days=40), pinned=True),
    _row(2, "This morning", TODAY),
    _row(3, "Also today", TODAY),
    _row(4, "Last night", TODAY - timedelta(days=1)),
    _row(5, "Five days ago", TODAY - timedelta(days=5)),
    _row(6, "Two months ago", TODAY - timedelta(days=61)),
    _row(7, "Last year", date(2025, 10, 3)),
]


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    translator = QTranslator()
    assert translator.load(str(ROOT / "resources" / "translations" / "etos_zh_CN.qm"))
    QCoreApplication.installTranslator(translator)
    QLocale.setDefault(QLocale("zh_CN"))
    yield
    QCoreApplication.removeTranslator(translator)
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))


@pytest.fixture
def panel(qtbot) -> ConversationListPanel:  # type: ignore[no-untyped-def]
    widget = ConversationListPanel()
    qtbot.addWidget(widget)
    widget.set_today(lambda: TODAY)
    widget.resize(300, 600)
    widget.show()
    widget.set_conversations(ROWS, None)
    widget.set_previews({2: "Let's read the **CSV** file\nwith pandas", 5: "`pip install` it"})
    return widget


def test_the_rule_groups_by_local_day() -> None:
    assert date_group(ROWS[1].updated_at, TODAY) == DateGroup("today")
    assert date_group(ROWS[3].updated_at, TODAY) == DateGroup("yesterday")
    assert date_group(ROWS[4].updated_at, TODAY) == DateGroup("week")
    seven = datetime.combine(TODAY - timedelta(days=7), time(12)).astimezone()
    eight = datetime.combine(TODAY - timedelta(days=8), time(12)).astimezone()
    assert date_group(seven, TODAY) == DateGroup("week")
    assert date_group(eight, TODAY) == DateGroup("month", 2026, 3)
    # Another device's clock ahead: still today.
    assert date_group(ROWS[1].updated_at + timedelta(days=2), TODAY) == DateGroup("today")
    assert date_group(ROWS[0].updated_at, TODAY, pinned=True) == DateGroup("pinned")


def test_conversations_land_under_their_date_headers_in_english(
    panel: ConversationListPanel,
) -> None:
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    panel.model.refresh_groups()
    assert panel.model.headers() == [
        ("Pinned", ["Pinned plan"]),
        ("Today", ["This morning", "Also today"]),
        ("Yesterday", ["Last night"]),
        ("Previous 7 days", ["Five days ago"]),
        ("January", ["Two months ago"]),
        ("October 2025", ["Last year"]),
    ]
    model = panel.model
    # The header is drawn above the first row of a group, which is taller for it.
    option = QStyleOptionViewItem()
    panel.view.initViewItemOption(option)
    first, second = model.index(1), model.index(2)
    assert first.data(GroupHeaderRole) == "Today"
    assert second.data(GroupHeaderRole) is None
    delegate = panel.view.itemDelegate()
    assert delegate.sizeHint(option, first).height() > delegate.sizeHint(option, second).height()
    assert panel.view.visualRect(first).height() > panel.view.visualRect(second).height()
    # Each row reads as its group and its last message to a screen reader.
    assert first.data(Qt.ItemDataRole.AccessibleDescriptionRole) == (
        "Today. Let's read the CSV file with pandas"
    )


def test_previews_are_one_plain_line(panel: ConversationListPanel) -> None:
    model = panel.model
    assert model.index(1).data(PreviewRole) == "Let's read the CSV file with pandas"
    assert model.index(4).data(PreviewRole) == "pip install it"
    assert model.index(2).data(PreviewRole) == ""


def test_a_click_on_a_header_opens_nothing_and_on_the_row_opens_it(
    panel: ConversationListPanel, qtbot
) -> None:  # type: ignore[no-untyped-def]
    opened: list[int] = []
    panel.open_requested.connect(opened.append)
    rect = panel.view.visualRect(panel.model.index(1))
    QTest.mouseClick(
        panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.topLeft() + QPoint(20, 3)
    )
    assert opened == []
    QTest.mouseClick(
        panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.bottomLeft() + QPoint(20, -6)
    )
    assert opened == [2]


def test_conversations_land_under_their_date_headers_in_chinese(
    chinese: None, panel: ConversationListPanel
) -> None:
    panel.model.refresh_groups()
    assert panel.model.headers() == [
        ("置顶", ["Pinned plan"]),
        ("今天", ["This morning", "Also today"]),
        ("昨天", ["Last night"]),
        ("过去 7 天", ["Five days ago"]),
        ("1月", ["Two months ago"]),
        ("2025年10月", ["Last year"]),
    ]


def test_the_groups_follow_the_day_when_the_list_stays_open(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = ConversationListPanel()
    qtbot.addWidget(panel)
    day = [TODAY]
    panel.set_today(lambda: day[0])
    panel.set_conversations(ROWS[1:4], None)
    assert [h for h, _ in panel.model.headers()] == ["Today", "Yesterday"]
    changed: list[bool] = []
    panel.model.layoutChanged.connect(lambda *_: changed.append(True))
    panel.model.check_day()
    assert changed == []  # the same day: nothing to do
    day[0] = TODAY + timedelta(days=1)
    panel.model.check_day()
    assert changed == [True]
    assert [h for h, _ in panel.model.headers()] == ["Yesterday", "Previous 7 days"]
