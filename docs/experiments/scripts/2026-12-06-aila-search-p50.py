# usage: python docs/experiments/scripts/2026-12-06-aila-search-p50.py INDEX_DIR [LABEL]
"""One-off measurement: search p50/p95 on AILA's 2,914 judgments, each query once.

Builds the `aqgr` benchmark system's index (int8 MiniLM, the summaries of the eval cache) into
INDEX_DIR once, then loads it and times `Searcher.search` for queries 2-50 after a warm-up
search of query 1 (each query once: a second pass would find the facts' windows memoised). To compare two versions of the code, run it from two checkouts in turn
(PYTHONPATH=<checkout>/src), several times each: this machine's speed drifts between runs."""

import statistics
import sys
import time
from pathlib import Path

from aqgr.eval.datasets import load_dataset
from aqgr.eval.pipeline_systems import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
from aqgr.eval.systems import default_cache_dir
from aqgr.foundation.paths import shared_datasets
from aqgr.pipeline.search import freeze_heap
from aqgr.retrieval.embed_cache import EmbeddingCache
from aqgr.retrieval.index import SummaryIndex

dataset = load_dataset(shared_datasets() / "aila2019")
archive = case_archive(dataset.docs_dir, dataset.doc_ids, default_cache_dir(), DEFAULT_SUMMARIZER)
system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=DEFAULT_SUMMARIZER, embedder=None)
spec = system.index_spec()
where = Path(sys.argv[1])
if not where.exists():
    summaries = archive.summaries()
    full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
    with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
        SummaryIndex.build(summaries, spec, cache=cache, full_texts=full_texts).save(where)
searcher = system.searcher_for(archive, SummaryIndex.load(where, spec))
options = system.search_options().model_copy(update={"min_content_words": 1})
queries = list(dataset.queries.values())
searcher.search(queries[0], options=options)
freeze_heap()
ms = []
for q in queries[1:]:
    t = time.perf_counter()
    searcher.search(q, options=options)
    ms.append((time.perf_counter() - t) * 1000)
print(
    sys.argv[2] if len(sys.argv) > 2 else "",
    "p50",
    round(statistics.median(ms), 1),
    "p95",
    round(sorted(ms)[int(0.95 * len(ms))], 1),
)
