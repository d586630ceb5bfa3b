# Usage: python docs/experiments/scripts/2026-12-06-fulltext-once.py HOME N_QUERIES   (HOME: an archive built by bench_pipeline, hashing.v1)
"""One-off measurement: each of the first N AILA queries searched with `fulltext_questions` True and False, the
order alternating by query; the p50 of each arm, its steps' p50s, and how alike their hits are. It reads a
private method (`Archive._searcher`): an analysis, not an API."""

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
opts = {v: searcher.options.model_copy(update={"fulltext_questions": v}) for v in (True, False)}
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
        "fulltext_questions",
        v,
        "p50",
        round(statistics.median(ms[v])),
        "ms",
        {s: round(statistics.median(x)) for s, x in steps[v].items()},
    )
print("queries", n, "identical hits", same, "mean top-5 overlap", round(top5 / n, 2))
