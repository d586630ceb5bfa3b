"""Does the Milvus backend give the embedded backend's numbers? Same documents, same slots.

    python -m eval.bench_backends sample [--embedder minilm-l6.v1]
    python -m eval.bench_backends aila --home <eval archive home> [--depth 100]

`sample`: datasets/sample summarised (extractive.v1), indexed by both backends; for every
scenario the full question-guided search (Searcher, unchanged) runs on each, and the
study's protocol numbers are computed from the hits: relevant judgments in the top 3
(hit rate, as tests/aqgr/test_sample_end_to_end.py), reciprocal rank of the first
relevant, P@3, R@3; plus the top-10 overlap of the two hit lists.

`aila`: an eval archive home (`<cache>/archives/<fingerprint>`, made by `python -m eval`)
holding the AILA case summaries; both backends index them (the embedding cache of the
home is reused) and each dev query (facts alone) is run per retriever and fused with
rrf.v1 (bm25-summary, dense-summary, ensemble-summary); AP, P@10, RR, R@100 per backend
and the mean top-10 overlap per retriever. milvus-lite stands in for Milvus: scores are
never compared, only rankings and measures.

Prints a JSON report on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample"
AILA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "aila2019"


def _overlap(a, b, k: int = 10) -> float:
    a, b = list(a)[:k], list(b)[:k]
    return len(set(a) & set(b)) / max(1, min(k, max(len(a), len(b))))


def sample_report(embedder: str, work: Path) -> dict:
    from aqgr import Archive
    from retrieval.index import IndexSpec

    scenarios = json.loads((SAMPLE / "scenarios.json").read_text(encoding="utf-8"))
    spec = IndexSpec(embedder=embedder)
    out: dict = {"embedder": embedder, "backends": {}, "overlap@10": []}
    hits: dict[str, list[list[str]]] = {}
    for backend in ("embedded", "milvus"):
        archive = Archive(work / "home")
        if not archive.summaries():
            archive.summarize([SAMPLE / "judgments"])
        archive.build_index(spec=spec, backend=backend, uri=str(work / "milvus.db") if backend == "milvus" else None)
        rows = []
        for s in scenarios:
            ids = [h.judgment_id for h in archive.search(s["facts"]).hits]
            rel = set(s["relevant"])
            first = next((i for i, d in enumerate(ids, 1) if d in rel), None)
            rows.append({"hit@3": float(rel <= set(ids[:3])), "RR": 1 / first if first else 0.0,
                         "P@3": len(rel & set(ids[:3])) / 3, "R@3": len(rel & set(ids[:3])) / len(rel)})
            hits.setdefault(backend, []).append(ids)
        out["backends"][backend] = {m: round(sum(r[m] for r in rows) / len(rows), 4) for m in rows[0]}
    out["overlap@10"] = round(sum(_overlap(a, b) for a, b in zip(hits["embedded"], hits["milvus"])) / len(scenarios), 4)
    return out


def aila_report(home: Path, depth: int, work: Path, queries: str | None) -> dict:
    from aqgr import Archive
    from eval.datasets import load_dataset, select_queries
    from eval.measures import compute
    from eval.pipeline_systems import case_index
    from retrieval.embed_cache import EmbeddingCache
    from retrieval.fusion import fusers
    from retrieval.index import IndexSpec
    from retrieval.milvus import MilvusIndex

    dataset = load_dataset(AILA)
    archive = Archive(home, summarizer="extractive.v1")
    spec = IndexSpec()
    embedded = case_index(archive, spec)
    with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
        milvus = MilvusIndex.build(archive.summaries(), spec, uri=str(work / "milvus.db"), cache=cache)
    qids = [q for q in select_queries(dataset, queries) if q in dataset.qrels]
    runs: dict = {b: {s: {} for s in ("bm25-summary", "dense-summary", "ensemble-summary")} for b in ("embedded", "milvus")}
    overlap = {"bm25": [], "dense": []}
    for qid in qids:
        text = dataset.queries[qid]
        got = {b: idx.retrieve(text, depth) for b, idx in (("embedded", embedded), ("milvus", milvus))}
        for name in overlap:
            overlap[name].append(_overlap([d.doc_id for d in got["embedded"][name]], [d.doc_id for d in got["milvus"][name]]))
        for b, r in got.items():
            for system, run in (("bm25-summary", r["bm25"]), ("dense-summary", r["dense"]),
                                ("ensemble-summary", fusers.create("rrf.v1")([r["bm25"], r["dense"]], None))):
                runs[b][system][qid] = [(d.doc_id, float(depth - i)) for i, d in enumerate(run[:depth])]
    measures = ["AP", "P@10", "RR", "R@100"]
    report = {"queries": len(qids), "depth": depth, "embedder": spec.embedder, "measures": {}}
    for b in runs:
        for system, run in runs[b].items():
            mean = compute(dataset.qrels, run, measures, queries=qids).mean
            report["measures"].setdefault(system, {})[b] = {m: round(v, 4) for m, v in mean.items()}
    report["overlap@10"] = {n: round(sum(v) / len(v), 4) for n, v in overlap.items()}
    milvus.drop()
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.bench_backends", description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["sample", "aila"])
    parser.add_argument("--embedder", default="minilm-l6.v1")
    parser.add_argument("--home", type=Path, help="aila: the eval archive home holding the AILA summaries")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--queries", default=None, help="aila: a subset, e.g. Q1-Q10")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aqgr-backends-") as tmp:
        if args.what == "sample":
            report = sample_report(args.embedder, Path(tmp))
        else:
            if args.home is None:
                parser.error("aila needs --home (an eval archive home with the AILA summaries)")
            report = aila_report(args.home, args.depth, Path(tmp), args.queries)
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
