"""`tantivy.v1`: BM25 by tantivy (PyPI `tantivy`, a Rust Lucene-class engine) behind `LexicalEngine`.

Schema: `terms`, a text field split by tantivy's `whitespace` tokenizer over the caller's terms
joined by spaces (no lowercasing, stemming or length filter of tantivy's own), indexed with
term frequencies and no positions, not stored; `n`, an unsigned integer, indexed (for `only`,
`skip` and deletes) and a fast field (read back for each hit). A query is a disjunction of
term queries, each boosted by the query term's weight (`query_weights`): the score is
sum_t w(t) * BM25(t, d) with tantivy's BM25, k1 1.2, b 0.75 and Lucene's idf
ln(1 + (N - df + 0.5) / (df + 0.5)), the formula of `BM25Matrix` with idf="lucene", except
that tantivy stores each document's length in one byte (Lucene's norms: exact up to 40 terms,
then floored to steps 12.5% apart), so scores differ by about 1% (median; up to ~5%: measured
in docs/experiments/2026-12-01-lexical-engine.md). tantivy's k1 and b are fixed: other
parameters are refused (use matrix.v1). Scores are float32.

Like Lucene, tantivy counts a deleted document in N, df and the average length until a merge
of its segment drops it: after deletes, scores and `doc_freq` drift from matrix.v1's until then.

`only` is a term-set filter on `n` intersected with the query (a conjunction: tantivy walks the
few allowed documents), `skip` a term-set exclusion; both inside the search, so k results come
back. A search fetches a little more than k and, while the last fetched hit ties with the k-th,
fetches twice as many, so that the k-th place's ties are settled by `tie_key`, not by tantivy's
document order. The writer (tantivy's directory lock) is opened by the first add or delete and
released by commit or close: `WRITER_HEAP_BYTES`, at most `WRITER_THREADS` threads. The reader
reloads on commits, this process's at once and other processes' within about a second.
"""

from __future__ import annotations

import errno
import operator
import os
import re
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import numpy as np

from aqgr.foundation.errors import IndexLockedError, IndexMismatchError, MissingDependencyError
from aqgr.foundation.sqlite_files import disk_full

from ..spec import BM25_B, BM25_EPSILON, BM25_IDF, BM25_K1
from ..types import Where
from . import (
    LEXICAL_FORMAT,
    as_ns,
    best_of,
    check_n,
    check_params,
    disk_bytes,
    joined_terms,
    lexical_engines,
    new_directory,
    query_weights,
    read_manifest,
    write_manifest,
)

NAME = "tantivy.v1"
TERMS, N = "terms", "n"
_score, _address = operator.itemgetter(0), operator.itemgetter(1)  # of a hit: (score, DocAddress)
# The filter fields (retrieval/embedded/restriction.py): their terms, untokenised, and the date as YYYYMMDD;
# the manifest's "fields" names their version (an index without them, made by an older aqgr, is refused).
FIELDS, DECIDED = "fields", "decided"
FIELDS_VERSION = 1
SUBDIR = "tantivy"
# The writer's indexing memory (tantivy needs 15 MB a thread at least) and its one thread. Each
# writer thread makes a segment of its own at every commit, and tantivy merges segments only when
# eight of a size gather (its Python binding cannot ask for a merge); a search pays per segment and
# term: AILA's full-text read 5.43 -> 4.31 ms with one segment instead of two, the same runs.
# Building is no slower: the terms come from Python's tokeniser, which one tantivy thread keeps
# up with (the full-text stage: AILA 4.57 -> 4.07 s, 100,000 judgments 107.5 -> 107.3 s;
# docs/experiments/2026-12-07-one-segment.md).
WRITER_HEAP_BYTES = 192_000_000
WRITER_THREADS = 1
# A search first fetches k + TIE_SLACK hits (see the module docstring).
TIE_SLACK = 16
# Boosted term queries kept for the next query that weighs the term alike: a search asks for its
# facts' terms once alone and once with each question (~600 terms a full-text query, ~0.5 ms to
# build afresh, ~0.15 ms from here); emptied when full, so it cannot grow with the vocabulary.
TERM_QUERIES = 65_536
# tantivy's own BM25 constants (tantivy/src/query/bm25.rs); not settable.
TANTIVY_K1, TANTIVY_B, TANTIVY_IDF = 1.2, 0.75, "lucene"


def _tantivy():
    try:
        import tantivy
    except ImportError:  # pragma: no cover - tantivy is a core dependency
        raise MissingDependencyError("tantivy", None) from None
    return tantivy


def _schema():
    tantivy = _tantivy()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(TERMS, stored=False, tokenizer_name="whitespace", index_option="freq")
    builder.add_unsigned_field(N, stored=False, indexed=True, fast=True)
    builder.add_text_field(FIELDS, stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field(DECIDED, stored=False, indexed=True, fast=True)
    return builder.build()


_OS_ERROR = re.compile(r"\(os error (\d+)\)|Os \{ code: (\d+)")


def os_error_of(exc: Exception) -> OSError | None:
    """The operating-system error inside a tantivy error (raised as ValueError, its errno only in the
    text: "No space left on device (os error 28)", "IoError(Os { code: 30, ...})"), as an OSError,
    so that a full disk or a read-only folder is told as such; None when there is none."""
    found = _OS_ERROR.search(str(exc))
    if found is None:
        return None
    code = int(found.group(1) or found.group(2))
    return OSError(code, f"{os.strerror(code)} (tantivy: {exc})")


@contextmanager
def _os_errors(directory: Path) -> Iterator[None]:
    """tantivy's errors that carry an operating-system error raised as that OSError (see `os_error_of`);
    one that carries none ("An index writer was killed ... io::Error most likely") while the disk
    holding `directory` is full, as the full disk it is."""
    try:
        yield
    except ValueError as exc:
        found = os_error_of(exc)
        if found is None and disk_full(directory):
            found = OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (tantivy: {exc})", str(directory))
        if found is None:
            raise
        raise found from None


def _is_lock_busy(exc: Exception) -> bool:
    """Whether tantivy refused a writer because another holds the directory's lock ("LockBusy")."""
    return "LockBusy" in str(exc)


@lexical_engines.register(NAME)
class TantivyEngine:
    """`tantivy.v1` (see the module docstring)."""

    name: ClassVar[str] = NAME
    # The documents carry their filter fields, so `search(where=...)` applies a filter inside the search.
    filters_inside: ClassVar[bool] = True

    def __init__(self, directory: Path, manifest: dict, index):
        self.directory = Path(directory)
        self._params = {key: manifest[key] for key in ("k1", "b", "idf", "query_tf", "epsilon")}
        self._index = index
        self._schema = index.schema
        self._write_lock = threading.Lock()
        self._writer = None
        self._committed = None  # a searcher of the index as committed when the writer opened
        self._added: set[int] = set()  # n added since the writer opened (a second add replaces the first)
        self._only = None  # (a read-only `only` array, its filter query): the last restriction searched
        self._where = None  # (a Where, its query): the last filter searched
        self._term_queries: dict[tuple[str, float], object] = {}  # (term, weight) -> its boosted query (TERM_QUERIES)

    @classmethod
    def create(
        cls,
        directory: Path | str,
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
        idf: str = BM25_IDF,
        query_tf: str = "raw",
        epsilon: float = BM25_EPSILON,
    ) -> "TantivyEngine":
        params = check_params(NAME, k1=k1, b=b, idf=idf, query_tf=query_tf, epsilon=epsilon)
        if (params["k1"], params["b"], params["idf"]) != (TANTIVY_K1, TANTIVY_B, TANTIVY_IDF):
            raise ValueError(
                f"{NAME} scores BM25 with k1 {TANTIVY_K1}, b {TANTIVY_B} and {TANTIVY_IDF} idf only "
                f"(fixed in tantivy), not k1 {k1}, b {b}, idf {idf!r}: use the matrix.v1 lexical engine "
                "for other parameters"
            )
        path = new_directory(directory)
        (path / SUBDIR).mkdir()
        with _os_errors(path):
            index = _tantivy().Index(_schema(), path=str(path / SUBDIR), reuse=False)
        manifest = {"format": LEXICAL_FORMAT, "engine": NAME, **params, "fields": FIELDS_VERSION}
        write_manifest(path, manifest)
        return cls(path, manifest, index)

    @classmethod
    def open(cls, directory: Path | str) -> "TantivyEngine":
        manifest = read_manifest(directory, NAME)
        if manifest.get(FIELDS) != FIELDS_VERSION:
            raise IndexMismatchError(
                str(directory),
                [
                    "made by an older aqgr, before search filters"
                    if FIELDS not in manifest
                    else f"filter fields of version {manifest[FIELDS]!r}, this aqgr reads {FIELDS_VERSION}"
                ],
            )
        tantivy = _tantivy()
        try:
            index = tantivy.Index.open(str(Path(directory) / SUBDIR))
        except (OSError, ValueError) as exc:
            # a lock file it cannot take (a read-only folder), a full disk: said as such, not as damage
            found = exc if isinstance(exc, OSError) else os_error_of(exc)
            if found is not None and not isinstance(found, FileNotFoundError):
                raise found from None
            raise IndexMismatchError(str(directory), [f"its tantivy files cannot be opened ({exc})"]) from None
        return cls(Path(directory), manifest, index)

    @property
    def params(self) -> dict:
        return dict(self._params)

    # ------------------------------------------------------------------ writing

    def _open_writer(self):
        if self._writer is None:
            try:
                self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=WRITER_THREADS)
            except ValueError as exc:
                if _is_lock_busy(exc):
                    raise IndexLockedError(str(self.directory)) from None
                with _os_errors(self.directory):
                    raise
            self._index.reload()  # the latest commit, perhaps another process's: `add` replaces what it holds
            self._committed = self._index.searcher()
        return self._writer

    def _n_query(self, ns: list[int]):
        return _tantivy().Query.term_set_query(self._schema, N, ns)

    def _only_query(self, only: Collection[int]):
        """The filter of `only`, kept for the next search given the same collection (a filtered
        search asks each engine several times with one restriction: its facts, then each question)."""
        held = self._only
        if held is not None and held[0] is only:
            return held[1]
        query = _tantivy().Query.const_score_query(self._n_query(as_ns(only)), 0.0)
        if isinstance(only, np.ndarray) and not only.flags.writeable:  # cannot change under the cache
            self._only = (only, query)
        return query

    def _where_query(self, where: Where):
        """`where` as a score-0 tantivy filter (kept for the next search with the same filter)."""
        held = self._where
        if held is not None and held[0] == where:
            return held[1]
        Query, Occur = _tantivy().Query, _tantivy().Occur
        schema = self._schema
        must = [(Occur.Must, Query.term_set_query(schema, FIELDS, list(clause))) for clause in where.clauses]
        if where.decided is not None:
            must.append((Occur.Must, Query.range_query(schema, DECIDED, _tantivy().FieldType.Integer, *where.decided)))
        query = Query.const_score_query(Query.boolean_query(must) if must else Query.all_query(), 0.0)
        self._where = (where, query)
        return query

    def add(self, n: int, terms: Sequence[str], fields: Sequence[str] = (), decided: int | None = None) -> None:
        """Index document `n` (`LexicalEngine.add`) with its filter fields' terms and date
        (retrieval/embedded/restriction.py `field_terms`)."""
        n = check_n(n)
        text = joined_terms(terms)
        tantivy = _tantivy()
        with self._write_lock:
            writer = self._open_writer()
            if n in self._added or (self._committed.num_docs and self._holds(n)):
                with _os_errors(self.directory):
                    writer.delete_documents_by_query(self._n_query([n]))
            doc = tantivy.Document()
            doc.add_unsigned(N, n)
            doc.add_text(TERMS, text)
            for term in fields:
                doc.add_text(FIELDS, term)
            if decided is not None:
                doc.add_integer(DECIDED, decided)
            with _os_errors(self.directory):
                writer.add_document(doc)
            self._added.add(n)

    def _holds(self, n: int) -> bool:
        """Whether the index as committed when the writer opened holds document n."""
        return bool(self._committed.search(_tantivy().Query.term_query(self._schema, N, n), 1, count=False).hits)

    def delete(self, ns: Iterable[int]) -> None:
        ns = as_ns(list(ns))
        with self._write_lock:
            writer = self._open_writer()
            if ns:
                with _os_errors(self.directory):
                    writer.delete_documents_by_query(self._n_query(ns))

    def commit(self) -> None:
        with self._write_lock:
            if self._writer is None:
                return
            writer, self._writer, self._added, self._committed = self._writer, None, set(), None
            with _os_errors(self.directory):
                try:
                    writer.commit()
                finally:
                    writer.wait_merging_threads()  # releases the writer (and its lock)
                self._index.reload()

    # ------------------------------------------------------------------ reading

    def search(
        self,
        query_terms: Sequence[str],
        k: int,
        *,
        only: Collection[int] | None = None,
        skip: Collection[int] | None = None,
        where: Where | None = None,
    ) -> list[tuple[int, float]]:
        """`LexicalEngine.search`; `where`, a filter applied inside the search: a conjunction with
        the query, as `only` is."""
        weights = query_weights(list(query_terms), self._params["query_tf"])
        if k <= 0 or not weights or (only is not None and not len(only)):
            return []
        tantivy = _tantivy()
        Query, Occur = tantivy.Query, tantivy.Occur
        query = self._weighted_query(weights)
        skip = as_ns(skip)
        if only is not None or skip or where is not None:
            clauses = [(Occur.Must, query)]
            if only is not None:
                clauses.append((Occur.Must, self._only_query(only)))
            if where is not None:
                clauses.append((Occur.Must, self._where_query(where)))
            if skip:
                clauses.append((Occur.MustNot, self._n_query(skip)))
            query = Query.boolean_query(clauses)
        searcher = self._index.searcher()
        fetch = k + TIE_SLACK
        while True:
            hits = searcher.search(query, fetch, count=False).hits
            if len(hits) < fetch or hits[k - 1][0] > hits[-1][0]:
                break
            fetch *= 2
        ns = np.asarray(searcher.fast_field_values(N, list(map(_address, hits))), dtype=np.int64)
        return best_of(ns, np.fromiter(map(_score, hits), dtype=np.float64, count=len(hits)), k)

    def _weighted_query(self, weights: Mapping[str, float]):
        """The disjunction of the terms' queries, each boosted by its weight (a tantivy query is
        immutable: one made for an earlier search is used again, `TERM_QUERIES`)."""
        Query, Occur = _tantivy().Query, _tantivy().Occur
        made = self._term_queries
        if len(made) + len(weights) > TERM_QUERIES:
            made.clear()
        clauses = []
        for key in weights.items():
            query = made.get(key)
            if query is None:
                query = made[key] = Query.boost_query(
                    Query.term_query(self._schema, TERMS, key[0], index_option="freq"), key[1]
                )
            clauses.append((Occur.Should, query))
        return Query.boolean_query(clauses)

    def score(self, weights: Mapping[str, float], ns: Collection[int]) -> dict[int, float]:
        """`LexicalEngine.score`: the weighted query with `ns` as its filter, read to the end
        (at 1e6 documents a question's dozen terms over a thousand documents: ~28 ms, most of it
        the filter's look-up of the named documents)."""
        ns = as_ns(ns)
        if not weights or not ns:
            return {}
        Query, Occur = _tantivy().Query, _tantivy().Occur
        query = Query.boolean_query(
            [(Occur.Must, self._weighted_query(weights)), (Occur.Must, Query.const_score_query(self._n_query(ns), 0.0))]
        )
        searcher = self._index.searcher()
        hits = searcher.search(query, len(ns), count=False).hits
        found = searcher.fast_field_values(N, [address for _, address in hits])
        return {int(n): float(score) for n, (score, _) in zip(found, hits)}

    def doc_freq(self, term: str) -> int:
        return int(self._index.searcher().doc_freq(TERMS, term))

    def doc_freqs(self, terms: Sequence[str]) -> list[int]:
        searcher = self._index.searcher()
        return [int(searcher.doc_freq(TERMS, t)) for t in terms]

    def __len__(self) -> int:
        return int(self._index.searcher().num_docs)

    def disk_bytes(self) -> int:
        return disk_bytes(self.directory)

    def close(self) -> None:
        with self._write_lock:
            writer, self._writer, self._added, self._committed = self._writer, None, set(), None
            if writer is not None:
                writer.rollback()
                writer.wait_merging_threads()

    def __enter__(self) -> "TantivyEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
