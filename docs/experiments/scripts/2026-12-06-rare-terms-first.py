# Usage: python docs/experiments/scripts/2026-12-06-rare-terms-first.py HOME PART F [F ...]
#   HOME: an archive built by bench_pipeline; PART: fulltext or bm25; F: document-frequency fractions
"""One-off measurement: can a facts query skip the postings of its common terms, since tantivy's Python
binding walks every posting of every query term (2026-12-06-rescored-questions report)?

For AILA queries 11-30 as facts queries (placeholders dropped, words.v1, pairs for the full text),
against the exact run of 1,000 (`TantivyEngine.search`):
- `cut F`: the query without its terms held by more than F of the archive's documents;
- `split F`: the run of the other terms, 1,000 deep, then the dropped terms' scores added to those
  1,000 (`TantivyEngine.score`, the weighted query filtered to them) and ranked again: exact scores
  for the documents it holds.
Prints the median milliseconds of each and the mean share of the exact run's top 12 / 100 / 1,000
that it holds; for `split`, the milliseconds of its two steps apart. It reads private names (the
engine's searcher): an analysis, not an API."""

import statistics
import sys
import time
from pathlib import Path

from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.lexical import best, query_weights
from aqgr.retrieval.lexical_tantivy import TERMS, TantivyEngine
from aqgr.retrieval.text import strip_masks, tokenizers, with_pairs

DEPTH = 1000
TOPS = (12, 100, 1000)


def held(exact, got) -> dict[int, float]:
    return {d: len({n for n, _ in exact[:d]} & {n for n, _ in got[:d]}) / d for d in TOPS}


def main(home: Path, part: str, fractions: list[float]) -> None:
    engine = TantivyEngine.open(home / "index" / part)
    n_docs, searcher = len(engine), engine._index.searcher()
    tokenize = tokenizers.create("words.v1")
    queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[10:30]
    exact_ms: list[float] = []
    found = {
        (kind, f): {"ms": [], "first": [], "second": [], **{d: [] for d in TOPS}}
        for kind in ("cut", "split")
        for f in fractions
    }
    for facts in queries:
        terms = tokenize(strip_masks(facts))
        terms = with_pairs(terms) if part == "fulltext" else terms
        t = time.perf_counter()
        exact = engine.search(terms, DEPTH)
        exact_ms.append((time.perf_counter() - t) * 1000)
        weights = query_weights(terms, engine.params["query_tf"])
        for f in fractions:
            t = time.perf_counter()
            common = {term: w for term, w in weights.items() if searcher.doc_freq(TERMS, term) > f * n_docs}
            rare = [term for term in terms if term not in common]
            cut = engine.search(rare, DEPTH)
            first = time.perf_counter()
            row = found[("cut", f)]
            row["ms"].append((first - t) * 1000)
            for d, share in held(exact, cut).items():
                row[d].append(share)
            more = engine.score(common, [n for n, _ in cut]) if common else {}
            split = best(((n, score + more.get(n, 0.0)) for n, score in cut), DEPTH)
            row = found[("split", f)]
            row["ms"].append((time.perf_counter() - t) * 1000)
            row["first"].append((first - t) * 1000)
            row["second"].append((time.perf_counter() - first) * 1000)
            for d, share in held(exact, split).items():
                row[d].append(share)
    print(f"{part}: {n_docs} documents, exact run p50 {statistics.median(exact_ms):.0f} ms")
    for (kind, f), row in found.items():
        steps = (
            f" (its run {statistics.median(row['first']):.0f} ms, the scores added {statistics.median(row['second']):.0f} ms)"
            if kind == "split"
            else ""
        )
        shares = ", ".join(f"top {d} {statistics.mean(row[d]):.3f}" for d in TOPS)
        print(f"{kind} F={f}: p50 {statistics.median(row['ms']):.0f} ms{steps}; held {shares}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], [float(f) for f in sys.argv[3:]])
