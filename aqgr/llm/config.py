"""Which model provider to call and how: declared once, read from the environment.

No provider configured (the default) means the offline engines answer and nothing touches
the network. The API key is a `SecretStr`: it never appears in a repr, a dump, a log line
or an error message.

Environment (each also a keyword of `ProviderConfig.resolve`):
  AQGR_PROVIDER       provider name: gemini.v1, gemini-legacy.v1, openai.v1, fake.v1
  AQGR_MODEL          model name (gemini.v1 default: gemini-2.5-flash; openai.v1 needs one)
  AQGR_BASE_URL       endpoint (a local Ollama: http://localhost:11434/v1)
  AQGR_API_KEY        key for any provider; else GEMINI_API_KEY / GOOGLE_API_KEY (Gemini)
                      or OPENAI_API_KEY (openai.v1; optional for local servers)
  AQGR_TIMEOUT_S, AQGR_MAX_RETRIES, AQGR_CONCURRENCY
  AQGR_STRUCTURED_OUTPUT  auto (default: negotiated per server), json_schema, json_object_schema,
                      json_object, off
  AQGR_CONTEXT_WINDOW     the model's window in tokens (default: read from the model where the
                      provider can, else the provider's documented one; 8,192 for an unknown
                      OpenAI-compatible server); every prompt and reply is budgeted inside it
  AQGR_MAX_INPUT_TOKENS   the most prompt tokens of one call (default: the study's 30,720, less
                      when the window is smaller)
  AQGR_MAX_OUTPUT_TOKENS  the most reply tokens of one call (default per stage: summaries 2,048,
                      the study's; questions 1,024; explanations 2,048), capped by the window
  AQGR_THINKING_BUDGET    Gemini 2.5 thinking tokens per call (default 512; gemini-2.5-flash-lite
                      thinks only when this is set; 0 turns thinking off where the model allows,
                      not on gemini-2.5-pro); sent on top of the output budget, so thinking
                      cannot starve the answer (gemini.v1 only: gemini-legacy.v1 cannot set it)
  AQGR_N_THREADS          llamacpp.v1: CPU threads (default: the machine's cores)
  AQGR_REQUESTS_PER_MINUTE, AQGR_TOKENS_PER_MINUTE   the provider quota, shared by every worker
                      using the same archive database (aqgr/archive/quota.py)
"""

from __future__ import annotations

import os
from typing import Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from aqgr.foundation.errors import ConfigError
from aqgr.foundation.inputs import option_problem

ENV = {
    "provider": "AQGR_PROVIDER",
    "model": "AQGR_MODEL",
    "base_url": "AQGR_BASE_URL",
    "timeout_s": "AQGR_TIMEOUT_S",
    "judgment_timeout_s": "AQGR_JUDGMENT_TIMEOUT_S",
    "search_timeout_s": "AQGR_SEARCH_TIMEOUT_S",
    "max_retries": "AQGR_MAX_RETRIES",
    "concurrency": "AQGR_CONCURRENCY",
    "structured_output": "AQGR_STRUCTURED_OUTPUT",
    "context_window": "AQGR_CONTEXT_WINDOW",
    "max_input_tokens": "AQGR_MAX_INPUT_TOKENS",
    "max_output_tokens": "AQGR_MAX_OUTPUT_TOKENS",
    "thinking_budget": "AQGR_THINKING_BUDGET",
    "n_threads": "AQGR_N_THREADS",
    "requests_per_minute": "AQGR_REQUESTS_PER_MINUTE",
    "tokens_per_minute": "AQGR_TOKENS_PER_MINUTE",
}
KEY_ENV = {
    "gemini": ("AQGR_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("AQGR_API_KEY", "OPENAI_API_KEY"),
}
StructuredOutput = Literal["auto", "json_schema", "json_object_schema", "json_object", "off"]


class ProviderOptions(TypedDict, total=False):
    """The model provider's settings as keyword arguments (`Archive(home, provider="openai.v1",
    base_url=..., max_output_tokens=512)`): ProviderConfig's fields, each described there.
    Unset ones come from the environment (AQGR_PROVIDER, AQGR_MODEL, ...)."""

    provider: str
    model: str
    api_key: str
    base_url: str
    timeout_s: float
    judgment_timeout_s: float
    search_timeout_s: float
    max_retries: int
    backoff_initial_s: float
    backoff_max_s: float
    concurrency: int
    structured_output: StructuredOutput
    context_window: int
    max_input_tokens: int
    max_output_tokens: int
    thinking_budget: int
    n_threads: int
    requests_per_minute: float
    tokens_per_minute: float
    cache: bool
    input_price_per_mtok: float
    output_price_per_mtok: float


_STRUCTURED_ALIASES = {"schema": "json_schema", "json": "json_object"}  # the names before negotiation existed
DEFAULT_MODELS = {"gemini.v1": "gemini-2.5-flash", "gemini-legacy.v1": "gemini-2.5-flash", "fake.v1": "scripted"}


class ProviderConfig(BaseModel):
    """A model provider and how to call it. `provider=None`: no model (offline engines)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str | None = Field(
        default=None, description="Registered provider name (aqgr.llm.base.providers); None: offline."
    )
    model: str | None = Field(default=None, description="Model name; None: the provider's default.")
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    base_url: str | None = Field(default=None, description="Endpoint; None: the provider's public one.")
    timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Longest one model call may take, in all (not per read); a local "
        "in-process model's grows with its measured speed and the reply budget.",
    )
    judgment_timeout_s: float = Field(
        default=600.0, gt=0, description="Longest the model calls of one judgment may take together, retries included."
    )
    search_timeout_s: float = Field(
        default=180.0, gt=0, description="Longest the model calls of one search may take together, retries included."
    )
    max_retries: int = Field(
        default=4, ge=0, le=20, description="Retries on 429, 5xx, timeouts and dropped connections."
    )
    backoff_initial_s: float = Field(
        default=2.0, ge=0, description="First retry wait; doubles each retry (a 429's Retry-After wins)."
    )
    backoff_max_s: float = Field(default=60.0, ge=0, description="Longest wait between retries.")
    concurrency: int = Field(default=4, ge=1, le=256, description="Calls in flight at once, per client.")
    structured_output: StructuredOutput = Field(
        default="auto",
        description="How replies are constrained to JSON. 'auto': the best form the server accepts, negotiated "
        "(json_schema, then json_object with the schema, then json_object, then the prompt alone) and remembered "
        "for the run; or one form fixed: 'json_schema', 'json_object_schema', 'json_object', 'off'.",
    )
    context_window: int | None = Field(
        default=None,
        ge=256,
        description="The model's window in tokens; None: read from the model or the provider's documented one.",
    )
    max_input_tokens: int | None = Field(
        default=None,
        ge=64,
        description="Most prompt tokens of one call; None: the study's 30,720, less when the window is smaller.",
    )
    max_output_tokens: int | None = Field(
        default=None,
        ge=16,
        description="Most reply tokens of one call; None: each stage's default, capped by the window.",
    )
    thinking_budget: int | None = Field(
        default=None, ge=0, description="Gemini thinking tokens per call, on top of the output budget; None: 512."
    )
    n_threads: int | None = Field(
        default=None, ge=1, le=512, description="llamacpp.v1: CPU threads; None: the machine's cores."
    )
    requests_per_minute: float | None = Field(
        default=None,
        gt=0,
        description="Provider quota: calls per minute across every worker on the same archive database; None: unlimited.",
    )
    tokens_per_minute: float | None = Field(
        default=None,
        gt=0,
        description="Provider quota: input + output tokens per minute across every worker; None: unlimited.",
    )
    cache: bool = Field(
        default=True,
        description="Reuse a stored reply for an identical request (provider, model, prompt version, input).",
    )
    input_price_per_mtok: float | None = Field(
        default=None, ge=0, description="Price per million input tokens, for the ledger's cost."
    )
    output_price_per_mtok: float | None = Field(default=None, ge=0, description="Price per million output tokens.")

    @field_validator("structured_output", mode="before")
    @classmethod
    def _structured_alias(cls, value):
        return _STRUCTURED_ALIASES.get(value, value)

    @property
    def configured(self) -> bool:
        return bool(self.provider)

    @property
    def model_name(self) -> str:
        model = self.model or DEFAULT_MODELS.get(self.provider or "")
        if not model:
            raise ConfigError(f"provider {self.provider!r} needs a model name: set AQGR_MODEL or pass --model")
        return model

    def secret(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key else None

    @classmethod
    def resolve(cls, environ: dict[str, str] | None = None, **overrides) -> "ProviderConfig":
        """Explicit values (not None) win over the environment."""
        env = os.environ if environ is None else environ
        values = {field: env[var] for field, var in ENV.items() if env.get(var)}
        values.update({k: v for k, v in overrides.items() if v is not None})
        provider = values.get("provider")
        if provider and "api_key" not in values:
            family = "openai" if provider.startswith("openai") else "gemini" if provider.startswith("gemini") else ""
            for var in KEY_ENV.get(family, ("AQGR_API_KEY",)):
                if env.get(var):
                    values["api_key"] = env[var]
                    break
        try:
            return cls(**values)
        except ValueError as exc:
            raise ConfigError(f"invalid model provider settings: {option_problem(exc, ENV)}") from None
