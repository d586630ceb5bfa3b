"""The embedded index updated in place: add, replace, remove; generations; killed at any point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from retrieval_samples import CORPUS, summary

from aqgr.foundation.errors import IndexMismatchError
from aqgr.retrieval.documents import summary_fingerprint
from aqgr.retrieval.embedded.docstore import DocStore
from aqgr.retrieval.embedded.index import SummaryIndex
from aqgr.schemas.summary import Parties, Provenance, StructuredSummary

REPO = Path(__file__).resolve().parents[2]


def _made_again(s: StructuredSummary, **slots) -> StructuredSummary:
    """The same judgment summarised again (new provenance time), with some slots changed."""
    data = s.model_dump()
    data.update(slots)
    data["provenance"] = Provenance(engine="test.v1", engine_version="2", source_sha256="1" * 64).model_dump()
    return StructuredSummary.model_validate(data)


def _ids(index, query, retriever, k=10):
    return [d.doc_id for d in index.retrieve(query, k, retrievers=[retriever])[retriever]]


@pytest.fixture
def built(tmp_path, hashing_spec):
    full = {s.judgment_id: f"{s.facts} judgment text of {s.judgment_id}" for s in CORPUS}
    return SummaryIndex.build(CORPUS, hashing_spec, directory=tmp_path / "index", full_texts=full), full


def test_add_replace_remove_in_place(built, hashing_spec, tmp_path):
    index, full = built
    generation = index.manifest["generation"]
    new = summary(
        "C9",
        parties=Parties(appellants=["Quagga Mills"], respondents=["State"]),
        facts="A zebra crossing accident; the quagga mills truck was negligent.",
    )
    full["C9"] = "zebra crossing quagga negligence"
    counts = index.update([new], full_texts=full)
    assert counts == {"added": 1, "replaced": 0, "removed": 0}
    assert "C9" in index and len(index) == 6
    for retriever in ("bm25", "fulltext"):
        assert _ids(index, "zebra quagga", retriever) == ["C9"]
    assert index.manifest["generation"] == generation + 1

    changed = _made_again(CORPUS[1], facts="Compensation for a giraffe enclosure was disputed.")
    assert index.update([changed], full_texts={"C2": "giraffe enclosure"}) == {"added": 0, "replaced": 1, "removed": 0}
    assert _ids(index, "giraffe", "bm25") == ["C2"] and _ids(index, "giraffe", "fulltext") == ["C2"]
    assert "giraffe" in index.document_text("C2") and "Land was acquired" not in index.document_text("C2")
    assert index.fingerprints()["C2"] == summary_fingerprint(changed) != summary_fingerprint(CORPUS[1])
    assert len(index) == 6

    assert index.update([], ["C9", "C404"]) == {"added": 0, "replaced": 0, "removed": 1}
    assert "C9" not in index and len(index) == 5
    assert all("C9" not in _ids(index, "zebra quagga accident truck", r) for r in index.retrievers)

    # what is on disk is what the object says
    loaded = SummaryIndex.load(tmp_path / "index", expect=hashing_spec)
    assert sorted(loaded.doc_ids) == sorted(index.doc_ids) and loaded.fingerprints() == index.fingerprints()
    for query in ("dowry death cruelty", "giraffe", "Section 304 Part II sudden quarrel"):
        assert loaded.retrieve(query, 5) == index.retrieve(query, 5)


def test_unchanged_summaries_cost_nothing(built):
    index, full = built
    generation = index.manifest["generation"]
    assert index.update(CORPUS, full_texts=full) == {"added": 0, "replaced": 0, "removed": 0}
    assert index.manifest["generation"] == generation


def test_an_updates_window_vectors_wait_on_disk_and_a_killed_updates_spool_is_removed(
    built, hashing_spec, tmp_path, monkeypatch
):
    """The dense part spools an update's vectors to a file until its commit (a million judgments'
    windows would not fit in memory); the file goes with the commit, and one a killed update left
    goes with the next update's clean-up."""
    from aqgr.retrieval.embedded.retrievers import Dense

    index, full = built
    dense = tmp_path / "index" / "dense"
    stale = dense / f"{Dense.SPOOL_PREFIX}killedupdate.f32"
    stale.write_bytes(b"\0" * 1536)
    seen = []
    real_commit = Dense.commit

    def commit(self):
        seen.extend((p.name, p.stat().st_size) for p in dense.glob(f"{Dense.SPOOL_PREFIX}*") if p != stale)
        return real_commit(self)

    monkeypatch.setattr(Dense, "commit", commit)
    new = summary("C9", facts="A zebra crossing accident; the quagga mills truck was negligent.")
    index.update([new], full_texts={**full, "C9": "zebra quagga"})
    assert len(seen) == 1 and seen[0][1] > 0 and seen[0][1] % (4 * index.manifest["embedder"]["dim"]) == 0
    assert not list(dense.glob(f"{Dense.SPOOL_PREFIX}*"))  # this update's spool and the stale one
    assert _ids(index, "zebra crossing quagga mills truck", "dense", k=1) == ["C9"]


def test_a_part_that_fails_to_commit_lets_the_others_writers_go(built, hashing_spec, tmp_path, monkeypatch):
    """A full disk while the dense part writes its segment, at the update's last commit: the lexical
    parts' writers are rolled back and released at once (not when the failed index is collected),
    so the next update, in the same process (a server), is not refused as a second writer."""
    import errno

    from aqgr.retrieval.dense.store import DenseStore

    index, full = built

    def full_disk(self, vectors, window_n):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(DenseStore, "add_segment", full_disk)
    new = summary("C9", facts="A zebra crossing accident; the quagga mills truck was negligent.")
    with pytest.raises(OSError, match="No space"):
        index.update([new], full_texts={**full, "C9": "zebra quagga"})
    monkeypatch.undo()
    again = SummaryIndex.load(tmp_path / "index", expect=hashing_spec)  # `index` is still alive
    assert again.update([new], full_texts={**full, "C9": "zebra quagga"}) == {"added": 1, "replaced": 0, "removed": 0}
    assert _ids(again, "zebra quagga", "fulltext") == ["C9"] and _ids(
        again, "zebra crossing quagga mills truck", "dense", k=1
    ) == ["C9"]


def test_an_update_that_stops_before_its_manifest_leaves_the_previous_generation(
    built, hashing_spec, tmp_path, monkeypatch
):
    import aqgr.retrieval.embedded.index as index_module

    index, full = built
    before = {q: index.retrieve(q, 5) for q in ("dowry death cruelty", "market value notification")}

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed before the manifest")

    monkeypatch.setattr(index_module, "write_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        index.update(
            [summary("C9", facts="Dowry death cruelty dowry dowry."), _made_again(CORPUS[1], facts="Nothing.")],
            ["C3"],
            full_texts=full,
        )
    monkeypatch.undo()
    reader = SummaryIndex.load(tmp_path / "index", expect=hashing_spec)
    assert sorted(reader.doc_ids) == sorted(s.judgment_id for s in CORPUS)
    # the old generation's documents (the lexical engines' statistics may count the unfinished
    # documents until the next update rolls them back: scores can move a little, documents not)
    assert {q: {r: {d.doc_id for d in run} for r, run in reader.retrieve(q, 5).items()} for q in before} == {
        q: {r: {d.doc_id for d in run} for r, run in runs.items()} for q, runs in before.items()
    }
    # the next update rolls the unfinished one back and does it again
    writer = SummaryIndex.load(tmp_path / "index", expect=hashing_spec)
    assert (
        writer.update([summary("C9", facts="Dowry death cruelty dowry dowry.")], ["C3"], full_texts=full)["added"] == 1
    )
    assert sorted(writer.doc_ids) == ["C1", "C2", "C4", "C5", "C9"]
    _assert_each_judgment_once(tmp_path / "index", writer)


def _assert_each_judgment_once(directory: Path, index) -> None:
    """No judgment lost or doubled: the registry's live rows, each retriever's documents and the
    manifest agree."""
    generation = json.loads((directory / "manifest.json").read_text())["generation"]
    registry = DocStore(directory)
    ids, n_of = registry.live(generation)
    live = [d for d in ids if d is not None]
    assert len(live) == len(set(live)) == len(n_of) == len(index)
    for name in ("bm25", "fulltext"):
        if name in index.retrievers:
            assert index._parts[name].n_docs() == len(index), name
    registry.close()


def _steps_to_stage(registry: DocStore, generation: int, rows: list[tuple]) -> int:
    """SQLite virtual-machine steps (in thousands) that staging `rows` takes."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    registry._db.set_progress_handler(count, 1000)
    registry.stage(generation, rows, [])
    registry._db.set_progress_handler(None, 0)
    return steps[0]


def test_staging_looks_documents_up_by_id_not_by_scanning_the_live_ones(tmp_path):
    """A batch costs the same in an index of 2,000 documents as in one of 40,000: a cold build of a
    million judgments is linear, not quadratic (the planner once scanned every live row per batch)."""
    registry = DocStore(tmp_path, create=True)
    batch = lambda start: [(n, f"J{n}", "f", {"facts": "x"}) for n in range(start, start + 500)]  # noqa: E731
    for start in range(0, 2000, 500):
        registry.stage(1, batch(start), [])
    small = _steps_to_stage(registry, 2, batch(2000))
    for start in range(2500, 40_000, 500):
        registry.stage(3, batch(start), [])
    large = _steps_to_stage(registry, 4, batch(40_000))
    assert large < 2 * small + 20, (small, large)  # 26 and 26 now; 64 and 901 when it scanned
    registry.close()


def _live_plan(registry: DocStore) -> str:
    return " ".join(
        row[-1]
        for row in registry._db.execute(
            "EXPLAIN QUERY PLAN SELECT n, judgment_id FROM docs WHERE gen <= 1 AND (dead IS NULL OR dead > 1)"
        )
    )


def test_the_live_documents_are_read_from_an_index_not_the_rows_and_an_index_without_it_is_refused(built):
    """Every load reads which judgment each n stands for; the rows' pages hold the slot texts, so at
    a million documents reading them costs seconds. An index made before `docs_live` (an older
    aqgr's) is refused, with the command that makes it anew."""
    index, _ = built
    assert "COVERING INDEX docs_live" in _live_plan(index._registry)
    plan = " ".join(
        row[-1] for row in index._registry._db.execute("EXPLAIN QUERY PLAN SELECT n FROM docs WHERE gen > 1")
    )
    assert "docs_live" in plan  # the reads by generation use it too
    index._registry._db.execute("DROP INDEX docs_live")  # as an older aqgr made it
    index._registry._db.execute("CREATE INDEX docs_gen ON docs (gen)")
    with pytest.raises(IndexMismatchError, match=r"\(docs_live\): `aqgr index --rebuild` makes it anew"):
        SummaryIndex.load(index.directory)


def _indexes(registry: DocStore) -> set[str]:
    return {
        row[0]
        for row in registry._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'docs' AND name NOT LIKE 'sqlite_%'"
        )
    }


def test_a_new_index_has_no_redundant_generation_index(built):
    assert _indexes(built[0]._registry) == {"docs_live", "docs_judgment", "docs_dead"}


_KILLER = r"""
import os, signal, sys
sys.path[:0] = [sys.argv[3]]
from retrieval_samples import CORPUS, summary
import aqgr.retrieval.embedded.index as m
from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

point, directory = sys.argv[1], sys.argv[2]
spec = IndexSpec(embedder="hashing.v1")
m.BATCH, m.COMMIT_EVERY = 2, 4
docs = [summary(f"K{i}", facts=f"Judgment number {i} about dowry and land {i % 3}.") for i in range(11)]
full = {d.judgment_id: d.facts for d in docs}
calls = {"n": 0}
target = {"stage": "stage", "add": "add", "commit": "write_manifest", "purge": "_purge"}.get(point.split(":")[0])
after = int(point.split(":")[1])

def die():
    calls["n"] += 1
    if calls["n"] >= after:
        os.kill(os.getpid(), signal.SIGKILL)

if target == "stage":
    original = m.DocStore.stage
    def stage(self, *a, **k):
        out = original(self, *a, **k); die(); return out
    m.DocStore.stage = stage
elif target == "write_manifest":
    original = m.write_manifest
    def write(*a, **k):
        die(); return original(*a, **k)
    m.write_manifest = write
elif target == "_purge":
    original = m.SummaryIndex._purge
    def purge(self):
        die(); return original(self)
    m.SummaryIndex._purge = purge
elif target == "add":
    from aqgr.retrieval.embedded import retrievers
    original = retrievers.Dense.add
    def add(self, *a, **k):
        out = original(self, *a, **k); die(); return out
    retrievers.Dense.add = add
try:
    index = SummaryIndex.load(directory, expect=spec)
    index.update(docs, full_texts=full)
except Exception:
    SummaryIndex.build(docs, spec, directory=directory, full_texts=full)
"""


@pytest.mark.parametrize("point", ["stage:1", "add:2", "commit:2", "purge:2"])
def test_killed_at_any_point_the_next_run_completes_it(point, tmp_path, hashing_spec):
    """kill -9 inside a build (after staging rows, after adding to the parts, before and after a
    manifest): what was committed stays readable, and the next run ends with every judgment
    indexed exactly once."""
    directory = tmp_path / "index"
    script = tmp_path / "killer.py"
    script.write_text(_KILLER)
    tests = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), tests])}
    done = subprocess.run(
        [sys.executable, str(script), point, str(directory), tests], env=env, capture_output=True, text=True
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    if (directory / "manifest.json").exists():
        readable = SummaryIndex.load(directory, expect=hashing_spec)  # the committed generation
        assert len(readable) == len(set(readable.doc_ids))
        readable.close()
    finished = subprocess.run(
        [sys.executable, str(script), "none:0", str(directory), tests], env=env, capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr
    index = SummaryIndex.load(directory, expect=hashing_spec)
    assert sorted(index.doc_ids) == sorted(f"K{i}" for i in range(11))
    _assert_each_judgment_once(directory, index)
    assert _ids(index, "judgment number 7", "fulltext", k=1) == ["K7"]
