"""The archive's citation graph kept in one SQLite file, updated judgment by judgment.

`CitationGraph.from_texts` parses every judgment at once; an archive of a million
judgments cannot, and adding one judgment should not relink them all. The store keeps,
per judgment, only the small facts the linker (retrieval/citations/links.py) reads about
it as a *cited* judgment: its date, its title forms (the title index rows) and the
reporter citations of its own header; and, as a *citing* judgment, what it found: its
links (first mention per cited judgment and pass), the citations it saw after each
title match (the reporter table's observations), and two lists of keys telling which
later changes can concern it: the title-index key at each of its "v." markers, and
the reporter-citation keys in its body (hashed).

Why a change touches only some judgments: a judgment's title links depend on the title
forms filed under its markers' keys, and its reporter links on the table entries of the
keys its body holds. So `add` (and `remove`) (1) file the new facts, (2) rerun the
title pass over the new judgments and every stored one with a marker under a key whose
forms changed, (3) recompute the table entries whose observations or header citations
changed, (4) rerun the reporter pass over the new judgments and every stored one whose
body holds a key whose entry changed (or whose judgment was replaced: its date may
differ). That keeps today's rules exact: a title fitting several judgments is dropped (a
new judgment can make a title ambiguous: its citers are relinked and lose the link), the
table keeps only unambiguous citations, dates are checked. The key lists are the
linker's own normalised words, so no full-text search is needed to find the judgments to
relink: their texts are re-read with `text_of(id)`, and only theirs.

Each link also keeps the citing judgment's treatment of the cited one
(retrieval/citations/treatment.py): of every mention of the pair in that pass, the most
severe treatment, with the sentence quoted and its character offsets in the citing
judgment's source text, and where two engines read it differently the other's reading
(`dissent`; a store made before that column is read with none, and its next update adds it). It is found when the citing judgment is linked, from its own
text only, so it is as incremental as the links. The store records the version of the
treatment engine that read them (`phrases.v1`; `llm.v1` with its provider, model and
prompt): opened to be updated with another engine it raises IndexMismatchError, and the
archive rebuilds it, as one of another linker; opened to be read (no engine given) it
serves whatever engine made it. Each citing judgment's pass is one model task
(aqgr/llm/deadline.py): a model-backed engine's calls for it end within its time.

Each `add` or `remove` is one SQLite transaction: a crash leaves the previous state, and
running it again completes it. Readers (another process) see the last committed state. A
large update (a first build: LARGE judgments filed or relinked in one pass) commits every
PAGE judgments instead, with what it has still to do kept in the file (the `work_*` tables,
meta 'pending'): killed, it has lost at most a page, and the next `add` or `remove` (or
`add([])`) completes it before doing its own; readers may see it part way. A large pass
runs on worker processes (retrieval/citations/passes.py) when the treatment engine allows.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from aqgr.foundation.errors import AqgrError, IndexMismatchError, IndexUnavailableError
from aqgr.foundation.sqlite_files import DAMAGED, read_uri, reason_of
from aqgr.retrieval.citations import snapshot
from aqgr.retrieval.citations.graph import CitationGraph, Mention
from aqgr.retrieval.citations.judgments import Judgment, parse_judgment
from aqgr.retrieval.citations.links import form_key, header_citations, title_keys
from aqgr.retrieval.citations.passes import (
    CITATION,
    TITLE,
    Findings,
    StoredTitles,
    findings,
    workers,
)
from aqgr.retrieval.citations.passes import (
    key_hash as _hash,
)
from aqgr.retrieval.citations.treatment import LABELS, SEVERITY, Treatment, TreatmentEngine, create, more_severe

# The store's layout, and the linker whose findings it keeps: bump LINKER when links.py,
# normalize.py or judgments.py change what they find (a store of another one is rebuilt).
FORMAT = "citation-store.v2"  # v2: links keep their treatment
LINKER = "links.v1"
TREATMENT = "phrases.v1"  # the default treatment engine (retrieval/citations/treatment.py): offline
HOW = ("title", "citation")  # stored as 0, 1: a pair's first mention is the earliest paragraph, title pass first
LARGE = 10_000  # judgments filed or relinked from which an update commits as it goes (and a pass uses workers)
PAGE = 1000  # judgments per commit of a large update

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- markers, cites: the judgment's rows of `markers` and `occurs`, packed (to replace them)
CREATE TABLE IF NOT EXISTS judgments(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, date TEXT,
    markers BLOB NOT NULL DEFAULT x'', cites BLOB NOT NULL DEFAULT x'');
-- the title index: each title form (appellant words, respondent words), under its key
CREATE TABLE IF NOT EXISTS titles(a_last TEXT, r_first TEXT, doc INTEGER, a TEXT, r TEXT,
    PRIMARY KEY(a_last, r_first, doc, a, r)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS titles_doc ON titles(doc);
-- reporter citations of the judgment's own header that fit its year
CREATE TABLE IF NOT EXISTS headers(key TEXT, doc INTEGER, PRIMARY KEY(key, doc)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS headers_doc ON headers(doc);
-- hashes of the marker_keys of the judgment's "v." markers, and of the citation keys in its body
CREATE TABLE IF NOT EXISTS markers(hash INTEGER, doc INTEGER, PRIMARY KEY(hash, doc)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS occurs(hash INTEGER, doc INTEGER, PRIMARY KEY(hash, doc)) WITHOUT ROWID;
-- citations the citing judgment printed right after a title match of the cited one
CREATE TABLE IF NOT EXISTS observed(citing INTEGER, key TEXT, cited INTEGER, PRIMARY KEY(citing, key, cited)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS observed_key ON observed(key, cited);
-- the reporter table: the citation keys that name one judgment only
CREATE TABLE IF NOT EXISTS reporter(key TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS reporter_doc ON reporter(doc);
-- per pass (how: 0 title, 1 citation), the first mention of each cited judgment: seq orders
-- mentions within the citing judgment's pass
-- treatment: index into treatment.LABELS, with sentence, t_start, t_end: the citing sentence and its
-- offsets in the citing judgment's source text, and cue: the words that decided (the most severe of the pass's mentions);
-- dissent: another engine's differing reading of that mention, "engine: label" (treatment.reconciled), '' when none
CREATE TABLE IF NOT EXISTS links(citing INTEGER, cited INTEGER, how INTEGER, paragraph INTEGER, seq INTEGER,
    evidence TEXT NOT NULL, treatment INTEGER NOT NULL DEFAULT 5, sentence TEXT NOT NULL DEFAULT '',
    t_start INTEGER NOT NULL DEFAULT 0, t_end INTEGER NOT NULL DEFAULT 0, cue TEXT NOT NULL DEFAULT '',
    dissent TEXT NOT NULL DEFAULT '', PRIMARY KEY(citing, cited, how)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_treated ON links(cited, treatment);
CREATE INDEX IF NOT EXISTS links_cited ON links(cited);
"""
# What the update under way has touched: kept in the file, so that a large update killed
# part way is completed by the next one (meta 'pending' names the step it had reached).
WORK_TABLES = ("work_fresh", "work_forms", "work_keys", "work_entries", "work_todo", "work_table")
WORK = """
CREATE TABLE IF NOT EXISTS work_fresh(doc INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS work_forms(hash INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS work_keys(key TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS work_entries(hash INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS work_todo(doc INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS work_table(key TEXT PRIMARY KEY, doc INTEGER);
"""
FILING, TITLES, CITATIONS = "filing", "titles", "citations"  # the steps of an update, as meta 'pending' records them

Progress = Callable[[str, int, "int | None"], None]


class CitationStore:
    """The citation graph of one archive, in the SQLite file at `path` (made if absent).

    `treatments`: the engine that reads the treatments of the links an update makes; a new
    file records its version. None: the store is read as it is, whatever engine made it (an
    update then needs it to be the default TREATMENT's).

    `read_only`: opened to be read (a search, `aqgr citations`): the file is neither made nor
    written, and one in a read-only folder is read as it is.

    Raises IndexMismatchError for a file that is not a citation store of this FORMAT and
    LINKER, or (with `treatments`) one made by another treatment engine (rebuild: make a store
    anew beside it, `add` every judgment, then move it over this one: aqgr/archive/linking.py);
    IndexUnavailableError when the file cannot be opened for a reason outside it (a full disk,
    a read-only folder, permissions): then it is no store to rebuild, and is left as it is."""

    def __init__(self, path: Path | str, treatments: TreatmentEngine | None = None, *, read_only: bool = False):
        self._treatments = treatments
        self.path = Path(path)
        self.read_only = read_only  # opened to be read (a search): nothing is made or written, a read-only home too
        try:
            if read_only:
                self._db = sqlite3.connect(
                    read_uri(self.path), uri=True, isolation_level=None, check_same_thread=False, timeout=60
                )
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=60)
        except (sqlite3.Error, OSError) as exc:
            raise self._unopenable(exc) from None
        self._lock = threading.Lock()
        self._db.create_function("key_hash", 1, _hash, deterministic=True)
        try:
            if not read_only:
                self._db.execute("PRAGMA journal_mode=WAL")  # readers (the search) go on while an update writes
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages
            found = self._meta()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise self._unopenable(exc) from exc
        expected = [("format", FORMAT), ("linker", LINKER)] + (
            [("treatment", treatments.version)] if treatments is not None else []
        )
        wrong = [f"{k} {found.get(k)!r}, expected {v!r}" for k, v in expected if found.get(k) != v]
        self.treatment: str = found.get(
            "treatment", TREATMENT
        )  # the version of the engine that read the stored treatments
        if wrong:
            self._db.close()
            raise IndexMismatchError(str(self.path), [f"citation store {w}" for w in wrong])

    def _unopenable(self, exc: BaseException) -> AqgrError:
        """IndexMismatchError for a file that is not a sound citation store (rebuilt: `CitationStore`),
        IndexUnavailableError when the cause is outside it: a full disk, a read-only folder,
        permissions (aqgr/foundation/sqlite_files.py). Such a store is left exactly as it is."""
        reason = reason_of(exc, self.path)
        if reason == DAMAGED:
            return IndexMismatchError(str(self.path), [f"not a citation store ({exc})"])
        return IndexUnavailableError(str(self.path), reason, str(exc) or type(exc).__name__)

    def _meta(self) -> dict[str, str]:
        """The file's format, linker and treatment engine; an empty file is made a store first
        (opened `read_only`, it reads as no store)."""
        tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" in tables:
            return dict(self._db.execute("SELECT key, value FROM meta"))
        if tables or self.read_only:
            return {}
        made = {
            "format": FORMAT,
            "linker": LINKER,
            "treatment": self._treatments.version if self._treatments is not None else TREATMENT,
        }
        with self._write():
            _run(self._db, SCHEMA)
            self._db.executemany("INSERT INTO meta VALUES (?, ?)", list(made.items()))
        return made

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "CitationStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading -------------------------------------------------------------
    def ids(self) -> set[str]:
        """The ids of the judgments stored."""
        return {name for (name,) in self._db.execute("SELECT name FROM judgments")}

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]

    def graph(self) -> CitationGraph:
        """The graph as committed now: pairs as numpy arrays, mentions read from this file on
        demand (a mention of a pair removed since reads as absent)."""
        return self._read(with_ids=False)[0]

    def graph_and_ids(self) -> tuple[CitationGraph, set[str]]:
        """`graph()` and `ids()` as of one moment, every judgment's name read once (what a
        search process checks against its index before it uses the graph). From the snapshot
        file when it holds this commit (retrieval/citations/snapshot.py), else from the store."""
        return self._read(with_ids=True)

    def keep_snapshot(self) -> CitationGraph:
        """`graph()`, with the snapshot file made to hold it when it does not yet (a writer's
        step, `aqgr index`'s after an update: searches then open the graph from it)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")  # no update between the rows read and the generation named
            try:
                generation = self._generation() or self._new_generation()
                found = snapshot.load(self.snapshot_path, generation)
                if found is None:
                    found = self._rows()
                    snapshot.save(self.snapshot_path, generation, found, mode=self.path.stat().st_mode & 0o777)
            finally:
                self._db.execute("COMMIT")
        return self._graph(found)

    @property
    def snapshot_path(self) -> Path:
        return snapshot.snapshot_path(self.path)

    def _generation(self) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return row[0] if row else None

    def _new_generation(self) -> str:
        """Name the state about to be committed anew (in the caller's write transaction): a
        snapshot of any earlier state no longer passes for it."""
        generation = uuid.uuid4().hex
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (generation,))
        return generation

    def _read(self, *, with_ids: bool) -> tuple[CitationGraph, set[str] | None]:
        with self._lock:
            self._db.execute("BEGIN")  # one snapshot for the links and the names
            try:
                found = snapshot.load(self.snapshot_path, self._generation()) or self._rows()
            finally:
                self._db.execute("COMMIT")
        return self._graph(found), (set(found.all_names) if with_ids else None)

    def _rows(self) -> snapshot.Snapshot:
        """The graph's arrays read from the store, in the caller's transaction: the names of the
        judgments in a link, numbered in that order; each distinct link's citing and cited numbers;
        the names of the other judgments."""
        cursor = self._db.execute("SELECT DISTINCT citing, cited FROM links")
        chunks = [np.zeros((0, 2), dtype=np.int64)]
        while rows := cursor.fetchmany(1 << 16):
            chunks.append(np.array(rows, dtype=np.int64))
        edges = np.concatenate(chunks)
        # the store row ids in the links, ascending, and each end's place among them
        # (at 1e6 judgments 0.13 s; np.unique then np.searchsorted took 1.1 s)
        nodes, index = np.unique(edges.ravel(), return_inverse=True)
        index = index.reshape(edges.shape)
        # Every (row id, name), from the name's index (a twelfth of the table's pages at
        # 1e6, which also hold each judgment's markers and citations): one scan, not an
        # IN-list per 900 nodes; at 1e6 with `ids` 1.12 s, against 1.60-1.83 s.
        named = self._db.execute("SELECT id, name FROM judgments").fetchall()
        row_ids = np.fromiter((row[0] for row in named), dtype=np.int64, count=len(named))
        order = np.argsort(row_ids)
        found = np.searchsorted(row_ids, nodes, sorter=order)  # each node's place in `order`
        if len(nodes) and (found.max() >= len(order) or (row_ids[order[found]] != nodes).any()):
            raise sqlite3.DatabaseError(f"{self.path}: a citation link names a judgment the store does not hold")
        linked = np.zeros(len(named), dtype=bool)
        linked[order[found]] = True
        names = [named[i][1] for i in order[found].tolist()]
        others = [named[i][1] for i in np.flatnonzero(~linked).tolist()]
        return snapshot.Snapshot(names, others, index[:, 0], index[:, 1])

    def _graph(self, found: snapshot.Snapshot) -> CitationGraph:
        mentions = _StoredMentions(self.path)
        return CitationGraph.from_arrays(
            found.node_names, found.citing, found.cited, mentions, treated=mentions.treated, joined=found.joined
        )

    # -- updating ------------------------------------------------------------
    @property
    def pending(self) -> str | None:
        """The step a large update killed part way had reached ("filing", "titles", "citations"),
        or None: the next `add` or `remove` completes it (`add([])` completes it alone)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'pending'").fetchone()
        return row[0] if row else None

    def add(
        self, texts: Iterable[tuple[str, str]], *, text_of: Callable[[str], str], progress: Progress | None = None
    ) -> None:
        """Add (or replace) the judgments of `texts` ((id, source text) pairs, read one at a
        time) and relink what they change: their own citations, and those of stored
        judgments that may cite them (or whose title matches they make ambiguous).

        `text_of(id)` returns the source text of a judgment, stored or being added: every
        judgment relinked is re-read through it (the new ones twice more: their title pass
        needs every new title filed first). `progress(stage, done, total)`: stage "read"
        (total None) per judgment of `texts`, then "titles" and "citations" per judgment
        relinked."""
        with self._update(text_of, progress):
            for n, (doc_id, text) in enumerate(texts, 1):
                self._file(parse_judgment(doc_id, text, header_only=True))
                if progress is not None:
                    progress("read", n, None)
                if n >= LARGE and n % PAGE == 0:
                    self._checkpoint()
            self._relink(text_of, progress)

    def remove(self, ids: Iterable[str], *, text_of: Callable[[str], str], progress: Progress | None = None) -> None:
        """Remove these judgments (ids not stored are ignored) and every link to or from them;
        stored judgments that cited them, or whose title matches they made ambiguous, are
        relinked (re-read with `text_of`). `progress` as in `add`."""
        with self._update(text_of, progress):
            for doc_id in ids:
                row = self._db.execute("SELECT id FROM judgments WHERE name = ?", (doc_id,)).fetchone()
                if row is not None:
                    self._unfile(row[0])
                    self._db.execute("DELETE FROM work_fresh WHERE doc = ?", row)
                    self._db.execute("DELETE FROM links WHERE citing = ? OR cited = ?", (row[0], row[0]))
                    self._db.execute("DELETE FROM judgments WHERE id = ?", row)
            self._relink(text_of, progress)

    # -- internals -----------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[None]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _checkpoint(self) -> None:
        """Commit what the update has done so far (a large update's: see LARGE) and go on writing."""
        self._db.execute("COMMIT")
        self._db.execute("BEGIN IMMEDIATE")

    @contextmanager
    def _update(self, text_of: Callable[[str], str], progress: Progress | None) -> Iterator[None]:
        """One update: a transaction, or for a large one a series of them (`_checkpoint`), each
        leaving the work tables and meta 'pending' as the next update needs them to complete it.
        An earlier update cut short (only a large one can be) is completed first."""
        with self._write():
            if (
                self._treatments is None
            ):  # opened to be read: an update reads treatments with the engine that made the store
                if self.treatment != TREATMENT:
                    raise IndexMismatchError(
                        str(self.path),
                        [f"citation store treatment {self.treatment!r}: open it with that engine to update it"],
                    )
                self._treatments = create(TREATMENT)
            _run(self._db, WORK)
            if not _has_dissent(self._db):  # a store made before links kept a dissent: '' for every link so far
                self._db.execute("ALTER TABLE links ADD COLUMN dissent TEXT NOT NULL DEFAULT ''")
            pending = self.pending
            if pending in (TITLES, CITATIONS):
                self._relink(text_of, progress, resume=pending)
            if pending != FILING:  # what an update cut short while filing had filed is relinked with this one's
                self._clear_work()
            self._set_pending(FILING)
            self._new_generation()  # committed with the update's first page: the snapshot is stale from then on
            yield
            self._clear_work()
            self._set_pending(None)

    def _clear_work(self) -> None:
        for table in WORK_TABLES:
            self._db.execute(f"DELETE FROM {table}")

    def _set_pending(self, step: str | None) -> None:
        self._db.execute("DELETE FROM meta WHERE key = 'pending'")
        if step is not None:
            self._db.execute("INSERT INTO meta VALUES ('pending', ?)", (step,))

    def _file(self, j: Judgment) -> None:
        """Store a judgment's facts as a cited judgment (replacing any older ones); mark it new."""
        db = self._db
        row = db.execute("SELECT id FROM judgments WHERE name = ?", (j.doc_id,)).fetchone()
        date = j.date.isoformat() if j.date else None
        if row is None:
            doc = db.execute("INSERT INTO judgments(name, date) VALUES (?, ?)", (j.doc_id, date)).lastrowid
        else:
            doc = row[0]
            self._unfile(doc)
            db.execute("UPDATE judgments SET date = ? WHERE id = ?", (date, doc))
        forms = title_keys(j)
        db.executemany(
            "INSERT INTO titles VALUES (?, ?, ?, ?, ?)", [(*key, doc, " ".join(a), " ".join(r)) for key, a, r in forms]
        )
        db.executemany("INSERT OR IGNORE INTO work_forms VALUES (?)", [(_hash(form_key(a, r)),) for _, a, r in forms])
        headers = header_citations(j)
        db.executemany("INSERT INTO headers VALUES (?, ?)", [(key, doc) for key in headers])
        db.executemany("INSERT OR IGNORE INTO work_keys VALUES (?)", [(key,) for key in headers])
        db.execute("INSERT OR IGNORE INTO work_fresh VALUES (?)", (doc,))

    def _unfile(self, doc: int) -> None:
        """Drop a judgment's facts and findings (not its row, nor links to it), noting the
        title-index keys and citation keys whose judgments change."""
        db = self._db
        db.executemany(
            "INSERT OR IGNORE INTO work_forms VALUES (?)",
            [
                (_hash(form_key(a.split(), r.split())),)
                for a, r in db.execute("SELECT a, r FROM titles WHERE doc = ?", (doc,)).fetchall()
            ],
        )
        db.execute("INSERT OR IGNORE INTO work_keys SELECT key FROM headers WHERE doc = ?", (doc,))
        db.execute("INSERT OR IGNORE INTO work_keys SELECT key FROM observed WHERE citing = ?", (doc,))
        db.execute("DELETE FROM titles WHERE doc = ?", (doc,))
        db.execute("DELETE FROM headers WHERE doc = ?", (doc,))
        db.execute("DELETE FROM observed WHERE citing = ?", (doc,))
        db.execute("DELETE FROM links WHERE citing = ?", (doc,))
        self._set_hashes(doc, "markers", set())
        self._set_hashes(doc, "occurs", set())

    def _relink(self, text_of: Callable[[str], str], progress: Progress | None, resume: str | None = None) -> None:
        """Steps (2)-(4) of the module's account, from the start or (`resume`) from the pass a
        killed update had reached: its `work_todo` holds the judgments that pass had left."""
        db = self._db
        titles = StoredTitles(db)
        if resume is None:
            # (2) the title pass, over the new judgments and those with a marker a changed title form fits
            db.execute("INSERT OR IGNORE INTO work_todo SELECT doc FROM work_fresh")
            db.execute(
                "INSERT OR IGNORE INTO work_todo SELECT m.doc FROM work_forms f CROSS JOIN markers m ON m.hash = f.hash"
            )
            self._set_pending(TITLES)
        if resume != CITATIONS:
            self._pass(TITLE, "titles", text_of, progress, titles)
            # (3) the reporter table's entries whose observations or header citations changed:
            # a key names one judgment, or none when it names several
            _run(
                db,
                """
                DELETE FROM work_table;
                INSERT INTO work_table SELECT key, CASE WHEN COUNT(DISTINCT doc) = 1 THEN MIN(doc) END FROM (
                    SELECT o.key, o.cited AS doc FROM work_keys k CROSS JOIN observed o ON o.key = k.key
                    UNION ALL SELECT h.key, h.doc FROM work_keys k CROSS JOIN headers h ON h.key = k.key) GROUP BY key;
                INSERT OR IGNORE INTO work_entries SELECT key_hash(k.key) FROM work_keys k LEFT JOIN reporter r ON r.key = k.key
                    LEFT JOIN work_table t ON t.key = k.key WHERE r.doc IS NOT t.doc;
                DELETE FROM reporter WHERE key IN (SELECT key FROM work_keys);
                INSERT INTO reporter SELECT key, doc FROM work_table WHERE doc IS NOT NULL;
                INSERT OR IGNORE INTO work_entries SELECT key_hash(key) FROM reporter WHERE doc IN (SELECT doc FROM work_fresh);
            """,
            )
            # (4) the reporter pass, over the new judgments and those whose body holds a changed entry's key
            db.execute("DELETE FROM work_todo")
            db.execute("INSERT OR IGNORE INTO work_todo SELECT doc FROM work_fresh")
            db.execute(
                "INSERT OR IGNORE INTO work_todo SELECT o.doc FROM work_entries e CROSS JOIN occurs o ON o.hash = e.hash"
            )
            self._set_pending(CITATIONS)
        self._pass(CITATION, "citations", text_of, progress, titles)

    def _pass(
        self, how: int, stage: str, text_of: Callable[[str], str], progress: Progress | None, titles: StoredTitles
    ) -> None:
        """One pass over the judgments of `work_todo` still stored, in row order. A large one
        (LARGE judgments or more) is committed first, so that worker processes (passes.workers())
        read what the update has filed, then every PAGE judgments, each page leaving `work_todo`."""
        db = self._db
        total = db.execute("SELECT COUNT(*) FROM work_todo t CROSS JOIN judgments j ON j.id = t.doc").fetchone()[0]
        large = total >= LARGE
        processes = workers() if large and getattr(self._treatments, "portable", False) else 0
        if large:
            self._checkpoint()
        todo = ((doc, name, text_of(name)) for doc, name in self._todo())
        done = 0
        for doc, found in findings(
            how, todo, db=db, titles=titles, engine=self._treatments, path=self.path, processes=processes
        ):
            self._keep(doc, how, found, titles)
            done += 1
            if progress is not None:
                progress(stage, done, total)
            if large and done % PAGE == 0:
                db.execute("DELETE FROM work_todo WHERE doc <= ?", (doc,))
                self._checkpoint()

    def _todo(self) -> Iterator[tuple[int, str]]:
        """(row id, judgment id) of each judgment in `work_todo` still stored, in row order, read a page at a time."""
        last = -1
        while page := self._db.execute(
            "SELECT t.doc, j.name FROM work_todo t CROSS JOIN judgments j ON j.id = t.doc WHERE t.doc > ? "
            "ORDER BY t.doc LIMIT ?",
            (last, PAGE),
        ).fetchall():
            yield from page
            last = page[-1][0]

    def _keep(self, doc: int, how: int, found: Findings, titles: StoredTitles) -> None:
        """File what one judgment's pass found: its links of that pass (replacing the old ones),
        for the title pass the citations it saw after title matches, and its key hashes."""
        db = self._db
        if how == TITLE:
            db.execute("INSERT OR IGNORE INTO work_keys SELECT key FROM observed WHERE citing = ?", (doc,))
            db.execute("DELETE FROM observed WHERE citing = ?", (doc,))
            db.executemany(
                "INSERT INTO observed VALUES (?, ?, ?)", [(doc, key, titles.id_of(cited)) for key, cited in found.seen]
            )
            db.executemany("INSERT OR IGNORE INTO work_keys VALUES (?)", [(key,) for key, _ in found.seen])
        db.execute("DELETE FROM links WHERE citing = ? AND how = ?", (doc, how))
        db.executemany(
            "INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(doc, titles.id_of(cited), how, *rest) for cited, *rest in found.links],
        )
        self._set_hashes(doc, "markers" if how == TITLE else "occurs", found.hashes)

    def _set_hashes(self, doc: int, table: str, hashes: set[int]) -> None:
        """Make `table` (markers or occurs) hold exactly these hashes for the judgment."""
        column = {"markers": "markers", "occurs": "cites"}[table]
        (blob,) = self._db.execute(f"SELECT {column} FROM judgments WHERE id = ?", (doc,)).fetchone()
        old = set(array("q", blob))
        if old == hashes:
            return
        self._db.executemany(f"DELETE FROM {table} WHERE hash = ? AND doc = ?", [(h, doc) for h in old - hashes])
        self._db.executemany(f"INSERT INTO {table} VALUES (?, ?)", [(h, doc) for h in hashes - old])
        self._db.execute(f"UPDATE judgments SET {column} = ? WHERE id = ?", (array("q", sorted(hashes)).tobytes(), doc))


class _StoredMentions(Mapping[tuple[str, str], Mention]):
    """(citing, cited) -> the first mention, read from the store file when asked (its own
    connection, opened on first use, only read through; safe to share between threads)."""

    # {dissent}: l.dissent, or '' in a store made before links kept one (its next update adds the column)
    _ROWS = (
        "SELECT l.how, l.evidence, l.treatment, l.sentence, l.t_start, l.t_end, l.cue, {dissent} FROM links l "
        "JOIN judgments c ON c.id = l.citing JOIN judgments d ON d.id = l.cited WHERE c.name = ? AND d.name = ? "
        "ORDER BY l.paragraph, l.how, l.seq"
    )
    _TREATED = (
        "SELECT c.name, l.treatment, l.sentence, l.t_start, l.t_end, l.cue, {dissent} FROM links l JOIN judgments d "
        "ON d.id = l.cited JOIN judgments c ON c.id = l.citing WHERE d.name = ? AND l.treatment IN ({wanted})"
    )

    def __init__(self, path: Path):
        self._path = path
        self._db: sqlite3.Connection | None = None
        self._dissent = "l.dissent"
        self._lock = threading.Lock()

    def _query(self, sql: str, args: tuple = (), **parts: str) -> list[tuple]:
        with self._lock:
            if self._db is None:  # read-only: a search's, on a read-only home too
                self._db = sqlite3.connect(read_uri(self._path), uri=True, check_same_thread=False, timeout=60)
                self._dissent = "l.dissent" if _has_dissent(self._db) else "''"
            return self._db.execute(sql.format(dissent=self._dissent, **parts), args).fetchall()

    def __getitem__(self, pair: tuple[str, str]) -> Mention:
        """The pair's first mention, with the most severe treatment of its passes."""
        rows = self._query(self._ROWS, tuple(pair))
        if not rows:
            raise KeyError(pair)
        treatment = None
        for row in rows:
            treatment = more_severe(treatment, _treatment(*row[2:]))
        return Mention(HOW[rows[0][0]], rows[0][1], treatment)

    def treated(self, cited: str, labels: Iterable[str]) -> list[tuple[str, Treatment]]:
        """(citing id, treatment) of each judgment whose treatment of `cited` is one of
        `labels`, the most severe of its passes, most severe first, then by the citing
        judgment's id (a stable order for display; no ranking depends on it)."""
        wanted = [LABELS.index(label) for label in labels]
        if not wanted:
            return []
        best: dict[str, Treatment] = {}
        for name, *row in self._query(self._TREATED, (cited, *wanted), wanted=",".join("?" * len(wanted))):
            best[name] = more_severe(best.get(name), _treatment(*row))
        return sorted(best.items(), key=lambda item: (SEVERITY[item[1].label], item[0]))

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(
            self._query(
                "SELECT DISTINCT c.name, d.name FROM links l JOIN judgments c ON c.id = l.citing "
                "JOIN judgments d ON d.id = l.cited"
            )
        )

    def __len__(self) -> int:
        return self._query("SELECT COUNT(*) FROM (SELECT DISTINCT citing, cited FROM links)")[0][0]

    def __del__(self) -> None:
        if self._db is not None:
            self._db.close()


def _treatment(label: int, sentence: str, start: int, end: int, cue: str, dissent: str) -> Treatment:
    return Treatment(LABELS[label], sentence, start, end, cue, dissent)


def _has_dissent(db: sqlite3.Connection) -> bool:
    """Whether the store's links keep a dissent (stores made before do not)."""
    return any(row[1] == "dissent" for row in db.execute("PRAGMA table_info(links)"))


def _run(db: sqlite3.Connection, script: str) -> None:
    """Each statement of `script`, inside the open transaction (executescript would commit it)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)
