"""Message search at 1,000 conversations × 50 messages: query latency and background indexing.

Run::

    python tests/bench/message_search.py                     # 1,000 × 50, 100 queries
    python tests/bench/message_search.py --conversations 200 # quicker

The store is a year and a half of a bilingual user's chats: the turns of the conversational
retrieval set (``tests/bench/data/conversation_set.json``, English and Chinese) put together into
user messages of one or two turns and replies of two to eight (realistic lengths: ~60-1,300
characters), with the names a person keeps mentioning (Lina, Marco, 小王, 陈医生…) in some of
them, each conversation dated over 540 days. It is written as a version-9 database (before the
message index), so opening it runs migration v10 and the backlog is indexed by the real
``MessageIndexer`` — its rate is the background indexing rate (without the pause the app leaves
between batches for the UI; that pause is printed separately).

Queries (``--queries``, ~100): names, topic words, two-word queries, a word being typed
(prefix), CJK substrings of 2-4 characters cut from the middle of stored sentences, one CJK
character, and words that occur nowhere. Each is searched through ``MessageSearch`` as the UI
does (30 hits with their snippets, the clock around the awaited call, DB-thread hop included),
and timed alternately with the baseline: a plain ``LIKE '%q%'`` scan of the messages for the
query's longest word (what a search without an index does; it finds substrings without ranking),
30 newest first. Target: p95 under 100 ms. The ratio is baseline / index in the same run.

Also printed: the merge after a delete (``optimize``) at this size, which the indexer runs
after deletes, and the file's size with the index. The load average is printed at the start and
the end: on a shared machine the tail follows it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = Path(__file__).resolve().parent / "data" / "conversation_set.json"
NAMES_EN = ("Lina", "Marco", "Dr. Chen", "Aunt Rosa", "Kenji", "Priya")
NAMES_ZH = ("小王", "陈医生", "李阿姨", "张老师", "阿杰", "小美")
START = datetime(2025, 1, 1, tzinfo=UTC)


def load_average() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")


def build_store(path: Path, conversations: int, per: int, seed: int) -> list[str]:
    """Write the version-9 database; return every message text (for the queries)."""
    from etos_desktop.core.storage.migrations import MIGRATIONS, migrate

    turns = json.loads(DATA.read_text(encoding="utf-8"))["memories"]
    by_lang: dict[str, list[str]] = {"en": [], "zh": []}
    for turn in turns:
        by_lang[turn["lang"]].append(turn["text"])
    rng = random.Random(seed)
    conn = sqlite3.connect(path, isolation_level=None)
    v10 = next(i for i, m in enumerate(MIGRATIONS) if m.version == 10)
    migrate(conn, None, now=START, migrations=MIGRATIONS[:v10])
    texts: list[str] = []
    conn.execute("BEGIN")
    for c in range(conversations):
        lang = "zh" if c % 2 else "en"
        pool = by_lang[lang]
        names = NAMES_ZH if lang == "zh" else NAMES_EN
        moment = START + timedelta(days=rng.uniform(0, 540))
        title = rng.choice(pool)[:24]
        cid = conn.execute(
            "INSERT INTO conversation (title, created_at, updated_at) VALUES (?, ?, ?)",
            (title, _stamp(moment), _stamp(moment)),
        ).lastrowid
        rows = []
        for m in range(per):
            user = m % 2 == 0
            parts = [
                rng.choice(pool) for _ in range(rng.randint(1, 2) if user else rng.randint(2, 8))
            ]
            if rng.random() < 0.15:
                name = rng.choice(names)
                parts.insert(0, f"{name}说" if lang == "zh" else f"{name} said so.")
            text = ("" if lang == "zh" else " ").join(parts)
            texts.append(text)
            moment += timedelta(minutes=rng.uniform(0.5, 6))
            rows.append((cid, "user" if user else "assistant", text, _stamp(moment)))
        conn.executemany(
            "INSERT INTO message (conversation_id, role, content, created_at) VALUES (?, ?, ?, ?)",
            rows,
        )
    conn.execute("COMMIT")
    conn.close()
    return texts


_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{6,}")
_WORD = re.compile(r"[A-Za-z]{5,}")


def make_queries(texts: list[str], count: int, seed: int) -> list[str]:
    """About ``count`` queries of the kinds people type (see the module docstring)."""
    rng = random.Random(seed + 1)
    english = [t for t in texts if t.isascii()]
    chinese = [t for t in texts if not t.isascii()]
    words = sorted({w.lower() for t in rng.sample(english, 300) for w in _WORD.findall(t)})
    queries: list[str] = []
    queries += list(NAMES_EN[:3]) + list(NAMES_ZH[:3])
    queries += rng.sample(words, 20)
    queries += [" ".join(rng.sample(words, 2)) for _ in range(12)]
    queries += [w[: max(3, len(w) - 3)] for w in rng.sample(words, 10)]  # being typed
    for text in rng.sample(chinese, 40):
        runs = _CJK_RUN.findall(text)
        if not runs:
            continue
        run = rng.choice(runs)
        size = rng.randint(2, 4)
        start = rng.randint(1, len(run) - size - 1)
        queries.append(run[start : start + size])  # the middle of a sentence
    queries += ["猫", "咖啡", "zebracorn", "量子纠缠", "xylophone quartet"]
    return queries[:count]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def like_scan(session, query: str, limit: int | None = 30) -> list[int]:  # type: ignore[no-untyped-def]
    """The baseline: the messages containing the query's longest word, newest first.

    With ``limit`` the scan stops at the 30 newest matches (no ranking); without, it reads
    every match, as ranking them or counting them would.
    """
    needle = max(query.split(), key=len).replace("%", r"\%").replace("_", r"\_")
    rows = session.connection().exec_driver_sql(
        "SELECT message.id, message.content, conversation.title FROM message "
        "JOIN conversation ON conversation.id = message.conversation_id "
        "WHERE message.hidden_at IS NULL AND message.is_current = 1 "
        "AND message.content LIKE ? ESCAPE '\\' ORDER BY message.id DESC"
        + (f" LIMIT {int(limit)}" if limit else ""),
        (f"%{needle}%",),
    )
    return [int(r[0]) for r in rows]


async def run(args: argparse.Namespace) -> None:
    from etos_desktop.core.chat.search import MessageIndexer, MessageSearch
    from etos_desktop.core.clock import FakeClock
    from etos_desktop.core.storage import message_fts
    from etos_desktop.core.storage.database import Database

    print(f"load average at the start {load_average()} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="etos-msgsearch-") as folder:
        path = Path(folder) / "etos.db"
        started = time.perf_counter()
        texts = build_store(path, args.conversations, args.messages, args.seed)
        chars = sum(map(len, texts))
        print(
            f"store: {args.conversations} conversations × {args.messages} messages = "
            f"{len(texts)} messages, {chars / len(texts):.0f} characters on average "
            f"(median {statistics.median(map(len, texts)):.0f}, max {max(map(len, texts))}), "
            f"{sum(1 for t in texts if not t.isascii()) / len(texts):.0%} Chinese; "
            f"written in {time.perf_counter() - started:.1f} s"
        )
        db = Database(path, Path(folder) / "backups", clock=FakeClock(START))
        started = time.perf_counter()
        await db.open_async()
        print(
            f"open + migration v10 (empty index, backlog marked): {time.perf_counter() - started:.2f} s"
        )
        assert db.call(message_fts.backlog_marked)

        indexer = MessageIndexer(db, pause=0)
        batches: list[float] = []
        last = [time.perf_counter()]

        def on_progress(_progress: object) -> None:
            now = time.perf_counter()
            batches.append(now - last[0])
            last[0] = now

        indexer.subscribe(on_progress)
        started = time.perf_counter()
        indexed = await indexer.index_pending()
        seconds = time.perf_counter() - started
        steps = batches[1:-1] or batches
        print(
            f"background indexing: {indexed} messages in {seconds:.1f} s = "
            f"{indexed / seconds:,.0f} messages/s ({chars / seconds / 1e6:.2f} M characters/s), "
            f"{len(steps)} batches of ~{indexed / max(1, len(steps)):.0f}, one batch on the DB "
            f"thread p50 {statistics.median(steps) * 1000:.0f} ms, max {max(steps) * 1000:.0f} ms; "
            f"(+{len(steps) * 0.02:.0f} s with the app's 20 ms pause between batches)"
        )
        db.call(lambda s: s.connection().exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)"))
        print(f"file with the index: {path.stat().st_size / 1e6:.1f} MB")

        search = MessageSearch(db)
        queries = make_queries(texts, args.queries, args.seed)
        for query in queries[:5]:  # warm the page cache and the stemmer
            await search.search_messages(query)
        index_times: list[float] = []
        like_times: list[float] = []
        like_all_times: list[float] = []
        found = 0
        cjk_times: list[float] = []
        slowest: list[tuple[float, str]] = []
        for round_ in range(args.rounds):
            for n, query in enumerate(queries):
                # Who goes first rotates, so each sees the same load on the machine.
                for side in [(n + round_ + k) % 3 for k in range(3)]:
                    started = time.perf_counter()
                    if side == 0:
                        result = await search.search_messages(query, 30)
                        elapsed = time.perf_counter() - started
                        index_times.append(elapsed)
                        slowest.append((elapsed, query))
                        if not query.isascii():
                            cjk_times.append(elapsed)
                        found += bool(result.hits)
                    elif side == 1:
                        await db.run(lambda s, q=query: like_scan(s, q))
                        like_times.append(time.perf_counter() - started)
                    else:
                        await db.run(lambda s, q=query: like_scan(s, q, None))
                        like_all_times.append(time.perf_counter() - started)

        def line(name: str, values: list[float]) -> str:
            return (
                f"{name}: p50 {statistics.median(values) * 1000:.1f} ms, "
                f"p95 {percentile(values, 0.95) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"
            )

        print(
            f"{len(queries)} queries × {args.rounds} rounds ({found // args.rounds} find something):"
        )
        print("  " + line("index (30 hits with snippets)", index_times))
        print("  " + line("  of them CJK", cjk_times))
        print("  " + line("LIKE '%q%', the 30 newest (baseline)", like_times))
        print("  " + line("LIKE '%q%', every match (baseline)", like_all_times))
        for name, values in (("30 newest", like_times), ("every match", like_all_times)):
            print(
                f"  ratio LIKE {name} / index: p50 "
                f"{statistics.median(values) / statistics.median(index_times):.1f}×, "
                f"p95 {percentile(values, 0.95) / percentile(index_times, 0.95):.1f}×"
            )
        slowest.sort(reverse=True)
        print(
            "  slowest: "
            + ", ".join(f"{query!r} {elapsed * 1000:.0f} ms" for elapsed, query in slowest[:4])
        )

        def delete_one(session) -> None:  # type: ignore[no-untyped-def]
            row = (
                session.connection()
                .exec_driver_sql("SELECT id, content FROM message ORDER BY id LIMIT 1")
                .first()
            )
            message_fts.remove(session, [(int(row[0]), str(row[1]))])
            session.connection().exec_driver_sql("DELETE FROM message WHERE id = ?", (row[0],))
            session.commit()

        started = time.perf_counter()
        db.call(delete_one)
        removed = time.perf_counter() - started
        step_times: list[float] = []
        real_step = message_fts.purge_step

        def timed_step(session, pages=message_fts.MERGE_PAGES):  # type: ignore[no-untyped-def]
            begun = time.perf_counter()
            try:
                return real_step(session, pages)
            finally:
                step_times.append(time.perf_counter() - begun)

        message_fts.purge_step = timed_step  # type: ignore[assignment]
        started = time.perf_counter()
        steps = await indexer.purge()
        print(
            f"delete one message (its index entry, in its transaction): {removed * 1000:.1f} ms; "
            f"the merge after it: {steps} steps of {message_fts.MERGE_PAGES} pages, "
            f"{time.perf_counter() - started:.2f} s in all, the DB thread held at most "
            f"{max(step_times) * 1000:.0f} ms at a time"
        )
        db.close()
    print(f"load average at the end {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=23)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
