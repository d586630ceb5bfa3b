# Usage: python docs/experiments/scripts/2026-12-04-question-split.py HOME N_QUERIES OUT.json  (HOME: an archive built by bench_pipeline)
"""One-off analysis: can a question run's full-text BM25 (question + facts) be computed exactly from
the facts run plus a query of the question's extra weight? score(q+f, d) = score(f, d) + score(delta, d),
delta(t) = w_{q+f}(t) - w_f(t) >= 0. Top-k is exact when the k-th combined score among
C = facts top-D U delta top-D' exceeds s_f(D) + s_delta(D'). Times each part on a built index.

It reads private parts of the index (the full-text engine's tantivy index) and rebuilds the question run's
text as `Searcher._retrieve` does with the default options (question, newline, facts): an analysis, not an API."""

import json
import statistics
import sys
import time
from pathlib import Path

from aqgr.archive.home import Archive
from aqgr.eval.datasets import read_queries
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.index import IndexSpec
from aqgr.retrieval.lexical import query_weights
from aqgr.retrieval.text import with_pairs

home, nq = Path(sys.argv[1]), int(sys.argv[2])
K = 1000
archive = Archive(home, index=IndexSpec(embedder="hashing.v1"))
s = archive._searcher()
index = s.index
part = index._parts["fulltext"]
eng = part.engine
import tantivy

Q, O = tantivy.Query, tantivy.Occur
schema = eng._schema
qtf = eng._params["query_tf"]


def bq(weights):
    return Q.boolean_query(
        [
            (O.Should, Q.boost_query(Q.term_query(schema, "terms", t, index_option="freq"), w))
            for t, w in weights.items()
        ]
    )


def run(query, k):
    se = eng._index.searcher()
    t = time.perf_counter()
    hits = se.search(query, k, count=False).hits
    ns = se.fast_field_values("n", [a for _, a in hits])
    return time.perf_counter() - t, [(int(n), float(sc)) for n, (sc, _) in zip(ns, hits)]


def terms(text):
    table = s.correspondence
    if table:
        text = table.expand(text)
    return with_pairs(index.tokenizer(text), part.ngrams)


rows = []
queries = list(read_queries(shared_datasets() / "aila2019" / "Query_doc.txt").values())[:nq]
for facts in queries:
    plan = s.plan(facts)
    f = s._query(plan.facts, plan.options)
    wf = query_weights(terms(f), qtf)
    for question in plan.questions:
        wc = query_weights(terms(f"{question}\n{f}"), qtf)
        delta = {t: wc[t] - wf.get(t, 0.0) for t in wc if wc[t] - wf.get(t, 0.0) > 1e-9}
        negative = [t for t in wf if wc.get(t, 0.0) + 1e-9 < wf[t]]
        t_full, full = run(bq(wc), K)
        row = {
            "terms_f": len(wf),
            "terms_c": len(wc),
            "terms_delta": len(delta),
            "negative": len(negative),
            "full_ms": t_full * 1000,
        }
        for D in (1000, 3000, 10000):
            t_f, lf = run(bq(wf), D)
            sf = lf[-1][1] if len(lf) >= D else 0.0
            for D2 in (1000, 5000):
                t_d, ld = run(bq(delta), D2)
                sd = ld[-1][1] if len(ld) >= D2 else 0.0
                cand = sorted({n for n, _ in lf} | {n for n, _ in ld})
                restricted = Q.boolean_query(
                    [(O.Must, bq(wc)), (O.Must, Q.const_score_query(Q.term_set_query(schema, "n", cand), 0.0))]
                )
                t_r, lc = run(restricted, len(cand))
                kth = lc[K - 1][1] if len(lc) >= K else 0.0
                holds = len(lc) >= K and kth > sf + sd
                same = holds and [n for n, _ in lc[:K]] == [n for n, _ in full[:K]]
                row[f"D{D}_D{D2}"] = {
                    "f_ms": t_f * 1000,
                    "delta_ms": t_d * 1000,
                    "restricted_ms": t_r * 1000,
                    "cand": len(cand),
                    "holds": holds,
                    "same_top": same,
                    "margin": (kth - sf - sd) / (kth or 1),
                }
        rows.append(row)
        print(json.dumps(row), flush=True)
json.dump(rows, open(sys.argv[3], "w"))
print("full ms p50", statistics.median(r["full_ms"] for r in rows))
for key in [k for k in rows[0] if k.startswith("D")]:
    rs = [r[key] for r in rows]
    print(
        key,
        "holds",
        sum(r["holds"] for r in rs),
        "/",
        len(rs),
        "same",
        sum(r["same_top"] for r in rs),
        "f",
        round(statistics.median(r["f_ms"] for r in rs), 1),
        "delta",
        round(statistics.median(r["delta_ms"] for r in rs), 1),
        "restricted",
        round(statistics.median(r["restricted_ms"] for r in rs), 1),
        "cand",
        statistics.median(r["cand"] for r in rs),
        "margin p50",
        round(statistics.median(r["margin"] for r in rs), 4),
    )
