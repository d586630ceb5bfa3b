"""`openai.v1`: any server speaking the OpenAI chat-completions wire format.

`POST {base_url}/chat/completions` with `Authorization: Bearer <key>` (no header when no
key: local Ollama, vLLM and llama.cpp servers need none). `top_k` is not part of OpenAI's
API: it is sent only to other hosts (vLLM, Ollama and llama.cpp read it). httpx is imported
on the first call.

Structured output is negotiated (`structured_output="auto"`, the default): servers differ in
the `response_format` they accept. OpenAI, vLLM, Ollama and llama.cpp's C++ server take
`json_schema`; llama-cpp-python's server answers HTTP 500 to it and takes `json_object` with a
`schema`; others take only `json_object`. A 400/422/500 whose message names the response
format moves to the next form at once (no retry) and the provider keeps that form for the
rest of the run; the last form is the prompt alone (the schema is in every prompt). A fixed
form (`json_schema`, `json_object_schema`, `json_object`, `off`) is never changed.
"""

from __future__ import annotations

from email.utils import parsedate_to_datetime

from aqgr.foundation.errors import MissingDependencyError, ProviderError, SafetyBlockError

from .base import LLMReply, LLMRequest, grammar_schema, provider_schema, providers
from .config import ProviderConfig
from .forms import StructuredForms

DEFAULT_BASE_URL = "https://api.openai.com/v1"
FORMS = ("json_schema", "json_object_schema", "json_object", "off")  # the negotiation order
# An error that blames the structured-output request (not the prompt or the server's health).
_ABOUT_FORMAT = r"response_format|json_schema|json schema|schema|grammar|structured"


def _retry_after(headers) -> float | None:
    """Seconds a server asks to wait: `retry-after-ms` (OpenAI), `retry-after` in seconds or as an HTTP date."""
    try:
        if headers.get("retry-after-ms") is not None:
            return float(headers.get("retry-after-ms")) / 1000
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        import time

        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def response_format(form: str, schema: dict) -> dict | None:
    """The `response_format` body field of one structured-output form (None: the prompt alone)."""
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": provider_schema(schema)}}
    if form == "json_object_schema":  # llama-cpp-python's server: a llama.cpp grammar, whose string bounds are limited
        return {"type": "json_object", "schema": grammar_schema(schema)}
    if form == "json_object":
        return {"type": "json_object"}
    return None


class OpenAICompatibleProvider:
    name = "openai.v1"
    may_cut_prompts = True  # Ollama cuts a prompt longer than its window without an error

    def __init__(self, config: ProviderConfig):
        self.config = config
        self.model = config.model_name
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self._client = None
        fixed = config.structured_output
        self._forms = StructuredForms(
            FORMS if fixed == "auto" else (fixed,), statuses=(400, 422, 500), about=_ABOUT_FORMAT
        )

    @property
    def structured_form(self) -> str:
        """The structured-output form in use ('json_schema', ..., 'off')."""
        return self._forms.current

    def check(self) -> None:
        """Configuration errors before any call: hosted OpenAI needs a key."""
        if "api.openai.com" in self.base_url and not self.config.secret():
            from aqgr.foundation.errors import ConfigError

            raise ConfigError(
                "openai.v1 at api.openai.com needs an API key: set OPENAI_API_KEY (or AQGR_API_KEY), or point --base-url at a local server"
            )

    def context_window(self) -> int | None:
        return self.config.context_window

    def client(self):
        if self._client is None:
            try:
                import httpx  # noqa: F401 (the extra's presence, checked before the client is made)
            except ImportError:
                raise MissingDependencyError("httpx", "openai") from None
            headers = {"Content-Type": "application/json"}
            if self.config.secret():
                headers["Authorization"] = f"Bearer {self.config.secret()}"
            from .http_deadline import deadline_client

            # each call on a connection of its own, cut at the call's deadline (aqgr/llm/http_deadline.py)
            self._client = deadline_client(base_url=self.base_url, headers=headers, trust_env=False)
        return self._client

    def _body(self, request: LLMRequest, form: str) -> dict:
        messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
            {"role": "user", "content": request.prompt}
        ]
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_output_tokens,
            "n": 1,
        }
        if request.top_k is not None and "api.openai.com" not in self.base_url:
            body["top_k"] = request.top_k
        shape = response_format(form, request.json_schema) if request.json_schema is not None else None
        if shape is not None:
            body["response_format"] = shape
        return body

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        """One reply; a structured-output form the server refuses is replaced by the next one, once each."""
        return self._forms.call(
            lambda form: self._post(request, form, timeout_s), structured=request.json_schema is not None
        )

    def _post(self, request: LLMRequest, form: str, timeout_s: float) -> LLMReply:
        import httpx

        try:
            response = self.client().post(
                "/chat/completions", json=self._body(request, form), timeout=timeout_s
            )  # the whole call, not a read
        except httpx.TimeoutException:
            raise ProviderError(self.name, "timeout", f"no reply within {timeout_s:g} s", retryable=True) from None
        except httpx.ConnectError as exc:  # nothing listens there: the set-up, not this judgment
            raise ProviderError(
                self.name,
                "unreachable",
                f"cannot connect to {self.base_url} ({exc}); is the server running? check --base-url",
                retryable=True,
            ) from None
        except httpx.TransportError as exc:  # a reply cut off mid-way
            raise ProviderError(self.name, "connection", f"{type(exc).__name__}: {exc}", retryable=True) from None
        status = response.status_code
        if status >= 400:
            try:
                detail = response.json().get("error", {})
                detail = detail.get("message", str(detail)) if isinstance(detail, dict) else str(detail)
            except ValueError:
                detail = response.text[:500]
            if status == 429:
                raise ProviderError(
                    self.name,
                    "rate_limited",
                    detail,
                    status=status,
                    retryable=True,
                    retry_after=_retry_after(response.headers),
                )
            if status >= 500:
                raise ProviderError(
                    self.name,
                    "server_error",
                    detail,
                    status=status,
                    retryable=True,
                    retry_after=_retry_after(response.headers),
                )
            if status == 408:
                raise ProviderError(self.name, "timeout", detail, status=status, retryable=True)
            if status in (401, 403):
                raise ProviderError(self.name, "auth", f"{detail} (check OPENAI_API_KEY / AQGR_API_KEY)", status=status)
            if status == 404:
                raise ProviderError(
                    self.name,
                    "not_found",
                    f"{detail} (check --model {self.model!r} and --base-url {self.base_url})",
                    status=status,
                )
            raise ProviderError(self.name, "bad_request", detail, status=status)
        try:
            data = response.json()
            choice = data["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProviderError(
                self.name,
                "empty_reply",
                "the reply has no choices (a cut connection or not an OpenAI-compatible server)",
                retryable=True,
            ) from None
        message = choice.get("message") or {}
        finish = choice.get("finish_reason")
        if finish == "content_filter":
            raise SafetyBlockError(self.name, "reply withheld: finish reason content_filter")
        if message.get("refusal"):
            raise SafetyBlockError(self.name, f"refusal: {str(message['refusal'])[:300]}")
        usage = data.get("usage") or {}
        return LLMReply(
            text=message.get("content") or "",
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=finish,
            model=data.get("model") or self.model,
        )


@providers.register("openai.v1")
def _openai_v1(config: ProviderConfig) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(config)
