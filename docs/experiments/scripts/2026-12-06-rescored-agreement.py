# Usage: python docs/experiments/scripts/2026-12-06-rescored-agreement.py HOME N   (HOME: an archive built by bench_pipeline, hashing.v1)
"""One-off measurement: for the first N AILA queries' generated questions, each question's summary BM25 run
searched over the whole archive and re-scored from the facts' run (`SummaryIndex.rescore`): how many of
the searched run's first 12 / 100 / 1,000 judgments the re-scored run holds there, the time of each, and
how far the scores of the judgments in both differ. It reads private methods (`Archive._searcher`,
`Searcher._query`): an analysis, not an API."""

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
index = searcher.index
found = {12: [], 100: [], 1000: []}
ms = {"searched": [], "rescored": []}
worst = 0.0
for q in queries:
    plan = searcher.plan(q)
    facts = searcher._query(plan.facts, plan.options)
    facts_run = dict(plan.facts_runs)["bm25"]
    for question in plan.questions:
        text = f"{question}\n{facts}"
        t = time.perf_counter()
        searched = index.retrieve(text, plan.depth, retrievers=["bm25"])["bm25"]
        ms["searched"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        rescored = index.rescore(text, facts, {"bm25": facts_run})["bm25"]
        ms["rescored"].append((time.perf_counter() - t) * 1000)
        for k in found:
            found[k].append(
                len({d.doc_id for d in searched[:k]} & {d.doc_id for d in rescored[:k]}) / min(k, len(searched))
            )
        exact = {d.doc_id: d.score for d in searched}
        worst = max([worst] + [abs(d.score - exact[d.doc_id]) / exact[d.doc_id] for d in rescored if d.doc_id in exact])
print("question runs", len(ms["searched"]))
print("p50 ms", {k: round(statistics.median(v), 1) for k, v in ms.items()})
print(
    "share of the searched run's first k in the re-scored run's first k (mean, min):",
    {k: (round(statistics.mean(v), 3), round(min(v), 3)) for k, v in found.items()},
)
print("largest relative score difference of a judgment in both", f"{worst:.2e}")
