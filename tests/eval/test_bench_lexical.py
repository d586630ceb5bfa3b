"""The lexical-engine benchmark (aqgr.eval.bench.lexical) on a paragraph pool written here."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from aqgr.eval.bench import lexical as bench_lexical
from aqgr.retrieval.text import with_pairs

POOL = [
    [["bail", "anticip", "arrest"], ["dowri", "death"]],
    [["murder", "304b", "dowri"], ["surety", "bond", "bail"], ["appeal"]],
]
QUERIES = {"Q1": ["bail", "dowri", "bail", "bail_anticip"], "Q2": ["murder", "appeal", "unknown"]}


@pytest.fixture
def out(tmp_path):
    (tmp_path / "aila-paragraphs.words.v1.json").write_text(json.dumps(POOL))
    (tmp_path / "aila-queries.words.v1.json").write_text(json.dumps(QUERIES))
    return tmp_path


def test_a_synthetic_judgment_is_its_paragraphs_terms_and_pairs():
    docs = bench_lexical.Synthetic(POOL, 40, paragraphs=3, seed=1)
    paragraphs = [p for doc in POOL for p in doc]
    for (_n, terms), row in zip(docs, docs.choice.tolist()):
        tokens = [t for i in row for t in paragraphs[i]]
        assert Counter(terms) == Counter(with_pairs(tokens, 2))
    # The first N of a larger corpus are the smaller corpus.
    assert list(bench_lexical.Synthetic(POOL, 10, paragraphs=3, seed=1)) == list(docs)[:10]


@pytest.mark.parametrize("engine", ["tantivy.v1", "matrix.v1", "fts5"])
def test_build_then_search_reports_and_agrees(out, engine):
    built = bench_lexical.run_build(engine, 60, out, paragraphs=3, seed=0)
    assert built["disk_mb"] >= 0 and built["build_peak_rss_mb"] > 0
    searched = bench_lexical.run_search(engine, 60, out, budget_s=60)
    assert searched["queries_timed"] == 2 and searched["passes"] == 2 and searched["hits_per_query"] > 0
    if engine != "matrix.v1":  # the reference
        bench_lexical.run_build("matrix.v1", 60, out, paragraphs=3, seed=0)
        bench_lexical.run_search("matrix.v1", 60, out, budget_s=60)
    agreement = bench_lexical.agreement(out, engine, 60)
    assert 0 < agreement["overlap100"] <= 1 and 0 < agreement["overlap100_raw"] <= 1
    if engine == "matrix.v1":
        assert agreement["overlap100"] == 1.0


@pytest.mark.parametrize("engine", ["tantivy.v1", "matrix.v1"])
def test_the_update_step_replaces_deletes_and_adds(out, engine):
    from aqgr.retrieval.lexical import open_lexical

    bench_lexical.run_build(engine, 60, out, paragraphs=3, seed=0)
    update = bench_lexical.run_update(engine, 60, out, paragraphs=3, seed=0, count=10)
    assert update["update_live"] == 60 and update["update_commit_s"] >= 0
    docs = bench_lexical.Synthetic(POOL, 80, paragraphs=3, seed=0)
    with open_lexical(out / f"{engine}-60") as index:
        assert index.search(["unknown"], 5) == [] and len(index) == 60
        assert index.search(docs.terms(60), 80, only=[0, 15]) and not index.search(docs.terms(60), 80, only=[15])
