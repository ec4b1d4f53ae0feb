"""Memory lists from other apps (ChatGPT, Claude, Markdown, text): found, checked, previewed, applied.

Each list is read through the real ``TransferService`` on a real engine and database, as the
Memory page reads it; the bad-input tests mirror the JSON import's
(``tests/core/memory/test_transfer.py``): every refused file changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import select

from etos_desktop.core.clock import FakeClock
from etos_desktop.core.memory.access import MemoryAccess
from etos_desktop.core.memory.engine import MemoryEngine
from etos_desktop.core.storage.tables import MemoryRevisionRow
from etos_desktop.core.transfer import document, foreign
from etos_desktop.core.transfer.document import ImportInvalid, ImportPreview
from etos_desktop.core.transfer.service import TransferService
from tests.helpers.cards import png_image
from tests.helpers.embedders import HashEmbedder

SECRET = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

CHATGPT = """Here is everything I remember about you:

```
1. [2024-05-01] - User is a software engineer in Berlin.
2. [2024-06-12] - Prefers concise answers without filler.
3. [Date unknown] - Has a daughter named Lily.
4. [May 3, 2024] - Is learning Japanese on Duolingo.
```

Let me know if you'd like me to forget or update anything!
"""

CLAUDE = """**Work context**

The user is a backend engineer at Acme, working on the payments service. They write Go and \
review Postgres migrations.

**Personal context**

Lives in Lisbon with a cat called Miso. Runs along the river most mornings.

**Top of mind**

Training for a half marathon in October.
"""

MARKDOWN = """# About me

- Likes jazz, especially Bill Evans
* Plays the cello
  every Sunday with a quartet
+ Keeps a paper diary
- likes jazz, especially Bill Evans.

## Preferences:
1) Tea over coffee
2) Dark mode everywhere
"""

CHINESE = (
    "以下是我记得的关于你的信息：\r\n"
    "・住在杭州\r\n"
    "・喜欢喝乌龙茶\r\n"
    "１．女儿叫莉莉\r\n"
    "（2）每天早上跑步\r\n"
    "一、不吃香菜\r\n"
    "· 用 pnpm 管理前端依赖【2024年3月5日】\r\n"
    "如果你还需要补充，请告诉我。\r\n"
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


@pytest.fixture
def engine(tmp_path: Path, clock: FakeClock) -> Iterator[MemoryEngine]:
    eng = MemoryEngine.open(tmp_path / "memory.db", embedder=HashEmbedder(), clock=clock)
    yield eng
    eng.close()


@pytest.fixture
def access(engine: MemoryEngine) -> Iterator[MemoryAccess]:
    acc = MemoryAccess(engine)
    yield acc
    acc.close()


@pytest.fixture
def service(access: MemoryAccess) -> TransferService:
    return TransferService(access)


def revisions(engine: MemoryEngine) -> int:
    return engine._db.call(lambda s: len(s.exec(select(MemoryRevisionRow)).all()))


async def preview_of(
    service: TransferService, tmp_path: Path, data: bytes | str, name: str = "list.txt"
) -> ImportPreview:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return await service.preview_import_file(path, now=NOW)


def ticked(preview: ImportPreview) -> list[str]:
    assert preview.source is not None
    return [e.content for e in preview.to_add if e.index not in preview.source.unticked]


# -- happy paths ----------------------------------------------------------------------------------


async def test_a_chatgpt_list_is_imported_with_its_dates(
    service: TransferService, engine: MemoryEngine, tmp_path: Path
) -> None:
    preview = await preview_of(service, tmp_path, CHATGPT)
    source = preview.source
    assert source is not None
    assert (source.kind, source.facts) == ("chatgpt", 4)
    assert ticked(preview) == [
        "User is a software engineer in Berlin.",
        "Prefers concise answers without filler.",
        "Has a daughter named Lily.",
        "Is learning Japanese on Duolingo.",
    ]
    # The offer at the end is there to tick, not ticked.
    [offer] = [e for e in preview.to_add if e.index in source.unticked]
    assert offer.content.startswith("Let me know")
    assert [source.line_of(e.index) for e in preview.to_add] == [4, 5, 6, 7, 10]
    assert [left.line for left in source.left_out] == [1]
    assert source.dated == frozenset({0, 1, 3})

    result = await service.apply_import(preview.keeping(range(4), now=NOW))
    assert len(result.added) == 4
    stored = {m.content: m for m in engine.memories()}
    assert set(stored) == set(ticked(preview))
    assert {m.source for m in stored.values()} == {"imported"}
    assert {m.kind for m in stored.values()} == {"fact"}
    assert stored["User is a software engineer in Berlin."].created_at == datetime(
        2024, 5, 1, 12, tzinfo=UTC
    )
    assert stored["Has a daughter named Lily."].created_at == NOW


async def test_claudes_memory_is_read_by_its_headings(
    service: TransferService, tmp_path: Path
) -> None:
    preview = await preview_of(service, tmp_path, CLAUDE, "claude memory.md")
    assert preview.source is not None
    assert preview.source.kind == "claude"
    assert ticked(preview) == [
        "The user is a backend engineer at Acme, working on the payments service. They write Go "
        "and review Postgres migrations.",
        "Lives in Lisbon with a cat called Miso. Runs along the river most mornings.",
        "Training for a half marathon in October.",
    ]
    assert [item.reason for item in preview.source.left_out] == ["heading"] * 3


async def test_a_markdown_list_joins_wrapped_items_and_marks_repeats(
    service: TransferService, tmp_path: Path
) -> None:
    preview = await preview_of(service, tmp_path, MARKDOWN, "facts.md")
    source = preview.source
    assert source is not None
    assert source.kind == "markdown"
    assert ticked(preview) == [
        "Likes jazz, especially Bill Evans",
        "Plays the cello every Sunday with a quartet",
        "Keeps a paper diary",
        "Tea over coffee",
        "Dark mode everywhere",
    ]
    [repeat] = [item for item in source.left_out if item.reason == "repeat"]
    assert (repeat.line, repeat.of_line) == (7, 3)


@pytest.mark.parametrize(
    "encoded",
    [
        CHINESE.encode("utf-8"),
        b"\xef\xbb\xbf" + CHINESE.encode("utf-8"),
        CHINESE.encode("utf-16"),  # with its BOM, as Windows Notepad writes it
        b"\xfe\xff" + CHINESE.encode("utf-16-be"),
        CHINESE.encode("utf-32"),
        CHINESE.encode("gb18030"),
    ],
    ids=["utf-8", "utf-8 bom", "utf-16", "utf-16-be", "utf-32", "gb18030"],
)
async def test_a_chinese_list_in_any_encoding_with_full_width_bullets(
    service: TransferService, tmp_path: Path, encoded: bytes
) -> None:
    preview = await preview_of(service, tmp_path, encoded)
    assert preview.source is not None
    assert preview.source.kind == "text"
    assert ticked(preview) == [
        "住在杭州",
        "喜欢喝乌龙茶",
        "女儿叫莉莉",
        "每天早上跑步",
        "不吃香菜",
        "用 pnpm 管理前端依赖",
    ]
    dated = next(e for e in preview.to_add if e.content.startswith("用 pnpm"))
    assert dated.created_at == datetime(2024, 3, 5, 12, tzinfo=UTC)


async def test_a_utf16_list_without_a_bom_is_read(service: TransferService, tmp_path: Path) -> None:
    preview = await preview_of(
        service, tmp_path, "I live in Porto\nI am vegetarian\n".encode("utf-16-le")
    )
    assert ticked(preview) == ["I live in Porto", "I am vegetarian"]


async def test_a_plain_list_of_one_fact_a_line(service: TransferService, tmp_path: Path) -> None:
    preview = await preview_of(
        service, tmp_path, "I live in Berlin\r\nMy sister is Anna\r\n\r\nI use pnpm\r\n"
    )
    assert preview.source is not None
    assert preview.source.kind == "text"
    assert ticked(preview) == ["I live in Berlin", "My sister is Anna", "I use pnpm"]


async def test_memories_already_there_are_marked_and_not_imported_twice(
    service: TransferService, engine: MemoryEngine, tmp_path: Path
) -> None:
    cello = engine.save("Plays the cello every Sunday with a quartet.").id
    before = engine.get(cello)
    preview = await preview_of(service, tmp_path, MARKDOWN, "facts.md")
    assert [u.memory.id for u in preview.unchanged] == [cello]
    assert preview.to_update == ()
    assert "Plays the cello every Sunday with a quartet" not in [e.content for e in preview.to_add]
    await service.apply_import(preview)
    assert engine.get(cello) == before  # its wording, kind and dates are left alone
    assert len(engine.memories()) == 5  # the list's five facts, one of them there already

    again = await preview_of(service, tmp_path, MARKDOWN, "facts.md")
    assert not again.has_changes
    assert len(again.unchanged) == 5


async def test_unticked_facts_are_left_out_of_what_is_applied(
    service: TransferService, engine: MemoryEngine, tmp_path: Path
) -> None:
    preview = await preview_of(service, tmp_path, MARKDOWN, "facts.md")
    kept = preview.keeping([preview.to_add[1].index], now=NOW)
    assert kept.active_after == preview.active_after - 4
    await service.apply_import(kept)
    assert [m.content for m in engine.memories()] == ["Plays the cello every Sunday with a quartet"]


async def test_a_list_starting_with_a_bracketed_date_is_not_taken_for_json(
    service: TransferService, tmp_path: Path
) -> None:
    preview = await preview_of(
        service, tmp_path, "[2024-01-02] Likes rain\n[2024-01-03] Hates wind\n"
    )
    assert ticked(preview) == ["Likes rain", "Hates wind"]


# -- the checks every memory passes ---------------------------------------------------------------


async def test_secrets_long_lines_and_control_characters_are_treated_like_a_json_import(
    service: TransferService, engine: MemoryEngine, tmp_path: Path
) -> None:
    text = "\n".join(
        [
            "- Likes\x00 oolong\x1b tea\x85 in the morning",
            f"- My API key is {SECRET}",
            "- " + "word " * 400,
            "- Hidden\u200b mark and \u202ereversed",
            "- Plain fact",
        ]
    )
    preview = await preview_of(service, tmp_path, text, "odd.md")
    assert [(p.index, p.reason, p.field) for p in preview.invalid] == [
        (1, "secret", "content"),
        (2, "too_long", "content"),
    ]
    assert preview.invalid[0].excerpt == ""  # a secret is never repeated
    assert preview.source is not None
    assert [preview.source.line_of(p.index) for p in preview.invalid] == [2, 3]
    # The project's one cleaning rule: controls dropped; zero-width and bidi kept as written.
    assert [e.content for e in preview.to_add] == [
        "Likes oolong tea in the morning",
        "Hidden\u200b mark and \u202ereversed",
        "Plain fact",
    ]
    await service.apply_import(preview)
    assert SECRET not in str([m.content for m in engine.memories()])


async def test_a_long_paragraph_is_split_at_its_sentences(
    service: TransferService, tmp_path: Path
) -> None:
    paragraph = " ".join(f"Sentence number {i} is about the user's garden." for i in range(60))
    preview = await preview_of(service, tmp_path, paragraph)
    assert preview.invalid == ()
    assert len(preview.to_add) > 2
    assert all(len(e.content) <= 1000 for e in preview.to_add)
    assert " ".join(e.content for e in preview.to_add) == paragraph


# -- hostile files --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (png_image(), "not_text"),
        (b"\x00\x01\x02\x03 binary \x00\xff", "not_text"),
        (b"PK\x03\x04" + bytes(range(256)) * 4, "not_text"),
        (b"", "no_facts"),
        (b"\n\n   \n", "no_facts"),
        (b"# Memories\n\n## Work:\n\n---\n", "no_facts"),
        (b"[" * 100_000 + b"]" * 100_000, "not_json"),
        (b'["just", "strings"]', "not_an_export"),
        (b"{not json", "not_json"),
    ],
    ids=["png", "binary", "zip", "empty", "blank", "only headings", "deep", "array", "brace"],
)
async def test_a_file_that_is_no_list_is_refused_and_changes_nothing(
    service: TransferService, engine: MemoryEngine, tmp_path: Path, data: bytes, reason: str
) -> None:
    engine.save("Keeps a diary")
    before = revisions(engine)
    with pytest.raises(ImportInvalid) as caught:
        await preview_of(service, tmp_path, data)
    assert caught.value.params["reason"] == reason
    assert [m.content for m in engine.memories(include_inactive=True)] == ["Keeps a diary"]
    assert revisions(engine) == before


async def test_size_and_count_limits_apply_as_to_a_json_import(
    service: TransferService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(foreign, "MAX_IMPORT_ENTRIES", 2)
    with pytest.raises(ImportInvalid) as caught:
        await preview_of(service, tmp_path, "- a\n- b\n- c\n")
    assert caught.value.params["reason"] == "too_many"

    monkeypatch.setattr(document, "MAX_IMPORT_BYTES", 10)
    reads: list[Path] = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self) or original(self))
    with pytest.raises(ImportInvalid) as caught:
        await preview_of(service, tmp_path, "- one fact that is longer than ten bytes\n")
    assert caught.value.params["reason"] == "too_large"
    assert reads == []  # refused by its size, before it was read


async def test_a_path_with_odd_characters_is_read(service: TransferService, tmp_path: Path) -> None:
    name = "my memories 'ChatGPT' $(rm -rf) ; \u202etxt.md \u8bb0\u5fc6.txt"
    preview = await preview_of(service, tmp_path, CHATGPT, name)
    assert preview.source is not None
    assert preview.source.facts == 4


async def test_the_limit_of_active_memories_applies_and_unticking_brings_it_under(
    tmp_path: Path, clock: FakeClock
) -> None:
    with MemoryEngine.open(tmp_path / "small.db", clock=clock, max_active=3) as small:
        access = MemoryAccess(small)
        try:
            service = TransferService(access)
            preview = await preview_of(service, tmp_path, "- a1\n- b2\n- c3\n- d4\n- e5\n")
            assert preview.over_limit
            kept = preview.keeping([0, 1, 2], now=NOW)
            assert not kept.over_limit
            await service.apply_import(kept)
            assert sorted(m.content for m in small.memories()) == ["a1", "b2", "c3"]
        finally:
            access.close()
