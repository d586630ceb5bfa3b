"""Opt-in (--run-slow): expected scores on the real AILA data, and trec_eval cross-check.

The summary-based systems summarise and index the corpus once into the eval cache
($AQGR_EVAL_CACHE, else the user's aqgr eval cache), so only the first run is slow
(minutes: summaries and MiniLM embeddings); later runs cost only the retrieval.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import pytrec_eval

from aqgr.eval.harness import evaluate_path
from aqgr.eval.protocols import data_file

SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
EXPECTED = data_file("expected_scores.json")


def _cache_dir(system: str, tmp_path: Path) -> Path:
    from aqgr.eval.systems.pipeline import PIPELINE_CONFIGS
    from aqgr.eval.systems.registry import default_cache_dir

    if system not in PIPELINE_CONFIGS:
        return tmp_path / "cache"  # bm25-fulltext: cheap to rebuild
    return Path(os.environ["AQGR_EVAL_CACHE"]) if os.environ.get("AQGR_EVAL_CACHE") else default_cache_dir()


@pytest.mark.slow
@pytest.mark.parametrize("case", EXPECTED["runs"], ids=lambda c: f"{c['system']}-{c['protocol']}-{c['dataset']}")
def test_expected_scores(case, tmp_path):
    data = SHARED / case["dataset"]
    if not data.is_dir():
        pytest.skip(f"{data} not present")
    report = evaluate_path(
        data,
        [case["system"]],
        case["protocol"],
        out_dir=tmp_path / "out",
        cache_dir=_cache_dir(case["system"], tmp_path),
    )
    assert len(report.scored) == case["n_scored"]
    mean = report.systems[0].results.mean
    for name, value in case["mean"].items():
        assert mean[name] == pytest.approx(value, abs=EXPECTED["tolerance"]), name

    # independent check: pytrec_eval over the written run file and the qrels file
    run: dict[str, dict[str, float]] = {}
    for line in report.systems[0].run_file.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    qrels = report.protocol.qrels(report.dataset)
    qrels = {q: qrels[q] for q in report.scored}
    per_q = pytrec_eval.RelevanceEvaluator(qrels, {"map", "recip_rank"}).evaluate(run)
    trec_map = sum(per_q.get(q, {}).get("map", 0.0) for q in report.scored) / len(report.scored)
    assert mean["AP"] == pytest.approx(trec_map, abs=1e-6)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["systems"][case["system"]]["mean"]["AP"] == pytest.approx(mean["AP"])
