"""Gemini's first-contact defects (issue 16), over real HTTP to a fake server on 127.0.0.1."""

from __future__ import annotations

import pytest

from aqgr.errors import ProviderError
from aqgr.llm.base import LLMRequest, providers
from aqgr.llm.client import LLMClient
from aqgr.llm.config import ProviderConfig
from tests.llm.servers import FakeModelServer, Step, gemini_error, gemini_text

KEY = "AIzaFAKE-key-never-shown-0123456789"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
BOTH = ["gemini.v1", "gemini-legacy.v1"]


@pytest.fixture(params=BOTH)
def provider_name(request):
    if request.param == "gemini-legacy.v1":
        pytest.importorskip("google.generativeai")
    return request.param


def _request(**kw):
    fields = {"prompt": "Say n.", "stage": "summaries", "prompt_version": "t.v1@0", "system": "JSON only.", "json_schema": SCHEMA, **kw}
    return LLMRequest(**fields)


def _settings(provider, url, *, model="gemini-fake", **config):
    return ProviderConfig(provider=provider, model=model, api_key=KEY, base_url=url, **{"backoff_initial_s": 0.01, **config})


def _client(provider, url, *, sleeps=None, **config):
    waits = sleeps if sleeps is not None else []
    return LLMClient.from_config(_settings(provider, url, **config), sleep=waits.append, jitter=lambda: 0.0)


def _generation(post) -> dict:
    return post["body"]["generationConfig"]


# -- 1. MAX_TOKENS is a truncation -------------------------------------------------------------
@pytest.mark.parametrize("finish", ["MAX_TOKENS", 2])  # the legacy SDK asks for enum-encoding=int: 2 is MAX_TOKENS
def test_max_tokens_reply_is_truncated_and_asked_again_with_a_doubled_budget(provider_name, finish):
    if provider_name == "gemini.v1" and finish == 2:
        pytest.skip("google-genai reads finish reasons by name")
    with FakeModelServer() as server:
        server.add(*[Step(gemini_text('{"n": ', finish=finish))] * 2, Step(gemini_text('{"n": 4}')))
        provider = providers.create(provider_name, config=_settings(provider_name, server.url))
        cut = provider.generate(_request(), timeout_s=5)
        client = _client(provider_name, server.url)
        reply = client.complete(_request(max_output_tokens=300))
    assert cut.finish_reason == "MAX_TOKENS" and cut.truncated
    assert reply.text == '{"n": 4}' and not reply.truncated
    first, second = (_generation(p)["maxOutputTokens"] for p in server.posts()[1:])
    assert (first, second) == (300, 600)
    assert client.ledger.snapshot()["summaries"]["truncated"] == 1


def test_max_tokens_at_the_ceiling_fails_as_truncated(provider_name):
    with FakeModelServer(default=Step(gemini_text('{"n": ', finish="MAX_TOKENS"))) as server:
        client = _client(provider_name, server.url, max_output_tokens=400)
        with pytest.raises(ProviderError) as info:
            client.complete(_request(max_output_tokens=400, output_ceiling=400))
    assert info.value.kind == "truncated" and "MAX_TOKENS" in str(info.value)
    assert len(server.posts()) == 1  # never the same request again
