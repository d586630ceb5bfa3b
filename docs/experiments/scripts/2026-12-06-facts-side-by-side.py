# Usage: python docs/experiments/scripts/2026-12-06-facts-side-by-side.py [ROUNDS]   ($AQGR_DATASETS/aila2019, the eval cache's summaries)
"""One-off measurement on the 2,914 AILA judgments, set up as `python -m aqgr.eval.bench_search` is: each query
searched with the facts' full-text read beside the other retrievers (new) and with them (old), alternating.
"Old" is had by renaming the module's FULLTEXT constant, so that no retriever is split off: an analysis, not an API."""

import statistics
import sys
import time

import aqgr.pipeline.search as S
from aqgr.eval.datasets import load_dataset
from aqgr.eval.pipeline_systems import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
from aqgr.eval.systems import default_cache_dir
from aqgr.foundation.paths import shared_datasets
from aqgr.pipeline.search import freeze_heap
from aqgr.retrieval.embed_cache import EmbeddingCache
from aqgr.retrieval.index import SummaryIndex

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
dataset = load_dataset(shared_datasets() / "aila2019")
archive = case_archive(dataset.docs_dir, dataset.doc_ids, default_cache_dir(), DEFAULT_SUMMARIZER)
summaries = archive.summaries()
system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=DEFAULT_SUMMARIZER, embedder=None)
spec = system.index_spec()
full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
    index = SummaryIndex.build(summaries, spec, cache=cache, full_texts=full_texts)
searcher = system.searcher_for(archive, index)
options = system.search_options().model_copy(update={"min_content_words": 1})
queries = list(dataset.queries.values())
searcher.search(queries[0], options=options)
freeze_heap()
ms = {"old": [], "new": []}
steps = {"old": {}, "new": {}}
same = 0
for r in range(rounds):
    for i, q in enumerate(queries):
        got = {}
        for arm in ("new", "old") if (i + r) % 2 == 0 else ("old", "new"):
            S.FULLTEXT = "fulltext" if arm == "new" else "no-such-retriever"
            t = time.perf_counter()
            res = searcher.search(q, options=options)
            ms[arm].append((time.perf_counter() - t) * 1000)
            got[arm] = [(h.judgment_id, h.score) for h in res.hits]
            for s, x in res.timings_ms.items():
                steps[arm].setdefault(s, []).append(x)
        same += got["old"] == got["new"]
for arm in ("old", "new"):
    print(
        arm,
        "p50",
        round(statistics.median(ms[arm]), 1),
        {s: round(statistics.median(x), 1) for s, x in steps[arm].items()},
    )
print("identical hits", same, "of", rounds * len(queries))
