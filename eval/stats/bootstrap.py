"""How sure a ratio of two systems' mean scores is: a paired, clustered, seeded bootstrap.

A benchmark reports "condition / original" for a measure: the mean over the queries of one
condition's per-query scores over the mean of the original's. When several queries come
from one source (passages of the same judgment), they are not independent: resampling them
one by one would make the interval too narrow. So the clusters (the judgments) are drawn
with replacement, each bringing all its queries, and both conditions are scored on the same
draw (paired). The interval is the percentile one, 2.5% to 97.5% of REPLICATES draws, from a
fixed SEED: the same inputs give the same interval.

Since both means are over the same queries, a draw's ratio is the sum of one condition's
scores over the sum of the other's; a draw whose baseline sum is 0 has no ratio and is left
out (`ratio_interval` says how many were kept).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

REPLICATES = 10_000  # draws; the interval's ends move by about 0.001 between seeds at this count
SEED = 20_250_701  # any fixed number: the interval is reproducible
LEVEL = 0.95


def ratio_interval(
    scores: Mapping[str, float],
    base: Mapping[str, float],
    clusters: Mapping[str, Hashable] | None = None,
    *,
    replicates: int = REPLICATES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict:
    """The ratio mean(scores) / mean(base) over the queries of `base`, and its bootstrap
    interval: {"ratio", "low", "high", "replicates"} (None for the ratio and the ends when
    no draw has a baseline above 0). `clusters`: query -> its cluster (default: each query
    its own); queries of one cluster are drawn together."""
    import numpy as np

    queries = sorted(base)
    groups: dict[Hashable, list[str]] = {}
    for q in queries:
        groups.setdefault(clusters[q] if clusters is not None else q, []).append(q)
    # Cluster sums, in an order that does not depend on the mappings' order.
    keys = sorted(groups, key=repr)
    s = np.array([sum(float(scores[q]) for q in groups[k]) for k in keys])
    b = np.array([sum(float(base[q]) for q in groups[k]) for k in keys])
    ratio = float(s.sum() / b.sum()) if b.sum() else None
    if not keys:
        return {"ratio": None, "low": None, "high": None, "replicates": 0}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(keys), size=(replicates, len(keys)))
    num, den = s[draws].sum(axis=1), b[draws].sum(axis=1)
    kept = den > 0
    ratios = num[kept] / den[kept]
    if not len(ratios):
        return {"ratio": ratio, "low": None, "high": None, "replicates": 0}
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return {"ratio": ratio, "low": float(low), "high": float(high), "replicates": int(kept.sum())}
