"""The public front door: an archive of judgments, their summaries, an index, and search.

    archive = aqgr.Archive("~/my-archive")
    archive.summarize(["judgments/"])
    archive.build_index()
    result = archive.search("The deceased was found ... ")

The archive lives in a home directory: the database (`aqgr.db`, or any URL), the saved
index (`index/`) and caches (`cache/`: embeddings). Nothing is downloaded, ever: the
offline engines and the packaged embedding model are the defaults.
"""

from __future__ import annotations

import errno
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from aqgr.archive.batch import BatchReport, Outcome, Progress, summarize_files
from aqgr.archive.linking import CITATIONS_FILE
from aqgr.archive.store import Store, SummaryReader
from aqgr.foundation.errors import (
    EmptyArchiveError,
    IndexMismatchError,
    IndexUnavailableError,
    NoCitationGraphError,
    NoIndexError,
    NoStatutesError,
    StoreError,
)
from aqgr.foundation.inputs import many
from aqgr.pipeline.config import ArchiveOptions, SearchOptions, Settings
from aqgr.pipeline.explain import explainers
from aqgr.pipeline.questions import question_generators
from aqgr.pipeline.search import Searcher
from aqgr.retrieval.citations.treatment import treatment_engines
from aqgr.retrieval.protocol import Index
from aqgr.retrieval.spec import IndexSpec, profile_for
from aqgr.schemas.filters import Filters
from aqgr.schemas.results import CandidateQuestion, SearchResult
from aqgr.schemas.statutes import StatuteResult
from aqgr.schemas.summary import StructuredSummary
from aqgr.summarizer.base import SummarizerEngine, summarizers


@contextmanager
def _write_errors(where: Path, *, before: str | None = None) -> Iterator[None]:
    """A full disk, a read-only home, a file that cannot be written, met inside the block, as WriteError
    (`before`: what was done by then, said instead of "unchanged")."""
    from aqgr.foundation.errors import WriteError
    from aqgr.foundation.sqlite_files import as_os_error

    try:
        yield
    except OSError as exc:
        raise WriteError(str(exc.filename or where), exc, before=before) from None
    except sqlite3.Error as exc:  # the embedding cache
        raise WriteError(str(where), as_os_error(exc, where), before=before) from None


def _said(done: str | None, steps: list[str]) -> str | None:
    """What an index update that stopped had changed (`steps`, from `Archive._build_index`), after what
    its caller had (`done`); None: nothing (WriteError then says "unchanged")."""
    if "index" in steps:
        said = (
            "the index and the citation links were updated; the statute links were not: run `aqgr index` again "
            "once there is space"
        )
    elif "citations" in steps:
        said = (
            "the index is unchanged; the citation links were updated first, and searches leave them out until "
            "the index matches them again: run `aqgr index` again once there is space (it completes what is left)"
        )
    else:
        said = None if done is None else "the index and the citation links are unchanged"
    return "; ".join(part for part in (done, said) if part) or None


if TYPE_CHECKING:
    from aqgr.llm.client import LLMClient


class Archive:
    """Judgments, summaries, index and question-guided search under one home directory."""

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        settings: Settings | None = None,
        llm: LLMClient | None = None,
        **options: Unpack[ArchiveOptions],
    ):
        """`settings` (a Settings) replaces every other option. Otherwise the options of
        `Settings.resolve` (ArchiveOptions): the database (default: SQLite in the home), the engines
        by name (default: the offline ones, llm.v1 when a provider is set), how to build the index
        (index=IndexSpec), how to search (search=SearchOptions), and the model provider as keywords
        (provider="openai.v1", model=..., base_url=..., max_output_tokens=..., ...).
        `llm`: a ready LLMClient to use instead of one built from the provider settings."""
        self.settings = settings or Settings.resolve(home, **options)
        self._db: Store | None = None
        self._loaded: Searcher | None = None
        self._statutes = None  # the statute collection, kept so its loaded index is reused
        self._lock = threading.Lock()
        self._llm = llm
        self._llm_lock = threading.Lock()

    # -- storage -----------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.settings.home

    def close(self) -> None:
        """Release the database connections and the files of the index loaded for `search()` (the
        archive opens them again if used later; a searcher from `open_searcher()` is its caller's)."""
        with self._lock:
            loaded, self._loaded = self._loaded, None
        for index in (
            loaded.index if loaded is not None else None,
            self._statutes.release() if self._statutes is not None else None,
        ):
            if index is not None:
                index.close()
        if self._db is not None:
            self._db.close()

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def _store(self) -> Store:
        """The archive database (opened on first use)."""
        if self._db is None:
            if self.settings.database_url is None:  # the SQLite file lives in the home
                try:
                    self.home.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(
                        "read_only" if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) else "unavailable",
                        f"cannot create the archive home {self.home}: {exc.strerror or exc}",
                    ) from None
            self._db = Store(self.settings.db_url)
        return self._db

    def _summarizer(self) -> SummarizerEngine:
        return self._create(summarizers, self.settings.summarizer)

    # -- model provider ----------------------------------------------------
    def _llm_client(self):
        """The model client of the llm.v1 engines (aqgr.llm.client.LLMClient): the configured
        provider, the reply cache in the home, one token ledger for this archive object.
        Raises ConfigError when no provider is configured."""
        from aqgr.foundation.errors import ConfigError
        from aqgr.llm.client import LLMClient

        with self._llm_lock:
            if self._llm is None:
                if not self.settings.llm.configured:
                    raise ConfigError(
                        "no model provider is configured: set AQGR_PROVIDER (gemini.v1, openai.v1, ...) or pass --provider"
                    )
                self._llm = LLMClient.from_config(
                    self.settings.llm, cache_path=self.settings.llm_cache_path, limiter=self._quota()
                )
            return self._llm

    def _quota(self):
        """The provider quota shared through this archive's database (every worker on it draws from
        the same buckets), or None when no requests/tokens per minute are configured."""
        config = self.settings.llm
        if not (config.requests_per_minute or config.tokens_per_minute):
            return None
        from aqgr.archive.quota import SharedQuota

        key = f"{config.provider}:{config.model_name}"
        return SharedQuota(
            self._store, key, requests_per_minute=config.requests_per_minute, tokens_per_minute=config.tokens_per_minute
        )

    def model_usage(self) -> dict[str, dict]:
        """Model calls, cache hits, retries and tokens so far, per stage (empty when no model was used)."""
        return self._llm.ledger.snapshot() if self._llm is not None else {}

    def _create(self, registry, name: str):
        """An engine by name; a factory that takes `llm=` (a model-backed engine) gets this archive's client,
        one that takes `embedder=` the index's embedder."""
        import inspect

        wanted = inspect.signature(registry.get(name)).parameters
        kwargs = {}
        if "llm" in wanted:
            kwargs["llm"] = self._llm_client()
        if "embedder" in wanted:
            kwargs["embedder"] = self._index_spec().embedder
        return registry.create(name, **kwargs)

    # -- stage 1 -----------------------------------------------------------
    def summarize(
        self,
        paths: Iterable[str | Path],
        *,
        force: bool = False,
        progress: Progress | None = None,
        workers: int = 1,
        id_from: str = "stem",
        retry_failed: bool = False,
        on_result: Callable[[Outcome], None] | None = None,
        **shared,
    ) -> BatchReport:
        """Summarise every judgment file under `paths`; failures are recorded per file, never raised.
        Resumable: rerunning skips what is done. See `aqgr.archive.batch.summarize_files` for the options
        (and `ledger`, `worker_id`, `lease_seconds`, `on_claim` for batches shared by many workers)."""
        report = summarize_files(
            paths,
            self._store,
            self._summarizer(),
            force=force,
            progress=progress,
            workers=workers,
            id_from=id_from,
            retry_failed=retry_failed,
            on_result=on_result,
            **shared,
        )
        if report.summarised:
            self._loaded = None  # the index no longer reflects the archive
        return report

    def remove(self, judgment_ids: Sequence[str]) -> list[str]:
        """Take judgments out of the archive: their text, summaries and records go from the database,
        and (when the archive has an index) their index entries and citation links with them, by an
        update of the index that costs only the removal. Returns the ids that were in the archive;
        unknown ids are ignored. A `str` is refused (a TypeError), not read as its characters."""
        from aqgr.archive.indexer import IndexLock

        ids = list(many(judgment_ids, "remove()", "['C12']"))
        if not (self.settings.index_dir / "manifest.json").exists():
            return self._removed(ids)
        # One writer: no `aqgr index` runs between the database's step and the index's. The database's
        # is one transaction; when the index's then fails (a full disk), the error says what was done,
        # and `aqgr index` (or this remove again: the ids still indexed are taken out) completes it.
        with IndexLock(self.home):
            removed = self._removed(ids)
            left = sorted(set(ids) & set(self._indexed_ids() or ()))  # removed now, or by a remove that stopped
            if (removed or left) and self._store.summary_ids(self.settings.summarizer):
                gone = sorted(set(removed) | set(left))
                shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
                still = (
                    f", but {len(left)} of them are still in the index (searches leave them out, with a note)"
                    if left
                    else ""
                )
                self._build_index_reported(
                    locked=True,
                    done=f"{len(gone)} judgment(s) ({shown}) are removed from the database{still}",
                    spec=None,
                    progress=None,
                    backend="embedded",
                    uri=None,
                    rebuild=False,
                )
        return removed

    def _removed(self, ids: list[str]) -> list[str]:
        """The database's part of `remove` (one transaction); the ids that were stored."""
        removed = self._store.remove(ids)
        with self._lock:
            self._loaded = None
        return removed

    def summaries(self) -> list[StructuredSummary]:
        return self._store.summaries(self.settings.summarizer)

    def summary(self, judgment_id: str) -> StructuredSummary | None:
        found = self._store.summaries(self.settings.summarizer, ids=[judgment_id])
        return found[0] if found else None

    def text(self, judgment_id: str) -> str | None:
        return self._store.text(judgment_id)

    def status(self) -> dict:
        from aqgr.archive.health import stale_counts
        from aqgr.archive.store import redact_url
        from aqgr.archive.workqueue import ledger_status

        store = self._store
        by_reason: dict[str, int] = {}
        by_engine: dict[str, dict[str, int]] = {}
        for (engine, reason), n in sorted(store.count_failures().items()):
            by_reason[reason] = by_reason.get(reason, 0) + n
            by_engine.setdefault(engine, {})[reason] = n
        try:
            manifest = self._index_manifest()
        except IndexMismatchError as exc:  # status still reports the rest
            manifest = {"error": str(exc)}
        if manifest and "error" not in manifest and "search_profile" not in manifest:
            # an index built before profiles were recorded: its searches take the profile of its size
            manifest["search_profile"] = profile_for(int(manifest.get("n_docs") or 0))
        imported = store.count_imported()
        return {
            "home": str(self.home),
            "database": redact_url(self.settings.db_url),
            "judgments": store.count_judgments(),
            "summaries": [
                {"engine": e, "schema_version": v, "count": n, "imported": imported.get((e, v), 0)}
                for (e, v), n in sorted(store.count_summaries().items())
            ],
            "failures": sum(by_reason.values()),
            "failures_by_reason": by_reason,
            "failures_by_engine": by_engine,
            "index": manifest,
            # the summaries the index does not reflect yet (`aqgr index` brings them in)
            "index_stale": stale_counts(
                self.settings, store, manifest if isinstance(manifest, dict) and "error" not in manifest else None
            ),
            # the graph the index's search uses (found among the indexed judgments)
            "citations": len(graph) if (graph := self.citations(self._indexed_ids())) is not None else None,
            "work_ledger": ledger_status(store),
        }

    def check(self) -> dict:
        """What a search needs, checked without writing (aqgr/archive/health.py): the home (writable or
        read-only), the database (file, integrity, tables, every stored summary), the index against
        its manifest and the archive, the caches, leftovers of a stopped `aqgr index`.
        {"ok", "home", "database": {"where", "ok", "problems", ...}, "index": {"where", "ok", "state",
        "detail"}, "caches", "leftovers", "damaged", "warnings"}: each damaged part with its recovery."""
        from aqgr.archive.health import check_archive

        return check_archive(self.settings)

    def export_summaries(
        self, out: str | Path | None, *, format: str = "jsonl", engine: str | None = None, force: bool = False
    ) -> int:
        """Write the summaries (of `engine`, default the archive's summarizer) as JSON Lines (a file, or
        stdout when `out` is None) or as one JSON file per judgment in a folder; returns how many.
        `out` must be a regular file or folder: a link, FIFO or device there is refused unless `force`."""
        from aqgr.archive.transfer import export_summaries

        return export_summaries(self._store, out, format=format, engine=engine or self.settings.summarizer, force=force)

    def damaged_summaries(self) -> list[str]:
        """The judgment ids whose stored summary was found damaged by the reads so far (left out of
        searches and exports: `check` finds every one)."""
        return sorted({judgment_id for judgment_id, _ in self._store.damaged})

    def import_summaries(self, paths: Iterable[str | Path], *, replace: bool = False):
        """Read summaries back (.jsonl, .json, folders of them), validating each against the JSON
        Schema; invalid ones are reported, never stored. A stored summary of the same judgment and
        engine is kept (the import reported as refused) unless `replace`. Returns an
        `aqgr.archive.transfer.ImportReport`."""
        from aqgr.archive.transfer import import_summaries

        report = import_summaries(self._store, paths, replace=replace)
        if report.imported:
            self._loaded = None
        return report

    # -- stage 2 -----------------------------------------------------------
    def _index_spec(self) -> IndexSpec:
        return self.settings.index or IndexSpec()

    def build_index(
        self,
        *,
        spec: IndexSpec | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        backend: str = "embedded",
        uri: str | None = None,
        rebuild: bool = False,
    ) -> dict:
        """Bring the index up to date with the archive's summaries and return its manifest: the first
        time (or with `rebuild`, or when the saved one was built differently) a full build; after
        that only what changed (new, re-made and removed summaries: aqgr/archive/indexer.py). Also finds the
        citations between judgments and the statutes they quote.

        `backend`: "embedded" (default: BM25 + dense files in the index directory) or "milvus"
        (a collection at `uri`: a Milvus server URL or a milvus-lite path; retrieval/milvus.py).
        The manifest records the backend and URI, so a search opens the right one. One writer at
        a time: a second concurrent call raises IndexBusyError."""
        return self._build_index_reported(spec=spec, progress=progress, backend=backend, uri=uri, rebuild=rebuild)

    def _build_index_reported(self, *, locked: bool = False, done: str | None = None, **how) -> dict:
        """`build_index` (`how`: its arguments) with its failures said as they are: a full disk or a
        read-only home as WriteError naming the file and what the update had changed by then (`done`:
        what the caller changed before, said first). `locked`: the caller holds IndexLock."""
        from aqgr.foundation.errors import WriteError
        from aqgr.foundation.sqlite_files import as_os_error

        steps: list[str] = []
        try:
            try:
                return self._build_index(**how, locked=locked, steps=steps)
            except sqlite3.DatabaseError as exc:  # the embedding cache found damaged only on use: made anew, once
                from aqgr.archive.health import is_corrupt, remove_sqlite, sqlite_problems

                cache = self.settings.cache_dir / "embeddings.sqlite"
                if not (is_corrupt(exc) and cache.exists() and sqlite_problems(cache, "vectors")):
                    raise
                remove_sqlite(cache)
                steps.clear()
                return self._build_index(**how, locked=locked, steps=steps)
        except WriteError as exc:  # the citation store's, said already: what was done before it joins
            if done is None:
                raise
            raise WriteError(exc.path, exc.error, before=f"{done}; {exc.before}") from None
        except OSError as exc:  # a full disk, a read-only home: the old index stays (committed atomically)
            raise WriteError(str(exc.filename or self.settings.index_dir), exc, before=_said(done, steps)) from None
        except sqlite3.Error as exc:  # the embedding cache or the index's documents file cannot be written
            raise WriteError(str(self.home), as_os_error(exc, self.home), before=_said(done, steps)) from None

    def _build_index(
        self,
        *,
        spec: IndexSpec | None,
        progress,
        backend: str,
        uri: str | None,
        rebuild: bool,
        locked: bool = False,
        steps: list[str] | None = None,
    ) -> dict:
        """The work of `build_index`; `steps` gets "citations" once the citation store changed, "index"
        once the index committed (what a failure after them has changed)."""
        from contextlib import nullcontext

        from aqgr.archive.indexer import IndexLock, update_index

        steps = [] if steps is None else steps
        spec = spec or self._index_spec()
        store = self._store
        # read once for the whole update: at a million summaries it is a full read of the store's index
        wanted = store.summary_fingerprints(self.settings.summarizer)
        if not wanted:
            raise EmptyArchiveError("index")
        with nullcontext() if locked else IndexLock(self.home):
            from aqgr.archive.health import open_embedding_cache
            from aqgr.pipeline.statutes import StatuteCollection
            from aqgr.retrieval.embedded.index import clean_leftovers

            clean_leftovers(StatuteCollection(self.settings).index_dir)  # the case index's: update_index
            cache = open_embedding_cache(self.settings.cache_dir / "embeddings.sqlite")  # a damaged cache is made anew
            try:
                # the citations first: a server reloads when the index's manifest changes, and finds them
                self._link_citations(progress, wanted, steps)
                index, change = update_index(
                    store,
                    self.settings.summarizer,
                    self.settings.index_dir,
                    spec=spec,
                    backend=backend,
                    uri=uri,
                    cache=cache,
                    progress=progress,
                    rebuild=rebuild,
                    text_of=store.text,
                    wanted=wanted,
                )
            finally:
                cache.close()
            steps.append("index")
            with self._lock:
                self._loaded = None  # a search still running on the old one finishes on it
            StatuteCollection(self.settings).renew()  # a statute index an older aqgr made: built again
            self.link_statutes(progress)
            manifest = {**index.manifest, "update": change}
            index.close()
            return manifest

    def texts(self) -> Iterator[tuple[str, str]]:
        """(judgment id, source text) of every summarised judgment, one at a time."""
        return self._texts_of()

    def _texts_of(self, ids: Sequence[str] | None = None) -> Iterator[tuple[str, str]]:
        store = self._store
        ids = store.summary_ids(self.settings.summarizer) if ids is None else list(ids)
        for start in range(0, len(ids), 200):
            chunk = ids[start : start + 200]
            found = store.texts(chunk)
            for judgment_id in chunk:
                yield judgment_id, found.get(judgment_id) or ""

    def add_statutes(self, paths: Iterable[str | Path]) -> int:
        """Add (or replace, by id) the statute files under `paths` to the archive's statute
        collection, index them and record which judgments quote them; returns the count."""
        from aqgr.pipeline.statutes import StatuteCollection

        collection = StatuteCollection(self.settings)
        with _write_errors(collection.root):  # the collection and its index change together, or not at all
            count = collection.add(paths)
        linked = (
            f"the {count} statutes were added and indexed, but which judgments quote them was not saved (searches "
            "go on without it): run `aqgr statutes` or `aqgr index` again once there is space"
        )
        with _write_errors(collection.root, before=linked):
            collection.link(self.texts())
        return count

    def search_statutes(
        self, facts: str, questions: Sequence[str] | None = None, *, k: int = 10, filters: Filters | None = None
    ) -> StatuteResult:
        """The statutes for the facts: searched with the same legal questions (the given ones,
        or the archive's top generated ones) and through the precedents that quote them.
        Raises NoStatutesError when the archive has none (`add_statutes`)."""
        from aqgr.pipeline.statutes import StatuteCollection, statutes_for

        if self._statutes is None:
            self._statutes = StatuteCollection(self.settings)
        if not self._statutes.exists():  # said before the case index is loaded
            raise NoStatutesError(self._statutes.root)
        return statutes_for(self._searcher(), self._statutes, facts, questions, k=k, filters=filters)

    def link_statutes(self, progress: Callable[[str, int, int], None] | None = None) -> int | None:
        """Record which judgments quote which statutes of the archive's statute collection
        (aqgr/pipeline/statutes.py); None when the archive has no statutes. `progress(stage, done,
        total)` is called with stage "statute links"."""
        from aqgr.pipeline.statutes import StatuteCollection

        statutes = StatuteCollection(self.settings)
        if not statutes.exists():
            return None
        ids = self._store.summary_ids(self.settings.summarizer)
        total = len(ids)

        def judgments() -> Iterator[tuple[str, str]]:
            for done, item in enumerate(self._texts_of(ids)):
                if progress is not None and done % 100 == 0:
                    progress("statute links", done, total)
                yield item
            if progress is not None:
                progress("statute links", total, total)

        return statutes.link(judgments())

    def link_citations(
        self, progress: Callable[[str, int, int], None] | None = None, *, wanted: Mapping[str, str] | None = None
    ):
        """Find which summarised judgments cite which (retrieval/citations) and keep it in
        `<home>/citations.sqlite`, for the search's precedents referred; returns the
        CitationGraph. Incremental: judgments new to it (or whose summary was made again since
        the index recorded it) are linked, those no longer summarised removed, and only the
        stored judgments such a change can concern are relinked (retrieval/citations/store.py).
        A citation file of another format, made by another treatment engine, or damaged, is made
        anew beside it (`.citations.sqlite.rebuild`) and moved over it once complete: until then
        the old one serves, and a run stopped part way is completed by the next. `progress(stage,
        done, total)` is called with the store's stages. `wanted`: the store's summary fingerprints,
        when the caller has just read them (`build_index`).

        A full disk or a read-only home raises WriteError naming the file; the citation store is
        left as it was (each update is one transaction), or, for a large one, part way, which the
        next run completes: the message says which."""
        if wanted is None:
            wanted = self._store.summary_fingerprints(self.settings.summarizer)
        return self._link_citations(progress, wanted, [])

    def _link_citations(self, progress, wanted: Mapping[str, str], steps: list[str]):
        """`link_citations` (aqgr/archive/linking.py); `steps` gets "citations" when the store's judgments changed."""
        from aqgr.archive.linking import link_citations

        graph = link_citations(
            self.home / CITATIONS_FILE,
            self._create(treatment_engines, self.settings.treatment),
            wanted,
            indexed=self._indexed_fingerprints(),
            text_of=lambda judgment_id: self._store.text(judgment_id) or "",
            texts_of=self._texts_of,
            progress=progress,
            steps=steps,
        )
        with self._lock:
            self._loaded = None
        return graph

    def _citation_store(self):
        """The archive's citation store opened to be read (a read-only home included). Raises
        IndexMismatchError for one of another format or damaged, IndexUnavailableError for one that
        cannot be opened (a full disk, permissions)."""
        from aqgr.retrieval.citations import CitationStore

        return CitationStore(self.home / CITATIONS_FILE, read_only=True)

    def _indexed_fingerprints(self) -> dict[str, str]:
        """judgment id -> fingerprint the saved index recorded ({} without a readable one)."""
        from aqgr.retrieval.backends import indexed_fingerprints

        return indexed_fingerprints(self.settings.index_dir)

    def citations(self, judgments: Iterable[str] | None = None):
        """The archive's CitationGraph, or None when none was made, it cannot be read, or it was
        found among other judgments than `judgments` (default: those summarised now): `aqgr
        index` brings it up to date."""
        found = self._citation_graph()
        if found is None:
            return None
        graph, ids = found
        return (
            graph
            if ids == set(self._store.summary_ids(self.settings.summarizer) if judgments is None else judgments)
            else None
        )

    def _citation_graph(self):
        """(the CitationGraph as stored, the judgment ids it was found among), or None when there is
        none or it cannot be read. Opens and closes its own connection: a thread may call it."""
        if not (self.home / CITATIONS_FILE).exists():
            return None
        try:
            store = self._citation_store()
        except (IndexMismatchError, IndexUnavailableError, OSError, sqlite3.Error):
            return None
        try:
            return store.graph_and_ids()
        except sqlite3.Error:
            return None
        finally:
            store.close()

    def citations_of(self, judgment_id: str):
        """The judgments of the archive that `judgment_id` cites and that cite it, with the words
        that name each (`schemas.results.JudgmentCitations`). Raises UnknownJudgmentError, or
        NoCitationGraphError before `aqgr index` has found the citations."""
        from aqgr.archive.citations import judgment_citations

        indexed = self._indexed_ids()
        graph = self.citations(indexed) if indexed is not None else None
        if graph is not None and judgment_id not in indexed and self.summary(judgment_id) is not None:
            raise NoCitationGraphError(judgment_id)  # the graph cannot know its citations yet
        return judgment_citations(judgment_id, graph, self.summary)

    def _indexed_ids(self) -> list[str] | None:
        """The judgment ids of the saved index (None without a readable one)."""
        from aqgr.retrieval.backends import indexed_ids

        return indexed_ids(self.settings.index_dir)

    def _index_manifest(self) -> dict | None:
        """The saved index's manifest; None without an index. An unreadable one raises IndexMismatchError (rebuild)."""
        import json

        from aqgr.foundation.errors import IndexMismatchError

        path = self.settings.index_dir / "manifest.json"
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:  # ValueError: not JSON, not UTF-8
            raise IndexMismatchError(
                str(self.settings.index_dir), [f"manifest.json is unreadable ({type(exc).__name__}: {exc})"]
            ) from None
        if not isinstance(found, dict):
            raise IndexMismatchError(str(self.settings.index_dir), ["manifest.json is not a JSON object"])
        return found

    # -- stage 3 -----------------------------------------------------------
    def _searcher(self) -> Searcher:
        """The saved index and summaries, loaded once and reused by every search."""
        with self._lock:
            if self._loaded is None:
                self._loaded = self.open_searcher()
            return self._loaded

    def open_searcher(self, index: Index | None = None) -> Searcher:
        """A fresh search snapshot: `index` (an index of this archive's summaries built elsewhere,
        as the evaluation does per configuration), else the saved index loaded now, with the
        archive's engines, search options and citation graph. For callers that hold one and swap
        it when the index changes (the server); `search()` keeps one of its own."""
        # The index, then the citation graph, one after the other: on a thread beside the index
        # the graph (numpy and Python work) and the index's SQLite row loop (which lets go of the
        # interpreter lock at every row) waited on each other, and opening a 1e6 archive took
        # 10.8-11.0 s instead of 5.7-5.9 s (docs/experiments/2026-12-06-open-in-turn.md).
        if index is None:
            from aqgr.retrieval.backends import load_index

            try:
                index = load_index(self.settings.index_dir, expect=self.settings.index)
            except NoIndexError:  # none yet: perhaps the first `aqgr index` is finding the citations
                raise self._why_empty(none=True) from None
            if not len(index):  # the manifest of a first build that has committed no judgment yet
                index.close()
                raise self._why_empty()
        # An index searches the summaries it was built from (its manifest names their
        # engine), whatever summarizer is configured now (a provider set up later).
        engine = index.manifest.get("summarizer") or self.settings.summarizer
        summaries = SummaryReader(self._store, engine)  # read as a search needs them, not loaded whole
        summaries.many(index.doc_ids[:1])  # the database answers (a damaged one raises StoreError now, not mid-search)
        found = self._citation_graph()
        graph = found[0] if found is not None and found[1] == set(index.doc_ids) else None
        return Searcher(
            index,
            summaries,
            self._create(question_generators, self.settings.question_generator),
            self._create(explainers, self.settings.explainer),
            self.settings.search,
            engine,
            citations=graph,
            texts=self._store.texts,
            correspondence=self._correspondence_store().load,
        )

    def _why_empty(self, *, none: bool = False):
        """The error for no index (`none`) or a saved index that holds no judgment: the first `aqgr
        index` is building it (it commits as it goes: searched meanwhile, a part holds what it has
        committed), or one stopped before its first commit, or the archive has no summaries."""
        from aqgr.archive.indexer import IndexLock
        from aqgr.foundation.errors import IndexBuildingError

        if IndexLock.held(self.home):
            return IndexBuildingError(str(self.settings.index_dir))
        if none or self._store.summary_ids(self.settings.summarizer):
            return NoIndexError(str(self.settings.index_dir))
        return EmptyArchiveError("search")

    def _correspondence_store(self):
        from aqgr.pipeline.correspondence import CorrespondenceStore

        return CorrespondenceStore(self.settings.home)

    def correspondence(self):
        """The archive's section correspondence tables (aqgr/pipeline/correspondence.py), or None when it has none."""
        return self._correspondence_store().load()

    def add_correspondence(self, paths: Iterable[str | Path]):
        """Load correspondence tables (CSV, old code <-> new code) into the archive; returns the
        StoreReport (rows per code pair, the lines not loaded with their numbers)."""
        return self._correspondence_store().add(paths)

    def search(
        self,
        facts: str,
        questions: Sequence[str] | None = None,
        *,
        k: int | None = None,
        options: SearchOptions | None = None,
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
        filters: Filters | None = None,
    ) -> SearchResult:
        """Question-guided search. `questions` replaces the generated ones (the user's pick);
        `restrict` keeps only those judgment ids, `exclude` drops those; `filters` (court, dates,
        judge, kind, statute, disposal) keep only the judgments matching them."""
        searcher = self._searcher()
        if self._llm is None:
            return searcher.search(
                facts, questions, k=k, options=options, restrict=restrict, exclude=exclude, filters=filters
            )
        before = self._llm.ledger.snapshot()  # per-search usage (approximate under concurrent searches)
        result = searcher.search(
            facts, questions, k=k, options=options, restrict=restrict, exclude=exclude, filters=filters
        )
        return result.model_copy(
            update={"model_usage": self._llm.ledger.difference(self._llm.ledger.snapshot(), before)}
        )

    def candidate_questions(
        self, facts: str, *, n: int | None = None, filters: Filters | None = None
    ) -> list[CandidateQuestion]:
        """The candidate legal questions for the facts, best first (for the user to pick from),
        drawn from the judgments matching `filters` when given."""
        return self._searcher().candidate_questions(facts, n=n, filters=filters)
