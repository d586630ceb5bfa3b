"""End to end: bm25-fulltext over a tiny AILA-shaped dataset, report directory, protocols."""

from __future__ import annotations

import json
import math

import pytest

from aqgr.eval.datasets import load_dataset
from aqgr.eval.harness import evaluate, evaluate_path
from aqgr.eval.protocols import EvalProtocol, get_protocol, protocols
from aqgr.eval.runs import read_run
from aqgr.eval.systems.registry import systems
from aqgr.foundation.errors import ConfigError, DatasetError, UnknownNameError

# Hand check of the tiny data (tests/eval/aila_tiny.py):
# Q1 "wife died after dowry harassment by her husband": C2 (dowry, harassment, wife,
#   husband) then C3 (husband); only C3 is relevant -> AP 1/2, RR 1/2, Bpref 0 (judged
#   non-relevant C2 above it; R=1), nDCG@10 1/log2(3), returned top 10 = {C2, C3}.
# Q2 "compensation for land acquisition": C1 only, relevant -> every measure 1.
# Q3 has no judgments: run, not scored.
EXPECTED_MEAN = {
    "AP": 0.75,
    "P@10": 0.1,
    "Bpref": 0.5,
    "RR": 0.75,
    "R@100": 1.0,
    "nDCG@10": (1 / math.log2(3) + 1) / 2,
    "SetP": 0.75,
    "SetR": 1.0,
    "SetP@5": 0.75,
    "SetR@5": 1.0,
    "SetP@10": 0.75,
    "SetR@10": 1.0,
}


def test_end_to_end_bm25_fulltext(tiny, tmp_path):
    out = tmp_path / "report"
    report = evaluate_path(
        tiny, ["bm25-fulltext"], "aila-cases", queries="all", out_dir=out, cache_dir=tmp_path / "cache"
    )
    assert report.queries == ["AILA_Q1", "AILA_Q2", "AILA_Q3"]
    assert report.scored == ["AILA_Q1", "AILA_Q2"]
    result = report.systems[0]
    assert [d for d, _ in result.run["AILA_Q1"]] == ["C2", "C3"]
    for name, value in EXPECTED_MEAN.items():
        assert result.results.mean[name] == pytest.approx(value), name

    assert (out / "report.md").is_file()
    md = (out / "report.md").read_text()
    assert "| bm25-fulltext | 0.7500 |" in md and "0.1492" in md and "0.2880" in md
    # chance: each scored query has one relevant judgment among the 5 documents -> AP = H_5 / 5
    h5 = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5
    assert report.chance["AP"] == pytest.approx(h5 / 5) and "SetR" not in report.chance
    assert "| *chance: a random ranking* | 0.4567 |" in md
    results = json.loads((out / "results.json").read_text())
    assert results["systems"]["bm25-fulltext"]["per_query"]["AP"] == {"AILA_Q1": 0.5, "AILA_Q2": 1.0}
    assert results["systems"]["bm25-fulltext"]["mean"]["RR"] == pytest.approx(0.75)
    assert results["chance"]["RR"] == pytest.approx(h5 / 5)
    config = json.loads((out / "config.json").read_text())
    assert config["packages"]["ir-measures"] and config["queries"] == report.queries
    assert config["systems"]["bm25-fulltext"]["k1"] == 1.2
    run = read_run(out / "runs" / "bm25-fulltext.aila-cases.run")
    assert [d for d, _ in run["AILA_Q1"]] == ["C2", "C3"]

    # rerun: the full-text index comes from the cache
    from aqgr.eval.systems.fulltext import BM25FullText

    system = BM25FullText()
    again = evaluate(load_dataset(tiny), [system], "aila-cases", cache_dir=tmp_path / "cache")
    assert system.cache_hit is True
    assert again.table() == {"bm25-fulltext": pytest.approx(result.results.mean)}


def test_exclusion_list_is_honoured(tmp_path):
    from aila_tiny import write_dataset

    root = write_dataset(tmp_path / "aila", citing="query_id\tciting_judgment\nAILA_Q2\tC1\n")
    report = evaluate_path(
        root, ["bm25-fulltext"], "aila-cases", out_dir=tmp_path / "out", cache_dir=tmp_path / "cache"
    )
    result = report.systems[0]
    assert "C1" not in [d for d, _ in result.run["AILA_Q2"]]
    assert result.results.per_query["AP"]["AILA_Q2"] == 0.0
    run = read_run(result.run_file)
    assert "C1" not in [d for d, _ in run.get("AILA_Q2", [])]


class _Cheater:
    """Ranks every document, ignoring restrict/exclude: the harness must drop those."""

    name = "cheater"

    def prepare(self, dataset, *, cache_dir=None, progress=None):
        self.ids = list(dataset.doc_ids)

    def rank(self, query_id, text, *, depth, restrict=None, exclude=None):
        return [(d, 1.0) for d in self.ids]  # all tied: order is ours (C1 first)

    def returned(self, query_id):
        return ["C1", "C3"]


def test_harness_enforces_pool_and_exclusions(tmp_path):
    from aila_tiny import write_dataset

    root = write_dataset(tmp_path / "aila", citing="AILA_Q1\tC3\n")
    ds = load_dataset(root)
    pool = EvalProtocol(
        "pool", "cases", "test pool", queries=("AILA_Q1", "AILA_Q2"), pool=frozenset({"C1", "C3", "C2"})
    )
    report = evaluate(ds, [_Cheater()], pool)
    result = report.systems[0]
    assert [d for d, _ in result.run["AILA_Q1"]] == ["C1", "C2"]  # C3 excluded, C4/C5 outside the pool
    assert result.returned["AILA_Q1"] == ["C1"]
    assert result.dropped == 3 + 2
    assert any("dropped" in w for w in report.warnings)
    # AILA_Q1's only relevant document (C3) is excluded -> 0; AILA_Q2: C1 at rank 1 -> 1
    assert result.results.per_query["AP"] == {"AILA_Q1": 0.0, "AILA_Q2": 1.0}
    assert result.results.per_query["SetP"] == {"AILA_Q1": 0.0, "AILA_Q2": 0.5}
    # chance under the same rules: AILA_Q1 has no relevant candidate left, AILA_Q2 one in the pool's 3
    assert report.chance["AP"] == pytest.approx((0 + (1 + 1 / 2 + 1 / 3) / 3) / 2)


def test_study_subset_protocol_reads_its_data_file():
    study = get_protocol("study-subset")
    assert len(study.queries) == 14 and "AILA_Q46" not in study.queries
    assert len(study.pool) == 50 and "C2797" in study.pool
    assert set(protocols.names()) >= {"aila-cases", "aila-statutes", "study-subset"}


def test_study_subset_restricts_relevance_to_the_pool(tiny):
    ds = load_dataset(tiny)
    study = get_protocol("study-subset")
    assert study.qrels(ds)["AILA_Q1"] == {"C1": 0}  # C2, C3 are not in the pool
    assert study.restrict(ds) == frozenset({"C1"})
    report = evaluate(ds, ["bm25-fulltext"], study)
    assert report.queries == ["AILA_Q1", "AILA_Q2", "AILA_Q3"]  # the study's queries present here
    assert report.scored == ["AILA_Q1", "AILA_Q2"]
    assert any("11 of protocol study-subset's queries not in the dataset" in w for w in report.warnings)
    assert any("1 of 3 selected queries have no relevance judgments" in w for w in report.warnings)
    assert report.systems[0].run["AILA_Q2"] == [] or {d for d, _ in report.systems[0].run["AILA_Q2"]} <= {"C1"}


def test_statutes_protocol(tiny, tmp_path):
    report = evaluate_path(tiny, ["bm25-fulltext"], "aila-statutes", cache_dir=tmp_path / "c")
    assert report.systems[0].results.mean["AP"] == 1.0
    assert [d for d, _ in report.systems[0].run["AILA_Q1"]] == ["S2"]


def test_errors(tiny):
    ds = load_dataset(tiny)
    with pytest.raises(UnknownNameError, match="known systems: .*bm25-fulltext"):
        evaluate(ds, ["nope"], "aila-cases")
    with pytest.raises(UnknownNameError, match="known protocols"):
        evaluate(ds, ["bm25-fulltext"], "nope")
    with pytest.raises(ConfigError):
        evaluate(ds, [], "aila-cases")
    (tiny / "relevance_judgments_priorcases.dev.txt").unlink()
    (tiny / "qrels.txt").write_text("")
    with pytest.raises(DatasetError, match="no query .* has relevance judgments"):
        evaluate(load_dataset(tiny), ["bm25-fulltext"], "aila-cases")
    assert "bm25-fulltext" in systems.names() and "aqgr" in systems.names()
