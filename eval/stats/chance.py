"""What a random ranking scores: the chance level beside every evaluation.

A figure means little without the level a system reaches by shuffling the candidates. On
the AILA dev split, for instance, every system's MAP lies within a factor of two or three of
chance, so a ratio between two systems there says nothing; on the citation benchmark they
are fifty times above it. The report shows this level beside the systems.

For one query: N candidate documents (the corpus, or the protocol's pool, less the
query's exclusions), of which c are relevant, R relevant in the qrels (trec_eval's
denominator, which may count judged documents that are not candidates), a run of the
first `depth` of a uniformly random ordering of the candidates. Exact expectations, no
sampling, for the measures below (graded relevance: gains are the qrels' values, as
trec_eval's nDCG takes them); the study's SetP is the precision of any random set (c / N).
Other measures (Bpref, SetR of a set whose size the system chooses) have no entry.

  P(relevant at rank k) = c / N
  E[AP] = 1/R * sum_{k <= D} c/N * (1 + (k-1)(c-1)/(N-1)) / k   (the relevant at k, and
          the expected other relevant above it)
  E[RR] = sum_{k <= D} P(first relevant at k) / k
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from aqgr.eval.measures import SetMeasure, parse_measure


def query_chance(
    measure: str, judged: Mapping[str, int], candidates: int, relevant_candidates: Mapping[str, int], depth: int
) -> float | None:
    """The expected value of `measure` for one query under a random ranking (None: no closed form here).

    `judged`: the query's qrels (doc -> relevance); `candidates`: N; `relevant_candidates`:
    the relevant (rel >= 1) candidates with their relevance; `depth`: documents in the run.
    """
    m = parse_measure(measure)
    if not isinstance(m, SetMeasure) and set(m.params) - {"cutoff"}:
        return None  # a relevance level, judged-only, custom gains: not the plain measure
    n = candidates
    c = len(relevant_candidates)
    r = sum(1 for rel in judged.values() if rel >= 1)
    if n <= 0 or r == 0:
        return 0.0
    shown = min(depth, n)
    if isinstance(m, SetMeasure):
        if m.which == "P":  # any set drawn at random, whatever its size: c / N (a cut-off k: P@k)
            return c / n if m.cutoff is None else c / n * min(m.cutoff, shown) / m.cutoff
        return None if m.cutoff is None else c / n * min(m.cutoff, shown) / r
    name = m.NAME
    cutoff = m.params.get("cutoff")
    if name == "P":
        return c / n * min(cutoff, shown) / cutoff
    if name == "R":
        return c / n * min(cutoff if cutoff is not None else shown, shown) / r
    if name == "AP" and cutoff is None:
        if c == 0:
            return 0.0
        return sum(c / n * (1 + (k - 1) * (c - 1) / max(n - 1, 1)) / k for k in range(1, shown + 1)) / r
    if name == "RR" and cutoff is None:
        total, none_yet = 0.0, 1.0
        for k in range(1, shown + 1):
            if c == 0 or none_yet <= 0.0:
                break
            here = c / (n - k + 1)  # the k-th document is relevant, given none before it was
            total += none_yet * here / k
            none_yet *= 1 - here
        return total
    if name == "nDCG" and cutoff is not None:
        ideal = sorted((rel for rel in judged.values() if rel > 0), reverse=True)[:cutoff]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        mean_gain = sum(relevant_candidates.values()) / n
        return sum(mean_gain / math.log2(i + 2) for i in range(min(cutoff, shown))) / idcg if idcg else 0.0
    return None


def chance_per_query(
    measures: Iterable[str],
    qrels: Mapping[str, Mapping[str, int]],
    queries: Iterable[str],
    doc_ids: Iterable[str],
    *,
    depth: int,
    restrict: frozenset[str] | None = None,
    exclude: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, dict[str, float]]:
    """measure -> judged query -> its chance level (measures without one are left out)."""
    exclude = exclude or {}
    pool = frozenset(doc_ids) if restrict is None else frozenset(restrict) & frozenset(doc_ids)
    scored = [q for q in dict.fromkeys(queries) if q in qrels]
    out: dict[str, dict[str, float]] = {}
    for measure in measures:
        values = {}
        for q in scored:
            candidates = pool - exclude.get(q, frozenset())
            relevant = {d: rel for d, rel in qrels[q].items() if rel >= 1 and d in candidates}
            values[q] = query_chance(measure, qrels[q], len(candidates), relevant, depth)
        if None not in values.values():
            out[str(measure)] = values
    return out


def chance(
    measures: Iterable[str],
    qrels: Mapping[str, Mapping[str, int]],
    queries: Iterable[str],
    doc_ids: Iterable[str],
    *,
    depth: int,
    restrict: frozenset[str] | None = None,
    exclude: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, float]:
    """Mean chance level of each measure over the judged `queries` (measures without one are left out)."""
    per_query = chance_per_query(measures, qrels, queries, doc_ids, depth=depth, restrict=restrict, exclude=exclude)
    return {m: sum(v.values()) / len(v) for m, v in per_query.items() if v}
