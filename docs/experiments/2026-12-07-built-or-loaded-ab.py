# usage: AQGR_DATASETS=<datasets> python docs/experiments/2026-12-07-built-or-loaded-ab.py HOW:SRC HOW:SRC [INDEX_DIR]
"""One-off measurement: two searchers, each in its own process, sent AILA queries 2-50 in turn (a
random order per query, seed 0), for a paired comparison on a machine whose speed drifts.

HOW is `built` (the `aqgr` benchmark system's index of the 2,914 AILA judgments built in that process
and searched there, as `python -m aqgr.eval.bench_search` does) or `loaded` (INDEX_DIR, default
/work/runs/aila_idx, opened from disk as `aqgr search` and the server do; made as
docs/experiments/2026-12-06-interleaved-ab.py makes it); SRC, the checkout's src/ whose code that
process runs. `built:A/src built:B/src` compares two versions of the code in the bench's own
setting; `built:X/src loaded:X/src` compares the two settings on one code. Prints each side's p50,
the median of the per-query ratios B/A, how many queries returned the same hits, and each step's median."""
import json, os, random, statistics, subprocess, sys, tempfile, time
from pathlib import Path


def worker(how: str, where: str) -> None:
    from aqgr.eval.datasets import load_dataset
    from aqgr.eval.pipeline_systems import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
    from aqgr.eval.systems import default_cache_dir
    from aqgr.foundation.paths import shared_datasets
    from aqgr.pipeline.search import freeze_heap
    from aqgr.retrieval.embed_cache import EmbeddingCache
    from aqgr.retrieval.index import SummaryIndex

    dataset = load_dataset(shared_datasets() / "aila2019")
    archive = case_archive(dataset.docs_dir, dataset.doc_ids, default_cache_dir(), DEFAULT_SUMMARIZER)
    system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=DEFAULT_SUMMARIZER, embedder=None)
    spec = system.index_spec()
    if how == "built":  # as bench_search: built here, saved to a temporary folder, the built object searched
        summaries = archive.summaries()
        full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
        with tempfile.TemporaryDirectory() as tmp:
            with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
                index = SummaryIndex.build(summaries, spec, cache=cache, full_texts=full_texts)
            index.save(Path(tmp) / "index")
    else:
        index = SummaryIndex.load(Path(where), spec)
    searcher = system.searcher_for(archive, index)
    options = system.search_options().model_copy(update={"min_content_words": 1})
    queries = list(dataset.queries.values())
    searcher.search(queries[0], options=options)
    freeze_heap()
    print("ready", flush=True)
    for line in sys.stdin:
        t = time.perf_counter()
        result = searcher.search(queries[int(line)], options=options)
        ms = (time.perf_counter() - t) * 1000
        print(json.dumps({"ms": ms, "steps": result.timings_ms, "hits": [h.judgment_id for h in result.hits]}), flush=True)


def main(a: str, b: str, where: str) -> None:
    def start(spec):
        how, _, src = spec.partition(":")
        if how not in ("built", "loaded"):
            raise SystemExit(f"HOW is built or loaded, not {how!r}")
        p = subprocess.Popen([sys.executable, __file__, "--worker", how, where], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=src))
        if p.stdout.readline().strip() != "ready":
            raise SystemExit(f"the worker for {spec} did not start")
        return p

    procs = {"A": start(a), "B": start(b)}
    rng, got, same = random.Random(0), {"A": [], "B": []}, 0
    for i in range(1, 50):
        out = {}
        for side in (["A", "B"] if rng.random() < 0.5 else ["B", "A"]):
            procs[side].stdin.write(f"{i}\n")
            procs[side].stdin.flush()
            out[side] = json.loads(procs[side].stdout.readline())
            got[side].append(out[side])
        same += out["A"]["hits"] == out["B"]["hits"]
    for p in procs.values():
        p.stdin.close()
        p.wait()
    ms_a, ms_b = [x["ms"] for x in got["A"]], [x["ms"] for x in got["B"]]
    print(f"A {a} p50 {statistics.median(ms_a):.1f}  B {b} p50 {statistics.median(ms_b):.1f}  median B/A "
          f"{statistics.median(y / x for x, y in zip(ms_a, ms_b)):.3f}  same hits {same}/49")
    for step in got["A"][0]["steps"]:
        print(f"  {step}: A {statistics.median(x['steps'][step] for x in got['A']):.1f}  "
              f"B {statistics.median(x['steps'][step] for x in got['B']):.1f}")


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "/work/runs/aila_idx")
