"""A hit that a later judgment of the archive overruled carries a warning on every door, and
`aqgr citations` lists each citing judgment with its treatment; with `overruled_below` an overruled
hit ranks just below its overruling judgment."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aqgr.interfaces.cli import app
from tests.aqgr.helpers import DYING_DECLARATION_FACTS, JUDGMENTS, OVERRULING_JUDGMENTS, indexed_archive

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
    assert OVERRULING_JUDGMENTS["A6"][warning.start : warning.end] == warning.quote
    assert all(not h.treatment_warnings for i, h in hits.items() if i != "A1")  # A2 was only distinguished


def test_the_cli_prints_the_warning_and_the_json_carries_it(archive):
    home = str(archive.home)
    result = runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "-q", QUESTION, "--home", home])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.split())  # rich wraps long lines
    assert "WARNING: overruled by Gopal Singh" in shown and "[A6]" in shown
    payload = json.loads(
        runner.invoke(app, ["search", DYING_DECLARATION_FACTS, "-q", QUESTION, "--home", home, "--json"]).stdout
    )
    [hit] = [h for h in payload["hits"] if h["judgment_id"] == "A1"]
    assert (
        hit["treatment_warnings"][0]["judgment_id"] == "A6" and hit["treatment_warnings"][0]["treatment"] == "overruled"
    )


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
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    with TestClient(create_app(archive=archive)) as client:
        response = client.post("/api/search", json={"facts": DYING_DECLARATION_FACTS, "questions": [QUESTION]})
        assert response.status_code == 200, response.text
        [hit] = [h for h in response.json()["hits"] if h["judgment_id"] == "A1"]
        assert hit["treatment_warnings"][0]["treatment"] == "overruled"


# -- overruled_below: an overruled hit ranks just below its overruling judgment (off by default) --------

# B1, a later judgment on A3's question and facts, overrules A3; without the option A3 ranks first.
BELOW_JUDGMENTS = {key: JUDGMENTS[key] for key in ("A1", "A2", "A3")} | {
    "B1": """Suresh Yadav v State of Bihar
Supreme Court of India

14 February 2016
Criminal Appeal No. 640 of 2015
The Judgment was delivered by : A. Sen, J.
1. The deceased was stabbed in a quarrel at a bus stand. Before he died in hospital he told the attending doctor that the appellant stabbed him, and the doctor recorded the statement; no magistrate was called.
2. The question that arises for consideration is whether a dying declaration recorded by a doctor, without a magistrate, can be the sole basis of conviction without corroboration.
3. We hold that Mohan Lal v. State of Rajasthan does not lay down the correct law, and to that extent it is overruled: a dying declaration not recorded by a magistrate needs corroboration.
4. The appeal is allowed.
"""
}
STABBING_FACTS = (
    "A young man was stabbed in a quarrel outside a cinema. Before he died in hospital he told the attending doctor "
    "who stabbed him, and the doctor wrote the statement down. No magistrate was called and there is no other witness; "
    "the prosecution relies on this dying declaration alone to convict the accused of murder."
)
DOCTOR_QUESTION = (
    "Whether a dying declaration recorded by a doctor can be the sole basis of conviction without corroboration?"
)


@pytest.fixture(scope="module")
def below_archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("overruled-below")
    return indexed_archive(root / "home", root / "in", BELOW_JUDGMENTS)


def _order(hits) -> list[str]:
    return [h["judgment_id"] if isinstance(h, dict) else h.judgment_id for h in hits]


def _on(archive):
    return archive.settings.search.model_copy(update={"overruled_below": True})


def test_overruled_below_is_off_by_default_and_moves_the_hit_just_below_its_overruler(below_archive):
    plain = below_archive.search(STABBING_FACTS, [DOCTOR_QUESTION])
    assert not below_archive.settings.search.overruled_below
    assert _order(plain.hits)[:2] == ["A3", "B1"]  # score order: the overruled judgment first
    moved = below_archive.search(STABBING_FACTS, [DOCTOR_QUESTION], options=_on(below_archive))
    assert _order(moved.hits)[:2] == ["B1", "A3"] and sorted(_order(moved.hits)) == sorted(
        _order(plain.hits)
    )  # none dropped
    assert [h.rank for h in moved.hits] == list(range(1, len(moved.hits) + 1))
    [warning] = moved.hits[1].treatment_warnings  # the warning stays
    assert warning.judgment_id == "B1" and warning.treatment == "overruled"
    assert "[A3] ranked 2 (not 1): below [B1], which overruled it (overruled_below)" in moved.notes


def test_a_hit_whose_overruler_is_not_among_the_results_keeps_its_place(below_archive):
    result = below_archive.search(STABBING_FACTS, [DOCTOR_QUESTION], exclude={"B1"}, options=_on(below_archive))
    assert _order(result.hits)[0] == "A3" and result.hits[0].treatment_warnings
    assert not any("overruled_below" in note for note in result.notes)


def test_the_cli_flag_http_option_and_mcp_argument_share_the_name(below_archive):
    import anyio

    from aqgr.interfaces.mcp_server import build_server
    from aqgr.interfaces.server import create_app
    from tests.server.conftest import TestClient

    home = str(below_archive.home)
    args = ["search", STABBING_FACTS, "-q", DOCTOR_QUESTION, "--home", home, "--json"]
    assert _order(json.loads(runner.invoke(app, args).stdout)["hits"])[:2] == ["A3", "B1"]
    result = runner.invoke(app, [*args, "--overruled-below"])
    assert result.exit_code == 0, result.output
    assert _order(json.loads(result.stdout)["hits"])[:2] == ["B1", "A3"]
    with TestClient(create_app(archive=below_archive)) as client:
        body = {"facts": STABBING_FACTS, "questions": [DOCTOR_QUESTION]}
        assert _order(client.post("/api/search", json=body).json()["hits"])[:2] == ["A3", "B1"]
        response = client.post("/api/search", json={**body, "options": {"overruled_below": True}})
        assert response.status_code == 200, response.text
        assert _order(response.json()["hits"])[:2] == ["B1", "A3"]
    server = build_server(archive=below_archive)
    answer = anyio.run(server.call_tool, "search_precedents", {**body, "overruled_below": True})
    structured = answer[1] if isinstance(answer, tuple) else answer.structured_content
    assert _order(structured["hits"])[:2] == ["B1", "A3"]


def _hit(judgment_id: str, rank: int, overruled_by: tuple[str, ...] = ()):
    from aqgr.schemas.results import Hit, TreatmentWarning

    warnings = [
        TreatmentWarning(judgment_id=j, parties=j, treatment="overruled", quote="q", start=0, end=1)
        for j in overruled_by
    ]
    return Hit(
        rank=rank,
        judgment_id=judgment_id,
        parties=judgment_id,
        score=8,
        legal_issue="i",
        reason="r",
        retrieval_score=1.0,
        treatment_warnings=warnings,
    )


@pytest.mark.parametrize(
    "given, expected",
    [
        ([("A", ("B",)), ("B", ()), ("X", ())], ["B", "A", "X"]),
        ([("X", ()), ("A", ("B",)), ("Y", ()), ("B", ()), ("Z", ())], ["X", "Y", "B", "A", "Z"]),
        ([("A", ("B",)), ("B", ("C",)), ("C", ())], ["C", "B", "A"]),  # a chain
        ([("A", ("B", "C")), ("B", ()), ("C", ())], ["B", "C", "A"]),  # below the last of its overrulers
        ([("A", ("B",)), ("B", ("A",)), ("X", ())], ["A", "B", "X"]),  # a cycle moves nothing
        ([("A", ("Q",)), ("B", ())], ["A", "B"]),  # the overruler is not among the hits
        ([("A", ("A",))], ["A"]),
        ([], []),
    ],
)
def test_overruled_below_orders_hits(given, expected):
    from aqgr.pipeline.search import overruled_below

    hits = [_hit(j, rank, by) for rank, (j, by) in enumerate(given, 1)]
    ordered, _ = overruled_below(hits)
    assert _order(ordered) == expected and [h.rank for h in ordered] == list(range(1, len(expected) + 1))
