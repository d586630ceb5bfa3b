"""JSON replies: parse (with light repair), check, and re-ask with the problems, a bounded number of times.

`ask_json` never returns an invalid value: it returns what `check` accepted, or raises
`InvalidModelOutputError` after `max_attempts` replies. Repairs are mechanical only
(code fences, prose around the JSON, trailing commas, raw control characters in strings); anything else goes back to the
model with the list of problems.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from aqgr.foundation.errors import InvalidModelOutputError

from .base import LLMRequest

if TYPE_CHECKING:
    from .client import LLMClient

T = TypeVar("T")

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_MAX_ECHO = 4000  # characters of a rejected reply shown back to the model

REASK = """

Your previous reply was rejected.
Previous reply:
<<<
{reply}
>>>
Problems:
{problems}
Answer the same request again with only the corrected JSON: no prose, no code fences."""


class JSONParseError(ValueError):
    pass


def parse_json(text: str) -> tuple[Any, bool]:
    """(value, repaired): the JSON in `text`; `repaired` when fences, surrounding prose or
    trailing commas had to be removed. Raises JSONParseError with the decoder's message."""
    raw = (text or "").strip()
    try:
        return json.loads(raw), False
    except ValueError as exc:
        first_error = exc
    body = _FENCE.sub("", raw).strip()
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(body.rfind("}"), body.rfind("]"))
        if end > start:
            body = body[start : end + 1]
    for candidate in (body, _TRAILING_COMMA.sub(r"\1", body)):
        try:  # strict=False: raw control characters (a newline, a tab) inside strings, which llama.cpp's JSON grammar lets through
            return json.loads(candidate, strict=False), True
        except ValueError:
            continue
    raise JSONParseError(f"not valid JSON ({first_error})")


@dataclass(frozen=True)
class JsonAnswer(Generic[T]):
    value: T
    calls: int  # replies read (1 + re-asks)
    input_tokens: int
    output_tokens: int
    repaired: bool  # a mechanical repair was needed
    reasked: int  # re-asks with the problems


def ask_json(
    client: "LLMClient",
    request: LLMRequest,
    check: Callable[[Any], tuple[T | None, list[str]]],
    *,
    max_attempts: int = 3,
) -> JsonAnswer[T]:
    """Ask, parse, `check` (-> (value, problems)); re-ask with the problems until valid or out of attempts.

    `client` is an LLMClient (ProviderError and SafetyBlockError propagate, a truncated reply as
    ProviderError 'truncated': re-asking with the same budget would be cut again). Only the reply
    that passed the check is cached, so a rerun asks again where the model failed."""
    asked = request
    tokens_in = tokens_out = 0
    repaired = False
    problems: list[str] = []
    for attempt in range(1, max(1, max_attempts) + 1):
        reply = client.complete(asked, store=False)
        tokens_in += reply.input_tokens
        tokens_out += reply.output_tokens + reply.thinking_tokens
        try:
            parsed, fixed = parse_json(reply.text)
        except JSONParseError as exc:
            problems = [str(exc)]
        else:
            value, problems = check(parsed)
            if not problems:
                client.remember(asked, reply)
                return JsonAnswer(value, attempt, tokens_in, tokens_out, repaired or fixed, attempt - 1)
            repaired = repaired or fixed
        echo = reply.text if len(reply.text) <= _MAX_ECHO else reply.text[:_MAX_ECHO] + " ..."
        listed = "\n".join(f"- {p}" for p in problems[:20])
        asked = replace(request, prompt=request.prompt + REASK.format(reply=echo, problems=listed))
    raise InvalidModelOutputError(problems, max(1, max_attempts))


def schema_problems(schema: dict[str, Any], value: Any) -> list[str]:
    """Every JSON Schema violation of `value` as 'path: message', sorted; empty when valid."""
    from jsonschema import Draft202012Validator

    errors = Draft202012Validator(schema).iter_errors(value)
    return sorted(f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in errors)
