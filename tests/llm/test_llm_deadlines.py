"""Model calls end by their deadlines: one call's in all (not per socket read), one judgment's and one
search's with every retry; an in-process model's deadline follows its measured speed."""

from __future__ import annotations

import time

import pytest

from aqgr.foundation.errors import ProviderError
from tests.llm.servers import FakeModelServer, Step, gemini_text, openai_text
from tests.llm.test_llm_http import _client, _request

_WIRE = {"openai.v1": openai_text, "gemini.v1": gemini_text, "gemini-legacy.v1": gemini_text}


@pytest.mark.parametrize("provider", sorted(_WIRE))
def test_a_server_sending_a_byte_at_a_time_is_cut_at_the_call_deadline(provider):
    """Every read gets a byte within 0.2 s, so a per-read timeout never trips; the whole answer would take
    about a minute. The call ends at its 1 s deadline (the margin is for a loaded machine), for every HTTP provider."""
    pytest.importorskip(
        {"openai.v1": "httpx", "gemini.v1": "google.genai", "gemini-legacy.v1": "google.generativeai"}[provider]
    )
    with FakeModelServer(default=Step(_WIRE[provider]('{"n": 1}' + " " * 100), drip=0.2)) as server:
        client = _client(provider, server.url, timeout_s=1.0, max_retries=0)
        started = time.monotonic()
        with pytest.raises(ProviderError) as caught:
            client.complete(_request())
        took = time.monotonic() - started
    assert caught.value.kind == "timeout" and took < 15, took


@pytest.mark.parametrize("provider", ["gemini.v1", "gemini-legacy.v1"])
def test_a_gemini_call_within_its_deadline_is_answered_on_a_fresh_connection_each_time(provider):
    """The deadline's own connection per call does not break an ordinary exchange: three calls answered."""
    pytest.importorskip("google.genai" if provider == "gemini.v1" else "google.generativeai")
    with FakeModelServer(default=Step(gemini_text('{"n": 1}'))) as server:
        client = _client(provider, server.url, timeout_s=5.0, max_retries=0)
        assert [client.complete(_request()).text for _ in range(3)] == ['{"n": 1}'] * 3


def test_a_judgment_deadline_bounds_every_retry_of_every_call():
    """A server that always fails slowly: retried while the judgment's time lasts, then the judgment fails
    as timeout, long before 20 retries of 1 s calls."""
    from aqgr.llm.deadline import task

    with FakeModelServer(default=Step({"error": {"message": "overloaded"}}, status=503, delay=0.3)) as server:
        client = _client(
            "openai.v1",
            server.url,
            timeout_s=1.0,
            max_retries=20,
            backoff_initial_s=0.05,
            backoff_max_s=0.1,
            judgment_timeout_s=2.0,
        )
        started = time.monotonic()
        with task("judgment"), pytest.raises(ProviderError) as caught:
            client.complete(_request())
        took = time.monotonic() - started
    assert took < 15 and len(server.posts()) < 21, (took, len(server.posts()))
    assert caught.value.kind in ("timeout", "server_error")


class _SlowLlama:
    """llama-cpp-python's Llama as the provider uses it, generating `tokens` tokens `per_token` seconds apart."""

    tokens, per_token = 30, 0.05

    def __init__(self, model_path=None, **kwargs):
        self.n_tokens = 0
        self.metadata = {"llama.context_length": "2048"}

    def n_ctx(self):
        return 2048

    def tokenize(self, data, add_bos=False, special=False):
        return list(range(max(1, len(data) // 4)))

    def create_chat_completion(self, messages, max_tokens, stream, **kwargs):
        for i in range(self.tokens):
            time.sleep(self.per_token)
            last = i == self.tokens - 1
            yield {"choices": [{"delta": {"content": "1" if last else " "}, "finish_reason": "stop" if last else None}]}
        self.n_tokens = 50 + self.tokens

    def close(self):
        pass


def test_a_local_model_deadline_follows_its_measured_speed(tmp_path, monkeypatch):
    """A slow machine: the reply takes 1.5 s, three times the configured 0.5 s, at a steady pace well within
    its 64-token budget; it completes instead of failing 'no complete reply within 0.5 s'."""
    from aqgr.llm import llamacpp
    from aqgr.llm.config import ProviderConfig

    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setattr(llamacpp, "_llama_class", lambda: _SlowLlama)
    monkeypatch.setattr(llamacpp.LlamaCppProvider, "_trained_window", staticmethod(lambda Llama, path: 2048))
    provider = llamacpp.LlamaCppProvider(ProviderConfig(provider="llamacpp.v1", model=str(model), timeout_s=0.5))
    reply = provider.generate(_request(max_output_tokens=64), timeout_s=0.5)
    assert reply.text.strip() == "1" and reply.finish_reason == "stop"


def test_pace_stops_a_model_far_slower_than_its_budget_allows():
    """The deadline is the budget at the measured speed (twice over), so a model that runs past it is stopped."""
    from aqgr.llm.llamacpp import Pace

    now = [0.0]
    pace = Pace(1.0, 10, clock=lambda: now[0])
    for _ in range(10):
        now[0] += 0.1
        pace.token()
    assert not pace.late()  # 1 s for 10 tokens, allowed 2 x (0.1 + 10 x 0.1) = 2.2 s
    now[0] += 5.0  # a stall
    assert pace.late()


def test_a_search_deadline_bounds_every_model_call_of_the_search(archive_dir):
    """A hung server (a byte every 0.2 s: each call is cut at its 1 s deadline) behind the search's question
    and explanation steps. Without a search deadline, 20 retries of 1 s calls at each step would hold the
    search (and a server search slot) for over 40 s; it ends within its 3 s, every call included."""
    from aqgr.archive.home import Archive
    from aqgr.retrieval.spec import IndexSpec
    from tests.aqgr.helpers import DYING_DECLARATION_FACTS

    with FakeModelServer(default=Step(openai_text("{}" + " " * 100), drip=0.2)) as server:
        client = _client(
            "openai.v1",
            server.url,
            timeout_s=1.0,
            max_retries=20,
            backoff_initial_s=0.05,
            backoff_max_s=0.1,
            search_timeout_s=3.0,
        )
        archive = Archive(
            archive_dir,
            llm=client,
            summarizer="extractive.v1",
            question_generator="llm.v1",
            explainer="llm.v1",
            index=IndexSpec(embedder="hashing.v1"),
        )
        started = time.monotonic()
        try:
            result = archive.search(DYING_DECLARATION_FACTS)
        except ProviderError as exc:  # the explanation step may give up as a timeout: bounded either way
            result = exc
        took = time.monotonic() - started
        posts = len(server.posts())
    assert took < 15 and posts <= 8, (took, posts, result)
