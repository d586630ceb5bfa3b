"""Fusion: pure, tie-safe, never ordered by raw id or input order."""

from __future__ import annotations

import copy

import pytest

from aqgr.foundation.errors import UnknownNameError
from aqgr.retrieval.fusion import fusers, reciprocal_rank_fusion, score_fusion
from aqgr.retrieval.types import ScoredDoc, id_hash, ranked


def test_rrf_golden_values():
    a = {"x": 3.0, "y": 2.0, "z": 1.0}
    b = [ScoredDoc("y", 10.0), ScoredDoc("w", 5.0)]
    fused = dict(reciprocal_rank_fusion([a, b], k=60))
    assert fused["y"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["x"] == pytest.approx(1 / 61)
    assert fused["w"] == pytest.approx(1 / 62)
    assert fused["z"] == pytest.approx(1 / 63)
    assert [d.doc_id for d in reciprocal_rank_fusion([a, b])][:2] == ["y", "x"]


def test_rrf_weights_and_named_runs():
    runs = {"bm25": {"a": 1.0}, "dense": {"b": 1.0}}
    fused = reciprocal_rank_fusion(runs, weights={"dense": 2.0})
    assert fused[0] == ScoredDoc("b", pytest.approx(2 / 61))
    assert fused[1] == ScoredDoc("a", pytest.approx(1 / 61))
    with pytest.raises(KeyError, match="sparse"):
        reciprocal_rank_fusion(runs, weights={"sparse": 1.0})


def test_score_fusion_min_max_and_equal_scores():
    fused = dict(score_fusion([{"a": 10.0, "b": 5.0, "c": 0.0}, {"a": 0.7, "b": 0.7}], weights=[1.0, 0.5]))
    assert fused == pytest.approx({"a": 1.0 + 0.5, "b": 0.5 + 0.5, "c": 0.0})


def test_empty_runs():
    assert reciprocal_rank_fusion([]) == [] and score_fusion([]) == []
    assert reciprocal_rank_fusion([{}, []]) == [] and score_fusion({"bm25": [], "dense": {}}) == []
    assert [d.doc_id for d in score_fusion([{}, {"a": 1.0}])] == ["a"]


def test_inputs_not_mutated():
    runs = [{"a": 1.0, "b": 1.0}, [ScoredDoc("c", 2.0), ScoredDoc("a", 1.0)]]
    weights = [1.0, 2.0]
    before = copy.deepcopy((runs, weights))
    reciprocal_rank_fusion(runs, weights)
    score_fusion(runs, weights)
    assert (runs, weights) == before


def test_ties_broken_by_id_hash_not_id_or_input_order():
    ids = [f"C{i}" for i in range(1, 41)]
    tied = {d: 1.0 for d in ids}
    by_hash = sorted(ids, key=id_hash)
    assert by_hash != sorted(ids) and by_hash != ids  # the rule is really different here
    for fuse in (reciprocal_rank_fusion, score_fusion):
        assert [d.doc_id for d in fuse([tied])] == by_hash
        assert [d.doc_id for d in fuse([dict(reversed(list(tied.items())))])] == by_hash
    # ranks within a run follow the same rule: the hash-first doc gets rank 1
    fused = reciprocal_rank_fusion([tied])
    assert fused[0].score == pytest.approx(1 / 61) and fused[-1].score == pytest.approx(1 / 100)
    assert [d.doc_id for d in ranked(tied)] == by_hash


def test_duplicate_doc_in_list_run_keeps_best_score():
    assert score_fusion([[("a", 1.0), ("a", 3.0), ("b", 2.0)]])[0].doc_id == "a"


def test_rejects_unknown_shapes_listing_accepted_forms():
    with pytest.raises(TypeError, match="sequence of runs or a mapping"):
        reciprocal_rank_fusion("abc")
    with pytest.raises(TypeError, match="wrap it in a list"):
        reciprocal_rank_fusion({"a": 1.0})
    with pytest.raises(TypeError, match="sequence of runs"):
        score_fusion([[1, 2, 3]])
    with pytest.raises(TypeError, match="one per run"):
        score_fusion([{"a": 1.0}], weights=[1.0, 2.0])


def test_registry():
    assert fusers.names() == ["rrf.v1", "score.v1"]
    runs = [{"a": 2.0, "b": 1.0}]
    assert fusers.create("rrf.v1")(runs) == reciprocal_rank_fusion(runs)
    assert fusers.create("rrf.v1", k=1)(runs)[0].score == pytest.approx(0.5)
    assert fusers.create("score.v1")(runs) == score_fusion(runs)
    with pytest.raises(UnknownNameError, match="rrf.v1"):
        fusers.get("borda.v1")


def test_ranked_is_the_rank_key_order_for_any_scores_and_ties():
    """`ranked` equals sorting by `rank_key` (-score, id hash, id), for mappings and pair lists,
    with many tied scores, zeros of both signs and negative scores; `ranked(scores, k)` its first k."""
    import random

    from aqgr.retrieval.types import rank_key

    rng = random.Random(7)
    for _ in range(100):
        pool = [rng.random(), 0.5, 1.0, 0.0, -0.0, -2.5, round(rng.random(), 1)]
        scores = {f"C{rng.randint(0, 10**6)}": rng.choice(pool) for _ in range(rng.randint(0, 400))}
        expected = sorted((ScoredDoc(d, float(s)) for d, s in scores.items()), key=rank_key)
        assert ranked(scores) == expected
        assert ranked(list(scores.items())) == expected
        assert [d.doc_id for d in ranked(scores)] == [d.doc_id for d in expected]
        k = rng.randint(0, len(scores) + 2)  # the first k only, a tie across the cut included
        assert ranked(scores, k) == expected[:k]
    assert ranked({}) == [] and ranked([]) == [] and ranked({}, 3) == []


@pytest.mark.parametrize("fuse", [reciprocal_rank_fusion, score_fusion])
def test_a_run_given_several_times_fuses_as_its_copies_do(fuse):
    """A run object given more than once (a search reuses the facts' runs for its questions) fuses
    to exactly what as many separate copies give: same documents, same scores to the last bit."""
    import random

    rng = random.Random(3)
    shared = [(f"C{i}", rng.choice([rng.random(), 0.25])) for i in range(300)]
    other = {f"C{i}": rng.random() for i in range(150, 450)}
    weights = [3.0, 2.0, 3.0, 1.0, 3.0]
    given = fuse([shared, other, shared, dict(other), shared], weights)
    copies = fuse([list(shared), dict(other), list(shared), dict(other), list(shared)], weights)
    assert given == copies and len(given) == 450


def _loop_fusion(runs, weights, fuser):
    """The fusers' rule written as a loop over runs and documents: the reference they must equal."""
    fused: dict[str, float] = {}
    for run, weight in zip(runs, weights):
        scores: dict[str, float] = {}
        for doc_id, score in run.items() if isinstance(run, dict) else run:
            scores[doc_id] = max(score, scores.get(doc_id, score))
        if not scores:
            continue
        if fuser == "rrf":
            parts = {d.doc_id: weight / (60 + rank) for rank, d in enumerate(ranked(scores), start=1)}
        else:
            low, high = min(scores.values()), max(scores.values())
            parts = {d: weight * ((s - low) / (high - low) if high > low else 1.0) for d, s in scores.items()}
        for doc_id, part in parts.items():
            fused[doc_id] = fused.get(doc_id, 0.0) + part
    return ranked(fused)


@pytest.mark.parametrize("fuser", ["rrf", "score"])
def test_fusers_equal_the_loop_over_runs_to_the_last_bit(fuser):
    """The array fusers give exactly what adding each run's part document by document gives:
    same documents, same order, same float sums, for pair lists and mappings with ties, a
    document listed twice, empty runs, runs of equal scores and a run given twice."""
    import random

    fuse = reciprocal_rank_fusion if fuser == "rrf" else score_fusion
    rng = random.Random(11)
    for _ in range(60):
        pool = [f"C{rng.randint(0, 500)}" for _ in range(300)]
        runs = []
        for _ in range(rng.randint(0, 6)):
            pairs = [(d, rng.choice([rng.random() * 30, 0.5, 2.0])) for d in rng.sample(pool, rng.randint(0, 120))]
            shape = rng.choice(["pairs", "dict", "docs", "doubled", "flat"])
            if shape == "dict":
                runs.append(dict(pairs))
            elif shape == "docs":
                runs.append(ranked(dict(pairs)))
            elif shape == "doubled" and pairs:
                runs.append(pairs + [(pairs[0][0], pairs[0][1] + 1.0)])
            elif shape == "flat":
                runs.append([(d, 1.25) for d, _ in pairs])
            else:
                runs.append(pairs)
        if runs and rng.random() < 0.5:
            runs.append(runs[0])
        weights = [rng.choice([1.0, 2.0, 3.0, 0.5]) for _ in runs]
        assert fuse(runs, weights) == _loop_fusion(runs, weights, fuser)


def test_a_ranked_run_is_a_list_whose_arrays_fusion_reads_until_it_is_changed():
    """`ranked` gives a list (equal to the plain list, sliced, serialised as one) that also holds
    its ids and scores for fusion; changed in place in any way it drops them, and fusion then reads
    the list as it stands: a stale array never decides a fused score."""
    import json

    from aqgr.retrieval.types import RankedRun

    scores = {"C1": 3.0, "C2": 1.0, "C3": 2.0, "C4": 2.0}
    run = ranked(scores)
    plain = list(run)
    assert isinstance(run, RankedRun) and run == plain and run[:2] == plain[:2] and type(run[:2]) is list
    assert json.loads(json.dumps(run)) == [[d.doc_id, d.score] for d in plain]
    assert run.arrays[0] == [d.doc_id for d in plain] and run.arrays[1].tolist() == [d.score for d in plain]
    with pytest.raises(ValueError):  # read-only: what fusion reads cannot change behind the list
        run.arrays[1][0] = 0.0
    changes = [
        lambda r: r.append(ScoredDoc("C9", 9.0)),
        lambda r: r.__setitem__(0, ScoredDoc("C9", 0.5)),
        lambda r: r.pop(),
        lambda r: r.sort(key=lambda d: d.doc_id),
        lambda r: r.extend([ScoredDoc("C8", 1.5)]),
        lambda r: r.insert(1, ScoredDoc("C7", 7.0)),
        lambda r: r.__delitem__(slice(0, 2)),
        lambda r: r.reverse(),
        lambda r: r.remove(r[0]),
        lambda r: r.__iadd__([ScoredDoc("C6", 6.0)]),
        lambda r: r.clear(),
    ]
    for change in changes:
        changed = ranked(scores)
        change(changed)
        assert changed.arrays is None
        for fuse in (reciprocal_rank_fusion, score_fusion):
            assert fuse([changed, scores]) == fuse([list(changed), scores])
