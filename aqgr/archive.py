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

import threading
from pathlib import Path
from typing import Callable, Iterable, Sequence

from aqgr.batch import BatchReport, Progress, summarize_files
from aqgr.config import SearchOptions, Settings
from aqgr.errors import EmptyArchiveError
from aqgr.explain import explainers
from aqgr.questions import question_generators
from aqgr.search import Searcher
from aqgr.store import Store
from retrieval.index import IndexSpec, SummaryIndex
from schemas.results import CandidateQuestion, SearchResult
from schemas.summary import StructuredSummary
from summarizer.base import SummarizerEngine, summarizers


class Archive:
    """Judgments, summaries, index and question-guided search under one home directory."""

    def __init__(self, home: str | Path | None = None, *, settings: Settings | None = None, **overrides):
        self.settings = settings or Settings.resolve(home, **overrides)
        self._store: Store | None = None
        self._searcher: Searcher | None = None
        self._lock = threading.Lock()

    # -- storage -----------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.settings.home

    @property
    def store(self) -> Store:
        if self._store is None:
            self.home.mkdir(parents=True, exist_ok=True)
            self._store = Store(self.settings.db_url)
        return self._store

    def summarizer(self) -> SummarizerEngine:
        return summarizers.create(self.settings.summarizer)

    # -- stage 1 -----------------------------------------------------------
    def summarize(self, paths: Iterable[str | Path], *, force: bool = False, progress: Progress | None = None) -> BatchReport:
        """Summarise every judgment file under `paths`; failures are recorded per file, never raised."""
        report = summarize_files(paths, self.store, self.summarizer(), force=force, progress=progress)
        if report.summarised:
            self._searcher = None  # the index no longer reflects the archive
        return report

    def summaries(self) -> list[StructuredSummary]:
        return self.store.summaries(self.settings.summarizer)

    def summary(self, judgment_id: str) -> StructuredSummary | None:
        found = self.store.summaries(self.settings.summarizer, ids=[judgment_id])
        return found[0] if found else None

    def text(self, judgment_id: str) -> str | None:
        return self.store.text(judgment_id)

    def status(self) -> dict:
        store = self.store
        failures = store.failures()
        by_reason: dict[str, int] = {}
        for f in failures:
            by_reason[f.reason] = by_reason.get(f.reason, 0) + 1
        return {
            "home": str(self.home),
            "judgments": store.count_judgments(),
            "summaries": [{"engine": e, "schema_version": v, "count": n} for (e, v), n in sorted(store.count_summaries().items())],
            "failures": len(failures),
            "failures_by_reason": by_reason,
            "index": self.index_manifest(),
        }

    # -- stage 2 -----------------------------------------------------------
    def index_spec(self) -> IndexSpec:
        return self.settings.index or IndexSpec()

    def build_index(self, *, spec: IndexSpec | None = None, progress: Callable[[str, int, int], None] | None = None) -> dict:
        """Build the BM25 + FAISS index over every summary and save it atomically; returns the manifest."""
        from retrieval.embed_cache import EmbeddingCache

        summaries = self.summaries()
        if not summaries:
            raise EmptyArchiveError("index")
        spec = spec or self.index_spec()
        self.settings.cache_dir.mkdir(parents=True, exist_ok=True)
        cache = EmbeddingCache(self.settings.cache_dir / "embeddings.sqlite")
        index = SummaryIndex.build(summaries, spec, cache=cache, progress=progress)
        index.save(self.settings.index_dir)
        with self._lock:
            self._searcher = None
        return index.manifest

    def index_manifest(self) -> dict | None:
        import json

        path = self.settings.index_dir / "manifest.json"
        return json.loads(path.read_text()) if path.exists() else None

    # -- stage 3 -----------------------------------------------------------
    def searcher(self) -> Searcher:
        """The loaded index and summaries (loaded once, reused by every search)."""
        with self._lock:
            if self._searcher is None:
                index = SummaryIndex.load(self.settings.index_dir, expect=self.settings.index)
                summaries = {s.judgment_id: s for s in self.store.summaries(self.settings.summarizer, ids=None)}
                self._searcher = Searcher(
                    index,
                    summaries,
                    question_generators.create(self.settings.question_generator),
                    explainers.create(self.settings.explainer),
                    self.settings.search,
                    self.settings.summarizer,
                )
            return self._searcher

    def search(self, facts: str, questions: Sequence[str] | None = None, *, k: int | None = None, options: SearchOptions | None = None, **filters) -> SearchResult:
        """Question-guided search. `questions` replaces the generated ones (the user's pick)."""
        return self.searcher().search(facts, questions, k=k, options=options, **filters)

    def candidate_questions(self, facts: str, *, n: int | None = None) -> list[CandidateQuestion]:
        """The candidate legal questions for the facts, best first (for the user to pick from)."""
        return self.searcher().candidate_questions(facts, n=n)
