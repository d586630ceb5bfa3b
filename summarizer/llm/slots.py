"""Slot groups for chain-of-thought summaries, partial schemas, and mechanical repair of slot JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aqgr.schemas.summary import REQUIRED_SLOTS, SummarySlots, missing_required
from aqgr.schemas.validation import schema_errors, summary_json_schema


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
        (
            "Which legal principles does this judgment lay down, and how are they applied?",
            "Which important subjects does it discuss (keywords)?",
        ),
        "it is well settled; the principle is; we lay down; law declared",
    ),
)

_FIELDS = SummarySlots.model_fields
_STRING_LISTS = {"bench", "issues", "subjects"}
_TEXTS = {"facts", "reasoning", "final_judgment"}
_NULLABLE = {"court", "case_number", "judgment_kind", "date", "disposed_in_favour_of"}
_SIDES = {"parties", "arguments"}
_REFS = {"statutes": "name", "precedents": "name", "new_principles": "principle"}


# How many items a reply's list may hold (a small model repeats list items until its budget runs
# out: "Pw2", "Pw20", "Pw21", ...); parties and arguments per side. Room for the usual judgment;
# a summary's lists are its most important items, not an index of the judgment.
LIST_BOUNDS = {
    "bench": 9,
    "issues": 6,
    "subjects": 10,
    "statutes": 10,
    "precedents": 10,
    "new_principles": 5,
    "parties": 5,
    "arguments": 5,
}
# The fewest characters one list item may have, whatever the budget: a name cut short is wrong.
ITEM_FLOORS = {
    "bench": 30,
    "parties": 80,
    "subjects": 40,
    "issues": 120,
    "arguments": 80,
    "statutes": 160,
    "precedents": 160,
    "new_principles": 160,
}
# The share of a reply's characters each slot may take (facts and reasoning carry the most).
SLOT_SHARES = {
    "court": 1,
    "case_number": 1,
    "judgment_kind": 0.5,
    "parties": 2,
    "date": 0.5,
    "bench": 2,
    "facts": 8,
    "arguments": 5,
    "issues": 3,
    "reasoning": 8,
    "disposed_in_favour_of": 0.5,
    "final_judgment": 2,
    "statutes": 4,
    "precedents": 4,
    "new_principles": 3,
    "subjects": 1.5,
}
CHARS_PER_OUTPUT_TOKEN = (
    2.5  # JSON replies: keys, quotes, escapes and repeated names make fewer characters a token than prose
)
_KEY_CHARS, _ITEM_CHARS, _MIN_CHARS = 16, 8, 12
_REF_SHARES = {"name": 0.4, "principle": 0.35, "application": 0.25}


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with every local $ref replaced by its definition, and pydantic's titles and defaults dropped
    (the schema goes into every prompt: each token there is one fewer for the judgment)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k not in ("title", "$defs", "default")}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _bound(node: dict[str, Any], chars: int, items: int, floor: int = _MIN_CHARS) -> dict[str, Any]:
    """`node` (an inlined slot schema) bounded to about `chars` characters: a list holds at most
    `items` items, fewer when the characters do not allow that many of at least `floor` each."""
    if "anyOf" in node:  # a nullable string
        return {
            **node,
            "anyOf": [
                _bound(branch, chars, items) if branch.get("type") != "null" else branch for branch in node["anyOf"]
            ],
        }
    kind = node.get("type")
    if kind == "string":
        return {**node, "maxLength": max(_MIN_CHARS, chars)}
    if kind == "array":
        items = max(1, min(items, chars // (floor + _ITEM_CHARS)))
        per_item = max(floor, chars // items - _ITEM_CHARS)
        return {**node, "maxItems": items, "items": _bound(node["items"], per_item, 1)}
    if kind == "object":
        props = node["properties"]
        shares = {name: _REF_SHARES.get(name, 1 / len(props)) for name in props}
        total = sum(shares.values())
        return {
            **node,
            "properties": {
                name: _bound(sub, int(chars * shares[name] / total) - _KEY_CHARS, items) for name, sub in props.items()
            },
        }
    return node


def min_reply_tokens(slots: tuple[str, ...]) -> int:
    """Reply tokens the smallest bounded reply for `slots` may still use (one item a list): a reply
    budget below this cannot hold them all, so they are asked for in smaller groups."""
    sides = sum(2 for name in slots if name in ("parties", "arguments"))
    chars = (
        _KEY_CHARS * len(slots)
        + sum(ITEM_FLOORS.get(name, _MIN_CHARS) + _ITEM_CHARS for name in slots)
        + sum(ITEM_FLOORS[name] + _ITEM_CHARS for name in slots if name in ("parties", "arguments"))
    )
    return int((chars + _KEY_CHARS * sides) / CHARS_PER_OUTPUT_TOKEN) + 1


def _require_content(name: str, node: dict[str, Any]) -> dict[str, Any]:
    """Structured output that cannot leave a required slot empty (a grammar-constrained model fills it)."""
    if name in ("facts", "reasoning", "final_judgment"):
        return {**node, "minLength": 1}
    if name == "parties":
        appellants = node["properties"]["appellants"]
        named = {**appellants, "minItems": 1, "items": {**appellants["items"], "minLength": 1}}
        return {**node, "properties": {**node["properties"], "appellants": named}}
    return node


def reply_schema(slots: tuple[str, ...], output_tokens: int) -> dict[str, Any]:
    """The JSON Schema a model is asked to fill for `slots` (all required) within `output_tokens`:
    lists bounded (LIST_BOUNDS), strings bounded to the slot's share of the budget, required slots
    non-empty. Bounds shape the generation (a grammar enforces them; other servers read them as
    guidance); a reply is validated against the summary schema itself (`check_slots`)."""
    full = summary_json_schema(slots_only=True)
    defs = full.get("$defs", {})
    bounds = {name: LIST_BOUNDS.get(name, 1) for name in slots}
    structure = _KEY_CHARS * len(slots) + _ITEM_CHARS * sum(
        b * (2 if name in ("parties", "arguments") else 1) for name, b in bounds.items()
    )
    chars = max(len(slots) * _MIN_CHARS, int(output_tokens * CHARS_PER_OUTPUT_TOKEN) - structure)
    total = sum(SLOT_SHARES[name] for name in slots)
    properties = {}
    for name in slots:
        share = int(chars * SLOT_SHARES[name] / total)
        node = _inline(full["properties"][name], defs)
        if name in ("parties", "arguments"):  # two sides, each a bounded list of strings
            node = {
                **node,
                "properties": {
                    side: _bound(sub, share // 2, bounds[name], ITEM_FLOORS[name])
                    for side, sub in node["properties"].items()
                },
            }
        else:
            node = _bound(node, share, bounds[name], ITEM_FLOORS.get(name, _MIN_CHARS))
        properties[name] = _require_content(name, node) if name in REQUIRED_SLOTS else node
    return {"type": "object", "properties": properties, "required": list(slots), "additionalProperties": False}


def group_schema(slots: tuple[str, ...]) -> dict[str, Any]:
    """The slots JSON Schema restricted to `slots` (all required), unbounded."""
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
    others = {f"<root>: {name!r} is a required property" for name in REQUIRED_SLOTS if name not in keep}
    problems = [p for p in schema_errors(repaired, slots_only=True) if p not in others]  # a group answers its own slots
    missing = [k for k in keep if k not in value]
    if len(missing) == len(keep):
        problems.append(f"<root>: none of the expected keys ({', '.join(keep)}) is present")
    else:  # required slots asked for here must be present and filled
        problems += [p for p in missing_required(repaired) if p.split(":")[0].split(",")[0] in keep]
    return (None, problems) if problems else (repaired, [])
