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
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from aqgr.foundation.registry import Registry

from .types import ScoredDoc, arrays_of, rank_order, ranked_arrays

Run = Mapping[str, float] | Sequence[ScoredDoc] | Sequence[tuple[str, float]]
Runs = Sequence[Run] | Mapping[str, Run]
Weights = Sequence[float] | Mapping[str, float] | None
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


class _Run(NamedTuple):
    """One run as arrays: each document once, its score (float64) at the same position."""

    ids: list[str]
    scores: np.ndarray


def _as_run(run: Run, where: str) -> _Run:
    """One run as a `_Run`: a mapping or a sequence of (id, score) pairs without a Python step
    per document; anything else (a document listed twice, a malformed pair) the checking way."""
    if (made := arrays_of(run)) is not None and len(set(made[0])) == len(made[0]):
        return _Run(*made)  # as `ranked` made it
    if isinstance(run, Mapping) or (isinstance(run, (list, tuple)) and (not run or _all_pairs(run))):
        ids, values = (run.keys(), run.values()) if isinstance(run, Mapping) else zip(*run) if run else ((), ())
        names = list(map(str, ids))
        try:
            scores = np.fromiter(values, dtype=np.float64, count=len(names))
        except (TypeError, ValueError):
            scores = None
        if scores is not None and len(set(names)) == len(names):
            return _Run(names, scores)
    checked = _as_scores(run, where)
    return _Run(list(checked), np.fromiter(checked.values(), dtype=np.float64, count=len(checked)))


def _all_pairs(run: Sequence) -> bool:
    try:
        return set(map(len, run)) == {2}
    except TypeError:  # an item without a length
        return False


def _normalise_input(runs: Runs, weights: Weights) -> list[tuple[_Run, float]]:
    if isinstance(runs, Mapping):
        for name, run in runs.items():
            if not isinstance(run, (Mapping, Sequence)) or isinstance(run, (str, bytes)):
                raise TypeError(
                    f"run {name!r} is a {type(run).__name__} (a single run? wrap it in a list): {_ACCEPTED}"
                )
        names = list(runs)
        if weights is None:
            weights = {}
        if not isinstance(weights, Mapping):
            raise TypeError("with runs given as a mapping name -> run, weights must be a mapping name -> weight")
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise KeyError(f"weights for unknown runs {unknown}; runs: {names}")
        made: dict[int, _Run] = {}
        return [(_once(made, runs[n], f"run {n!r}"), float(weights.get(n, 1.0))) for n in names]
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise TypeError(f"runs is a {type(runs).__name__}: {_ACCEPTED}")
    if weights is None:
        weights = [1.0] * len(runs)
    if isinstance(weights, Mapping) or len(weights) != len(runs):
        raise TypeError(f"weights must be a sequence of {len(runs)} numbers, one per run")
    made = {}
    return [(_once(made, run, f"run {i}"), float(w)) for i, (run, w) in enumerate(zip(runs, weights))]


def _once(made: dict[int, _Run], run: Run, where: str) -> _Run:
    """`_as_run(run)`, made once for a run given several times (a search above 100,000
    judgments fuses the facts' full-text and dense runs once for the facts and once per question):
    the same object each time, so the fusers can also normalise or rank it once."""
    key = id(run)  # the runs are alive for the whole call: no id is reused
    if key not in made:
        made[key] = _as_run(run, where)
    return made[key]


def _summed(given: Sequence[tuple[_Run, np.ndarray]]) -> list[ScoredDoc]:
    """Each document's sum of its (run, contributions) entries, ranked. The contributions are added
    in the order the runs are given (`np.bincount` adds its weights in order), as a loop over the
    runs would: the same sums to the last bit."""
    given = [(run, part) for run, part in given if run.ids]
    if not given:
        return []
    distinct = list({id(run): run for run, _ in given}.values())
    names = list(dict.fromkeys(itertools.chain.from_iterable(run.ids for run in distinct)))
    position = dict(zip(names, range(len(names))))
    codes = {
        id(run): np.fromiter(map(position.__getitem__, run.ids), dtype=np.int64, count=len(run.ids)) for run in distinct
    }
    sums = np.bincount(
        np.concatenate([codes[id(run)] for run, _ in given]),
        weights=np.concatenate([part for _, part in given]),
        minlength=len(names),
    )
    return ranked_arrays(names, sums)


def reciprocal_rank_fusion(runs: Runs, weights: Weights = None, *, k: int = RRF_K) -> list[ScoredDoc]:
    """Sum over runs of weight / (k + rank), rank 1-based within each run."""
    ranks: dict[int, np.ndarray] = {}  # a run's 1-based rank of each of its documents
    given = []
    for run, weight in _normalise_input(runs, weights):
        rank = ranks.get(id(run))
        if rank is None:
            rank = ranks[id(run)] = np.empty(len(run.ids), dtype=np.int64)
            rank[rank_order(run.ids, run.scores)] = np.arange(1, len(run.ids) + 1)
        given.append((run, weight / (k + rank)))
    return _summed(given)


def score_fusion(runs: Runs, weights: Weights = None) -> list[ScoredDoc]:
    """Sum over runs of weight * min-max normalised score (a run of equal scores gives 1.0)."""
    normalised: dict[int, np.ndarray] = {}
    given = []
    for run, weight in _normalise_input(runs, weights):
        if not run.ids:
            continue
        norms = normalised.get(id(run))
        if norms is None:
            low, high = run.scores.min(), run.scores.max()
            norms = normalised[id(run)] = (run.scores - low) / (high - low) if high > low else np.ones(len(run.ids))
        given.append((run, weight * norms))
    return _summed(given)


fusers: Registry[Fuser] = Registry("fuser")


@fusers.register("rrf.v1")
def _rrf_v1(k: int = RRF_K) -> Fuser:
    return functools.partial(reciprocal_rank_fusion, k=k)


@fusers.register("score.v1")
def _score_v1() -> Fuser:
    return score_fusion
