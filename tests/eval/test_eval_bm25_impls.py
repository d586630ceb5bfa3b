"""bm25-fulltext over other BM25 implementations (bm25s-fulltext*), and the eval.bench.bm25 command."""

from __future__ import annotations

import json

import pytest

from aqgr.eval.datasets import load_dataset
from aqgr.eval.harness import evaluate, evaluate_path
from aqgr.eval.systems.fulltext import BM25FullText
from aqgr.eval.systems.registry import systems

BM25S_SYSTEMS = [
    "bm25s-fulltext",
    "bm25s-fulltext-robertson",
    "bm25s-fulltext-atire",
    "bm25s-fulltext-bm25l",
    "bm25s-fulltext-bm25plus",
]


def test_bm25s_systems_are_registered():
    assert set(BM25S_SYSTEMS) <= set(systems.names())
    assert systems.create("bm25s-fulltext-bm25plus")._bm25.params()["method"] == "bm25+"


def test_default_system_config_is_unchanged():
    config = BM25FullText().config()
    assert config["system"] == "bm25-fulltext" and "implementation" not in config


def test_bm25s_fulltext_end_to_end(tiny, tmp_path):
    pytest.importorskip("bm25s")
    out = tmp_path / "report"
    report = evaluate_path(
        tiny,
        ["bm25-fulltext", *BM25S_SYSTEMS],
        "aila-cases",
        queries="all",
        out_dir=out,
        cache_dir=tmp_path / "cache",
        measures=["AP", "RR"],
    )
    runs = {s.name: s.run for s in report.systems}
    # Lucene / ATIRE / Robertson weights rank the tiny corpus as rank-bm25 does (C2 then C3 for Q1).
    for name in ("bm25s-fulltext", "bm25s-fulltext-atire", "bm25s-fulltext-robertson"):
        assert [d for d, _ in runs[name]["AILA_Q1"]] == ["C2", "C3"], name
        assert report.systems[[s.name for s in report.systems].index(name)].results.mean["AP"] == pytest.approx(0.75)
    # BM25L / BM25+ give every document a share for a query term it lacks: all 5 returned.
    assert len(runs["bm25s-fulltext-bm25plus"]["AILA_Q1"]) == 5
    config = json.loads((out / "config.json").read_text())["systems"]
    assert config["bm25s-fulltext"]["implementation"] == "bm25s.v1"
    assert config["bm25s-fulltext"]["params"]["method"] == "lucene"
    assert "implementation" not in config["bm25-fulltext"]
    # one cache entry per implementation; a rerun loads the saved bm25s index
    system = systems.create("bm25s-fulltext")
    again = evaluate(load_dataset(tiny), [system], "aila-cases", cache_dir=tmp_path / "cache", measures=["AP", "RR"])
    assert system.cache_hit is True
    assert again.table()["bm25s-fulltext"] == pytest.approx(report.table()["bm25s-fulltext"])
    assert len(list((tmp_path / "cache" / "bm25-fulltext").iterdir())) == 1 + len(BM25S_SYSTEMS)


def test_bench_bm25_on_a_tiny_dataset(tiny, capsys):
    pytest.importorskip("bm25s")
    from aqgr.eval.bench.bm25 import main

    assert (
        main(
            [
                "--data",
                str(tiny),
                "--impl",
                "rank-bm25.v1",
                "--impl",
                "bm25s.v1:method=atire",
                "--rounds",
                "1",
                "--builds",
                "1",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["documents"] == 5 and result["queries"] == 3
    rows = result["implementations"]
    assert list(rows) == ["rank-bm25.v1", "bm25s.v1:method=atire"]
    assert rows["bm25s.v1:method=atire"]["params"]["method"] == "atire"
    for row in rows.values():
        assert row["build_s"]["median"] >= 0 and row["query_ms"]["p95"] >= row["query_ms"]["median"] >= 0
        assert row["index_bytes_on_disk"] > 0 and row["build_peak_mib"] >= row["index_mib"] >= 0
    assert rows["rank-bm25.v1"]["query_ratio"] == 1.0 and rows["bm25s.v1:method=atire"]["top10_overlap"] == 1.0


def test_bench_bm25_rejects_a_bad_implementation(tiny, capsys):
    from aqgr.eval.bench.bm25 import main

    assert main(["--data", str(tiny), "--impl", "bm25.v9", "--no-memory"]) == 2
    assert "unknown BM25 implementation 'bm25.v9'" in capsys.readouterr().err
    assert main(["--data", str(tiny), "--impl", "bm25s.v1:method"]) == 2
