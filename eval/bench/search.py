"""Benchmark question-guided search over an AILA-format archive: build costs and warm latency.

    python -m aqgr.eval.bench.search [--data ../shared/datasets/aila2019] [--cache-dir DIR]
                                [--summarizer extractive.v1] [--embedder minilm-l6.v1] [--cold-embeddings]

1. summaries: the eval cache's archive (`eval.systems.pipeline.case_archive`; summarised
   now if not yet, and timed);
2. index: built afresh over those summaries and the judgments' full texts (summary BM25,
   full-text BM25 and FAISS timed separately, embedding
   from the archive's embedding cache unless --cold-embeddings), saved to a temporary
   directory to measure its size on disk per part;
3. search: `Searcher.search(facts)` (generated questions, ensemble, explanations, k=10)
   for every query of the dataset, after one warm-up search and the heap frozen as the
   server's start-up freezes it (`aqgr.pipeline.search.freeze_heap`); median and p95 latency, and
   the median of each stage;
4. statutes, when the dataset has them: a statute collection added (index + which
   judgments quote which statute, timed), then the product's statute search
   (`aqgr.pipeline.statutes.statutes_for`: questions, the case ranking, statutes through the
   precedents) for every query; median and p95;
5. peak memory of the process (resource.getrusage).

Prints one JSON object on stdout; messages on stderr.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aqgr.eval.bench.common import percentile, print_result
from aqgr.eval.datasets import load_dataset
from aqgr.eval.systems.pipeline import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
from aqgr.eval.systems.registry import default_cache_dir
from aqgr.foundation.paths import shared_datasets
from aqgr.pipeline.search import freeze_heap

DEFAULT_DATA = shared_datasets() / "aila2019"


def _tree_size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder (an index part)."""
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def bench(data: Path, cache_dir: Path, summarizer: str, embedder: str | None, cold_embeddings: bool) -> dict:
    from aqgr.retrieval.dense.cache import EmbeddingCache
    from aqgr.retrieval.embedded.index import SummaryIndex

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    dataset = load_dataset(data)
    out: dict = {"data": str(data), "documents": len(dataset.doc_ids), "summarizer": summarizer}

    t = time.perf_counter()
    archive = case_archive(dataset.docs_dir, dataset.doc_ids, cache_dir, summarizer)
    out["summaries_s"] = round(time.perf_counter() - t, 2)
    summaries = archive.summaries()
    out["summaries"] = len(summaries)
    say(f"summaries: {len(summaries)} in {out['summaries_s']} s (archive {archive.home})")

    system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=summarizer, embedder=embedder)
    spec = system.index_spec()
    with tempfile.TemporaryDirectory() as tmp:
        cache_path = Path(tmp) / "cold.sqlite" if cold_embeddings else archive.settings.cache_dir / "embeddings.sqlite"
        t = time.perf_counter()
        full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
        with EmbeddingCache(cache_path) as cache:
            index = SummaryIndex.build(summaries, spec, cache=cache, full_texts=full_texts)
        build_s = time.perf_counter() - t
        manifest = index.manifest
        saved = index.save(Path(tmp) / "index")
        update = manifest.get("last_update", {})
        out["index"] = {
            "spec": spec.describe(),
            "build_s": round(build_s, 2),
            "stages_s": update.get("seconds", {}),  # per part, as the index recorded them
            "embedding_cache": "cold (empty)" if cold_embeddings else str(cache_path),
            "windows": manifest.get("n_windows"),
            "sentences": manifest.get("n_sentences"),
            "counts": {k: v for k, v in update.items() if k != "seconds"},
            "bytes": {p.name: _tree_size(p) for p in sorted(saved.iterdir())} | {"total": _tree_size(saved)},
        }
    say(f"index: {out['index']['build_s']} s {out['index']['stages_s']}")

    searcher = system.searcher_for(archive, index)
    options = system.search_options().model_copy(update={"min_content_words": 1})
    queries = list(dataset.queries.items())
    searcher.search(queries[0][1], options=options)  # warm-up: models loaded, caches primed
    freeze_heap()  # as the server's start-up does, once (aqgr/interfaces/server/service.py)
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    for _qid, facts in queries:
        t = time.perf_counter()
        result = searcher.search(facts, options=options)
        latencies.append((time.perf_counter() - t) * 1000)
        for stage, ms in result.timings_ms.items():
            stages.setdefault(stage, []).append(ms)
    out["search"] = {
        "queries": len(queries),
        "k": options.k,
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "max_ms": round(max(latencies), 1),
        "stage_median_ms": {s: round(statistics.median(v), 1) for s, v in stages.items()},
    }
    statutes = _bench_statutes(data, archive, searcher, spec, queries)
    if statutes:
        out["statutes"] = statutes
        say(
            f"statutes: p50 {statutes['p50_ms']} ms, p95 {statutes['p95_ms']} ms; {statutes['quoting_judgments']} judgments quote them"
        )
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    say(f"search: p50 {out['search']['p50_ms']} ms, p95 {out['search']['p95_ms']} ms over {len(queries)} queries")
    return out


def _bench_statutes(data: Path, archive, searcher, spec, queries) -> dict | None:
    """Statute collection build and warm statute search latency; None without statutes."""
    from aqgr.eval.datasets import find_documents
    from aqgr.foundation.errors import DatasetError
    from aqgr.pipeline.config import Settings
    from aqgr.pipeline.statutes import StatuteCollection, statutes_for

    try:
        folder = find_documents(data, "statutes")
    except DatasetError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        collection = StatuteCollection(Settings.resolve(Path(tmp) / "home", index=spec))
        t = time.perf_counter()
        count = collection.add([folder])
        add_s = time.perf_counter() - t
        t = time.perf_counter()
        quoting = collection.link(archive.texts())
        link_s = time.perf_counter() - t
        statutes_for(searcher, collection, queries[0][1])  # warm-up
        latencies = []
        for _, facts in queries:
            t = time.perf_counter()
            statutes_for(searcher, collection, facts)
            latencies.append((time.perf_counter() - t) * 1000)
    return {
        "statutes": count,
        "index_s": round(add_s, 2),
        "link_s": round(link_s, 2),
        "quoting_judgments": quoting,
        "queries": len(queries),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.search", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache-dir", type=Path, default=None, help="eval cache (default $AQGR_HOME/cache/eval)")
    parser.add_argument("--summarizer", default=DEFAULT_SUMMARIZER)
    parser.add_argument("--embedder", default=None, help="default: the index default (minilm-l6-int8.v1)")
    parser.add_argument(
        "--cold-embeddings", action="store_true", help="embed every window again (empty embedding cache)"
    )
    args = parser.parse_args(argv)
    return print_result(
        lambda: bench(
            args.data, args.cache_dir or default_cache_dir(), args.summarizer, args.embedder, args.cold_embeddings
        )
    )


if __name__ == "__main__":
    sys.exit(main())
