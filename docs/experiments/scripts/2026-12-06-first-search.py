# Usage: python docs/experiments/scripts/2026-12-06-first-search.py HOME   (HOME: an archive built by bench_pipeline, hashing.v1)
"""One-off measurement: in a fresh process, the seconds to open an archive's searcher and then its first
search (the first AILA query). The A/B of the 2026-12-06 report ran it from two checkouts (old, new), five
times each, interleaved; before each old run `DROP INDEX IF EXISTS docs_live` on HOME/index/docs.sqlite,
before each new one `DocRegistry(HOME/index).upgrade()`; "cold" runs after `sync; echo 3 > /proc/sys/vm/drop_caches`,
"warm" runs right after. It reads a private method (`Archive._searcher`): an analysis, not an API."""

import sys
import time
from pathlib import Path

from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import IndexSpec

facts = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[0]
archive = Archive(Path(sys.argv[1]), index=IndexSpec(embedder="hashing.v1"))
t = time.perf_counter()
searcher = archive._searcher()
opened = time.perf_counter() - t
t = time.perf_counter()
archive.search(facts)
first = time.perf_counter() - t
print(
    f"open {opened:.2f} first search after open {first:.2f} total {opened + first:.2f} citations {searcher.citations is not None}"
)
