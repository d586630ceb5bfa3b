# Usage: python docs/experiments/scripts/2026-12-06-tantivy-pruning.py HOME N   (HOME: an archive built by bench_pipeline, hashing.v1)
"""One-off measurement: does a tantivy search from Python prune? The first N AILA facts queries, as aqgr's
BM25 retrievers build them, timed with count=False and count=True (which must visit every match) at k=10
and k=1016, and a two-term query of common words. Equal times mean no pruning. It reads private
attributes (`Archive._searcher`, the index's parts and engines): an analysis, not an API."""

import statistics
import sys
import time
from pathlib import Path

import tantivy

from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import IndexSpec
from aqgr.retrieval.lexical import query_weights
from aqgr.retrieval.text import strip_masks, with_pairs

home, n = Path(sys.argv[1]), int(sys.argv[2])
index = Archive(home, index=IndexSpec(embedder="hashing.v1"))._searcher().index
Q, O = tantivy.Query, tantivy.Occur
times: dict[str, list[float]] = {}


def timed(name: str, searcher, query, k: int, count: bool) -> None:
    t = time.perf_counter()
    searcher.search(query, k, count=count)
    times.setdefault(name, []).append((time.perf_counter() - t) * 1000)


for facts in list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[:n]:
    for part in ("bm25", "fulltext"):
        retriever = index._parts[part]
        engine = retriever.engine
        weights = query_weights(
            with_pairs(index.tokenizer(strip_masks(facts) or facts), retriever.ngrams), engine.params["query_tf"]
        )
        searcher = engine._index.searcher()
        query = Q.boolean_query(
            [
                (O.Should, Q.boost_query(Q.term_query(engine._schema, "terms", t, index_option="freq"), w))
                for t, w in weights.items()
            ]
        )
        for count in (False, True):
            for k in (10, 1016):
                timed(f"{part} facts count={count} k={k}", searcher, query, k, count)
        two = Q.boolean_query(
            [(O.Should, Q.term_query(engine._schema, "terms", t, index_option="freq")) for t in ("section", "murder")]
        )
        for count in (False, True):
            timed(f"{part} 'section OR murder' count={count} k=10", searcher, two, 10, count)
for name, values in times.items():
    print(name, "median ms", round(statistics.median(values), 1))
