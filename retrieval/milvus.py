"""The Milvus index backend (`milvus.v1`): the same interface as SummaryIndex (retrieval/protocol.py `Index`).

One collection per archive (per build: `aqgr_<tag>`, swapped in atomically by the local
manifest; changed in place by `update`), one row per dense *window* of a document
(retrieval/dense/windows.py):

    pk        VARCHAR  "<doc id>#<window number>" (primary key)
    doc_id    VARCHAR  the judgment id (filters and group-by use it)
    window    INT32    window number inside the document
    head      BOOL     true on window 0 (the row that carries the slot texts)
    slot_*    VARCHAR  the indexed slot texts (head row only; '' elsewhere)
    terms     VARCHAR  the document's BM25 terms, `spec.tokenizer` (words.v2 by default) applied
                       client-side and joined by spaces; a BM25 function with Milvus's
                       "standard" analyzer (\\w+ runs, lowercase) turns it into `sparse`
    sparse    SPARSE_FLOAT_VECTOR  BM25 (server-side full-text search, metric BM25)
    dense     FLOAT_VECTOR  the window's normalised vector (metric IP = cosine)

Why these choices:
* Dense: a document's score is the max over its windows, as in the embedded backend:
  window rows searched with `group_by_field="doc_id"` return each document once, with its
  best window's similarity.
* BM25: every window row of a document carries the *whole* document's terms, so each row
  scores like its document and `group_by` dedupes. Milvus counts rows, not documents, in
  its BM25 statistics: N is the number of windows and a term's df is counted once per
  window of the documents that hold it (both about `windows/doc` times larger, so idf
  barely moves), and avgdl is window-weighted (long documents weigh more). Putting the
  terms on the head row only would leave empty rows that shrink avgdl ~4x on AILA
  summaries (3.8 windows/doc) and distort length normalisation far more.
  Milvus's idf is Lucene's log(1 + (N - df + .5)/(df + .5)), the embedded backend's
  default too (IndexSpec.bm25_idf="lucene"); a spec asking for rank-bm25's floored idf
  ("okapi") is refused here. With rank-bm25's idf on the embedded side, rankings of long
  queries differed (AILA dev facts, summary BM25: top-10 overlap 0.71); with the same idf
  they agree closely (0.96; the rest is the row statistics above). Scores never agree:
  compare rankings (eval/stats/agreement.py).
* Terms are tokenised by aqgr (`spec.tokenizer`: stemming, stopwords, section numbers) rather
  than by a Milvus analyzer, so both backends see the same terms and queries.
* The local index directory keeps what Searcher needs without a round trip: manifest
  (uri, collection, spec, doc-id order), the document frequencies (`idf()`), the
  vectors of the summaries' issue sentences (`sentences.npz`: ranking harvested questions
  costs no model call, as on the embedded backend) and, per document, its summary's
  fingerprint, engine, window count and issue sentences (`documents.json`).

Updates (`update(added, removed)`, `fingerprints()`): the rows of replaced and removed
judgments are deleted (a filter on doc_id, in batches) and the new judgments' rows inserted
into the same collection; only the new summaries' windows and issue sentences are embedded.
The document frequencies stay exact: the terms stored on the deleted head rows are
subtracted (a document's terms are cut to fit the VARCHAR on a term boundary and counted as
stored, so what is subtracted is what was added). The collection changes in place, so a
manifest saved before no longer describes it: build and every update record a `generation`
in the manifest and in the collection's property `aqgr.generation` (set before any row
changes), and `load` refuses a manifest whose generation is not the collection's (an update
that failed half-way, or was never saved): rebuild. A reader loaded before an update drops
hits on judgments it does not know.

milvus-lite keeps BM25 statistics per segment (milvus_lite/engine/collection.py, its own
TODO) over all of a segment's rows, deleted ones included: the rows an update inserts form
a new segment scored with its own N, df and avgdl, and deleted rows still count in their
old segment until compaction merges it. So on milvus-lite BM25 rankings drift from a
rebuild's as updates accumulate (docs/experiments/2026-12-01-milvus-incremental-update.md;
the manifest's `changed_since_build` counts the judgments updated since); dense rankings
(FLAT, exact) and `idf()` (aqgr's own counts) do not. A Milvus server aggregates its
segments' statistics (its IDF oracle); not verified here.

Scores: BM25 is reported as |distance| (milvus-lite returns -score, a cluster +score);
dense as the inner product. Runs are re-ordered with the shared tie rule (-score, id
hash), after fetching a margin past k so ties at the cut follow that rule too.

Verified on milvus-lite 3.2 only (pure-Python, embedded gRPC server on 127.0.0.1):
schema with a BM25 function, SPARSE_INVERTED_INDEX/BM25, FLAT/IP, filtered search,
group-by search, hybrid search with RRFRanker and WeightedRanker, query, drop, delete by
filter, count(*), collection properties. Not verified on a Milvus cluster: its BM25 uses
global statistics and may reject bm25 index parameters outside its documented ranges (k1 in
[1.2, 3], b in [0, 1]); its default (bounded) consistency may let a search right after an
update miss the newest rows.

pymilvus is imported lazily (`pip install 'aqgr[milvus]'`).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar, NamedTuple

import numpy as np

from aqgr.foundation.errors import (
    EmptyArchiveError,
    IndexMismatchError,
    MissingDependencyError,
    UnknownNameError,
)
from aqgr.foundation.paths import file_sha256
from aqgr.schemas.summary import SCHEMA_VERSION, StructuredSummary

from .dense.cache import EmbeddingCache, embed_with_cache
from .dense.embedders import Embedder
from .dense.windows import (
    SENTENCES_FILE,
    EmbedsQueries,
    QueryVectors,
    Sentences,
    document_windows,
    embed_sentences,
    flatten_windows,
    load_sentences,
    save_sentences,
)
from .documents import dense_texts, query_sentences, slot_texts, summary_fingerprint
from .manifest import (
    MANIFEST,
    SavedManifest,
    compare,
    manifest_embedder,
    read_manifest,
    resolve_embedder,
    summarizer_of,
)
from .manifest import check_files as check_manifest_files
from .protocol import select_retrievers
from .spec import IndexSpec, Progress, profile_for
from .text import tokenizers, with_pairs
from .types import ScoredDoc, ranked

BACKEND = "milvus.v1"
# 2: the BM25 k1/b reach milvus-lite too (format 1 collections were scored with its k1 = 1.5).
# 3: the manifest records the BM25 n-grams (IndexSpec.bm25_ngrams: terms, or terms and pairs);
#    the summaries' issue sentences are embedded at build time (sentences.npz, as embedded.v1).
# 4: incremental updates: documents.json (per document: summary fingerprint, engine, window
#    count, issue sentences), the manifest's and the collection's `generation`, document
#    frequencies counted on the stored (term-boundary cut) terms.
FORMAT_VERSION = 4
TERMS_FILE = "terms.json"
DOCUMENTS_FILE = "documents.json"
GENERATION = "aqgr.generation"  # the collection property naming the state it is in
# Milvus caps VARCHAR at 65,535 bytes and a search's limit (topk) at 16,384.
MAX_VARCHAR = 65535
MAX_LIMIT = 16384
INSERT_BATCH = 2000
FILTER_BATCH = 500  # judgment ids per delete or query filter expression
# Ranker names for `hybrid`: Milvus's own RRF (k = 60, as rrf.v1) and weighted score fusion.
RANKERS = ("rrf", "weighted")
RRF_K = 60


def _pymilvus():
    try:
        import pymilvus
    except ImportError:
        raise MissingDependencyError("pymilvus", "milvus") from None
    return pymilvus


def connect(uri: str):
    """A MilvusClient for `uri`: http(s)://host:port for a server, or a local path (milvus-lite,
    which serves it embedded on 127.0.0.1; its parent folder must exist)."""
    pm = _pymilvus()
    if "://" not in uri:
        Path(uri).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        uri = str(Path(uri).expanduser().resolve())
    return pm.MilvusClient(uri=uri)


def normalise_uri(uri: str) -> str:
    """A server URL as given; a local milvus-lite path made absolute (recorded in the manifest)."""
    return uri if "://" in uri else str(Path(uri).expanduser().resolve())


def _fits(text: str, limit: int = MAX_VARCHAR) -> str:
    """`text` cut to at most `limit` UTF-8 bytes (on a character boundary)."""
    raw = text.encode("utf-8")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", errors="ignore")


def _terms_text(terms: Sequence[str], limit: int = MAX_VARCHAR) -> str:
    """`terms` joined by spaces, cut after the last whole term within `limit` UTF-8 bytes:
    the stored text, from which the document frequencies are counted, holds whole terms only."""
    text = " ".join(terms)
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    head = raw[: limit + 1].decode("utf-8", errors="ignore")
    return head[: max(head.rfind(" "), 0)]


def _quoted(ids: Iterable[str]) -> str:
    return "[" + ", ".join(json.dumps(str(d)) for d in sorted(ids)) + "]"


def _chunks(items: Sequence[str], size: int = FILTER_BATCH) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def filter_expr(restrict: set[str] | None, exclude: set[str] | None) -> str:
    """The Milvus boolean expression for restrict (keep only) and exclude (drop)."""
    parts = []
    if restrict is not None:
        parts.append(f"doc_id in {_quoted(restrict)}")
    if exclude:
        parts.append(f"doc_id not in {_quoted(exclude)}")
    return " and ".join(parts)


def _sentence_texts(texts: Iterable[str]) -> tuple[str, ...]:
    """Whitespace-normalised, non-empty, once each (the keys `QueryVectors` looks up)."""
    return tuple(dict.fromkeys(t for t in (" ".join(text.split()) for text in texts) if t))


@dataclass(frozen=True)
class Origin:
    """Where an indexed document came from: its summary's fingerprint and engine (None for a
    document given as plain texts) and its issue sentences (embedded for question ranking)."""

    fingerprint: str | None = None
    engine: str | None = None
    sentences: tuple[str, ...] = ()

    @classmethod
    def of(cls, summary: StructuredSummary) -> "Origin":
        return cls(summary_fingerprint(summary), summary.provenance.engine, query_sentences(summary.issues))


class _Batch(NamedTuple):
    """Documents ready to insert: their BM25 terms as stored, window counts and window vectors."""

    doc_ids: list[str]
    texts: dict[str, dict[str, str]]
    terms: list[str]
    windows: list[int]
    vectors: np.ndarray


def _prepare(
    doc_ids: Sequence[str],
    texts: Mapping[str, Mapping[str, str]],
    spec: IndexSpec,
    tokenizer,
    embedder: Embedder,
    cache: EmbeddingCache | None,
    report: Progress,
    seconds: dict[str, float],
    vectors: np.ndarray | None = None,
) -> _Batch:
    """Tokenise and embed documents (the model calls happen here, before any row is written)."""
    start = time.perf_counter()
    terms = [
        _terms_text(with_pairs(tokenizer("\n\n".join(t for t in texts[d].values() if t)), spec.bm25_ngrams))
        for d in doc_ids
    ]
    seconds["tokenize"] = time.perf_counter() - start
    start = time.perf_counter()
    doc_windows = [document_windows(dense_texts(dict(texts[d]), spec.dense_slots), spec.window_chars) for d in doc_ids]
    windows, _ = flatten_windows(doc_windows)
    if vectors is None:
        vectors, _ = embed_with_cache(
            embedder, windows, cache, progress=lambda done, total: report("embed", done, total)
        )
    seconds["embed"] = time.perf_counter() - start
    return _Batch(list(doc_ids), {d: dict(texts[d]) for d in doc_ids}, terms, [len(w) for w in doc_windows], vectors)


def _rows(batch: _Batch, fields: Sequence[str]) -> Iterator[dict]:
    """One row per window; the head row (window 0) carries the slot texts."""
    w = 0
    for d, doc_id in enumerate(batch.doc_ids):
        for n in range(batch.windows[d]):
            yield {
                "pk": f"{doc_id}#{n}",
                "doc_id": doc_id,
                "window": n,
                "head": n == 0,
                **{f"slot_{f}": _fits(batch.texts[doc_id].get(f, "")) if n == 0 else "" for f in fields},
                "terms": batch.terms[d],
                "dense": np.asarray(batch.vectors[w], dtype=np.float32).tolist(),
            }
            w += 1


def _insert(client, collection: str, rows: Iterable[dict], total: int, report: Progress) -> None:
    chunk, done = [], 0
    for row in rows:
        chunk.append(row)
        if len(chunk) >= INSERT_BATCH:
            client.insert(collection, chunk)
            done += len(chunk)
            chunk = []
            report("milvus", done, total)
    if chunk:
        client.insert(collection, chunk)
        report("milvus", total, total)


def _count_terms(terms: Iterable[str], df: dict[str, int], sign: int = 1) -> None:
    """Add (sign 1) or subtract (sign -1) each stored terms text's distinct terms to `df`."""
    for text in terms:
        for term in set(text.split()):
            df[term] = df.get(term, 0) + sign


def _summarizer(origins: Mapping[str, Origin], previous: str | None) -> str | None:
    """The one engine that wrote every indexed summary (documents without one keep `previous`), else None."""
    engines = {o.engine or previous for o in origins.values()}
    return engines.pop() if len(engines) == 1 else None


class MilvusIndex(EmbedsQueries, SavedManifest):
    """BM25 and dense retrieval served by Milvus; documents addressed by judgment id."""

    backend: ClassVar[str] = BACKEND
    needs_uri: ClassVar[bool] = True  # the collection lives at a URI; the index directory keeps the manifest
    takes_full_texts: ClassVar[bool] = False  # no full-text retriever
    serves: ClassVar[tuple[str, ...]] = ("bm25", "dense")  # the retrievers a collection can have

    def __init__(
        self,
        *,
        spec: IndexSpec,
        client,
        collection: str,
        uri: str,
        doc_ids: Sequence[str],
        terms: list[str],
        df: Sequence[int],
        embedder: Embedder,
        manifest: dict,
        origins: Mapping[str, Origin],
        windows: Mapping[str, int],
        shared_sentences: Sequence[str] = (),
        sentences: Sentences | None = None,
    ):
        self.spec = spec
        self._client = client
        self.collection = collection
        self.uri = uri
        self._embedder = embedder
        self._tokenizer = tokenizers.create(spec.tokenizer)
        self._manifest = manifest
        self._origins = dict(origins)
        self._windows = dict(windows)
        self._shared = tuple(shared_sentences)  # sentences given without a document (from_texts): never pruned
        # retriever name -> its search, in the default order (`retrievers`)
        self._searches = {"bm25": self._search_bm25, "dense": self._search_dense}  # = serves
        self._set_documents(doc_ids, terms, df, sentences)

    def _set_documents(
        self, doc_ids: Sequence[str], terms: list[str], df: Sequence[int], sentences: Sentences | None
    ) -> None:
        """The in-memory view of the collection: doc ids, document frequencies, query vectors."""
        self._doc_ids = tuple(doc_ids)
        self._doc_set = frozenset(self._doc_ids)
        self._terms = terms
        self._df = np.asarray(df, dtype=np.int64)
        self._vocab_set = frozenset(terms)
        self._sentences = sentences
        self._queries = QueryVectors(
            self._embedder, self.spec.window_chars, dict(zip(*sentences)) if sentences is not None else None
        )

    # --- building -----------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        summaries: Sequence[StructuredSummary],
        spec: IndexSpec | None = None,
        *,
        uri: str,
        cache: EmbeddingCache | None = None,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        vectors: np.ndarray | None = None,
        profile: str | None = None,
    ) -> "MilvusIndex":
        """Index `summaries` into a new collection at `uri` (see `from_texts`)."""
        spec = spec or IndexSpec()
        if not summaries:
            raise EmptyArchiveError("index")
        doc_ids = [s.judgment_id for s in summaries]
        texts = {s.judgment_id: slot_texts(s, spec.slots) for s in summaries}
        return cls.from_texts(
            doc_ids,
            texts,
            spec,
            uri=uri,
            cache=cache,
            embedder=embedder,
            progress=progress,
            vectors=vectors,
            summarizer=summarizer_of(summaries),
            origins={s.judgment_id: Origin.of(s) for s in summaries},
            profile=profile,
        )

    @classmethod
    def from_texts(
        cls,
        doc_ids: Sequence[str],
        texts: dict[str, dict[str, str]],
        spec: IndexSpec | None = None,
        *,
        uri: str,
        cache: EmbeddingCache | None = None,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        vectors: np.ndarray | None = None,
        summarizer: str | None = None,
        sentences: Sequence[str] | None = None,
        origins: Mapping[str, Origin] | None = None,
        profile: str | None = None,
    ) -> "MilvusIndex":
        """Index documents given as field texts into a new collection `aqgr_<tag>` at `uri`.
        `profile`: the search profile the manifest records (default: by the number of documents,
        retrieval/spec.py `profile_for`).

        The index is unsaved until `save(directory)` records it (the manifest names the
        collection). `vectors` (benchmarks only) replaces the embedder's window vectors;
        `sentences` (short texts) and each document's `origins` sentences (the summaries'
        issues) are embedded now and kept beside the manifest, as the embedded backend does,
        so ranking harvested questions costs no model call; `origins` also records each
        summary's fingerprint (`fingerprints`), which `update` compares against."""
        spec = spec or IndexSpec()
        if spec.bm25_idf != "lucene":
            raise ValueError(
                f"Milvus computes BM25 with Lucene's idf itself: bm25_idf={spec.bm25_idf!r} is for the "
                "embedded backend only (build with bm25_idf='lucene', the default)"
            )
        doc_ids = list(doc_ids)
        if not doc_ids:
            raise EmptyArchiveError("index")
        if len(set(doc_ids)) != len(doc_ids):
            raise ValueError("judgment ids must be unique")
        fields = list(texts[doc_ids[0]])
        embedder = resolve_embedder(spec, embedder)
        report = progress or (lambda stage, done, total: None)
        seconds: dict[str, float] = {}
        origins = {d: (origins or {}).get(d) or Origin() for d in doc_ids}
        batch = _prepare(
            doc_ids, texts, spec, tokenizers.create(spec.tokenizer), embedder, cache, report, seconds, vectors
        )
        df: dict[str, int] = {}
        _count_terms(batch.terms, df)

        start = time.perf_counter()
        client = connect(uri)
        collection = f"aqgr_{uuid.uuid4().hex[:16]}"
        _create_collection(client, collection, fields, embedder.dim, spec)
        client.alter_collection_properties(collection, {GENERATION: "0"})
        total = sum(batch.windows)
        _insert(client, collection, _rows(batch, fields), total, report)
        client.flush(collection)
        client.load_collection(collection)
        seconds["milvus"] = time.perf_counter() - start

        shared = _sentence_texts(sentences or ())
        stored = None
        wanted = list(dict.fromkeys([*shared, *(t for o in origins.values() for t in o.sentences)]))
        if wanted:
            start = time.perf_counter()
            stored, _ = embed_sentences(
                embedder, wanted, spec.window_chars, cache, lambda done, total: report("sentences", done, total)
            )
            seconds["sentences"] = time.perf_counter() - start

        terms = sorted(df)
        manifest = {
            "backend": BACKEND,
            **({"summarizer": summarizer} if summarizer else {}),
            "format_version": FORMAT_VERSION,
            "schema_version": SCHEMA_VERSION,
            **spec.describe(),
            "embedder": {"name": embedder.name, "fingerprint": embedder.fingerprint, "dim": embedder.dim},
            "milvus": {
                "uri": normalise_uri(uri),
                "collection": collection,
                "fields": fields,
                "rows": "one per dense window",
            },
            "n_docs": len(doc_ids),
            "search_profile": profile or profile_for(len(doc_ids)),
            "n_terms": len(terms),
            "n_windows": total,
            "generation": 0,
            "created_at": datetime.now(UTC).isoformat(),
            "build_seconds": {part: round(s, 4) for part, s in seconds.items()},
            "doc_ids": doc_ids,
            "sentences": [SENTENCES_FILE] if stored is not None else [],
        }
        return cls(
            spec=spec,
            client=client,
            collection=collection,
            uri=normalise_uri(uri),
            doc_ids=doc_ids,
            terms=terms,
            df=[df[t] for t in terms],
            embedder=embedder,
            manifest=manifest,
            origins=origins,
            windows=dict(zip(doc_ids, batch.windows)),
            shared_sentences=shared,
            sentences=stored,
        )

    # --- updating -----------------------------------------------------------------------

    def update(
        self,
        added: Iterable[StructuredSummary],
        removed: Iterable[str] = (),
        *,
        cache: EmbeddingCache | None = None,
        progress: Progress | None = None,
        full_texts: Callable[[str], str | None] | None = None,
        total: int | None = None,
    ) -> dict:
        """Add the summaries (one whose judgment is already indexed replaces it), drop `removed`
        (ids not indexed are ignored); returns {"added", "replaced", "removed"} counts.

        Only the new summaries are tokenised and embedded; the rows of replaced and removed
        judgments are deleted and the new ones inserted into this collection, the document
        frequencies, doc ids, issue sentences and manifest (`generation` + 1, `updated_at`)
        follow; `save(directory)` records the new state. A judgment both added and removed, or
        added twice, is refused (ValueError) before anything changes. `full_texts` is not
        read (no full-text retriever on Milvus), nor `total` (the summaries are read at once). May leave the index empty (searching it
        then raises EmptyArchiveError, as for any empty index).

        If Milvus fails half-way, the collection is in neither state: the saved manifest is
        then refused by `load` (its generation is behind the collection's) and the index must
        be rebuilt."""
        added = list(added)
        ids = [s.judgment_id for s in added]
        if len(set(ids)) != len(ids):
            dupes = sorted({d for d in ids if ids.count(d) > 1})
            raise ValueError(f"a judgment can be added once per update; repeated: {', '.join(dupes[:10])}")
        removed = set(removed)
        both = sorted(removed & set(ids))
        if both:
            raise ValueError(f"judgment(s) both added and removed in one update: {', '.join(both[:10])}")
        dropped = [d for d in self._doc_ids if d in removed]
        replaced = [d for d in ids if d in self._doc_set]
        counts = {"added": len(ids) - len(replaced), "replaced": len(replaced), "removed": len(dropped)}
        if not ids and not dropped:
            return counts
        fields = self._manifest["milvus"]["fields"]
        if ids and fields != list(self.spec.slots):
            raise ValueError(
                f"this index holds the fields {fields}, not the summary slots {list(self.spec.slots)}: "
                "rebuild it from the summaries to update it with summaries"
            )
        report = progress or (lambda stage, done, total: None)
        seconds: dict[str, float] = {}
        batch = _prepare(
            ids,
            {s.judgment_id: slot_texts(s, self.spec.slots) for s in added},
            self.spec,
            self._tokenizer,
            self._embedder,
            cache,
            report,
            seconds,
        )
        new = {s.judgment_id: Origin.of(s) for s in added}
        gone = sorted({*replaced, *dropped})
        origins = {d: o for d, o in self._origins.items() if d not in removed} | new
        sentences = self._updated_sentences(new, origins, cache, report, seconds)
        stored_terms = self._stored_terms(gone)

        # From here the collection changes: a manifest saved before no longer describes it.
        start = time.perf_counter()
        generation = int(self._manifest.get("generation", 0)) + 1
        self._client.alter_collection_properties(self.collection, {GENERATION: str(generation)})
        for chunk in _chunks(gone):
            self._client.delete(self.collection, filter=f"doc_id in {_quoted(chunk)}")
        _insert(self._client, self.collection, _rows(batch, fields), sum(batch.windows), report)
        self._client.flush(self.collection)
        seconds["milvus"] = time.perf_counter() - start

        df = dict(zip(self._terms, self._df.tolist()))
        _count_terms(stored_terms.values(), df, -1)
        _count_terms(batch.terms, df)
        terms = sorted(t for t, n in df.items() if n > 0)
        doc_ids = [d for d in self._doc_ids if d not in removed] + [d for d in ids if d not in self._doc_set]
        self._origins = origins
        self._windows = {d: n for d, n in self._windows.items() if d not in removed} | dict(zip(ids, batch.windows))
        self._set_documents(doc_ids, terms, [df[t] for t in terms], sentences)
        summarizer = _summarizer(origins, self._manifest.get("summarizer"))
        manifest = {k: v for k, v in self._manifest.items() if k not in ("sha256", "summarizer")}
        self._manifest = {
            **({"summarizer": summarizer} if summarizer else {}),
            **manifest,
            "n_docs": len(doc_ids),
            "n_terms": len(terms),
            "n_windows": sum(self._windows.values()),
            "generation": generation,
            "updated_at": datetime.now(UTC).isoformat(),
            # judgments added, replaced or removed since the collection was built (on milvus-lite the
            # rows of each update keep BM25 statistics of their own: a measure of the drift)
            "changed_since_build": int(self._manifest.get("changed_since_build", 0)) + sum(counts.values()),
            "last_update": {**counts, "seconds": {part: round(s, 4) for part, s in seconds.items()}},
            "doc_ids": doc_ids,
            "sentences": [SENTENCES_FILE] if sentences is not None else [],
        }
        return counts

    def _updated_sentences(
        self,
        new: Mapping[str, Origin],
        origins: Mapping[str, Origin],
        cache: EmbeddingCache | None,
        report: Progress,
        seconds: dict[str, float],
    ) -> Sentences | None:
        """The stored sentences after an update: the new summaries' issues embedded (those not
        held already), those no indexed document (nor `from_texts`) has any more dropped."""
        known = dict(zip(*self._sentences)) if self._sentences is not None else {}
        fresh = [t for o in new.values() for t in o.sentences if t not in known]
        if fresh:
            start = time.perf_counter()
            stored, _ = embed_sentences(
                self._embedder,
                fresh,
                self.spec.window_chars,
                cache,
                lambda done, total: report("sentences", done, total),
            )
            if stored is not None:
                known.update(zip(*stored))
            seconds["sentences"] = time.perf_counter() - start
        wanted = {*self._shared, *(t for o in origins.values() for t in o.sentences)}
        kept = {t: v for t, v in known.items() if t in wanted}
        return (list(kept), np.stack(list(kept.values())).astype(np.float32)) if kept else None

    def _stored_terms(self, doc_ids: Sequence[str]) -> dict[str, str]:
        """doc id -> the BM25 terms stored on its head row (what its document frequencies counted)."""
        found: dict[str, str] = {}
        for chunk in _chunks(list(doc_ids)):
            rows = self._client.query(
                self.collection,
                filter=f"doc_id in {_quoted(chunk)} and head == true",
                output_fields=["doc_id", "terms"],
                limit=len(chunk),
            )
            found.update((row["doc_id"], row["terms"]) for row in rows)
        missing = [d for d in doc_ids if d not in found and self._windows.get(d, 0) > 0]
        if missing:
            raise IndexMismatchError(
                f"Milvus collection {self.collection!r} at {self.uri}",
                [f"{len(missing)} indexed judgment(s) have no rows there (e.g. {missing[0]})"],
            )
        return found

    def fingerprints(self) -> dict[str, str]:
        """judgment id -> fingerprint of the summary indexed for it (retrieval/documents.py
        summary_fingerprint); documents indexed from plain texts have none."""
        return {d: self._origins[d].fingerprint for d in self._doc_ids if self._origins[d].fingerprint}

    @staticmethod
    def saved_fingerprints(directory: str | Path) -> dict[str, str]:
        """`fingerprints()` of a saved index, from its documents file alone (no server call)."""
        records = json.loads((Path(directory) / DOCUMENTS_FILE).read_text(encoding="utf-8"))["documents"]
        return {d: r["fingerprint"] for d, r in records.items() if r.get("fingerprint")}

    @staticmethod
    def saved_ids(directory: str | Path) -> list[str]:
        return list(json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))["doc_ids"])

    # --- saving and loading -------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Record this index in `directory` (manifest, document frequencies, documents, sentences), atomically.

        A collection recorded there before is dropped once the new manifest is in place."""
        target = Path(directory)
        if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / MANIFEST).exists())):
            raise FileExistsError(f"{target} exists and is not an aqgr index: choose another directory")
        previous = _recorded_collection(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        tag = uuid.uuid4().hex[:12]
        tmp, old = target.parent / f".{target.name}.tmp-{tag}", target.parent / f".{target.name}.old-{tag}"
        tmp.mkdir()
        try:
            (tmp / TERMS_FILE).write_text(json.dumps({"terms": self._terms, "df": self._df.tolist()}), encoding="utf-8")
            documents = {
                d: {
                    "fingerprint": self._origins[d].fingerprint,
                    "engine": self._origins[d].engine,
                    "windows": self._windows[d],
                    "sentences": list(self._origins[d].sentences),
                }
                for d in self._doc_ids
            }
            (tmp / DOCUMENTS_FILE).write_text(
                json.dumps({"documents": documents, "sentences": list(self._shared)}, ensure_ascii=False),
                encoding="utf-8",
            )
            names = [TERMS_FILE, DOCUMENTS_FILE] + (
                [save_sentences(tmp, self._sentences)] if self._sentences is not None else []
            )
            manifest = dict(self._manifest, sha256={name: file_sha256(tmp / name) for name in names})
            (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
            if target.exists():
                os.replace(target, old)
                os.replace(tmp, target)
                import shutil

                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, target)
        except BaseException:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._manifest = manifest
        if previous and previous != (self.uri, self.collection):
            _drop_quietly(previous, self._client if previous[0] == self.uri else None)
        return target

    @classmethod
    def load(
        cls, directory: str | Path, expect: IndexSpec | None = None, *, embedder: Embedder | None = None
    ) -> "MilvusIndex":
        """Open the collection a saved manifest names; refuses (IndexMismatchError) a spec, embedder
        or file mismatch, a missing collection, a collection changed since the manifest was
        saved (its generation), or a row count other than recorded."""
        path = Path(directory)
        manifest, (spec, uri, collection) = read_manifest(
            path, FORMAT_VERSION, lambda m: (_spec_of(m), m["milvus"]["uri"], m["milvus"]["collection"])
        )
        differences = compare(manifest, spec, expect, FORMAT_VERSION)
        if manifest.get("backend") != BACKEND:
            differences.append(f"backend {manifest.get('backend')!r}, this reader is {BACKEND!r}")
        differences += check_manifest_files(path, manifest)
        embedder, problem = manifest_embedder(manifest, spec, embedder)
        if problem:
            differences.append(problem)
        if differences:
            raise IndexMismatchError(str(path), differences)
        client = connect(uri)
        if not client.has_collection(collection):
            raise IndexMismatchError(str(path), [f"Milvus collection {collection!r} is missing at {uri}"])
        generation = client.describe_collection(collection).get("properties", {}).get(GENERATION)
        if generation != str(manifest.get("generation")):
            raise IndexMismatchError(
                str(path),
                [
                    f"collection {collection!r} is at generation {generation}, the manifest at {manifest.get('generation')}: "
                    "it changed after this manifest was saved (an update that failed or was not saved)"
                ],
            )
        client.load_collection(collection)
        rows = int(client.query(collection, filter="", output_fields=["count(*)"])[0]["count(*)"])
        if rows != manifest.get("n_windows"):
            raise IndexMismatchError(
                str(path), [f"collection {collection!r} holds {rows} rows, the manifest {manifest.get('n_windows')}"]
            )
        try:
            terms = json.loads((path / TERMS_FILE).read_text(encoding="utf-8"))
            documents = json.loads((path / DOCUMENTS_FILE).read_text(encoding="utf-8"))
            sentences = load_sentences(path) if manifest.get("sentences") else None
        except Exception as exc:
            raise IndexMismatchError(str(path), [f"index files unreadable ({type(exc).__name__}: {exc})"]) from None
        doc_ids = list(manifest["doc_ids"])
        records = documents["documents"]
        if set(records) != set(doc_ids) or sum(r["windows"] for r in records.values()) != rows:
            raise IndexMismatchError(str(path), [f"{DOCUMENTS_FILE} and the manifest disagree on the documents"])
        origins = {d: Origin(r["fingerprint"], r["engine"], tuple(r["sentences"])) for d, r in records.items()}
        return cls(
            spec=spec,
            client=client,
            collection=collection,
            uri=uri,
            doc_ids=doc_ids,
            terms=terms["terms"],
            df=terms["df"],
            embedder=embedder,
            manifest=manifest,
            origins=origins,
            windows={d: r["windows"] for d, r in records.items()},
            shared_sentences=documents["sentences"],
            sentences=sentences,
        )

    def drop(self) -> None:
        """Drop this index's collection (the local manifest, if saved, then refers to nothing)."""
        if self._client.has_collection(self.collection):
            self._client.drop_collection(self.collection)

    def close(self) -> None:
        self._client.close()

    # --- reading ------------------------------------------------------------------------

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return self._doc_ids

    @property
    def location(self) -> str:
        return f"Milvus collection {self.collection!r} at {self.uri}"

    @property
    def tokenizer(self):
        return self._tokenizer

    def idf(self) -> dict[str, float]:
        """The same smooth idf as SummaryIndex.idf, from document (not row) frequencies."""
        n = len(self._doc_ids)
        values = np.log1p((n - self._df + 0.5) / (self._df + 0.5))
        return dict(zip(self._terms, values.tolist()))

    def __len__(self) -> int:
        return len(self._doc_ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_set

    def texts(self, doc_id: str) -> dict[str, str]:
        """The indexed slot texts of one document, read from its head row (KeyError if absent)."""
        fields = self._manifest["milvus"]["fields"]
        if doc_id not in self._doc_set:
            raise KeyError(doc_id)
        rows = self._client.query(
            self.collection, filter=f"pk == {json.dumps(f'{doc_id}#0')}", output_fields=[f"slot_{f}" for f in fields]
        )
        if not rows:
            raise KeyError(doc_id)
        return {f: rows[0][f"slot_{f}"] for f in fields}

    def document_text(self, doc_id: str) -> str:
        return "\n\n".join(t for t in self.texts(doc_id).values() if t)

    @property
    def retrievers(self) -> tuple[str, ...]:
        """The retrievers of a Milvus collection (no full-text retriever)."""
        return tuple(self._searches)

    def retrieve(
        self,
        query: str,
        k: int,
        retrievers: Iterable[str] | None = None,
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
        *,
        vector=None,
    ) -> dict[str, list[ScoredDoc]]:
        """Top-k documents per retriever, as SummaryIndex.retrieve (filters applied in Milvus)."""
        names = select_retrievers(self.retrievers, retrievers, k)
        if restrict is not None:
            restrict = set(restrict) & self._doc_set
        expr = filter_expr(restrict, set(exclude) if exclude else None)
        runs: dict[str, list[ScoredDoc]] = {}
        for name in names:
            if k == 0 or (restrict is not None and not restrict):
                runs[name] = []
            else:
                runs[name] = self._searches[name](query, k, expr, vector)
        return runs

    def _limit(self, k: int) -> int:
        return min(MAX_LIMIT, k + max(10, k // 2))  # a margin past k: ties at the cut follow the hash rule

    def _bm25_query(self, query: str) -> str | None:
        terms = [t for t in with_pairs(self._tokenizer(query), self.spec.bm25_ngrams) if t in self._vocab_set]
        return " ".join(terms) if terms else None

    def _search_bm25(self, query: str, k: int, expr: str, vector=None) -> list[ScoredDoc]:
        """BM25 served by Milvus over the query's terms (`vector` is the dense retriever's)."""
        text = self._bm25_query(query)
        if text is None:
            return []
        hits = self._client.search(
            self.collection,
            data=[text],
            anns_field="sparse",
            limit=self._limit(k),
            filter=expr,
            group_by_field="doc_id",
            output_fields=["doc_id"],
            search_params={"metric_type": "BM25"},
        )[0]
        return ranked(_best(hits, abs, self._doc_set))[:k]

    def _search_dense(self, query: str, k: int, expr: str, vector=None) -> list[ScoredDoc]:
        vector = self.embed_query(query) if vector is None else vector
        if vector is None:
            return []
        hits = self._client.search(
            self.collection,
            data=[vector.tolist()],
            anns_field="dense",
            limit=self._limit(k),
            filter=expr,
            group_by_field="doc_id",
            output_fields=["doc_id"],
            search_params={"metric_type": "IP"},
        )[0]
        return ranked(_best(hits, float, self._doc_set))[:k]

    def hybrid(
        self,
        query: str,
        k: int,
        *,
        ranker: str = "rrf",
        weights: Sequence[float] = (0.5, 0.5),
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
    ) -> list[ScoredDoc]:
        """BM25 + dense fused inside Milvus (hybrid_search) with its RRFRanker(k=60) or WeightedRanker.

        The fused score is Milvus's; the order is re-checked with the shared tie rule."""
        if ranker not in RANKERS:
            raise UnknownNameError("ranker", ranker, list(RANKERS))
        if restrict is not None:
            restrict = set(restrict) & self._doc_set
            if not restrict:
                return []
        pm = _pymilvus()
        expr = filter_expr(restrict, set(exclude) if exclude else None)
        limit = self._limit(k)
        text, vector = self._bm25_query(query), self.embed_query(query)
        requests = []
        if text is not None:
            requests.append(
                pm.AnnSearchRequest(
                    data=[text], anns_field="sparse", param={"metric_type": "BM25"}, limit=limit, expr=expr or None
                )
            )
        if vector is not None:
            requests.append(
                pm.AnnSearchRequest(
                    data=[vector.tolist()],
                    anns_field="dense",
                    param={"metric_type": "IP"},
                    limit=limit,
                    expr=expr or None,
                )
            )
        if not requests or k == 0:
            return []
        rank = pm.RRFRanker(RRF_K) if ranker == "rrf" else pm.WeightedRanker(*list(weights)[: len(requests)])
        hits = self._client.hybrid_search(
            self.collection, requests, ranker=rank, limit=limit, output_fields=["doc_id"], group_by_field="doc_id"
        )[0]
        return ranked(_best(hits, float, self._doc_set))[:k]


def _best(hits, score, known: frozenset[str]) -> dict[str, float]:
    """doc id -> best score among the hits (group-by already gives one per document) on the
    `known` documents (a reader older than the collection's last update skips the others)."""
    best: dict[str, float] = {}
    for hit in hits:
        doc_id = hit["entity"]["doc_id"]
        if doc_id not in known:
            continue
        value = score(hit["distance"])
        if doc_id not in best or value > best[doc_id]:
            best[doc_id] = value
    return best


def _create_collection(client, name: str, fields: Sequence[str], dim: int, spec: IndexSpec) -> None:
    pm = _pymilvus()
    dt = pm.DataType
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", dt.VARCHAR, is_primary=True, max_length=1024)
    schema.add_field("doc_id", dt.VARCHAR, max_length=1000)
    schema.add_field("window", dt.INT32)
    schema.add_field("head", dt.BOOL)
    for field in fields:
        schema.add_field(f"slot_{field}", dt.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field(
        "terms", dt.VARCHAR, max_length=MAX_VARCHAR, enable_analyzer=True, analyzer_params={"tokenizer": "standard"}
    )
    schema.add_field("sparse", dt.SPARSE_FLOAT_VECTOR)
    schema.add_field("dense", dt.FLOAT_VECTOR, dim=dim)
    schema.add_function(
        pm.Function(
            name="bm25", function_type=pm.FunctionType.BM25, input_field_names=["terms"], output_field_names=["sparse"]
        )
    )
    index_params = client.prepare_index_params()
    bm25 = {"bm25_k1": spec.bm25_k1, "bm25_b": spec.bm25_b}
    # pymilvus 3 sends index params as flat key-value pairs (what a Milvus server reads);
    # milvus-lite 3.2 reads only a JSON "params" pair and silently used its default k1 = 1.5
    # without it. The nested copy becomes that pair; a server merges it with the flat ones.
    index_params.add_index(
        "sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params={**bm25, "params": dict(bm25)}
    )
    index_params.add_index("dense", index_type="FLAT", metric_type="IP")
    client.create_collection(name, schema=schema, index_params=index_params)


def _spec_of(manifest: dict) -> IndexSpec:
    return IndexSpec.from_manifest(manifest)


def _recorded_collection(directory: Path) -> tuple[str, str] | None:
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        return manifest["milvus"]["uri"], manifest["milvus"]["collection"]
    except Exception:
        return None


def _drop_quietly(recorded: tuple[str, str], client=None) -> None:
    """Drop a replaced collection; a failure leaves an orphan collection, never a broken index."""
    uri, collection = recorded
    try:
        client = client or connect(uri)
        if client.has_collection(collection):
            client.drop_collection(collection)
    except Exception:  # noqa: BLE001 - the new index is in place; an orphan is harmless
        pass
