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
  AQGR_TIMEOUT_S, AQGR_MAX_RETRIES, AQGR_CONCURRENCY, AQGR_STRUCTURED_OUTPUT
  AQGR_REQUESTS_PER_MINUTE, AQGR_TOKENS_PER_MINUTE   the provider quota, shared by every worker
                      using the same archive database (aqgr/quota.py)
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from aqgr.errors import ConfigError

ENV = {
    "provider": "AQGR_PROVIDER",
    "model": "AQGR_MODEL",
    "base_url": "AQGR_BASE_URL",
    "timeout_s": "AQGR_TIMEOUT_S",
    "max_retries": "AQGR_MAX_RETRIES",
    "concurrency": "AQGR_CONCURRENCY",
    "structured_output": "AQGR_STRUCTURED_OUTPUT",
    "requests_per_minute": "AQGR_REQUESTS_PER_MINUTE",
    "tokens_per_minute": "AQGR_TOKENS_PER_MINUTE",
}
KEY_ENV = {
    "gemini": ("AQGR_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai": ("AQGR_API_KEY", "OPENAI_API_KEY"),
}
DEFAULT_MODELS = {"gemini.v1": "gemini-2.5-flash", "gemini-legacy.v1": "gemini-2.5-flash", "fake.v1": "scripted"}


class ProviderConfig(BaseModel):
    """A model provider and how to call it. `provider=None`: no model (offline engines)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str | None = Field(default=None, description="Registered provider name (aqgr.llm.base.providers); None: offline.")
    model: str | None = Field(default=None, description="Model name; None: the provider's default.")
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    base_url: str | None = Field(default=None, description="Endpoint; None: the provider's public one.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per-call timeout.")
    max_retries: int = Field(default=4, ge=0, le=20, description="Retries on 429, 5xx, timeouts and dropped connections.")
    backoff_initial_s: float = Field(default=2.0, ge=0, description="First retry wait; doubles each retry (a 429's Retry-After wins).")
    backoff_max_s: float = Field(default=60.0, ge=0, description="Longest wait between retries.")
    concurrency: int = Field(default=4, ge=1, le=256, description="Calls in flight at once, per client.")
    structured_output: Literal["schema", "json", "off"] = Field(
        default="schema", description="'schema': send the JSON Schema (structured output); 'json': JSON mode only; 'off': prompt only."
    )
    requests_per_minute: float | None = Field(default=None, gt=0, description="Provider quota: calls per minute across every worker on the same archive database; None: unlimited.")
    tokens_per_minute: float | None = Field(default=None, gt=0, description="Provider quota: input + output tokens per minute across every worker; None: unlimited.")
    cache: bool = Field(default=True, description="Reuse a stored reply for an identical request (provider, model, prompt version, input).")
    input_price_per_mtok: float | None = Field(default=None, ge=0, description="Price per million input tokens, for the ledger's cost.")
    output_price_per_mtok: float | None = Field(default=None, ge=0, description="Price per million output tokens.")

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
            raise ConfigError(f"invalid model provider settings: {exc}") from None
