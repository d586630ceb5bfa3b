# usage: python docs/experiments/scripts/2026-12-06-search-parts.py HOME N
"""One-off measurement: where a search's time goes in an archive built by bench_pipeline (hashing.v1).

Opens HOME, runs the first AILA query (not counted), then the next N-1 queries through
`Archive.search`, with timers wrapped around the search steps, the index's retriever runs
(`SummaryIndex._run`, by retriever) and a few helpers. Prints the p50 and the step medians,
then each part's mean time per search, summed over every thread that ran it (the runs of one
search go side by side on worker threads, so the parts add up to more than the search's wall
time: read them as the time the two cores spend). It wraps private names: an analysis, not an API."""

import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import aqgr.pipeline.search as S
import aqgr.retrieval.index as I
from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import IndexSpec

acc = defaultdict(float)


def timed(name, f):
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            acc[name] += time.perf_counter() - t

    return g


archive = Archive(Path(sys.argv[1]), index=IndexSpec(embedder="hashing.v1"))
qs = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[: int(sys.argv[2])]
archive.search(qs[0])
s = archive._searcher()
W = {
    "plan": (S.Searcher, "plan"),
    "retrieve": (S.Searcher, "retrieve"),
    "fuse": (S.Searcher, "fuse"),
    "explain": (S.Searcher, "explain"),
    "pin": (S.Searcher, "pin"),
    "_retrieve": (S.Searcher, "_retrieve"),
    "_summaries_of": (S.Searcher, "_summaries_of"),
    "_refer": (S.Searcher, "_refer"),
    "_fuse": (S.Searcher, "_fuse"),
    "facets": (S.Searcher, "facets"),
    "index.retrieve": (I.SummaryIndex, "retrieve"),
    "index.rescore": (I.SummaryIndex, "rescore"),
}
for name, (cls, attr) in W.items():
    setattr(cls, attr, timed(name, getattr(cls, attr)))
orig_run = I.SummaryIndex._run


def run(self, part, *a, **k):
    t = time.perf_counter()
    try:
        return orig_run(self, part, *a, **k)
    finally:
        acc["run " + type(part).__name__] += time.perf_counter() - t


I.SummaryIndex._run = run
s.questions.generate = timed("generate", s.questions.generate)
s.explainer.explain = timed("explainer.explain", s.explainer.explain)
if s.citations is not None:
    s.citations.referred = timed("citations.referred", s.citations.referred)
ms, stages = [], defaultdict(list)
for q in qs[1:]:
    t = time.perf_counter()
    r = archive.search(q)
    ms.append((time.perf_counter() - t) * 1000)
    for k, v in r.timings_ms.items():
        stages[k].append(v)
n = len(qs) - 1
print("p50", round(statistics.median(ms), 1), {k: round(statistics.median(v), 1) for k, v in stages.items()})
for k, v in sorted(acc.items(), key=lambda kv: -kv[1]):
    print(f"{k:22s} mean ms/search {v * 1000 / n:7.1f}")
