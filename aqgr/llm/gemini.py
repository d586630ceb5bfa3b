"""Google Gemini: `gemini.v1` on the maintained google-genai SDK, and `gemini-legacy.v1` on
google-generativeai 0.8.6 (end-of-life since 2025-11-30; named in the user's design card).

Both send `POST /v1beta/models/<model>:generateContent` with the key in the
`x-goog-api-key` header. A base URL (AQGR_BASE_URL) points them elsewhere, e.g. a proxy or
a fake server on loopback in tests. SDK retries are switched off: LLMClient retries. Both send
through aqgr/llm/http_deadline.py, so a call's timeout is its whole time, not each socket read's.
The SDKs are imported on the first call; a missing one fails with the install command.

* Configuration (`check()`, once per client): Google's endpoint needs an API key; a missing key
  or SDK is a ConfigError / MissingDependencyError before any call. Another host (a proxy, a fake
  server) may take no key: the SDKs then send the placeholder NO_KEY, as both refuse to run without.
* Errors: 404 is `not_found` (an unknown --model), 401/403 and a 400 about the key are `auth`,
  other 4xx are not retried; 408, 429 and 5xx are. A 429's retry delay (google.rpc.RetryInfo
  `retryDelay` in the error body, or a Retry-After header) becomes `retry_after`.
* Finish reason: the API's name (`MAX_TOKENS`, ...; the legacy SDK's numbers mapped to names), so
  the client sees a reply cut at its budget as truncated (LLMReply.truncated).
* Thinking (gemini.v1; models named gemini-2.5-* or later, see `thinking_model`): the request
  carries `thinking_config.thinking_budget` = settings.thinking_budget (DEFAULT_THINKING_BUDGET
  when unset, except gemini-2.5-flash-lite, which does not think unless asked; 0 turns thinking
  off where the model allows: not gemini-2.5-pro) and `max_output_tokens` = the reply budget +
  the thinking budget (at most the model's documented output limit), so thinking cannot starve
  the answer; `thoughtsTokenCount` is
  LLMReply.thinking_tokens. The legacy SDK has no thinking settings: a thinking model thinks as
  its default says, inside max_output_tokens, and its thought tokens are derived from the usage
  total (total - prompt - reply).
* Structured output (`structured_output="auto"`): `response_json_schema` (trimmed to the
  documented keywords, `gemini_schema`) with the JSON MIME type, then the JSON MIME type alone,
  then the prompt alone (the schema is in every prompt). A 400 whose message names the schema or
  the MIME type moves to the next form at once and the provider keeps it for the run; a fixed
  setting is never changed ('json_object_schema' sends the schema like 'json_schema'). The legacy
  SDK starts at the JSON MIME type.
"""

from __future__ import annotations

import importlib.util
import re
from urllib.parse import urlparse

from aqgr.foundation.errors import ConfigError, MissingDependencyError, ProviderError, SafetyBlockError

from .base import LLMReply, LLMRequest, provider_schema, providers
from .config import ProviderConfig
from .forms import StructuredForms

# Finish reasons that mean the reply was withheld, not finished.
_BLOCKED = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}
# google.ai.generativelanguage_v1beta Candidate.FinishReason, as numbers (the legacy SDK asks for enum-encoding=int).
_LEGACY_FINISH = {
    0: "FINISH_REASON_UNSPECIFIED",
    1: "STOP",
    2: "MAX_TOKENS",
    3: "SAFETY",
    4: "RECITATION",
    5: "OTHER",
    6: "LANGUAGE",
    7: "BLOCKLIST",
    8: "PROHIBITED_CONTENT",
    9: "SPII",
    10: "MALFORMED_FUNCTION_CALL",
    11: "IMAGE_SAFETY",
}

NO_KEY = "no-key"  # sent to a non-Google host when no key is configured (both SDKs refuse an empty key)
KEY_HELP = "set GEMINI_API_KEY (or GOOGLE_API_KEY, AQGR_API_KEY); create one at https://aistudio.google.com/apikey"

# Thinking: config.thinking_budget None means this many tokens per call (ProviderConfig documents it),
# except for models that do not think unless asked (gemini-2.5-flash-lite): they are left as they are.
DEFAULT_THINKING_BUDGET = 512
_THINKS_ONLY_WHEN_ASKED = ("gemini-2.5-flash-lite",)
_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?")
# Windows and output limits from the Gemini models page (input / output token limits), text models only.
DOCUMENTED_WINDOW = 1_048_576  # gemini-2.0-flash(-lite), gemini-2.5-pro/flash/flash-lite, gemini-3 previews
_OUTPUT_LIMITS = {(2, 0): 8_192, (2, 5): 65_536, (3, 0): 65_536}
_NOT_TEXT = ("image", "tts", "audio", "live", "embedding")  # variants with other limits: unknown here

# Keywords GenerationConfig.response_json_schema supports, as the Gemini API reference lists them
# ("only the following properties are supported"; the same list in google-genai 2.34's
# GenerateContentConfig.response_json_schema): every other keyword is dropped before sending.
JSON_SCHEMA_KEYWORDS = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    }
)
_SCHEMA_MAPS = {"properties", "$defs"}  # name -> sub-schema (the names are data, not keywords)
_SCHEMA_LISTS = {"anyOf", "oneOf", "prefixItems"}
_SCHEMA_ONE = {"items", "additionalProperties"}

FORMS = ("json_schema", "json_object", "off")  # gemini.v1 negotiation order
LEGACY_FORMS = ("json_object", "off")  # google-generativeai: JSON MIME type, then the prompt alone
_FIXED = {"json_schema": "json_schema", "json_object_schema": "json_schema", "json_object": "json_object", "off": "off"}
# A 400 that blames the structured-output request: it names the schema or the MIME type.
_ABOUT_FORMAT = r"schema|mime"


def gemini_schema(schema):
    """`schema` with only JSON_SCHEMA_KEYWORDS at every level (a new object; the input is not changed).
    As documented, a sub-schema with `$ref` keeps only its `$` keywords."""
    if not isinstance(schema, dict):
        return schema  # true / false sub-schemas
    out = {}
    for key, value in schema.items():
        if key not in JSON_SCHEMA_KEYWORDS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {name: gemini_schema(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [gemini_schema(sub) for sub in value]
        elif key in _SCHEMA_ONE:
            value = gemini_schema(value)
        out[key] = value
    if "$ref" in out:
        out = {k: v for k, v in out.items() if k.startswith("$")}
    return out


def _version(model: str) -> tuple[int, int] | None:
    found = _VERSION.search(model.lower())
    return (int(found[1]), int(found[2] or 0)) if found else None


def thinking_model(model: str) -> bool:
    """Whether `model` thinks (and takes a thinking budget): Gemini 2.5 and later, by its name
    (gemini-2.5-*, gemini-3*). An alias without a version (gemini-flash-latest) counts as not."""
    version = _version(model)
    return version is not None and version >= (2, 5)


def _known(model: str) -> tuple[int, int] | None:
    """The model's version when its limits are documented here (a text model of Gemini 2.0, 2.5 or 3)."""
    version = _version(model)
    if version not in _OUTPUT_LIMITS or any(word in model.lower() for word in _NOT_TEXT):
        return None
    return version


def output_limit(model: str) -> int | None:
    """The most output tokens (thinking included) the model documents; None: not known here."""
    version = _known(model)
    return None if version is None else _OUTPUT_LIMITS[version]


def _google_host(base_url: str | None) -> bool:
    host = urlparse(base_url).hostname if base_url else None
    return host is None or host == "googleapis.com" or host.endswith(".googleapis.com")


def _delay_seconds(value) -> float | None:
    """A google.protobuf.Duration as JSON ('7s', '0.5s') or as a message (seconds, nanos)."""
    if isinstance(value, str):
        try:
            return max(0.0, float(value.strip().rstrip("s")))
        except ValueError:
            return None
    seconds = getattr(value, "seconds", None)
    return None if seconds is None else float(seconds) + getattr(value, "nanos", 0) / 1e9


def retry_delay(details, headers=None) -> float | None:
    """Seconds the server asks to wait: RetryInfo.retryDelay among the error details, or a Retry-After
    header in seconds (the longer when both are given)."""
    delays = []
    for detail in details or ():
        if isinstance(detail, dict):
            if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
                delays.append(_delay_seconds(detail.get("retryDelay")))
        elif getattr(detail, "retry_delay", None) is not None:  # a decoded RetryInfo message (gRPC transport)
            delays.append(_delay_seconds(detail.retry_delay))
    try:
        header = headers.get("retry-after") if headers is not None else None
        delays.append(max(0.0, float(header)) if header is not None else None)
    except (TypeError, ValueError):
        pass  # an HTTP date: the exponential backoff applies
    found = [d for d in delays if d is not None]
    return max(found) if found else None


def _classify_status(
    name: str, model: str, status: int | None, detail: str, retry_after: float | None = None
) -> ProviderError:
    if status == 429:
        return ProviderError(name, "rate_limited", detail, status=status, retryable=True, retry_after=retry_after)
    if status is not None and status >= 500:
        return ProviderError(name, "server_error", detail, status=status, retryable=True, retry_after=retry_after)
    if status in (401, 403) or (status == 400 and ("API key" in detail or "API_KEY" in detail)):
        return ProviderError(name, "auth", f"{detail} (check the API key: {KEY_HELP})", status=status)
    if status == 404:
        return ProviderError(
            name, "not_found", f"{detail} (check --model {model!r} (AQGR_MODEL): e.g. gemini-2.5-flash)", status=status
        )
    if status == 408:
        return ProviderError(name, "timeout", detail, status=status, retryable=True)
    return ProviderError(name, "bad_request" if status else "provider_error", detail, status=status)


def _transport_error(name: str, exc: Exception, timeout_s: float) -> ProviderError | None:
    """Timeouts and dropped connections from httpx / requests / api_core, by class name."""
    kinds = [t.__name__ for t in type(exc).__mro__]
    if any("Timeout" in k or k == "DeadlineExceeded" for k in kinds):
        return ProviderError(name, "timeout", f"no reply within {timeout_s:g} s", retryable=True)
    if "ConnectError" in kinds:  # nothing listens there: the set-up, not this judgment
        return ProviderError(
            name, "unreachable", f"cannot connect ({exc}); check the network or --base-url", retryable=True
        )
    if any(k in ("ConnectionError", "TransportError", "RemoteProtocolError", "ServiceUnavailable") for k in kinds):
        return ProviderError(name, "connection", f"{type(exc).__name__}: {exc}", retryable=True)
    return None


def _enum_name(value) -> str:
    if isinstance(value, int) and not hasattr(value, "name"):
        return _LEGACY_FINISH.get(value, str(value))
    return getattr(value, "name", None) or str(value or "")


class _GeminiBase:
    """What both SDKs share: configuration checks, the window, the structured-output negotiation."""

    name = ""
    module = ""  # the SDK's import name
    package = ""  # its distribution name
    extra = ""  # the aqgr extra that installs it
    order: tuple[str, ...] = FORMS

    def __init__(self, config: ProviderConfig):
        self.config = config
        self.model = config.model_name
        fixed = config.structured_output
        wanted = self.order if fixed == "auto" else (_FIXED[fixed],)
        forms = tuple(f for f in wanted if f in self.order) or ("json_object",)
        self._forms = StructuredForms(forms, statuses=(400,), about=_ABOUT_FORMAT)

    @property
    def structured_form(self) -> str:
        """The structured-output form in use ('json_schema', 'json_object' or 'off')."""
        return self._forms.current

    def check(self) -> None:
        """Configuration errors before any call: Google's endpoint needs a key; the SDK must be installed."""
        if not self.config.secret() and _google_host(self.config.base_url):
            raise ConfigError(f"{self.name} needs an API key for Google's Gemini API: {KEY_HELP}")
        try:
            found = importlib.util.find_spec(self.module)
        except ImportError:  # the `google` namespace itself is missing
            found = None
        if found is None:
            raise MissingDependencyError(self.package, self.extra)

    def context_window(self) -> int | None:
        """The configured window, else the documented one of a known model (else None: the client decides)."""
        if self.config.context_window:
            return self.config.context_window
        return DOCUMENTED_WINDOW if _known(self.model) else None

    def _key(self) -> str:
        return self.config.secret() or NO_KEY

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        """One reply; a structured-output form the server refuses (HTTP 400 naming the schema or MIME type)
        is replaced by the next one, once each."""
        return self._forms.call(
            lambda form: self._generate(request, form, timeout_s), structured=request.json_schema is not None
        )

    def _generate(self, request: LLMRequest, form: str, timeout_s: float) -> LLMReply:
        raise NotImplementedError


class GeminiProvider(_GeminiBase):
    """`gemini.v1`: google-genai `Client.models.generate_content`."""

    name = "gemini.v1"
    module = "google.genai"
    package = "google-genai"
    extra = "gemini"
    order = FORMS

    def __init__(self, config: ProviderConfig):
        super().__init__(config)
        self._client = None

    def _sdk(self):
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise MissingDependencyError(self.package, self.extra) from None
        return genai, types

    def client(self):
        if self._client is None:
            genai, types = self._sdk()
            from .http_deadline import deadline_client

            options = types.HttpOptions(
                base_url=self.config.base_url,
                timeout=int(self.config.timeout_s * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
                httpx_client=deadline_client(),  # each call's timeout is its whole time, not each socket read's
            )
            self._client = genai.Client(api_key=self._key(), http_options=options)
        return self._client

    def thinking_budget(self) -> int | None:
        """Thinking tokens per call for this model (None: send no thinking settings: a model that does
        not think, or one that thinks only when asked and no budget is configured)."""
        if not thinking_model(self.model):
            return None
        if self.config.thinking_budget is not None:
            return self.config.thinking_budget
        if any(name in self.model.lower() for name in _THINKS_ONLY_WHEN_ASKED):
            return None
        return DEFAULT_THINKING_BUDGET

    def _generation_config(self, request: LLMRequest, timeout_s: float, form: str):
        _, types = self._sdk()
        thinking = self.thinking_budget()
        max_output = request.max_output_tokens + (thinking or 0)
        limit = output_limit(self.model)
        fields = dict(
            system_instruction=request.system,
            temperature=request.temperature,
            top_p=request.top_p,
            top_k=request.top_k,
            max_output_tokens=min(max_output, limit) if limit else max_output,
            candidate_count=1,
            http_options=types.HttpOptions(
                timeout=int(timeout_s * 1000), retry_options=types.HttpRetryOptions(attempts=1)
            ),
        )
        if thinking is not None:
            fields["thinking_config"] = types.ThinkingConfig(thinking_budget=thinking)
        if request.json_schema is not None and form != "off":
            fields["response_mime_type"] = "application/json"
            if form == "json_schema":
                fields["response_json_schema"] = gemini_schema(provider_schema(request.json_schema))
        return types.GenerateContentConfig(**fields)

    def _generate(self, request: LLMRequest, form: str, timeout_s: float) -> LLMReply:
        client = self.client()  # raises MissingDependencyError without the SDK
        from google.genai import errors

        try:
            response = client.models.generate_content(
                model=self.model, contents=request.prompt, config=self._generation_config(request, timeout_s, form)
            )
        except errors.APIError as exc:
            body = exc.details if isinstance(exc.details, dict) else {}
            error = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
            headers = getattr(getattr(exc, "response", None), "headers", None)
            delay = retry_delay(error.get("details"), headers)
            raise _classify_status(
                self.name, self.model, exc.code, str(exc.message or exc.status or "error"), delay
            ) from None
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
            thinking_tokens=int(getattr(usage, "thoughts_token_count", 0) or 0),
        )


class LegacyGeminiProvider(_GeminiBase):
    """`gemini-legacy.v1`: google-generativeai 0.8.6 over REST (end-of-life; prefer gemini.v1).

    That SDK keeps its key and endpoint in process-wide state (`genai.configure`): use one
    legacy configuration per process. It has no thinking settings and no JSON Schema field
    that takes our schemas as they are: it asks for the JSON MIME type."""

    name = "gemini-legacy.v1"
    module = "google.generativeai"
    package = "google-generativeai"
    extra = "gemini-legacy"
    order = LEGACY_FORMS

    def _sdk(self):
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its import warns that it is end-of-life
                import google.generativeai as genai
        except ImportError:
            raise MissingDependencyError(self.package, self.extra) from None
        return genai

    def _generate(self, request: LLMRequest, form: str, timeout_s: float) -> LLMReply:
        genai = self._sdk()
        from google.api_core import exceptions as gexc

        options = {"api_endpoint": self.config.base_url} if self.config.base_url else None
        genai.configure(api_key=self._key(), transport="rest", client_options=options)
        _prepare_session()
        generation = {
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_output_tokens": request.max_output_tokens,
            "candidate_count": 1,
        }
        if request.top_k is not None:
            generation["top_k"] = request.top_k
        if request.json_schema is not None and form != "off":
            generation["response_mime_type"] = "application/json"
        model = genai.GenerativeModel(self.model, system_instruction=request.system)
        try:
            response = model.generate_content(
                request.prompt, generation_config=generation, request_options={"timeout": timeout_s, "retry": None}
            )
        except gexc.GoogleAPICallError as exc:
            code = getattr(exc, "code", None)
            status = int(code) if isinstance(code, int) else getattr(code, "value", None)
            error = _transport_error(self.name, exc, timeout_s) if status is None else None
            headers = getattr(getattr(exc, "response", None), "headers", None)
            delay = retry_delay(getattr(exc, "details", None), headers)
            raise (
                error or _classify_status(self.name, self.model, status, str(getattr(exc, "message", exc)), delay)
            ) from None
        except Exception as exc:
            raise (_transport_error(self.name, exc, timeout_s) or exc) from None
        return self._reply(response)

    def _reply(self, response) -> LLMReply:
        feedback = getattr(response, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", 0):
            raise SafetyBlockError(self.name, f"prompt blocked: {_enum_name(feedback.block_reason)}")
        candidates = list(response.candidates or [])
        if not candidates:
            raise ProviderError(self.name, "empty_reply", "the reply has no candidate")
        finish = _enum_name(candidates[0].finish_reason)
        if finish in _BLOCKED:
            raise SafetyBlockError(self.name, f"reply withheld: finish reason {finish}")
        text = "".join(p.text for p in candidates[0].content.parts if getattr(p, "text", None))
        usage = response.usage_metadata
        prompt = int(getattr(usage, "prompt_token_count", 0) or 0)
        output = int(getattr(usage, "candidates_token_count", 0) or 0)
        total = int(getattr(usage, "total_token_count", 0) or 0)
        return LLMReply(
            text=text,
            input_tokens=prompt,
            output_tokens=output,
            finish_reason=finish,
            model=self.model,
            thinking_tokens=max(0, total - prompt - output) if total else 0,  # this SDK drops thoughtsTokenCount
        )


def _prepare_session() -> None:
    """google-generativeai's REST transport sends through google-auth's AuthorizedSession (requests):
    its requests go through DeadlineAdapter, so a call's timeout is its whole time, not each socket
    read's; and a request that got HTTP 401 is not sent twice more ("refreshing credentials": an API
    key cannot be refreshed). Private attributes of the pinned 0.8.6 SDK; left as it is where they differ."""
    from google.generativeai import client as sdk_client

    from .http_deadline import DeadlineAdapter

    transport = getattr(sdk_client.get_default_generative_client(), "_transport", None)
    session = getattr(transport, "_session", None)
    if session is None:
        return
    if hasattr(session, "_refresh_status_codes"):
        session._refresh_status_codes = ()
    if hasattr(session, "mount") and not isinstance(session.get_adapter("https://"), DeadlineAdapter):
        session.mount("https://", DeadlineAdapter())
        session.mount("http://", DeadlineAdapter())


@providers.register("gemini.v1")
def _gemini_v1(config: ProviderConfig) -> GeminiProvider:
    return GeminiProvider(config)


@providers.register("gemini-legacy.v1")
def _gemini_legacy_v1(config: ProviderConfig) -> LegacyGeminiProvider:
    return LegacyGeminiProvider(config)
