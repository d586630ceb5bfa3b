"""SummaryIndex: build, retrieve, atomic save, refusing mismatched loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from retrieval_samples import Counting, summary

import aqgr.retrieval.embedded.index as index_module
from aqgr.foundation.errors import EmptyArchiveError, IndexMismatchError, NoIndexError, UnknownNameError
from aqgr.retrieval.dense.cache import EmbeddingCache
from aqgr.retrieval.dense.embedders import embedders
from aqgr.retrieval.documents import DENSE_SLOTS
from aqgr.retrieval.embedded.index import FORMAT_VERSION, IndexSpec, SummaryIndex
from aqgr.retrieval.spec import DEFAULT_EMBEDDER
from aqgr.schemas.summary import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
# A legal question with its facts: the dense retriever embeds the legal slots (issues,
# reasoning, new principles), the summary BM25 every indexed slot.
QUERY = "Was it a dowry death: cruelty and harassment for dowry soon before her death, the husband harassed his wife"


def test_spec_defaults_and_validation():
    spec = IndexSpec()
    assert spec.slots == ("parties", "case_number", "facts", "issues", "reasoning", "new_principles")
    assert (spec.embedder, spec.tokenizer, spec.bm25_k1, spec.bm25_b, spec.window_chars) == (
        "minilm-l6-int8.v1",
        "words.v2",
        1.2,
        0.75,
        1000,
    )
    with pytest.raises(UnknownNameError, match="facts"):
        IndexSpec(slots=("facts", "headnote"))
    with pytest.raises(ValidationError, match="frozen"):
        spec.slots = ("facts",)  # frozen


def test_retrieve_finds_dowry_cases(index):
    runs = index.retrieve(QUERY, 3)
    assert set(runs) == {"bm25", "dense"}
    for run in runs.values():
        assert {d.doc_id for d in run[:2]} == {"C1", "C5"}
        assert [d.score for d in run] == sorted((d.score for d in run), reverse=True)
    assert index.retrieve(QUERY, 3, retrievers=("dense",)).keys() == {"dense"}
    with pytest.raises(UnknownNameError, match="bm25"):
        index.retrieve(QUERY, 3, retrievers=("splade",))


def test_bm25_returns_only_matching_docs(index):
    assert [d.doc_id for d in index.retrieve("market value notification", 10, retrievers=("bm25",))["bm25"]] == ["C2"]
    assert index.retrieve("zzzz qqqq", 10, retrievers=("bm25",))["bm25"] == []


def test_restrict_and_exclude(index):
    runs = index.retrieve(QUERY, 10, restrict={"C2", "C5", "C99"})
    assert {d.doc_id for d in runs["dense"]} == {"C2", "C5"}
    assert [d.doc_id for d in runs["bm25"]] == ["C5"]
    runs = index.retrieve(QUERY, 10, exclude={"C1"})
    assert all(d.doc_id != "C1" for run in runs.values() for d in run)
    assert len(runs["dense"]) == 4
    assert index.retrieve(QUERY, 10, restrict=set()) == {"bm25": [], "dense": []}


def test_texts_and_manifest(index, corpus):
    assert index.doc_ids == tuple(s.judgment_id for s in corpus)
    assert index.texts("C1")["parties"] == "Ram Singh v. State of Punjab"
    assert "Kans Raj" not in index.document_text("C1")  # precedents are off by default
    m = index.manifest
    assert m["format_version"] == FORMAT_VERSION and m["schema_version"] == SCHEMA_VERSION
    assert m["slots"] == list(IndexSpec().slots) and m["n_docs"] == 5 and m["generation"] >= 1
    assert m["embedder"]["name"] == "hashing.v1" and m["embedder"]["dim"] == 384
    assert m["bm25"] == {"k1": 1.2, "b": 0.75, "epsilon": 0.25, "idf": "lucene"} and m["tokenizer"] == "words.v2"
    assert {"bm25", "embed", "total"} <= set(m["last_update"]["seconds"])
    assert set(m["retrievers"]) == {"bm25", "dense"} and m["retrievers"]["dense"]["n_windows"] == m["n_windows"] > 0
    assert m["lexical_engine"] == "tantivy.v1" and m["sha256"]  # the dense segments, checksummed


def test_save_load_round_trip(index, tmp_path, hashing_spec):
    path = index.save(tmp_path / "index")
    assert (path / "manifest.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left
    loaded = SummaryIndex.load(path, expect=hashing_spec)
    assert loaded.doc_ids == index.doc_ids and loaded.spec == index.spec
    for query in (QUERY, "market value", "Section 304 Part II sudden quarrel"):
        assert loaded.retrieve(query, 5) == index.retrieve(query, 5)
    assert loaded.texts("C2") == index.texts("C2")
    assert (
        all(loaded.idf().get(t) == index.idf().get(t) for t in ("dowri", "market", "zzzz"))
        and loaded.idf()["dowri"] > 0
    )
    assert loaded.tokenizer("Dowry deaths") == ["dowri", "death"]
    # saving again over an existing index replaces it
    index.save(path)
    assert SummaryIndex.load(path).doc_ids == index.doc_ids


def test_missing_index(tmp_path):
    with pytest.raises(NoIndexError, match="build one first"):
        SummaryIndex.load(tmp_path / "nowhere")


@pytest.mark.parametrize(
    "expect, words",
    [
        (IndexSpec(embedder="minilm-l6.v1"), ["embedder", "minilm-l6.v1"]),
        (IndexSpec(embedder="hashing.v1", slots=("facts", "precedents")), ["slots", "precedents"]),
        (IndexSpec(embedder="hashing.v1", bm25_k1=1.5, tokenizer="words.v1"), ["k1", "words.v1"]),
        (IndexSpec(embedder="hashing.v1", fulltext_ngrams=1), ["ngrams"]),
    ],
)
def test_load_refuses_other_spec(index, tmp_path, expect, words):
    path = index.save(tmp_path / "index")
    with pytest.raises(IndexMismatchError, match="rebuild") as err:
        SummaryIndex.load(path, expect=expect)
    for word in words:
        assert word in str(err.value)


def test_an_index_of_the_older_default_tokenizer_is_refused_for_a_spec_naming_none(corpus, tmp_path):
    """words.v1 was the default before words.v2: an index built with it is refused under a spec that
    names no tokenizer (the default's differs; aqgr index rebuilds it), read under one naming words.v1."""
    old = SummaryIndex.build(corpus, IndexSpec(embedder="hashing.v1", tokenizer="words.v1"))
    path = old.save(tmp_path / "index")
    with pytest.raises(IndexMismatchError, match="tokenizer 'words.v1', expected 'words.v2'"):
        SummaryIndex.load(path, expect=IndexSpec(embedder="hashing.v1"))
    loaded = SummaryIndex.load(path, expect=IndexSpec(embedder="hashing.v1", tokenizer="words.v1"))
    assert loaded.spec.tokenizer == "words.v1" and loaded.tokenizer("realization") == ["realize"]
    assert loaded.retrieve(QUERY, 5, ["bm25"]) == old.retrieve(QUERY, 5, ["bm25"])


def _tamper(path: Path, **changes):
    manifest = json.loads((path / "manifest.json").read_text())
    for key, value in changes.items():
        if "." in key:
            outer, inner = key.split(".")
            manifest[outer][inner] = value
        else:
            manifest[key] = value
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_load_refuses_tampered_manifest(index, tmp_path):
    path = index.save(tmp_path / "index")
    _tamper(path, schema_version="0.9", format_version=0, **{"embedder.fingerprint": "sha256:deadbeef"})
    with pytest.raises(IndexMismatchError, match="rebuild") as err:
        SummaryIndex.load(path)
    message = str(err.value)
    assert "0.9" in message and "format version" in message and "deadbeef" in message
    assert len(err.value.differences) == 3


def test_load_refuses_missing_files_check_finds_changed_ones(index, tmp_path):
    path = index.save(tmp_path / "index")
    segment = max(index.manifest["sha256"], key=lambda name: (path / name).stat().st_size)  # the vectors
    data = (path / segment).read_bytes()
    (path / segment).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # one flipped bit: found by the checksums
    assert any("changed" in p for p in SummaryIndex.load(path).check_files())
    (path / segment).unlink()
    with pytest.raises(IndexMismatchError, match="missing"):
        SummaryIndex.load(path)
    (path / "manifest.json").write_text("{not json")
    with pytest.raises(IndexMismatchError, match="unreadable"):
        SummaryIndex.load(path)


def test_load_refuses_an_older_format(index, tmp_path):
    path = index.save(tmp_path / "index")
    _tamper(path, format_version=3)
    with pytest.raises(IndexMismatchError, match="format version 3"):
        SummaryIndex.load(path)
    manifest = json.loads((path / "manifest.json").read_text())
    for key in ("fulltext_bm25", "dense_slots", "lexical_engine"):  # what format 3 manifests lacked
        del manifest[key]
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexMismatchError, match="index format version 3, this aqgr reads 4"):
        SummaryIndex.load(path)


def test_atomic_save_keeps_old_index_when_writing_fails(index, corpus, tmp_path, monkeypatch, hashing_spec):
    path = index.save(tmp_path / "index")
    before = sorted(p.relative_to(path) for p in path.rglob("*"))
    smaller = SummaryIndex.build(corpus[:2], hashing_spec)
    real = index_module.shutil.copytree

    depth = []

    def broken_copy(*args, **kwargs):  # the copy is made, then the disk fills up
        depth.append(1)
        real(*args, **kwargs)
        depth.pop()
        if not depth:
            raise OSError("disk full")

    monkeypatch.setattr(index_module.shutil, "copytree", broken_copy)
    with pytest.raises(OSError, match="disk full"):
        smaller.save(path)
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
    assert SummaryIndex.load(path).doc_ids == index.doc_ids


def test_save_refuses_non_index_directory(index, tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        index.save(tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_rebuild_with_cache_does_not_reembed(corpus, hashing_spec, tmp_path):
    counting = Counting(embedders.create("hashing.v1"))
    events = []
    with EmbeddingCache(tmp_path / "vectors.sqlite") as cache:
        first = SummaryIndex.build(corpus, hashing_spec, cache=cache, embedder=counting)
        n_first = sum(map(len, counting.calls))
        made = first.manifest
        assert made["n_windows"] > 0 and made["last_update"]["embedded_windows"] == made["n_windows"]
        assert (
            n_first == made["n_windows"] + made["last_update"]["embedded_sentences"]
        )  # windows, then the issue sentences
        second = SummaryIndex.build(
            corpus, hashing_spec, cache=cache, embedder=counting, progress=lambda *e: events.append(e)
        )
        assert sum(map(len, counting.calls)) == n_first and second.manifest["last_update"]["embedded_windows"] == 0
        assert second.manifest["last_update"].get("embedded_sentences", 0) == 0
        third = SummaryIndex.build(
            [*corpus, summary("C6", facts="A new judgment.")], hashing_spec, cache=cache, embedder=counting
        )
        assert sum(map(len, counting.calls)) == n_first + 1 and third.manifest["last_update"]["embedded_windows"] == 1
    assert second.retrieve(QUERY, 5) == first.retrieve(QUERY, 5)
    assert ("index", len(corpus), len(corpus)) in events


def test_build_rejects_empty_and_duplicates(hashing_spec, corpus):
    with pytest.raises(EmptyArchiveError):
        SummaryIndex.build([], hashing_spec)
    with pytest.raises(ValueError, match="C1"):
        SummaryIndex.build([corpus[0], corpus[0]], hashing_spec)
    with pytest.raises(ValueError, match="spec names"):
        SummaryIndex.build(corpus, IndexSpec(), embedder=embedders.create("hashing.v1"))


def test_import_is_light():
    code = (
        "import sys, aqgr.retrieval, aqgr.retrieval.embedded.index, aqgr.retrieval.fusion, aqgr.retrieval.dense.windows, aqgr.retrieval.dense.embedders;"
        "aqgr.retrieval.dense.embedders.embedders.create('minilm-l6.v1').fingerprint;"  # load() checks it
        "heavy = [m for m in ('torch', 'faiss', 'sentence_transformers', 'llama_index', 'transformers')"
        " if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_module_constants_declared_once():
    assert index_module.RETRIEVERS == ("bm25", "dense", "fulltext")
    assert index_module.FORMAT_VERSION == 4


def test_ngrams_validated_and_recorded(hashing_spec):
    with pytest.raises(ValueError, match="ngrams"):
        IndexSpec(fulltext_ngrams=3)
    assert IndexSpec().describe()["ngrams"] == {"bm25": 1, "fulltext": 2}
    assert IndexSpec.from_manifest(
        IndexSpec(bm25_ngrams=2).describe() | {"embedder": {"name": DEFAULT_EMBEDDER}}
    ) == IndexSpec(bm25_ngrams=2)


def test_fulltext_bm25_parameters_recorded():
    spec = IndexSpec(fulltext_k1=3.0, fulltext_query_tf="raw")
    manifest = spec.describe() | {"embedder": {"name": DEFAULT_EMBEDDER}}
    assert manifest["fulltext_bm25"] == {"k1": 3.0, "query_tf": "raw"}
    assert IndexSpec.from_manifest(manifest) == spec
    with pytest.raises(ValueError, match="query_tf"):
        IndexSpec(fulltext_query_tf="unique")


def test_fulltext_index_scores_with_its_own_parameters(hashing_spec, tmp_path):
    """The full-text BM25 uses fulltext_k1 and the log query tf; the summary BM25 keeps bm25_k1."""
    docs = [summary("P1", facts="Bail."), summary("P2", facts="Land.")]
    full = {"P1": "anticipatory bail bail bail refused", "P2": "possession of land and bail"}
    spec = hashing_spec.model_copy(update={"lexical_engine": "matrix.v1", "fulltext_k1": 2.0})
    built = SummaryIndex.build(docs, spec, full_texts=full)
    loaded = SummaryIndex.load(built.save(tmp_path / "i"), expect=spec)
    for index in (built, loaded):
        fulltext, bm25 = index._parts["fulltext"].engine.params, index._parts["bm25"].engine.params
        assert (fulltext["k1"], fulltext["query_tf"]) == (2.0, spec.fulltext_query_tf)
        assert bm25["k1"] == spec.bm25_k1 and bm25["query_tf"] == "raw"
    with pytest.raises(ValueError, match="k1"):  # the default engine has Lucene's fixed k1
        SummaryIndex.build(docs, hashing_spec.model_copy(update={"fulltext_k1": 2.0}), full_texts=full)


def test_fulltext_pairs_rank_the_phrase_first(hashing_spec, tmp_path):
    """With pairs, the judgment that has the phrase outranks one that has both words apart
    (more often); with terms alone it is the other way round. Saved and loaded alike."""
    docs = [summary("P1", facts="Bail."), summary("P2", facts="Bail."), summary("P3", facts="Bail.")]
    full = {
        "P1": "The accused sought anticipatory bail before the Sessions Court.",
        "P2": "Bail was refused. The anticipatory application and bail bonds and bail conditions were argued.",
        "P3": "A suit for possession of land.",
    }
    for ngrams, first in ((2, "P1"), (1, "P2")):
        spec = hashing_spec.model_copy(update={"fulltext_ngrams": ngrams})
        built = SummaryIndex.build(docs, spec, full_texts=full)
        for index in (built, SummaryIndex.load(built.save(tmp_path / f"n{ngrams}"), expect=spec)):
            run = index.retrieve("anticipatory bail", 3, retrievers=["fulltext"])["fulltext"]
            assert [d.doc_id for d in run][0] == first
            assert "P3" not in [d.doc_id for d in run]


def test_dense_can_embed_the_legal_slots_only(hashing_spec, tmp_path):
    """With dense_slots = the legal slots, the dense retriever matches the law a judgment
    decides (issues, reasoning, new principles), not its story: a query in one judgment's
    facts finds, by dense, the judgment whose issue it is. The default (None) embeds every
    indexed slot; a judgment with no legal slot text is embedded whole, so it stays findable."""
    docs = [
        summary(
            "P1",
            facts="The tenant of a shop resisted eviction for bona fide need.",
            issues=["Whether limitation applied."],
        ),
        summary(
            "P2",
            facts="A suit over farm land was filed late after the owner died and the heirs disputed the partition "
            "of the ancestral property and the mortgage.",
            issues=["Whether eviction of a tenant of a shop for bona fide need was lawful."],
        ),
        summary("P3", facts="Eviction of a tenant of a shop for bona fide need."),
    ]
    query = "eviction of the tenant of a shop for bona fide need"
    assert IndexSpec().dense_slots is None
    spec = hashing_spec.model_copy(update={"dense_slots": DENSE_SLOTS})
    legal = SummaryIndex.build(docs, spec)
    everything = SummaryIndex.build(docs, hashing_spec)
    for index in (legal, SummaryIndex.load(legal.save(tmp_path / "legal"), expect=spec)):
        ranking = [d.doc_id for d in index.retrieve(query, 3, retrievers=["dense"])["dense"]]
        assert ranking[0] in {"P2", "P3"} and ranking.index("P2") < ranking.index("P1")
    ranking = [d.doc_id for d in everything.retrieve(query, 3, retrievers=["dense"])["dense"]]
    assert ranking.index("P1") < ranking.index("P2")
    # recorded, and read back
    assert legal.manifest["dense_slots"] == ["issues", "reasoning", "new_principles"]
    assert everything.manifest["dense_slots"] is None
    assert IndexSpec.from_manifest(legal.manifest).dense_slots == DENSE_SLOTS
    with pytest.raises(UnknownNameError):
        IndexSpec(dense_slots=("holding",))
