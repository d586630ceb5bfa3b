"""The retrievers of an embedded index (retrieval/embedded/index.py SummaryIndex), one class each, by name.

Registry `retriever_kinds` (the name is also the retriever's name in `retrieve` and the
name of its folder in the index directory):

  bm25      BM25 over the indexed slot texts (IndexSpec bm25_*; a lexical engine of
            retrieval/lexical/, IndexSpec.lexical_engine)
  dense     windowed embeddings, a document scored by its best window (IndexSpec embedder,
            window_chars, dense_slots; retrieval/dense/store.py segments)
  fulltext  BM25 over the judgments' full texts (IndexSpec fulltext_*, shared b / idf);
            optional: built only when the index is created with the full texts, and an
            index without it says so

Each kind owns its part of an index, addressed by the registry's integer n
(retrieval/embedded/docstore.py): `create(directory, spec)` (None when the index is made without
what it needs), `open(directory, spec, state)`, `add(docs, context)`, `delete(ns)`,
`commit()` (durable; returns the state the manifest records), `search(query, k)` -> the
best k (n, score), best first, and `files()` (its immutable files, checksummed by the
manifest). A part may hold n that are no longer live (after a crash, or until dead
windows are compacted away): the index filters those. SummaryIndex loops over
`RETRIEVERS` and branches on no name; adding a retriever is a class here.

Importing this module loads neither torch, faiss nor tantivy.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from aqgr.foundation.errors import WriteError
from aqgr.foundation.registry import Registry

from ..dense.cache import EmbeddingCache, embed_with_cache
from ..dense.windows import document_windows
from ..documents import dense_texts
from ..lexical import query_weights
from ..text import with_pairs
from .restriction import field_terms

if TYPE_CHECKING:
    from ..dense.embedders import Embedder
    from ..spec import IndexSpec
    from .facets import DocFacets

Report = Callable[[str, int, int], None]


@dataclass(frozen=True)
class NewDoc:
    """One document a part indexes: its n, judgment id, indexed slot texts and (for the
    full-text retriever) the judgment's whole text, or None when there is none."""

    n: int
    doc_id: str
    texts: Mapping[str, str]
    full_text: str | None = None
    facets: "DocFacets | None" = None  # its filter fields (retrieval/embedded/facets.py), for parts that filter inside


@dataclass
class BuildContext:
    """What parts build with: the spec, tokenizer, embedder and its cache, progress; `seconds`
    and `facts` collect timings and manifest entries (summed over the batches of an update)."""

    spec: IndexSpec
    tokenizer: Callable[[str], list[str]]
    embedder: Embedder
    cache: EmbeddingCache | None
    report: Report
    seconds: dict[str, float] = field(default_factory=dict)
    facts: dict[str, int] = field(default_factory=dict)

    def timed(self, stage: str, since: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - since

    def count(self, fact: str, n: int) -> None:
        self.facts[fact] = self.facts.get(fact, 0) + n

    def summary_terms(self, doc: NewDoc) -> list[str]:
        """A document's indexed slot texts as summary BM25 terms (spec.bm25_ngrams)."""
        text = "\n\n".join(t for t in doc.texts.values() if t)
        return with_pairs(self.tokenizer(text), self.spec.bm25_ngrams)


class Query:
    """One query as the retrievers read it: its BM25 terms and its vector, each made at most once,
    on first use. `embed` makes the vector when none was given (it may return None). `max_df`:
    retriever name -> share; a BM25 part named there leaves out the query's terms held by more
    than that share of its documents (see `without_common`)."""

    def __init__(
        self,
        text: str,
        tokenizer,
        embed: Callable[[], np.ndarray | None],
        vector: np.ndarray | None = None,
        max_df: Mapping[str, float] | None = None,
    ):
        self.text, self._tokenizer, self._embed, self._vector = text, tokenizer, embed, vector
        self.max_df = dict(max_df or {})

    @cached_property
    def tokens(self) -> list[str]:
        return self._tokenizer(self.text)

    @cached_property
    def vector(self) -> np.ndarray | None:
        return self._vector if self._vector is not None else self._embed()


class Retriever:
    """One retriever of an embedded index (see the module); subclasses register by name."""

    name: ClassVar[str]
    optional: ClassVar[bool] = False  # made only from inputs an index may lack; opened when the manifest lists it
    absent: ClassVar[str] = ""  # why an index lacks an optional retriever, and what to do
    reads_vector: ClassVar[bool] = False  # scores a query's embedding (the search then embeds each question)

    @classmethod
    def create(cls, directory: Path, spec: IndexSpec, *, full_texts: bool, embedder: Embedder) -> "Retriever | None":
        """A new, empty part (None when the index is made without what it needs)."""
        raise NotImplementedError

    @classmethod
    def open(cls, directory: Path, spec: IndexSpec, state: Mapping) -> "Retriever":
        raise NotImplementedError

    def add(self, docs: Sequence[NewDoc], context: BuildContext) -> None:
        raise NotImplementedError

    def delete(self, ns: Collection[int]) -> None:
        raise NotImplementedError

    def commit(self) -> dict:
        """Make what was added and deleted durable; returns the state to record in the manifest."""
        raise NotImplementedError

    def files(self) -> list[str]:
        """Its immutable files, relative to the index directory (checksummed by the manifest)."""
        return []

    def search(
        self, query: Query, k: int, *, only: Collection[int] | None = None, where=None
    ) -> list[tuple[int, float]]:
        """The best k documents (n, score), best first; `only` keeps just those n; `where` (only
        when `filters_inside`) keeps those matching a filter (retrieval/embedded/restriction.py `Where`)."""
        raise NotImplementedError

    def rescore(self, query: Query, base: Query, run: Sequence[tuple[int, float]]) -> list[tuple[int, float]] | None:
        """The documents of `run` (`base`'s results: n, score) with their scores for `query`, whose
        text adds to base's, computed from base's scores and the added part alone; None when
        this part cannot (then `query` is searched)."""
        return None

    @property
    def filters_inside(self) -> bool:
        """Whether `search` takes `where`: the part's documents carry their filter fields."""
        return False

    @property
    def names_cheaply(self) -> bool:
        """Whether `search(only=...)` costs no more than an unrestricted search, however many
        documents it names (then a broad restriction is not applied after the search)."""
        return False

    def rollback(self) -> None:
        """Drop what was added or deleted since the last commit (an update that failed)."""
        raise NotImplementedError

    def cleanup(self) -> None:
        """After a manifest commit: remove files of this part that it no longer names."""

    def compact(self, live: Callable[[np.ndarray], np.ndarray]) -> bool:
        """Rewrite the part without dead documents when it asks for it; True if it did (the
        caller then commits a manifest naming the new files)."""
        return False

    def close(self) -> None:
        pass


retriever_kinds: Registry[Retriever] = Registry("retriever")


class _BM25(Retriever):
    """BM25 over terms, through a lexical engine; a document sharing no term is not returned."""

    folder: ClassVar[str]

    def __init__(self, engine, ngrams: int):
        self.engine, self.ngrams = engine, ngrams

    @classmethod
    def _params(cls, spec: IndexSpec) -> dict:
        raise NotImplementedError

    @classmethod
    def _ngrams(cls, spec: IndexSpec) -> int:
        raise NotImplementedError

    @classmethod
    def _make(cls, directory: Path, spec: IndexSpec) -> "_BM25":
        from ..lexical import lexical_engines

        engine = lexical_engines.get(spec.lexical_engine).create(Path(directory) / cls.folder, **cls._params(spec))
        return cls(engine, cls._ngrams(spec))

    @classmethod
    def open(cls, directory: Path, spec: IndexSpec, state: Mapping) -> "_BM25":
        from ..lexical import lexical_engines

        return cls(lexical_engines.get(spec.lexical_engine).open(Path(directory) / cls.folder), cls._ngrams(spec))

    def delete(self, ns: Collection[int]) -> None:
        if ns:
            self.engine.delete(list(ns))

    def commit(self) -> dict:
        self.engine.commit()
        return {"folder": self.folder, "n_docs": len(self.engine)}

    def rollback(self) -> None:
        self.engine.close()  # the engine's writer rolls back; the next add opens a new one

    def _terms(self, query: Query) -> list[str]:
        """The query's terms as this part searches them: with word pairs (`ngrams`), less the
        common ones when the query says how common for this part (`Query.max_df`)."""
        terms = with_pairs(query.tokens, self.ngrams)
        share = query.max_df.get(self.name)
        return terms if share is None else without_common(terms, self.engine, share)

    def search(
        self, query: Query, k: int, *, only: Collection[int] | None = None, where=None
    ) -> list[tuple[int, float]]:
        terms = self._terms(query)
        if where is not None:
            return self.engine.search(terms, k, only=only, where=where)
        return self.engine.search(terms, k, only=only)

    def rescore(self, query: Query, base: Query, run: Sequence[tuple[int, float]]) -> list[tuple[int, float]] | None:
        """BM25 is a sum over the query's terms, so a document's score for `query` is its score for
        `base` plus its score for the weights `query` adds (its terms not in base, and the extra
        count of those it repeats): one short query over the run's documents, not the whole
        archive. Exact up to float rounding. None when `query` does not hold all of base's terms
        (a weight would fall)."""
        query_tf = self.engine.params["query_tf"]
        added = query_weights(self._terms(query), query_tf)
        held = query_weights(self._terms(base), query_tf)
        extra = {t: w - held.get(t, 0.0) for t, w in added.items() if w != held.get(t, 0.0)}
        if any(t not in added for t in held) or any(w < 0 for w in extra.values()):
            return None
        more = self.engine.score(extra, [n for n, _ in run]) if extra and run else {}
        return [(n, score + more.get(n, 0.0)) for n, score in run]

    @property
    def filters_inside(self) -> bool:
        return bool(getattr(self.engine, "filters_inside", False))

    def _add(self, doc: NewDoc, terms: Sequence[str]) -> None:
        if self.filters_inside:
            self.engine.add(doc.n, terms, *field_terms(doc.facets))
        else:
            self.engine.add(doc.n, terms)

    def doc_freq(self, term: str) -> int:
        return self.engine.doc_freq(term)

    def n_docs(self) -> int:
        return len(self.engine)

    def close(self) -> None:
        self.engine.close()


@retriever_kinds.register("bm25")
class SummaryBM25(_BM25):
    """BM25 over the indexed slot texts (the summaries), with the spec's bm25_* parameters."""

    name = folder = "bm25"

    @classmethod
    def _params(cls, spec: IndexSpec) -> dict:
        return {
            "k1": spec.bm25_k1,
            "b": spec.bm25_b,
            "idf": spec.bm25_idf,
            "query_tf": "raw",
            "epsilon": spec.bm25_epsilon,
        }

    @classmethod
    def _ngrams(cls, spec: IndexSpec) -> int:
        return spec.bm25_ngrams

    @classmethod
    def create(cls, directory: Path, spec: IndexSpec, *, full_texts: bool, embedder: Embedder) -> "SummaryBM25":
        return cls._make(directory, spec)

    def add(self, docs: Sequence[NewDoc], context: BuildContext) -> None:
        start = time.perf_counter()
        for doc in docs:
            self._add(doc, context.summary_terms(doc))
        context.report("bm25", len(docs), len(docs))
        context.timed("bm25", start)


@retriever_kinds.register("fulltext")
class FullTextBM25(_BM25):
    """BM25 over the judgments' full texts (fulltext_k1, fulltext_query_tf, fulltext_ngrams; b,
    epsilon and idf shared): recall beyond what the summaries kept. A document without a full
    text is represented by its indexed fields (the summary BM25's terms)."""

    name = folder = "fulltext"
    optional = True
    absent = "this index has no full-text retriever: rebuild it with the judgments' full texts (`aqgr index --rebuild`)"

    @classmethod
    def _params(cls, spec: IndexSpec) -> dict:
        return {
            "k1": spec.fulltext_k1,
            "b": spec.bm25_b,
            "idf": spec.bm25_idf,
            "query_tf": spec.fulltext_query_tf,
            "epsilon": spec.bm25_epsilon,
        }

    @classmethod
    def _ngrams(cls, spec: IndexSpec) -> int:
        return spec.fulltext_ngrams

    @classmethod
    def create(cls, directory: Path, spec: IndexSpec, *, full_texts: bool, embedder: Embedder) -> "FullTextBM25 | None":
        return cls._make(directory, spec) if full_texts else None

    def add(self, docs: Sequence[NewDoc], context: BuildContext) -> None:
        start = time.perf_counter()
        for doc in docs:
            terms = with_pairs(context.tokenizer(doc.full_text or ""), self.ngrams) or context.summary_terms(doc)
            self._add(doc, terms)
        context.report("fulltext", len(docs), len(docs))
        context.timed("fulltext", start)


@retriever_kinds.register("dense")
class Dense(Retriever):
    """Windows of the dense slots embedded (through the cache) into a segmented vector store; a
    document scores its best window's similarity to the query vector (stages "embed", "faiss").
    Each commit writes the added windows as one new segment; a removed document's windows stay
    in their segment (hidden: its n is not live) until `compact` drops them."""

    name = "dense"
    folder = "dense"
    reads_vector = True

    # An update's window vectors wait for its commit in a file of the dense folder, not in memory:
    # at a million judgments a build embeds ~3 million windows (4.6 GB of float32).
    SPOOL_PREFIX = ".spool-"

    def __init__(self, store, directory: Path):
        self.store, self.directory = store, Path(directory)
        self._spool: Path | None = None  # this update's vectors so far (rows of float32), until commit
        self._window_n: list[np.ndarray] = []

    @classmethod
    def create(cls, directory: Path, spec: IndexSpec, *, full_texts: bool, embedder: Embedder) -> "Dense":
        from ..dense.store import DenseStore

        (Path(directory) / cls.folder).mkdir(parents=True, exist_ok=True)
        return cls(DenseStore(Path(directory) / cls.folder, embedder.dim), directory)

    @classmethod
    def open(cls, directory: Path, spec: IndexSpec, state: Mapping) -> "Dense":
        from ..dense.store import DenseStore

        return cls(
            DenseStore(Path(directory) / cls.folder, int(state["dim"]), list(state.get("segments", ()))), directory
        )

    def add(self, docs: Sequence[NewDoc], context: BuildContext) -> None:
        spec = context.spec
        start = time.perf_counter()
        windows: list[str] = []
        owners: list[int] = []
        for doc in docs:
            for window in document_windows(dense_texts(doc.texts, spec.dense_slots), spec.window_chars):
                windows.append(window)
                owners.append(doc.n)
        vectors, n_embedded = embed_with_cache(
            context.embedder, windows, context.cache, progress=lambda done, total: context.report("embed", done, total)
        )
        if windows:
            self._append(np.ascontiguousarray(vectors, dtype="<f4"))
            self._window_n.append(np.asarray(owners, dtype=np.int64))
        context.count("n_windows", len(windows))
        context.count("embedded_windows", n_embedded)
        context.timed("embed", start)

    def delete(self, ns: Collection[int]) -> None:
        """Nothing to do now: the windows of dead n are hidden by the index and dropped by `compact`."""

    def _append(self, vectors: np.ndarray) -> None:
        if self._spool is None:
            self._spool = self.store.directory / f"{self.SPOOL_PREFIX}{uuid.uuid4().hex[:12]}.f32"
        try:
            with open(self._spool, "ab") as fh:
                fh.write(memoryview(vectors).cast("B"))
        except OSError as exc:
            raise WriteError(str(self._spool), exc) from exc

    def _drop_spool(self) -> None:
        if self._spool is not None:
            self._spool.unlink(missing_ok=True)
        self._spool, self._window_n = None, []

    def rollback(self) -> None:
        self._drop_spool()

    def close(self) -> None:
        self.store.close()

    def commit(self) -> dict:
        if self._window_n:
            from ..dense.store import RowFile

            owners = np.concatenate(self._window_n)
            self.store.add_segment(RowFile.headerless(self._spool, self.store.dim), owners)  # read in blocks
        self._drop_spool()
        return self.state()

    def state(self) -> dict:
        return {
            "folder": self.folder,
            "dim": self.store.dim,
            "segments": list(self.store.segments),
            "n_windows": int(self.store.n_windows),
        }

    def files(self) -> list[str]:
        return [f"{self.folder}/{name}" for name in self.store.files()]

    def search(
        self, query: Query, k: int, *, only: Collection[int] | None = None, where=None
    ) -> list[tuple[int, float]]:
        vector = query.vector
        if vector is None:
            return []
        return self.store.search(vector, k, only=only)

    @property
    def names_cheaply(self) -> bool:
        """Exact segments score named documents from their windows (fewer than a whole scan); an
        ANN segment scores a few from their rows and masks the others out of its ANN search
        (retrieval/dense/store.py)."""
        return True

    def compact(self, live: Callable[[np.ndarray], np.ndarray]) -> bool:
        """Fold the segments into one without dead windows when the store asks for it (many small
        segments, many dead windows: retrieval/dense/store.py); True if it did."""
        if not self.store.needs_compaction(live):
            return False
        self.store.compact(live)
        return True

    def cleanup(self) -> None:
        """Remove segment files no manifest names any more (compacted away, or never committed)."""
        for name in self.store.orphans():
            (self.store.directory / name).unlink(missing_ok=True)
        for spool in self.store.directory.glob(f"{self.SPOOL_PREFIX}*"):  # a killed update's
            if spool != self._spool:
                spool.unlink(missing_ok=True)


# `without_common` leaves nothing out of a query that would keep fewer distinct terms than this: a
# short query costs little however common its terms, and an empty one would find nothing.
MIN_KEPT_TERMS = 8


def without_common(terms: Sequence[str], engine, max_df: float) -> list[str]:
    """`terms` less those held by more than `max_df` of the engine's documents (max_df 1 or more:
    all of them), unless fewer than MIN_KEPT_TERMS distinct terms would remain. BM25 gives such a
    term a low idf (ln 2.2 at 20% of the documents, against ~7 for a term in one in a thousand),
    while its postings make most of a long query's cost: in a million judgments, the words and
    pairs held by more than a fifth of them carry ~97% of a facts query's postings
    (docs/experiments/2026-12-06-common-terms.md)."""
    if max_df >= 1 or not terms:
        return list(terms)
    limit = max_df * len(engine)
    distinct = list(dict.fromkeys(terms))
    common = {t for t, df in zip(distinct, engine.doc_freqs(distinct)) if df > limit}
    if len(distinct) - len(common) < MIN_KEPT_TERMS:
        return list(terms)
    return [t for t in terms if t not in common]


def optional_retrievers() -> frozenset[str]:
    """The retrievers an index may lack (made only from inputs a build may not have): a search
    configured with one skips it on an index without it."""
    return frozenset(name for name in retriever_kinds.names() if retriever_kinds.get(name).optional)


def vector_retrievers() -> frozenset[str]:
    """The retrievers that score a query's embedding: a search embeds its questions only for them."""
    return frozenset(name for name in retriever_kinds.names() if retriever_kinds.get(name).reads_vector)


RETRIEVERS: tuple[str, ...] = tuple(retriever_kinds.names())
