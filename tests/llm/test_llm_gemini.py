"""What broke on first contact with the real Gemini API, over real HTTP to a fake server on 127.0.0.1:
finish reason MAX_TOKENS, thinking budget and thought tokens, 429 retry delays, the schema trimmed
to the documented keywords with its fallback, configuration errors before any call, the window."""

from __future__ import annotations

import pytest

from aqgr.foundation.errors import ConfigError, MissingDependencyError, ProviderError
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
    fields = {
        "prompt": "Say n.",
        "stage": "summaries",
        "prompt_version": "t.v1@0",
        "system": "JSON only.",
        "json_schema": SCHEMA,
        **kw,
    }
    return LLMRequest(**fields)


def _settings(provider, url, *, model="gemini-fake", **config):
    return ProviderConfig(
        provider=provider, model=model, api_key=KEY, base_url=url, **{"backoff_initial_s": 0.01, **config}
    )


def _client(provider, url, *, sleeps=None, **config):
    waits = sleeps if sleeps is not None else []
    return LLMClient.from_config(_settings(provider, url, **config), sleep=waits.append, jitter=lambda: 0.0)


def _generation(post) -> dict:
    return post["body"]["generationConfig"]


def _thinking_budget(config: dict) -> int | None:
    """thinkingConfig's budget as sent (google-genai 2.x writes it as 'thinking_budget'; the API reads either spelling)."""
    thinking = config.get("thinkingConfig")
    if thinking is None:
        return None
    assert set(thinking) <= {"thinkingBudget", "thinking_budget"}, thinking
    return thinking.get("thinkingBudget", thinking.get("thinking_budget"))


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


# -- 2. thinking -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model, thinks",
    [
        ("gemini-2.5-flash", True),
        ("gemini-2.5-pro", True),
        ("models/gemini-2.5-flash-lite", True),
        ("gemini-3-pro-preview", True),
        ("gemini-3.1-flash", True),
        ("gemini-2.0-flash", False),
        ("gemini-1.5-pro", False),
        ("gemini-fake", False),
        ("gemma-3-27b-it", False),
    ],
)
def test_thinking_models_by_name(model, thinks):
    from aqgr.llm.gemini import thinking_model

    assert thinking_model(model) is thinks


def test_thinking_budget_is_sent_on_top_of_the_output_budget_and_thoughts_are_counted():
    with FakeModelServer() as server:
        server.add(Step(gemini_text('{"n": 1}', output_tokens=7, thoughts_tokens=300)))
        client = _client("gemini.v1", server.url, model="gemini-2.5-flash")
        reply = client.complete(_request(max_output_tokens=1000))
    config = _generation(server.posts()[0])
    assert _thinking_budget(config) == 512  # the default
    assert config["maxOutputTokens"] == 1000 + 512  # thinking cannot starve the answer
    assert (reply.output_tokens, reply.thinking_tokens) == (7, 300)
    usage = client.ledger.snapshot()["summaries"]
    assert usage["thinking_tokens"] == 300 and usage["output_tokens"] == 7


def test_thinking_budget_from_the_settings_zero_turns_it_off():
    with FakeModelServer(default=Step(gemini_text('{"n": 1}'))) as server:
        _client("gemini.v1", server.url, model="gemini-2.5-flash", thinking_budget=2048).complete(
            _request(max_output_tokens=1000)
        )
        _client("gemini.v1", server.url, model="gemini-2.5-flash", thinking_budget=0).complete(
            _request(max_output_tokens=900)
        )
    bigger, off = (_generation(p) for p in server.posts())
    assert _thinking_budget(bigger) == 2048 and bigger["maxOutputTokens"] == 3048
    assert _thinking_budget(off) == 0 and off["maxOutputTokens"] == 900


def test_flash_lite_thinks_only_when_a_budget_is_set():
    with FakeModelServer(default=Step(gemini_text('{"n": 1}'))) as server:
        _client("gemini.v1", server.url, model="gemini-2.5-flash-lite").complete(_request(max_output_tokens=1000))
        _client("gemini.v1", server.url, model="gemini-2.5-flash-lite", thinking_budget=1024).complete(
            _request(max_output_tokens=1000)
        )
    default, asked = (_generation(p) for p in server.posts())
    assert _thinking_budget(default) is None and default["maxOutputTokens"] == 1000
    assert _thinking_budget(asked) == 1024 and asked["maxOutputTokens"] == 2024


def test_no_thinking_config_for_models_that_do_not_think_and_the_output_limit_is_kept():
    with FakeModelServer(default=Step(gemini_text('{"n": 1}'))) as server:
        _client("gemini.v1", server.url, model="gemini-2.0-flash").complete(_request(max_output_tokens=1000))
        _client("gemini.v1", server.url, model="gemini-2.5-pro").complete(_request(max_output_tokens=65_536))
    plain, capped = (_generation(p) for p in server.posts())
    assert "thinkingConfig" not in plain and plain["maxOutputTokens"] == 1000
    assert capped["maxOutputTokens"] == 65_536  # the model's documented output limit, not 65,536 + 512


def test_legacy_sdk_counts_thoughts_from_the_total():
    pytest.importorskip("google.generativeai")
    with FakeModelServer() as server:
        server.add(Step(gemini_text('{"n": 1}', prompt_tokens=50, output_tokens=7, thoughts_tokens=120)))
        reply = _client("gemini-legacy.v1", server.url, model="gemini-2.5-flash").complete(_request())
    assert (reply.input_tokens, reply.output_tokens, reply.thinking_tokens) == (50, 7, 120)


# -- 3. retry delays -------------------------------------------------------------------------------
def test_429_retry_delay_from_the_error_body_is_waited(provider_name):
    waits: list[float] = []
    with FakeModelServer() as server:
        server.add(
            Step(gemini_error(429, "RESOURCE_EXHAUSTED", "quota exceeded", retry_delay="7s"), status=429),
            Step(gemini_text('{"n": 1}')),
        )
        reply = _client(provider_name, server.url, sleeps=waits).complete(_request())
    assert reply.text == '{"n": 1}' and len(server.posts()) == 2
    assert waits and waits[0] >= 7


def test_429_retry_after_header_is_waited(provider_name):
    waits: list[float] = []
    with FakeModelServer() as server:
        server.add(
            Step(gemini_error(429, "RESOURCE_EXHAUSTED", "quota"), status=429, headers={"Retry-After": "9"}),
            Step(gemini_text('{"n": 1}')),
        )
        _client(provider_name, server.url, sleeps=waits).complete(_request())
    assert waits and waits[0] >= 9


def test_a_retry_delay_longer_than_the_client_waits_fails_at_once(provider_name):
    with FakeModelServer(
        default=Step(gemini_error(429, "RESOURCE_EXHAUSTED", "daily quota", retry_delay="86400s"), status=429)
    ) as server:
        with pytest.raises(ProviderError) as info:
            _client(provider_name, server.url).complete(_request())
    assert info.value.kind == "rate_limited" and info.value.retry_after == 86400 and len(server.posts()) == 1


# -- 4. schema ---------------------------------------------------------------------------------------
def test_schema_keeps_only_the_documented_keywords_at_every_level():
    from aqgr.llm.gemini import JSON_SCHEMA_KEYWORDS, gemini_schema

    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "x-order": 1,
        "properties": {
            "default": {
                "type": "string",
                "maxLength": 80,
                "minLength": 1,
                "default": "",
                "pattern": "^a",
            },  # a slot named like a keyword
            "court": {
                "anyOf": [{"type": "string", "maxLength": 116}, {"type": "null"}],
                "default": None,
                "description": "Court.",
            },
            "bench": {
                "type": "array",
                "items": {"type": "string", "maxLength": 40},
                "maxItems": 9,
                "uniqueItems": True,
            },
            "score": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 1},
            "kind": {"$ref": "#/$defs/kind", "description": "dropped: a $ref sub-schema keeps only $ keywords"},
        },
        "required": ["court"],
        "$defs": {"kind": {"type": "string", "enum": ["appeal", "petition"], "const": "appeal"}},
    }
    trimmed = gemini_schema(schema)
    assert trimmed == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "default": {"type": "string"},
            "court": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Court."},
            "bench": {"type": "array", "items": {"type": "string"}, "maxItems": 9},
            "score": {"type": "integer", "minimum": 1, "maximum": 10},
            "kind": {"$ref": "#/$defs/kind"},
        },
        "required": ["court"],
        "$defs": {"kind": {"type": "string", "enum": ["appeal", "petition"]}},
    }
    assert schema["properties"]["default"]["maxLength"] == 80  # the input is not changed
    assert {"$ref", "$defs", "anyOf", "propertyOrdering", "prefixItems", "minItems"} <= JSON_SCHEMA_KEYWORDS


def test_the_summary_schema_is_sent_trimmed():
    from aqgr.llm.gemini import gemini_schema
    from aqgr.summarizer.llm import engine
    from aqgr.summarizer.llm.slots import reply_schema

    schema = reply_schema(engine._ALL_SLOTS, 2048)
    with FakeModelServer(default=Step(gemini_text('{"n": 1}'))) as server:
        _client("gemini.v1", server.url).complete(_request(json_schema=schema))
    sent = _generation(server.posts()[0])["responseJsonSchema"]
    assert sent == gemini_schema(schema) and sent["required"] == schema["required"]
    text = str(sent)
    assert "maxLength" not in text and "minLength" not in text and "'default'" not in text


def test_a_refused_schema_falls_back_once_to_json_mode_then_to_the_prompt_alone_and_is_remembered():
    with FakeModelServer() as server:
        server.add(
            Step(
                gemini_error(
                    400,
                    "INVALID_ARGUMENT",
                    "Invalid JSON payload received. Unknown name \"responseJsonSchema\" at 'generation_config': Cannot find field.",
                ),
                status=400,
            ),
            Step(gemini_text('{"n": 1}')),
            Step(gemini_text('{"n": 2}')),
            Step(
                gemini_error(
                    400, "INVALID_ARGUMENT", "response_mime_type: application/json is not supported for this model"
                ),
                status=400,
            ),
            Step(gemini_text('{"n": 3}')),
            Step(gemini_text('{"n": 4}')),
        )
        client = _client("gemini.v1", server.url)
        texts = [client.complete(_request(prompt_version=f"t.v1@{i}")).text for i in range(4)]
    assert texts == ['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}']
    forms = [_generation(p) for p in server.posts()]
    assert "responseJsonSchema" in forms[0]
    assert [("responseJsonSchema" in f, "responseMimeType" in f) for f in forms[1:]] == [
        (False, True),
        (False, True),
        (False, True),
        (False, False),
        (False, False),
    ]
    assert client.provider.structured_form == "off" and client.ledger.snapshot()["summaries"]["retries"] == 0


def test_a_fixed_structured_output_setting_is_never_changed():
    refusal = Step(
        gemini_error(400, "INVALID_ARGUMENT", 'Unknown name "responseJsonSchema": Cannot find field.'), status=400
    )
    with FakeModelServer(default=refusal) as server:
        client = _client("gemini.v1", server.url, structured_output="json_schema")
        with pytest.raises(ProviderError) as info:
            client.complete(_request())
    assert info.value.kind == "bad_request" and len(server.posts()) == 1
    with FakeModelServer(default=Step(gemini_text('{"n": 1}'))) as server:
        _client("gemini.v1", server.url, structured_output="json_object").complete(_request())
        _client("gemini.v1", server.url, structured_output="off").complete(_request())
    mime, off = (_generation(p) for p in server.posts())
    assert mime["responseMimeType"] == "application/json" and "responseJsonSchema" not in mime
    assert "responseMimeType" not in off


def test_an_error_that_does_not_name_the_schema_is_not_a_fallback():
    with FakeModelServer(
        default=Step(gemini_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument."), status=400)
    ) as server:
        client = _client("gemini.v1", server.url)
        with pytest.raises(ProviderError, match="bad_request"):
            client.complete(_request())
    assert len(server.posts()) == 1 and client.provider.structured_form == "json_schema"


def test_legacy_sdk_sends_json_mode_and_falls_back_to_the_prompt_alone():
    pytest.importorskip("google.generativeai")
    with FakeModelServer() as server:
        server.add(
            Step(
                gemini_error(400, "INVALID_ARGUMENT", "response_mime_type is not supported by this model"), status=400
            ),
            Step(gemini_text('{"n": 1}')),
            Step(gemini_text('{"n": 2}')),
        )
        client = _client("gemini-legacy.v1", server.url)
        client.complete(_request(prompt_version="a"))
        client.complete(_request(prompt_version="b"))
    forms = [_generation(p) for p in server.posts()]
    assert forms[0]["responseMimeType"] == "application/json" and "responseSchema" not in forms[0]
    assert "responseMimeType" not in forms[1] and "responseMimeType" not in forms[2]


# -- 5. configuration errors once --------------------------------------------------------------------
@pytest.mark.parametrize("base_url", [None, "https://generativelanguage.googleapis.com"])
def test_a_missing_key_for_google_is_a_configuration_error_before_any_call(provider_name, base_url):
    settings = ProviderConfig(provider=provider_name, base_url=base_url)
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        LLMClient.from_config(settings)


def test_no_key_is_needed_for_another_host(provider_name):
    with FakeModelServer(default=Step(gemini_text('{"n": 1}'))) as server:
        reply = LLMClient.from_config(
            ProviderConfig(provider=provider_name, model="gemini-fake", base_url=server.url)
        ).complete(_request())
    assert reply.text == '{"n": 1}'


def test_a_missing_sdk_is_reported_by_check(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    for name, extra in (("gemini.v1", "gemini"), ("gemini-legacy.v1", "gemini-legacy")):
        with pytest.raises(MissingDependencyError, match=rf"pip install 'aqgr\[{extra}\]'"):
            LLMClient.from_config(ProviderConfig(provider=name, api_key=KEY))


@pytest.mark.parametrize(
    "status, code, message, kind",
    [
        (404, "NOT_FOUND", "models/gemini-9-ultra is not found for API version v1beta", "not_found"),
        (401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", "auth"),
        (403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.", "auth"),
        (400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "auth"),
        (400, "FAILED_PRECONDITION", "User location is not supported for the API use.", "bad_request"),
        (413, "INVALID_ARGUMENT", "Request payload size exceeds the limit.", "bad_request"),
    ],
)
def test_client_errors_are_not_retried(provider_name, status, code, message, kind):
    with FakeModelServer(default=Step(gemini_error(status, code, message), status=status)) as server:
        client = _client(provider_name, server.url, model="gemini-9-ultra")
        with pytest.raises(ProviderError) as info:
            client.complete(_request())
    assert info.value.kind == kind and info.value.status == status and not info.value.retryable
    assert len(server.posts()) == 1
    if kind == "not_found":
        assert "--model" in str(info.value) and "gemini-9-ultra" in str(info.value)


# -- 6. context window --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model, window",
    [
        ("gemini-2.5-flash", 1_048_576),
        ("gemini-2.5-pro", 1_048_576),
        ("models/gemini-2.5-flash-lite", 1_048_576),
        ("gemini-2.0-flash", 1_048_576),
        ("gemini-fake", None),
        ("gemini-2.5-flash-image", None),
    ],
)
def test_documented_context_window(provider_name, model, window):
    provider = providers.create(provider_name, config=_settings(provider_name, None, model=model))
    assert provider.context_window() == window


def test_a_configured_context_window_wins(provider_name):
    config = _settings(provider_name, None, model="gemini-2.5-flash", context_window=100_000)
    assert providers.create(provider_name, config=config).context_window() == 100_000
    assert LLMClient.from_config(config).context_window() == 100_000
