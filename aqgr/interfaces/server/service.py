"""One archive shared by every request: loaded once, swapped atomically when the index is rebuilt.

Requests run in worker threads. Each takes the current `Searcher` (an immutable snapshot
of an index and the summaries it was built from) and keeps it for the whole request.
When the index's manifest changes on disk (`aqgr index` in another process, or
`Archive.build_index()` here) one request loads the new index while the others go on
with the old snapshot; a failed reload (the index half-written, or refused) keeps the
old snapshot and is retried on a later request.

Process-wide settings belong to the start-up (`start`), not to loading a searcher: the heap
is frozen once, after the first load, never again on a reload.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from aqgr.archive.home import Archive
from aqgr.foundation.errors import AqgrError
from aqgr.pipeline.search import Searcher, freeze_heap
from aqgr.pipeline.statutes import StatuteCollection, file_stamp, statutes_for
from aqgr.schemas.results import JudgmentCitations
from aqgr.schemas.statutes import StatuteResult
from aqgr.schemas.summary import StructuredSummary

WARM_UP = "warm-up"  # a query embedded at start-up: the embedding model loads then, before the heap is frozen


class ArchiveService:
    """The archive behind the server (and the MCP server)."""

    def __init__(self, archive: Archive, *, reload_check_seconds: float = 1.0):
        self.archive = archive
        self.statutes = StatuteCollection(archive.settings)
        self._reload_check = reload_check_seconds
        self._reload_lock = threading.Lock()
        self._current: tuple[tuple[int, int, int] | None, Searcher] | None = None
        self._checked_at = 0.0
        self.reloads = 0

    def start(self) -> None:
        """The server's start-up: load the index and summaries and the query embedder (as the
        first search would), then freeze the heap (`aqgr.pipeline.search.freeze_heap`), once. A missing
        index raises (NoIndexError & co.); the heap is frozen all the same."""
        try:
            self.searcher().index.embed_query(WARM_UP)
        finally:
            freeze_heap()

    @property
    def manifest_path(self) -> Path:
        return self.archive.settings.index_dir / "manifest.json"

    def searcher(self) -> Searcher:
        """The current searcher; raises NoIndexError & co. only when no index was ever loaded."""
        current = self._current
        now = time.monotonic()
        if current is not None and now - self._checked_at < self._reload_check:
            return current[1]
        self._checked_at = now
        stamp = file_stamp(self.manifest_path)
        if current is not None and (stamp == current[0] or stamp is None):
            return current[1]  # unchanged, or mid-swap (the old directory renamed away)
        # the first load waits for the lock; a reload never blocks a request that has a snapshot
        if not self._reload_lock.acquire(blocking=current is None):
            return current[1]
        try:
            current = self._current
            if current is not None and current[0] == stamp:
                return current[1]
            try:
                searcher = self.archive.open_searcher()  # a fresh load from disk
            except AqgrError:
                if current is None:
                    raise
                return current[1]
            self._current = (stamp, searcher)
            self.reloads += current is not None
            return searcher
        finally:
            self._reload_lock.release()

    def summary(self, judgment_id: str) -> StructuredSummary | None:
        current = self._current
        if current is not None and judgment_id in current[1].summaries:
            return current[1].summaries[judgment_id]
        return self.archive.summary(judgment_id)

    def text(self, judgment_id: str) -> str | None:
        return self.archive.text(judgment_id)

    def citations_of(self, judgment_id: str) -> JudgmentCitations:
        """What the judgment cites and what cites it, from the loaded index's citation graph."""
        from aqgr.archive.citations import judgment_citations

        searcher = self.searcher()
        return judgment_citations(judgment_id, searcher.citations, searcher.summaries.get)

    def search_statutes(
        self, facts: str, questions: Sequence[str] | None = None, *, k: int = 10, filters=None
    ) -> StatuteResult:
        """Statutes for the facts: the given questions, or the archive's top generated ones;
        also through the statutes that the archive's precedents for the facts quote."""
        return statutes_for(self.searcher(), self.statutes, facts, questions, k=k, filters=filters)

    def has_index(self) -> bool:
        return self._current is not None or self.manifest_path.exists()
