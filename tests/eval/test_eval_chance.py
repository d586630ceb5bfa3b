"""The chance level: a random ranking's expected score, exact, beside every report."""

from __future__ import annotations

import random

import pytest

from aqgr.eval.measures import compute
from aqgr.eval.stats.chance import chance, query_chance

MEASURES = ("AP", "P@5", "R@10", "RR", "nDCG@5", "SetP", "SetP@5", "SetR@10")


def test_closed_forms_match_trec_eval_over_random_rankings():
    # 40 candidates, 3 relevant (one of them graded 2) and one relevant judgment that is not a
    # candidate (it counts in R), runs cut at 25: the mean of trec_eval over many shuffles.
    docs = [f"d{i}" for i in range(40)]
    judged = {"d1": 1, "d5": 2, "d9": 1, "elsewhere": 1, "d2": 0}
    relevant = {"d1": 1, "d5": 2, "d9": 1}
    rng = random.Random(7)
    trials = 4000
    qrels, run, returned = {}, {}, {}
    for t in range(trials):
        order = docs[:]
        rng.shuffle(order)
        qrels[f"q{t}"] = judged
        run[f"q{t}"] = [(d, float(25 - i)) for i, d in enumerate(order[:25])]
        returned[f"q{t}"] = order[: rng.randint(1, 12)]  # SetP: a random set of any size
    sampled = compute(qrels, run, MEASURES, returned=returned).mean
    for m in MEASURES:
        exact = query_chance(m, judged, 40, relevant, depth=25)
        assert exact == pytest.approx(sampled[m], abs=0.006), m
    assert query_chance("SetR", judged, 40, relevant, depth=25) is None  # depends on the set's size
    assert query_chance("Bpref", judged, 40, relevant, depth=25) is None
    assert query_chance("P(rel=2)@5", judged, 40, relevant, depth=25) is None


def test_small_cases_by_hand():
    # one relevant among two candidates: rank 1 or 2, AP = RR = (1 + 1/2) / 2
    assert query_chance("AP", {"a": 1}, 2, {"a": 1}, depth=1000) == pytest.approx(0.75)
    assert query_chance("RR", {"a": 1}, 2, {"a": 1}, depth=1000) == pytest.approx(0.75)
    # the run shows one document: only rank 1 counts
    assert query_chance("AP", {"a": 1}, 2, {"a": 1}, depth=1) == pytest.approx(0.5)
    # every candidate relevant: perfect whatever the order
    assert query_chance("AP", {"a": 1, "b": 1}, 2, {"a": 1, "b": 1}, depth=1000) == pytest.approx(1.0)
    # the relevant judgment is not a candidate (excluded, outside the pool): 0
    assert query_chance("AP", {"a": 1}, 5, {}, depth=1000) == 0.0
    assert query_chance("RR", {"a": 1}, 5, {}, depth=1000) == 0.0


def test_chance_counts_pool_and_exclusions_per_query():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "unjudged-here": {}}
    docs = ["a", "b", "c", "d", "e"]
    # q1: pool {a, b, c}, a excluded -> no relevant candidate: 0; q2: c among 3 -> H_3 / 3
    level = chance(
        ["AP", "Bpref"],
        qrels,
        ["q1", "q2", "q9"],
        docs,
        depth=1000,
        restrict=frozenset({"a", "b", "c"}),
        exclude={"q1": frozenset({"a"})},
    )
    assert level == {"AP": pytest.approx((0 + (1 + 1 / 2 + 1 / 3) / 3) / 2)}  # no Bpref entry
