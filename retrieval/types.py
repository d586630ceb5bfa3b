"""Internal records shared by the retrievers, the engines and fusion, and the one rule that orders them.

`ScoredDoc` is a hit; `Where` a search filter as an engine applies it inside its search
(retrieval/embedded/restriction.py makes it, the tantivy engine reads it).

Every ranked list in retrieval/ (a BM25 run, a dense run, a fused run) is ordered by
`rank_key`: descending score, then a stable hash of the document id. Never by raw id or
input order: in the AILA data the ids correlate with relevance, so an id tie-break would
leak labels into the ranking.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple


class ScoredDoc(NamedTuple):
    """One retrieved document: its id and the retriever's (or fusion's) score."""

    doc_id: str
    score: float


# A filter field's term in an engine that filters inside its search: "field" + FIELD_SEP + "value".
FIELD_SEP = "\x1f"


@dataclass(frozen=True)
class Where:
    """A filter as an engine applies it inside its search (`SummaryIndex.retrieve` with an
    `Admitted` made from a facet selection): every clause holds (a clause: any of its terms,
    "field" FIELD_SEP "value"), and the date, a YYYYMMDD integer, lies in `decided` (inclusive)."""

    clauses: tuple[tuple[str, ...], ...]
    decided: tuple[int, int] | None = None


@functools.lru_cache(maxsize=1 << 18)  # a search ranks the same ids again and again
def id_hash(doc_id: str) -> bytes:
    """A stable, id-order-free tie-break key (blake2b, 8 bytes) for a document id."""
    return hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()


def rank_key(doc: ScoredDoc) -> tuple[float, bytes, str]:
    """Sort key: -score, then the id's hash (then the id itself, only if two hashes collide)."""
    return (-doc.score, id_hash(doc.doc_id), doc.doc_id)


_scored_doc = functools.partial(tuple.__new__, ScoredDoc)  # ScoredDoc((id, score)) without a Python call each


def ranked(scores: Mapping[str, float] | Iterable[ScoredDoc], k: int | None = None) -> list[ScoredDoc]:
    """Scores as a list of ScoredDoc ordered by `rank_key` (a new list; the input is not touched);
    with `k`, only the first k of it."""
    import numpy as np

    pairs = list(scores.items() if isinstance(scores, Mapping) else scores)
    if not pairs:
        return []
    raw_ids, raw_values = zip(*pairs)
    return ranked_arrays(list(map(str, raw_ids)), np.asarray(raw_values, dtype=np.float64), k)


def rank_order(ids: Sequence[str], values, k: int | None = None):
    """The positions of `values` (float64, aligned with `ids`) in `rank_key` order, as an int64
    array; with `k`, only the first k."""
    return order_by_score(values, k, lambda i: (id_hash(ids[i]), ids[i]))


def order_by_score(values, k: int | None, tie: Callable[[int], object]):
    """The positions of `values` (a float64 array) by descending score, those tied on a score
    ordered by `tie(position)` (a stable sort: equal keys keep their order); with `k`, the first k.

    numpy sorts the scores (stable, descending); only documents tied on a score are then given a
    key, so a search's ~12,000 documents cost no key tuple each (about half the time)."""
    import numpy as np

    negated = -values
    order = np.argsort(negated, kind="stable")
    by_score = negated[order]
    tied = np.flatnonzero(by_score[1:] == by_score[:-1])  # position i ties with i + 1
    if len(tied):
        order = order.tolist()
        breaks = np.flatnonzero(np.diff(tied) != 1)
        for first, last in zip(tied[np.r_[0, breaks + 1]].tolist(), tied[np.r_[breaks, len(tied) - 1]].tolist()):
            if k is not None and first >= k:
                break
            order[first : last + 2] = sorted(order[first : last + 2], key=tie)
        order = np.asarray(order, dtype=np.int64)
    return order[:k]


class RankedRun(list):
    """A ranked list of ScoredDoc (a plain list to every reader) that also holds its ids and
    scores as made (`arrays`), so that fusion reads them without a Python step per document.
    Changed in place in any way, it lets go of them: `arrays` is then None."""

    __slots__ = ("_arrays",)

    def __init__(self, ids: list[str], scores):
        super().__init__(map(_scored_doc, zip(ids, scores.tolist())))
        scores.flags.writeable = False  # read by fusion as it stands
        self._arrays = (ids, scores)

    @property
    def arrays(self):
        """(ids, read-only float64 scores), in the list's order, or None once the list was changed."""
        return self._arrays


def arrays_of(run) -> tuple[list[str], object] | None:
    """A `RankedRun`'s (ids, read-only float64 scores) as made, or None (another kind of run, or one
    changed since)."""
    return run.arrays if type(run) is RankedRun else None


def _dropping_arrays(method):
    def changed(self, *args, **kwargs):
        self._arrays = None
        return method(self, *args, **kwargs)

    changed.__name__ = method.__name__
    return changed


for _name in (
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "sort",
    "reverse",
):  # every way a list changes in place
    setattr(RankedRun, _name, _dropping_arrays(getattr(list, _name)))
del _name


def ranked_arrays(ids: Sequence[str], values, k: int | None = None) -> list[ScoredDoc]:
    """`ranked` of documents given as their ids and their float64 scores (a numpy array, aligned):
    a `RankedRun`."""
    if not len(ids):
        return []
    order = rank_order(ids, values, k)
    return RankedRun([ids[i] for i in order.tolist()], values[order])
