"""Real HTTP against fake servers on 127.0.0.1 speaking the Gemini and OpenAI wire formats."""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest

from aqgr.archive.home import Archive
from aqgr.foundation.errors import ProviderError, SafetyBlockError
from aqgr.llm.base import LLMRequest
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from aqgr.retrieval.spec import IndexSpec
from tests.aqgr.helpers import JUDGMENTS, write_judgments
from tests.llm.servers import FakeModelServer, Step, gemini_error, gemini_text, openai_text
from tests.llm.test_llm_summarizer import SLOTS

KEY = "AIzaFAKE-key-never-shown-0123456789"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _request(**kw):
    return LLMRequest(
        prompt="Say n.", stage="summaries", prompt_version="t.v1@0", system="JSON only.", json_schema=SCHEMA, **kw
    )


def _client(provider, url, **config):
    settings = ProviderConfig(
        provider=provider,
        model="gemini-fake" if provider.startswith("gemini") else "local-model",
        api_key=KEY,
        base_url=url,
        **{"backoff_initial_s": 0.01, **config},
    )
    return LLMClient.from_config(settings)


# -- Gemini (google-genai) ---------------------------------------------------------------
def test_gemini_generate_content_wire_format():
    with FakeModelServer() as server:
        server.add(Step(gemini_text('{"n": 3}', prompt_tokens=11, output_tokens=4)))
        reply = _client("gemini.v1", server.url).complete(_request())
    assert reply.text == '{"n": 3}' and (reply.input_tokens, reply.output_tokens) == (11, 4)
    (post,) = server.posts()
    assert post["path"].startswith("/v1beta/models/gemini-fake:generateContent")
    assert post["headers"].get("x-goog-api-key") == KEY
    config = post["body"]["generationConfig"]
    assert config["temperature"] == 0.9 and config["topK"] == 1 and config["maxOutputTokens"] == 2048
    assert config["responseMimeType"] == "application/json" and config["responseJsonSchema"]["required"] == ["n"]
    assert post["body"]["systemInstruction"]["parts"][0]["text"] == "JSON only."


def test_gemini_429_then_success_and_5xx_retried():
    with FakeModelServer() as server:
        server.add(
            Step(gemini_error(429, "RESOURCE_EXHAUSTED", "quota"), status=429),
            Step(gemini_error(503, "UNAVAILABLE", "overloaded"), status=503),
            Step(gemini_text('{"n": 1}')),
        )
        client = _client("gemini.v1", server.url)
        assert client.complete(_request()).text == '{"n": 1}'
    assert len(server.posts()) == 3 and client.ledger.snapshot()["summaries"]["retries"] == 2


def test_gemini_safety_block_and_timeout(caplog):
    caplog.set_level(logging.DEBUG)
    with FakeModelServer() as server:
        server.add(Step({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 5}}))
        server.add(Step({"candidates": [{"finishReason": "SAFETY", "index": 0}]}))
        client = _client("gemini.v1", server.url)
        with pytest.raises(SafetyBlockError, match="prompt blocked: SAFETY"):
            client.complete(_request())
        with pytest.raises(SafetyBlockError, match="finish reason SAFETY"):
            client.complete(_request())
        server.add(Step(gemini_text('{"n": 1}'), delay=1.5))
        slow = _client("gemini.v1", server.url, timeout_s=0.3, max_retries=0)
        with pytest.raises(ProviderError) as info:
            slow.complete(_request())
        bad_key = Step(gemini_error(400, "INVALID_ARGUMENT", f"API key not valid: {KEY}"), status=400)
        server.add(bad_key)
        with pytest.raises(ProviderError) as bad:
            client.complete(_request())
    assert info.value.kind == "timeout"
    assert KEY not in str(bad.value) and "***" in str(bad.value)  # even when the server echoes it
    assert KEY not in caplog.text


def test_gemini_summaries_end_to_end_and_the_key_is_never_stored_or_logged(tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    folder = write_judgments(tmp_path / "in", {k: JUDGMENTS[k] for k in ("A1", "A2")})
    with FakeModelServer() as server:
        server.add(Step(gemini_text(json.dumps(SLOTS), prompt_tokens=700, output_tokens=250)))
        server.add(Step({"candidates": [{"finishReason": "SAFETY", "index": 0}]}))
        archive = Archive(
            tmp_path / "home",
            provider="gemini.v1",
            model="gemini-fake",
            base_url=server.url,
            index=IndexSpec(embedder="hashing.v1"),
        )
        assert archive.settings.summarizer == "llm.v1"
        report = archive.summarize([folder])
    assert report.summarised == ["A1"] and report.failed[0].reason == "safety_block"
    summary = archive.summary("A1")
    assert summary.provenance.model == "gemini.v1:gemini-fake" and summary.provenance.input_tokens == 700
    dump = "\n".join(sqlite3.connect(tmp_path / "home" / "aqgr.db").iterdump())  # every table: summaries, failures, ...
    assert "safety_block" in dump and "gemini.v1:gemini-fake" in dump and KEY not in dump
    cache = "\n".join(sqlite3.connect(archive.settings.llm_cache_path).iterdump())
    assert "Ram Kumar" in cache and KEY not in cache
    assert (
        KEY not in report.model_dump_json()
        and KEY not in repr(archive.settings)
        and KEY not in archive.settings.model_dump_json()
    )
    assert KEY not in caplog.text


def test_gemini_legacy_sdk_wire_format():
    pytest.importorskip("google.generativeai")
    with FakeModelServer() as server:
        server.add(Step(gemini_text('{"n": 2}', prompt_tokens=9, output_tokens=2)))
        reply = _client("gemini-legacy.v1", server.url).complete(_request())
    assert reply.text == '{"n": 2}' and reply.input_tokens == 9
    assert server.posts()[0]["path"].startswith("/v1beta/models/gemini-fake:generateContent")


# -- OpenAI-compatible ---------------------------------------------------------------------
def test_openai_chat_completions_wire_format_and_errors():
    with FakeModelServer() as server:
        server.add(
            Step({"error": {"message": "rate limited"}}, status=429, headers={"Retry-After": "0"}),
            Step(openai_text('{"n": 5}', prompt_tokens=13, output_tokens=3)),
            Step(openai_text("", finish="content_filter")),
            Step(openai_text("", refusal="I can't help with that.")),
            Step({"error": {"message": f"Incorrect API key provided: {KEY}"}}, status=401),
        )
        client = _client("openai.v1", server.url + "/v1")
        reply = client.complete(_request())
        with pytest.raises(SafetyBlockError):
            client.complete(_request())
        with pytest.raises(SafetyBlockError, match="refusal"):
            client.complete(_request())
        with pytest.raises(ProviderError) as auth:
            client.complete(_request())
        server.add(Step(openai_text('{"n": 1}'), delay=1.5))
        with pytest.raises(ProviderError, match="timeout"):
            _client("openai.v1", server.url + "/v1", timeout_s=0.3, max_retries=0).complete(_request())
    assert reply.text == '{"n": 5}' and (reply.input_tokens, reply.output_tokens) == (13, 3)
    post = server.posts()[1]
    assert post["path"] == "/v1/chat/completions" and post["headers"]["Authorization"] == f"Bearer {KEY}"
    body = post["body"]
    assert body["model"] == "local-model" and body["messages"][0] == {"role": "system", "content": "JSON only."}
    assert body["response_format"]["type"] == "json_schema" and body["top_k"] == 1 and body["temperature"] == 0.9
    assert auth.value.kind == "auth" and KEY not in str(auth.value)


def test_openai_search_via_cli_options(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app
    from tests.aqgr.helpers import DYING_DECLARATION_FACTS
    from tests.llm.test_llm_search import QUESTIONS, _explanation

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    home = tmp_path / "home"
    archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
    archive.summarize([write_judgments(tmp_path / "in")])
    archive.build_index(spec=IndexSpec(embedder="hashing.v1"))
    with FakeModelServer() as server:
        server.add(
            Step(openai_text(json.dumps(QUESTIONS))),
            Step(openai_text(json.dumps(_explanation([("A3", 9), ("Z1", 8)])))),
        )
        result = CliRunner().invoke(
            app,
            [
                "--provider",
                "openai.v1",
                "--model",
                "llama3",
                "--base-url",
                server.url + "/v1",
                "--summarizer",
                "extractive.v1",
                "search",
                DYING_DECLARATION_FACTS,
                "--home",
                str(home),
                "--json",
            ],
        )
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert [h["judgment_id"] for h in found["hits"]] == ["A3"] and found["dropped_not_in_archive"] == 1
    assert (
        len(server.posts()) == 2 and "Authorization" not in server.posts()[0]["headers"]
    )  # a local server needs no key
    assert "model usage (questions): 1 call(s)" in result.stderr
