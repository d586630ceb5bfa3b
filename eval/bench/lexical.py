"""Lexical engines side by side at scale: build time and memory, disk, search latency at k=1000, agreement.

    python -m aqgr.eval.bench.lexical --sizes 10000,100000 [--engines tantivy.v1,matrix.v1,fts5,bm25s]
                                      [--paragraphs 30] [--seed 0] [--out reports/lexical]
    python -m aqgr.eval.bench.lexical --aila [--out reports/lexical]

Corpus: N synthetic judgments recombined from real ones. Every AILA judgment (Object_casedocs)
is split into paragraphs (its non-empty lines) and each paragraph tokenised once with
`words.v1` (cached in --out); synthetic judgment i is --paragraphs paragraphs drawn at random
(numpy, --seed; the first N of a larger corpus are the smaller corpus), its terms those
paragraphs' tokens followed by the adjacent pairs of the concatenation (`with_pairs(tokens, 2)`,
as the full-text retriever indexes). Queries: the 50 AILA query texts, placeholders dropped
(`strip_masks`, as the search does), tokenised the same way. Document numbers n = 0..N-1.

Engines: `tantivy.v1` and `matrix.v1` (retrieval/lexical/; k1 1.2, b 0.75, Lucene idf, log
query tf), `fts5` (SQLite FTS5's bm25(): k1 1.2, b 0.75, its own idf log((N - df + 0.5) / (df +
0.5)) floored near 0; `detail=none`; a query is the OR of its terms, repeats counted: raw query
tf) and `bm25s` (bm25s, method lucene, k1 1.2, b 0.75, float32, raw query tf; it indexes an
in-memory corpus). For each (engine, N), fresh processes:

1. build: documents streamed from the generator into the engine and committed / saved; wall
   time (`build_s`: the engine's own calls; `generate_s`: making the documents, apart), peak
   RSS of the process (`build_peak_rss_mb`, VmHWM; `generator_rss_mb`: what it held before the
   first document, the paragraph pool included), bytes on disk;
2. search: open the index (`open_s`), run the 50 queries at k = 1000 twice (`first_*`: the
   first pass after opening; `search_p50_ms` / `search_p95_ms`: the second), RSS then
   (`search_rss_mb`: VmRSS, mapped index pages included; `search_peak_rss_mb`: VmHWM). A pass
   stops once it has searched --search-budget-s seconds (`queries_timed` says how many ran;
   then the first pass is the only one);
3. update (tantivy.v1, matrix.v1; unless --no-updates): open the index, replace 100 documents,
   delete 100, add 100, commit (`update_open_s`, `update_buffer_s` for the adds and deletes,
   `update_commit_s`, `update_peak_rss_mb`).

Agreement: `overlap100`, the mean over queries of |top 100 ∩ matrix.v1's top 100| / 100 (the
same N); `overlap100_raw` against matrix.v1 scored with raw query tf, what fts5 and bm25s can
express. A process is stopped past --timeout or --max-rss-gb (the row says so). Index folders
are deleted after their search; results.json in --out, the table on stdout.

--aila: tantivy.v1 against matrix.v1 on the 2,914 real judgments' full texts with pairs (k1 1.2,
b 0.75, Lucene idf, log query tf), the 50 queries: mean overlap@100, queries whose top 10 differ
(as a set, as an order), score differences of the shared top 100; and both engines' MAP on the
citation benchmark (438 queries over the same judgments, each citing judgment skipped).
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from aqgr.foundation.paths import shared_datasets

AILA = shared_datasets() / "aila2019"
CITEBENCH = shared_datasets() / "aila2019-citebench"
DEFAULT_ENGINES = ("tantivy.v1", "matrix.v1", "fts5", "bm25s")
LEXICAL = ("tantivy.v1", "matrix.v1")  # the engines with incremental updates (the update step)
PARAGRAPHS = 30  # paragraphs per synthetic judgment (AILA judgments: median 33 non-empty lines)
K = 1000  # the search reads 1000 deep (SearchOptions.fusion_depth's order)
TOP = 100  # agreement depth
UPDATE = 100  # documents replaced, deleted and added by the update step
PARAMS = {"k1": 1.2, "b": 0.75, "idf": "lucene", "query_tf": "log"}


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status, in MB: VmRSS (resident now) or VmHWM
    (its peak; unlike getrusage's ru_maxrss it starts afresh at exec, not at the parent's size)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _rss_mb() -> float:
    return _status_mb("VmRSS")


def _peak_rss_mb() -> float:
    return _status_mb("VmHWM")


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


# ------------------------------------------------------------------ data


def paragraph_pool(out: Path, data: Path = AILA) -> list[list[list[str]]]:
    """Per AILA judgment (file order), its paragraphs' words.v1 tokens; cached in `out`."""
    path = out / "aila-paragraphs.words.v1.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    from aqgr.eval.datasets import list_documents
    from aqgr.retrieval.text import tokenizers

    tokenize = tokenizers.create("words.v1")
    docs_dir = data / "Object_casedocs"
    pool = []
    for doc_id in list_documents(docs_dir, "cases"):
        text = (docs_dir / f"{doc_id}.txt").read_text(encoding="utf-8", errors="replace")
        pool.append([tokenize(line) for line in text.splitlines() if line.strip()])
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(pool), encoding="utf-8")
    return pool


def aila_queries(out: Path, data: Path = AILA) -> dict[str, list[str]]:
    """The AILA queries as the full-text retriever reads them: placeholders dropped, words.v1, pairs;
    cached in `out` (a search process then loads no tokenizer)."""
    path = out / "aila-queries.words.v1.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    from aqgr.eval.datasets import read_queries
    from aqgr.retrieval.text import strip_masks, tokenizers, with_pairs

    tokenize = tokenizers.create("words.v1")
    queries = {
        qid: with_pairs(tokenize(strip_masks(text)), 2) for qid, text in read_queries(data / "Query_doc.txt").items()
    }
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(queries), encoding="utf-8")
    return queries


class Synthetic:
    """N judgments of `paragraphs` random AILA paragraphs each (see the module docstring)."""

    def __init__(self, pool: list[list[list[str]]], n: int, paragraphs: int = PARAGRAPHS, seed: int = 0):
        interned: dict[str, str] = {}
        self.tokens = [p for doc in pool for p in doc if p]
        # Each paragraph's own pairs, made once (the pairs across paragraph borders are made per document).
        self.pairs = [
            [interned.setdefault(pair, pair) for pair in (f"{a}_{b}" for a, b in zip(p, p[1:]))] for p in self.tokens
        ]
        self.choice = np.random.default_rng(seed).integers(0, len(self.tokens), size=(n, paragraphs))

    def __len__(self) -> int:
        return len(self.choice)

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        for n in range(len(self.choice)):
            yield n, self.terms(n)

    def terms(self, i: int) -> list[str]:
        """Synthetic judgment i's terms."""
        tokens, pairs, row = self.tokens, self.pairs, self.choice[i].tolist()
        terms: list[str] = []
        for p in row:
            terms += tokens[p]
        for p in row:
            terms += pairs[p]
        terms += [f"{tokens[a][-1]}_{tokens[b][0]}" for a, b in zip(row, row[1:])]
        return terms


# ------------------------------------------------------------------ engines


class Lexical:
    """tantivy.v1 / matrix.v1 through retrieval/lexical/."""

    def __init__(self, name: str):
        self.name, self.index = name, None

    def build(self, directory: Path, docs) -> float:
        from aqgr.retrieval.lexical import create_lexical

        index = create_lexical(directory, self.name, **PARAMS)
        spent = 0.0
        for n, terms in _timed(docs):
            start = time.perf_counter()
            index.add(n, terms)
            spent += time.perf_counter() - start
        start = time.perf_counter()
        index.commit()
        index.close()
        return spent + time.perf_counter() - start

    def open(self, directory: Path) -> None:
        from aqgr.retrieval.lexical import open_lexical

        self.index = open_lexical(directory)

    def search(self, terms: list[str], k: int) -> list[int]:
        return [n for n, _ in self.index.search(terms, k)]


class FTS5:
    """SQLite FTS5, bm25() (see the module docstring)."""

    name = "fts5"
    TABLE = "CREATE VIRTUAL TABLE docs USING fts5(terms, tokenize=\"unicode61 remove_diacritics 0 tokenchars '_'\", detail=none)"

    def __init__(self):
        self.db = None

    def build(self, directory: Path, docs) -> float:
        import sqlite3

        directory.mkdir(parents=True)
        start = time.perf_counter()
        db = sqlite3.connect(directory / "fts5.db")
        db.execute(self.TABLE)
        spent, batch = time.perf_counter() - start, []
        for n, terms in _timed(docs):
            batch.append((n, " ".join(terms)))
            if len(batch) == 500:
                spent += self._insert(db, batch)
        spent += self._insert(db, batch)
        start = time.perf_counter()
        db.commit()
        db.close()
        return spent + time.perf_counter() - start

    @staticmethod
    def _insert(db, batch: list) -> float:
        start = time.perf_counter()
        db.executemany("INSERT INTO docs(rowid, terms) VALUES (?, ?)", batch)
        batch.clear()
        return time.perf_counter() - start

    def open(self, directory: Path) -> None:
        import sqlite3

        self.db = sqlite3.connect(directory / "fts5.db", check_same_thread=False)

    def search(self, terms: list[str], k: int, limit_s: float = float("inf")) -> list[int]:
        """The top k; a query still running after `limit_s` seconds is interrupted (TimeoutError)."""
        import sqlite3

        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        deadline = time.monotonic() + limit_s
        self.db.set_progress_handler(lambda: int(time.monotonic() > deadline), 100_000)
        try:
            rows = self.db.execute(
                "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match, k)
            ).fetchall()
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"over {limit_s:.0f} s") from None
            raise
        return [r[0] for r in rows]


class BM25S:
    """bm25s over the in-memory corpus, saved with its own `save` (see the module docstring)."""

    name = "bm25s"

    def __init__(self):
        self.model = None

    def build(self, directory: Path, docs) -> float:
        import bm25s

        corpus = [terms for _, terms in _timed(docs)]
        start = time.perf_counter()
        model = bm25s.BM25(k1=PARAMS["k1"], b=PARAMS["b"], method="lucene")
        model.index(corpus, show_progress=False)
        del corpus
        model.save(directory / "bm25s")
        return time.perf_counter() - start

    def open(self, directory: Path) -> None:
        import bm25s

        self.model = bm25s.BM25.load(directory / "bm25s")

    def search(self, terms: list[str], k: int) -> list[int]:
        ids = self.model.get_tokens_ids(terms)
        if not ids:
            return []
        scores = self.model.get_scores_from_ids(ids)
        top = np.flatnonzero(scores > 0)
        if len(top) > k:
            top = top[np.argpartition(-scores[top], k - 1)[:k]]
        return top[np.argsort(-scores[top], kind="stable")].tolist()


def make_engine(name: str):
    return {"fts5": FTS5, "bm25s": BM25S}.get(name, lambda: Lexical(name))()


_GENERATE = [0.0]  # seconds spent making documents in this process


def _timed(docs) -> Iterator[tuple[int, list[str]]]:
    """`docs`, the time spent making them added to _GENERATE."""
    it = iter(docs)
    while True:
        start = time.perf_counter()
        try:
            item = next(it)
        except StopIteration:
            _GENERATE[0] += time.perf_counter() - start
            return
        _GENERATE[0] += time.perf_counter() - start
        yield item


# ------------------------------------------------------------------ one process each


def run_build(engine: str, n: int, out: Path, paragraphs: int, seed: int) -> dict:
    docs = Synthetic(paragraph_pool(out), n, paragraphs, seed)
    gc.collect()
    before = _rss_mb()
    directory = out / f"{engine}-{n}"
    shutil.rmtree(directory, ignore_errors=True)
    build_s = make_engine(engine).build(directory, docs)
    return {
        "engine": engine,
        "n_docs": n,
        "build_s": round(build_s, 1),
        "generate_s": round(_GENERATE[0], 1),
        "generator_rss_mb": round(before),
        "build_peak_rss_mb": round(_peak_rss_mb()),
        "disk_mb": round(_du(directory) / 1e6, 1),
    }


def run_search(engine: str, n: int, out: Path, budget_s: float) -> dict:
    queries = aila_queries(out)
    directory = out / f"{engine}-{n}"
    gc.collect()
    before = _rss_mb()
    searcher = make_engine(engine)
    start = time.perf_counter()
    searcher.open(directory)
    open_s = time.perf_counter() - start
    opened = _rss_mb()
    passes, tops, depth, interrupted = [], {}, [], None
    for _ in range(2):
        times = []
        for qid, terms in queries.items():
            left = budget_s - sum(times) / 1000
            start = time.perf_counter()
            try:
                hits = (
                    searcher.search(terms, K, limit_s=left) if isinstance(searcher, FTS5) else searcher.search(terms, K)
                )
            except TimeoutError:
                interrupted = f"{qid} interrupted after {time.perf_counter() - start:.0f} s (the budget's rest)"
                break
            times.append((time.perf_counter() - start) * 1000)
            tops[qid] = hits[:TOP]
            depth.append(len(hits))
            if sum(times) > budget_s * 1000:
                break
        passes.append(times)
        if len(times) < len(queries):  # over the budget: the first pass (part of it) is all there is
            break
    timed = passes[-1]
    if not timed:
        return {"open_s": round(open_s, 2), "queries_timed": 0, "search_note": interrupted}
    row = {
        "open_s": round(open_s, 2),
        "first_p50_ms": round(float(np.percentile(passes[0], 50)), 1),
        "first_p95_ms": round(float(np.percentile(passes[0], 95)), 1),
        "search_p50_ms": round(float(np.percentile(timed, 50)), 1),
        "search_p95_ms": round(float(np.percentile(timed, 95)), 1),
        "queries_timed": len(timed),
        "passes": len(passes),
        "rss_before_open_mb": round(before),
        "rss_opened_mb": round(opened),
        "search_rss_mb": round(_rss_mb()),
        "search_peak_rss_mb": round(_peak_rss_mb()),
        "hits_per_query": round(float(np.mean(depth)), 1),
    }
    if interrupted:
        row["search_note"] = interrupted
    (out / f"top{TOP}-{engine}-{n}.json").write_text(json.dumps(tops))
    if engine == "matrix.v1":  # the raw query-tf reference, after the measurements
        del searcher
        gc.collect()
        (out / f"top{TOP}-matrix-raw-{n}.json").write_text(json.dumps(_matrix_raw_tops(directory, queries)))
    return row


def run_update(engine: str, n: int, out: Path, paragraphs: int, seed: int, count: int = UPDATE) -> dict:
    """An incremental update of the built index: `count` documents replaced (n 0..count-1), `count`
    deleted (n count..2 count-1), `count` added (n N..N+count-1), then one commit; new contents are
    synthetic judgments N..N+2 count-1 of the same generator."""
    from aqgr.retrieval.lexical import open_lexical

    docs = Synthetic(paragraph_pool(out), n + 2 * count, paragraphs, seed)
    new = {i: docs.terms(n + i) for i in range(2 * count)}
    del docs
    gc.collect()
    start = time.perf_counter()
    index = open_lexical(out / f"{engine}-{n}")
    opened = time.perf_counter()
    for i in range(count):
        index.add(i, new[i])
    index.delete(range(count, 2 * count))
    for i in range(count):
        index.add(n + i, new[count + i])
    buffered = time.perf_counter()
    index.commit()
    done = time.perf_counter()
    live = len(index)
    index.close()
    return {
        "update_open_s": round(opened - start, 2),
        "update_buffer_s": round(buffered - opened, 2),
        "update_commit_s": round(done - buffered, 2),
        "update_peak_rss_mb": round(_peak_rss_mb()),
        "update_live": live,
        "update_disk_mb": round(_du(out / f"{engine}-{n}") / 1e6, 1),
    }


def _matrix_raw_tops(directory: Path, queries: dict[str, list[str]]) -> dict[str, list[int]]:
    """matrix.v1's top 100 with raw query counts: its saved BM25Matrix, read with query_tf "raw"."""
    from aqgr.retrieval.lexical import tie_key
    from aqgr.retrieval.lexical.bm25 import BM25Matrix
    from aqgr.retrieval.lexical.matrix import matrix_files

    folder = matrix_files(directory)
    matrix = BM25Matrix.load(folder, "matrix")
    matrix.query_tf = "raw"
    with np.load(folder / "docs.npz") as docs:
        ns = docs["ns"]
    keys = np.fromiter((tie_key(int(n)) for n in ns), dtype=np.uint64, count=len(ns))
    tops = {}
    for qid, terms in queries.items():
        scores, matched = matrix.scores_and_matches(terms)
        cols = np.flatnonzero(matched)
        order = np.lexsort((keys[cols], -scores[cols]))[:TOP]
        tops[qid] = ns[cols[order]].tolist()
    return tops


def aila_agreement(out: Path, pool: list[list[list[str]]], queries: dict[str, list[str]]) -> dict:
    """tantivy.v1 against matrix.v1 over the real judgments' full texts with pairs (see the module docstring)."""
    from aqgr.retrieval.lexical import create_lexical
    from aqgr.retrieval.text import with_pairs

    built, seconds = {}, {}
    # The two compared, and for the citation benchmark matrix.v1 at the full-text default k1 2.0.
    for label, engine, params in (
        ("matrix.v1", "matrix.v1", PARAMS),
        ("tantivy.v1", "tantivy.v1", PARAMS),
        ("matrix.v1 k1=2.0", "matrix.v1", {**PARAMS, "k1": 2.0}),
    ):
        directory = out / f"aila-{label.replace(' ', '-')}"
        shutil.rmtree(directory, ignore_errors=True)
        start = time.perf_counter()
        index = create_lexical(directory, engine, **params)
        for n, paragraphs in enumerate(pool):
            index.add(n, with_pairs([t for p in paragraphs for t in p], 2))
        index.commit()
        seconds[label] = round(time.perf_counter() - start, 1)
        built[label] = index
    overlaps, top10_set, top10_order, errors, per_query = [], 0, 0, [], {}
    for qid, terms in queries.items():
        m = built["matrix.v1"].search(terms, TOP)
        t = built["tantivy.v1"].search(terms, TOP)
        overlaps.append(_overlap([n for n, _ in m], [n for n, _ in t]))
        m10, t10 = [n for n, _ in m[:10]], [n for n, _ in t[:10]]
        top10_set += set(m10) != set(t10)
        top10_order += m10 != t10
        exact = dict(m)
        errors += [abs(score - exact[n]) / exact[n] for n, score in t if n in exact]
        if m10 != t10:
            rank = {n: i + 1 for i, (n, _) in enumerate(m)}
            per_query[qid] = {"tantivy_top10_at_matrix_ranks": [rank.get(n) for n in t10]}
    citebench = citebench_map(built)
    for index in built.values():
        index.close()
    for label in built:
        shutil.rmtree(out / f"aila-{label.replace(' ', '-')}", ignore_errors=True)
    return {
        "documents": len(pool),
        "queries": len(queries),
        "params": PARAMS,
        "build_s": seconds,
        "citebench": citebench,
        "mean_overlap100": round(float(np.mean(overlaps)), 4),
        "min_overlap100": round(float(np.min(overlaps)), 2),
        "queries_top10_set_differs": top10_set,
        "queries_top10_order_differs": top10_order,
        "score_rel_error_shared_top100": {
            "median": round(float(np.median(errors)), 4),
            "p95": round(float(np.percentile(errors, 95)), 4),
            "max": round(float(np.max(errors)), 4),
        },
        "differing_top10": per_query,
    }


def citebench_map(built: dict, data: Path = CITEBENCH) -> dict:
    """MAP (depth 1000) of each built index on the citation benchmark, its queries read as the AILA
    ones (placeholders dropped, words.v1, pairs), each citing judgment skipped inside the search;
    documents numbered in `list_documents` order (as `paragraph_pool`). Per-query AP compared."""
    import ir_measures

    from aqgr.eval.datasets import load_dataset
    from aqgr.retrieval.text import strip_masks, tokenizers, with_pairs

    dataset = load_dataset(data)
    number = {doc_id: n for n, doc_id in enumerate(dataset.doc_ids)}
    tokenize = tokenizers.create("words.v1")
    qrels = [ir_measures.Qrel(q, d, r) for q, docs in dataset.qrels.items() for d, r in docs.items()]
    per_query = {}
    for engine, index in built.items():
        run = []
        for qid in dataset.judged_queries():
            terms = with_pairs(tokenize(strip_masks(dataset.queries[qid])), 2)
            skip = [number[d] for d in dataset.exclude.get(qid, ())]
            run += [
                ir_measures.ScoredDoc(qid, dataset.doc_ids[n], score) for n, score in index.search(terms, K, skip=skip)
            ]
        per_query[engine] = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.AP], qrels, run)}
    from scipy.stats import wilcoxon

    a, b = per_query["matrix.v1"], per_query["tantivy.v1"]
    diffs = [b[q] - a[q] for q in a if b[q] != a[q]]
    return {
        "queries": len(a),
        "MAP": {engine: round(float(np.mean(list(v.values()))), 4) for engine, v in per_query.items()},
        "tantivy_vs_matrix": {
            "better": sum(d > 0 for d in diffs),
            "worse": sum(d < 0 for d in diffs),
            "same": len(a) - len(diffs),
            "wilcoxon_p": float(f"{wilcoxon(diffs).pvalue:.2g}") if diffs else None,
        },
    }


# ------------------------------------------------------------------ the parent


def _child(args: list[str], timeout: int, max_rss_gb: float) -> dict:
    """Run one `--one ...` process, stopped past `timeout` seconds or `max_rss_gb` of RSS."""
    cmd = [sys.executable, "-m", "aqgr.eval.bench.lexical", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start, peak, why = time.monotonic(), 0.0, None
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            rss = (
                next(int(line.split()[1]) for line in status.read_text().splitlines() if line.startswith("VmRSS:"))
                / 2**20
            )
        except (OSError, StopIteration):
            rss = 0.0
        peak = max(peak, rss)
        if rss > max_rss_gb:
            why = f"stopped: RSS over {max_rss_gb} GB after {time.monotonic() - start:.0f} s"
        elif time.monotonic() - start > timeout:
            why = f"stopped: over {timeout} s"
        if why:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.5)
    stdout, stderr = proc.communicate()
    if why or proc.returncode != 0:
        return {"error": why or f"exit {proc.returncode}: {stderr.strip()[-400:]}"}
    return json.loads(stdout.strip().splitlines()[-1])


def _overlap(a: list[int], b: list[int]) -> float:
    return len(set(a) & set(b)) / max(len(a), len(b)) if (a or b) else 1.0


def agreement(out: Path, engine: str, n: int) -> dict:
    mine = out / f"top{TOP}-{engine}-{n}.json"
    result = {}
    for key, reference in (
        ("overlap100", f"top{TOP}-matrix.v1-{n}.json"),
        ("overlap100_raw", f"top{TOP}-matrix-raw-{n}.json"),
    ):
        if mine.is_file() and (out / reference).is_file():
            a, b = json.loads(mine.read_text()), json.loads((out / reference).read_text())
            result[key] = round(float(np.mean([_overlap(a[q], b[q]) for q in b if q in a])), 4)
    return result


COLUMNS = (
    "engine",
    "n_docs",
    "build_s",
    "generate_s",
    "build_peak_rss_mb",
    "generator_rss_mb",
    "disk_mb",
    "open_s",
    "search_p50_ms",
    "search_p95_ms",
    "queries_timed",
    "first_p50_ms",
    "search_rss_mb",
    "search_peak_rss_mb",
    "overlap100",
    "overlap100_raw",
    "update_open_s",
    "update_buffer_s",
    "update_commit_s",
    "update_peak_rss_mb",
)


def table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " | error |", "|" + "---|" * (len(COLUMNS) + 1)]
    for r in rows:
        note = "; ".join(str(r[key]) for key in ("error", "search_note", "update_error") if r.get(key))
        lines.append("| " + " | ".join(str(r.get(c, "")) for c in COLUMNS) + f" | {note} |")
    return "\n".join(lines)


def bench(
    sizes: list[int],
    engines: list[str],
    out: Path,
    *,
    paragraphs: int,
    seed: int,
    timeout: int,
    max_rss_gb: float,
    budget_s: float,
    updates: bool = True,
) -> list[dict]:
    prepared = _child(
        ["--one", "prepare", "-", "0", "--out", str(out)], timeout, max_rss_gb
    )  # tokenised once, before the timed processes
    if "error" in prepared:
        raise RuntimeError(f"tokenising the AILA paragraphs and queries failed: {prepared['error']}")
    rows = []
    for n in sizes:
        for engine in engines:
            _say(f"{engine} N={n}: build")
            row = {"engine": engine, "n_docs": n}
            row.update(
                _child(
                    [
                        "--one",
                        "build",
                        engine,
                        str(n),
                        "--out",
                        str(out),
                        "--paragraphs",
                        str(paragraphs),
                        "--seed",
                        str(seed),
                    ],
                    timeout,
                    max_rss_gb,
                )
            )
            if "error" not in row:
                _say(f"{engine} N={n}: search")
                row.update(
                    _child(
                        ["--one", "search", engine, str(n), "--out", str(out), "--search-budget-s", str(budget_s)],
                        timeout,
                        max_rss_gb,
                    )
                )
            if "error" not in row and engine in LEXICAL and updates:
                _say(f"{engine} N={n}: update")
                update = _child(
                    [
                        "--one",
                        "update",
                        engine,
                        str(n),
                        "--out",
                        str(out),
                        "--paragraphs",
                        str(paragraphs),
                        "--seed",
                        str(seed),
                    ],
                    timeout,
                    max_rss_gb,
                )
                row.update({"update_error": update["error"]} if "error" in update else update)
            rows.append(row)
            _say(json.dumps(row))
            (out / "results.json").write_text(json.dumps(rows, indent=1))
        for engine in engines:  # agreement needs matrix.v1's runs: after every engine of this N
            for row in rows:
                if row["engine"] == engine and row["n_docs"] == n:
                    row.update(agreement(out, engine, n))
            shutil.rmtree(out / f"{engine}-{n}", ignore_errors=True)
        (out / "results.json").write_text(json.dumps(rows, indent=1))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.lexical", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--engines", default=",".join(DEFAULT_ENGINES))
    parser.add_argument("--paragraphs", type=int, default=PARAGRAPHS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per process")
    parser.add_argument("--max-rss-gb", type=float, default=14.0, help="stop a process whose RSS passes this")
    parser.add_argument(
        "--search-budget-s",
        type=float,
        default=300.0,
        help="seconds of searching per pass; past it the pass stops (queries_timed says how many ran)",
    )
    parser.add_argument("--no-updates", action="store_true", help="skip the update step")
    parser.add_argument("--out", type=Path, default=Path("reports/lexical"))
    parser.add_argument("--aila", action="store_true", help="tantivy.v1 vs matrix.v1 on the real AILA judgments")
    parser.add_argument("--one", nargs=3, metavar=("STEP", "ENGINE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.one:
        step, engine, n = args.one
        if step == "prepare":
            print(
                json.dumps(
                    {"paragraphs": sum(map(len, paragraph_pool(args.out))), "queries": len(aila_queries(args.out))}
                )
            )
            return 0
        if step == "build":
            row = run_build(engine, int(n), args.out, args.paragraphs, args.seed)
        elif step == "update":
            row = run_update(engine, int(n), args.out, args.paragraphs, args.seed)
        else:
            row = run_search(engine, int(n), args.out, args.search_budget_s)
        print(json.dumps(row))
        return 0
    if args.aila:
        print(json.dumps(aila_agreement(args.out, paragraph_pool(args.out), aila_queries(args.out)), indent=1))
        return 0
    rows = bench(
        [int(float(s)) for s in args.sizes.split(",")],
        args.engines.split(","),
        args.out,
        paragraphs=args.paragraphs,
        seed=args.seed,
        timeout=args.timeout,
        max_rss_gb=args.max_rss_gb,
        budget_s=args.search_budget_s,
        updates=not args.no_updates,
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
