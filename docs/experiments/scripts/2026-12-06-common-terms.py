# Usage: python docs/experiments/scripts/2026-12-06-common-terms.py HOME N   (HOME: an archive built by bench_pipeline, hashing.v1)
"""One-off measurement: the full-text query with and without its common terms (SearchOptions.fulltext_max_df
1 against the default, FULLTEXT_MAX_DF above 100,000 judgments), on AILA queries 11-(10+N) after a first search:

the facts' full-text run alone (`SummaryIndex.retrieve(max_df=...)`, the terms' document frequencies
looked up included): median ms of each, and the mean share of the full query's first 12 / 100 / 1,000
judgments that the run without the common terms holds. Whole searches with and without the cut:
2026-12-06-ab-search.py HOME N fulltext_max_df=1.0.

It reads private names (`Archive._searcher`, `Searcher._query`): an analysis, not an API."""

import statistics
import sys
import time
from pathlib import Path

from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.pipeline.config import FULLTEXT_MAX_DF
from aqgr.retrieval.index import IndexSpec

TOPS = (12, 100, 1000)


def main(home: Path, n: int) -> None:
    archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
    queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[10 : 10 + n]
    searcher = archive._searcher()
    index = searcher.index
    archive.search(queries[0])
    print(f"{len(index):,} judgments; FULLTEXT_MAX_DF {FULLTEXT_MAX_DF}")

    runs_ms = {"every term": [], "without common": []}
    held = {d: [] for d in TOPS}
    for q in queries:
        facts = searcher._query(q, searcher.options)
        t = time.perf_counter()
        every = index.retrieve(facts, 1000, retrievers=["fulltext"])["fulltext"]
        runs_ms["every term"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        cut = index.retrieve(facts, 1000, retrievers=["fulltext"], max_df={"fulltext": FULLTEXT_MAX_DF})["fulltext"]
        runs_ms["without common"].append((time.perf_counter() - t) * 1000)
        for d in TOPS:
            held[d].append(
                len({x.doc_id for x in every[:d]} & {x.doc_id for x in cut[:d]}) / min(d, max(1, len(every)))
            )
    print("facts' full-text run, median ms:", {k: round(statistics.median(v), 1) for k, v in runs_ms.items()})
    print(
        "share of the full query's first k held (mean, min):",
        {d: (round(statistics.mean(v), 3), round(min(v), 3)) for d, v in held.items()},
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
