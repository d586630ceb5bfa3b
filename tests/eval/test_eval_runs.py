"""TREC run files: our order survives ties, on write and on read by trec_eval tools."""

from __future__ import annotations

import ir_measures
import pytrec_eval

from aqgr.eval.runs import read_run, strict_scores, write_run


def test_strict_scores_keep_order_and_decrease():
    ranking = [("z", 2.0), ("a", 2.0), ("m", 2.0), ("b", 1.999999999), ("c", 1.0), ("d", 1.0)]
    out = strict_scores(ranking)
    assert [d for d, _ in out] == ["z", "a", "m", "b", "c", "d"]
    scores = [q for _, q in out]
    assert all(x > y for x, y in zip(scores, scores[1:]))


def test_written_run_is_strictly_decreasing_and_read_back_in_our_order(tmp_path):
    run = {"q1": [("C9", 3.0), ("C1", 3.0), ("C5", 3.0), ("C2", 0.5)], "q2": [("C3", 0.0), ("C3", 0.0), ("C7", -1.0)]}
    path = write_run(tmp_path / "x.run", run, "sys")
    lines = path.read_text().splitlines()
    assert lines[0].split() == ["q1", "Q0", "C9", "1", "3.0", "sys"]
    back = read_run(path)
    assert [d for d, _ in back["q1"]] == ["C9", "C1", "C5", "C2"]
    assert [d for d, _ in back["q2"]] == ["C3", "C7"]  # repeat dropped
    for ranking in back.values():
        assert all(a[1] > b[1] for a, b in zip(ranking, ranking[1:]))


def test_trec_eval_tools_see_our_order(tmp_path):
    # relevant C9 first in our order; a docno tie-break would put it elsewhere
    path = write_run(tmp_path / "t.run", {"q": [("C5", 1.0), ("C9", 1.0), ("C1", 1.0)]}, "sys")
    qrels = {"q": {"C5": 1, "C9": 0, "C1": 0}}
    run = {}
    for sd in ir_measures.read_trec_run(str(path)):
        run.setdefault(sd.query_id, {})[sd.doc_id] = sd.score
    res = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    assert res["q"]["recip_rank"] == 1.0
    assert ir_measures.calc_aggregate([ir_measures.RR], qrels, run)[ir_measures.RR] == 1.0


def test_depth_cut(tmp_path):
    run = {"q": [(f"D{i}", float(-i)) for i in range(1500)]}
    back = read_run(write_run(tmp_path / "d.run", run, "s"))
    assert len(back["q"]) == 1000
    assert back["q"][0][0] == "D0" and back["q"][-1][0] == "D999"


def test_large_tied_scores_stay_distinct_in_single_precision():
    import numpy as np

    out = strict_scores([("a", 989.5604), ("b", 989.5604), ("c", 989.56039)])
    as64 = [float(s) for _, s in out]
    as32 = [np.float32(s) for _, s in out]
    assert all(x > y for x, y in zip(as64, as64[1:]))
    assert all(x > y for x, y in zip(as32, as32[1:]))
