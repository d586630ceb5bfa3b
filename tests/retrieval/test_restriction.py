"""A restricted search gives the restricted ranking, whichever way the restriction is applied.

A narrow restriction is applied inside each engine; a broad one after an unrestricted search read
deeper (retrieval/embedded/restriction.py). Either way the result must be the unrestricted ranking's
admitted documents, in order: the same documents, scores and ties as restricting by hand."""

from __future__ import annotations

import random

import pytest
from retrieval_samples import summary

from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

WORDS = (
    "dowry cruelty husband wife death burns harassment compensation land acquisition market value notification "
    "bail custody arrest murder intention evidence witness confession tenancy eviction rent contract breach"
).split()
QUERY = "dowry death cruelty by the husband soon before her death, harassment for dowry, burns"


COURTS = ("Supreme Court of India", "High Court of Bombay", "High Court of Delhi")


def _corpus(n: int) -> list:
    rng = random.Random(7)
    return [
        summary(
            f"J{i:04d}",
            facts=" ".join(rng.choices(WORDS, k=30)),
            issues=[" ".join(rng.choices(WORDS, k=12))],
            reasoning=" ".join(rng.choices(WORDS, k=20)),
            court=rng.choice(COURTS),
            date=f"{rng.randint(1, 28)}.{rng.randint(1, 12):02d}.{rng.randint(1950, 2020)}",
        )
        for i in range(n)
    ]


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

        def spy(query, k, only=None, where=None, _search=search, _name=name):
            seen.append((_name, "where" if where is not None else "named" if only is not None else "after"))
            return _search(query, k, only=only, where=where) if where is not None else _search(query, k, only=only)

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
    # 90% admitted: tantivy reads past the rest; an exact dense store scores the named ones (cheaper than a scan)
    assert dict(seen) == {"bm25": "after", "dense": "named"}
    seen.clear()
    index.retrieve(QUERY, 5, restrict=set(ids[:8]))
    assert dict(seen) == {"bm25": "named", "dense": "named"}  # 8 of 400: named to every engine


@pytest.mark.parametrize(
    "asked",
    [
        {"court": "Bombay High Court"},
        {"decided_from": "1960", "decided_to": "1989"},
        {"court": "SC", "decided_from": "2000"},
        {"court": "Delhi High Court", "decided_to": "1960-06-30"},
    ],
)
def test_a_filter_is_applied_inside_the_lexical_engine_as_its_fields(index, asked, monkeypatch):
    from aqgr.schemas.filters import Filters

    selection = index.facets.select(Filters(**asked))
    assert selection.ns is not None and 0 < len(selection.ns) < len(index)
    admitted = set(index.ids_of(selection.ns))
    expected = {k: _by_hand(index, admitted, k) for k in (1, 10)}
    seen = _calls(index, monkeypatch)
    for k in (1, 10):
        assert index.retrieve(QUERY, k, restrict=index.admitted(selection.ns, selection.where)) == expected[k]
    assert set(seen) == {("bm25", "where"), ("dense", "named")}


def test_an_engine_without_filter_fields_names_the_documents(index, monkeypatch):
    from aqgr.schemas.filters import Filters

    engine = index._parts["bm25"].engine
    monkeypatch.setattr(engine, "filters_inside", False)  # as matrix.v1, whose documents carry no filter fields
    selection = index.facets.select(Filters(court="Bombay High Court"))
    expected = _by_hand(index, set(index.ids_of(selection.ns)), 10)
    seen = _calls(index, monkeypatch)
    assert index.retrieve(QUERY, 10, restrict=index.admitted(selection.ns, selection.where)) == expected
    assert seen and "where" not in {how for _, how in seen}


def test_a_lexical_index_made_before_filter_fields_is_refused(index, tmp_path):
    import json
    import shutil

    from aqgr.foundation.errors import IndexMismatchError
    from aqgr.retrieval.lexical.tantivy import TantivyEngine

    engine = index._parts["bm25"].engine
    copy = tmp_path / "bm25"
    shutil.copytree(engine.directory, copy)
    manifest = json.loads((copy / "lexical.json").read_text())
    assert manifest.pop("fields") == 1 and TantivyEngine.open(engine.directory).filters_inside
    (copy / "lexical.json").write_text(json.dumps(manifest))  # as a tantivy index of an earlier aqgr
    with pytest.raises(IndexMismatchError, match="made by an older aqgr, before search filters"):
        TantivyEngine.open(copy)


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
