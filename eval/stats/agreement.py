"""Does a configuration give the same numbers on two index backends? (`X` vs `X@milvus`)

For each pair of systems in one report whose names differ only by a backend suffix
(`aqgr-no-fulltext`, `aqgr-no-fulltext@milvus`: the same summaries, slots, IndexSpec and
search options), `agreement` gives the difference of every mean measure (variant minus
base), the mean top-10 overlap of the two rankings and the mean Jaccard overlap of the
returned sets, and whether they lie within `TOLERANCE`.

The tolerance: every held mean within 0.02 absolute and a mean top-10 overlap
of the rankings of at least 0.8. Held are the measures the protocols report (SPEC.md:
trec_eval's MAP, P@10, Bpref, RR, recall, plus nDCG@10, and the study's SetP/SetR of the
returned set); SetP@k/SetR@k are shown, not held: they are P@k/R@k again, and on the
study subset's 5 scored queries one judgment crossing rank k moves SetR@k by 0.1.

Why not zero: both backends index the same terms and window vectors (dense rankings are
identical), but Milvus computes BM25 itself: over rows, one per dense window (N, df and
avgdl per window; AILA summaries: 3.35 windows/document), and with Lucene's idf
log(1 + (N - df + .5)/(df + .5)) whatever the IndexSpec says. Against an embedded index
with the same idf (`--bm25-idf lucene`) the row statistics leave summary BM25 at a top-10
overlap of 0.96 on the AILA dev facts (a pure-numpy re-implementation of both formulas
gives the same figures); the rest of a pipeline (fusion, questions) keeps it at 0.96 to
0.99, deltas at most 0.007 outside SetP@5/SetR@5. Against the default idf (rank-bm25's,
floored) the overlap is 0.70 to 0.87 and the deltas reach 0.13: outside, because the
two backends then score BM25 differently (eval/systems/on_backend.py states it in the config).
The 0.8 / 0.02 margins leave room for corpora with longer documents (more windows per
document) without hiding a formula difference of that size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Tolerance:
    """How far a backend's numbers may lie from the embedded backend's."""

    measure: float = 0.02  # |mean(variant) - mean(base)| of every held measure, absolute
    overlap: float = 0.8  # mean over queries of |top10(base) ∩ top10(variant)| / 10
    k: int = 10  # the cut-off of the overlap
    held: tuple[str, ...] = ("AP", "P@10", "Bpref", "RR", "R@100", "nDCG@10", "SetP", "SetR", "P@3", "R@3")


TOLERANCE = Tolerance()


def pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """(base, variant) for every `base@backend` whose `base` is in `names` too, in `names` order."""
    from aqgr.eval.systems.on_backend import split_name

    present = set(names)
    out = []
    for name in names:
        base, backend = split_name(name)
        if backend is not None and base in present:
            out.append((base, name))
    return out


def overlap(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """|top k of a ∩ top k of b| / k (k shrunk to the longer list when both are shorter; 1.0 when both are empty)."""
    a, b = list(a)[:k], list(b)[:k]
    size = min(k, max(len(a), len(b)))
    return len(set(a) & set(b)) / size if size else 1.0


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def agreement(base, variant, tolerance: Tolerance = TOLERANCE) -> dict:
    """Compare two eval.harness.SystemResult of the same queries (see the module docstring)."""
    queries = [q for q in base.run if q in variant.run]
    deltas = {
        m: round(variant.results.mean[m] - v, 4) for m, v in base.results.mean.items() if m in variant.results.mean
    }
    per_query = {
        q: round(overlap([d for d, _ in base.run[q]], [d for d, _ in variant.run[q]], tolerance.k), 4) for q in queries
    }
    mean_overlap = sum(per_query.values()) / len(per_query) if per_query else 1.0
    returned = [jaccard(base.returned.get(q, ()), variant.returned.get(q, ())) for q in queries]
    worst = max((abs(d) for m, d in deltas.items() if m in tolerance.held), default=0.0)
    return {
        "base": base.name,
        "variant": variant.name,
        "queries": len(queries),
        "delta": deltas,
        "max_abs_delta": round(worst, 4),  # over the held measures
        "overlap": round(mean_overlap, 4),  # at tolerance.k
        "min_overlap": round(min(per_query.values(), default=1.0), 4),
        "overlap_per_query": per_query,
        "returned_jaccard": round(sum(returned) / len(returned), 4) if returned else 1.0,
        "tolerance": asdict(tolerance),
        "within_tolerance": worst <= tolerance.measure + 1e-9 and mean_overlap >= tolerance.overlap - 1e-9,
    }


def report_agreement(report, tolerance: Tolerance = TOLERANCE) -> list[dict]:
    """`agreement` for every backend pair among an EvalReport's systems."""
    by_name = {s.name: s for s in report.systems}
    return [agreement(by_name[a], by_name[b], tolerance) for a, b in pairs(list(by_name))]
