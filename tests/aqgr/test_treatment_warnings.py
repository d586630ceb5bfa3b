"""A hit that a later judgment of the archive overruled carries a warning on every door, and
`aqgr citations` lists each citing judgment with its treatment."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aqgr.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, OVERRULING_JUDGMENTS, indexed_archive

runner = CliRunner()
QUESTION = "Whether a dying declaration recorded by a magistrate can form the sole basis of conviction?"


@pytest.fixture
def archive(home, tmp_path):
    return indexed_archive(home, tmp_path / "in", OVERRULING_JUDGMENTS)


def test_an_overruled_hit_is_kept_and_warned_about(archive):
    result = archive.search(DYING_DECLARATION_FACTS, [QUESTION], k=10)
    hits = {h.judgment_id: h for h in result.hits}
    assert "A1" in hits  # never dropped
    [warning] = hits["A1"].treatment_warnings
    assert warning.judgment_id == "A6" and warning.treatment == "overruled"
    assert warning.date == archive.summary("A6").date and warning.parties.startswith("Gopal Singh")
    assert "does not lay down the correct law" in warning.quote
    assert OVERRULING_JUDGMENTS["A6"][warning.start:warning.end] == warning.quote
    assert all(not h.treatment_warnings for i, h in hits.items() if i != "A1")  # A2 was only distinguished


def test_the_cli_prints_the_warning_and_the_json_carries_it(archive):
    home = str(archive.home)
    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "-q", QUESTION, "--home", home])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.split())  # rich wraps long lines
    assert "WARNING: overruled by Gopal Singh" in shown and "[A6]" in shown
    payload = json.loads(runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "-q", QUESTION, "--home", home, "--json"]).stdout)
    [hit] = [h for h in payload["hits"] if h["judgment_id"] == "A1"]
    assert hit["treatment_warnings"][0]["judgment_id"] == "A6" and hit["treatment_warnings"][0]["treatment"] == "overruled"


def test_citations_list_each_citing_judgment_with_its_treatment(archive):
    home = str(archive.home)
    result = runner.invoke(app, ["citations", "A1", "--home", home])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.split())  # rich wraps long lines
    assert "[A6]" in shown and "(overruled)" in shown and "does not lay down the correct law" in shown
    listed = json.loads(runner.invoke(app, ["citations", "A6", "--home", home, "--json"]).stdout)
    treatments = {c["judgment_id"]: c["treatment"]["label"] for c in listed["cites"]}
    assert treatments == {"A1": "overruled", "A2": "distinguished"}


def test_the_http_api_serialises_the_warning(archive):
    from aqgr.server import create_app
    from tests.server.conftest import TestClient

    with TestClient(create_app(archive=archive)) as client:
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS, "questions": [QUESTION]})
        assert response.status_code == 200, response.text
        [hit] = [h for h in response.json()["hits"] if h["judgment_id"] == "A1"]
        assert hit["treatment_warnings"][0]["treatment"] == "overruled"
