"""Internal records shared by the retrievers and fusion, and the one rule that orders them.

Every ranked list in retrieval/ (a BM25 run, a dense run, a fused run) is ordered by
`rank_key`: descending score, then a stable hash of the document id. Never by raw id or
input order: in the AILA data the ids correlate with relevance, so an id tie-break would
leak labels into the ranking.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Iterable, Mapping, NamedTuple


class ScoredDoc(NamedTuple):
    """One retrieved document: its id and the retriever's (or fusion's) score."""

    doc_id: str
    score: float


@functools.lru_cache(maxsize=1 << 18)  # a search ranks the same ids again and again
def id_hash(doc_id: str) -> bytes:
    """A stable, id-order-free tie-break key (blake2b, 8 bytes) for a document id."""
    return hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()


def rank_key(doc: ScoredDoc) -> tuple[float, bytes, str]:
    """Sort key: -score, then the id's hash (then the id itself, only if two hashes collide)."""
    return (-doc.score, id_hash(doc.doc_id), doc.doc_id)


def ranked(scores: Mapping[str, float] | Iterable[ScoredDoc]) -> list[ScoredDoc]:
    """Scores as a list of ScoredDoc ordered by `rank_key` (a new list; the input is not touched)."""
    items = scores.items() if isinstance(scores, Mapping) else scores
    # sorted as rank_key tuples, made into ScoredDoc after (a search ranks ~12,000 documents)
    keyed = sorted([(-float(s), id_hash(doc := str(d)), doc) for d, s in items])
    make = ScoredDoc._make
    return [make((d, -negative)) for negative, _, d in keyed]
