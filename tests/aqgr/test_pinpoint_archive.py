"""Pinpoints on the packaged sample archive: every piece of evidence a search shows stands at its
offsets in the judgment's text, the CLI prints "para N", and `aqgr show` gives each passage's."""

import json
import re

import pytest
from typer.testing import CliRunner

from aqgr import Archive, IndexSpec, Settings
from aqgr.foundation.paths import SAMPLE
from aqgr.interfaces.cli import app
from aqgr.pipeline.pinpoint import where
from tests.aqgr.pinpoint_check import hit_problems, pinpoint_problem

runner = CliRunner()
SCENARIOS = json.loads((SAMPLE / "scenarios.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    home = tmp_path_factory.mktemp("pinpoint-sample")
    archive = Archive(settings=Settings.resolve(home, index=IndexSpec(embedder="hashing.v1")))
    archive.summarize([SAMPLE / "judgments"])
    archive.build_index()
    return archive


def test_every_evidence_of_every_sample_search_stands_at_its_offsets(sample):
    problems, pins = [], []
    for scenario in SCENARIOS:
        for hit in sample.search(scenario["facts"]).hits:
            problems += hit_problems(sample.text(hit.judgment_id), hit)
            pins += hit.evidence
    assert not problems, problems[:5]
    assert pins and all(e.located for e in pins)  # extractive summaries quote the judgment verbatim
    assert all(e.paragraph is not None for e in pins)  # the sample judgments number their paragraphs
    # the extractive engine's sentences are found as copied (whitespace normalised at most); only the
    # explainer's "<statute>: <principle>" evidence is a part of its quote
    assert {e.match for e in pins if e.slot != "statutes"} <= {"exact", "whitespace"}


def test_search_prints_the_paragraph_of_each_explanation_and_evidence(sample):
    result = runner.invoke(app, ["search", SCENARIOS[0]["facts"], "--home", str(sample.home)])
    assert result.exit_code == 0, result.output
    hit = sample.search(SCENARIOS[0]["facts"]).hits[0]
    assert hit.reason_at.paragraph is not None
    expected = f"Why it applies: {hit.reason}  ({where(hit.reason_at)})"
    assert " ".join(expected.split()) in " ".join(result.stdout.split())
    evidence = [line for line in result.stdout.splitlines() if "Evidence:" in line]
    assert evidence and all(re.search(r"para \d+", line) for line in evidence)


def test_search_json_gives_the_spans(sample):
    result = runner.invoke(app, ["search", SCENARIOS[0]["facts"], "--home", str(sample.home), "--json"])
    first = json.loads(result.stdout)["hits"][0]
    text = sample.text(first["judgment_id"])
    e = first["evidence"][0]
    assert e["located"] and " ".join(text[e["start"] : e["end"]].split()) == " ".join(
        e["text"].removesuffix(" ...").split()
    )


def test_show_prints_the_summary_with_each_passage_pinpoint(sample):
    result = runner.invoke(app, ["show", "SC001", "--home", str(sample.home)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("Harbans Lal") and "[SC001]" in out
    summary = sample.summary("SC001")
    assert re.search(r"issues\[0\]  para \d+", out) and re.search(r"reasoning  para \d+", out)
    assert summary.issues[0] in " ".join(out.split())


def test_show_json_pinpoints_hold(sample):
    result = runner.invoke(app, ["show", "SC003", "--home", str(sample.home), "--json"])
    payload = json.loads(result.stdout)
    text = sample.text("SC003")
    assert payload["paragraphs_numbered"] and payload["summary"]["judgment_id"] == "SC003"
    from aqgr.schemas.results import SummaryPinpoints

    shown = SummaryPinpoints.model_validate(payload)
    slots = {p.slot.split("[")[0] for p in shown.passages}
    assert {"facts", "issues", "reasoning", "final_judgment"} <= slots
    assert all(pinpoint_problem(text, p.text, p) is None for p in shown.passages)
    assert sum(p.located for p in shown.passages) == len(shown.passages)


def test_show_text_prints_the_paragraph_numbers_in_the_margin(sample):
    result = runner.invoke(app, ["show", "SC001", "--text", "--home", str(sample.home)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith("| Harbans Lal v State of Punjab") and not lines[0].strip().startswith("1")
    numbered = [line for line in lines if re.match(r"^\s*\d+ \| ", line)]
    assert [int(line.split("|")[0]) for line in numbered] == list(range(1, len(numbered) + 1)) and len(numbered) >= 5
    assert numbered[1].split("| ", 1)[1].startswith("2.")


def test_show_an_unknown_judgment_exits_2(sample):
    result = runner.invoke(app, ["show", "NOPE", "--home", str(sample.home)])
    assert result.exit_code == 2 and "no judgment 'NOPE'" in result.stderr
    result = runner.invoke(app, ["show", "NOPE", "--text", "--home", str(sample.home)])
    assert result.exit_code == 2 and "no judgment 'NOPE'" in result.stderr
