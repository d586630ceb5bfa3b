"""Dense segment kinds at scale: exact vs IVF-SQ8 vs HNSW, on MiniLM-like window vectors.

    python -m aqgr.eval.bench.dense --sizes 100000,1000000 --out /tmp/aqgr-bench-dense

1. Real vectors (cached in --out): `--real-docs` AILA judgments (a seeded sample) are
   summarised with extractive.v1 and windowed as the dense retriever does; the windows are
   embedded with minilm-l6.v1, the 50 AILA queries with `embed_query`.
2. Synthetic windows, N of them (cached): each synthetic document copies a random real
   judgment's windows, each plus Gaussian noise shaped like the real windows' covariance and
   scaled so that a copy is as close (cosine) to its real window as a real window is to its
   nearest window in another judgment; renormalised; seeded. So the vectors have MiniLM's
   anisotropy and a document's windows stay related.
3. Per size, each kind builds a `DenseStore` (retrieval/dense/store.py) of one segment in a
   fresh process (time, peak RSS, disk), then a second fresh process opens it and runs the
   queries at k=1000 documents with one faiss thread, after one warm-up pass: p50/p95 per
   search (wall clock) and p50 of its CPU time (less disturbed by a busy machine), RSS after (private and file-backed pages), recall of the exact kind's top 1000
   documents; and 12 searches (a case search's retrievals) in a row and shared by two threads.
   `--efforts KIND=a,b` sweeps nprobe (IVF) or efSearch (HNSW). Stores built by an earlier run
   in --out are reused with their recorded build figures (`--rebuild` builds them again).

Prints a markdown table on stdout and writes results-SIZES.json to --out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.dense.ann import SEED, AnnKind, add_rows, ann_kinds, sample_rows

AILA = shared_datasets() / "aila2019"
K = 1000
KINDS = ("exact", "ivf-sq8.v1", "hnsw-sq8.v1", "hnsw-flat.v1")
EFFORTS = {"ivf-sq8.v1": (64, 128, 192, 256), "hnsw-sq8.v1": (4000, 8000), "hnsw-flat.v1": (4000, 8000)}


# ---------------------------------------------------------------------- the HNSW kinds

# HNSW (measured, not the default): faiss's default efConstruction, M 32.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 40


class Hnsw:
    """HNSW over the segment: flat (float32 copy) or 8-bit codes. efSearch >= depth. Measured here
    against ivf-sq8.v1 and not chosen (retrieval/dense/ann.py says why), so registered only by
    this benchmark."""

    def __init__(self, name: str, sq8: bool, ef_search: int | None = None):
        self.name, self.sq8, self.ef_search = name, sq8, ef_search

    def build(self, vectors):
        import faiss

        m, dim = vectors.shape
        if self.sq8:
            index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            index.train(sample_rows(vectors, 65_536, SEED))
        else:
            index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        add_rows(index, vectors)
        return index, {"M": HNSW_M, "efConstruction": HNSW_EF_CONSTRUCTION}

    def _ef(self, depth, scale, effort):
        return max(depth, (effort or self.ef_search or depth)) * scale

    def search(self, index, q, depth, scale, effort, sel=None):
        import faiss

        params = faiss.SearchParametersHNSW(efSearch=self._ef(depth, scale, effort))
        if sel is not None:
            params.sel = sel
        return index.search(q, depth, params=params)

    def can_widen(self, index, scale, effort):
        return scale < 8

    def io_flags(self):
        import faiss

        return faiss.IO_FLAG_MMAP_IFC  # the graph and the codes memory-mapped


@ann_kinds.register("hnsw-flat.v1")
def _hnsw_flat() -> AnnKind:
    return Hnsw("hnsw-flat.v1", sq8=False)


@ann_kinds.register("hnsw-sq8.v1")
def _hnsw_sq8() -> AnnKind:
    return Hnsw("hnsw-sq8.v1", sq8=True)


# ---------------------------------------------------------------------- vectors


def real_vectors(out: Path, n_docs: int, data: Path = AILA) -> dict[str, np.ndarray]:
    """MiniLM vectors of the summary windows of `n_docs` AILA judgments and of the AILA queries.

    Returns `windows` (float32, normalised), `window_doc` (int64, the judgment of each window,
    grouped) and `queries` (float32, one per AILA query). Cached as real-minilm-N.npz."""
    path = out / f"real-minilm-{n_docs}.npz"
    if path.is_file():
        with np.load(path) as cached:
            return {key: cached[key] for key in cached.files}
    from aqgr.eval.datasets import QUERY_FILES
    from aqgr.retrieval.dense.embedders import embedders
    from aqgr.retrieval.dense.windows import document_windows, embed_query, flatten_windows
    from aqgr.retrieval.documents import DEFAULT_SLOTS, dense_texts, slot_texts
    from aqgr.summarizer.base import JudgmentText, summarizers

    engine = summarizers.create("extractive.v1")
    files = sorted((data / "Object_casedocs").glob("*.txt"))
    random.Random(0).shuffle(files)
    doc_windows = []
    for f in files[:n_docs]:
        summary = engine.summarize(JudgmentText(f.stem, f.read_text(encoding="utf-8", errors="replace"), str(f), ""))
        doc_windows.append(document_windows(dense_texts(slot_texts(summary, DEFAULT_SLOTS))))
    texts, window_doc = flatten_windows(doc_windows)
    embedder = embedders.create("minilm-l6.v1")
    start = time.perf_counter()
    windows = np.concatenate([embedder.embed(texts[i : i + 256]) for i in range(0, len(texts), 256)])
    query_file = next(data / name for name in QUERY_FILES if (data / name).is_file())
    facts = [line.split("||", 1)[1] for line in query_file.read_text(encoding="utf-8").splitlines() if "||" in line]
    queries = np.stack([embed_query(text, embedder) for text in facts])
    out.mkdir(parents=True, exist_ok=True)
    np.savez(
        path,
        windows=windows.astype(np.float32),
        window_doc=window_doc,
        queries=queries.astype(np.float32),
        embed_s=np.float64(time.perf_counter() - start),
    )
    return {"windows": windows, "window_doc": window_doc, "queries": queries}


def calibration(real: dict[str, np.ndarray]) -> dict[str, float]:
    """The noise scale: a copy's cosine to its template = the median cosine of a real window to
    its nearest window in another judgment."""
    w, doc = real["windows"].astype(np.float64), real["window_doc"]
    sims = w @ w.T
    sims[doc[:, None] == doc[None, :]] = -np.inf
    nearest = float(np.median(sims.max(axis=1)))
    cov = np.cov(w, rowvar=False)
    sigma = math.sqrt((1 / nearest**2 - 1) / np.trace(cov))
    return {"nearest_other_judgment_cos": round(nearest, 4), "sigma": sigma}


def synthetic(out: Path, real: dict[str, np.ndarray], n_windows: int, seed: int = 0) -> tuple[Path, Path]:
    """N MiniLM-like windows (a .npy memory map) and their document numbers, cached in --out."""
    vec_path, n_path = out / f"synthetic-{n_windows}.vectors.npy", out / f"synthetic-{n_windows}.n.npy"
    if vec_path.is_file() and n_path.is_file() and (out / f"synthetic-{n_windows}.json").is_file():
        return vec_path, n_path
    w, doc = real["windows"], real["window_doc"]
    counts = np.bincount(doc)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rng = np.random.default_rng(seed)
    templates = rng.integers(0, len(counts), size=n_windows)  # more than enough documents
    ends = np.cumsum(counts[templates])
    n_docs = int(np.searchsorted(ends, n_windows)) + 1
    templates = templates[:n_docs]
    lengths = counts[templates].copy()
    lengths[-1] -= int(ends[n_docs - 1] - n_windows)  # the last document cut to make exactly N
    rows = np.repeat(starts[templates] - np.cumsum(lengths) + lengths, lengths) + np.arange(n_windows)
    window_n = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    cal = calibration(real)
    chol = np.linalg.cholesky(np.cov(w.astype(np.float64), rowvar=False) + 1e-9 * np.eye(w.shape[1])).astype(np.float32)
    tmp = vec_path.with_suffix(".tmp")
    out_vec = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n_windows, w.shape[1]))
    for a in range(0, n_windows, 100_000):
        part = rows[a : a + 100_000]
        x = w[part] + np.float32(cal["sigma"]) * (
            rng.standard_normal((len(part), w.shape[1]), dtype=np.float32) @ chol.T
        )
        out_vec[a : a + len(part)] = x / np.linalg.norm(x, axis=1, keepdims=True)
    check = np.sort(rng.choice(n_windows, size=min(n_windows, 2000), replace=False))
    copy_cos = float(np.mean(np.sum(out_vec[check] * w[rows[check]], axis=1)))
    out_vec.flush()
    del out_vec
    os.replace(tmp, vec_path)
    np.save(n_path, window_n)
    facts = {**cal, "copy_to_template_cos": round(copy_cos, 4), "n_docs": n_docs, "seed": seed}
    (out / f"synthetic-{n_windows}.json").write_text(json.dumps(facts))
    return vec_path, n_path


# ---------------------------------------------------------------------- measuring


def _status() -> dict[str, int]:
    """This process's memory now (MB): VmRSS, RssAnon (private), RssFile (mapped file pages), VmHWM."""
    got = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                got[key] = int(value.split()[0]) // 1024
    return got


class PeakAnon:
    """The largest RssAnon seen (sampled every 0.1 s) while the block runs."""

    def __enter__(self):
        self.peak, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, _status()["RssAnon"])

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _status()["RssAnon"])


def store_dir(out: Path, kind: str, n: int) -> Path:
    return out / f"store-{kind}-{n}"


def build_one(out: Path, kind: str, n: int) -> dict:
    """Build a one-segment store of the N synthetic windows with `kind` (run in its own process)."""
    from aqgr.retrieval.dense.store import DenseStore, RowFile

    vec_path, n_path = out / f"synthetic-{n}.vectors.npy", out / f"synthetic-{n}.n.npy"
    vectors, window_n = RowFile(vec_path), np.load(n_path)  # read in blocks, never mapped
    where = store_dir(out, kind, n)
    shutil.rmtree(where, ignore_errors=True)
    store = DenseStore(
        where,
        vectors.shape[1],
        ann_min_windows=10**12 if kind == "exact" else 0,
        ann_kind="ivf-sq8.v1" if kind == "exact" else kind,
    )
    with PeakAnon() as peak:
        start = time.perf_counter()
        store.add_segment(vectors, window_n)
        build_s = time.perf_counter() - start
    sizes = {f.split(".", 1)[1]: (where / f).stat().st_size for f in store.files()}
    row = {
        "kind": kind,
        "n_windows": n,
        "n_docs": store.n_documents,
        "build_s": round(build_s, 1),
        "build_peak_rss_mb": _status()["VmHWM"],
        "build_peak_anon_mb": peak.peak,
        "disk_mb": round(store.disk_bytes() / 1e6, 1),
        "ann_mb": round(sizes.get("ann.faiss", 0) / 1e6, 1),
        "segments": store.segments,
    }
    (where / "build.json").write_text(json.dumps(row))
    return row


def search_one(out: Path, kind: str, n: int, efforts: list[int | None], n_queries: int) -> list[dict]:
    """Open the built store and time the queries at each effort (run in its own process)."""
    import faiss

    from aqgr.retrieval.dense.store import DenseStore

    faiss.omp_set_num_threads(1)
    where = store_dir(out, kind, n)
    built = json.loads((where / "build.json").read_text())
    queries = _queries(out)[:n_queries]
    truth_path = out / f"truth-{n}.json"
    truth = json.loads(truth_path.read_text()) if truth_path.is_file() else None
    rows = []
    for effort in efforts:
        before = _status()
        start = time.perf_counter()
        store = DenseStore(where, queries.shape[1], built["segments"], effort=effort)
        open_ms = (time.perf_counter() - start) * 1000
        for q in queries:  # warm-up pass: page cache and faiss buffers
            store.search(q, K)
        times, cpu, found = [], [], []
        for _ in range(2):
            found = []
            for q in queries:
                t, c = time.perf_counter(), time.process_time()
                got = store.search(q, K)
                times.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                found.append([n for n, _ in got])
        seq, pair = _twelve(store, queries)
        if kind == "exact":
            truth_path.write_text(json.dumps(found))
            truth = found
        recall = [len(set(a) & set(b)) / len(b) for a, b in zip(found, truth)] if truth else []
        times.sort()
        mem = _status()
        rows.append(
            {
                **{
                    k: built[k]
                    for k in (
                        "kind",
                        "n_windows",
                        "n_docs",
                        "build_s",
                        "build_peak_rss_mb",
                        "build_peak_anon_mb",
                        "disk_mb",
                        "ann_mb",
                    )
                },
                "effort": effort,
                "open_ms": round(open_ms, 1),
                "p50_ms": round(statistics.median(times), 2),
                "p95_ms": round(times[math.ceil(0.95 * len(times)) - 1], 2),
                "cpu_p50_ms": round(statistics.median(cpu), 2),
                "twelve_ms": round(statistics.median(seq), 1),
                "twelve_2threads_ms": round(statistics.median(pair), 1),
                "recall_at_1000": round(float(np.mean(recall)), 4) if recall else None,
                "recall_min": round(float(np.min(recall)), 4) if recall else None,
                "rss_mb": mem["VmRSS"],
                "rss_anon_mb": mem["RssAnon"],
                "rss_file_mb": mem["RssFile"],
                "rss_anon_before_mb": before["RssAnon"],
                "queries": len(times),
            }
        )
        del store
    return rows


def _twelve(store, queries: np.ndarray) -> tuple[list[float], list[float]]:
    """Wall time of 12 searches (one case search's retrievals) one after another, and shared by
    two threads (faiss releases the GIL while it searches)."""
    from concurrent.futures import ThreadPoolExecutor

    import faiss

    seq, pair = [], []
    # OpenMP's thread count is per calling thread: each worker keeps faiss to one thread too.
    with ThreadPoolExecutor(2, initializer=faiss.omp_set_num_threads, initargs=(1,)) as pool:
        for a in range(0, len(queries) - 11, 12):
            group = list(queries[a : a + 12])
            t = time.perf_counter()
            for q in group:
                store.search(q, K)
            seq.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            list(pool.map(lambda q: store.search(q, K), group))
            pair.append((time.perf_counter() - t) * 1000)
    return seq, pair


def _queries(out: Path) -> np.ndarray:
    path = next(out.glob("real-minilm-*.npz"))
    with np.load(path) as cached:
        return cached["queries"]


def table(rows: list[dict]) -> str:
    keys = [
        "kind",
        "n_windows",
        "effort",
        "build_s",
        "build_peak_anon_mb",
        "disk_mb",
        "p50_ms",
        "p95_ms",
        "cpu_p50_ms",
        "twelve_ms",
        "twelve_2threads_ms",
        "recall_at_1000",
        "recall_min",
        "rss_anon_mb",
        "rss_file_mb",
    ]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(k, r.get("error", ""))) for k in keys) + " |")
    return "\n".join(lines)


def _child(args: list[str], timeout: int) -> list[dict]:
    cmd = [sys.executable, "-m", "aqgr.eval.bench.dense", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=dict(os.environ))
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-400:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result if isinstance(result, list) else [result]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.dense", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated numbers of windows")
    parser.add_argument("--kinds", default=",".join(KINDS), help="exact first: it gives the ground truth")
    parser.add_argument(
        "--efforts",
        action="append",
        default=[],
        metavar="KIND=a,b",
        help="nprobe (IVF) or efSearch (HNSW) values to sweep, instead of the defaults",
    )
    parser.add_argument("--skip", action="append", default=[], metavar="KIND@N", help="a (kind, size) not to run")
    parser.add_argument("--real-docs", type=int, default=1500)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--rebuild", action="store_true", help="rebuild stores already built in --out")
    parser.add_argument("--timeout", type=int, default=7200, help="seconds per build or search process")
    parser.add_argument("--out", type=Path, default=Path("/tmp/aqgr-bench-dense"))
    parser.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        step, kind, n = args.one[0], args.one[1], int(args.one[2])
        if step == "build":
            print(json.dumps(build_one(args.out, kind, n)))
        else:
            efforts = [None if e == "default" else int(e) for e in args.one[3].split(",")]
            print(json.dumps(search_one(args.out, kind, n, efforts, args.queries)))
        return 0
    real = real_vectors(args.out, args.real_docs)
    efforts = {
        **{k: list(v) for k, v in EFFORTS.items()},
        **{k: [int(x) for x in v.split(",")] for k, v in (e.split("=", 1) for e in args.efforts)},
    }
    rows, notes = [], {"real_windows": len(real["windows"]), "real_docs": args.real_docs, **calibration(real)}
    for n in [int(float(s)) for s in args.sizes.split(",")]:
        vec_path, _ = synthetic(args.out, real, n)
        for kind in args.kinds.split(","):
            if f"{kind}@{n}" in args.skip:
                continue
            print(f"{kind} N={n}", file=sys.stderr, flush=True)
            try:
                if args.rebuild or not (store_dir(args.out, kind, n) / "build.json").is_file():
                    print(
                        json.dumps(_child(["--one", "build", kind, str(n), "--out", str(args.out)], args.timeout)),
                        file=sys.stderr,
                        flush=True,
                    )
                sweep = ",".join(str(e) for e in efforts.get(kind, ["default"]))
                got = _child(
                    ["--one", "search", kind, str(n), sweep, "--out", str(args.out), "--queries", str(args.queries)],
                    args.timeout,
                )
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                got = [{"kind": kind, "n_windows": n, "error": str(exc)[-400:]}]
            for row in got:
                print(json.dumps(row), file=sys.stderr, flush=True)
            rows.extend(got)
            (args.out / f"results-{args.sizes}.json").write_text(json.dumps({"notes": notes, "rows": rows}, indent=1))
        notes[f"synthetic-{n}"] = json.loads((args.out / f"synthetic-{n}.json").read_text())
    print(json.dumps(notes))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
