# Needs the kept-runs patch applied (`git show e1df21b:docs/experiments/2026-12-06-kept-runs.patch | git apply`): the code it measures was not kept.
# Usage: python docs/experiments/scripts/2026-12-06-kept-runs.py HOME N_QUERIES OUT.json
#   (HOME: an archive built by bench_pipeline, hashing.v1 embedder; run once with AQGR_KEPT_RUNS=0 and
#   once without, then compare the two OUT files with --compare A.json B.json)
"""One-off measurement: a search's question runs answered from the kept facts run (retrieval/tantivy_split.py)
against every run queried whole. Per query: the search's wall time and step timings, its hits (ids and scores),
and the lexical engines' split counts (private: read from the index's parts). An analysis, not an API."""

import json
import statistics
import sys
import time
from pathlib import Path


def measure(home: Path, n: int, out: Path) -> None:
    from aqgr.archive.home import Archive
    from aqgr.eval.datasets import read_queries
    from aqgr.foundation.paths import shared_datasets
    from aqgr.retrieval.index import IndexSpec

    archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
    queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[:n]
    archive.search(queries[0])  # loaded before the clock
    rows = []
    for facts in queries:
        t = time.perf_counter()
        result = archive.search(facts)
        rows.append(
            {
                "ms": (time.perf_counter() - t) * 1000,
                "steps": result.timings_ms,
                "hits": [[h.judgment_id, h.score] for h in result.hits],
            }
        )
    parts = archive._searcher().index._parts
    stats = {
        name: part.engine.split_stats.as_dict()
        for name, part in parts.items()
        if hasattr(getattr(part, "engine", None), "split_stats")
    }
    json.dump({"rows": rows, "split_stats": stats}, open(out, "w"))
    print(
        "p50 ms",
        round(statistics.median(r["ms"] for r in rows), 1),
        "retrieval p50",
        round(statistics.median(r["steps"]["retrieval"] for r in rows), 1),
        stats,
    )


def compare(a: Path, b: Path) -> None:
    ra, rb = json.load(open(a))["rows"], json.load(open(b))["rows"]
    same = sum(x["hits"] == y["hits"] for x, y in zip(ra, rb))
    same_ids = sum([h[0] for h in x["hits"]] == [h[0] for h in y["hits"]] for x, y in zip(ra, rb))
    print(f"queries {len(ra)}: hits identical {same}, same ids in the same order {same_ids}")
    for name, rows in (("A", ra), ("B", rb)):
        print(
            name,
            "p50",
            round(statistics.median(r["ms"] for r in rows), 1),
            "p95",
            round(sorted(r["ms"] for r in rows)[int(0.95 * (len(rows) - 1))], 1),
            {s: round(statistics.median(r["steps"][s] for r in rows), 1) for s in rows[0]["steps"]},
        )


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        measure(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
