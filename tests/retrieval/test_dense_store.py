"""DenseStore: window vectors by document number n in immutable segment files."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from aqgr.foundation.errors import IndexMismatchError, WriteError
from aqgr.retrieval.dense.store import DenseStore, _mix
from aqgr.summarizer.llm.chunks import DenseIndex

DIM = 16


def unit(rng, m, dim=DIM):
    x = rng.standard_normal((m, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def documents(rng, first, count):
    """Windows of documents n = first .. first+count-1, one to four windows each."""
    window_n = np.repeat(np.arange(first, first + count), rng.integers(1, 5, count)).astype(np.int64)
    return unit(rng, len(window_n)), window_n


def brute(q, vectors, window_n):
    """{n: best window inner product} computed directly (float64)."""
    sims = vectors.astype(np.float64) @ q.astype(np.float64)
    best: dict[int, float] = {}
    for n, s in zip(window_n.tolist(), sims.tolist()):
        best[n] = max(best.get(n, -np.inf), s)
    return best


def top(best, k):
    return sorted(best, key=lambda n: -best[n])[:k]


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.fixture(autouse=True)
def one_faiss_thread():
    """Tiny data: one thread (faiss's OpenMP threads spin for seconds on a busy two-core machine)."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


def test_exact_matches_brute_force_and_dense_index(tmp_path, rng):
    vectors, window_n = documents(rng, 0, 400)
    store = DenseStore(tmp_path, DIM)
    store.add_segment(vectors, window_n)
    today = DenseIndex.from_vectors(vectors, window_n, 400, DIM)
    for q in unit(rng, 5):
        got = store.search(q, 25)
        best = brute(q, vectors, window_n)
        assert [n for n, _ in got] == top(best, 25)
        np.testing.assert_allclose([s for _, s in got], [best[n] for n, _ in got], rtol=0, atol=1e-6)
        assert all(s == today.scores(q)[n] for n, s in got)  # the same values, bit for bit
    assert store.search(None, 5) == [] and store.search(unit(rng, 1)[0], 0) == []
    assert len(store.search(unit(rng, 1)[0], 10_000)) == 400  # k beyond the archive: every document


def test_unsorted_input_and_later_segments_are_searched(tmp_path, rng):
    first, first_n = documents(rng, 0, 100)
    later, later_n = documents(rng, 100, 50)
    shuffle = rng.permutation(len(later_n))
    store = DenseStore(tmp_path, DIM)
    a = store.add_segment(first, first_n)
    b = store.add_segment(later[shuffle], later_n[shuffle])
    assert store.segments == [a, b] and a != b
    assert store.n_windows == len(first_n) + len(later_n) and store.n_documents == 150
    allv, alln = np.concatenate([first, later]), np.concatenate([first_n, later_n])
    for q in unit(rng, 5):
        best = brute(q, allv, alln)
        assert [n for n, _ in store.search(q, 30)] == top(best, 30)
    q = later[0]  # a window of a later document scores itself best
    assert store.search(q, 1)[0][0] == later_n[0]


def test_skip_hides_documents(tmp_path, rng):
    vectors, window_n = documents(rng, 0, 200)
    store = DenseStore(tmp_path, DIM)
    store.add_segment(vectors, window_n)
    q = unit(rng, 1)[0]
    best = brute(q, vectors, window_n)
    hidden = top(best, 10)
    got = store.search(q, 10, skip=set(hidden))
    assert not {n for n, _ in got} & set(hidden)
    assert [n for n, _ in got] == top({n: s for n, s in best.items() if n not in hidden}, 10)
    assert [n for n, _ in store.search(q, 10, skip=np.array(hidden))] == [n for n, _ in got]  # unsorted
    assert [n for n, _ in store.search(q, 10, skip=np.sort(hidden))] == [n for n, _ in got]  # used as it is
    assert store.search(q, 10, skip=range(200)) == []


def test_only_returns_few_documents_scored_exactly(tmp_path, rng):
    vectors, window_n = documents(rng, 0, 3000)
    store = DenseStore(tmp_path, DIM, ann_min_windows=1000)  # an ANN segment: `only` must not depend on it
    store.add_segment(vectors, window_n)
    q = unit(rng, 1)[0]
    best = brute(q, vectors, window_n)
    worst = sorted(best, key=lambda n: best[n])[:3]  # far below any top k
    got = store.search(q, 10, only=[*worst, 10**9])  # an unknown n is no error
    assert sorted(n for n, _ in got) == sorted(worst)
    for n, s in got:
        assert s == pytest.approx(best[n], abs=1e-6)
    assert [n for n, _ in store.search(q, 2, only=worst)] == sorted(worst, key=lambda n: -best[n])[:2]
    assert store.search(q, 10, only=worst, skip=worst[:1]) == [x for x in got if x[0] != worst[0]]
    assert store.search(q, 10, only=[]) == []


def test_many_admitted_documents_of_an_ann_segment_are_searched_with_the_others_masked(tmp_path, rng, monkeypatch):
    import aqgr.retrieval.dense.store as dense_store

    monkeypatch.setattr(dense_store, "ANN_NAMED_MAX_DOCS", 50)
    vectors, window_n = documents(rng, 0, 3000)
    store = DenseStore(tmp_path, DIM, ann_min_windows=1000)
    store.add_segment(vectors, window_n)
    assert list(store.kinds().values()) == ["ivf-sq8.v1"]
    admitted = np.unique(window_n)[::3]  # a third of the documents: many more than 50 and 4 k
    masked = []
    search = store._segments[0]._ann_top
    monkeypatch.setattr(store._segments[0], "_ann_top", lambda *a: masked.append(a[-1] is not None) or search(*a))
    for q in unit(rng, 5):
        best = brute(q, vectors, window_n)
        got = store.search(q, 10, only=admitted)
        assert len(got) == 10 and set(n for n, _ in got) <= set(admitted.tolist())  # never one it does not admit
        exact = top({n: s for n, s in best.items() if n in set(admitted.tolist())}, 10)
        assert len(set(n for n, _ in got) & set(exact)) >= 8  # the ANN's recall, as unfiltered
        for n, s in got:
            assert s == pytest.approx(best[n], abs=2e-2)  # the 8-bit codes' estimate
    assert masked and all(masked)  # through the ANN index, not by reading each document's rows
    q = unit(rng, 1)[0]
    assert store.search(q, 10, only=admitted, skip=admitted[:5]) == store.search(q, 10, only=admitted[5:])
    masked.clear()
    store.search(q, 10, only=admitted[:40])  # few: scored exactly from their rows
    assert not masked


def test_reopen_from_files(tmp_path, rng):
    vectors, window_n = documents(rng, 0, 300)
    store = DenseStore(tmp_path, DIM, ann_min_windows=400)
    store.add_segment(vectors[:100], window_n[:100])  # exact (< 400 windows)
    rest = window_n[100:] != window_n[99]
    store.add_segment(vectors[100:][rest], window_n[100:][rest])
    assert sorted(store.kinds().values()) == ["exact", "ivf-sq8.v1"]
    again = DenseStore(tmp_path, DIM, store.segments)
    assert again.files() == store.files() and again.disk_bytes() == store.disk_bytes() > 0
    for q in unit(rng, 3):
        assert again.search(q, 20) == store.search(q, 20)
    with pytest.raises(IndexMismatchError, match="expected"):
        DenseStore(tmp_path, DIM + 1, store.segments)
    with pytest.raises(IndexMismatchError, match="cannot be read"):
        DenseStore(tmp_path, DIM, ["dense-000099"])


def test_refuses_bad_input(tmp_path, rng):
    vectors, window_n = documents(rng, 0, 20)
    store = DenseStore(tmp_path, DIM)
    store.add_segment(vectors, window_n)
    with pytest.raises(ValueError, match="new n"):
        store.add_segment(vectors[:1], window_n[:1])
    with pytest.raises(ValueError, match="shape"):
        store.add_segment(vectors[:, :4], window_n)
    with pytest.raises(ValueError, match="finite"):
        store.add_segment(np.full((1, DIM), np.nan, np.float32), np.array([99]))
    with pytest.raises(ValueError, match="dimension"):
        store.search(np.ones(DIM + 1, np.float32), 3)
    assert len(store.segments) == 1 and store.orphans() == []  # a refused write leaves nothing


def test_compaction_drops_dead_windows_and_keeps_results(tmp_path, rng):
    store = DenseStore(tmp_path, DIM)
    parts = [documents(rng, first, 60) for first in (0, 60, 120)]
    for vectors, window_n in parts:
        store.add_segment(vectors, window_n)
    old_files = store.files()
    allv = np.concatenate([v for v, _ in parts])
    alln = np.concatenate([n for _, n in parts])
    dead = set(range(0, 180, 3))
    live = lambda n: ~np.isin(n, list(dead))  # noqa: E731
    queries = unit(rng, 4)
    before = [store.search(q, 40, skip=dead) for q in queries]
    new = store.compact(live)
    assert store.segments == new and len(new) == 1 and new[0] not in [f.split(".")[0] for f in old_files]
    assert store.n_windows == int(live(alln).sum()) and store.n_documents == 120
    assert [store.search(q, 40) for q in queries] == before  # the same documents and scores
    assert set(store.orphans()) == set(old_files)  # the caller deletes them after its commit
    for f in store.orphans():
        (tmp_path / f).unlink()
    assert DenseStore(tmp_path, DIM, new).search(queries[0], 40) == before[0]
    assert store.compact(lambda n: np.zeros(len(n), bool)) == [] and store.search(queries[0], 5) == []
    del allv


def test_ann_segment_finds_the_exact_top_10(tmp_path, rng):
    # Clustered data, like embeddings: 200 topics, documents near one topic each.
    centres = unit(rng, 200)
    window_n = np.repeat(np.arange(5000), rng.integers(1, 5, 5000))
    topic = rng.integers(0, 200, 5000)[window_n]
    vectors = centres[topic] + 0.25 * rng.standard_normal((len(window_n), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store = DenseStore(tmp_path, DIM, ann_min_windows=1000)
    store.add_segment(vectors, window_n)
    assert list(store.kinds().values()) == ["ivf-sq8.v1"]
    recall = []
    for q in unit(rng, 20):
        best = brute(q, vectors, window_n)
        got = store.search(q, 10)
        recall.append(len({n for n, _ in got} & set(top(best, 10))) / 10)
        for n, s in got:  # the index's 8-bit estimate of the best window it found
            assert s == pytest.approx(best[n], abs=0.01)
        exact = dict(store.search(q, 10, only=[n for n, _ in got]))  # `only`: from the float32 rows
        assert all(exact[n] == pytest.approx(best[n], abs=1e-6) for n, _ in got)
    assert np.mean(recall) >= 0.9
    assert len(store.search(q, 10_000)) == 5000  # k beyond the archive: the search widens to every document
    assert len(store.search(q, 10_000, skip=range(0, 5000, 2))) == 2500


def test_ties_are_cut_by_a_stable_hash_not_by_n(tmp_path, rng):
    same = np.tile(unit(rng, 1), (50, 1))  # 50 documents of one identical window
    store = DenseStore(tmp_path, DIM)
    store.add_segment(same, np.arange(50))
    got = [n for n, _ in store.search(same[0], 5)]
    assert got == sorted(range(50), key=lambda n: int(_mix(np.array([n]))[0]))[:5]
    assert got != [0, 1, 2, 3, 4]


def test_torn_write_is_ignored(tmp_path, rng, monkeypatch):
    vectors, window_n = documents(rng, 0, 50)
    store = DenseStore(tmp_path, DIM)
    name = store.add_segment(vectors, window_n)
    # A crash mid-write: temporary files and one renamed file of a segment never returned.
    (tmp_path / "dense-000002.vectors.npy.tmp").write_bytes(b"partial")
    (tmp_path / "dense-000003.n.npy").write_bytes(b"partial")
    reopened = DenseStore(tmp_path, DIM, [name])
    assert reopened.segments == [name] and reopened.search(vectors[0], 3) == store.search(vectors[0], 3)
    assert reopened.orphans() == ["dense-000002.vectors.npy.tmp", "dense-000003.n.npy"]
    more, more_n = documents(rng, 50, 5)
    assert reopened.add_segment(more, more_n) == "dense-000004"  # never reuses a torn name

    def full_disk(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(WriteError, match="disk_full"):
        reopened.add_segment(*documents(rng, 60, 5))
    assert reopened.segments == [name, "dense-000004"]
    assert not [f for f in reopened.orphans() if f.startswith("dense-000005")]  # temporary files removed


def test_same_input_same_files(tmp_path, rng):
    vectors, window_n = documents(rng, 0, 2000)

    def build(where):
        store = DenseStore(where, DIM, ann_min_windows=1000)
        store.add_segment(vectors[:50], window_n[:50])
        rest = window_n > window_n[49]
        store.add_segment(vectors[rest], window_n[rest])
        store.compact(lambda n: n % 5 != 0)
        return store

    a, b = build(tmp_path / "a"), build(tmp_path / "b")
    assert a.files() == b.files() and a.kinds() == b.kinds() == {"dense-000003": "ivf-sq8.v1"}
    for f in a.files():
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_needs_compaction_policy(tmp_path, rng):
    store = DenseStore(tmp_path, DIM, ann_min_windows=10**6)
    assert not store.needs_compaction()
    first = 0
    for _ in range(9):
        store.add_segment(*documents(rng, first, 10))
        first += 10
    assert not store.needs_compaction(lambda n: np.ones(len(n), bool))  # 8 small segments beside the largest
    store.add_segment(*documents(rng, first, 10))
    assert store.needs_compaction()  # 9 small ones
    store.compact(lambda n: np.ones(len(n), bool))
    assert not store.needs_compaction()
    assert store.needs_compaction(lambda n: n >= 30)  # 30% of the documents dead
    grown = DenseStore(tmp_path, DIM, store.segments, ann_min_windows=store.n_windows)
    assert grown.needs_compaction()  # exact, but big enough for an ANN segment


def test_blocked_copies_and_scoring_match_whole_ones(tmp_path, rng, monkeypatch):
    from aqgr.retrieval.dense import store as dense_store

    vectors, window_n = documents(rng, 0, 300)
    shuffle = rng.permutation(len(window_n))

    def build(where):
        store = DenseStore(where, DIM)
        store.add_segment(vectors[shuffle][:400], window_n[shuffle][:400])
        rest = ~np.isin(window_n, window_n[shuffle][:400])
        store.add_segment(vectors[rest], window_n[rest])
        return store

    queries = unit(rng, 3)
    live = lambda n: n % 4 != 1  # noqa: E731
    whole = build(tmp_path / "whole")
    expected = [whole.search(q, 300, only=range(300)) for q in queries]
    whole.compact(live)
    monkeypatch.setattr(dense_store, "GATHER_ROWS", 8)  # two documents a block
    blocked = build(tmp_path / "blocked")
    assert [blocked.search(q, 300, only=range(300)) for q in queries] == expected
    blocked.compact(live)
    for f in whole.files():
        assert (tmp_path / "whole" / f).read_bytes() == (tmp_path / "blocked" / f).read_bytes()


def test_row_file_reads_rows_without_a_map(tmp_path, rng):
    from aqgr.retrieval.dense.store import RowFile

    vectors, window_n = documents(rng, 0, 40)
    np.save(tmp_path / "rows.npy", vectors)
    rows = RowFile(tmp_path / "rows.npy")
    assert rows.shape == vectors.shape and len(rows) == len(vectors)
    np.testing.assert_array_equal(rows[3:9], vectors[3:9])
    picked = np.array([0, 1, 2, 7, 30, 31])
    np.testing.assert_array_equal(rows[picked], vectors[picked])
    store = DenseStore(tmp_path / "store", DIM)
    store.add_segment(rows, window_n)  # a build can stream from disk
    q = unit(rng, 1)[0]
    assert [n for n, _ in store.search(q, 5)] == top(brute(q, vectors, window_n), 5)
