"""The pipeline scale benchmark end to end at a tiny size, on a corpus the test writes."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from aqgr.eval.bench import pipeline as bench_pipeline
from aqgr.eval.bench.synthetic_archive import Corpus, Generator
from aqgr.foundation.errors import DatasetError

TOPICS = [
    ("the land acquisition award", "market value of the acquired land", "compensation was enhanced"),
    ("the dowry death of the wife", "cruelty and harassment soon before her death", "the conviction was upheld"),
    ("the dismissal of the bank officer", "the departmental inquiry into misconduct", "the dismissal was set aside"),
    ("the income tax assessment", "the deduction of interest paid to partners", "the assessment was remanded"),
    ("the eviction of the tenant", "the bona fide need of the landlord", "the eviction decree was confirmed"),
    ("the murder trial", "the evidence of the eye witnesses", "the appellants were acquitted"),
]
NAMES = ["Ramesh Kumar", "State of Kerala", "Union of India", "Sita Devi", "Mohan Lal", "Bharat Bank Ltd"]


def write_corpus(root: Path, n: int = 12) -> Path:
    """`n` AILA-shaped judgments (title, court, date, case number, author, numbered paragraphs) and three queries."""
    rng = random.Random(7)
    docs = root / "Object_casedocs"
    docs.mkdir(parents=True)
    for k in range(n):
        subject, point, outcome = TOPICS[k % len(TOPICS)]
        a, r = rng.sample(NAMES, 2)
        paragraphs = [
            f"This appeal by special leave arises out of {subject} decided by the High Court in the year {1960 + k}.",
            f"The facts are that the appellant {a} challenged {subject} before the trial court, which held against him on {point}.",
            f"The question for consideration is whether the High Court was right in its view on {point}.",
            f"Learned counsel for the appellant contended that {point} had not been properly considered by the courts below.",
            f"In {NAMES[(k + 1) % len(NAMES)]} v. {NAMES[(k + 2) % len(NAMES)]} (1975) 2 SCC {100 + k}, this Court considered {point}.",
            f"We are of the opinion that the finding on {point} cannot be sustained on the material placed before us.",
            f"For these reasons the appeal is allowed and {outcome}. There shall be no order as to costs.",
        ]
        text = "\n".join(
            [
                f"{a} v {r}",
                "Supreme Court of India",
                "",
                f"{1 + k} March {1960 + k}",
                f"Civil Appeal No. {k + 1} of {1960 + k}",
                "The Judgment was delivered by: A. Judge, J.",
            ]
            + [f"{i}. {p}" for i, p in enumerate(paragraphs, 1)]
        )
        (docs / f"C{k + 1}.txt").write_text(text + "\n", encoding="utf-8")
    queries = [
        f"The appellant complains about {s}; the courts below did not consider {p} and he asks whether {o} rightly."
        for s, p, o in TOPICS[:3]
    ]
    (root / "Query_doc.txt").write_text(
        "".join(f"AILA_Q{i}||{q}\n" for i, q in enumerate(queries, 1)), encoding="utf-8"
    )
    return root


def test_synthetic_judgments_are_unique_dated_and_cite_earlier_ones(tmp_path):
    corpus = Corpus.load(write_corpus(tmp_path / "corpus") / "Object_casedocs", tmp_path / "cache")
    gen = Generator(corpus)
    assert len({gen.title(i) for i in range(5000)}) == 5000
    row, summary = gen.judgment(41)
    assert row.text == gen.judgment(41)[0].text  # a pure function of i
    assert row.text.splitlines()[0] == " v ".join(gen.title(41))
    assert summary.parties.appellants == [gen.title(41)[0]] and summary.provenance.source_sha256 == row.sha256
    texts = [gen.judgment(i)[0].text for i in range(120)]
    pairs = [(i, j) for i in range(1, 120) for j in range(i) if " v. ".join(gen.title(j)) in texts[i]]
    assert len(pairs) > 60  # ~1.2 citations a judgment
    assert all(gen.date(j) <= gen.date(i) for i, j in pairs)  # only earlier-dated ones


def test_pipeline_benchmark_end_to_end(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    argv = [
        "--sizes",
        "24",
        "--out",
        str(out),
        "--corpus",
        str(corpus),
        "--add",
        "6",
        "--rate-embedder",
        "hashing.v1",
        "--rate-sample",
        "10",
        "--batch",
        "7",
    ]
    assert bench_pipeline.main(argv) == 0
    results = json.loads((out / "results.json").read_text())
    row = results["sizes"]["24"]
    assert not bench_pipeline._errors(row), bench_pipeline._errors(row)
    assert row["load"]["stored"] == 24 and row["index"]["n_docs"] == 24
    assert row["add"]["store"]["stored"] == 6 and row["add"]["index"]["n_docs"] == 30
    assert row["index"]["citation_links"] > 0
    assert 0 < row["search"]["p50_ms"] <= row["search"]["p95_ms"] and row["search"]["queries"] == 3
    assert 0 < row["search"]["first_search_s"] < 60
    assert row["search"]["peak_rss_mb"] > 50 and row["index"]["peak_rss_mb"] > 50
    anon, mapped = (
        row["search"]["end_rss_anon_mb"],
        row["search"]["end_rss_file_mb"],
    )  # the two kinds of resident memory
    assert (
        anon > 20
        and mapped > 1
        and anon + mapped == pytest.approx(row["search"]["rss_end_mb"], abs=max(25, 0.1 * (anon + mapped)))
    )
    phase_peaks = row["index"]["phase_peak_rss_mb"]  # sampled per build phase, each under the process's peak
    assert phase_peaks and all(50 < mb <= row["index"]["peak_rss_mb"] + 1 for mb in phase_peaks.values()), phase_peaks
    assert row["disk"]["database_mb"] > 0 and row["disk"]["index_mb"] > 0
    assert results["rate"]["docs"] == 10 and results["rate"]["docs_per_s"] > 0
    table = (out / "table.md").read_text()
    assert table == bench_pipeline.table(results) + "\n"
    for stage, measure, _ in bench_pipeline.MEASURES:
        assert f"| {stage} | {measure} |" in table
    cells = next(line for line in table.splitlines() if line.startswith("| search | p50 ms |")).split("|")
    assert float(cells[3].replace(",", "")) == pytest.approx(row["search"]["p50_ms"], rel=0.01, abs=0.5)


def test_the_milvus_backend_is_measured_the_same_way(tmp_path):
    """--backend milvus (what bench_scale measured apart, on the index alone): the archive's index
    made on milvus-lite in the home, as `aqgr index --backend milvus` makes it, then searched."""
    pytest.importorskip("pymilvus", reason="pymilvus not installed: pip install 'aqgr[milvus]'")
    pytest.importorskip("milvus_lite", reason="milvus-lite not installed: pip install 'aqgr[milvus]'")
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    argv = ["--sizes", "24", "--out", str(out), "--corpus", str(corpus), "--add", "0", "--rate-sample", "0"]
    assert bench_pipeline.main([*argv, "--backend", "milvus"]) == 0
    results = json.loads((out / "results.json").read_text())
    row = results["sizes"]["24"]
    assert [e for e in bench_pipeline._errors(row) if e[0] != "add"] == []
    manifest = json.loads((out / "archive" / "index" / "manifest.json").read_text())
    assert manifest["backend"] == "milvus.v1" and row["index"]["n_docs"] == 24
    assert row["search"]["queries"] == 3 and row["disk"]["index_mb"] > 0
    assert results["config"]["backend"] == "milvus" and "index backend: milvus" in (out / "table.md").read_text()


def test_a_corpus_without_judgments_is_refused_clearly(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="no .txt judgments"):
        Corpus.load(tmp_path / "empty", tmp_path / "cache")
    argv = ["--sizes", "10", "--out", str(tmp_path / "out"), "--corpus", str(tmp_path / "empty")]
    assert bench_pipeline.main(argv) == 2
    assert "no .txt judgments" in json.loads((tmp_path / "out" / "results.json").read_text())["base"]["error"]


def test_a_later_size_extends_the_archive_and_a_different_one_is_refused(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus")
    common = ["--out", str(tmp_path / "out"), "--corpus", str(corpus), "--stage", "load"]
    assert bench_pipeline.main([*common, "--to", "8"]) == 0
    assert bench_pipeline.main([*common, "--to", "13"]) == 0
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (first["from"], first["stored"], second["from"], second["stored"]) == (0, 8, 8, 5)
    with pytest.raises(SystemExit, match="made otherwise"):
        bench_pipeline.main([*common, "--to", "20", "--seed", "1"])
    with pytest.raises(SystemExit, match="already holds 13"):
        bench_pipeline.main([*common, "--to", "10"])


def test_slopes_and_the_extrapolation_to_a_million():
    assert bench_pipeline.slope(1000, 2.0, 10000, 20.0) == 1.0
    assert bench_pipeline.slope(1000, 5.0, 100000, 5.0) == 0.0
    assert bench_pipeline.slope(1000, None, 10000, 3.0) is None
    rows = {1000: {"search": {"p50_ms": 10.0}}, 10000: {"search": {"p50_ms": 40.0}}}
    p50 = next(m for m in bench_pipeline.measures(rows) if m["measure"] == "p50 ms")
    assert p50["slopes"] == {"1000->10000": 0.6}
    assert p50["at_1e6"] == round(40.0 * 100**0.6, 1)
    assert p50["target"].startswith("<= 300")
    rows = {1000: {"add": {"index": {"seconds": 30.0}}}, 9000: {"add": {"index": {"seconds": 100.0}}}}
    add = next(
        m for m in bench_pipeline.measures(rows, add=1000) if m["measure"] == "build_index s" and m["stage"] == "add"
    )
    assert add["slopes"] == {
        "1000->9000": round(math.log(100 / 30) / math.log(10000 / 2000), 2)
    }  # measured at N + 1000


def test_the_citation_graph_alone_is_timed_by_phase(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus")
    common = ["--out", str(tmp_path / "out"), "--corpus", str(corpus), "--to", "40"]
    assert bench_pipeline.main([*common, "--stage", "load"]) == 0
    assert bench_pipeline.main([*common, "--stage", "citations"]) == 0
    _, linked = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert linked["citation_links"] > 10 and linked["citations_mb"] > 0  # ~1.2 citations a judgment
    assert (
        set(linked["phases_s"]) == {"read", "titles", "citations"}
        and linked["seconds"] >= sum(linked["phases_s"].values()) - 0.1
    )
