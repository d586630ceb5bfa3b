"""JSON Schema export and validation of structured summaries.

Every summary is checked against the exported JSON Schema (not only pydantic) before it
is stored, so what lands in the store is exactly what the published schema promises.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from aqgr.foundation.errors import SummaryValidationError
from aqgr.schemas.summary import SCHEMA_VERSION, StructuredSummary, SummarySlots

SCHEMA_ID = f"https://aqgr.invalid/schemas/structured-summary/{SCHEMA_VERSION}.json"


@cache
def summary_json_schema(slots_only: bool = False) -> dict[str, Any]:
    """The JSON Schema of a stored summary (or of the slots alone, for LLM output)."""
    model = SummarySlots if slots_only else StructuredSummary
    schema = model.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID.replace(".json", "-slots.json") if slots_only else SCHEMA_ID
    schema["x-schema-version"] = SCHEMA_VERSION
    return schema


@cache
def _validator(slots_only: bool):
    from jsonschema import Draft202012Validator, FormatChecker

    schema = summary_json_schema(slots_only)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def schema_errors(document: dict[str, Any], *, slots_only: bool = False) -> list[str]:
    """Every violation as 'path: message', sorted by path; empty when valid."""
    errors = _validator(slots_only).iter_errors(document)
    found = [f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in errors]
    return sorted(found)


def validate_summary(document: dict[str, Any] | StructuredSummary) -> StructuredSummary:
    """Validate with jsonschema, then parse; raise SummaryValidationError naming every failing path."""
    if isinstance(document, StructuredSummary):
        document = json.loads(document.model_dump_json())
    problems = schema_errors(document)
    if problems:
        raise SummaryValidationError(problems)
    return StructuredSummary.model_validate(document)
