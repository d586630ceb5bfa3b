"""Measures against values computed by hand on a tiny qrels/run pair."""

from __future__ import annotations

import math

import ir_measures
import pytest

from aqgr.eval.measures import DEFAULT_MEASURES, SetMeasure, compute, parse_measure
from aqgr.foundation.errors import ConfigError

# q1: relevant d1, d3, d5; judged non-relevant d2, d4.  Ranking: d2 N, d1 R, d6 (unjudged), d3 R, d4 N.
# q2: judged (e1 relevant) but nothing returned -> 0 everywhere (trec_eval -c).
# q3: returned but not judged -> not scored.
# q4: judged, no relevant document -> 0 everywhere.
QRELS = {
    "q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0, "d5": 1},
    "q2": {"e1": 1},
    "q4": {"f1": 0},
}
RUN = {
    "q1": [("d2", 5.0), ("d1", 4.0), ("d6", 3.0), ("d3", 2.0), ("d4", 1.0)],
    "q3": [("x", 1.0)],
    "q4": [("f1", 1.0)],
}
RETURNED = {"q1": ["d1", "d6"], "q4": ["f1"]}

# Hand-computed for q1:
Q1 = {
    "AP": (1 / 2 + 2 / 4) / 3,  # relevant at ranks 2 and 4, three relevant
    "P@10": 2 / 10,
    "RR": 1 / 2,
    "R@100": 2 / 3,
    # bpref: R=3, N=2 judged non-relevant; each retrieved relevant doc has 1 judged
    # non-relevant above it: (1 - 1/min(3,2)) * 2 / 3
    "Bpref": (2 * (1 - 1 / 2)) / 3,
    "nDCG@10": (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / math.log2(4)),
    "SetP": 1 / 2,  # own set {d1, d6}: one relevant
    "SetR": 1 / 3,
    "SetP@5": 2 / 5,
    "SetR@5": 2 / 3,
    "SetP@10": 2 / 5,  # only five returned: set precision divides by 5, P@10 by 10
    "SetR@10": 2 / 3,
}


def test_golden_values_per_query_and_mean():
    res = compute(QRELS, RUN, DEFAULT_MEASURES, returned=RETURNED)
    assert res.queries == ("q1", "q2", "q4")
    for name, value in Q1.items():
        assert res.per_query[name]["q1"] == pytest.approx(value, abs=1e-9), name
        assert res.per_query[name]["q2"] == 0.0, name
        assert res.per_query[name]["q4"] == 0.0, name
        assert res.mean[name] == pytest.approx(value / 3, abs=1e-9), name
    assert "q3" not in res.per_query["AP"]


def test_default_returned_set_is_top_ten():
    res = compute(QRELS, RUN, ["SetP", "SetR"], queries=["q1"])
    assert res.per_query["SetP"]["q1"] == pytest.approx(2 / 5)
    assert res.per_query["SetR"]["q1"] == pytest.approx(2 / 3)


def test_query_selection_limits_scoring():
    res = compute(QRELS, RUN, ["AP"], queries=["q1", "q3"])
    assert res.queries == ("q1",)
    assert res.mean["AP"] == pytest.approx(1 / 3)


def test_ties_are_scored_in_our_order():
    qrels = {"q": {"b": 1, "a": 0, "c": 0}}
    run = {"q": [("b", 1.0), ("a", 1.0), ("c", 1.0)]}
    assert compute(qrels, run, ["RR"]).mean["RR"] == 1.0
    # what a raw tie would give: the evaluator re-sorts by document id
    raw = ir_measures.calc_aggregate([ir_measures.RR], qrels, {"q": dict(run["q"])})
    assert raw[ir_measures.RR] == 0.5


def test_parse_measure_names():
    assert parse_measure("SetP@5") == SetMeasure("P", 5)
    assert parse_measure("SetR") == SetMeasure("R", None)
    assert str(parse_measure("nDCG@10")) == "nDCG@10"
    assert str(parse_measure("R@100")) == "R@100"
    with pytest.raises(ConfigError, match="accepted"):
        parse_measure("MAPP")
    with pytest.raises(ConfigError):
        compute(QRELS, RUN, ["AP", "AP"])
