# usage: AQGR_DATASETS=<datasets> python docs/experiments/scripts/2026-12-07-one-segment.py [OUT_DIR]
"""One-off measurement: the AILA index built with tantivy writers of one and of two threads, and
each lexical retriever's read of the 50 AILA queries (depth 1,000) on both.

Builds the `aqgr` benchmark system's index of AILA's 2,914 judgments twice into OUT_DIR (default:
a temporary folder), with `retrieval.lexical_tantivy.WRITER_THREADS` set to 2 and to 1 (each
commit leaves one segment per writer thread that received documents), prints each build's stage
seconds and segment counts, then reads every query from both indexes in turn, three rounds,
alternating which goes first, and prints the median read time of each and whether every run
(ids and scores, to the last bit) is the same."""

import statistics
import sys
import tempfile
import time
from pathlib import Path

import tantivy

import aqgr.retrieval.lexical_tantivy as lexical_tantivy
from aqgr.eval.datasets import load_dataset
from aqgr.eval.pipeline_systems import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
from aqgr.eval.systems import default_cache_dir
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.embed_cache import EmbeddingCache
from aqgr.retrieval.index import SummaryIndex

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
dataset = load_dataset(shared_datasets() / "aila2019")
archive = case_archive(dataset.docs_dir, dataset.doc_ids, default_cache_dir(), DEFAULT_SUMMARIZER)
spec = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=DEFAULT_SUMMARIZER, embedder=None).index_spec()
summaries = archive.summaries()
full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
indexes = {}
for threads in (2, 1):
    lexical_tantivy.WRITER_THREADS = threads
    where = out / f"threads-{threads}"
    with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
        SummaryIndex.build(summaries, spec, cache=cache, full_texts=full_texts).save(where)
    indexes[threads] = SummaryIndex.load(where, spec)
    segments = {
        name: tantivy.Index.open(str(where / name / "tantivy")).searcher().num_segments for name in ("fulltext", "bm25")
    }
    print(f"writer threads {threads}: build {indexes[threads].manifest['last_update']['seconds']}, segments {segments}")

queries = list(dataset.queries.values())
for name in ("fulltext", "bm25"):
    took, same = {t: [] for t in indexes}, True
    for round_ in range(3):
        for query in queries:
            runs = {}
            for threads in (2, 1) if round_ % 2 == 0 else (1, 2):
                started = time.perf_counter()
                runs[threads] = indexes[threads].retrieve(query, 1000, retrievers=[name])[name]
                took[threads].append(time.perf_counter() - started)
            same &= [(d.doc_id, d.score) for d in runs[1]] == [(d.doc_id, d.score) for d in runs[2]]
    two, one = (statistics.median(took[t]) * 1000 for t in (2, 1))
    print(
        f"{name}: two threads {two:.2f} ms, one {one:.2f} ms a read (ratio {one / two:.3f}); every run identical: {same}"
    )
