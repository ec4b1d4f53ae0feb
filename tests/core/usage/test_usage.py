"""Token usage: what the server reported, kept per reply and per background job, and costed."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.providers.base import ChatRequest, Usage
from etos_desktop.core.providers.config import ProviderConfig
from etos_desktop.core.providers.openai_provider import OpenAIProvider
from etos_desktop.core.providers.registry import ResolvedProvider
from etos_desktop.core.settings.store import MODEL_PRICES_KEY, SettingsStore
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.migrations import MIGRATIONS, migrate
from etos_desktop.core.storage.repositories import ChatRepository
from etos_desktop.core.usage.metering import MeteredProviders
from etos_desktop.core.usage.prices import ModelPrice, total_costs
from etos_desktop.core.usage.records import message_usage
from etos_desktop.core.usage.store import JobUsage, UsageRepository
from tests.helpers.fake_openai_server import FakeOpenAIServer, Reported, Text
from tests.helpers.stack import FAST_TIMEOUTS

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


# -- what the server reported ------------------------------------------------------------------


async def test_a_streamed_reply_reports_the_servers_numbers_with_its_cache_hits() -> None:
    with FakeOpenAIServer() as server:
        server.script(Text("Hello there", reported=Reported(1234, 210, cached_tokens=800)))
        async with OpenAIProvider(server.base_url, None, timeouts=FAST_TIMEOUTS) as provider:
            request = ChatRequest(model="fake-chat", messages=[{"role": "user", "content": "hi"}])
            events = [e async for e in provider.stream_chat(request)]
        [sent] = server.chat_requests()
    assert sent.body["stream_options"] == {"include_usage": True}
    assert [e.usage for e in events if e.usage] == [Usage(1234, 210, 1444, cached_tokens=800)]


async def test_a_background_completion_reports_its_cache_hits_too() -> None:
    with FakeOpenAIServer() as server:
        server.script(Text("A title", reported=Reported(90, 4, cached_tokens=64)))
        async with OpenAIProvider(server.base_url, None, timeouts=FAST_TIMEOUTS) as provider:
            request = ChatRequest(model="fake-chat", messages=[{"role": "user", "content": "x"}])
            completion = await provider.complete(request)
    assert completion.usage == Usage(90, 4, 94, cached_tokens=64)


async def test_a_server_that_refuses_stream_options_still_streams_without_usage() -> None:
    with FakeOpenAIServer(refuse_stream_options=True) as server:
        async with OpenAIProvider(server.base_url, None, timeouts=FAST_TIMEOUTS) as provider:
            request = ChatRequest(model="fake-chat", messages=[{"role": "user", "content": "hi"}])
            events = [e async for e in provider.stream_chat(request)]
        sent = [r.body for r in server.chat_requests()]
    assert "".join(e.text for e in events) == "echo: hi"
    assert [e.usage for e in events if e.usage] == []
    assert ["stream_options" in body for body in sent] == [True, False]


# -- prices ------------------------------------------------------------------------------------


def test_a_price_costs_prompt_and_completion_tokens_per_million() -> None:
    price = ModelPrice(input=2.0, output=8.0)
    assert price.cost(Usage(1234, 210, 1444, cached_tokens=800)) == pytest.approx(0.004148)


def test_replies_without_a_price_are_counted_never_costed() -> None:
    prices = {"a": ModelPrice(1.0, 2.0), "b": ModelPrice(4.0, 4.0, "CNY")}
    usage = Usage(1_000_000, 500_000, 1_500_000)
    costs = total_costs([("a", usage), ("b", usage), ("c", usage), (None, usage)], prices)
    assert costs.by_currency == (("USD", pytest.approx(2.0)), ("CNY", pytest.approx(6.0)))
    assert (costs.priced, costs.unpriced) == (2, 2)


def test_prices_are_kept_in_settings_json_and_bad_ones_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    store = SettingsStore(path)
    store.load()
    heard: list[str] = []
    store.subscribe(heard.append, [MODEL_PRICES_KEY])
    store.set_model_price("gpt-4o", ModelPrice(2.5, 10.0))
    for bad in (
        ModelPrice(-1, 1),
        ModelPrice(0, 0),
        ModelPrice(1, float("nan")),
        ModelPrice(1, 1, "XX"),
    ):
        with pytest.raises(InvalidInput):
            store.set_model_price("gpt-4o", bad)
    store.save()
    assert json.loads(path.read_text())[MODEL_PRICES_KEY] == {
        "gpt-4o": {"input": 2.5, "output": 10.0, "currency": "USD"}
    }
    again = SettingsStore(path)
    again.load()
    assert again.model_prices() == {"gpt-4o": ModelPrice(2.5, 10.0)}
    store.set_model_price("gpt-4o", None)
    assert store.model_prices() == {}
    assert heard == [MODEL_PRICES_KEY, MODEL_PRICES_KEY]


def test_a_broken_price_in_the_file_is_skipped_with_a_problem(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    prices = {"good": {"input": 1, "output": 2}, "bad": {"input": "lots"}, "": {"input": 1}}
    path.write_text(json.dumps({"version": 1, MODEL_PRICES_KEY: prices}))
    store = SettingsStore(path)
    store.load()
    assert store.model_prices() == {"good": ModelPrice(1.0, 2.0)}
    assert "'bad'" in (store.load_problem or "")
    assert "price for 'bad' is invalid" in caplog.text


# -- background requests -----------------------------------------------------------------------


class _Source:
    def __init__(self, provider: OpenAIProvider) -> None:
        self.provider = provider

    async def resolve(self, provider_id: str | None, model: str | None) -> ResolvedProvider:
        config = ProviderConfig(
            id="p", name="p", preset="custom", base_url="http://x", chat_model="fake-chat"
        )
        return ResolvedProvider(config, self.provider, "fake-chat")

    def is_configured(self) -> bool:
        return True


async def test_each_background_request_keeps_its_usage_under_its_job(tmp_path: Path) -> None:
    db = Database(tmp_path / "etos.db", tmp_path / "backups")
    db.open()
    try:
        usage = UsageRepository(db)
        clock = [NOW - timedelta(days=31)]

        async def keep(job: str, model: str, used: Usage) -> None:
            await usage.record(job, model, used, clock[0])

        with FakeOpenAIServer() as server:
            server.script(
                Text("old", reported=Reported(1000, 10)),
                Text("t1", reported=Reported(100, 5, cached_tokens=60)),
                Text("t2", reported=Reported(50, 3)),
                Text("s", reported=Reported(700, 90)),
            )
            async with OpenAIProvider(server.base_url, None, timeouts=FAST_TIMEOUTS) as provider:
                titles = MeteredProviders(_Source(provider), "titles", keep)
                summaries = MeteredProviders(_Source(provider), "summaries", keep)
                request = ChatRequest(
                    model="fake-chat", messages=[{"role": "user", "content": "x"}]
                )
                await (await titles.resolve(None, None)).provider.complete(request)
                clock[0] = NOW
                for source in (titles, titles, summaries):
                    await (await source.resolve(None, None)).provider.complete(request)
        totals = await usage.by_job(NOW - timedelta(days=30))
    finally:
        db.close()
    assert totals == {
        "titles": JobUsage(2, Usage(150, 8, 158, cached_tokens=60)),
        "summaries": JobUsage(1, Usage(700, 90, 790)),
    }


# -- migration v13 -----------------------------------------------------------------------------


async def test_v13_moves_stored_usage_into_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "etos.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, None, now=NOW, migrations=MIGRATIONS[:12])
    conn.execute(
        "INSERT INTO conversation (id, title, created_at, updated_at) "
        "VALUES (1, 't', '2026-01-01', '2026-01-01')"
    )
    stored = {
        1: json.dumps({"prompt_tokens": 812, "completion_tokens": 96, "total_tokens": 908}),
        2: None,
        3: "{broken",
        4: json.dumps(
            {
                "prompt_tokens": 50,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 32},
            }
        ),
    }
    for row_id, usage in stored.items():
        conn.execute(
            "INSERT INTO message (id, conversation_id, role, content, status, created_at, "
            "usage_json) VALUES (?, 1, 'assistant', 'ok', 'complete', '2026-01-01', ?)",
            (row_id, usage),
        )
    conn.close()

    db = Database(path, tmp_path / "backups")
    db.open()
    try:
        repo = ChatRepository(db)
        rows = [await repo.get_message(i) for i in stored]
        usages = [message_usage(row) for row in rows if row is not None]
    finally:
        db.close()
    assert usages == [Usage(812, 96, 908), None, None, Usage(50, 7, 57, cached_tokens=32)]
    conn = sqlite3.connect(path)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(message)")}
    conn.close()
    assert "usage_json" not in columns
    assert list((tmp_path / "backups").glob("etos-before-v13-*.db"))
