"""A restricted search gives the restricted ranking, whichever way the restriction is applied.

A narrow restriction is applied inside each engine; a broad one after an unrestricted search read
deeper (retrieval/restriction.py). Either way the result must be the unrestricted ranking's
admitted documents, in order: the same documents, scores and ties as restricting by hand."""

from __future__ import annotations

import random

import pytest
from retrieval_samples import summary

from aqgr.retrieval.index import IndexSpec, SummaryIndex

WORDS = ("dowry cruelty husband wife death burns harassment compensation land acquisition market value notification "
         "bail custody arrest murder intention evidence witness confession tenancy eviction rent contract breach").split()
QUERY = "dowry death cruelty by the husband soon before her death, harassment for dowry, burns"


def _corpus(n: int) -> list:
    rng = random.Random(7)
    return [summary(f"J{i:04d}", facts=" ".join(rng.choices(WORDS, k=30)), issues=[" ".join(rng.choices(WORDS, k=12))],
                    reasoning=" ".join(rng.choices(WORDS, k=20))) for i in range(n)]


@pytest.fixture(scope="module")
def index():
    built = SummaryIndex.build(_corpus(400), IndexSpec(embedder="hashing.v1"))
    yield built
    built.close()


def _by_hand(index, admitted: set[str], k: int) -> dict[str, list]:
    """Every document of each run, unrestricted, then the admitted ones: the restricted ranking by definition."""
    whole = index.retrieve(QUERY, len(index))
    return {name: [d for d in run if d.doc_id in admitted][:k] for name, run in whole.items()}


def _calls(index, monkeypatch) -> list:
    """Record, per engine search, whether it was asked for named documents (`only`) or not."""
    seen = []
    for name, part in index._parts.items():
        search = part.search

        def spy(query, k, only=None, _search=search, _name=name):
            seen.append((_name, only is not None))
            return _search(query, k, only=only)

        monkeypatch.setattr(part, "search", spy)
    return seen


@pytest.mark.parametrize("share", [0.9, 0.5, 0.2, 0.02])
def test_restricted_search_is_the_unrestricted_ranking_admitted(index, share, monkeypatch):
    rng = random.Random(int(share * 100))
    admitted = {d for d in index.doc_ids if rng.random() < share}
    for k in (1, 5, 10):
        assert index.retrieve(QUERY, k, restrict=admitted) == _by_hand(index, admitted, k)
        ns = sorted(index.ns_of(admitted))
        assert index.retrieve(QUERY, k, restrict=index.admitted(ns)) == _by_hand(index, admitted, k)


def test_a_broad_restriction_is_applied_after_the_search_a_narrow_one_inside(index, monkeypatch):
    seen = _calls(index, monkeypatch)
    ids = list(index.doc_ids)
    index.retrieve(QUERY, 5, restrict=index.admitted(sorted(index.ns_of(ids[: len(ids) * 9 // 10]))))
    assert seen and not any(named for _, named in seen)  # 90% admitted: read past the rest
    seen.clear()
    index.retrieve(QUERY, 5, restrict=set(ids[:8]))
    assert seen and all(named for _, named in seen)  # 8 of 400: named to the engine


def test_exclude_holds_with_a_broad_restriction(index):
    ids = list(index.doc_ids)
    first = index.retrieve(QUERY, 3)["bm25"][0].doc_id
    runs = index.retrieve(QUERY, 10, restrict=set(ids), exclude={first})
    assert all(first not in [d.doc_id for d in run] for run in runs.values())
    assert runs == _by_hand(index, set(ids) - {first}, 10)


def test_admitted_reads_as_a_set_of_ids(index):
    ids = list(index.doc_ids)[:5]
    admitted = index.admitted(sorted(index.ns_of(ids)))
    assert len(admitted) == 5 and set(admitted) == set(ids)
    assert ids[0] in admitted and "nope" not in admitted and list(index.doc_ids)[-1] not in admitted
    assert frozenset(d for d in ids if d in admitted) == frozenset(ids)
