"""Cost at scale: index build time, size on disk, peak memory and query latency vs archive size.

    python -m aqgr.eval.bench_scale --sizes 10000,100000 --backends embedded,milvus --out reports/scale

1. Profile: `--profile-docs` AILA judgments (Object_casedocs) are summarised with
   extractive.v1; per retrieval slot we keep its word-count distribution and its word
   frequencies (cached as JSON in --out).
2. Synthetic archive: each document copies the slot lengths of a random profiled summary
   and draws that many words from the slot's unigram distribution (seeded).
3. Each (backend, N) runs in a fresh subprocess (so peak RSS is its own): build the index
   (embedded: BM25 matrix + FAISS flat; milvus: milvus-lite at a local path), save it,
   then time `retrieve(query, k=12, both retrievers)` (what the Searcher does per query)
   for --queries queries made like fact statements (60 words from the facts slot's
   distribution). Dense vectors are random normalised 384-d vectors per window (the
   `random.bench` embedder): embedding 1e5+ windows with MiniLM is infeasible on 2 cores,
   and the cost of FAISS/Milvus search does not depend on what the vectors mean.
4. Growth: the slope of log(cost) on log(N) between the sizes (1 = linear).

Prints the table (markdown) on stdout and writes results.json to --out.

`--pipeline` measures the whole pipeline instead (real text, full-text retriever, citation
graph, search, incremental add): `python -m aqgr.eval.bench_scale --pipeline --sizes ...`
runs eval/bench_pipeline.py with the other arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from aqgr.foundation.paths import shared_datasets

AILA = shared_datasets() / "aila2019" / "Object_casedocs"
SLOTS = ("parties", "case_number", "facts", "issues", "reasoning", "new_principles")
DIM = 384


class RandomEmbedder:
    """Random normalised vectors (seeded by the text): a stand-in for dense cost at scale."""

    name = "random.bench"
    dim = DIM
    fingerprint = "random.bench:384"

    def embed(self, texts):
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def profile(out: Path, n_docs: int, data: Path = AILA) -> dict:
    """Slot lengths (words) and word frequencies of extractive summaries of `n_docs` AILA judgments."""
    path = out / f"profile-{n_docs}.json"
    if path.is_file():
        return json.loads(path.read_text())
    from aqgr.retrieval.documents import slot_texts
    from aqgr.summarizer.base import JudgmentText, summarizers

    engine = summarizers.create("extractive.v1")
    files = sorted(data.glob("*.txt"))
    random.Random(0).shuffle(files)
    lengths, words = [], {slot: Counter() for slot in SLOTS}
    for f in files[:n_docs]:
        text = f.read_text(encoding="utf-8", errors="replace")
        try:
            texts = slot_texts(engine.summarize(JudgmentText(f.stem, text, str(f), "")), SLOTS)
        except Exception:  # noqa: BLE001 - a judgment the engine refuses is just not profiled
            continue
        lengths.append({slot: len(texts[slot].split()) for slot in SLOTS})
        for slot in SLOTS:
            words[slot].update(texts[slot].split())
    result = {"n": len(lengths), "lengths": lengths, "words": {s: dict(c.most_common()) for s, c in words.items()}}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return result


def synthetic(prof: dict, n: int, seed: int = 0) -> tuple[list[str], dict[str, dict[str, str]]]:
    rng = np.random.default_rng(seed)
    vocab = {s: np.array(list(prof["words"][s]) or ["-"]) for s in SLOTS}
    probs = {s: np.array(list(prof["words"][s].values()) or [1], dtype=np.float64) for s in SLOTS}
    probs = {s: p / p.sum() for s, p in probs.items()}
    templates = rng.integers(0, len(prof["lengths"]), size=n)
    ids, texts = [], {}
    for i, t in enumerate(templates.tolist()):
        doc_id = f"D{i:07d}"
        ids.append(doc_id)
        texts[doc_id] = {s: " ".join(rng.choice(vocab[s], size=prof["lengths"][t][s], p=probs[s])) for s in SLOTS}
    return ids, texts


def queries(prof: dict, n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = np.array(list(prof["words"]["facts"]))
    p = np.array(list(prof["words"]["facts"].values()), dtype=np.float64)
    return [" ".join(rng.choice(vocab, size=60, p=p / p.sum())) for _ in range(n)]


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(backend: str, n: int, out: Path, prof: dict, n_queries: int) -> dict:
    """Build, save and query one index (called in its own process)."""
    from aqgr.retrieval.spec import IndexSpec

    ids, texts = synthetic(prof, n)
    rss_corpus = _rss_mb()
    spec = IndexSpec(embedder="random.bench")
    work = out / f"{backend}-{n}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    start = time.perf_counter()
    if backend == "embedded":
        from aqgr.retrieval.embedded.index import SummaryIndex

        index = SummaryIndex.from_texts(ids, texts, spec, embedder=RandomEmbedder())
        index.save(work / "index")
    else:
        from aqgr.retrieval.milvus import MilvusIndex

        index = MilvusIndex.from_texts(ids, texts, spec, uri=str(work / "milvus.db"), embedder=RandomEmbedder())
        index.save(work / "index")
    build = time.perf_counter() - start
    del texts
    qs = queries(prof, n_queries)
    index.retrieve(qs[0], 12)  # warm-up (loads, memo)
    times = []
    for q in qs:
        t = time.perf_counter()
        index.retrieve(q, 12)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    manifest = index.manifest
    return {
        "backend": backend if backend == "embedded" else "milvus-lite",
        "n_docs": n,
        "n_windows": manifest["n_windows"],
        "build_s": round(build, 2),
        "build_parts_s": manifest.get("build_seconds"),
        "size_mb": round(_du(work) / 1e6, 1),
        "peak_rss_mb": round(_rss_mb(), 0),
        "rss_after_corpus_mb": round(rss_corpus, 0),
        "query_p50_ms": round(statistics.median(times), 2),
        "query_p95_ms": round(times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)], 2),
        "queries": len(times),
    }


def slopes(rows: list[dict], key: str) -> dict[str, float]:
    """Per backend: the least-squares slope of log(key) on log(n_docs)."""
    out = {}
    for backend in sorted({r["backend"] for r in rows}):
        pts = [
            (math.log(r["n_docs"]), math.log(max(r[key], 1e-9)))
            for r in rows
            if r["backend"] == backend and "error" not in r
        ]
        if len(pts) >= 2:
            out[backend] = round(float(np.polyfit([p[0] for p in pts], [p[1] for p in pts], 1)[0]), 2)
    return out


def table(rows: list[dict]) -> str:
    keys = ["backend", "n_docs", "n_windows", "build_s", "size_mb", "peak_rss_mb", "query_p50_ms", "query_p95_ms"]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(k, r.get("error", ""))) for k in keys) + " |")
    lines.append("")
    lines.append(
        "growth (slope of log cost on log N): "
        + json.dumps(
            {k: slopes(rows, k) for k in ("build_s", "size_mb", "peak_rss_mb", "query_p50_ms", "query_p95_ms")}
        )
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--pipeline" in argv:
        from aqgr.eval import bench_pipeline

        return bench_pipeline.main([a for a in argv if a != "--pipeline"])
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench_scale", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated archive sizes")
    parser.add_argument("--backends", default="embedded,milvus")
    parser.add_argument(
        "--profile-docs", type=int, default=120, help="AILA judgments summarised to profile lengths and words"
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per (backend, size) run")
    parser.add_argument("--out", type=Path, default=Path("reports/scale"))
    parser.add_argument("--one", nargs=2, metavar=("BACKEND", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    prof = profile(args.out, args.profile_docs)
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.out, prof, args.queries)))
        return 0
    rows = []
    for n in [int(float(s)) for s in args.sizes.split(",")]:
        for backend in args.backends.split(","):
            cmd = [
                sys.executable,
                "-m",
                "aqgr.eval.bench_scale",
                "--one",
                backend,
                str(n),
                "--out",
                str(args.out),
                "--profile-docs",
                str(args.profile_docs),
                "--queries",
                str(args.queries),
            ]
            print(f"running {backend} N={n}", file=sys.stderr, flush=True)
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=dict(os.environ))
                row = (
                    json.loads(done.stdout.strip().splitlines()[-1])
                    if done.returncode == 0
                    else {
                        "backend": backend,
                        "n_docs": n,
                        "error": f"exit {done.returncode}: {done.stderr.strip()[-300:]}",
                    }
                )
            except subprocess.TimeoutExpired:
                row = {"backend": backend, "n_docs": n, "error": f"over {args.timeout}s"}
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
            shutil.rmtree(args.out / f"{backend}-{n}", ignore_errors=True)
            (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
