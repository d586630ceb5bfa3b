"""`fake.v1`: a scripted provider for tests and offline demos of the model-backed engines.

A script is a list of steps, consumed one per call:
  str              the reply text
  dict / list      the reply, as JSON
  FakeReply        text with explicit token counts / finish reason
  Exception        raised (e.g. ProviderError(..., 'rate_limited', retryable=True))
  callable         called with the LLMRequest; returns any of the above
When the script runs out, `responder` answers (default: the smallest value the request's
JSON Schema accepts, so `--provider fake.v1` runs every stage end to end).

Select it by name with a script installed under a model name:
`install_script('my-model', [...])`, then `ProviderConfig(provider='fake.v1', model='my-model')`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .base import LLMReply, LLMRequest, providers
from .config import ProviderConfig

_SCRIPTS: dict[str, list] = {}
_SCRIPTS_LOCK = threading.Lock()


@dataclass(frozen=True)
class FakeReply:
    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str = "STOP"


def install_script(model: str, script: Iterable[Any]) -> None:
    """Make `fake.v1` with this model name play `script` (replaces any earlier one)."""
    with _SCRIPTS_LOCK:
        _SCRIPTS[model] = list(script)


def minimal_instance(schema: dict[str, Any] | None, root: dict[str, Any] | None = None) -> Any:
    """The smallest value a (pydantic-style) JSON Schema accepts: {} / [] / '' / minimum / null, with
    the keys an object requires and the items and characters its `minItems` / `minLength` ask for."""
    if not schema:
        return {}
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal_instance(root.get("$defs", {}).get(name, {}), root)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if any(o.get("type") == "null" for o in options):
            return None
        return minimal_instance(options[0], root)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        wanted = [k for k in properties if k in schema.get("required", []) or _needs_content(properties[k])]
        return {k: minimal_instance(properties[k], root) for k in wanted}
    if kind == "array":
        return [minimal_instance(schema.get("items"), root) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


def _needs_content(schema: dict[str, Any]) -> bool:
    if schema.get("minItems") or schema.get("minLength"):
        return True
    return any(_needs_content(sub) for sub in (schema.get("properties") or {}).values())


class FakeProvider:
    name = "fake.v1"
    default_window = 1_048_576  # it stands in for Gemini (whose window this is) unless a test configures one

    def __init__(
        self,
        script: Iterable[Any] = (),
        *,
        model: str = "scripted",
        responder: Callable[[LLMRequest], Any] | None = None,
    ):
        self.model = model
        self._steps = deque(script)
        self._responder = responder
        self._lock = threading.Lock()
        self.requests: list[LLMRequest] = []

    def generate(self, request: LLMRequest, *, timeout_s: float) -> LLMReply:
        with self._lock:
            self.requests.append(request)
            step = self._steps.popleft() if self._steps else None
        if step is None:
            step = self._responder(request) if self._responder else minimal_instance(request.json_schema)
        while callable(step) and not isinstance(step, (FakeReply, BaseException)):
            step = step(request)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, FakeReply):
            reply = step
        else:
            reply = FakeReply(step if isinstance(step, str) else json.dumps(step))
        tokens_in = reply.input_tokens if reply.input_tokens is not None else max(1, len(request.prompt) // 4)
        tokens_out = reply.output_tokens if reply.output_tokens is not None else max(1, len(reply.text) // 4)
        return LLMReply(
            text=reply.text,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            finish_reason=reply.finish_reason,
            model=self.model,
        )

    @property
    def calls(self) -> int:
        return len(self.requests)


@providers.register("fake.v1")
def _fake_v1(config: ProviderConfig | None = None) -> FakeProvider:
    model = (config.model if config else None) or "scripted"
    with _SCRIPTS_LOCK:
        script = list(_SCRIPTS.get(model, ()))
    return FakeProvider(script, model=model)
