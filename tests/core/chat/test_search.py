"""Message search: the index kept in step with every write, queries in both languages, snippets."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from etos_desktop.core.chat.search import (
    MessageIndexer,
    MessageSearch,
    make_snippet,
    match_spans,
    parse_query,
)
from etos_desktop.core.clock import FakeClock
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.repositories import ChatRepository


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(tmp_path / "etos.db", tmp_path / "backups", clock=FakeClock())
    await database.open_async()
    yield database
    database.close()


def _found(result: Any) -> list[int]:
    return [hit.message_id for hit in result.hits]


def _indexed(db: Database) -> set[int]:
    def work(session: Any) -> set[int]:
        rows = session.connection().exec_driver_sql("SELECT id FROM message_fts_docsize")
        return {int(r[0]) for r in rows}

    return db.call(work)


async def test_insert_edit_and_delete_keep_the_index_in_step(db: Database) -> None:
    deleted: list[int] = []
    repo = ChatRepository(db, after_delete=lambda: deleted.append(1))
    search = MessageSearch(db)
    conversation = await repo.create_conversation("Kitchen")
    user = await repo.add_message(conversation.id or 0, "user", "Our espresso machine leaks")
    assert _found(await search.search_messages("espresso")) == [user.id]

    # A reply is indexed when it ends, not at each save of its growth.
    reply = await repo.add_message(
        conversation.id or 0, "assistant", "", status="streaming", reply_to_id=user.id
    )
    await repo.update_message(reply.id or 0, content="Descale the gasket")
    assert _found(await search.search_messages("gasket")) == []
    await repo.update_message(reply.id or 0, status="complete")
    assert _found(await search.search_messages("gasket")) == [reply.id]

    # An edit replaces the words: the old ones find nothing.
    await repo.update_message(reply.id or 0, content="Replace the valve")
    assert _found(await search.search_messages("gasket")) == []
    assert _found(await search.search_messages("valve")) == [reply.id]

    # Deleting the user message takes its reply with it, from the index too.
    await repo.delete_message(user.id or 0)
    assert _found(await search.search_messages("espresso")) == []
    assert _found(await search.search_messages("valve")) == []
    assert _indexed(db) == set()
    assert deleted == [1]

    # A conversation's delete takes every message of it.
    other = await repo.create_conversation("Garden")
    kept = await repo.create_conversation("Books")
    for text in ("tomatoes need sun", "tomatoes and basil"):
        await repo.add_message(other.id or 0, "user", text)
    book = await repo.add_message(kept.id or 0, "user", "a novel about tomatoes")
    assert len(_found(await search.search_messages("tomatoes"))) == 3
    await repo.delete_conversation(other.id or 0)
    assert _found(await search.search_messages("tomatoes")) == [book.id]
    assert _indexed(db) == {book.id}
    assert deleted == [1, 1]


async def test_deleted_words_leave_the_file_after_the_purge(tmp_path: Path) -> None:
    db = Database(tmp_path / "etos.db", clock=FakeClock())
    await db.open_async()
    try:
        # Off, as the Windows and macOS builds of SQLite have it; the app's pragmas set it on.
        db.call(lambda s: s.connection().exec_driver_sql("PRAGMA secure_delete = OFF"))
        db.call(lambda s: s.connection().exec_driver_sql("PRAGMA secure_delete = ON"))
        repo = ChatRepository(db)
        conversation = await repo.create_conversation("Secrets")
        for n in range(30):
            await repo.add_message(conversation.id or 0, "user", f"ordinary words number {n}")
        doomed = await repo.add_message(conversation.id or 0, "user", "zebracorn 斑马角兽 lives")
        files = [Path(f"{tmp_path / 'etos.db'}{suffix}") for suffix in ("", "-wal")]
        indexer = MessageIndexer(db, pause=0, purge_delay=0)
        await indexer.purge()  # everything on disk, the WAL checkpointed into the file
        assert b"zebracorn" in files[0].read_bytes()
        await repo.delete_message(doomed.id or 0)
        assert (await MessageSearch(db).search_messages("zebracorn")).hits == ()
        await indexer.purge()
        for path in files:
            if path.exists():
                data = path.read_bytes()
                assert b"zebracorn" not in data
                assert "斑马".encode() not in data
    finally:
        db.close()


async def test_queries_in_chinese_and_english_find_words_and_cjk_substrings(db: Database) -> None:
    repo = ChatRepository(db)
    search = MessageSearch(db)
    conversation = await repo.create_conversation("混合")
    cid = conversation.id or 0
    coffee = await repo.add_message(cid, "user", "昨天早上我的咖啡机突然坏了，只能去楼下买。")
    machine = await repo.add_message(cid, "assistant", "The coffee machines at work keep running.")
    tea = await repo.add_message(cid, "user", "我更喜欢喝茶，机器太吵了。")
    # A CJK run is a substring, found in the middle of a sentence; its characters elsewhere
    # in a message ("机" in "机器") are not enough.
    assert _found(await search.search_messages("咖啡机")) == [coffee.id]
    assert _found(await search.search_messages("啡机突")) == [coffee.id]
    assert set(_found(await search.search_messages("机"))) == {coffee.id, tea.id}
    assert _found(await search.search_messages("咖啡 机器")) == []  # every phrase must match
    # Words in any inflection, every word required, stop words dropped.
    assert _found(await search.search_messages("machine run")) == [machine.id]
    assert _found(await search.search_messages("the Coffee")) == [machine.id]
    assert _found(await search.search_messages("coffee tea")) == []
    # The word being typed is a prefix.
    assert _found(await search.search_messages("coffee mach")) == [machine.id]
    assert _found(await search.search_messages("coffee mach ")) == []
    # Mixed: a Latin word and a CJK run in one query.
    both = await repo.add_message(cid, "user", "用Python写一个咖啡机的控制程序")
    assert _found(await search.search_messages("python 咖啡机")) == [both.id]
    assert (await search.search_messages("   ")).hits == ()


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unterminated',
        "title:coffee",
        "coffee*",
        "NEAR(coffee machine)",
        "coffee AND OR NOT",
        "-coffee ^machine",
        "(coffee",
        "coffee) OR (",
        "'; DROP TABLE message; --",
        "{col}: x",
        "咖啡*机",
    ],
)
async def test_fts_syntax_characters_are_only_text(db: Database, query: str) -> None:
    repo = ChatRepository(db)
    conversation = await repo.create_conversation("x")
    await repo.add_message(conversation.id or 0, "user", "coffee machine 咖啡机 and more")
    result = await MessageSearch(db).search_messages(query)  # never raises
    assert all(hit.conversation_id == conversation.id for hit in result.hits)
    assert await repo.get_conversation(conversation.id or 0) is not None


async def test_ranked_by_bm25_newer_first_on_ties_and_paged(db: Database) -> None:
    repo = ChatRepository(db)
    search = MessageSearch(db)
    conversation = await repo.create_conversation("Pets")
    cid = conversation.id or 0
    ids = [(await repo.add_message(cid, "user", "my cat sleeps")).id for _ in range(5)]
    best = await repo.add_message(cid, "user", "cat cat cat")
    result = await search.search_messages("cat", limit=3)
    assert _found(result)[0] == best.id
    assert _found(result)[1:] == [ids[4], ids[3]]
    assert result.more
    rest = await search.search_messages("cat", limit=3, offset=3)
    assert _found(rest) == [ids[2], ids[1], ids[0]]
    assert not rest.more
    hit = result.hits[0]
    assert (hit.conversation_id, hit.conversation_title, hit.role) == (cid, "Pets", "user")
    assert hit.created_at.tzinfo is not None


async def test_only_messages_shown_in_a_conversation_are_found(db: Database) -> None:
    repo = ChatRepository(db)
    search = MessageSearch(db)
    conversation = await repo.create_conversation("Edits")
    cid = conversation.id or 0
    user = await repo.add_message(cid, "user", "first draft about otters")
    old = await repo.add_message(cid, "assistant", "otters version one", reply_to_id=user.id)
    new = await repo.add_message(cid, "assistant", "otters version two", reply_to_id=user.id)
    assert set(_found(await search.search_messages("otters"))) == {user.id, new.id}
    await repo.set_current_reply(old.id or 0)
    assert set(_found(await search.search_messages("otters"))) == {user.id, old.id}
    await repo.hide_after(user.id or 0, inclusive=True)
    assert _found(await search.search_messages("otters")) == []


def test_snippet_marks_cjk_and_words_where_they_are_written() -> None:
    text = "很长的一段开头。" * 10 + "后来我的咖啡机突然坏了，我们只好去买新的。" + "结尾。" * 60
    query = parse_query("咖啡机")
    snippet = make_snippet(text, query)
    [(start, end)] = snippet.marks
    assert snippet.text[start:end] == "咖啡机"
    assert snippet.cut_before
    assert snippet.cut_after
    assert len(snippet.text) <= 130

    english = "Yesterday   the coffee\nmachines were RUNNING late; don't worry."
    spans = match_spans(english, parse_query("machine running dont"))
    assert [english[a:b] for a, b in spans] == ["machines", "RUNNING", "don't"]
    snippet = make_snippet(english, parse_query("machine"))
    assert snippet.text == "Yesterday the coffee machines were RUNNING late; don't worry."
    assert [snippet.text[a:b] for a, b in snippet.marks] == ["machines"]
    assert not snippet.cut_before
    assert not snippet.cut_after


def test_snippet_of_a_long_message_finds_a_match_far_in() -> None:
    text = "filler words here. " * 3000 + "the zebracorn appears" + " tail" * 100
    snippet = make_snippet(text, parse_query("zebracorn"))
    assert [snippet.text[a:b] for a, b in snippet.marks] == ["zebracorn"]


def test_prefix_only_for_the_word_being_typed() -> None:
    assert parse_query("coffee mach").prefix_last
    assert not parse_query("coffee mach ").prefix_last
    assert not parse_query("coffee ma").prefix_last
    assert not parse_query("咖啡").prefix_last
    assert parse_query("coffee mach").expression == '"coffe" AND "mach"*'
    assert parse_query('say "hi"').expression == '"hi"'


async def test_find_in_conversation_counts_substrings_in_every_message(db: Database) -> None:
    repo = ChatRepository(db)
    search = MessageSearch(db)
    conversation = await repo.create_conversation("Find")
    cid = conversation.id or 0
    first = await repo.add_message(cid, "user", "Coffee, coffee and COFFEE")
    await repo.add_message(cid, "assistant", "tea only")
    third = await repo.add_message(cid, "user", "我的咖啡机 and a coffeepot")
    other = await repo.create_conversation("Other")
    await repo.add_message(other.id or 0, "user", "coffee elsewhere")
    assert await search.find_in_conversation(cid, "coffee") == [(first.id, 3), (third.id, 1)]
    assert await search.find_in_conversation(cid, "咖啡") == [(third.id, 1)]
    assert await search.find_in_conversation(cid, "  ") == []


def test_the_index_is_contentless(tmp_path: Path) -> None:
    db = Database(tmp_path / "etos.db")
    db.open()
    db.close()
    with sqlite3.connect(tmp_path / "etos.db") as conn:
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "message_fts" in tables
    assert "message_fts_content" not in tables
