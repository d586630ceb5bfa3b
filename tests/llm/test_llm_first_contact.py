"""The defects a real model and a real server showed on first contact, each pinned on the fakes:
truncation, caching of bad replies, budgets, structured-output negotiation, retries, set-up errors."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from aqgr.archive.home import Archive
from aqgr.foundation.errors import ConfigError, InvalidModelOutputError, ProviderError
from aqgr.llm.base import LLMRequest
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.llm.fake import FakeProvider, FakeReply
from aqgr.llm.structured import ask_json
from aqgr.pipeline.config import SearchOptions
from aqgr.retrieval.spec import IndexSpec
from aqgr.summarizer.base import JudgmentText
from aqgr.summarizer.llm.engine import LLMSummarizer, LLMSummaryParams
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, JUDGMENTS, write_judgments
from tests.llm.servers import FakeModelServer, Step, openai_text
from tests.llm.test_llm_search import QUESTIONS, _explanation
from tests.llm.test_llm_summarizer import SLOTS

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _request(max_output_tokens=100, **kw):
    return LLMRequest(
        **{
            "prompt": "Say n.",
            "stage": "summaries",
            "prompt_version": "t.v1@0",
            "json_schema": SCHEMA,
            "max_output_tokens": max_output_tokens,
            **kw,
        }
    )


def _client(script, sleeps=None, **config):
    provider = FakeProvider(script)
    settings = ProviderConfig(provider="fake.v1", model="scripted", **config)
    return LLMClient(
        provider, config=settings, sleep=(sleeps.append if sleeps is not None else lambda s: None), jitter=lambda: 1.0
    ), provider


# -- truncation ---------------------------------------------------------------------------
def test_a_cut_reply_is_asked_again_with_a_larger_budget_and_only_the_whole_one_is_cached(memory_cache):
    client, provider = _client([FakeReply('{"n": 1', finish_reason="length"), FakeReply('{"n": 12}')])
    client.cache = memory_cache
    reply = client.complete(_request(100))
    assert reply.text == '{"n": 12}' and [r.max_output_tokens for r in provider.requests] == [100, 200]
    assert client.ledger.snapshot()["summaries"]["truncated"] == 1 and len(memory_cache) == 1
    assert client.complete(_request(100)).cached  # the original request now finds the whole reply


def test_a_reply_cut_at_the_ceiling_fails_as_truncated_and_is_never_resent_or_cached(memory_cache):
    client, provider = _client([FakeReply('{"n": 1', finish_reason="MAX_TOKENS")] * 5, max_output_tokens=100)
    client.cache = memory_cache
    with pytest.raises(ProviderError) as info:
        client.complete(_request(100))
    assert info.value.kind == "truncated" and not info.value.retryable and "--max-output-tokens" in str(info.value)
    assert provider.calls == 1 and len(memory_cache) == 0  # the configured cap leaves no larger budget: not sent again


def test_invalid_replies_are_never_cached_so_a_rerun_asks_the_model_again(memory_cache):
    check = lambda v: (v, [] if isinstance(v, dict) and "n" in v else ["<root>: 'n' is a required property"])  # noqa: E731
    client, provider = _client(["{}"] * 3 + ['{"n": 2}'])
    client.cache = memory_cache
    with pytest.raises(InvalidModelOutputError):
        ask_json(client, _request(), check)
    assert len(memory_cache) == 0
    assert ask_json(client, _request(), check).value == {"n": 2} and provider.calls == 4
    assert len(memory_cache) == 1


# -- budgets ------------------------------------------------------------------------------
def test_budgets_follow_the_window_and_settings():
    client, _ = _client([], context_window=8192)
    summaries = client.budget("summaries")
    assert (summaries.output_tokens, summaries.input_tokens) == (2048, 8192 - 2048 - 64 - 8192 // 50)
    assert client.budget("questions").output_tokens == 1024
    small, _ = _client([], context_window=2048, max_output_tokens=2048)
    assert small.budget("summaries").output_tokens == 2048 // 3  # never more than a third of the window
    gemini_like, _ = _client([])
    assert gemini_like.budget("summaries").input_tokens == 30_720  # the study's, where the window allows


def test_a_window_smaller_than_the_smallest_prompt_is_a_clear_configuration_error():
    client, _ = _client([], context_window=600)
    with pytest.raises(ConfigError, match="larger window"):
        client.budget("summaries")


def test_a_prompt_that_cannot_fit_is_refused_before_sending():
    client, provider = _client([], context_window=1000)
    with pytest.raises(ProviderError) as info:
        client.complete(LLMRequest(prompt="word " * 2000, stage="summaries", prompt_version="t", max_output_tokens=200))
    assert info.value.kind == "context_overflow" and provider.calls == 0


def test_a_long_judgment_on_a_small_window_reads_smaller_chunks_and_every_prompt_fits():
    def responder(request):
        return {k: SLOTS[k] for k in request.json_schema["required"]}

    provider = FakeProvider(responder=responder)
    client = LLMClient(provider, config=ProviderConfig(provider="fake.v1", model="scripted", context_window=8192))
    engine = LLMSummarizer(client, LLMSummaryParams(embedder="hashing.v1"))
    text = "\n\n".join(JUDGMENTS.values()) * 40
    budget = engine.budget()
    assert 1000 <= engine.chunk_chars(text, budget) < 20_000
    slots = engine.summarize(JudgmentText("L1", text, "/tmp/L1.txt", "0" * 64))
    assert slots.facts and len(provider.requests) == 5
    for request in provider.requests:
        assert client.prompt_tokens(request) <= budget.input_tokens
        assert request.max_output_tokens == budget.output_tokens


def test_explanations_are_split_over_calls_that_fit_the_budget(archive_dir):
    explained = []

    def responder(request):
        if request.stage == "questions":
            return QUESTIONS
        ids = [line.split("]")[0][5:] for line in request.prompt.splitlines() if line.startswith("[id: ")]
        explained.append(ids)
        return _explanation([(i, 8) for i in ids])

    provider = FakeProvider(responder=responder)
    client = LLMClient(
        provider,
        config=ProviderConfig(provider="fake.v1", model="scripted", context_window=4096, max_output_tokens=600),
    )
    archive = Archive(
        archive_dir,
        llm=client,
        summarizer="extractive.v1",
        question_generator="llm.v1",
        explainer="llm.v1",
        index=IndexSpec(embedder="hashing.v1"),
    )
    result = archive.search(DYING_DECLARATION_FACTS, options=SearchOptions(explain_top=6, min_score=1))
    budget = client.budget("explanations")
    calls = [r for r in provider.requests if r.stage == "explanations"]
    assert len(calls) >= 2 and all(len(ids) <= 600 // 200 for ids in explained)
    assert sorted(i for ids in explained for i in ids) == sorted(
        {i for ids in explained for i in ids}
    )  # each candidate once
    assert all(client.prompt_tokens(r) <= budget.input_tokens for r in calls)
    assert not result.notes and {h.judgment_id for h in result.hits} <= {i for ids in explained for i in ids}


# -- required slots ---------------------------------------------------------------------
def test_a_summary_missing_a_required_slot_is_reasked_never_stored():
    empty_facts = dict(SLOTS, facts="", final_judgment="")
    provider = FakeProvider([json.dumps(empty_facts), json.dumps(SLOTS)])
    client = LLMClient(provider, config=ProviderConfig(provider="fake.v1", model="scripted"))
    slots = LLMSummarizer(client, LLMSummaryParams(embedder="hashing.v1")).summarize(
        JudgmentText("A1", JUDGMENTS["A1"], "/tmp/A1.txt", "0" * 64)
    )
    assert slots.facts == SLOTS["facts"] and provider.calls == 2
    assert "facts: must not be empty" in provider.requests[1].prompt


# -- retries ------------------------------------------------------------------------------
def test_openai_429_retry_after_is_waited_in_full_and_other_4xx_are_not_retried():
    sleeps = []
    with FakeModelServer() as server:
        server.add(
            Step({"error": {"message": "slow down"}}, status=429, headers={"retry-after": "7"}),
            Step(openai_text('{"n": 1}')),
        )
        client = LLMClient.from_config(
            ProviderConfig(provider="openai.v1", model="m", base_url=server.url + "/v1", backoff_initial_s=0.01)
        )
        client._sleep = sleeps.append
        assert client.complete(_request()).text == '{"n": 1}'
        server.add(Step({"error": {"message": "no such model"}}, status=404))
        with pytest.raises(ProviderError) as info:
            client.complete(_request(prompt_version="other"))
    assert sleeps and sleeps[0] >= 7
    assert info.value.kind == "not_found" and "--model" in str(info.value) and len(server.posts()) == 3


def test_backoff_is_jittered_below_its_bound():
    rate = ProviderError("fake.v1", "rate_limited", "slow", status=429, retryable=True)
    sleeps = []
    provider = FakeProvider([rate, rate, FakeReply("ok")])
    client = LLMClient(
        provider,
        config=ProviderConfig(provider="fake.v1", model="s", backoff_initial_s=1, backoff_max_s=60),
        sleep=sleeps.append,
        jitter=lambda: 0.0,
    )
    client.complete(_request())
    assert sleeps == [0.5, 1.0]  # half the bound at the lowest jitter


# -- structured output ------------------------------------------------------------------
def test_a_server_refusing_json_schema_gets_json_object_with_the_schema_once_and_remembered():
    refusal = Step({"error": {"message": "Unsupported response_format type json_schema"}}, status=500)
    with FakeModelServer() as server:
        server.add(refusal, Step(openai_text('{"n": 1}')), Step(openai_text('{"n": 2}')))
        client = LLMClient.from_config(ProviderConfig(provider="openai.v1", model="m", base_url=server.url + "/v1"))
        assert client.complete(_request()).text == '{"n": 1}'
        assert client.complete(_request(prompt_version="second")).text == '{"n": 2}'
    formats = [p["body"].get("response_format", {}).get("type") for p in server.posts()]
    assert formats == ["json_schema", "json_object", "json_object"] and server.posts()[1]["body"]["response_format"][
        "schema"
    ]["required"] == ["n"]
    assert (
        client.provider.structured_form == "json_object_schema"
        and client.ledger.snapshot()["summaries"]["retries"] == 0
    )


def test_a_fixed_structured_output_form_is_never_changed():
    with FakeModelServer() as server:
        server.add(Step({"error": {"message": "response_format json_schema unsupported"}}, status=400))
        client = LLMClient.from_config(
            ProviderConfig(
                provider="openai.v1", model="m", base_url=server.url + "/v1", structured_output="json_schema"
            )
        )
        with pytest.raises(ProviderError) as info:
            client.complete(_request())
    assert info.value.kind == "bad_request" and len(server.posts()) == 1


def test_a_server_that_cuts_the_prompt_is_caught_as_input_truncated():
    with FakeModelServer() as server:
        server.add(Step(openai_text('{"n": 1}', prompt_tokens=512)))
        client = LLMClient.from_config(
            ProviderConfig(provider="openai.v1", model="m", base_url=server.url + "/v1", context_window=32768)
        )
        with pytest.raises(ProviderError) as info:
            client.complete(
                LLMRequest(
                    prompt="the appellant contended " * 800,
                    stage="summaries",
                    prompt_version="t",
                    max_output_tokens=100,
                )
            )
    assert info.value.kind == "input_truncated" and "--context-window" in str(info.value)


# -- bad servers and set-up errors --------------------------------------------------------
class _HangUp(BaseHTTPRequestHandler):
    """Starts a reply, then closes the connection mid-body."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "5000")
        self.end_headers()
        self.wfile.write(b'{"choices": [{"message": {"content": "{\\"fa')
        self.wfile.flush()
        self.connection.close()


def test_a_server_closing_mid_reply_is_recorded_per_judgment_and_the_batch_goes_on(tmp_path):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _HangUp)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        folder = write_judgments(tmp_path / "in", {k: JUDGMENTS[k] for k in ("A1", "A2")})
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        archive = Archive(
            tmp_path / "home",
            provider="openai.v1",
            model="m",
            base_url=url,
            max_retries=1,
            backoff_initial_s=0.01,
            summarizer="llm.v1",
            index=IndexSpec(embedder="hashing.v1"),
        )
        report = archive.summarize([folder])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert report.aborted is None and report.summarised == []
    assert sorted((f.judgment_id, f.reason) for f in report.failed) == [("A1", "connection"), ("A2", "connection")]
    assert archive.status()["failures_by_reason"] == {"connection": 2}


def test_an_unreachable_server_stops_the_batch_once_and_records_nothing(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    folder = write_judgments(tmp_path / "in", {k: JUDGMENTS[k] for k in ("A1", "A2", "A3")})
    archive = Archive(
        tmp_path / "home",
        provider="openai.v1",
        model="m",
        base_url=f"http://127.0.0.1:{port}/v1",
        max_retries=1,
        backoff_initial_s=0.01,
        summarizer="llm.v1",
        index=IndexSpec(embedder="hashing.v1"),
    )
    report = archive.summarize([folder])
    assert report.aborted and "cannot be reached" in report.aborted and "--base-url" in report.aborted
    assert report.failed == [] and archive.status()["failures_by_reason"] == {}


def test_a_refused_key_stops_the_batch_after_one_call(tmp_path):
    folder = write_judgments(tmp_path / "in", {k: JUDGMENTS[k] for k in ("A1", "A2", "A3")})
    provider = FakeProvider([ProviderError("fake.v1", "auth", "API key not valid", status=401)] * 3)
    client = LLMClient(provider, config=ProviderConfig(provider="fake.v1", model="scripted"))
    archive = Archive(tmp_path / "home", llm=client, summarizer="llm.v1", index=IndexSpec(embedder="hashing.v1"))
    report = archive.summarize([folder])
    assert provider.calls == 1 and report.aborted and "refused the API key" in report.aborted and report.failed == []


@pytest.mark.parametrize("content, needle", [(None, "no model file"), (b"not a model at all", "not a GGUF model")])
def test_a_gguf_path_that_is_missing_or_not_a_model_is_one_clear_error(tmp_path, content, needle):
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    archive = Archive(tmp_path / "home", provider="llamacpp.v1", model=str(path), summarizer="llm.v1")
    with pytest.raises(ConfigError, match=needle):
        archive._llm_client()
