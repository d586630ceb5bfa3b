"""The summary index: BM25 + dense retrievers over field-based documents, in a directory updated in place.

A saved index is a directory:

    manifest.json   format and schema version, spec (slots, embedder name and fingerprint,
                    tokenizer, BM25 parameters and n-grams, window size, lexical engine), the
                    committed generation, each retriever's state, document count, timings,
                    the sha256 of its immutable files
    docs.sqlite     retrieval/embedded/docstore.py: n -> judgment id, summary fingerprint, indexed slot
                    texts, by generation; the pre-embedded sentences; the filter fields
                    (retrieval/embedded/facets.py, normalised when a summary is indexed)
    bm25/           retrieval/lexical/ engine over the indexed slot texts
    fulltext/       optional: the engine over the judgments' full texts (retriever "fulltext")
    dense/          retrieval/dense/store.py segments of window vectors

Each retriever is a class in retrieval/embedded/retrievers.py that creates, opens, adds to, deletes
from, commits and searches its own part; SummaryIndex loops over them.

Memory does not grow with the archive's text: building streams the summaries in batches
(`BATCH`), a search reads the parts from disk (memory-mapped) and the doc store holds only
the judgment id of each n.

Updates (`update`) cost what changed: new and changed summaries are added under new n, the
old n and removed judgments die, as one generation. The manifest naming that generation is
the commit (written to a temporary file, fsynced, renamed): an update killed at any point
leaves the previous generation's documents readable (the lexical engines' statistics may
count the unfinished documents, so scores can move a little until then), and the next
update rolls the unfinished one back and does it again. A long build commits every `COMMIT_EVERY` documents, so a killed first
build is completed, not restarted. One writer at a time: the caller holds the archive's
index lock (aqgr/archive/home.py); tantivy refuses a second writer on its own too.

`load` refuses an index built differently (IndexMismatchError naming every difference,
telling to rebuild); `check_files` (for `aqgr check`) verifies every checksum.

Importing this module loads neither torch, faiss, tantivy, sentence-transformers nor llama-index.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

import numpy as np

from aqgr.foundation.allocator import release_freed, tune_for_build
from aqgr.foundation.errors import (
    AqgrError,
    EmptyArchiveError,
    IndexMismatchError,
    IndexUnavailableError,
)
from aqgr.foundation.paths import file_sha256
from aqgr.foundation.sqlite_files import DAMAGED, reason_of
from aqgr.schemas.summary import SCHEMA_VERSION, StructuredSummary

from ..dense.cache import EmbeddingCache
from ..dense.embedders import Embedder
from ..dense.windows import EmbedsQueries, QueryVectors, embed_sentences
from ..documents import query_sentences, slot_texts, summary_fingerprint
from ..manifest import (
    MANIFEST,
    SavedManifest,
    compare,
    manifest_embedder,
    read_manifest,
    resolve_embedder,
    write_manifest,
)
from ..manifest import check_files as check_manifest_files
from ..protocol import select_retrievers
from ..spec import (
    FULLTEXT_NGRAMS,  # noqa: F401 (re-exported)
    IndexSpec,
    Progress,
)
from ..text import tokenizers
from ..types import ScoredDoc, Where, ranked
from .docstore import DocStore
from .facets import FACETS_VERSION, DocFacets, FacetReader, facets_of
from .restriction import Admitted, Restriction
from .retrievers import RETRIEVERS, BuildContext, NewDoc, Query, Retriever, retriever_kinds

# Bump on any change to the files or their meaning; an index of another version is refused.
# 2: optional full-text BM25 (fulltext.npz / fulltext.vocab.json), listed in "retrievers";
#    optional pre-embedded sentences (sentences.npz), listed in "sentences".
# 3: "ngrams" (terms, or terms and adjacent pairs, per BM25 retriever).
# 4: a directory updated in place: docs.sqlite (documents by n and generation), one folder per
#    retriever (lexical engines, dense segments), the generation committed by the manifest.
FORMAT_VERSION = 4
# Documents tokenised, embedded and written together (bounds a build's memory).
BATCH = 256
# A long build or update commits a generation every this many documents: a killed run loses at
# most this much work, and each commit costs a dense segment and a lexical commit.
COMMIT_EVERY = 20_000
# A retriever is asked for this many more results than wanted, so that n which are no longer
# live (hidden until compaction) and ties at the cut (ordered by the id hash here, never by the
# engine's insertion order) do not shorten or decide a run.
OVERFETCH = 16


class _SentenceVectors(Mapping):
    """The pre-embedded sentences of docs.sqlite as a read-only mapping text -> vector
    (`QueryVectors.known`); looked up one by one, never loaded whole."""

    def __init__(self, registry: DocStore):
        self._registry = registry

    def get(self, text, default=None):
        return self._registry.sentence_vectors([text]).get(text, default)

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of those `texts` that have one, in one look-up."""
        return self._registry.sentence_vectors(texts)

    def __getitem__(self, text):
        found = self.get(text)
        if found is None:
            raise KeyError(text)
        return found

    def __contains__(self, text) -> bool:
        return self.get(text) is not None

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return self._registry.count_sentences()


class LazyIdf(Mapping):
    """A smooth, non-negative idf, log(1 + (N - df + 0.5) / (df + 0.5)), of the summary BM25's
    terms, looked up in the engine term by term (memoised) rather than held for the whole
    vocabulary. Iterating it is not offered (a million judgments have millions of terms)."""

    def __init__(self, df: Callable[[str], int], n_docs: int):
        self._df, self._n = df, n_docs
        self._memo: dict[str, float] = {}

    def get(self, term, default=None):
        value = self._memo.get(term)
        if value is None:
            df = self._df(term)
            if df <= 0:
                return default
            value = self._memo[term] = float(np.log1p((self._n - df + 0.5) / (df + 0.5)))
        return value

    def __getitem__(self, term):
        value = self.get(term)
        if value is None:
            raise KeyError(term)
        return value

    def __contains__(self, term) -> bool:
        return self.get(term) is not None

    def __iter__(self):
        raise TypeError("the idf of an index is looked up term by term, not listed")

    def __len__(self) -> int:
        raise TypeError("the idf of an index is looked up term by term, not counted")


class SummaryIndex(EmbedsQueries, SavedManifest):
    """The retrievers of retrieval/embedded/retrievers.py (bm25, dense, fulltext when made with full
    texts) over the same documents (one per summary), in one directory."""

    backend: ClassVar[str] = "embedded.v1"
    needs_uri: ClassVar[bool] = False  # the index lives in its directory (retrieval/backends.py)
    takes_full_texts: ClassVar[bool] = True  # made with full texts, it has the optional "fulltext" retriever
    serves: ClassVar[tuple[str, ...]] = RETRIEVERS  # every registered retriever (an index has those it was made with)

    def __init__(
        self,
        directory: Path,
        manifest: dict,
        spec: IndexSpec,
        embedder: Embedder,
        registry: DocStore,
        parts: Mapping[str, Retriever],
        *,
        temporary: bool = False,
    ):
        self.directory = Path(directory)
        self.spec = spec
        self._manifest = manifest
        self._embedder = embedder
        self._registry = registry
        self._parts = {name: parts[name] for name in RETRIEVERS if name in parts}
        self._tokenizer = tokenizers.create(spec.tokenizer)
        self._queries = QueryVectors(embedder, spec.window_chars, _SentenceVectors(registry))
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.directory), True) if temporary else None
        self._fingerprints: dict[str, str] | None = None  # judgment id -> fingerprint, read on first need in an update
        self._refresh()

    def _refresh(self) -> None:
        self._ids, self._n_of = self._registry.live(self._manifest["generation"])
        self._doc_ids = tuple(d for d in self._ids if d is not None)
        self._live = np.fromiter((d is not None for d in self._ids), dtype=bool, count=len(self._ids))
        self._idf = LazyIdf(self._parts["bm25"].doc_freq, len(self._n_of))
        self._facets = FacetReader(self._registry, self._live, len(self._n_of))

    # --- making -------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: str | Path | None = None,
        spec: IndexSpec | None = None,
        *,
        embedder: Embedder | None = None,
        full_texts: bool = False,
        profile: str | None = None,
    ) -> "SummaryIndex":
        """A new, empty index in `directory` (a new or empty directory; None: a temporary one,
        removed with the object unless `save` moves it elsewhere). `full_texts`: it will have the
        full-text retriever (its documents then come with their judgments' texts). `profile`: the
        search profile the manifest records (retrieval/spec.py; None: decided by size when searched)."""
        spec = spec or IndexSpec()
        temporary = directory is None
        path = Path(tempfile.mkdtemp(prefix="aqgr-index-")) if temporary else Path(directory)
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise FileExistsError(f"{path} exists and is not empty: choose another directory")
        path.mkdir(parents=True, exist_ok=True)
        embedder = resolve_embedder(spec, embedder)
        registry = DocStore(path, create=True)
        registry.mark_facets(FACETS_VERSION)
        parts = {}
        for name in RETRIEVERS:
            part = retriever_kinds.get(name).create(path, spec, full_texts=full_texts, embedder=embedder)
            if part is not None:
                parts[name] = part
        manifest = {
            "backend": cls.backend,
            "format_version": FORMAT_VERSION,
            "schema_version": SCHEMA_VERSION,
            **spec.describe(),
            "embedder": {"name": embedder.name, "fingerprint": embedder.fingerprint, "dim": embedder.dim},
            "generation": 0,
            "retrievers": {name: part.commit() for name, part in parts.items()},
            "n_docs": 0,
            "created_at": datetime.now(UTC).isoformat(),
        }
        if profile is not None:
            manifest["search_profile"] = profile
        manifest["sha256"] = {}
        write_manifest(path / MANIFEST, manifest)
        return cls(path, manifest, spec, embedder, registry, parts, temporary=temporary)

    @classmethod
    def build(
        cls,
        summaries: Iterable[StructuredSummary],
        spec: IndexSpec | None = None,
        *,
        cache: EmbeddingCache | None = None,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        full_texts: Mapping[str, str] | Callable[[str], str | None] | None = None,
        directory: str | Path | None = None,
        total: int | None = None,
        profile: str | None = None,
    ) -> "SummaryIndex":
        """Index `summaries` (one document each, streamed) as `spec` says (default: IndexSpec()).

        `cache` reuses vectors of unchanged windows; `embedder` overrides the registry's
        instance (it must carry the spec's embedder name); `progress(stage, done, total)` is
        called with stage "index" per batch (and the retrievers' own stages). `full_texts`
        (judgment id -> its whole text, a mapping or a function) adds the "fulltext" retriever:
        BM25 over the judgments themselves, for recall beyond what the summaries kept.
        `directory`: where (default: a temporary directory, see `create`); `total`: the number
        of summaries, for progress; `profile`: the search profile to record (see `create`).
        Raises EmptyArchiveError for no summaries."""
        index = cls.create(directory, spec, embedder=embedder, full_texts=full_texts is not None, profile=profile)
        try:
            index.update(summaries, cache=cache, progress=progress, full_texts=full_texts, total=total)
            if not len(index):
                raise EmptyArchiveError("index")
        except BaseException:  # what was committed stays (a directory given is completed by the next update)
            index.close()
            raise
        return index

    @classmethod
    def from_texts(
        cls,
        doc_ids: Sequence[str],
        texts: Mapping[str, Mapping[str, str]],
        spec: IndexSpec | None = None,
        *,
        cache: EmbeddingCache | None = None,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        full_texts: Mapping[str, str] | None = None,
        sentences: Sequence[str] | None = None,
        summarizer: str | None = None,
        directory: str | Path | None = None,
    ) -> "SummaryIndex":
        """Index documents given directly as field texts (`texts[doc_id] = {field: text}`), for
        documents that have no structured summary (statutes: title + description).

        The fields are indexed as given; `spec` supplies everything else. `full_texts` adds the
        "fulltext" retriever; `sentences` are short texts embedded now so that `embed_query` of
        any of them costs no model call; `summarizer` is recorded in the manifest."""
        doc_ids = list(doc_ids)
        if not doc_ids:
            raise EmptyArchiveError("index")
        missing = [d for d in doc_ids if d not in texts]
        if missing:
            raise ValueError(f"no texts for {len(missing)} document(s), e.g. {missing[0]}")
        if len(set(doc_ids)) != len(doc_ids):
            seen: set[str] = set()
            dupes = sorted({d for d in doc_ids if d in seen or seen.add(d)})
            raise ValueError(f"judgment ids must be unique; repeated: {', '.join(dupes[:10])}")
        index = cls.create(directory, spec, embedder=embedder, full_texts=full_texts is not None)
        try:
            docs = ((d, dict(texts[d]), _texts_fingerprint(texts[d]), (), None) for d in doc_ids)
            index._apply(
                docs,
                (),
                cache=cache,
                progress=progress,
                full_texts=full_texts,
                total=len(doc_ids),
                sentences=sentences or (),
                summarizer=summarizer,
            )
        except BaseException:
            index.close()
            raise
        return index

    # --- updating -------------------------------------------------------------------------

    def update(
        self,
        added: Iterable[StructuredSummary],
        removed: Iterable[str] = (),
        *,
        cache: EmbeddingCache | None = None,
        progress: Progress | None = None,
        full_texts: Mapping[str, str] | Callable[[str], str | None] | None = None,
        total: int | None = None,
    ) -> dict:
        """Add the summaries (one whose judgment is already indexed replaces it) and drop `removed`
        (ids not indexed are ignored), in place; returns {"added", "replaced", "removed"}.

        Cost follows the change, not the archive. Crash-safe (see the module): committed every
        `COMMIT_EVERY` documents and at the end. `full_texts` gives the judgments' texts to an
        index with the full-text retriever; `total`: how many summaries come, for progress."""
        engines: set[str] = set()

        def docs() -> Iterator[tuple[str, dict[str, str], str, Sequence[str], DocFacets | None]]:
            for summary in added:
                engines.add(summary.provenance.engine)
                yield (
                    summary.judgment_id,
                    slot_texts(summary, self.spec.slots),
                    summary_fingerprint(summary),
                    query_sentences(summary.issues),
                    facets_of(summary),
                )

        return self._apply(
            docs(), removed, cache=cache, progress=progress, full_texts=full_texts, total=total, engines=engines
        )

    def _apply(
        self,
        docs: Iterable[tuple[str, dict[str, str], str, Sequence[str], DocFacets | None]],
        removed: Iterable[str],
        *,
        cache,
        progress,
        full_texts,
        total,
        sentences: Sequence[str] = (),
        summarizer: str | None = None,
        engines: set[str] | None = None,
    ) -> dict:
        """Stage, index and commit documents given as (id, slot texts, fingerprint, issue sentences,
        filter fields or None);
        `engines` collects the summarizers seen (for the manifest), `summarizer` names it outright."""
        report = progress or (lambda stage, done, total: None)
        tune_for_build()  # large blocks mapped on their own: a long build's heap does not keep what it freed
        self._recover()
        context = BuildContext(self.spec, self._tokenizer, self._embedder, cache, lambda *a: None)
        text_of = full_texts.get if isinstance(full_texts, Mapping) else full_texts
        counts = {"added": 0, "replaced": 0, "removed": 0}
        asked_removed = list(dict.fromkeys(removed))
        removed = [r for r in asked_removed if r in self._n_of]
        pending: list[tuple[str, dict[str, str], str, Sequence[str], DocFacets | None]] = []
        staged_ids: set[str] = set()
        generation = self._manifest["generation"] + 1
        next_n = max(self._registry.next_n(), len(self._ids))
        since_commit = done = 0
        started = time.perf_counter()

        def flush() -> None:
            nonlocal next_n, since_commit
            if not pending:
                return
            rows = []
            new_docs = []
            facets = {}
            for doc_id, texts, fingerprint, _, doc_facets in pending:
                rows.append((next_n, doc_id, fingerprint, texts))
                if doc_facets is not None:
                    facets[next_n] = (doc_facets.terms, doc_facets.decided)
                full = (text_of(doc_id) or "") if (text_of is not None and "fulltext" in self._parts) else None
                new_docs.append(NewDoc(next_n, doc_id, texts, full, doc_facets))
                next_n += 1
            counts["replaced"] += sum(1 for doc_id, *_ in pending if doc_id in self._n_of)
            counts["added"] += sum(1 for doc_id, *_ in pending if doc_id not in self._n_of)
            self._registry.stage(generation, rows, (), facets)
            for part in self._parts.values():
                part.add(new_docs, context)
            self._embed_sentences([s for _, _, _, issues, _ in pending for s in issues], cache, context)
            since_commit += len(pending)
            pending.clear()

        refused = set(asked_removed)
        try:
            for doc in docs:
                if doc[0] in staged_ids or doc[0] in refused:
                    raise ValueError(
                        f"judgment {doc[0]} is given twice (added twice, or added and removed) in one update: "
                        "nothing was changed"
                    )
                staged_ids.add(doc[0])
                if self._n_of.get(doc[0]) is not None and self._registry_fingerprint(doc[0]) == doc[2]:
                    done += 1  # unchanged: nothing to do
                    continue
                pending.append(doc)
                done += 1
                if len(pending) >= BATCH:
                    flush()
                    report("index", done, total or done)
                if since_commit >= COMMIT_EVERY:
                    self._commit(generation, context, started, summarizer, engines)
                    generation += 1
                    since_commit = 0
            flush()
        except BaseException:
            for part in self._parts.values():  # what this generation buffered goes; staged rows roll back next time
                part.rollback()
            raise
        if sentences:
            self._embed_sentences(list(sentences), cache, context)
        report("index", done, total or done)
        if removed:
            self._registry.stage(generation, [], removed)
            counts["removed"] = len(removed)
        if since_commit or removed or sentences or self._manifest["generation"] == 0:
            try:
                self._commit(generation, context, started, summarizer, engines)
            except BaseException:  # a part that failed to commit (a full disk): the others' writers are let go
                for part in self._parts.values():
                    part.rollback()
                raise
            self._compact(context, started)
        return counts

    def _registry_fingerprint(self, doc_id: str) -> str | None:
        if self._fingerprints is None:
            self._fingerprints = self._registry.fingerprints(self._manifest["generation"])
        return self._fingerprints.get(doc_id)

    def _embed_sentences(self, sentences: Sequence[str], cache, context: BuildContext) -> None:
        todo = [t for t in dict.fromkeys(" ".join(s.split()) for s in sentences) if t]
        if not todo:
            return
        known = self._registry.has_sentences(todo)
        todo = [t for t in todo if t not in known]
        start = time.perf_counter()
        stored, n_embedded = embed_sentences(self._embedder, todo, self.spec.window_chars, cache)
        if stored is not None:
            self._registry.add_sentences(*stored)
            context.count("embedded_sentences", n_embedded)
        context.timed("sentences", start)

    def _commit(
        self, generation: int, context: BuildContext, started: float, summarizer: str | None, engines: set[str] | None
    ) -> None:
        """Commit `generation`: the parts first (durable), then the manifest naming it, then the dead
        rows of it are purged from the doc store and the parts (idempotent; redone after a crash)."""
        states = {name: part.commit() for name, part in self._parts.items()}
        manifest = dict(
            self._manifest, generation=generation, retrievers=states, updated_at=datetime.now(UTC).isoformat()
        )
        manifest["summarizer"] = _summarizer_after(self._manifest, summarizer, engines or set())
        if manifest["summarizer"] is None:
            del manifest["summarizer"]
        manifest["n_docs"] = self._registry.count_live(generation)
        manifest["n_windows"] = states.get("dense", {}).get("n_windows", 0)
        manifest["n_sentences"] = self._registry.count_sentences()
        manifest["last_update"] = {
            "seconds": {
                stage: round(s, 4) for stage, s in {**context.seconds, "total": time.perf_counter() - started}.items()
            },
            **context.facts,
        }
        known = self._manifest.get("sha256", {})  # the parts' files are immutable: a recorded digest stands
        manifest["sha256"] = {
            name: known.get(name) or file_sha256(self.directory / name)
            for part in self._parts.values()
            for name in part.files()
        }
        write_manifest(self.directory / MANIFEST, manifest)
        self._manifest = manifest
        self._purge()
        self._fingerprints = None
        self._refresh()
        release_freed()  # what the generation's buffers held goes back to the system

    def _purge(self) -> None:
        """Delete from the parts what the committed generation killed, and their files no manifest names."""
        dead = self._registry.purge(self._manifest["generation"])
        if dead:
            for part in self._parts.values():
                part.delete(dead)
            for part in self._parts.values():
                part.commit()
        for part in self._parts.values():
            part.cleanup()

    def _compact(self, context: BuildContext, started: float) -> None:
        """Let each part drop dead documents when it asks to (dense: many small segments or many dead
        windows), then commit a generation naming the new files (the old ones go after it)."""
        live = self._live

        def is_live(ns: np.ndarray) -> np.ndarray:
            ns = np.asarray(ns, dtype=np.int64)
            inside = (ns >= 0) & (ns < len(live))
            out = np.zeros(len(ns), dtype=bool)
            out[inside] = live[ns[inside]]
            return out

        if any([part.compact(is_live) for part in self._parts.values()]):
            self._commit(self._manifest["generation"] + 1, context, started, None, None)

    def _recover(self) -> None:
        """Roll back a generation that was staged but never committed (an update that stopped),
        and finish purging the last committed one."""
        unfinished = self._registry.rollback(self._manifest["generation"])
        if unfinished:
            for part in self._parts.values():
                part.delete(unfinished)
                part.commit()
        self._purge()

    def fingerprints(self) -> dict[str, str]:
        """judgment id -> fingerprint of the summary indexed for it (retrieval/documents.py)."""
        return self._registry.fingerprints(self._manifest["generation"])

    # --- saving and loading -------------------------------------------------------------

    def save(self, directory: str | Path, *, move: bool = False) -> Path:
        """Put the index at `directory`: nothing to do where it already lives (updates are committed
        in place); elsewhere it is copied (or, with `move`, renamed: a rebuild made beside the old
        index) next to the target and swapped in atomically, replacing an index there (never a
        folder that is not one). With `move` the object then reads from `directory`."""
        target = Path(directory)
        if target.exists() and target.resolve() == self.directory.resolve():
            return target
        if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / MANIFEST).exists())):
            raise FileExistsError(f"{target} exists and is not an aqgr index: choose another directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        tag = uuid.uuid4().hex[:12]
        tmp = target.parent / f".{target.name}.tmp-{tag}"
        old = target.parent / f".{target.name}.old-{tag}"
        self._registry.checkpoint()
        if move:
            self._close_files()
            os.replace(self.directory, tmp)
        else:
            try:
                shutil.copytree(self.directory, tmp, ignore=shutil.ignore_patterns("*.lock"))
            except shutil.Error as exc:  # every file that failed, errno lost: the first, as the OSError it was
                shutil.rmtree(tmp, ignore_errors=True)
                raise _copy_error(exc) from None
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        try:
            if target.exists():
                os.replace(target, old)
                try:
                    os.replace(tmp, target)
                except BaseException:
                    os.replace(old, target)
                    raise
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, target)
        except BaseException:
            if move:
                os.replace(tmp, self.directory)
                self._reopen(self.directory)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        if move:
            if self._finalizer is not None:
                self._finalizer.detach()
                self._finalizer = None
            self._reopen(target)
        return target

    def _close_files(self) -> None:
        for part in self._parts.values():
            part.close()
        self._registry.close()

    def _reopen(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._registry = DocStore(self.directory)
        states = self._manifest["retrievers"]
        self._parts = {
            name: retriever_kinds.get(name).open(self.directory, self.spec, states[name]) for name in self._parts
        }
        self._queries = QueryVectors(self._embedder, self.spec.window_chars, _SentenceVectors(self._registry))
        self._refresh()

    @classmethod
    def load(
        cls, directory: str | Path, expect: IndexSpec | None = None, *, embedder: Embedder | None = None
    ) -> "SummaryIndex":
        """Open a saved index; `expect` (optional) is the spec it must have been built with.

        Raises NoIndexError when there is none, IndexMismatchError (listing every difference)
        when it was built differently or its files are missing or of another size."""
        path = Path(directory)
        manifest, (spec, generation) = read_manifest(
            path, FORMAT_VERSION, lambda m: (IndexSpec.from_manifest(m), int(m["generation"]))
        )
        differences = compare(manifest, spec, expect, FORMAT_VERSION)
        differences += check_manifest_files(path, manifest, digests=False)
        embedder, problem = manifest_embedder(manifest, spec, embedder)
        if problem:
            differences.append(problem)
        if differences:
            raise IndexMismatchError(str(path), differences)
        recorded = manifest.get("retrievers", {})
        try:
            registry = DocStore(path)
            older = registry.outdated()  # made by an older aqgr: refused, not brought up to date
            parts = {
                name: retriever_kinds.get(name).open(path, spec, recorded[name])
                for name in RETRIEVERS
                if name in recorded and not older
            }
        except Exception as exc:
            raise unopenable(path, exc) from None
        if older:
            registry.close()
            raise IndexMismatchError(str(path), [f"{'; '.join(older)}: `aqgr index --rebuild` makes it anew"])
        missing = [name for name in RETRIEVERS if not retriever_kinds.get(name).optional and name not in parts]
        if missing:
            raise IndexMismatchError(str(path), [f"the manifest lists no {', '.join(missing)} retriever"])
        index = cls(path, manifest, spec, embedder, registry, parts)
        if len(index) != manifest.get("n_docs") or generation < 0:
            raise IndexMismatchError(
                str(path),
                [f"the documents file holds {len(index)} live documents, the manifest {manifest.get('n_docs')}"],
            )
        return index

    def check_files(self) -> list[str]:
        """Every checksum of this index's files and the doc store's own check ([] when sound)."""
        return check_files(self.directory)

    @staticmethod
    def saved_ids(directory: str | Path) -> list[str]:
        """The judgment ids a saved index holds, read from its doc store without opening the rest."""
        path = Path(directory)
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        registry = DocStore(path, read_only=True)
        try:
            return [d for d in registry.live(int(manifest["generation"]))[0] if d is not None]
        finally:
            registry.close()

    @staticmethod
    def saved_fingerprints(directory: str | Path) -> dict[str, str]:
        """judgment id -> fingerprint, as `fingerprints()`, of a saved index, from its doc store alone."""
        path = Path(directory)
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        registry = DocStore(path, read_only=True)
        try:
            return registry.fingerprints(int(manifest["generation"]))
        finally:
            registry.close()

    @staticmethod
    def saved_outdated(directory: str | Path) -> list[str]:
        """What an older aqgr left out of the index saved in `directory`, for which `load` refuses it
        ([] when nothing; also when its doc store cannot be read: `load` says what is wrong then)."""
        try:
            registry = DocStore(directory, read_only=True)
        except (OSError, sqlite3.Error):
            return []
        try:
            return registry.outdated()
        except sqlite3.Error:
            return []
        finally:
            registry.close()

    def close(self) -> None:
        self._close_files()
        if self._finalizer is not None:
            self._finalizer()

    # --- reading ------------------------------------------------------------------------

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """The indexed judgment ids, in the order they were added."""
        return self._doc_ids

    @property
    def location(self) -> str:
        return str(self.directory)

    @property
    def facets(self) -> FacetReader:
        """The documents' filter fields (retrieval/embedded/facets.py): `select(filters)`, `counts(ns)`."""
        return self._facets

    def ids_of(self, ns) -> list[str]:
        """The judgment ids of live document numbers (a facet selection)."""
        return [self._ids[int(n)] for n in ns]

    def ns_of(self, ids) -> list[int]:
        """The document numbers of indexed judgment ids (those not indexed are left out)."""
        return [self._n_of[d] for d in ids if d in self._n_of]

    @property
    def retrievers(self) -> tuple[str, ...]:
        """The retrievers this index has (an optional one, "fulltext", only when it was made so)."""
        return tuple(self._parts)

    @property
    def tokenizer(self):
        """The BM25 tokenizer (`spec.tokenizer`): text -> list of terms."""
        return self._tokenizer

    def idf(self) -> Mapping[str, float]:
        """A smooth, non-negative idf of the indexed summary terms: log(1 + (N - df + 0.5) / (df + 0.5)),
        looked up term by term (`LazyIdf`).

        (BM25's own idf is floored and can be 0 for a term in half the documents; this one
        orders terms by rarity everywhere, which is what term weighting outside BM25 scoring
        needs.) The document frequencies are the summary BM25's."""
        return self._idf

    def __len__(self) -> int:
        return len(self._n_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._n_of

    def texts(self, doc_id: str) -> dict[str, str]:
        """The indexed slot texts of one document (KeyError if it is not in the index)."""
        return self._registry.texts(self._n_of[doc_id])

    def document_text(self, doc_id: str) -> str:
        """The indexed text of one document: non-empty slot texts joined by blank lines."""
        return "\n\n".join(t for t in self.texts(doc_id).values() if t)

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
    ) -> dict[str, list[ScoredDoc]]:
        """Top-k documents per retriever (default: every one the index has), keeping only
        `restrict` and dropping `exclude`, both applied inside each retriever's search.

        bm25 and fulltext return only documents sharing a query term; dense returns documents
        by their best window's cosine similarity to the query, or to `vector` when given.
        `max_df`: retriever name -> share: that BM25 retriever leaves out the query's terms held
        by more than the share of its judgments (retrievers.py `without_common`)."""
        absent = {
            name: retriever_kinds.get(name).absent
            for name in RETRIEVERS
            if name not in self._parts and retriever_kinds.get(name).optional
        }
        names = select_retrievers(self.retrievers, retrievers, k, absent)
        drop = {self._n_of[d] for d in exclude if d in self._n_of} if exclude else set()
        only = None if restrict is None else self._restriction(restrict, drop)
        empty = k == 0 or not self._n_of or (only is not None and not len(only))
        asked = Query(query, self._tokenizer, lambda: self.embed_query(query), vector, max_df)
        return {name: [] if empty else self._run(self._parts[name], asked, k, only, drop) for name in names}

    def rescore(
        self,
        query: str,
        base: str,
        runs: Mapping[str, Sequence[ScoredDoc]],
        *,
        max_df: Mapping[str, float] | None = None,
    ) -> dict[str, list[ScoredDoc]]:
        """The judgments of each of `runs` (retriever -> the run `retrieve` gave for `base`) ranked
        by their scores for `query` (base's text and more: a question followed by the facts),
        for the retrievers that can re-score (the BM25 ones: `Retriever.rescore`); the others
        are left out, for the caller to read. A run keeps its judgments, no more: one its base
        left out stays out, so this is a re-ranking of base's candidates, not a search.
        `max_df`: as `retrieve`'s, and as base's runs were read."""
        asked = Query(query, self._tokenizer, lambda: None, max_df=max_df)
        given = Query(base, self._tokenizer, lambda: None, max_df=max_df)
        found: dict[str, list[ScoredDoc]] = {}
        for name, run in runs.items():
            part = self._parts.get(name)
            numbered = [(self._n_of[d.doc_id], d.score) for d in run if d.doc_id in self._n_of]
            scored = part.rescore(asked, given, numbered) if part is not None and len(numbered) == len(run) else None
            if scored is not None:
                found[name] = ranked((self._ids[n], score) for n, score in scored)
        return found

    def admitted(self, ns, where: Where | None = None) -> Admitted:
        """The judgments of live document numbers `ns` (a facet selection, sorted) as a set of ids
        that this generation's `retrieve` reads as the numbers they are; `where`, the filter that
        selected them, is applied inside the search by the parts that can."""
        return Admitted(ns, self._ids, self._n_of, where)

    def _restriction(self, restrict, drop: set[int]) -> Restriction:
        """`restrict` as the document numbers a search may return, less `drop`."""
        if isinstance(restrict, Admitted) and restrict.made_by(self._ids):
            ns, mask, where = restrict.ns, restrict.mask, restrict.where
        else:
            ns = np.unique(np.fromiter((self._n_of[d] for d in restrict if d in self._n_of), dtype=np.int64))
            mask, where = None, None
        if drop:
            ns, mask = ns[~np.isin(ns, list(drop))], None
        return Restriction(ns, len(self._ids), len(self._n_of), mask, where)

    def _run(self, part: Retriever, query: Query, k: int, only: Restriction | None, drop: set[int]) -> list[ScoredDoc]:
        """A part's best k live documents, ordered by (-score, id hash) (types.ranked): read
        OVERFETCH deeper than k, and deeper still while dead or dropped documents fill it.

        `only` is applied inside the part's search: as its filter (`where`) by a part whose
        documents carry their filter fields, else by naming its documents; or, when it is broad
        and naming them costs more, after an unrestricted search read deeper (retrieval/embedded/restriction.py)."""
        want = k + OVERFETCH + len(drop)

        ids, size = self._ids, len(self._ids)  # ids[n] is None where n is not live

        def kept_of(found) -> list[tuple[str, float]]:
            if not drop and only is None:  # most searches: only the dead are left out
                return [(doc_id, score) for n, score in found if n < size and (doc_id := ids[n]) is not None]
            return [
                (doc_id, score)
                for n, score in found
                if n < size and (doc_id := ids[n]) is not None and n not in drop and (only is None or only.admits(n))
            ]

        if only is not None and only.where is not None and part.filters_inside:
            while True:
                found = part.search(query, want, where=only.where)
                kept = kept_of(found)
                if len(found) < want or len(kept) >= k + OVERFETCH:
                    return ranked(kept, k)
                want *= 4
        depth = None if only is None or part.names_cheaply else only.after(want)
        while depth is not None:
            found = part.search(query, depth)
            kept = kept_of(found)
            if len(found) < depth or len(kept) >= k + OVERFETCH:
                return ranked(kept, k)
            depth = only.after(want, held=len(kept), read=depth)
        named = None if only is None else only.ns
        while True:
            found = part.search(query, want, only=named)
            kept = kept_of(found)
            if len(found) < want or len(kept) >= k + OVERFETCH:
                return ranked(kept, k)
            want *= 4


def _summarizer_after(manifest: dict, named: str | None, engines: set[str]) -> str | None:
    """The summarizer the manifest records after an update: `named` when given; else the one
    engine of a first build's summaries, kept while updates bring only its summaries, and
    None (mixed) once another engine's arrive."""
    if named is not None:
        return named
    recorded = manifest.get("summarizer")
    if manifest["generation"] == 0:
        return engines.pop() if len(engines) == 1 else None
    if recorded is None or not engines or engines == {recorded}:
        return recorded
    return None


def _texts_fingerprint(texts: Mapping[str, str]) -> str:
    return hashlib.sha256(
        json.dumps(dict(texts), sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    ).hexdigest()[:20]


def check_files(directory: str | Path) -> list[str]:
    """Every checksum of a saved embedded index, and the doc store's own check ([] when sound)."""
    path = Path(directory)
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"manifest.json is unreadable ({exc})"]
    problems = check_manifest_files(path, manifest)
    try:
        registry = DocStore(path, read_only=True)
        try:
            problems += [f"docs.sqlite: {p}" for p in registry.quick_check()]
        finally:
            registry.close()
    except Exception as exc:
        problems.append(f"docs.sqlite is unreadable ({type(exc).__name__}: {exc})")
    return problems


LEFTOVER_KINDS = (
    "rebuild",
    "tmp",
    "old",
)  # `.index.rebuild-*` (a rebuild), `.index.tmp-*` (a save), `.index.old-*` (a swap)


def leftovers(index_dir: str | Path) -> list[Path]:
    """What a killed rebuild, save or swap left beside the index folder (`.NAME.rebuild-*`, ...)."""
    index_dir = Path(index_dir)
    parent = index_dir.parent
    if not parent.is_dir():
        return []
    return sorted(p for kind in LEFTOVER_KINDS for p in parent.glob(f".{index_dir.name}.{kind}-*"))


def clean_leftovers(index_dir: str | Path) -> list[Path]:
    """Remove what a killed rebuild or save left beside the index (only by the one writer: the
    caller holds the archive's index lock); a swap stopped between its two renames is finished."""
    index_dir = Path(index_dir)
    removed = []
    for leftover in leftovers(index_dir):
        if not index_dir.exists() and leftover.name.startswith(f".{index_dir.name}.old-"):
            os.replace(leftover, index_dir)  # a swap that stopped between its two renames
            continue
        shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


def unopenable(path: Path, exc: BaseException) -> AqgrError:
    """The error for index files that would not open: IndexUnavailableError when the cause is outside
    them (a full disk, a read-only folder, permissions: see aqgr/foundation/sqlite_files.py), else
    IndexMismatchError (damaged, missing, of another make: rebuilt by `aqgr index`)."""
    if isinstance(exc, sqlite3.Error | PermissionError) or (
        isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError | IsADirectoryError | NotADirectoryError)
    ):
        reason = reason_of(exc, path / "docs.sqlite")
        if reason != DAMAGED:
            return IndexUnavailableError(str(path), reason, str(exc) or type(exc).__name__)
    return IndexMismatchError(str(path), [f"index files unreadable ({type(exc).__name__}: {exc})"])


def _copy_error(exc: shutil.Error) -> OSError:
    """The first failure of a `shutil.copytree` (which goes on after one and lists them all as text) as
    an OSError with its errno, so that a full disk is told as one."""
    failures = exc.args[0] if exc.args and isinstance(exc.args[0], list) else []
    for failure in failures:
        if isinstance(failure, tuple) and len(failure) == 3:
            found = re.search(r"\[Errno (\d+)\] ([^:]*)", str(failure[2]))
            if found:
                return OSError(int(found.group(1)), found.group(2), str(failure[1]))
    return OSError(errno.EIO, str(exc)[:500])
