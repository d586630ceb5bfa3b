"""Explainable text relevance for the offline engines.

* `coverage(query, text)`: the share of the query's IDF weight that the text contains
  (0..1); 1.0 means every informative query term occurs in the text. No model call, so
  ranking dozens of sentences per search costs microseconds. The IDF comes from the
  archive's BM25 statistics: "informative" means rare in this archive.
* `semantic(query, texts)`: cosine similarity of embeddings (the index's model), for
  meaning beyond shared words; memoised per text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np


class RelevanceScorer:
    def __init__(
        self,
        tokenize: Callable[[str], list[str]],
        idf: Mapping[str, float],
        n_docs: int,
        embed: Callable[[str], "np.ndarray | None"] | None = None,
        embed_many: Callable[[Sequence[str]], "list[np.ndarray | None]"] | None = None,
    ):
        self._tokenize = tokenize
        self._embed = embed
        self._embed_many = (
            embed_many  # the same vectors as `embed`, in one batch (a model call per text is slow on CPU)
        )
        self._idf = idf
        # A term never seen in the archive is as informative as the rarest seen term.
        self._unseen = math.log(1 + (n_docs + 0.5) / 0.5)
        self.terms = lru_cache(maxsize=4096)(self._terms)
        # a query is scored against dozens of passages: its terms' weights and their sum are made once
        self._query_weights = lru_cache(maxsize=256)(self._weights_of)

    def _terms(self, text: str) -> frozenset[str]:
        return frozenset(self._tokenize(text))

    def _weights_of(self, query: str) -> tuple[dict[str, float], float]:
        weights = {term: self.weight(term) for term in self.terms(query)}
        return weights, math.fsum(
            weights.values()
        )  # fsum: exact, so a set's (hash-seeded) order cannot move the last bit

    def weight(self, term: str) -> float:
        return max(self._idf.get(term, self._unseen), 0.0)

    def coverage(self, query: str, text: str) -> float:
        weights, total = self._query_weights(query)
        if total <= 0:
            return 0.0
        return math.fsum(weights[term] for term in weights.keys() & self.terms(text)) / total

    def overlap(self, a: str, b: str) -> float:
        """Symmetric IDF-weighted Jaccard of two texts (near-duplicate detection)."""
        ta, tb = self.terms(a), self.terms(b)
        union = math.fsum(self.weight(t) for t in ta | tb)
        return math.fsum(self.weight(t) for t in ta & tb) / union if union > 0 else 0.0

    def content_words(self, text: str) -> int:
        """Distinct informative terms (stopwords and one-letter words are already gone)."""
        return len(self.terms(text))

    def semantic(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of the query to each text (0 where no embedder or an empty text)."""
        if self._embed is None:
            return [0.0] * len(texts)
        q = self._embed(query)
        if q is None:
            return [0.0] * len(texts)
        vectors = self._embed_many(texts) if self._embed_many is not None else [self._embed(t) for t in texts]
        return [float(np.dot(q, v)) if v is not None else 0.0 for v in vectors]
