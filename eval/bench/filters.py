"""Benchmark filtered against unfiltered search latency over an AILA-format archive.

    python -m aqgr.eval.bench.filters [--data $AQGR_DATASETS/aila2019] [--cache-dir DIR]
                                      [--embedder hashing.v1] [--queries 20]
    python -m aqgr.eval.bench.filters --home ARCHIVE_HOME [--queries 20]   (its saved index, no build)

1. summaries: the eval cache's archive (`eval.systems.pipeline.case_archive`; summarised now
   if not yet);
2. index: built afresh (summary BM25, full-text BM25, dense; `--embedder`, default the
   hashing embedder: no model, so the retrieval steps a filter changes weigh the most);
3. filters chosen from the archive's own facets: a broad one (the most frequent decade), a
   statute (the most frequent section), a disposal, a narrow one (a judge with few
   judgments), and a combination; for each query of the dataset, the unfiltered search and
   every filtered one, interleaved (`Searcher.search`, generated questions, k=10);
4. per filter: the judgments it admits, median and p95 latency, the ratio of its median to
   the unfiltered one, and a check that every hit is one the filter admits.

Prints one JSON object on stdout; messages on stderr.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aqgr.eval.bench.common import percentile, print_result
from aqgr.eval.datasets import load_dataset
from aqgr.eval.systems.pipeline import DEFAULT_SUMMARIZER, case_archive
from aqgr.eval.systems.registry import default_cache_dir
from aqgr.foundation.paths import shared_datasets
from aqgr.pipeline.search import freeze_heap

DEFAULT_DATA = shared_datasets() / "aila2019"


def _pick_filters(facets) -> dict[str, dict]:
    """Named filter requests from the whole archive's facet counts (all values, not the shown top)."""
    decade = max(facets["decade"].items(), key=lambda p: (p[1], p[0]))[0]
    section = max(facets["section"].items(), key=lambda p: (p[1], p[0]))[0]
    judges = sorted((c, v) for v, c in facets["judge"].items() if 3 <= c <= 10)
    start = int(decade[:4])
    chosen = {
        f"decade {decade}": {"decided_from": str(start), "decided_to": str(start + 9)},
        f"statute {section}": {"statute": section},
        "disposal dismissed": {"disposal": "dismissed"},
        "court SC (admits all)": {"court": "SC"},
        f"{section} in {decade}, allowed": {
            "statute": section,
            "decided_from": str(start),
            "decided_to": str(start + 9),
            "disposal": "allowed",
        },
    }
    if judges:
        count, judge = judges[len(judges) // 2]
        chosen[f"judge {judge} ({count})"] = {"judge": judge}
    return chosen


def measure(searcher, index, queries: list[tuple[str, str]], n_docs: int, out: dict) -> dict:
    """The filtered and unfiltered searches of `queries` over `index`, into `out`."""
    from aqgr.schemas.filters import Filters

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    out["queries"] = len(queries)
    out["filters"] = {}
    options = searcher.options.model_copy(update={"min_content_words": 1})
    every_n = index.ns_of(index.doc_ids)
    whole = {name: dict(pairs) for name, pairs in index.facets.counts(every_n, limit=None).items()}
    requests = {"unfiltered": None, **{name: Filters(**f) for name, f in _pick_filters(whole).items()}}
    admitted = {}
    for name, filters in requests.items():
        if filters is None:
            continue
        t = time.perf_counter()
        selection = index.facets.select(filters)
        admitted[name] = (
            None if selection.ns is None else set(index.ids_of(selection.ns)),
            (time.perf_counter() - t) * 1000,
        )
    searcher.search(queries[0][1], options=options)  # warm-up
    freeze_heap()
    latencies: dict[str, list[float]] = {name: [] for name in requests}
    violations: dict[str, int] = {name: 0 for name in requests}
    hits: dict[str, int] = {name: 0 for name in requests}
    for _, facts in queries:
        for name, filters in requests.items():
            t = time.perf_counter()
            result = searcher.search(facts, options=options, filters=filters)
            latencies[name].append((time.perf_counter() - t) * 1000)
            hits[name] += len(result.hits)
            allowed = admitted.get(name, (None, 0))[0]
            if allowed is not None:
                violations[name] += sum(h.judgment_id not in allowed for h in result.hits)
    base = statistics.median(latencies["unfiltered"])
    for name, filters in requests.items():
        median = statistics.median(latencies[name])
        allowed, select_ms = admitted.get(name, (None, 0.0))
        out["filters"][name] = {
            "request": filters.active() if filters else None,
            "admits": n_docs if allowed is None else len(allowed),
            "select_ms": round(select_ms, 2),
            "p50_ms": round(median, 1),
            "p95_ms": round(percentile(latencies[name], 95), 1),
            "ratio_p50": round(median / base, 3),
            "hits": hits[name],
            "hits_outside_filter": violations[name],
        }
        say(f"{name}: admits {out['filters'][name]['admits']}, p50 {median:.1f} ms, x{median / base:.3f}")
    return out


def bench_home(home: Path, data: Path, n_queries: int) -> dict:
    """The same over an existing archive home and its saved index (e.g. a synthetic archive of
    `aqgr.eval.bench.pipeline`), with the queries of `data`."""
    from aqgr.archive.home import Archive

    archive = Archive(home)
    searcher = archive.open_searcher()
    index = searcher.index
    out: dict = {"home": str(home), "documents": len(index.doc_ids)}
    measure(searcher, index, list(load_dataset(data).queries.items())[:n_queries], len(index.doc_ids), out)
    return out


def bench(data: Path, cache_dir: Path, embedder: str, n_queries: int) -> dict:
    from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    dataset = load_dataset(data)
    archive = case_archive(dataset.docs_dir, dataset.doc_ids, cache_dir, DEFAULT_SUMMARIZER)
    summaries = archive.summaries()
    say(f"summaries: {len(summaries)} (archive {archive.home})")
    out: dict = {"data": str(data), "documents": len(summaries), "embedder": embedder}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
        index = SummaryIndex.build(
            summaries, IndexSpec(embedder=embedder), full_texts=full_texts, directory=Path(tmp) / "index"
        )
        out["index_build_s"] = round(time.perf_counter() - t, 2)
        say(f"index: {out['index_build_s']} s")
        searcher = archive.open_searcher(index)
        measure(searcher, index, list(dataset.queries.items())[:n_queries], len(summaries), out)
        index.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.filters", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--embedder", default="hashing.v1")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument(
        "--home",
        type=Path,
        default=None,
        help="an existing archive home and its index (no build): e.g. a bench.pipeline archive",
    )
    args = parser.parse_args(argv)
    if args.home is not None:
        return print_result(lambda: bench_home(args.home, args.data, args.queries))
    return print_result(lambda: bench(args.data, args.cache_dir or default_cache_dir(), args.embedder, args.queries))


if __name__ == "__main__":
    raise SystemExit(main())
