"""`Index`: what every index backend offers once built or loaded (retrieval/backends.py).

Both backends implement it: retrieval/embedded/index.py `SummaryIndex` (embedded.v1) and
retrieval/milvus.py `MilvusIndex` (milvus.v1); tests/retrieval/test_index_contract.py runs
one suite of assertions against both. Users (aqgr/pipeline/search.py `Searcher`, aqgr/pipeline/statutes.py,
aqgr/archive/home.py) are typed against `Index`, never against a backend's class.

The classes also offer `build(summaries, spec, ...)`, `from_texts(doc_ids, texts, spec, ...)`
and `load(directory, expect=...)` (classmethods, so not part of this instance protocol):
`load` raises NoIndexError when a directory holds no index and IndexMismatchError (listing
every difference, asking to rebuild) when it was built differently; `build` raises
EmptyArchiveError for no documents.

`retrieve(..., retrievers=None)` means every retriever the index has, in its `retrievers`
order; `select_retrievers` is that rule, and the checks of the names and of k, for both.

What a search needs beyond `Index` is declared as small optional protocols, which the search
checks by type (`isinstance(index, Filterable)`), never by probing attributes:
- `Filterable`: the index stores each judgment's filter fields (court, year, statutes, ...):
  filtered searches and facet counts. The embedded backend; Milvus does not.
- `Rescoring`: the index's BM25 runs can re-rank a question over the facts' candidates
  (`rescore`) and leave out common query terms (`retrieve(..., max_df=...)`). The embedded
  backend; Milvus scores BM25 itself.
A third backend implements `Index`, and either optional protocol when it can; the contract
suite (tests/retrieval/test_index_contract.py) checks each backend against what it claims.

Importing this module loads nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from aqgr.foundation.errors import UnknownNameError

from .types import ScoredDoc

if TYPE_CHECKING:
    import numpy as np

    from .spec import IndexSpec


@runtime_checkable
class Index(Protocol):
    """A built or loaded index: judgments addressed by id, retrieved per retriever.

    Runs are ordered by retrieval/types.py `rank_key` (-score, then the id's hash) and hold
    only indexed documents; `len(index)` is the number of documents, `doc_id in index` tells
    whether one is indexed."""

    spec: IndexSpec

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """The indexed judgment ids, in build order."""
        ...

    @property
    def manifest(self) -> dict:
        """A copy of the saved (or to-be-saved) manifest: spec, embedder, doc ids, timings."""
        ...

    @property
    def retrievers(self) -> tuple[str, ...]:
        """The retrievers this index has (what `retrieve` accepts), in their default order."""
        ...

    @property
    def tokenizer(self) -> Callable[[str], list[str]]:
        """The BM25 tokenizer (`spec.tokenizer`): text -> terms."""
        ...

    def __len__(self) -> int: ...

    def __contains__(self, doc_id: object) -> bool: ...

    def texts(self, doc_id: str) -> dict[str, str]:
        """The indexed slot texts of one document (KeyError when it is not indexed)."""
        ...

    def document_text(self, doc_id: str) -> str:
        """The non-empty slot texts of one document joined by blank lines."""
        ...

    def idf(self) -> dict[str, float]:
        """A smooth, non-negative idf of every indexed summary term."""
        ...

    def embed_query(self, text: str) -> np.ndarray | None:
        """A query's normalised vector (memoised); None when it has nothing to embed."""
        ...

    def embedding_calls(self, text: str) -> list[Callable[[], object]]:
        """The model calls that embed `text`'s windows, one window each, for a caller to run side by
        side; `embed_query(text)` afterwards finds them done (or waits for those running). [] when
        the index already holds the text's vector."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """`embed_query` of each text, in one model call."""
        ...

    def combined_vector(self, base: np.ndarray | None, extra: np.ndarray | None, weight: float) -> np.ndarray | None:
        """normalise(base + weight * extra) (retrieval/dense/windows.py `combine_vectors`)."""
        ...

    def retrieve(
        self,
        query: str,
        k: int,
        retrievers: Iterable[str] | None = None,
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
        *,
        vector: np.ndarray | None = None,
    ) -> dict[str, list[ScoredDoc]]:
        """Top-k documents per retriever (None: every one, see `select_retrievers`), keeping only
        `restrict` and dropping `exclude`; the dense retriever reads `vector` when given."""
        ...

    @property
    def profile(self) -> str:
        """The search profile recorded when the index was built (retrieval/spec.py `SEARCH_PROFILES`),
        else the one of its size; what a search runs unless its options name another."""
        ...

    @property
    def location(self) -> str:
        """Where the index lives, for messages: its folder, or a Milvus URI and collection."""
        ...

    def close(self) -> None:
        """Release the index's files and connections (it may not be used afterwards)."""
        ...

    def update(
        self,
        added: Iterable,
        removed: Iterable[str] = (),
        *,
        cache=None,
        progress=None,
        full_texts=None,
        total: int | None = None,
    ) -> dict:
        """Add summaries (an indexed judgment's replaces its entry) and drop `removed`, at the cost of
        the change; {"added", "replaced", "removed"}. Afterwards every reading method reflects it;
        `save` records it where the backend keeps state beside the index. `full_texts` (id -> the
        judgment's text) feeds a full-text retriever where the backend has one; `total`, the
        number of `added` when known, sizes progress reports."""
        ...

    def fingerprints(self) -> dict[str, str]:
        """judgment id -> fingerprint of the summary indexed for it (retrieval/documents.py)."""
        ...

    def save(self, directory: str | Path) -> Path:
        """Record the index in `directory`, atomically; `load` reopens it."""
        ...


@runtime_checkable
class Filterable(Protocol):
    """An index that stores each judgment's filter fields: filtered searches and facet counts
    (aqgr/pipeline/search.py `Searcher._narrow` and `facets`)."""

    @property
    def facets(self) -> Any:
        """The filter fields' reader (retrieval/embedded/facets.py `FacetReader`: `select(filters)`,
        `counts(ns)`)."""
        ...

    def ids_of(self, ns) -> list[str]:
        """The judgment ids of live document numbers (a facet selection)."""
        ...

    def ns_of(self, ids) -> list[int]:
        """The document numbers of indexed judgment ids (those not indexed are left out)."""
        ...

    def admitted(self, ns, where=None) -> AbstractSet[str]:
        """The judgments of document numbers `ns` as a set of ids that `retrieve(restrict=...)`
        reads as the numbers they are; `where`, the filter that selected them."""
        ...


@runtime_checkable
class Rescoring(Protocol):
    """An index whose BM25 runs can leave out common query terms (`retrieve(..., max_df={retriever:
    share})`) and re-rank a question over the facts' candidates (`rescore`)."""

    def retrieve(
        self,
        query: str,
        k: int,
        retrievers: Iterable[str] | None = None,
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
        *,
        vector: np.ndarray | None = None,
        max_df: Mapping[str, float] | None = None,
    ) -> dict[str, list[ScoredDoc]]: ...

    def rescore(
        self,
        query: str,
        base: str,
        runs: Mapping[str, Sequence[ScoredDoc]],
        *,
        max_df: Mapping[str, float] | None = None,
    ) -> dict[str, list[ScoredDoc]]:
        """The judgments of each of `runs` (retriever -> the run `retrieve` gave for `base`) ranked by
        their scores for `query`, for the retrievers that can re-score; the others are left out."""
        ...


def select_retrievers(
    have: Sequence[str], wanted: Iterable[str] | None, k: int, absent: Mapping[str, str] | None = None
) -> list[str]:
    """The retrievers a `retrieve` call runs: `wanted`, or every one the index has (`have`) when None.

    A name the index lacks raises ValueError with `absent[name]` (why it lacks it and what to do)
    when given, else UnknownNameError listing `have`; a negative k raises ValueError."""
    names = list(have if wanted is None else wanted)
    for name in names:
        if name not in have:
            if absent and name in absent:
                raise ValueError(absent[name])
            raise UnknownNameError("retriever", name, list(have))
    if k < 0:
        raise ValueError(f"k must be zero or more, got {k}")
    return names
