"""The provider layer: retries, timeouts, cache, ledger, configuration, secrets."""

from __future__ import annotations

import pytest

from aqgr.foundation.errors import (
    ConfigError,
    InvalidModelOutputError,
    MissingDependencyError,
    ProviderError,
    UnknownNameError,
)
from aqgr.llm.base import LLMRequest, providers, redact
from aqgr.llm.config import ProviderConfig
from aqgr.llm.fake import FakeReply, install_script, minimal_instance
from aqgr.llm.structured import ask_json, parse_json, schema_problems


def _request(prompt="hello", stage="summaries"):
    return LLMRequest(prompt=prompt, stage=stage, prompt_version="test.v1@0")


def test_retry_on_429_then_success_with_bounded_backoff(make_client):
    sleeps: list[float] = []
    rate = ProviderError("fake.v1", "rate_limited", "slow down", status=429, retryable=True)
    client, provider = make_client(
        [rate, rate, FakeReply("ok", 7, 3)], sleeps=sleeps, backoff_initial_s=1, backoff_max_s=1.5
    )
    reply = client.complete(_request())
    assert reply.text == "ok" and provider.calls == 3
    assert sleeps == [1, 1.5]  # 1 * 2**0, then 1 * 2**1 capped at 1.5
    usage = client.ledger.snapshot()["summaries"]
    assert usage["calls"] == 1 and usage["retries"] == 2 and usage["input_tokens"] == 7 and usage["output_tokens"] == 3


def test_retries_are_bounded_and_non_retryable_errors_are_not_retried(make_client):
    err = ProviderError("fake.v1", "server_error", "boom", status=503, retryable=True)
    client, provider = make_client([err] * 10, max_retries=2)
    with pytest.raises(ProviderError) as info:
        client.complete(_request())
    assert info.value.kind == "server_error" and provider.calls == 3
    auth = ProviderError("fake.v1", "auth", "bad key", status=401)
    client, provider = make_client([auth, "never"])
    with pytest.raises(ProviderError):
        client.complete(_request())
    assert provider.calls == 1 and client.ledger.snapshot()["summaries"]["failures"] == 1


def test_timeout_is_a_clear_error_after_the_retries(make_client):
    timeout = ProviderError("fake.v1", "timeout", "no reply within 0.1 s", retryable=True)
    client, provider = make_client([timeout] * 3, max_retries=1)
    with pytest.raises(ProviderError, match="timeout: no reply within"):
        client.complete(_request())
    assert provider.calls == 2


def test_cache_hit_avoids_a_second_call(make_client, memory_cache):
    client, provider = make_client(["first", "second"], cache=memory_cache)
    assert client.complete(_request()).text == "first"
    again = client.complete(_request())
    assert again.text == "first" and again.cached and provider.calls == 1
    assert client.complete(_request("other prompt")).text == "second"
    usage = client.ledger.snapshot()["summaries"]
    assert usage["calls"] == 2 and usage["cache_hits"] == 1
    # the prompt version is part of the key
    assert client.complete(LLMRequest(prompt="hello", stage="summaries", prompt_version="test.v2@1")).text != "first"


def test_ledger_counts_tokens_per_stage_and_cost(make_client):
    client, _ = make_client(
        [FakeReply("a", 100, 10), FakeReply("b", 50, 5)], input_price_per_mtok=1.0, output_price_per_mtok=2.0
    )
    client.complete(_request(stage="questions"))
    client.complete(_request(stage="explanations"))
    snap = client.ledger.snapshot()
    assert snap["questions"]["input_tokens"] == 100 and snap["explanations"]["output_tokens"] == 5
    assert snap["questions"]["cost"] == pytest.approx(100e-6 + 20e-6)


def test_ask_json_repairs_then_reasks_with_the_problems(make_client):
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    check = lambda v: (v, schema_problems(schema, v))  # noqa: E731
    client, provider = make_client(['```json\n{"n": 1,}\n```'])
    answer = ask_json(client, _request(), check)
    assert answer.value == {"n": 1} and answer.repaired and answer.calls == 1
    client, provider = make_client(["not json at all", '{"n": "one"}', '{"n": 2}'])
    answer = ask_json(client, _request(), check)
    assert answer.value == {"n": 2} and answer.reasked == 2
    assert (
        "not valid JSON" in provider.requests[1].prompt
        and "'one' is not of type 'integer'" in provider.requests[2].prompt
    )
    client, provider = make_client(['{"n": "x"}'] * 5)
    with pytest.raises(InvalidModelOutputError):
        ask_json(client, _request(), check, max_attempts=2)
    assert provider.calls == 2


def test_parse_json_finds_json_in_prose():
    assert parse_json('Here you go: {"a": [1, 2,]} hope it helps') == ({"a": [1, 2]}, True)
    with pytest.raises(ValueError):
        parse_json("no braces here")
    assert parse_json('{"facts": "line one\nline two\tend"}') == (
        {"facts": "line one\nline two\tend"},
        True,
    )  # raw control characters: a repair


def test_unknown_provider_lists_the_known_ones():
    with pytest.raises(UnknownNameError) as info:
        providers.get("gpt.v9")
    assert "gemini.v1" in str(info.value) and "openai.v1" in str(info.value) and "fake.v1" in str(info.value)


def test_config_from_environment_and_key_never_shown():
    env = {"AQGR_PROVIDER": "gemini.v1", "GEMINI_API_KEY": "sk-secret-123456", "AQGR_TIMEOUT_S": "5"}
    config = ProviderConfig.resolve(env)
    assert config.provider == "gemini.v1" and config.model_name == "gemini-2.5-flash" and config.timeout_s == 5
    assert config.secret() == "sk-secret-123456"
    assert "sk-secret" not in repr(config) and "sk-secret" not in config.model_dump_json()
    assert ProviderConfig.resolve({"OPENAI_API_KEY": "x" * 8}, provider="openai.v1", model="m").secret() == "x" * 8
    assert not ProviderConfig.resolve({}).configured
    with pytest.raises(ConfigError, match="needs a model name"):
        _ = ProviderConfig.resolve({}, provider="openai.v1").model_name
    assert redact("key sk-secret-123456 here", ("sk-secret-123456",)) == "key *** here"


def test_fake_provider_is_selectable_by_name_with_a_script():
    install_script("t-model", ['{"x": 1}'])
    provider = providers.create("fake.v1", config=ProviderConfig(provider="fake.v1", model="t-model"))
    assert provider.generate(_request(), timeout_s=1).text == '{"x": 1}'
    # exhausted: the smallest value the schema accepts
    schema = {"type": "object", "properties": {"q": {"type": "array"}}, "required": ["q"]}
    assert minimal_instance(schema) == {"q": []}


def test_missing_sdk_names_the_install_command(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_google(name, *args, **kwargs):
        if name.startswith("google"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_google)
    provider = providers.create("gemini.v1", config=ProviderConfig(provider="gemini.v1"))
    with pytest.raises(MissingDependencyError, match=r"pip install 'aqgr\[gemini\]'"):
        provider.generate(_request(), timeout_s=1)
    legacy = providers.create("gemini-legacy.v1", config=ProviderConfig(provider="gemini-legacy.v1"))
    with pytest.raises(MissingDependencyError, match=r"pip install 'aqgr\[gemini-legacy\]'"):
        legacy.generate(_request(), timeout_s=1)
