"""The lexical engines (retrieval/lexical/): one interface, tantivy.v1 and matrix.v1, on corpora written here."""

from __future__ import annotations

import math
import random
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from aqgr.foundation.errors import IndexLockedError, IndexMismatchError, NoIndexError
from aqgr.retrieval.lexical import LexicalEngine, create_lexical, lexical_engines, open_lexical, tie_key
from aqgr.retrieval.lexical.bm25 import BM25Matrix

ENGINES = ("tantivy.v1", "matrix.v1")
REPO = Path(__file__).resolve().parents[2]


def random_corpus(seed: int, n_docs: int, max_len: int) -> dict[int, list[str]]:
    """Documents under random (non-sequential) numbers, Zipf-like words, some documents empty."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(300)] + ["anticipatori_bail", "304b", "s\u00fcd", "x'y"]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    ns = rng.sample(range(10**12), n_docs)
    return {
        n: ([] if i % 37 == 0 else rng.choices(vocab, weights, k=rng.randint(1, max_len))) for i, n in enumerate(ns)
    }


def random_queries(seed: int, corpus: dict[int, list[str]], count: int) -> list[list[str]]:
    rng = random.Random(seed)
    words = sorted({t for terms in corpus.values() for t in terms})
    return [rng.choices(words, k=rng.randint(2, 12)) + ["unknown_term"] for _ in range(count)]


def build(engine: str, directory: Path, corpus: dict[int, list[str]], **params) -> LexicalEngine:
    index = create_lexical(directory, engine, **params)
    for n, terms in corpus.items():
        index.add(n, terms)
    index.commit()
    return index


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


def test_both_engines_have_the_interface_and_the_default_is_tantivy(tmp_path):
    from aqgr.retrieval.lexical import DEFAULT_LEXICAL

    assert DEFAULT_LEXICAL == "tantivy.v1" and set(ENGINES) <= set(lexical_engines.names())
    for name in ENGINES:
        with create_lexical(tmp_path / name, name) as index:
            assert isinstance(index, LexicalEngine) and index.name == name


@pytest.mark.parametrize("query_tf", ["raw", "log"])
def test_engines_rank_alike_on_short_documents(tmp_path, query_tf):
    """Up to 40 terms a document, tantivy stores lengths exactly: the same ranking, float32-close scores."""
    corpus = random_corpus(1, 400, 40)
    tantivy = build("tantivy.v1", tmp_path / "t", corpus, query_tf=query_tf)
    matrix = build("matrix.v1", tmp_path / "m", corpus, query_tf=query_tf)
    for query in random_queries(2, corpus, 30):
        a, b = tantivy.search(query, 25), matrix.search(query, 25)
        assert [n for n, _ in a] == [n for n, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], rtol=1e-5)


@pytest.mark.parametrize("query_tf", ["raw", "log"])
def test_engines_rank_alike_on_long_documents(tmp_path, query_tf):
    """Longer documents: tantivy floors each length to one of 256 steps (12.5% apart above 40
    terms), which moves a score by about 1% (median; 5% at most); the top k sets agree except
    for documents whose scores are that close to the k-th."""
    corpus = random_corpus(3, 400, 300)
    tantivy = build("tantivy.v1", tmp_path / "t", corpus, query_tf=query_tf)
    matrix = build("matrix.v1", tmp_path / "m", corpus, query_tf=query_tf)
    k, errors, overlaps = 20, [], []
    for query in random_queries(4, corpus, 30):
        a, full = dict(tantivy.search(query, k)), dict(matrix.search(query, 10**6))
        b = dict(list(full.items())[:k])
        assert len(a) == len(b) == min(k, len(full))
        errors += [abs(score - full[n]) / full[n] for n, score in a.items()]
        kth = min(b.values())
        assert all(abs(full[n] - kth) <= 0.06 * kth for n in set(a) ^ set(b))
        overlaps.append(len(set(a) & set(b)) / len(b))
    assert np.median(errors) <= 0.02 and max(errors) <= 0.06
    assert np.mean(overlaps) >= 0.9


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"query_tf": "log"},
        {"k1": 2.0, "b": 0.5, "idf": "okapi"},
        {"k1": 0.9, "b": 0.4, "idf": "lucene", "query_tf": "log"},
    ],
)
def test_matrix_scores_equal_bm25matrix_exactly(tmp_path, params):
    corpus = random_corpus(5, 200, 120)
    index = build("matrix.v1", tmp_path / "m", corpus, **params)
    reference = BM25Matrix.build(
        list(corpus.values()),
        k1=params.get("k1", 1.2),
        b=params.get("b", 0.75),
        idf_kind=params.get("idf", "lucene"),
        query_tf=params.get("query_tf", "raw"),
    )
    position = {n: i for i, n in enumerate(corpus)}
    for query in random_queries(6, corpus, 15):
        expected = reference.scores(query)
        hits = index.search(query, 10**6)
        assert {n for n, _ in hits} == {n for n, terms in corpus.items() if set(terms) & set(query)}
        assert all(score == expected[position[n]] for n, score in hits)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_add_delete_commit_and_reopen(tmp_path, engine):
    index = create_lexical(tmp_path / "ix", engine)
    index.add(10, ["bail", "anticipatori_bail", "bail"])
    index.add(20, ["murder", "304b"])
    index.add(30, [])
    assert index.search(["bail"], 5) == [] and len(index) == 0  # buffered until commit
    index.commit()
    assert (
        len(index) == 3 and index.doc_freq("bail") == 1 and index.doc_freq("304b") == 1 and index.doc_freq("nope") == 0
    )
    assert [n for n, _ in index.search(["bail", "304b"], 5)] == [10, 20]
    index.add(10, ["dowri"])  # replaces document 10
    index.delete([20, 999])
    index.commit()
    assert len(index) == 2
    assert index.search(["bail", "304b"], 5) == []
    assert [n for n, _ in index.search(["dowri"], 5)] == [10]
    index.add(40, ["dowri", "cruelti"])
    index.add(40, ["cruelti"])  # twice before a commit: the last one counts
    index.commit()
    index.close()
    again = open_lexical(tmp_path / "ix")
    assert type(again).name == engine and len(again) == 3
    assert [n for n, _ in again.search(["dowri"], 5)] == [10]
    assert [n for n, _ in again.search(["cruelti"], 5)] == [40]
    assert again.disk_bytes() > 0
    again.close()


def test_only_and_skip_filter_inside_the_search(tmp_path, engine):
    corpus = random_corpus(7, 300, 60)
    index = build(engine, tmp_path / "ix", corpus)
    query = ["w1", "w2", "w7", "w40", "w41", "w200", "w2"]
    full = index.search(query, 10**6)
    assert len(full) > 100
    bottom = [n for n, _ in full[-12:]]  # the lowest-ranked matching documents
    not_matching = next(n for n, terms in corpus.items() if not set(terms) & set(query))
    only = bottom + [not_matching, 123]  # 123: no such document
    got = index.search(query, 5, only=only)
    assert got == [hit for hit in full if hit[0] in set(only)][:5] and len(got) == 5
    assert index.search(query, 50, only=bottom) == full[-12:]
    skip = [n for n, _ in full[:30]]
    assert index.search(query, 10, skip=skip) == full[30:40]
    assert index.search(query, 3, only=bottom, skip=bottom[:10]) == full[-2:]
    assert index.search(query, 5, only=[]) == []


@pytest.mark.parametrize("query_tf", ["raw", "log"])
def test_score_gives_the_named_documents_their_scores_for_any_weights(tmp_path, engine, query_tf):
    """`score(weights, ns)`: a search's scores for the named documents, with weights that need
    not be query counts, so a longer query's scores are a shorter one's plus the added weights'."""
    from aqgr.retrieval.lexical import query_weights

    corpus = random_corpus(11, 300, 60)
    index = build(engine, tmp_path / "ix", corpus, query_tf=query_tf)
    base = ["w1", "w2", "w7", "w40", "w2", "w200"]
    longer = base + ["w3", "w7", "w7", "w150", "unknown_term"]
    full = dict(index.search(longer, 10**6))
    named = [n for n, _ in index.search(base, 40)] + [next(n for n, t in corpus.items() if not t), 123]  # empty; absent
    held = dict(index.search(base, 10**6))
    added = query_weights(longer, query_tf)
    extra = {t: w - query_weights(base, query_tf).get(t, 0.0) for t, w in added.items()}
    extra = {t: w for t, w in extra.items() if w}
    assert any(w != int(w) for w in extra.values()) == (query_tf == "log")
    more = index.score(extra, named)
    assert set(more) <= set(named[:-2]) and set(more) == {n for n in named if set(corpus.get(n, ())) & set(extra)}
    for n in named[:-2]:
        assert held[n] + more.get(n, 0.0) == pytest.approx(full[n], rel=1e-5)
    assert index.score({"w1": 0.5}, named) == pytest.approx(
        {n: s / 2 for n, s in index.score({"w1": 1.0}, named).items()}, rel=1e-6
    )
    assert index.score({}, named) == {} and index.score(extra, []) == {}


def test_log_query_tf_weighs_repeated_terms(tmp_path, engine):
    corpus = {1: ["cheat", "fraud", "cheat"], 2: ["fraud"], 3: ["dowri"]}
    raw = build(engine, tmp_path / "raw", corpus, query_tf="raw")
    log = build(engine, tmp_path / "log", corpus, query_tf="log")
    once = dict(raw.search(["cheat"], 5))[1]
    assert dict(raw.search(["cheat"] * 3, 5))[1] == pytest.approx(3 * once, rel=1e-6)
    assert dict(log.search(["cheat"] * 3, 5))[1] == pytest.approx((1 + math.log(3)) * once, rel=1e-6)
    assert dict(log.search(["cheat"], 5))[1] == pytest.approx(once, rel=1e-6)


def test_an_empty_index_and_documents_without_terms(tmp_path, engine):
    index = create_lexical(tmp_path / "ix", engine)
    index.commit()
    assert len(index) == 0 and index.search(["bail"], 10) == [] and index.doc_freq("bail") == 0
    index.add(1, [])
    index.add(2, [])
    index.commit()
    assert len(index) == 2 and index.search(["bail"], 10) == [] and index.search([], 10) == []
    index.close()
    assert len(open_lexical(tmp_path / "ix")) == 2


def test_ties_are_broken_by_a_hash_of_n_not_by_n_or_insertion_order(tmp_path, engine):
    index = build(engine, tmp_path / "ix", {n: ["same", "terms"] for n in range(60)})
    expected = sorted(range(60), key=tie_key)[:5]
    assert [n for n, _ in index.search(["same"], 5)] == expected
    assert expected != list(range(5))


def test_terms_with_whitespace_are_refused(tmp_path, engine):
    index = create_lexical(tmp_path / "ix", engine)
    for bad in (
        ["two words"],
        ["tab\there"],
        [""],
        ["ok", ""],
        ["\u3000leading"],
        ["trailing\x1f"],
        ["ok", "nbsp\xa0x"],
    ):
        with pytest.raises(ValueError, match="whitespace"):
            index.add(1, bad)
    with pytest.raises(ValueError, match="document number"):
        index.add(-1, ["ok"])
    index.close()


def test_tantivy_refuses_other_bm25_parameters(tmp_path):
    for params in ({"k1": 2.0}, {"b": 0.5}, {"idf": "okapi"}):
        with pytest.raises(ValueError, match="matrix.v1"):
            create_lexical(tmp_path / "ix", "tantivy.v1", **params)
        assert not (tmp_path / "ix").exists()
    create_lexical(tmp_path / "ix", "tantivy.v1", k1=1.2, b=0.75, idf="lucene", query_tf="log").close()


def test_a_tantivy_commit_leaves_one_segment_so_a_search_walks_each_term_once(tmp_path):
    # tantivy writes a segment per writer thread at each commit and merges only when eight gather;
    # a search pays per segment and term (AILA's full-text read 5.43 -> 4.31 ms with one)
    index = build("tantivy.v1", tmp_path / "ix", random_corpus(3, 3000, 200))
    assert index._index.searcher().num_segments == 1 and len(index) == 3000
    index.add(5, ["bail"])
    index.commit()
    assert index._index.searcher().num_segments == 2  # an update adds its own, one
    index.close()


def test_open_says_what_is_wrong(tmp_path):
    with pytest.raises(NoIndexError):
        open_lexical(tmp_path)
    create_lexical(tmp_path / "m", "matrix.v1").close()
    with pytest.raises(IndexMismatchError, match="matrix.v1"):
        lexical_engines.get("tantivy.v1").open(tmp_path / "m")
    with pytest.raises(FileExistsError):
        create_lexical(tmp_path / "m", "tantivy.v1")
    for engine in ENGINES:  # a manifest whose engine files are gone
        create_lexical(tmp_path / engine, engine).close()
        for part in (tmp_path / engine).iterdir():
            if part.is_dir():
                shutil.rmtree(part)
        with pytest.raises(IndexMismatchError, match="cannot be"):
            open_lexical(tmp_path / engine)


def test_a_tantivy_reader_sees_another_processs_commit_without_reopening(tmp_path):
    index = build("tantivy.v1", tmp_path / "ix", {1: ["bail"]})
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from aqgr.retrieval.lexical import open_lexical\n"
            f"ix = open_lexical({str(tmp_path / 'ix')!r}); ix.add(2, ['bail']); ix.commit(); ix.close()",
        ],
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        check=True,
        timeout=120,
    )
    deadline = time.monotonic() + 20
    while len(index) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(n for n, _ in index.search(["bail"], 5)) == [1, 2]


def test_a_second_writer_in_this_process_is_refused(tmp_path, engine):
    first = create_lexical(tmp_path / "ix", engine)
    second = open_lexical(tmp_path / "ix")
    first.add(1, ["bail"])
    with pytest.raises(IndexLockedError, match="another writer"):
        second.add(2, ["bail"])
    assert second.search(["bail"], 5) == []  # searching needs no lock
    first.commit()
    second.add(2, ["bail"])  # the lock is free again, and the second writer builds on the first's commit
    second.add(1, ["surety"])  # replacing what the first committed
    second.commit()
    first.close()
    second.close()
    again = open_lexical(tmp_path / "ix")
    assert (
        again.search(["bail"], 5)[0][0] == 2 and len(again) == 2 and [n for n, _ in again.search(["surety"], 5)] == [1]
    )


def _python(code: str, **kwargs) -> subprocess.Popen:
    env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kwargs,
    )


def test_another_process_writes_then_this_one_reads_and_writes(tmp_path, engine):
    where = tmp_path / "ix"
    writer = _python(f"""
        import sys
        from aqgr.retrieval.lexical import create_lexical
        index = create_lexical({str(where)!r}, {engine!r}, query_tf="log")
        index.add(7, ["bail", "bail", "surety"])
        index.commit()
        index.add(8, ["surety"])
        print("holding", flush=True)
        sys.stdin.readline()
        index.commit()
        index.close()
    """)
    try:
        assert writer.stdout.readline().strip() == "holding", writer.stderr.read()
        index = open_lexical(where)
        assert [n for n, _ in index.search(["bail"], 5)] == [7]
        with pytest.raises(IndexLockedError):
            index.add(9, ["bail"])
        writer.communicate("go\n", timeout=60)
    finally:
        writer.kill()
    assert writer.returncode == 0
    index.close()
    index = open_lexical(where)
    assert index.params["query_tf"] == "log" and len(index) == 2
    index.add(9, ["bail"])
    index.commit()
    assert [n for n, _ in index.search(["bail", "surety"], 5)][:1] == [7] and len(index) == 3
    index.close()


def test_threads_search_at_once(tmp_path, engine):
    corpus = random_corpus(9, 300, 60)
    index = build(engine, tmp_path / "ix", corpus)
    queries = random_queries(10, corpus, 12)
    expected = [index.search(q, 50) for q in queries]
    results: dict[int, list] = {}

    def run(worker: int) -> None:
        results[worker] = [index.search(q, 50) for q in queries for _ in range(3)][::3]

    threads = [threading.Thread(target=run, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[w] == expected for w in range(4))


def test_doc_freqs_counts_each_term_as_doc_freq_does(tmp_path, engine):
    corpus = random_corpus(5, 120, 40)
    with build(engine, tmp_path / "ix", corpus) as index:
        terms = ["w0", "w7", "unknown_term", "w0", "304b"]
        assert index.doc_freqs(terms) == [index.doc_freq(t) for t in terms]
        assert index.doc_freqs(["unknown_term"]) == [0] and index.doc_freqs([]) == []
        assert index.doc_freq("w0") == sum("w0" in terms for terms in corpus.values())


def test_a_query_without_its_common_terms(tmp_path, engine):
    """`without_common`: the terms held by more than the share of the documents are left out
    (repeats and order of the others kept), unless too few distinct terms would remain."""
    from aqgr.retrieval.embedded.retrievers import MIN_KEPT_TERMS, without_common

    rare = [f"r{i}" for i in range(MIN_KEPT_TERMS)]
    corpus = {n: ["common", "half", rare[n % len(rare)]] if n < 5 else ["common", "other"] for n in range(10)}
    corpus[3].append("half")
    with build(engine, tmp_path / "ix", corpus) as index:  # common: 10 of 10, half: 5 of 10, r_i: 1 or 2 of 10
        query = ["common", *rare, "half", "common", rare[0]]
        assert without_common(query, index, 0.5) == [*rare, "half", rare[0]]  # 5 is not more than half of 10
        assert without_common(query, index, 0.4) == [*rare, rare[0]]
        assert without_common(query, index, 1.0) == query
        assert without_common(query[:4], index, 0.4) == query[:4]  # 3 distinct would remain: nothing left out
        assert without_common([], index, 0.2) == []


def test_best_is_the_first_k_by_score_then_tie_key_whatever_the_ties():
    """`best` (and `best_of`, its arrays form) equal sorting by (-score, tie_key), the input order
    kept for hits equal on both, for many ties, both zeros, and a tie across the cut."""
    import random

    import numpy as np

    from aqgr.retrieval.lexical import best, best_of

    rng = random.Random(5)
    for _ in range(200):
        pool = [rng.random(), 0.5, 1.0, 0.0, -0.0, 2.25, round(rng.random(), 1)]
        hits = [(rng.randint(0, 300), rng.choice(pool)) for _ in range(rng.randint(0, 150))]
        k = rng.randint(-1, len(hits) + 2)
        expected = sorted(hits, key=lambda hit: (-hit[1], tie_key(hit[0])))[: max(k, 0)]
        assert best(hits, k) == expected
        ns = np.asarray([n for n, _ in hits], dtype=np.int64)
        assert best_of(ns, np.asarray([s for _, s in hits], dtype=np.float64), k) == expected


def test_tantivy_term_queries_made_once_serve_later_searches_alike(tmp_path, monkeypatch):
    """A term's boosted query is kept for later searches (lexical_tantivy.TERM_QUERIES): each search
    then ranks as a freshly opened engine does, also after the index changes and after the keep,
    bounded, was emptied."""
    from aqgr.retrieval.lexical import tantivy as lexical_tantivy

    monkeypatch.setattr(lexical_tantivy, "TERM_QUERIES", 40)
    corpus = random_corpus(11, 300, 60)
    index = build("tantivy.v1", tmp_path / "ix", corpus, query_tf="log")
    queries = random_queries(12, corpus, 25)
    queries += [q + queries[0] for q in queries[:5]]  # terms shared with earlier queries, some repeated (other weights)

    def fresh(query):
        with open_lexical(tmp_path / "ix") as other:
            return other.search(query, 40)

    for query in queries:
        assert index.search(query, 40) == fresh(query)
        assert 0 < len(index._term_queries) <= 40
    index.add(max(corpus) + 1, queries[0] * 3)  # the same queries over a changed index
    index.commit()
    for query in queries[:6]:
        assert index.search(query, 40) == fresh(query)
    assert max(corpus) + 1 in [n for n, _ in index.search(queries[0], 40)]
