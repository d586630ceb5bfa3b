# Usage: python docs/experiments/scripts/2026-12-06-ab-search.py HOME N OPTION=VALUE [OPTION=VALUE ...]
#   HOME: an archive built by bench_pipeline (hashing.v1); VALUE: JSON (true, false, 1.0, ...)
"""One-off measurement: whole searches with the archive's default SearchOptions against the same with the
options given, on AILA queries 11-(10+N) after a first search; the two alternate which goes first by
query. Prints the p50 / p95 of each and of its steps, and how alike the hits are. It reads a private
name (`Archive._searcher`): an analysis, not an API."""

import json
import statistics
import sys
import time
from pathlib import Path

from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import IndexSpec


def main(home: Path, n: int, changes: dict) -> None:
    archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
    queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[10 : 10 + n]
    searcher = archive._searcher()
    archive.search(queries[0])
    opts = {"default": searcher.options, "changed": searcher.options.model_copy(update=changes)}
    print(f"{len(searcher.index):,} judgments; changed: {changes}")
    ms = {k: [] for k in opts}
    steps = {k: {} for k in opts}
    same = top5 = 0
    for i, q in enumerate(queries):
        hits = {}
        for k in list(opts) if i % 2 == 0 else list(opts)[::-1]:
            t = time.perf_counter()
            r = archive.search(q, options=opts[k])
            ms[k].append((time.perf_counter() - t) * 1000)
            hits[k] = [h.judgment_id for h in r.hits]
            for s, x in r.timings_ms.items():
                steps[k].setdefault(s, []).append(x)
        same += hits["default"] == hits["changed"]
        top5 += len(set(hits["default"][:5]) & set(hits["changed"][:5]))
    for k in opts:
        print(
            f"{k}: p50 {statistics.median(ms[k]):.0f} ms, p95 {sorted(ms[k])[int(0.95 * (len(ms[k]) - 1))]:.0f} ms;",
            "steps p50",
            {s: round(statistics.median(x)) for s, x in steps[k].items()},
        )
    print(f"queries {len(queries)}: identical hits {same}, mean top-5 overlap {top5 / len(queries):.2f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), {k: json.loads(v) for k, v in (a.split("=", 1) for a in sys.argv[3:])})
