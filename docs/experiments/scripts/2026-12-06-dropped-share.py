# Usage: python docs/experiments/scripts/2026-12-06-dropped-share.py FULLTEXT_DIR [FULLTEXT_DIR ...]   (an index's fulltext folder, e.g. HOME/index/fulltext)
"""One-off measurement: for AILA queries 11-30 as facts queries (placeholders dropped, words.v2, word pairs),
the median share of a query's distinct full-text terms held by more than 0.2 of the index's judgments, and of
the postings those terms carry (2026-12-06-common-terms report)."""

import statistics
import sys
from pathlib import Path

from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.lexical_tantivy import TantivyEngine
from aqgr.retrieval.text import strip_masks, tokenizers, with_pairs

tokenize = tokenizers.create("words.v2")
queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[10:30]
for path in sys.argv[1:]:
    engine = TantivyEngine.open(Path(path))
    n = len(engine)
    terms_out, postings_out = [], []
    for q in queries:
        terms = list(dict.fromkeys(with_pairs(tokenize(strip_masks(q) or q), 2)))
        dfs = engine.doc_freqs(terms)
        common = [df for df in dfs if df > 0.2 * n]
        terms_out.append(len(common) / len(terms))
        postings_out.append(sum(common) / max(1, sum(dfs)))
    print(
        path,
        f"{n:,} judgments: distinct terms left out {statistics.median(terms_out):.3f},",
        f"postings left out {statistics.median(postings_out):.3f}",
    )
