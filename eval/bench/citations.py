"""Citation graph benchmark (not a test): wall time and peak RSS of one full build, and the
graph's size in memory.

    python -m aqgr.eval.bench.citations --data ../shared/datasets/aila2019/Object_casedocs --impl texts|store [--limit N]

`texts`: `CitationGraph.from_texts` over every judgment (the whole archive parsed in
memory); `store`: `CitationStore.add` into a fresh SQLite file, texts streamed from the
folder and re-read by `text_of`, then `graph()`. Run it in a fresh process per figure
(peak RSS is the process's own `ru_maxrss`); the graph's size is what tracemalloc sees
allocated while it is made from the pairs and mentions (`texts`) or read from the store
(`store`: the second read, mentions left in the file), numpy arrays included; `store_kb`:
the SQLite file with its write-ahead log. `cpu_s`: the process's CPU time up to then (less
disturbed than wall time on a shared machine). `store` then takes 20 judgments (seeded
choice) out and adds them back one `add` at a time: the median time of one, and how many
other judgments each re-read on average. Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.citations", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--impl", choices=("texts", "store"), required=True)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    files = sorted(args.data.glob("*.txt"))[: args.limit or None]
    path_of = {f.stem: f for f in files}

    def text_of(doc_id: str) -> str:
        return path_of[doc_id].read_text(encoding="utf-8", errors="replace")

    def texts():
        for doc_id in path_of:
            yield doc_id, text_of(doc_id)

    from aqgr.retrieval.citations import CitationGraph

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        if args.impl == "texts":
            graph = CitationGraph.from_texts(texts())
            built = time.perf_counter() - started
            pairs, mentions = graph.pairs(), dict(graph.mentions)
            del graph
            tracemalloc.start()
            graph = CitationGraph(pairs, mentions)
            size = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            disk, cpu, increment = None, _cpu_s(), {}
        else:
            from aqgr.retrieval.citations.store import CitationStore

            store = CitationStore(Path(tmp) / "citations.sqlite")
            store.add(texts(), text_of=text_of)
            built = time.perf_counter() - started
            graph = store.graph()  # once first: numpy's and sqlite3's first-use allocations are not the graph's
            del graph
            tracemalloc.start()
            graph = store.graph()
            size = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            disk = sum(p.stat().st_size for p in Path(tmp).glob("citations.sqlite*"))  # with its write-ahead log
            cpu = _cpu_s()
            # Incremental: take 20 judgments out, then add them back one at a time.
            held = random.Random(0).sample(sorted(path_of), min(20, len(path_of)))
            store.remove(held, text_of=text_of)
            seconds, reads = [], Counter()

            def counted(doc_id: str) -> str:
                reads[doc_id] += 1
                return text_of(doc_id)

            for doc_id in held:
                began = time.perf_counter()
                store.add([(doc_id, text_of(doc_id))], text_of=counted)
                seconds.append(time.perf_counter() - began)
            increment = {
                "add_one_median_s": round(statistics.median(seconds), 3),
                "add_one_rereads_mean": round((sum(reads.values()) - 2 * len(held)) / len(held), 2),
            }
        print(
            json.dumps(
                {
                    "impl": args.impl,
                    "judgments": len(files),
                    "pairs": len(graph),
                    "build_s": round(built, 2),
                    "cpu_s": round(cpu, 2),
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                    "graph_kb": round(size / 1024),
                    "store_kb": round(disk / 1024) if disk else None,
                    **increment,
                }
            )
        )


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
