"""What every provider takes and returns, and the registry of providers by versioned name."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from aqgr.foundation.registry import Registry

# The study's sampling (SPEC.md): Gemini-pro defaults; lower temperature made it copy paragraphs.
STUDY_TEMPERATURE = 0.9
STUDY_TOP_P = 1.0
STUDY_TOP_K = 1
STUDY_MAX_OUTPUT_TOKENS = 2048

# Finish reasons (lower-cased) that mean the reply stopped at the output budget, not by itself:
# OpenAI-compatible servers and llama.cpp say 'length', Gemini 'MAX_TOKENS'.
TRUNCATED_FINISH = frozenset({"length", "max_tokens"})


@dataclass(frozen=True)
class LLMRequest:
    """One model call. `json_schema` asks for structured output (JSON mode) where the provider has it."""

    prompt: str
    stage: str  # ledger bucket: 'summaries', 'questions', 'explanations', 'treatments'
    prompt_version: str  # template name and content hash: part of the cache key
    system: str | None = None
    json_schema: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    temperature: float = STUDY_TEMPERATURE
    top_p: float = STUDY_TOP_P
    top_k: int | None = STUDY_TOP_K
    max_output_tokens: int = STUDY_MAX_OUTPUT_TOKENS
    # The most the client may raise max_output_tokens to when a reply is cut at the budget
    # (None: the configured output cap, else the model's window); never below max_output_tokens.
    output_ceiling: int | None = field(default=None, hash=False, compare=False)

    def input_hash(self) -> str:
        """sha256 over everything the model sees (not the ledger stage)."""
        payload = {
            "prompt": self.prompt,
            "system": self.system,
            "schema": self.json_schema,
            "sampling": [self.temperature, self.top_p, self.top_k, self.max_output_tokens],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LLMReply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None
    model: str | None = None
    cached: bool = False
    thinking_tokens: int = 0  # reasoning tokens billed as output but not part of `text` (Gemini 2.5)

    @property
    def truncated(self) -> bool:
        """The reply stopped because it hit the output budget (its JSON is cut, not finished)."""
        return (self.finish_reason or "").lower() in TRUNCATED_FINISH


@runtime_checkable
class Provider(Protocol):
    name: str  # registered name, e.g. 'gemini.v1'
    model: str

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        """One attempt; raises aqgr.foundation.errors.ProviderError (retryable or not) or SafetyBlockError.
        A reply cut at the output budget is returned with its finish reason (LLMReply.truncated):
        the client decides what to do with it."""
        ...


# Optional provider methods, looked up with getattr by the client (aqgr/llm/client.py):
#   context_window() -> int | None   the model's window in tokens, where the provider can read it
#   count_tokens(text: str) -> int   tokens of `text` with the model's own tokenizer
#   check() -> None                  configuration problems (missing key, model file) before any call


providers: Registry[Provider] = Registry(
    "model provider", ("aqgr.llm.fake", "aqgr.llm.gemini", "aqgr.llm.openai_compat", "aqgr.llm.llamacpp")
)


def redact(text: str, secrets: tuple[str | None, ...]) -> str:
    """`text` with every secret replaced by '***' (API keys must never reach logs or errors)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def provider_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema as providers accept it: without $schema/$id and 'x-' annotations."""
    if isinstance(schema, dict):
        return {
            k: provider_schema(v) for k, v in schema.items() if k not in ("$schema", "$id") and not k.startswith("x-")
        }
    if isinstance(schema, list):
        return [provider_schema(v) for v in schema]
    return schema


# llama.cpp compiles a JSON Schema into a grammar; a string bounded above about 1,000 characters
# makes its grammar parser give up ("exceeds sane defaults") and llama-cpp-python then crashes the
# process (measured with llama-cpp-python 0.3.36). Longer bounds are lowered to this for grammars.
GRAMMAR_MAX_LENGTH = 1000


def grammar_schema(schema: Any) -> Any:
    """`provider_schema(schema)` with every `maxLength` at most GRAMMAR_MAX_LENGTH (for llama.cpp grammars)."""
    schema = provider_schema(schema)
    if isinstance(schema, dict):
        out = {k: grammar_schema(v) for k, v in schema.items()}
        if isinstance(out.get("maxLength"), int) and out["maxLength"] > GRAMMAR_MAX_LENGTH:
            out["maxLength"] = GRAMMAR_MAX_LENGTH
        return out
    if isinstance(schema, list):
        return [grammar_schema(v) for v in schema]
    return schema
