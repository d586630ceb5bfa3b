"""BM25 with rank-bm25's statistics, scored through a sparse term-document weight matrix.

`rank_bm25.BM25Okapi` computes the statistics (idf with its epsilon floor, document
lengths, average length). Its `get_scores` loops over documents in Python for every
query term; instead each (term, document) weight

    W[t, d] = idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))

is computed once into a scipy CSR matrix (terms x documents), and a query's scores are
q_counts . W, where q_counts counts each query token once per occurrence (as rank-bm25
does). The scores equal `BM25Okapi.get_scores` (float64, same formula).

Saved as `<stem>.npz` (scipy.sparse, no pickle) plus `<stem>.vocab.json`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np
import scipy.sparse as sp

# BM25 parameters: k1 = 1.2, b = 0.75 are the usual Robertson/Lucene settings (rank-bm25's
# own k1 default is 1.5); epsilon = 0.25 is rank-bm25's floor for negative idf values.
BM25_K1 = 1.2
BM25_B = 0.75
BM25_EPSILON = 0.25


class BM25Matrix:
    """BM25 over a fixed tokenised corpus; documents are addressed by position."""

    def __init__(
        self,
        terms: list[str],
        weights: sp.csr_matrix,
        *,
        k1: float,
        b: float,
        epsilon: float,
        idf: Sequence[float] | None = None,
        df: Sequence[int] | None = None,
    ):
        if weights.shape[0] != len(terms) or (idf is not None and len(idf) != len(terms)):
            raise ValueError(f"{len(terms)} terms but a weight matrix of shape {weights.shape}")
        self.terms = terms
        self.idf = np.asarray(idf, dtype=np.float64) if idf is not None else None
        # Document frequency of each term (how many documents contain it).
        self.df = np.asarray(df, dtype=np.int64) if df is not None else np.diff(weights.tocsr().indptr)
        self.vocab = {t: i for i, t in enumerate(terms)}
        self.weights = weights
        self.k1, self.b, self.epsilon = k1, b, epsilon

    @property
    def n_docs(self) -> int:
        return self.weights.shape[1]

    @classmethod
    def build(
        cls,
        corpus: Sequence[Sequence[str]],
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
        epsilon: float = BM25_EPSILON,
    ) -> "BM25Matrix":
        """Weights for a tokenised corpus (one token list per document)."""
        n_docs = len(corpus)
        if not any(corpus):  # rank-bm25 divides by the vocabulary size: no terms, no matrix
            return cls([], sp.csr_matrix((0, n_docs), dtype=np.float64), k1=k1, b=b, epsilon=epsilon, idf=[], df=[])
        from rank_bm25 import BM25Okapi

        stats = BM25Okapi([list(doc) for doc in corpus], k1=k1, b=b, epsilon=epsilon)
        terms = sorted(stats.idf)
        row = {t: i for i, t in enumerate(terms)}
        rows, cols, vals = [], [], []
        for d, (freqs, length) in enumerate(zip(stats.doc_freqs, stats.doc_len)):
            norm = k1 * (1 - b + b * length / stats.avgdl)
            for term, tf in freqs.items():
                rows.append(row[term])
                cols.append(d)
                vals.append(stats.idf[term] * (tf * (k1 + 1) / (tf + norm)))
        weights = sp.csr_matrix((vals, (rows, cols)), shape=(len(terms), n_docs), dtype=np.float64)
        df = np.bincount(rows, minlength=len(terms)) if rows else np.zeros(len(terms), dtype=np.int64)
        return cls(terms, weights, k1=k1, b=b, epsilon=epsilon, idf=[stats.idf[t] for t in terms], df=df)

    def idf_map(self) -> dict[str, float]:
        """Each term's idf (rank-bm25's, negative values floored to epsilon * mean idf)."""
        if self.idf is None:
            raise ValueError("this BM25 matrix was saved without idf values: rebuild it")
        return dict(zip(self.terms, self.idf.tolist()))

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document (float64, length n_docs); unknown terms add nothing."""
        counts = Counter(t for t in query_tokens if t in self.vocab)
        if not counts:
            return np.zeros(self.n_docs)
        rows = [self.vocab[t] for t in counts]
        q = np.fromiter((counts[t] for t in counts), dtype=np.float64, count=len(counts))
        return np.asarray(self.weights[rows].T @ q, dtype=np.float64).ravel()

    def save(self, directory: Path, stem: str = "bm25") -> list[str]:
        """Write `<stem>.npz` and `<stem>.vocab.json` into `directory`; returns the file names."""
        matrix_name, vocab_name = f"{stem}.npz", f"{stem}.vocab.json"
        sp.save_npz(Path(directory) / matrix_name, self.weights.tocsr(), compressed=True)
        meta = {"k1": self.k1, "b": self.b, "epsilon": self.epsilon, "n_docs": self.n_docs, "terms": self.terms}
        if self.idf is not None:
            meta["idf"] = self.idf.tolist()
        meta["df"] = self.df.tolist()
        (Path(directory) / vocab_name).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        return [matrix_name, vocab_name]

    @classmethod
    def load(cls, directory: Path, stem: str = "bm25") -> "BM25Matrix":
        meta = json.loads((Path(directory) / f"{stem}.vocab.json").read_text(encoding="utf-8"))
        weights = sp.load_npz(Path(directory) / f"{stem}.npz").tocsr()
        if weights.shape != (len(meta["terms"]), meta["n_docs"]):
            raise ValueError(f"BM25 matrix shape {weights.shape} does not match its vocabulary file")
        return cls(meta["terms"], weights, k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"], idf=meta.get("idf"), df=meta.get("df"))
