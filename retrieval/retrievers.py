"""The retrievers of an embedded index (retrieval/index.py SummaryIndex), one class each, by name.

Registry `retriever_kinds` (the name is also the retriever's name in `retrieve` and the
stem of its files in the index directory):

  bm25      BM25 over the indexed slot texts (IndexSpec bm25_*; files bm25.npz, bm25.vocab.json)
  dense     windowed embeddings in FAISS, a document scored by its best window
            (IndexSpec embedder, window_chars, dense_slots; files dense.faiss, dense.windows.npz)
  fulltext  BM25 over the judgments' full texts (IndexSpec fulltext_*, shared b / epsilon /
            idf; files fulltext.npz, fulltext.vocab.json); optional: built only when the
            build is given the full texts, and an index without it says so

Each kind owns its part of an index: `build(context)` (None when the build gives it nothing
to build from), `save(directory)` (the file names written), `load(directory, spec)`, and
scoring: `scores(query)` gives one score per document (by position) and `candidates(scores)`
which documents the retriever returns at all. SummaryIndex loops over `RETRIEVERS` (the
registered names, in name order) and branches on no name; adding a retriever is a class
here (and its parameters, if it has new ones, in IndexSpec).

Importing this module loads neither torch nor faiss.
"""

from __future__ import annotations

import time
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ClassVar, Mapping, Sequence

import numpy as np

from aqgr.registry import Registry

from .bm25 import BM25Matrix
from .dense import DenseIndex, document_windows, flatten_windows
from .documents import dense_texts
from .embed_cache import EmbeddingCache, embed_with_cache
from .text import with_pairs

if TYPE_CHECKING:
    from .embedders import Embedder
    from .index import IndexSpec

Report = Callable[[str, int, int], None]


class BuildContext:
    """What a retriever may build from: the documents, the spec, the embedder and its cache, the
    judgments' full texts (or None); `seconds` and `facts` collect build timings and manifest
    entries (n_terms, n_windows, ...)."""

    def __init__(self, *, doc_ids: Sequence[str], texts: Mapping[str, Mapping[str, str]], spec: IndexSpec, tokenizer,
                 embedder: Embedder, cache: EmbeddingCache | None, full_texts: Mapping[str, str] | None, report: Report):
        self.doc_ids, self.texts, self.spec = list(doc_ids), texts, spec
        self.tokenizer, self.embedder, self.cache = tokenizer, embedder, cache
        self.full_texts, self.report = full_texts, report
        self.seconds: dict[str, float] = {}
        self.facts: dict[str, int] = {}

    @cached_property
    def corpus(self) -> list[list[str]]:
        """The indexed slot texts of each document as BM25 terms (spec.bm25_ngrams); stage "tokenize"."""
        start = time.perf_counter()
        corpus = []
        for i, doc_id in enumerate(self.doc_ids, start=1):
            text = "\n\n".join(t for t in self.texts[doc_id].values() if t)
            corpus.append(with_pairs(self.tokenizer(text), self.spec.bm25_ngrams))
            if i % 200 == 0 or i == len(self.doc_ids):
                self.report("tokenize", i, len(self.doc_ids))
        self.seconds["tokenize"] = time.perf_counter() - start
        return corpus


class Query:
    """One query as the retrievers read it: its BM25 terms and its vector, each made at most once,
    on first use. `embed` makes the vector when none was given (it may return None)."""

    def __init__(self, text: str, tokenizer, embed: Callable[[], np.ndarray | None], vector: np.ndarray | None = None):
        self.text, self._tokenizer, self._embed, self._vector = text, tokenizer, embed, vector

    @cached_property
    def tokens(self) -> list[str]:
        return self._tokenizer(self.text)

    @cached_property
    def vector(self) -> np.ndarray | None:
        return self._vector if self._vector is not None else self._embed()


class Retriever:
    """One retriever of an embedded index (see the module); subclasses register by name."""

    name: ClassVar[str]
    files: ClassVar[tuple[str, ...]]  # what `save` writes, recorded in the manifest's "retrievers"
    optional: ClassVar[bool] = False  # built only from inputs a build may lack; loaded when the manifest lists it
    absent: ClassVar[str] = ""  # why an index lacks an optional retriever, and what to do
    reads_vector: ClassVar[bool] = False  # scores a query's embedding (the search then embeds each question)

    @property
    def n_docs(self) -> int:
        raise NotImplementedError

    @classmethod
    def build(cls, context: BuildContext) -> "Retriever | None":
        raise NotImplementedError

    @classmethod
    def load(cls, directory: Path, spec: IndexSpec) -> "Retriever":
        raise NotImplementedError

    def save(self, directory: Path) -> list[str]:
        raise NotImplementedError

    def scores(self, query: Query) -> np.ndarray:
        """One score per document, by position."""
        raise NotImplementedError

    def candidates(self, scores: np.ndarray) -> np.ndarray:
        """Which documents (a boolean mask) the retriever returns for these scores."""
        raise NotImplementedError


retriever_kinds: Registry[Retriever] = Registry("retriever")


class _BM25(Retriever):
    """BM25 over a tokenised corpus; n-grams from the spec; a document sharing no term is not returned."""

    def __init__(self, matrix: BM25Matrix, ngrams: int):
        self.matrix, self.ngrams = matrix, ngrams

    @property
    def n_docs(self) -> int:
        return self.matrix.n_docs

    def save(self, directory: Path) -> list[str]:
        return self.matrix.save(directory, self.name)

    def scores(self, query: Query) -> np.ndarray:
        return self.matrix.scores(with_pairs(query.tokens, self.ngrams))

    def candidates(self, scores: np.ndarray) -> np.ndarray:
        return scores != 0


@retriever_kinds.register("bm25")
class SummaryBM25(_BM25):
    """BM25 over the indexed slot texts (the summaries), with the spec's bm25_* parameters."""

    name = "bm25"
    files = ("bm25.npz", "bm25.vocab.json")

    @classmethod
    def build(cls, context: BuildContext) -> "SummaryBM25":
        spec, corpus = context.spec, context.corpus
        start = time.perf_counter()
        context.report("bm25", 0, 1)
        matrix = BM25Matrix.build(corpus, k1=spec.bm25_k1, b=spec.bm25_b, epsilon=spec.bm25_epsilon, idf_kind=spec.bm25_idf)
        context.report("bm25", 1, 1)
        context.seconds["bm25"] = time.perf_counter() - start
        context.facts["n_terms"] = len(matrix.terms)
        return cls(matrix, spec.bm25_ngrams)

    @classmethod
    def load(cls, directory: Path, spec: IndexSpec) -> "SummaryBM25":
        return cls(BM25Matrix.load(directory, cls.name), spec.bm25_ngrams)


@retriever_kinds.register("fulltext")
class FullTextBM25(_BM25):
    """BM25 over the judgments' full texts (fulltext_k1, fulltext_query_tf, fulltext_ngrams; b,
    epsilon and idf shared): recall beyond what the summaries kept. A document without a full
    text is represented by its indexed fields (the summary BM25's terms)."""

    name = "fulltext"
    files = ("fulltext.npz", "fulltext.vocab.json")
    optional = True
    absent = "this index has no full-text retriever: rebuild it with the judgments' full texts"

    @classmethod
    def build(cls, context: BuildContext) -> "FullTextBM25 | None":
        if context.full_texts is None:
            return None
        spec, full_texts, doc_ids = context.spec, context.full_texts, context.doc_ids
        corpus = context.corpus
        start = time.perf_counter()
        context.report("fulltext", 0, len(doc_ids))
        full_corpus = [with_pairs(context.tokenizer(full_texts.get(d) or ""), spec.fulltext_ngrams) or corpus[i]
                       for i, d in enumerate(doc_ids)]
        matrix = BM25Matrix.build(full_corpus, k1=spec.fulltext_k1, b=spec.bm25_b, epsilon=spec.bm25_epsilon,
                                  idf_kind=spec.bm25_idf, query_tf=spec.fulltext_query_tf)
        context.report("fulltext", len(doc_ids), len(doc_ids))
        context.seconds["fulltext"] = time.perf_counter() - start
        return cls(matrix, spec.fulltext_ngrams)

    @classmethod
    def load(cls, directory: Path, spec: IndexSpec) -> "FullTextBM25":
        return cls(BM25Matrix.load(directory, cls.name), spec.fulltext_ngrams)


@retriever_kinds.register("dense")
class Dense(Retriever):
    """Windows of the dense slots embedded (through the cache) into FAISS; a document scores its
    best window's cosine similarity to the query vector (stages "embed", "faiss")."""

    name = "dense"
    files = ("dense.faiss", "dense.windows.npz")
    reads_vector = True

    def __init__(self, index: DenseIndex):
        self.index = index

    @property
    def n_docs(self) -> int:
        return self.index.n_docs

    @classmethod
    def build(cls, context: BuildContext) -> "Dense":
        spec, texts, embedder = context.spec, context.texts, context.embedder
        start = time.perf_counter()
        windows, window_doc = flatten_windows([document_windows(dense_texts(texts[d], spec.dense_slots), spec.window_chars)
                                               for d in context.doc_ids])
        vectors, n_embedded = embed_with_cache(embedder, windows, context.cache,
                                               progress=lambda done, total: context.report("embed", done, total))
        context.seconds["embed"] = time.perf_counter() - start
        start = time.perf_counter()
        context.report("faiss", 0, 1)
        index = DenseIndex.from_vectors(vectors, window_doc, len(context.doc_ids), embedder.dim)
        context.report("faiss", 1, 1)
        context.seconds["faiss"] = time.perf_counter() - start
        context.facts.update(n_windows=len(windows), embedded_windows=n_embedded)
        return cls(index)

    @classmethod
    def load(cls, directory: Path, spec: IndexSpec) -> "Dense":
        return cls(DenseIndex.load(directory, cls.name))

    def save(self, directory: Path) -> list[str]:
        return self.index.save(directory, self.name)

    def scores(self, query: Query) -> np.ndarray:
        return self.index.scores(query.vector)

    def candidates(self, scores: np.ndarray) -> np.ndarray:
        return np.isfinite(scores)


def optional_retrievers() -> frozenset[str]:
    """The retrievers an index may lack (built only from inputs a build may not have): a search
    configured with one skips it on an index without it."""
    return frozenset(name for name in retriever_kinds.names() if retriever_kinds.get(name).optional)


def vector_retrievers() -> frozenset[str]:
    """The retrievers that score a query's embedding: a search embeds its questions only for them."""
    return frozenset(name for name in retriever_kinds.names() if retriever_kinds.get(name).reads_vector)


RETRIEVERS: tuple[str, ...] = tuple(retriever_kinds.names())
