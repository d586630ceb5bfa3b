"""The documents of an embedded index: which judgment each integer `n` stands for, by generation.

An index addresses its documents by `n`, an integer never reused: the retrievers' parts
(retrieval/embedded/retrievers.py) store n, and this store (`docs.sqlite` in the index directory)
maps n to the judgment id, the fingerprint of the summary indexed for it
(retrieval/documents.py `summary_fingerprint`) and its indexed slot texts.

Every change is a generation. A row records the generation that added it (`gen`) and the
one that removed it (`dead`, NULL while live); at generation G a row is live when
gen <= G and (dead is NULL or dead > G). The manifest names the committed generation, so
the steps of an update (new rows, new retriever data, then the manifest) can stop anywhere:
until the manifest names G + 1, readers see generation G's documents, and the next writer
rolls the unfinished generation back (`rollback`) before it starts. Rows dead at a
committed generation are purged, and their n handed to the retrievers to delete, after the
commit (`purge`).

`facet_terms` and `facet_dates` hold each document's filter fields, normalised when it was
indexed (retrieval/embedded/facets.py): (field, value, n) rows looked up by field and value, the ISO
date by range; their rows follow the document's (added with it, rolled back and purged with
it). `meta` key 'facets' records the normalisation version; a documents file without it (made by
an aqgr older than search filters) is refused (`outdated`, read by `SummaryIndex.load`).
`facet_shown` holds, in one row per document, its terms of the fields a result counts
(retrieval/embedded/facets.py `FACET_FIELDS`): counting the facets of 3,000 candidates reads 3,000
rows, not the ~60,000 of their `facet_terms`; a file without it (no meta key 'facet_shown', an
older aqgr's) is refused too.

`sentences` keeps short texts embedded at build time (the summaries' issues), keyed by a
hash of the whitespace-normalised text, so that a query equal to one costs no model call
and nothing of it is held in memory.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

import numpy as np

from aqgr.foundation.sqlite_files import folder_writable, read_uri

from .facets import FACET_FIELDS, FACETS_VERSION
from .facets import TERM_RECORD as _RECORD
from .facets import TERM_UNIT as _UNIT

FILE_NAME = "docs.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    n INTEGER PRIMARY KEY,
    judgment_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    texts TEXT NOT NULL,
    gen INTEGER NOT NULL,
    dead INTEGER
);
CREATE INDEX IF NOT EXISTS docs_judgment ON docs (judgment_id);
CREATE INDEX IF NOT EXISTS docs_dead ON docs (dead);
CREATE TABLE IF NOT EXISTS sentences (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS facet_terms (field TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL,
                                        PRIMARY KEY (field, value, n)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS facet_terms_n ON facet_terms (n);
CREATE TABLE IF NOT EXISTS facet_dates (n INTEGER PRIMARY KEY, decided TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS facet_dates_decided ON facet_dates (decided, n);
CREATE TABLE IF NOT EXISTS facet_shown (n INTEGER PRIMARY KEY, terms TEXT NOT NULL);
"""

# Which judgment each live n stands for, read from the index alone (`live`, at every load): without
# it each row is looked up in the table, whose pages hold the slot texts. It also serves the reads by
# generation (`rollback`, `killed`). Made with a new index; a file without it (an older aqgr's) is refused.
_LIVE_INDEX = "CREATE INDEX IF NOT EXISTS docs_live ON docs (gen, dead, n, judgment_id)"


def sentence_key(text: str) -> bytes:
    return hashlib.blake2b(" ".join(text.split()).encode("utf-8", "surrogatepass"), digest_size=16).digest()


class DocStore:
    """docs.sqlite of one index directory (see the module). Thread-safe for readers."""

    def __init__(self, directory: str | Path, *, create: bool = False, read_only: bool = False):
        """`read_only`: opened for reading only. A store that cannot be written (its folder on a
        read-only medium or without write permission) is opened so as well, unless `create`:
        `read_only` then tells which it is, and a write raises sqlite3.OperationalError."""
        self.path = Path(directory) / FILE_NAME
        if not create and not self.path.is_file():
            raise FileNotFoundError(str(self.path))
        self.read_only = read_only or (not create and not folder_writable(self.path.parent))
        uri = read_uri(self.path) if self.read_only else f"file:{quote(str(self.path.absolute()))}"
        self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        if not self.read_only:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            if create:
                self._db.execute(_LIVE_INDEX)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- reading -------------------------------------------------------------
    def live(self, generation: int) -> tuple[list[str | None], dict[str, int]]:
        """(judgment id by n, None where n is not live; judgment id -> n) at `generation`."""
        with self._lock:
            top = self._db.execute("SELECT COALESCE(MAX(n), -1) FROM docs").fetchone()[0]
            ids: list[str | None] = [None] * (top + 1)
            n_of: dict[str, int] = {}
            for n, judgment_id in self._db.execute(
                "SELECT n, judgment_id FROM docs WHERE gen <= ? AND (dead IS NULL OR dead > ?)",
                (generation, generation),
            ):
                ids[n] = judgment_id
                n_of[judgment_id] = n
        return ids, n_of

    def fingerprints(self, generation: int) -> dict[str, str]:
        with self._lock:
            return dict(
                self._db.execute(
                    "SELECT judgment_id, fingerprint FROM docs WHERE gen <= ? AND (dead IS NULL OR dead > ?)",
                    (generation, generation),
                )
            )

    def live_rows(self, generation: int, batch: int = 2000) -> Iterator[tuple[int, str, str, str]]:
        """(n, judgment id, fingerprint, slot texts as stored JSON) of every live row at `generation`,
        by n, `batch` rows at a time (for `aqgr check`, which compares them with the archive)."""
        last = -1
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT n, judgment_id, fingerprint, texts FROM docs WHERE n > ? AND gen <= ? AND "
                    "(dead IS NULL OR dead > ?) ORDER BY n LIMIT ?",
                    (last, generation, generation, batch),
                ).fetchall()
            if not rows:
                return
            yield from rows
            last = rows[-1][0]

    def count_live(self, generation: int) -> int:
        with self._lock:
            return self._db.execute(
                "SELECT COUNT(*) FROM docs WHERE gen <= ? AND (dead IS NULL OR dead > ?)", (generation, generation)
            ).fetchone()[0]

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file (before the directory is copied)."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def texts(self, n: int) -> dict[str, str]:
        with self._lock:
            row = self._db.execute("SELECT texts FROM docs WHERE n = ?", (n,)).fetchone()
        if row is None:
            raise KeyError(n)
        return json.loads(row[0])

    def outdated(self) -> list[str]:
        """What an older aqgr left out of this file that every index made now has ([] when nothing):
        such an index is refused (`SummaryIndex.load`), never brought up to date."""
        with self._lock:
            facets = self._db.execute("SELECT value FROM meta WHERE key = 'facets'").fetchone()
            shown = self._db.execute("SELECT 1 FROM meta WHERE key = 'facet_shown'").fetchone()
            live = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'docs_live'"
            ).fetchone()
        if facets is None:
            return ["made by an older aqgr, before search filters"]
        if facets[0] != FACETS_VERSION:
            return [f"filter fields of facets version {facets[0]}, this aqgr reads {FACETS_VERSION}"]
        if shown is None:
            return ["made by an older aqgr, before the facets a result counts were kept per document"]
        if live is None:
            return ["made by an older aqgr, before the live documents had an index of their own (docs_live)"]
        return []

    # -- facets ------------------------------------------------------------------
    def mark_facets(self, version: int) -> None:
        """Record that every document is indexed with facets of `version` (a new index)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('facets', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (version,),
            )
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('facet_shown', 1)")

    def facet_ns(self, field: str, value: str) -> np.ndarray:
        """The n holding the term (field, value), live or not (the caller keeps the live ones)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT n FROM facet_terms WHERE field = ? AND value = ?", (field, value)
            ).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def date_ns(self, lo: str, hi: str) -> np.ndarray:
        """The n decided between the ISO dates `lo` and `hi` (inclusive), sorted."""
        with self._lock:
            rows = self._db.execute("SELECT n FROM facet_dates WHERE decided BETWEEN ? AND ?", (lo, hi)).fetchall()
        return np.unique(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))

    def facet_values(self, field: str, limit: int = 5000) -> list[str]:
        """Distinct values of a field, the most frequent first (for 'closest known' notes)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT value FROM facet_terms WHERE field = ? GROUP BY value ORDER BY COUNT(*) DESC, value LIMIT ?",
                (field, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def shown_terms(self, ns: Sequence[int]) -> list[tuple[int, str]]:
        """(n, terms) of each of `ns` that holds terms of the counted fields (FACET_FIELDS): terms as
        stored, "field<US>value" joined by <RS> (retrieval/embedded/facets.py `ShownTerms`)."""
        ns = list(dict.fromkeys(int(n) for n in ns))
        out: list[tuple[int, str]] = []
        with self._lock:
            for chunk in _chunks(ns, 500):
                rows = self._db.execute(
                    f"SELECT n, terms FROM facet_shown WHERE n IN ({','.join('?' * len(chunk))})", chunk
                )
                out.extend((n, terms) for n, terms in rows if terms)
        return out

    def next_n(self) -> int:
        """The first n never handed out: above every row's, and above every n a rolled-back
        generation used (so no part can hold an old document under a new one's n)."""
        with self._lock:
            top = self._db.execute("SELECT COALESCE(MAX(n), -1) + 1 FROM docs").fetchone()[0]
            mark = self._db.execute("SELECT value FROM meta WHERE key = 'next_n'").fetchone()
        return max(top, mark[0] if mark else 0)

    def quick_check(self) -> list[str]:
        """SQLite's own check of the file ([] when sound)."""
        with self._lock:
            found = [r[0] for r in self._db.execute("PRAGMA quick_check")]
        return [] if found == ["ok"] else found

    # -- writing (one writer: the caller holds the archive's index lock) ---------
    def stage(
        self,
        generation: int,
        added: Sequence[tuple[int, str, str, Mapping[str, str]]],
        removed: Iterable[str],
        facets: Mapping[int, tuple[Sequence[tuple[str, str]], str | None]] | None = None,
    ) -> list[int]:
        """Record generation `generation`'s changes, invisible until it is committed: `added`
        rows (n, judgment id, fingerprint, slot texts; a judgment already live is replaced),
        `removed` judgment ids, and `facets` of the added n ((field, value) terms, ISO date or
        None). Returns the n of the rows this generation kills."""
        killed: list[int] = []
        with self._lock, self._db:
            self._db.execute("BEGIN")
            victims = [a[1] for a in added] + list(removed)
            for chunk in _chunks(victims, 500):
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT n FROM docs WHERE +dead IS NULL AND +gen < ? AND judgment_id IN ({marks})",
                    (generation, *chunk),
                ).fetchall()
                killed += [r[0] for r in rows]
                self._db.execute(
                    f"UPDATE docs SET dead = ? WHERE +dead IS NULL AND +gen < ? AND judgment_id IN ({marks})",
                    (generation, generation, *chunk),
                )
            self._db.executemany(
                "INSERT INTO docs (n, judgment_id, fingerprint, texts, gen) VALUES (?, ?, ?, ?, ?)",
                ((n, j, f, json.dumps(dict(t), ensure_ascii=False), generation) for n, j, f, t in added),
            )
            for n, (terms, decided) in (facets or {}).items():
                self._db.executemany(
                    "INSERT OR IGNORE INTO facet_terms (field, value, n) VALUES (?, ?, ?)",
                    ((f, v, n) for f, v in terms),
                )
                if decided:
                    self._db.execute("INSERT OR REPLACE INTO facet_dates (n, decided) VALUES (?, ?)", (n, decided))
                shown = dict.fromkeys(
                    f"{f}{_UNIT}{_unseparated(v)}" for f, v in terms if f in FACET_FIELDS
                )  # a term once
                self._db.execute(
                    "INSERT OR REPLACE INTO facet_shown (n, terms) VALUES (?, ?)", (n, _RECORD.join(shown))
                )
            if added:
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES ('next_n', ?) ON CONFLICT (key) DO UPDATE SET "
                    "value = MAX(value, excluded.value)",
                    (max(a[0] for a in added) + 1,),
                )
        return killed

    def rollback(self, committed: int) -> list[int]:
        """Undo every generation after `committed` (an update that stopped before its manifest):
        returns the n of the rows it had added, for the retrievers to delete."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            added = [r[0] for r in self._db.execute("SELECT n FROM docs WHERE gen > ?", (committed,))]
            self._forget_facets(added)
            self._db.execute("DELETE FROM docs WHERE gen > ?", (committed,))
            self._db.execute("UPDATE docs SET dead = NULL WHERE dead > ?", (committed,))
        return added

    def purge(self, committed: int) -> list[int]:
        """Forget the rows dead at `committed`; returns their n (for the retrievers to delete)."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            dead = [
                r[0] for r in self._db.execute("SELECT n FROM docs WHERE dead IS NOT NULL AND dead <= ?", (committed,))
            ]
            self._forget_facets(dead)
            self._db.execute("DELETE FROM docs WHERE dead IS NOT NULL AND dead <= ?", (committed,))
        return dead

    def _forget_facets(self, ns: Sequence[int]) -> None:
        """Delete the facet rows of `ns` (inside the caller's transaction)."""
        for chunk in _chunks(list(ns), 500):
            marks = ",".join("?" * len(chunk))
            self._db.execute(f"DELETE FROM facet_terms WHERE n IN ({marks})", chunk)
            self._db.execute(f"DELETE FROM facet_dates WHERE n IN ({marks})", chunk)
            self._db.execute(f"DELETE FROM facet_shown WHERE n IN ({marks})", chunk)

    # -- pre-embedded sentences ------------------------------------------------
    def add_sentences(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = ((sentence_key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors))
        with self._lock, self._db:
            self._db.executemany("INSERT OR IGNORE INTO sentences (key, vector) VALUES (?, ?)", rows)

    def has_sentences(self, texts: Sequence[str]) -> set[str]:
        """Those of `texts` already stored."""
        found: set[str] = set()
        keyed = {sentence_key(t): t for t in texts}
        with self._lock:
            for chunk in _chunks(list(keyed), 500):
                rows = self._db.execute(f"SELECT key FROM sentences WHERE key IN ({','.join('?' * len(chunk))})", chunk)
                found.update(keyed[r[0]] for r in rows)
        return found

    def sentence_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of those `texts` that have one (keyed by the text as given)."""
        keyed: dict[bytes, list[str]] = {}
        for t in texts:
            keyed.setdefault(sentence_key(t), []).append(t)
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for chunk in _chunks(list(keyed), 500):
                rows = self._db.execute(
                    f"SELECT key, vector FROM sentences WHERE key IN ({','.join('?' * len(chunk))})", chunk
                )
                for key, blob in rows:
                    for t in keyed[key]:
                        out[t] = np.frombuffer(blob, dtype=np.float32)
        return out

    def count_sentences(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM sentences").fetchone()[0]


def _unseparated(value: str) -> str:
    """A facet value with the separators of `facet_shown` made spaces (normalised values hold none)."""
    return value.replace(_UNIT, " ").replace(_RECORD, " ")


def _chunks(items: Sequence, size: int) -> Iterator[Sequence]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
