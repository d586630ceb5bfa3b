# Usage: python docs/experiments/scripts/2026-12-06-split-search.py HOME N [FROM]   (HOME: an archive built by bench_pipeline, hashing.v1;
# FROM: split from this many documents, default SPLIT_FROM). Needs the split it measures, which was not
# adopted: `git show a357987:docs/experiments/2026-12-06-split-search.patch | git apply` first.
"""One-off measurement: each of the first N AILA queries searched with the tantivy searches of large
indexes split in two halves (retrieval/lexical_tantivy.py SPLIT_FROM) and whole, the order alternating by
query; p50 of the searches and their steps, and whether the hits are the same (they must be: the split is
exact). It reads a private method (`Archive._searcher`) and sets a module constant: an analysis, not an API."""

import statistics
import sys
import time
from pathlib import Path

import aqgr.retrieval.lexical_tantivy as engine
from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import IndexSpec

home, n = Path(sys.argv[1]), int(sys.argv[2])
archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[:n]
split_from = int(sys.argv[3]) if len(sys.argv) > 3 else engine.SPLIT_FROM
archive.search(queries[0])
ms = {True: [], False: []}
steps = {True: {}, False: {}}
same = 0
for i, q in enumerate(queries):
    hits = {}
    for split in (True, False) if i % 2 == 0 else (False, True):
        engine.SPLIT_FROM = split_from if split else 2**62
        t = time.perf_counter()
        r = archive.search(q)
        ms[split].append((time.perf_counter() - t) * 1000)
        hits[split] = [(h.judgment_id, h.score, h.retrieval_score) for h in r.hits]
        for s, x in r.timings_ms.items():
            steps[split].setdefault(s, []).append(x)
    same += hits[True] == hits[False]
for split in (True, False):
    print(
        "split" if split else "whole",
        "p50",
        round(statistics.median(ms[split])),
        "ms",
        {s: round(statistics.median(x)) for s, x in steps[split].items()},
    )
print("queries", n, "identical hits (ids, scores, retrieval scores)", same)
