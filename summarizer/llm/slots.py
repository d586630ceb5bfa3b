"""Slot groups for chain-of-thought summaries, partial schemas, and mechanical repair of slot JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from schemas.summary import SummarySlots
from schemas.validation import schema_errors, summary_json_schema


@dataclass(frozen=True)
class SlotGroup:
    name: str
    slots: tuple[str, ...]
    questions: tuple[str, ...]  # the simple questions the model answers for this group
    query: str  # what the chunk index is searched with ('' = first and last chunk)


# Header slots sit on the first page; bench and date often at the end (SPEC.md): the header
# group reads the first and the last chunk. The other groups read the k best chunks.
SLOT_GROUPS: tuple[SlotGroup, ...] = (
    SlotGroup(
        "header",
        ("court", "case_number", "judgment_kind", "parties", "date", "bench"),
        (
            "Which court delivered the judgment?",
            "What is the case number, and what kind of judgment is it (appeal, petition, reference, ...)?",
            "Who are the appellants or petitioners, and who are the respondents?",
            "On what date was the judgment delivered, and which judges were on the bench?",
        ),
        "",
    ),
    SlotGroup(
        "facts_arguments",
        ("facts", "arguments"),
        ("What are the facts of the case?", "What did the appellants argue?", "What did the respondents argue?"),
        "facts of the case, what happened; learned counsel for the appellant contended; counsel for the respondent submitted",
    ),
    SlotGroup(
        "issues_reasoning",
        ("issues", "reasoning", "disposed_in_favour_of", "final_judgment"),
        (
            "Which questions of law did the court decide?",
            "What was the court's reasoning on each of them?",
            "In whose favour was the case disposed of?",
            "What was the final order?",
        ),
        "the question for consideration is whether; we hold that; in our opinion; the appeal is allowed or dismissed; ordered",
    ),
    SlotGroup(
        "statutes_precedents",
        ("statutes", "precedents"),
        (
            "Which statutes and constitutional provisions does the judgment refer to; what does each lay down, and how is it applied?",
            "Which earlier judgments does it refer to; what principle does each state, and how is it applied?",
        ),
        "Section, Article, Act, Code, Constitution; relied upon the decision in; v.; AIR; SCC; held in",
    ),
    SlotGroup(
        "principles_subjects",
        ("new_principles", "subjects"),
        ("Which legal principles does this judgment lay down, and how are they applied?", "Which important subjects does it discuss (keywords)?"),
        "it is well settled; the principle is; we lay down; law declared",
    ),
)

_FIELDS = SummarySlots.model_fields
_STRING_LISTS = {"bench", "issues", "subjects"}
_TEXTS = {"facts", "reasoning", "final_judgment"}
_NULLABLE = {"court", "case_number", "judgment_kind", "date", "disposed_in_favour_of"}
_SIDES = {"parties", "arguments"}
_REFS = {"statutes": "name", "precedents": "name", "new_principles": "principle"}


def group_schema(slots: tuple[str, ...]) -> dict[str, Any]:
    """The slots JSON Schema restricted to `slots` (all required), for structured output."""
    full = summary_json_schema(slots_only=True)
    return {
        "type": "object",
        "properties": {name: full["properties"][name] for name in slots},
        "required": list(slots),
        "additionalProperties": False,
        "$defs": full.get("$defs", {}),
    }


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value if v is not None)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def _strings(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [_text(v) if not isinstance(v, str) else v for v in value if v is not None and _text(v).strip()]
    return value


def repair_slots(value: Any, keep: tuple[str, ...]) -> Any:
    """Mechanical repairs only: unknown keys dropped, null lists -> [], a lone string -> [string],
    a list where text is due -> joined lines, a reference given as a string -> {name: string}.
    Anything else is left for the schema check (and the model) to deal with."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key in keep:
        if key not in value:
            continue
        item = value[key]
        if key in _STRING_LISTS:
            item = _strings(item)
        elif key in _TEXTS:
            item = _text(item) if not isinstance(item, str) else item
        elif key in _NULLABLE and isinstance(item, list):
            item = "; ".join(_text(v) for v in item) or None
        elif key in _SIDES:
            if item is None:
                item = {}
            if isinstance(item, dict):
                item = {side: _strings(v) for side, v in item.items()}
        elif key in _REFS:
            if item is None:
                item = []
            if isinstance(item, list):
                item = [{_REFS[key]: v} if isinstance(v, str) else v for v in item if v]
        out[key] = item
    return out


def check_slots(value: Any, keep: tuple[str, ...]) -> tuple[dict[str, Any] | None, list[str]]:
    """(repaired slots dict, []) when valid against the slots schema, else (None, problems)."""
    if not isinstance(value, dict):
        return None, [f"<root>: expected a JSON object with keys {', '.join(keep)}, got {type(value).__name__}"]
    repaired = repair_slots(value, keep)
    problems = schema_errors(repaired, slots_only=True)
    missing = [k for k in keep if k not in value]
    if len(missing) == len(keep):
        problems.append(f"<root>: none of the expected keys ({', '.join(keep)}) is present")
    return (None, problems) if problems else (repaired, [])
