"""Benchmark embedders on the dense windows of AILA summaries: documents/s, windows/s, CPU.

    python -m aqgr.eval.bench.embed [--data ../shared/datasets/aila2019] [--cache-dir DIR]
                                [--docs 150] [--rounds 3] [--threads 0]
                                [--embedder minilm-l6.v1 --embedder minilm-l6-int8.v1]

1. summaries: the eval cache's archive of the dataset's judgments (`extractive.v1`,
   `eval.systems.pipeline.case_archive`; summarised now if not yet);
2. windows: a fixed random sample of --docs judgments (seed 0), each as the dense
   retriever windows it (`IndexSpec()`'s slots and window size, `document_windows`);
3. variants, interleaved in each of --rounds rounds (a busy machine slows each alike),
   none through a cache: `minilm-l6.v1 (document order)`, the windows in batches of 64 in
   document order, as `embed_with_cache` sent them before it sorted by length (today's
   index build), then every --embedder through `embed_with_cache` (the build now). Model
   loading (and an export at first use, timed apart as `first_use_s`) happens before the
   rounds;
4. per variant, medians over rounds: wall seconds, documents/s, windows/s, process CPU
   milliseconds per window (all threads: steadier than wall time on a shared machine),
   and each ratio over the first variant; `cosine` of each window's vector with the first
   variant's (min, 1st percentile, mean).

Prints one JSON object on stdout; messages on stderr.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from aqgr.eval.bench.common import print_result
from aqgr.foundation.paths import shared_datasets

DEFAULT_DATA = shared_datasets() / "aila2019"
DEFAULT_EMBEDDERS = ("minilm-l6.v1", "minilm-l6-int8.v1")
BASELINE = "minilm-l6.v1 (document order)"
OLD_BATCH = 64  # embed_with_cache's batch: texts per embed call and per commit


def sample_windows(data: Path, cache_dir: Path, n_docs: int) -> list[list[str]]:
    """The dense windows of `n_docs` judgments drawn at random (seed 0) from the dataset's summaries."""
    from aqgr.eval.datasets import find_documents, list_documents
    from aqgr.eval.systems.pipeline import DEFAULT_SUMMARIZER, case_archive
    from aqgr.retrieval.dense.windows import document_windows
    from aqgr.retrieval.documents import dense_texts, slot_texts
    from aqgr.retrieval.spec import IndexSpec

    docs_dir = find_documents(data, "cases")
    archive = case_archive(docs_dir, list_documents(docs_dir, "cases"), cache_dir, DEFAULT_SUMMARIZER)
    summaries = sorted(archive.summaries(), key=lambda s: s.judgment_id)
    chosen = random.Random(0).sample(summaries, min(n_docs, len(summaries)))
    spec = IndexSpec()
    return [
        document_windows(dense_texts(slot_texts(s, spec.slots), spec.dense_slots), spec.window_chars) for s in chosen
    ]


def _document_order(embedder, texts: list[str]) -> np.ndarray:
    """What embed_with_cache did before sorting: unique texts in batches of 64, in the given order."""
    unique = list(dict.fromkeys(texts))
    vectors = {}
    for start in range(0, len(unique), OLD_BATCH):
        batch = unique[start : start + OLD_BATCH]
        vectors.update(zip(batch, embedder.embed(batch)))
    return np.stack([vectors[t] for t in texts])


def _make(name: str, threads: int):
    from aqgr.retrieval.dense.embedders import embedders

    if threads and name != "minilm-l6.v1":
        return embedders.create(name, threads=threads)
    if threads:
        import torch

        torch.set_num_threads(threads)
    return embedders.create(name)


def bench(data: Path, cache_dir: Path, n_docs: int, rounds: int, names: list[str], threads: int) -> dict:
    from aqgr.retrieval.dense.cache import embed_with_cache

    doc_windows = sample_windows(data, cache_dir, n_docs)
    texts = [w for windows in doc_windows for w in windows]
    print(f"{len(doc_windows)} judgments, {len(texts)} windows", file=sys.stderr)
    runs = {}
    first_use = {}
    for name in dict.fromkeys(["minilm-l6.v1", *names]):
        embedder = _make(name, threads)
        start = time.perf_counter()
        embedder.embed(["warm up: load the model (and export it at first use)"])
        first_use[name] = round(time.perf_counter() - start, 2)
        if name == "minilm-l6.v1":
            runs[BASELINE] = (lambda e: lambda: _document_order(e, texts))(embedder)
        if name in names:
            runs[name] = (lambda e: lambda: embed_with_cache(e, texts, None)[0])(embedder)
    timings: dict[str, list[tuple[float, float]]] = {v: [] for v in runs}
    vectors: dict[str, np.ndarray] = {}
    for round_no in range(rounds):
        for variant, run in runs.items():
            cpu, wall = time.process_time(), time.perf_counter()
            vectors[variant] = run()
            timings[variant].append((time.perf_counter() - wall, time.process_time() - cpu))
            print(f"round {round_no + 1}/{rounds}: {variant} {timings[variant][-1][0]:.1f} s", file=sys.stderr)
    reference = vectors[BASELINE]
    base = None
    results = {}
    for variant, times in timings.items():
        wall = statistics.median(t for t, _ in times)
        cpu = statistics.median(c for _, c in times)
        cos = np.sum(vectors[variant] * reference, axis=1)
        row = {
            "wall_s": round(wall, 2),
            "docs_per_s": round(len(doc_windows) / wall, 2),
            "windows_per_s": round(len(texts) / wall, 2),
            "cpu_ms_per_window": round(1000 * cpu / len(texts), 2),
            "walls_s": [round(t, 2) for t, _ in times],
            "cosine": {
                "min": round(float(cos.min()), 4),
                "p1": round(float(np.percentile(cos, 1)), 4),
                "mean": round(float(cos.mean()), 5),
            },
        }
        base = base or row
        row["speedup"] = round(base["wall_s"] / wall, 2)
        row["cpu_speedup"] = round(base["cpu_ms_per_window"] / row["cpu_ms_per_window"], 2)
        results[variant] = row
    return {
        "data": str(data),
        "docs": len(doc_windows),
        "windows": len(texts),
        "windows_per_doc": round(len(texts) / len(doc_windows), 2),
        "rounds": rounds,
        "threads": threads or "default",
        "first_use_s": first_use,
        "variants": results,
    }


def main(argv: list[str] | None = None) -> int:
    from aqgr.eval.systems.registry import default_cache_dir

    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.embed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache-dir", type=Path, default=None, help="Eval cache (default: aqgr eval's)")
    parser.add_argument("--docs", type=int, default=150, help="Judgments sampled (seed 0)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--threads", type=int, default=0, help="Threads per model (0: each library's default, one per core)"
    )
    parser.add_argument(
        "--embedder", action="append", default=None, help="Embedder to time (repeat); default: %(default)s"
    )
    args = parser.parse_args(argv)
    names = args.embedder or list(DEFAULT_EMBEDDERS)
    return print_result(
        lambda: bench(args.data, args.cache_dir or default_cache_dir(), args.docs, args.rounds, names, args.threads)
    )


if __name__ == "__main__":
    sys.exit(main())
