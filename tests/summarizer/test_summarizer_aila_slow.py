"""Slow: extractive.v1 over every AILA 2019 judgment (opt in with --run-slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "aila2019"


@pytest.mark.slow
def test_every_aila_judgment_gets_a_valid_summary():
    if not (DATA / "Object_casedocs").is_dir():
        pytest.skip(f"no AILA data at {DATA}")
    from aqgr.eval.bench.summarize import run

    report = run(DATA)
    assert report["failures"] == []
    assert report["valid"] == report["documents"] == 2914
    shares = report["filled_share"]
    assert shares["appellants"] == shares["facts"] == shares["issues_or_reasoning"] == 1.0
    assert shares["final_judgment"] >= 0.95 and shares["date"] >= 0.99
