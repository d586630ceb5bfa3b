# Usage: python docs/experiments/scripts/2026-12-06-summary-common-terms.py BM25_DIR   (an index's bm25 folder, e.g. HOME/index/bm25)
"""One-off measurement: AILA queries 11-30 as summary BM25 facts queries (placeholders dropped, words.v2), without
their terms held by more than F of the summaries, for F = 1 (none left out), 0.5, 0.4, 0.3, 0.2: the median
milliseconds of a search 1,000 deep and the median share of the query's postings left out
(2026-12-06-summary-common-terms report)."""

import statistics
import sys
import time
from pathlib import Path

from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.lexical_tantivy import TantivyEngine
from aqgr.retrieval.text import strip_masks, tokenizers

tokenize = tokenizers.create("words.v2")
queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[10:30]
engine = TantivyEngine.open(Path(sys.argv[1]))
n = len(engine)
print(f"{n:,} summaries")
for share in (1.0, 0.5, 0.4, 0.3, 0.2):
    ms, left_out = [], []
    for q in queries:
        terms = tokenize(strip_masks(q) or q)
        distinct = list(dict.fromkeys(terms))
        dfs = engine.doc_freqs(distinct)
        keep = {t for t, df in zip(distinct, dfs) if df <= share * n}
        left_out.append(sum(df for t, df in zip(distinct, dfs) if t not in keep) / max(1, sum(dfs)))
        started = time.perf_counter()
        engine.search([t for t in terms if t in keep], 1000)
        ms.append((time.perf_counter() - started) * 1000)
    print(
        f"share {share}: search {statistics.median(ms):.1f} ms (median), postings left out {statistics.median(left_out):.3f}"
    )
