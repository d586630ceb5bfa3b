"""aqgr.eval.stats.findability: whether judgments follow from the query texts (tiny data written here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from aila_tiny import write_dataset

from aqgr.eval.stats.findability import findability

# Each query's relevant case is the one its words describe.
MATCHED = "AILA_Q1 Q0 C2 1\nAILA_Q2 Q0 C1 1\nAILA_Q3 Q0 C5 1\n"
# The same relevant cases handed to the wrong queries.
SHUFFLED = "AILA_Q1 Q0 C1 1\nAILA_Q2 Q0 C5 1\nAILA_Q3 Q0 C2 1\n"


def test_judgments_that_follow_from_the_texts(tmp_path):
    root = write_dataset(tmp_path / "aila", qrels=MATCHED)
    report = findability(root, cache_dir=tmp_path / "cache")
    assert report["judged_queries"] == 3 and report["texts"] == 3
    assert report["own_text_best"] == 3 and report["mean_own_rank_fraction"] == 0.0
    for q, row in report["per_query"].items():
        assert row["own_ap"] == 1.0 and row["best_text"] == q and row["own_rank"] == 1
    assert report["mean_chance_ap"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 5)


def test_judgments_handed_to_the_wrong_queries(tmp_path):
    root = write_dataset(tmp_path / "aila", qrels=SHUFFLED)
    report = findability(root, cache_dir=tmp_path / "cache")
    assert report["own_text_best"] == 0
    assert report["mean_own_ap"] < report["mean_best_ap"] == 1.0
    assert report["per_query"]["AILA_Q1"]["best_text"] == "AILA_Q2"  # land acquisition finds C1


def test_command_prints_json_and_fails_cleanly(tmp_path):
    root = write_dataset(tmp_path / "aila", qrels=MATCHED)
    cmd = [
        sys.executable,
        "-m",
        "aqgr.eval.stats.findability",
        "--data",
        str(root),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--queries",
        "Q1-Q2",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["judged_queries"] == 2
    bad = subprocess.run(cmd[:4] + [str(tmp_path / "missing")], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr
