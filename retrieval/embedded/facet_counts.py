"""Facet counts over a search's candidates from memory: each document's shown facet terms read
from docs.sqlite once (the first time it is a candidate; all of them at the first count in an
archive of up to READ_ALL_UP_TO), then held as term numbers.

A search counts its ~3,000 (AILA) to ~10,000 (1e6) candidates' ~11 terms each. Read from
SQLite and counted with a Counter on every search, that was ~10 ms of interpreter time on AILA,
beside the explanation, which needs the same lock. Held here, a count is one numpy gather and a
`bincount`. A table serves one committed generation (a FacetReader's), so nothing it holds goes
stale. Memory: a row of ROW_WIDTH int32 per document (64 MB at 1e6, touched only as documents
are read; zero pages until then), the terms beyond it in a dict, and the distinct terms once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .docstore import DocRegistry

# docs.sqlite facet_shown.terms: a document's terms of the counted fields, "field<US>value" joined by <RS>
TERM_UNIT, TERM_RECORD = "\x1f", "\x1e"
ROW_WIDTH = 16  # a judgment's terms held in its row; more (many sections cited) go to `_more`
# Up to this many documents, the first count reads every document's terms (~7 us each: ~20 ms on
# AILA's 2,914, ~0.14 s at this size), so that no later search waits on the store for them.
READ_ALL_UP_TO = 20_000


class ShownTerms:
    """The counted facet terms of one generation's documents, read on first need."""

    def __init__(self, registry: DocRegistry, size: int):
        self._registry, self._size = registry, size
        self._lock = threading.Lock()
        self._rows: np.ndarray | None = None  # n -> term numbers (0: none), made on first count
        self._read: np.ndarray | None = None  # n -> its terms are in `_rows`
        self._more: dict[int, list[int]] = {}  # n -> its term numbers beyond ROW_WIDTH
        self._number: dict[str, int] = {}  # a term as stored ("field<US>value") -> its number
        self._terms: list[str] = [""]  # number -> the term; 0 stands for none

    def counts(self, ns: Sequence[int]) -> dict[str, dict[str, int]] | None:
        """field -> value -> how many of the documents `ns` (each once) hold it; None when the
        store keeps no `facet_shown` rows (an index made before them: count with the store)."""
        ns = np.unique(np.asarray(ns, dtype=np.int64))
        ns = ns[(ns >= 0) & (ns < self._size)]
        with self._lock:
            if self._rows is None:
                self._rows = np.zeros((self._size, ROW_WIDTH), dtype=np.int32)
                self._read = np.zeros(self._size, dtype=bool)
                if self._size <= READ_ALL_UP_TO and not self._take(np.arange(self._size, dtype=np.int64)):
                    return None
            unread = ns[~self._read[ns]]
            if len(unread) and not self._take(unread):
                return None
            held = np.bincount(self._rows[ns].ravel(), minlength=len(self._terms))
            for n in set(ns.tolist()).intersection(self._more):
                for number in self._more[n]:
                    held[number] += 1
            terms = self._terms
        out: dict[str, dict[str, int]] = {}
        for number in np.flatnonzero(held[1:]).tolist():
            name, value = terms[number + 1].split(TERM_UNIT, 1)
            out.setdefault(name, {})[value] = int(held[number + 1])
        return out

    def _take(self, ns: np.ndarray) -> bool:
        """Read the terms of `ns` into the rows (under the lock); False when the store has none.
        One split of all their terms and one numpy assignment, not a step per document."""
        found = self._registry.shown_terms(ns.tolist())
        if found is None:
            return False
        if found:
            held_by, stored = zip(*found)
            sizes = np.fromiter((terms.count(TERM_RECORD) + 1 for terms in stored), dtype=np.int64, count=len(stored))
            number, terms = self._number, self._terms
            numbers = []
            for term in TERM_RECORD.join(stored).split(TERM_RECORD):
                got = number.get(term)
                if got is None:
                    got = number[term] = len(terms)
                    terms.append(term)
                numbers.append(got)
            numbers = np.asarray(numbers, dtype=np.int32)
            row = np.repeat(np.asarray(held_by, dtype=np.int64), sizes)
            column = np.arange(len(numbers)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            fits = column < ROW_WIDTH
            self._rows[row[fits], column[fits]] = numbers[fits]
            for n, extra in zip(row[~fits].tolist(), numbers[~fits].tolist()):
                self._more.setdefault(n, []).append(extra)
        self._read[ns] = True
        return True
