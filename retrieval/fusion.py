"""Fusion of ranked runs: pure functions over runs keyed by document id.

A run is a `Mapping[doc_id, score]` or a sequence of `ScoredDoc` / `(doc_id, score)`
pairs. `runs` is a sequence of runs, or a mapping `name -> run` (for example the output of
`SummaryIndex.retrieve`); `weights` is then a sequence aligned with the runs, or a
mapping `name -> weight` (missing names weigh 1.0). Inputs are never mutated.

Ranks within a run, and the fused order, follow `retrieval.types.rank_key`: -score, then
a stable hash of the doc id. Never raw id or input order (AILA ids leak relevance).

Registry `fusers`: `rrf.v1` (reciprocal rank fusion), `score.v1` (min-max normalised
weighted score sum). `fusers.create(name, **params)` returns `fuse(runs, weights=None)`.
"""

from __future__ import annotations

import functools
from typing import Callable, Iterable, Mapping, Sequence, Union

from aqgr.foundation.registry import Registry

from .types import ScoredDoc, ranked

Run = Union[Mapping[str, float], Sequence[ScoredDoc], Sequence[tuple[str, float]]]
Runs = Union[Sequence[Run], Mapping[str, Run]]
Weights = Union[Sequence[float], Mapping[str, float], None]
Fuser = Callable[..., list[ScoredDoc]]

# RRF constant k = 60: Cormack, Clarke & Buettcher (SIGIR 2009), also pyserini's default.
RRF_K = 60

_ACCEPTED = (
    "runs must be a sequence of runs or a mapping name -> run, where a run is a mapping "
    "doc_id -> score or a sequence of ScoredDoc / (doc_id, score) pairs"
)


def _as_scores(run: Run, where: str) -> dict[str, float]:
    """One run as {doc_id: score}; a doc listed twice keeps its best score."""
    if isinstance(run, Mapping):
        items: Iterable = run.items()
    elif isinstance(run, (str, bytes)) or not isinstance(run, Iterable):
        raise TypeError(f"{where} is a {type(run).__name__}: {_ACCEPTED}")
    else:
        items = run
    scores: dict[str, float] = {}
    for item in items:
        try:
            doc_id, score = item
            doc_id, score = str(doc_id), float(score)
        except (TypeError, ValueError):
            raise TypeError(f"{where} holds {item!r}: {_ACCEPTED}") from None
        if doc_id not in scores or score > scores[doc_id]:
            scores[doc_id] = score
    return scores


def _normalise_input(runs: Runs, weights: Weights) -> list[tuple[dict[str, float], float]]:
    if isinstance(runs, Mapping):
        for name, run in runs.items():
            if not isinstance(run, (Mapping, Sequence)) or isinstance(run, (str, bytes)):
                raise TypeError(f"run {name!r} is a {type(run).__name__} (a single run? wrap it in a list): {_ACCEPTED}")
        names = list(runs)
        if weights is None:
            weights = {}
        if not isinstance(weights, Mapping):
            raise TypeError("with runs given as a mapping name -> run, weights must be a mapping name -> weight")
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise KeyError(f"weights for unknown runs {unknown}; runs: {names}")
        made: dict[int, dict[str, float]] = {}
        return [(_once(made, runs[n], f"run {n!r}"), float(weights.get(n, 1.0))) for n in names]
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise TypeError(f"runs is a {type(runs).__name__}: {_ACCEPTED}")
    if weights is None:
        weights = [1.0] * len(runs)
    if isinstance(weights, Mapping) or len(weights) != len(runs):
        raise TypeError(f"weights must be a sequence of {len(runs)} numbers, one per run")
    made = {}
    return [(_once(made, run, f"run {i}"), float(w)) for i, (run, w) in enumerate(zip(runs, weights))]


def _once(made: dict[int, dict[str, float]], run: Run, where: str) -> dict[str, float]:
    """`_as_scores(run)`, made once for a run given several times (a search above 100,000
    judgments fuses the facts' full-text and dense runs once for the facts and once per question):
    the same dict each time, so the fusers can also normalise or rank it once."""
    key = id(run)  # the runs are alive for the whole call: no id is reused
    if key not in made:
        made[key] = _as_scores(run, where)
    return made[key]


def reciprocal_rank_fusion(runs: Runs, weights: Weights = None, *, k: int = RRF_K) -> list[ScoredDoc]:
    """Sum over runs of weight / (k + rank), rank 1-based within each run."""
    fused: dict[str, float] = {}
    orders: dict[int, list[ScoredDoc]] = {}
    for scores, weight in _normalise_input(runs, weights):
        order = orders.get(id(scores))
        if order is None:
            order = orders[id(scores)] = ranked(scores)
        for rank, doc in enumerate(order, start=1):
            fused[doc.doc_id] = fused.get(doc.doc_id, 0.0) + weight / (k + rank)
    return ranked(fused)


def score_fusion(runs: Runs, weights: Weights = None) -> list[ScoredDoc]:
    """Sum over runs of weight * min-max normalised score (a run of equal scores gives 1.0)."""
    fused: dict[str, float] = {}
    normalised: dict[int, list[tuple[str, float]]] = {}
    for scores, weight in _normalise_input(runs, weights):
        if not scores:
            continue
        norms = normalised.get(id(scores))
        if norms is None:
            low, high = min(scores.values()), max(scores.values())
            norms = normalised[id(scores)] = [(doc_id, (score - low) / (high - low) if high > low else 1.0)
                                              for doc_id, score in scores.items()]
        for doc_id, norm in norms:
            fused[doc_id] = fused.get(doc_id, 0.0) + weight * norm
    return ranked(fused)


fusers: Registry[Fuser] = Registry("fuser")


@fusers.register("rrf.v1")
def _rrf_v1(k: int = RRF_K) -> Fuser:
    return functools.partial(reciprocal_rank_fusion, k=k)


@fusers.register("score.v1")
def _score_v1() -> Fuser:
    return score_fusion
