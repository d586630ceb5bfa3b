"""BM25 with rank-bm25's statistics, scored through a sparse term-document weight matrix.

The statistics are `rank_bm25.BM25Okapi`'s (idf with its epsilon floor, document lengths,
average length), computed with numpy (measured on the 2,914 AILA judgments, terms + pairs: 8.9 s
against 17.6 s for BM25Okapi plus a Python loop over its counts). Its `get_scores` loops over documents in
Python for every query term; instead each (term, document) weight

    W[t, d] = idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))

is computed once into a scipy CSR matrix (terms x documents), and a query's scores are
q_counts . W, where q_counts counts each query token once per occurrence (as rank-bm25
does; with query_tf="log", 1 + ln(count)). With the raw counts the scores equal
`BM25Okapi.get_scores` (float64, same formula): rank-bm25 itself is the reference the tests
compare with (tests/retrieval/test_retrieval_bm25*.py). The parameters' defaults (k1, b,
epsilon, the idf and query tf kinds) are declared in retrieval/spec.py.

Saved as `<stem>.npz` (scipy.sparse, no pickle) plus `<stem>.vocab.json`.

Registry `bm25_implementations` (chosen by name, e.g. to compare libraries on the same
tokens): `rank-bm25.v1` (default: this module's `BM25Matrix`) and, registered by the
evaluation, `bm25s.v1` (the bm25s library, method `lucene` by default; eval/systems/bm25s.py,
`pip install 'aqgr[bm25s]'`).
`bm25_implementations.create(name, k1=..., b=..., ...)` returns a `BM25Implementation`
whose `build(corpus)` / `load(directory, stem)` give a `BM25Scorer`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from aqgr.foundation.registry import Registry

from ..spec import BM25_B, BM25_EPSILON, BM25_K1, IDF_KINDS, QUERY_TF_KINDS


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
        idf_kind: str = "okapi",
        query_tf: str = "raw",
    ):
        if query_tf not in QUERY_TF_KINDS:
            raise ValueError(f"unknown query_tf {query_tf!r}: choose one of {', '.join(QUERY_TF_KINDS)}")
        if weights.shape[0] != len(terms) or (idf is not None and len(idf) != len(terms)):
            raise ValueError(f"{len(terms)} terms but a weight matrix of shape {weights.shape}")
        self.terms = terms
        self.idf = np.asarray(idf, dtype=np.float64) if idf is not None else None
        # Document frequency of each term (how many documents contain it).
        self.df = np.asarray(df, dtype=np.int64) if df is not None else np.diff(weights.tocsr().indptr)
        self.vocab = {t: i for i, t in enumerate(terms)}
        self.weights = weights
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.idf_kind = idf_kind
        self.query_tf = query_tf

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
        idf_kind: str = "okapi",
        query_tf: str = "raw",
    ) -> "BM25Matrix":
        """Weights for a tokenised corpus (one token list per document); `idf_kind` in IDF_KINDS
        (default "okapi": exactly rank-bm25's BM25Okapi; indexes default to BM25_IDF);
        `query_tf` in QUERY_TF_KINDS, how `scores` counts repeated query tokens."""
        if idf_kind not in IDF_KINDS:
            raise ValueError(f"unknown idf {idf_kind!r}: choose one of {', '.join(IDF_KINDS)}")
        # Term ids in first-seen order (from_term_ids renumbers them in sorted term order).
        ids: dict[str, int] = {}
        lengths = np.fromiter((len(doc) for doc in corpus), dtype=np.int64, count=len(corpus))
        flat = np.fromiter(
            (ids.setdefault(t, len(ids)) for doc in corpus for t in doc), dtype=np.int64, count=int(lengths.sum())
        )
        return cls.from_term_ids(
            flat, lengths, list(ids), k1=k1, b=b, epsilon=epsilon, idf_kind=idf_kind, query_tf=query_tf
        )

    @classmethod
    def from_term_ids(
        cls,
        flat: np.ndarray,
        lengths: np.ndarray,
        vocabulary: Sequence[str],
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
        epsilon: float = BM25_EPSILON,
        idf_kind: str = "okapi",
        query_tf: str = "raw",
    ) -> "BM25Matrix":
        """Weights for a corpus given as term ids, as `build` computes them (it calls this):
        `flat` holds every document's term ids, one document after another (`lengths[i]` of
        them for document i), each an index into `vocabulary`. Terms no document uses are left
        out, so a caller may keep ids of terms only deleted documents had (retrieval/lexical/matrix.py)."""
        if idf_kind not in IDF_KINDS:
            raise ValueError(f"unknown idf {idf_kind!r}: choose one of {', '.join(IDF_KINDS)}")
        flat = np.asarray(flat, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        n_docs = len(lengths)
        if flat.size == 0:  # rank-bm25 divides by the vocabulary size: no terms, no matrix
            return cls(
                [],
                sp.csr_matrix((0, n_docs), dtype=np.float64),
                k1=k1,
                b=b,
                epsilon=epsilon,
                idf=[],
                df=[],
                idf_kind=idf_kind,
                query_tf=query_tf,
            )
        # The used terms in sorted order; order[id] = the term's row.
        used = np.flatnonzero(np.bincount(flat, minlength=len(vocabulary)))
        by_term = sorted(used.tolist(), key=vocabulary.__getitem__)
        terms = [vocabulary[i] for i in by_term]
        order = np.full(len(vocabulary), -1, dtype=np.int64)
        order[np.asarray(by_term, dtype=np.int64)] = np.arange(len(terms))
        rows, cols = order[flat], np.repeat(np.arange(n_docs), lengths)
        tf = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(len(terms), n_docs)).tocsr()
        tf.sum_duplicates()
        df = np.diff(tf.indptr)
        # rank-bm25's BM25Okapi statistics: idf = log(N - df + 0.5) - log(df + 0.5), negative
        # values replaced by epsilon * the mean idf; avgdl = tokens / documents.
        if idf_kind == "okapi":
            idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
            idf[idf < 0] = epsilon * idf.mean()
        else:
            idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        avgdl = lengths.sum() / n_docs
        tf = tf.tocoo()
        norm = k1 * (1 - b + b * lengths[tf.col] / avgdl)
        vals = idf[tf.row] * (tf.data * (k1 + 1) / (tf.data + norm))
        weights = sp.csr_matrix((vals, (tf.row, tf.col)), shape=(len(terms), n_docs), dtype=np.float64)
        return cls(terms, weights, k1=k1, b=b, epsilon=epsilon, idf=idf, df=df, idf_kind=idf_kind, query_tf=query_tf)

    def idf_map(self) -> dict[str, float]:
        """Each term's idf (`idf_kind`: rank-bm25's okapi idf, or Lucene's)."""
        if self.idf is None:
            raise ValueError("this BM25 matrix was saved without idf values: rebuild it")
        return dict(zip(self.terms, self.idf.tolist()))

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document (float64, length n_docs); unknown terms add nothing."""
        return self.scores_and_matches(query_tokens)[0]

    def scores_and_matches(self, query_tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """`scores(query_tokens)` and which documents (a boolean mask) hold at least one query
        term: a score of 0 does not say it (an okapi idf can be 0)."""
        counts = Counter(t for t in query_tokens if t in self.vocab)
        q = np.fromiter((counts[t] for t in counts), dtype=np.float64, count=len(counts))
        if self.query_tf == "log":
            q = 1.0 + np.log(q)
        return self.weighted_scores(dict(zip(counts, q.tolist())))

    def weighted_scores(self, weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """sum over t of weights[t] * BM25(t, d) for every document d, and which documents hold
        at least one of the terms (as `scores_and_matches`, with the query weights given)."""
        rows = [self.vocab[t] for t in weights if t in self.vocab]
        if not rows:
            return np.zeros(self.n_docs), np.zeros(self.n_docs, dtype=bool)
        q = np.fromiter((w for t, w in weights.items() if t in self.vocab), dtype=np.float64, count=len(rows))
        sub = self.weights[rows]
        matched = np.zeros(self.n_docs, dtype=bool)
        matched[sub.indices] = True
        return np.asarray(sub.T @ q, dtype=np.float64).ravel(), matched

    def save(self, directory: Path, stem: str = "bm25") -> list[str]:
        """Write `<stem>.npz` and `<stem>.vocab.json` into `directory`; returns the file names."""
        matrix_name, vocab_name = f"{stem}.npz", f"{stem}.vocab.json"
        sp.save_npz(Path(directory) / matrix_name, self.weights.tocsr(), compressed=True)
        meta = {
            "k1": self.k1,
            "b": self.b,
            "epsilon": self.epsilon,
            "idf_kind": self.idf_kind,
            "query_tf": self.query_tf,
            "n_docs": self.n_docs,
            "terms": self.terms,
        }
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
        return cls(
            meta["terms"],
            weights,
            k1=meta["k1"],
            b=meta["b"],
            epsilon=meta["epsilon"],
            idf=meta.get("idf"),
            df=meta.get("df"),
            idf_kind=meta.get("idf_kind", "okapi"),
            query_tf=meta.get("query_tf", "raw"),
        )


# ------------------------------------------------------------------ implementations by name


@runtime_checkable
class BM25Scorer(Protocol):
    """A BM25 index over a fixed tokenised corpus; documents are addressed by position."""

    @property
    def n_docs(self) -> int: ...

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Score of every document (float64, length n_docs); unknown terms add nothing."""
        ...

    def save(self, directory: Path, stem: str = "bm25") -> list[str]:
        """Write the index into `directory` under names starting with `stem`; returns the names."""
        ...


class BM25Implementation(Protocol):
    """A BM25 library and its parameters: builds a `BM25Scorer` from tokens, or loads a saved one."""

    name: str

    def params(self) -> dict: ...

    def build(self, corpus: Sequence[Sequence[str]]) -> BM25Scorer: ...

    def load(self, directory: Path, stem: str = "bm25") -> BM25Scorer: ...


DEFAULT_BM25 = "rank-bm25.v1"

# Other implementations register from the evaluation, which compares them (`bm25s.v1`:
# eval/systems/bm25s.py, imported by the systems and the benchmark that use it).
bm25_implementations: Registry[BM25Implementation] = Registry("BM25 implementation")


@dataclass(frozen=True)
class RankBM25:
    """`rank-bm25.v1`: `BM25Matrix` (rank-bm25's BM25Okapi statistics, scored through scipy)."""

    k1: float = BM25_K1
    b: float = BM25_B
    epsilon: float = BM25_EPSILON
    name: ClassVar[str] = "rank-bm25.v1"

    def params(self) -> dict:
        return {"k1": self.k1, "b": self.b, "epsilon": self.epsilon}

    def build(self, corpus: Sequence[Sequence[str]]) -> BM25Matrix:
        return BM25Matrix.build(corpus, k1=self.k1, b=self.b, epsilon=self.epsilon)

    def load(self, directory: Path, stem: str = "bm25") -> BM25Matrix:
        return BM25Matrix.load(directory, stem)


@bm25_implementations.register("rank-bm25.v1")
def _rank_bm25_v1(*, k1: float = BM25_K1, b: float = BM25_B, epsilon: float = BM25_EPSILON) -> RankBM25:
    return RankBM25(k1=float(k1), b=float(b), epsilon=float(epsilon))
