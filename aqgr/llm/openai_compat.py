"""`openai.v1`: any server speaking the OpenAI chat-completions wire format.

`POST {base_url}/chat/completions` with `Authorization: Bearer <key>` (no header when no
key: local Ollama, vLLM and llama.cpp servers need none). Structured output sends
`response_format` `json_schema` (or `json_object` with AQGR_STRUCTURED_OUTPUT=json).
`top_k` is not part of OpenAI's API: it is sent only to other hosts (vLLM, Ollama and
llama.cpp read it). httpx is imported on the first call.
"""

from __future__ import annotations

from aqgr.errors import MissingDependencyError, ProviderError, SafetyBlockError

from .base import LLMReply, LLMRequest, provider_schema, providers
from .config import ProviderConfig

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _retry_after(headers) -> float | None:
    try:
        return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None


class OpenAICompatibleProvider:
    name = "openai.v1"

    def __init__(self, config: ProviderConfig):
        self.config = config
        self.model = config.model_name
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self._client = None

    def client(self):
        if self._client is None:
            try:
                import httpx
            except ImportError:
                raise MissingDependencyError("httpx", "openai") from None
            headers = {"Content-Type": "application/json"}
            if self.config.secret():
                headers["Authorization"] = f"Bearer {self.config.secret()}"
            self._client = httpx.Client(base_url=self.base_url, headers=headers, trust_env=False)
        return self._client

    def _body(self, request: LLMRequest) -> dict:
        messages = ([{"role": "system", "content": request.system}] if request.system else []) + [{"role": "user", "content": request.prompt}]
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
        if request.json_schema is not None:
            if self.config.structured_output == "schema":
                body["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": provider_schema(request.json_schema)}}
            elif self.config.structured_output == "json":
                body["response_format"] = {"type": "json_object"}
        return body

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        import httpx

        try:
            response = self.client().post("/chat/completions", json=self._body(request), timeout=timeout_s)
        except httpx.TimeoutException:
            raise ProviderError(self.name, "timeout", f"no reply within {timeout_s:g} s", retryable=True) from None
        except httpx.TransportError as exc:
            raise ProviderError(self.name, "connection", f"{type(exc).__name__}: {exc}", retryable=True) from None
        status = response.status_code
        if status >= 400:
            try:
                detail = response.json().get("error", {})
                detail = detail.get("message", str(detail)) if isinstance(detail, dict) else str(detail)
            except ValueError:
                detail = response.text[:500]
            if status == 429:
                raise ProviderError(self.name, "rate_limited", detail, status=status, retryable=True, retry_after=_retry_after(response.headers))
            if status >= 500:
                raise ProviderError(self.name, "server_error", detail, status=status, retryable=True, retry_after=_retry_after(response.headers))
            if status == 408:
                raise ProviderError(self.name, "timeout", detail, status=status, retryable=True)
            kind = "auth" if status in (401, 403) else "bad_request"
            raise ProviderError(self.name, kind, detail + (" (check OPENAI_API_KEY)" if kind == "auth" else ""), status=status)
        try:
            data = response.json()
            choice = data["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProviderError(self.name, "empty_reply", "the reply has no choices") from None
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
