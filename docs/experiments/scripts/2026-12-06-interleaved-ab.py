# usage: AQGR_DATASETS=<datasets> python docs/experiments/scripts/2026-12-06-interleaved-ab.py [built:]SRC_A [built:]SRC_B [INDEX_DIR | ARCHIVE_HOME]
"""One-off measurement: two versions of the code searched query by query in turn, for a paired
comparison on a machine whose speed drifts by a third between minutes.

Starts two worker processes (PYTHONPATH=SRC_A and SRC_B, e.g. two checkouts' src/), each with a
searcher loaded and warmed by query 1; then sends AILA queries 2-50 to both, each query to the two
in a random order (seed 0), and prints each side's p50, the median of the per-query ratios B/A,
how many queries returned the same hits, and each step's median. The searcher: INDEX_DIR (default
/work/runs/aila_idx), the `aqgr` benchmark system's index of AILA's 2,914 judgments, made on first
use as docs/experiments/scripts/2026-12-06-aila-search-p50.py makes it; or an archive home (a path ending
in "archive", as `bench_pipeline` makes, `hashing.v1`), searched through `Archive.search`. A SRC
written `built:SRC` (with INDEX_DIR) builds that index in its worker and searches the object the
build returned, as `python -m aqgr.eval.bench_search` does, instead of loading INDEX_DIR from disk
as `aqgr search` and the server do (2026-12-07-term-queries-and-ranked-runs.md)."""

import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path


def worker(where: str, built: bool = False) -> None:
    from aqgr.eval.datasets import load_dataset, read_queries
    from aqgr.foundation.paths import shared_datasets

    if where.endswith("archive"):
        from aqgr.eval.bench_pipeline import _archive

        queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())
        archive = _archive(Path(where), "hashing.v1")
        search = archive.search
    else:
        from aqgr.eval.pipeline_systems import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
        from aqgr.eval.systems import default_cache_dir
        from aqgr.pipeline.search import freeze_heap
        from aqgr.retrieval.embed_cache import EmbeddingCache
        from aqgr.retrieval.index import SummaryIndex

        dataset = load_dataset(shared_datasets() / "aila2019")
        archive = case_archive(dataset.docs_dir, dataset.doc_ids, default_cache_dir(), DEFAULT_SUMMARIZER)
        system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=DEFAULT_SUMMARIZER, embedder=None)
        spec = system.index_spec()
        index = None
        if built or not Path(where).exists():
            summaries = archive.summaries()
            full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
            with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
                index = SummaryIndex.build(summaries, spec, cache=cache, full_texts=full_texts)
            if not Path(where).exists():
                index.save(Path(where))
        searcher = system.searcher_for(archive, index if built else SummaryIndex.load(Path(where), spec))
        options = system.search_options().model_copy(update={"min_content_words": 1})
        queries = list(dataset.queries.values())

        def search(facts):
            return searcher.search(facts, options=options)

    search(queries[0])
    if not where.endswith("archive"):
        freeze_heap()
    print("ready", flush=True)
    for line in sys.stdin:
        t = time.perf_counter()
        result = search(queries[int(line)])
        ms = (time.perf_counter() - t) * 1000
        print(
            json.dumps({"ms": ms, "steps": result.timings_ms, "hits": [h.judgment_id for h in result.hits]}), flush=True
        )


def main(src_a: str, src_b: str, where: str) -> None:
    def start(src):
        built = src.startswith("built:")
        env = dict(os.environ, PYTHONPATH=src.removeprefix("built:"))
        p = subprocess.Popen(
            [sys.executable, __file__, "--worker", where, *(["built"] if built else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        if p.stdout.readline().strip() != "ready":
            raise SystemExit(f"the worker for {src} did not start")
        return p

    procs = {"A": start(src_a), "B": start(src_b)}
    rng, got, same = random.Random(0), {"A": [], "B": []}, 0
    for i in range(1, 50):
        out = {}
        for side in ["A", "B"] if rng.random() < 0.5 else ["B", "A"]:
            procs[side].stdin.write(f"{i}\n")
            procs[side].stdin.flush()
            out[side] = json.loads(procs[side].stdout.readline())
            got[side].append(out[side])
        same += out["A"]["hits"] == out["B"]["hits"]
    for p in procs.values():
        p.stdin.close()
        p.wait()
    a, b = [x["ms"] for x in got["A"]], [x["ms"] for x in got["B"]]
    print(
        f"A p50 {statistics.median(a):.1f}  B p50 {statistics.median(b):.1f}  median B/A "
        f"{statistics.median(y / x for x, y in zip(a, b)):.3f}  same hits {same}/49"
    )
    for step in got["A"][0]["steps"]:
        print(
            f"  {step}: A {statistics.median(x['steps'][step] for x in got['A']):.1f}  "
            f"B {statistics.median(x['steps'][step] for x in got['B']):.1f}"
        )


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(sys.argv[2], built=sys.argv[3:] == ["built"])
    else:
        main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "/work/runs/aila_idx")
