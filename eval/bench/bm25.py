"""Benchmark BM25 implementations on the same tokens: index build time, query time, size.

    python -m aqgr.eval.bench.bm25 [--data ../shared/datasets/aila2019-citebench]
                              [--impl rank-bm25.v1 --impl bm25s.v1 --impl 'bm25s.v1:method=robertson']
                              [--rounds 3] [--builds 3] [--no-memory]

Every implementation (`retrieval.lexical.bm25.bm25_implementations`, `NAME[:key=value,...]`, the
parameters going to its factory; k1 / b default to retrieval/spec.py's) indexes the same
`words.v1` tokens of the dataset's documents (tokenised once, timed apart), and scores
every query of the dataset (raw text, as `bm25-fulltext` does; tokenised once):

1. build: `build(tokens)` wall time, the median of --builds builds (implementations
   interleaved, so a busy machine slows each alike), and the index size on disk (`save`);
2. query: `scores(query_tokens)` for every query, implementations interleaved per query,
   --rounds rounds after one warm-up query; per query the median over rounds, then the
   median and p95 over queries;
3. memory (unless --no-memory), from one more, untimed build under tracemalloc (Python
   objects and numpy buffers): `build_peak_mib`, the peak allocated while building, and
   `index_mib`, what the built index still holds;
4. agreement with the first implementation: `top10_overlap`, the mean share of its top 10
   (documents scoring above 0; excluded ones, e.g. a citebench query's own judgment, left
   out as the harness does) that the other's top 10 holds.

Prints one JSON object on stdout; messages on stderr. Ratios are each implementation's
median (or p95) over the first's (below 1: faster). `tokenise_query_ms` (words.v1, shared
by all) puts the query times in proportion.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from aqgr.eval.bench.common import percentile, print_result
from aqgr.foundation.paths import shared_datasets

DEFAULT_DATA = shared_datasets() / "aila2019-citebench"
DEFAULT_IMPLS = ("rank-bm25.v1", "bm25s.v1")


def parse_impl(spec: str) -> tuple[str, dict]:
    """'bm25s.v1:method=robertson,delta=0.5' -> ('bm25s.v1', {'method': 'robertson', 'delta': 0.5})."""
    name, _, rest = spec.partition(":")
    params: dict = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"--impl {spec!r}: parameters are key=value pairs separated by commas")
        try:
            params[key] = float(value)
        except ValueError:
            params[key] = value
    return name, params


def _top(scores: list[float], doc_ids: list[str], exclude: frozenset[str], k: int = 10) -> list[str]:
    from aqgr.retrieval.types import ranked

    return [d.doc_id for d in ranked({doc: s for doc, s in zip(doc_ids, scores) if s > 0 and doc not in exclude})[:k]]


def _overlap(a: list[str], b: list[str]) -> float:
    """Shared documents of two top-10 lists over the longer list's length (1.0 when both are empty)."""
    return len(set(a) & set(b)) / max(len(a), len(b)) if (a or b) else 1.0


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _interleaved(items: dict, n: int) -> list:
    """`items` in order on even passes, reversed on odd ones (a busy machine slows each alike)."""
    pairs = list(items.items())
    return pairs if n % 2 == 0 else pairs[::-1]


def _time_builds(chosen: dict, corpus: list[list[str]], builds: int, say) -> tuple[dict, dict[str, list[float]]]:
    built, seconds = {}, {spec: [] for spec in chosen}
    for n in range(builds):
        for spec, impl in _interleaved(chosen, n):
            start = time.perf_counter()
            built[spec] = impl.build(corpus)
            seconds[spec].append(time.perf_counter() - start)
            say(f"{spec}: build {seconds[spec][-1]:.2f} s")
    return built, seconds


def _sizes_on_disk(built: dict) -> dict[str, int]:
    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n, (spec, scorer) in enumerate(built.items()):
            where = Path(tmp) / str(n)
            where.mkdir()
            scorer.save(where)
            sizes[spec] = _dir_size(where)
    return sizes


def _time_queries(built: dict, query_tokens: dict[str, list[str]], rounds: int) -> dict[str, list[float]]:
    """Per implementation, each query's median scoring time over the rounds, in ms."""
    first = next(iter(query_tokens))
    for scorer in built.values():  # warm-up (a JIT backend compiles here)
        scorer.scores(query_tokens[first])
    times: dict[str, dict[str, list[float]]] = {spec: {} for spec in built}
    for r in range(rounds):
        for qid, tokens in query_tokens.items():
            for spec, scorer in _interleaved(built, r):
                start = time.perf_counter()
                scorer.scores(tokens)
                times[spec].setdefault(qid, []).append(time.perf_counter() - start)
    return {spec: [statistics.median(t) * 1000 for t in per_query.values()] for spec, per_query in times.items()}


def _memory(impl, corpus: list[list[str]]) -> dict[str, float]:
    tracemalloc.start()
    try:
        scorer = impl.build(corpus)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del scorer
    return {"index_mib": round(held / 2**20, 1), "build_peak_mib": round(peak / 2**20, 1)}


def _summary(values: list[float], digits: int = 3) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "p95": round(percentile(values, 95), digits),
        "mean": round(statistics.fmean(values), digits),
    }


def bench(data: Path, impls: list[str], *, rounds: int, builds: int, memory: bool) -> dict:
    from aqgr.eval.datasets import load_dataset
    from aqgr.eval.systems import bm25s  # noqa: F401 (registers bm25s.v1)
    from aqgr.retrieval.lexical.bm25 import bm25_implementations
    from aqgr.retrieval.text import tokenizers

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    dataset = load_dataset(data)
    tokenize = tokenizers.create("words.v1")
    chosen = {
        spec: bm25_implementations.create(name, **params) for spec in impls for name, params in [parse_impl(spec)]
    }
    out: dict = {
        "data": str(data),
        "documents": len(dataset.doc_ids),
        "queries": len(dataset.queries),
        "load_average": round(os.getloadavg()[0], 2),
    }

    start = time.perf_counter()
    corpus = [tokenize(text) for _, text in dataset.documents()]
    out["tokenise_documents_s"] = round(time.perf_counter() - start, 2)
    query_tokens, tokenise_ms = {}, []
    for qid, text in dataset.queries.items():
        start = time.perf_counter()
        query_tokens[qid] = tokenize(text)
        tokenise_ms.append((time.perf_counter() - start) * 1000)
    out["tokenise_query_ms"] = _summary(tokenise_ms)
    say(f"tokenised {len(corpus)} documents in {out['tokenise_documents_s']} s")

    built, build_s = _time_builds(chosen, corpus, builds, say)
    sizes = _sizes_on_disk(built)
    query_ms = _time_queries(built, query_tokens, rounds)
    tops = {
        spec: {
            qid: _top(scorer.scores(tokens).tolist(), list(dataset.doc_ids), dataset.exclude.get(qid, frozenset()))
            for qid, tokens in query_tokens.items()
        }
        for spec, scorer in built.items()
    }
    built.clear()

    reference = impls[0]
    raw = {
        spec: (statistics.median(build_s[spec]), statistics.median(query_ms[spec]), percentile(query_ms[spec], 95))
        for spec in chosen
    }  # unrounded, for the ratios
    out["implementations"] = {}
    for spec, impl in chosen.items():
        row = {
            "name": impl.name,
            "params": impl.params(),
            "build_s": {"median": round(raw[spec][0], 3), "all": [round(s, 3) for s in build_s[spec]]},
            "query_ms": _summary(query_ms[spec]),
            "index_bytes_on_disk": sizes[spec],
            "top10_overlap": round(
                statistics.fmean(_overlap(tops[spec][q], tops[reference][q]) for q in query_tokens), 4
            ),
        }
        for key, value, base in zip(("build_ratio", "query_ratio", "query_p95_ratio"), raw[spec], raw[reference]):
            row[key] = round(value / base, 3) if base > 0 else None
        if memory:
            row.update(_memory(impl, corpus))
        out["implementations"][spec] = row
        say(
            f"{spec}: build {row['build_s']['median']} s, query p50 {row['query_ms']['median']} ms, p95 {row['query_ms']['p95']} ms"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.bm25", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="AILA-format dataset (queries; documents from it or a sibling aila2019)",
    )
    parser.add_argument(
        "--impl",
        action="append",
        default=None,
        help="NAME[:key=value,...] (repeat); default: rank-bm25.v1 and bm25s.v1",
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the queries")
    parser.add_argument("--builds", type=int, default=3, help="timed builds per implementation")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc build")
    args = parser.parse_args(argv)
    return print_result(
        lambda: bench(
            args.data,
            args.impl or list(DEFAULT_IMPLS),
            rounds=max(1, args.rounds),
            builds=max(1, args.builds),
            memory=not args.no_memory,
        ),
        errors=(ValueError,),
    )


if __name__ == "__main__":
    sys.exit(main())
