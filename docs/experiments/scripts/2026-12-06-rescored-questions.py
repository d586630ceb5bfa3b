# Usage: python docs/experiments/scripts/2026-12-06-rescored-questions.py HOME N   (HOME: an archive built by bench_pipeline, hashing.v1)
"""One-off measurement: each of the first N AILA queries searched with `rescore_questions` True and False,
the order alternating by query (full text read once a search either way, as above 100,000 judgments);
p50 of the searches and of their steps, and how alike the hits are. It reads a private method
(`Archive._searcher`): an analysis, not an API."""

import statistics
import sys
import time
from pathlib import Path

from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import IndexSpec

home, n = Path(sys.argv[1]), int(sys.argv[2])
archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[:n]
searcher = archive._searcher()
opts = {
    v: searcher.options.model_copy(update={"rescore_questions": v, "fulltext_questions": False}) for v in (True, False)
}
archive.search(queries[0])
ms = {True: [], False: []}
steps = {True: {}, False: {}}
same = top5 = 0
for i, q in enumerate(queries):
    hits = {}
    for v in (True, False) if i % 2 == 0 else (False, True):
        t = time.perf_counter()
        r = archive.search(q, options=opts[v])
        ms[v].append((time.perf_counter() - t) * 1000)
        hits[v] = [h.judgment_id for h in r.hits]
        for s, x in r.timings_ms.items():
            steps[v].setdefault(s, []).append(x)
    same += hits[True] == hits[False]
    top5 += len(set(hits[True][:5]) & set(hits[False][:5]))
for v in (True, False):
    print(
        "rescore_questions",
        v,
        "p50",
        round(statistics.median(ms[v])),
        "ms",
        {s: round(statistics.median(x)) for s, x in steps[v].items()},
    )
print("queries", n, "identical hits", same, "mean top-5 overlap", round(top5 / n, 2))
