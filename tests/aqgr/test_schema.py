import json

import pytest

from aqgr.foundation.errors import SummaryValidationError
from aqgr.schemas.summary import Provenance, StructuredSummary, SummarySlots
from aqgr.schemas.validation import summary_json_schema, validate_summary


def _summary(**slots):
    return StructuredSummary.from_slots(
        "C1", SummarySlots(**slots), Provenance(engine="test.v1", engine_version="1", source_sha256="a" * 64)
    )


def test_schema_lists_every_slot():
    props = summary_json_schema()["properties"]
    for slot in (
        "court",
        "case_number",
        "judgment_kind",
        "parties",
        "date",
        "bench",
        "facts",
        "arguments",
        "issues",
        "reasoning",
        "disposed_in_favour_of",
        "final_judgment",
        "statutes",
        "precedents",
        "new_principles",
        "subjects",
        "judgment_id",
        "provenance",
    ):
        assert slot in props, slot
    assert "provenance" not in summary_json_schema(slots_only=True)["properties"]


def test_valid_summary_round_trips():
    summary = _summary(court="Supreme Court of India", issues=["whether x"])
    document = json.loads(summary.model_dump_json())
    assert validate_summary(document) == summary


def test_invalid_summary_names_every_failing_path():
    document = json.loads(_summary().model_dump_json())
    document["issues"] = "not a list"
    document["statutes"] = [{"name": "", "principle": 3}]
    document["provenance"]["source_sha256"] = "xyz"
    with pytest.raises(SummaryValidationError) as caught:
        validate_summary(document)
    paths = [p.split(":")[0] for p in caught.value.problems]
    assert (
        "issues" in paths
        and "statutes/0/name" in paths
        and "statutes/0/principle" in paths
        and "provenance/source_sha256" in paths
    )


def test_cli_prints_the_schema():
    from typer.testing import CliRunner

    from aqgr.interfaces.cli import app

    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["x-schema-version"]
