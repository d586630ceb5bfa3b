"""Google Gemini: `gemini.v1` on the maintained google-genai SDK, and `gemini-legacy.v1` on
google-generativeai 0.8.6 (end-of-life since 2025-11-30; named in the user's design card).

Both send `POST /v1beta/models/<model>:generateContent` with the key in the
`x-goog-api-key` header. A base URL (AQGR_BASE_URL) points them elsewhere, e.g. a proxy or
a fake server on loopback in tests. SDK retries are switched off: LLMClient retries.
The SDKs are imported on the first call; a missing one fails with the install command.
"""

from __future__ import annotations

from aqgr.errors import MissingDependencyError, ProviderError, SafetyBlockError

from .base import LLMReply, LLMRequest, provider_schema, providers
from .config import ProviderConfig

# Finish reasons that mean the reply was withheld, not finished.
_BLOCKED = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}
_BLOCKED_LEGACY = {3: "SAFETY", 4: "RECITATION", 7: "BLOCKLIST", 8: "PROHIBITED_CONTENT", 9: "SPII"}


def _classify_status(name: str, status: int | None, detail: str, retry_after: float | None = None) -> ProviderError:
    if status == 429:
        return ProviderError(name, "rate_limited", detail, status=status, retryable=True, retry_after=retry_after)
    if status is not None and status >= 500:
        return ProviderError(name, "server_error", detail, status=status, retryable=True, retry_after=retry_after)
    if status in (401, 403):
        return ProviderError(name, "auth", f"{detail} (check the API key: GEMINI_API_KEY or GOOGLE_API_KEY)", status=status)
    if status == 408:
        return ProviderError(name, "timeout", detail, status=status, retryable=True)
    return ProviderError(name, "bad_request" if status else "provider_error", detail, status=status)


def _transport_error(name: str, exc: Exception, timeout_s: float) -> ProviderError | None:
    """Timeouts and dropped connections from httpx / requests / api_core, by class name."""
    kinds = [t.__name__ for t in type(exc).__mro__]
    if any("Timeout" in k or k == "DeadlineExceeded" for k in kinds):
        return ProviderError(name, "timeout", f"no reply within {timeout_s:g} s", retryable=True)
    if any(k in ("ConnectError", "ConnectionError", "TransportError", "RemoteProtocolError", "ServiceUnavailable") for k in kinds):
        return ProviderError(name, "connection", f"{type(exc).__name__}: {exc}", retryable=True)
    return None


def _enum_name(value) -> str:
    return getattr(value, "name", None) or str(value or "")


class GeminiProvider:
    """`gemini.v1`: google-genai `Client.models.generate_content`."""

    name = "gemini.v1"

    def __init__(self, config: ProviderConfig):
        self.config = config
        self.model = config.model_name
        self._client = None

    def _sdk(self):
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise MissingDependencyError("google-genai", "gemini") from None
        return genai, types

    def client(self):
        if self._client is None:
            genai, types = self._sdk()
            options = types.HttpOptions(
                base_url=self.config.base_url,
                timeout=int(self.config.timeout_s * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
            )
            self._client = genai.Client(api_key=self.config.secret() or "", http_options=options)
        return self._client

    def _generation_config(self, request: LLMRequest, timeout_s: float):
        _, types = self._sdk()
        fields = dict(
            system_instruction=request.system,
            temperature=request.temperature,
            top_p=request.top_p,
            top_k=request.top_k,
            max_output_tokens=request.max_output_tokens,
            candidate_count=1,
            http_options=types.HttpOptions(timeout=int(timeout_s * 1000), retry_options=types.HttpRetryOptions(attempts=1)),
        )
        if request.json_schema is not None and self.config.structured_output != "off":
            fields["response_mime_type"] = "application/json"
            if self.config.structured_output in ("auto", "json_schema"):
                fields["response_json_schema"] = provider_schema(request.json_schema)
        return types.GenerateContentConfig(**fields)

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        client = self.client()  # raises MissingDependencyError without the SDK
        from google.genai import errors
        try:
            response = client.models.generate_content(model=self.model, contents=request.prompt, config=self._generation_config(request, timeout_s))
        except errors.APIError as exc:
            raise _classify_status(self.name, exc.code, str(exc.message or exc.status or "error")) from None
        except Exception as exc:
            raise (_transport_error(self.name, exc, timeout_s) or exc) from None
        return self._reply(response)

    def _reply(self, response) -> LLMReply:
        feedback = getattr(response, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None):
            raise SafetyBlockError(self.name, f"prompt blocked: {_enum_name(feedback.block_reason)}")
        candidates = response.candidates or []
        if not candidates:
            raise ProviderError(self.name, "empty_reply", "the reply has no candidate")
        finish = _enum_name(candidates[0].finish_reason)
        if finish in _BLOCKED:
            raise SafetyBlockError(self.name, f"reply withheld: finish reason {finish}")
        parts = (candidates[0].content.parts if candidates[0].content else None) or []
        text = "".join(p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False))
        usage = response.usage_metadata
        return LLMReply(
            text=text,
            input_tokens=int(getattr(usage, "prompt_token_count", 0) or 0),
            output_tokens=int(getattr(usage, "candidates_token_count", 0) or 0),
            finish_reason=finish,
            model=getattr(response, "model_version", None) or self.model,
        )


class LegacyGeminiProvider:
    """`gemini-legacy.v1`: google-generativeai 0.8.6 over REST (end-of-life; prefer gemini.v1).

    That SDK keeps its key and endpoint in process-wide state (`genai.configure`): use one
    legacy configuration per process."""

    name = "gemini-legacy.v1"

    def __init__(self, config: ProviderConfig):
        self.config = config
        self.model = config.model_name
        self._model = None

    def _sdk(self):
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its import warns that it is end-of-life
                import google.generativeai as genai
        except ImportError:
            raise MissingDependencyError("google-generativeai", "gemini-legacy") from None
        return genai

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        genai = self._sdk()
        from google.api_core import exceptions as gexc

        options = {"api_endpoint": self.config.base_url} if self.config.base_url else None
        genai.configure(api_key=self.config.secret() or "", transport="rest", client_options=options)
        generation = {
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_output_tokens": request.max_output_tokens,
            "candidate_count": 1,
        }
        if request.top_k is not None:
            generation["top_k"] = request.top_k
        if request.json_schema is not None and self.config.structured_output != "off":
            generation["response_mime_type"] = "application/json"
        model = genai.GenerativeModel(self.model, system_instruction=request.system)
        try:
            response = model.generate_content(request.prompt, generation_config=generation, request_options={"timeout": timeout_s, "retry": None})
        except gexc.GoogleAPICallError as exc:
            code = getattr(exc, "code", None)
            status = int(code) if isinstance(code, int) else getattr(code, "value", None)
            error = _transport_error(self.name, exc, timeout_s) if status is None else None
            raise (error or _classify_status(self.name, status, str(getattr(exc, "message", exc)))) from None
        except Exception as exc:
            raise (_transport_error(self.name, exc, timeout_s) or exc) from None
        feedback = getattr(response, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", 0):
            raise SafetyBlockError(self.name, f"prompt blocked: {_enum_name(feedback.block_reason)}")
        candidates = list(response.candidates or [])
        if not candidates:
            raise ProviderError(self.name, "empty_reply", "the reply has no candidate")
        raw_finish = candidates[0].finish_reason
        finish = _BLOCKED_LEGACY.get(int(raw_finish), _enum_name(raw_finish)) if isinstance(raw_finish, int) else _enum_name(raw_finish)
        if finish in _BLOCKED:
            raise SafetyBlockError(self.name, f"reply withheld: finish reason {finish}")
        text = "".join(p.text for p in candidates[0].content.parts if getattr(p, "text", None))
        usage = response.usage_metadata
        return LLMReply(
            text=text,
            input_tokens=int(getattr(usage, "prompt_token_count", 0) or 0),
            output_tokens=int(getattr(usage, "candidates_token_count", 0) or 0),
            finish_reason=finish,
            model=self.model,
        )


@providers.register("gemini.v1")
def _gemini_v1(config: ProviderConfig) -> GeminiProvider:
    return GeminiProvider(config)


@providers.register("gemini-legacy.v1")
def _gemini_legacy_v1(config: ProviderConfig) -> LegacyGeminiProvider:
    return LegacyGeminiProvider(config)
