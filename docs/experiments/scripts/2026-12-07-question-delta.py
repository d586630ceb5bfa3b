# usage: AQGR_DATASETS=<datasets> python docs/experiments/scripts/2026-12-07-question-delta.py [INDEX_DIR]
"""One-off measurement: could a question's BM25 run be the facts' scores over every judgment plus
the scores of what the question adds? (Not adopted: docs/experiments/2026-12-07-term-queries-and-ranked-runs.md.)

BM25 is linear in the query's term weights, so for the query "question + facts" each judgment's
score is its facts score plus its score for the weights the question adds (its own terms, and the
extra weight of those the facts repeat). For AILA queries 2-30 and each of their generated
questions, per lexical part of the AILA index (INDEX_DIR, default /work/runs/aila_idx): the time of
the facts' query read to its top 1,016 and to every judgment, of the question's own query, and of
the added query plus the sums and the top 1,016; and in how many question runs the two top 1,016
came in the same order (tantivy adds in f32). It calls private names: an analysis, not an API."""

import statistics
import sys
import time
from pathlib import Path

from aqgr.eval.datasets import load_dataset
from aqgr.eval.pipeline_systems import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
from aqgr.eval.systems import default_cache_dir
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import SummaryIndex
from aqgr.retrieval.lexical import best, query_weights
from aqgr.retrieval.retrievers import Query

DEPTH = 1016  # fusion_depth 1,000 and the index's over-fetch
where = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/runs/aila_idx")
dataset = load_dataset(shared_datasets() / "aila2019")
archive = case_archive(dataset.docs_dir, dataset.doc_ids, default_cache_dir(), DEFAULT_SUMMARIZER)
system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=DEFAULT_SUMMARIZER, embedder=None)
index = SummaryIndex.load(where, system.index_spec())
searcher = system.searcher_for(archive, index)
options = system.search_options().model_copy(update={"min_content_words": 1})
plans = [searcher.plan(q, options=options) for q in list(dataset.queries.values())[1:30]]


def timed(f):
    t = time.perf_counter()
    out = f()
    return out, (time.perf_counter() - t) * 1000


for name in ("fulltext", "bm25"):
    part = index._parts[name]
    engine = part.engine
    query_tf = engine.params["query_tf"]
    took = {"facts top": [], "facts all": [], "question": [], "added + sums": []}
    same = runs = 0
    for plan in plans:
        facts = searcher._query(plan.facts, options)
        facts_terms = part._terms(Query(facts, index._tokenizer, lambda: None))
        took["facts top"].append(timed(lambda: engine.search(facts_terms, DEPTH))[1])
        every, ms = timed(lambda: engine.search(facts_terms, 10**7))
        took["facts all"].append(ms)
        held = query_weights(facts_terms, query_tf)
        for question in plan.questions:
            terms = part._terms(Query(f"{question}\n{facts}", index._tokenizer, lambda: None))
            direct, ms = timed(lambda: engine.search(terms, DEPTH))
            took["question"].append(ms)

            def added():
                extra = {
                    t: w - held.get(t, 0.0) for t, w in query_weights(terms, query_tf).items() if w != held.get(t, 0.0)
                }
                searcher_ = engine._index.searcher()
                hits = searcher_.search(engine._weighted_query(extra), 10**7, count=False).hits if extra else []
                ns = searcher_.fast_field_values("n", [address for _, address in hits]) if hits else []
                sums = dict(every)
                for n, (score, _) in zip(ns, hits):
                    sums[n] = sums.get(n, 0.0) + score
                return best(sums.items(), DEPTH)

            mine, ms = timed(added)
            took["added + sums"].append(ms)
            runs += 1
            same += [n for n, _ in mine] == [n for n, _ in direct]
    print(name, {k: round(statistics.median(v), 2) for k, v in took.items()}, f"same order {same} of {runs}")
