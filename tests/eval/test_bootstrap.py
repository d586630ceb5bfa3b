"""The paired cluster bootstrap of a ratio of means."""

from __future__ import annotations

from aqgr.eval.stats.bootstrap import ratio_interval


def test_equal_scores_give_a_ratio_of_one_with_no_width():
    base = {"a": 0.5, "b": 1.0, "c": 0.25}
    assert ratio_interval(base, base) == {"ratio": 1.0, "low": 1.0, "high": 1.0, "replicates": 10_000}
    # A draw of only "c" (1 in 27) has a baseline of 0 and no ratio: it is left out.
    kept = ratio_interval(base | {"c": 0.0}, base | {"c": 0.0})["replicates"]
    assert 9_500 < kept < 10_000


def test_the_interval_holds_the_ratio_and_is_reproducible():
    base = {f"q{i}": 1.0 if i % 3 else 0.5 for i in range(30)}
    scores = {q: v * (0.8 if int(q[1:]) % 2 else 1.1) for q, v in base.items()}
    one = ratio_interval(scores, base)
    assert one == ratio_interval(dict(reversed(list(scores.items()))), base)  # order does not matter
    assert one["low"] < one["ratio"] < one["high"]
    assert round(one["ratio"], 6) == round(sum(scores.values()) / sum(base.values()), 6)
    assert ratio_interval(scores, base, seed=1) != one


def test_queries_of_one_cluster_are_drawn_together():
    # Ten sources, each with five copies of one query: drawn as clusters, the interval is that
    # of ten queries, wider than that of fifty independent ones.
    base, scores, clusters = {}, {}, {}
    for s in range(10):
        for k in range(5):
            q = f"s{s}/{k}"
            base[q], scores[q], clusters[q] = 1.0, (0.5 if s % 2 else 1.0), f"s{s}"
    free = ratio_interval(scores, base)
    drawn = ratio_interval(scores, base, clusters)
    assert drawn["ratio"] == free["ratio"] == 0.75
    assert drawn["high"] - drawn["low"] > 1.5 * (free["high"] - free["low"])


def test_a_baseline_of_zeros_has_no_ratio():
    zeros = {"a": 0.0, "b": 0.0}
    assert ratio_interval({"a": 1.0, "b": 0.0}, zeros) == {"ratio": None, "low": None, "high": None, "replicates": 0}
