"""The profile block of the system message: its dated label in both languages."""

from __future__ import annotations

from datetime import UTC, datetime

from etos_desktop.core.profile.injection import profile_block, profile_label
from etos_desktop.core.profile.records import Profile

UPDATED = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_the_label_carries_the_day_the_profile_was_last_updated():
    block = profile_block(Profile(content="## Identity\n- Mia", updated_at=UPDATED), "en")
    assert block is not None
    assert block.kind == "profile"
    assert block.content == "## Identity\n- Mia"
    assert block.label.startswith("The user's profile, last updated 2026-03-01 — compiled")
    assert "a memory or summary with a later date wins" in block.label
    zh = profile_label("zh", UPDATED)
    assert zh.startswith("用户画像（最近更新于 2026-03-01）——根据以往对话整理")
    assert "日期更晚的记忆或摘要为准" in zh
    # A profile without a date (never the case once written) keeps the label readable.
    assert profile_label("en", None).startswith("The user's profile — compiled")
    assert "{" not in profile_label("zh", None)
    assert profile_block(Profile(), "en") is None
