# usage: python docs/experiments/scripts/2026-12-06-graph-snapshot.py graph HOME store|snapshot
"""One-off measurement for the citation graph's snapshot (retrieval/citations/snapshot.py).

`graph HOME store|snapshot`: the seconds `CitationStore.graph_and_ids()` takes on HOME's
citations.sqlite in this process, read from the SQLite file (`store`: the snapshot is not
looked at) or from the snapshot (`snapshot`: it must hold the store's last commit; `aqgr
index`, or `CitationStore.keep_snapshot()`, makes it). The 2026-12-06 report ran it in a
fresh process per reading, cold (`sync; echo 3 > /proc/sys/vm/drop_caches` first) and warm,
the two ways interleaved. It reads private names: an analysis, not an API."""

import sys
import time
from pathlib import Path


def graph(home: Path, way: str) -> None:
    from aqgr.retrieval.citations import snapshot
    from aqgr.retrieval.citations.store import CitationStore

    store = CitationStore(home / "citations.sqlite")
    if way == "store":
        snapshot.load = lambda path, generation: None  # as before the snapshot: every read from SQLite
    elif snapshot.load(store.snapshot_path, store._generation()) is None:
        sys.exit(f"{store.snapshot_path} does not hold the store's last commit: run `aqgr index` first")
    t = time.perf_counter()
    found, ids = store.graph_and_ids()
    print(f"{way}: graph_and_ids {time.perf_counter() - t:.2f} s, {len(found)} links among {len(ids)} judgments")


if __name__ == "__main__":
    graph(Path(sys.argv[2]), sys.argv[3])
