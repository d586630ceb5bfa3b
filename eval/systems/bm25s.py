"""`bm25s.v1`: BM25 scored by the bm25s library, over our own tokens (an evaluation system's scorer).

Importing this module registers `bm25s.v1` in `aqgr.retrieval.lexical.bm25.bm25_implementations`;
the systems `bm25s-fulltext*` and `python -m aqgr.eval.bench_bm25` import it before they look it up.

bm25s (Lù, 2024) precomputes every (term, document) score into a CSC matrix, like
`retrieval.lexical.bm25.BM25Matrix`, and offers the BM25 variants compared by Kamphuis et al.
(ECIR 2020): `lucene` (its default), `robertson`, `atire`, `bm25l`, `bm25+`. It is fed
the caller's token lists (`words.v1`), never its own tokenizer or stemmer, so two
implementations over the same tokens differ only in how they score.

Differences from `rank-bm25.v1` worth knowing when comparing them:

* `lucene` idf is log(1 + (N - df + 0.5) / (df + 0.5)), never negative, no epsilon
  floor; its term-frequency part lacks rank-bm25's (k1 + 1) factor (a constant, so it
  does not change a ranking). `robertson` idf is floored at 0, not at epsilon * mean idf.
* scores are float32 by default (bm25s' own default); `scores()` returns float64.
* `bm25l` and `bm25+` add a score for every query term a document lacks, so every
  document scores above zero on any query that has a known term.

A query counts each token once per occurrence, as rank-bm25 does. Saved as a folder
`<stem>.bm25s/` in bm25s' own format (`BM25.save`: .npy arrays without pickle + JSON).
`pip install 'aqgr[bm25s]'`; bm25s is imported when an index is built or loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from aqgr.foundation.errors import MissingDependencyError
from aqgr.retrieval.lexical.bm25 import bm25_implementations
from aqgr.retrieval.spec import BM25_B, BM25_K1

# bm25s' own defaults: method "lucene", delta 0.5 (used by bm25l / bm25+ only), float32 scores.
BM25S_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
BM25S_METHOD = "lucene"
BM25S_DELTA = 0.5
BM25S_DTYPES = ("float32", "float64")
# "numpy" needs nothing more; "numba" JIT-compiles the scorer and the index builder (numba is
# not an aqgr dependency: the ingest extra brings it, through unstructured).
BM25S_BACKENDS = ("numpy", "numba")


def _bm25s():
    try:
        import bm25s
    except ImportError:
        raise MissingDependencyError("bm25s", "bm25s") from None
    return bm25s


class BM25SScorer:
    """A built bm25s index (`model` is None for a corpus without terms: every score 0)."""

    def __init__(self, model, n_docs: int):
        self.model = model
        self._n_docs = n_docs

    @property
    def n_docs(self) -> int:
        return self._n_docs

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        if self.model is None:
            return np.zeros(self._n_docs)
        ids = self.model.get_tokens_ids([t for t in query_tokens if t])  # "" is bm25s' empty-document token
        if not ids:
            return np.zeros(self._n_docs)
        return np.asarray(self.model.get_scores_from_ids(ids), dtype=np.float64)

    def save(self, directory: Path, stem: str = "bm25") -> list[str]:
        name = f"{stem}.bm25s"
        if self.model is None:
            raise ValueError("a bm25s index over a corpus without terms cannot be saved: rebuild it instead")
        self.model.save(Path(directory) / name, show_progress=False)
        return [name]


@dataclass(frozen=True)
class BM25S:
    """`bm25s.v1`: see the module docstring. k1 / b default to `retrieval.lexical.bm25`'s."""

    k1: float = BM25_K1
    b: float = BM25_B
    method: str = BM25S_METHOD
    delta: float = BM25S_DELTA
    dtype: str = "float32"
    backend: str = "numpy"
    name: ClassVar[str] = "bm25s.v1"

    def __post_init__(self):
        for field, value, known in (
            ("method", self.method, BM25S_METHODS),
            ("dtype", self.dtype, BM25S_DTYPES),
            ("backend", self.backend, BM25S_BACKENDS),
        ):
            if value not in known:
                raise ValueError(f"bm25s.v1: unknown {field} {value!r}; known: {', '.join(known)}")

    def params(self) -> dict:
        """What determines the scores (the backend only computes them, so it is not listed)."""
        return {"k1": self.k1, "b": self.b, "method": self.method, "delta": self.delta, "dtype": self.dtype}

    def _model(self, bm25s):
        model = bm25s.BM25(
            k1=self.k1, b=self.b, delta=self.delta, method=self.method, dtype=self.dtype, backend=self.backend
        )
        return self._jit(model)

    def _jit(self, model):
        # bm25s 0.3.16 skips its own JIT step unless NUMBA_DISABLE_JIT is set (an inverted
        # check in BM25.__init__), so backend="numba" is activated here.
        if self.backend == "numba":
            model.compile(activate_numba=True)
        return model

    def build(self, corpus: Sequence[Sequence[str]]) -> BM25SScorer:
        bm25s = _bm25s()
        docs = [list(doc) for doc in corpus]
        if not any(docs):
            return BM25SScorer(None, len(docs))
        model = self._model(bm25s)
        model.index(docs, show_progress=False)
        return BM25SScorer(model, len(docs))

    def load(self, directory: Path, stem: str = "bm25") -> BM25SScorer:
        bm25s = _bm25s()
        model = self._jit(bm25s.BM25.load(Path(directory) / f"{stem}.bm25s", show_progress=False, backend=self.backend))
        saved = {"k1": model.k1, "b": model.b, "method": model.method, "delta": model.delta, "dtype": model.dtype}
        if saved != self.params():
            raise ValueError(f"the saved bm25s index has parameters {saved}, not {self.params()}: rebuild it")
        return BM25SScorer(model, int(model.scores["num_docs"]))


@bm25_implementations.register("bm25s.v1")
def _bm25s_v1(
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
    method: str = BM25S_METHOD,
    delta: float = BM25S_DELTA,
    dtype: str = "float32",
    backend: str = "numpy",
) -> BM25S:
    return BM25S(k1=float(k1), b=float(b), method=method, delta=float(delta), dtype=dtype, backend=backend)
