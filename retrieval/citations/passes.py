"""One judgment's turn in the citation store's two passes, here or in worker processes.

The store (retrieval/citations/store.py) relinks a judgment in two passes: the title pass
(links.title_links, over the title index) and the reporter pass (links.citation_links,
over the reporter table), each followed by the treatment of every link it found. What one
judgment's pass finds (`Findings`) depends only on its own text and on what the store
held when the pass began (title index, dates, reporter table), none of which the pass
itself changes; so the judgments of a pass can be read in any order and by several
processes at once, and the store, the one writer, files their findings in order.

`findings(...)` runs a pass over (row id, judgment id, text) triples: in this process
(through the store's own connection, which sees its uncommitted writes), or, for a large
pass with an engine a worker can make again by name (`portable`), on `workers()` worker
processes, each reading the store's committed state through a connection of its own. The
findings are the same either way (tests/retrieval/test_citation_store.py compares them).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import pickle
import queue
import sqlite3
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from aqgr.llm.deadline import task as model_task
from aqgr.retrieval.citations.judgments import Judgment, parse_judgment
from aqgr.retrieval.citations.links import Forms, Link, TitleForms, citation_links, reporter_citations, title_links
from aqgr.retrieval.citations.treatment import LABELS, Treatment, TreatmentEngine, create, more_severe

TITLE, CITATION = 0, 1  # the passes, as the store records them (links.how)
CACHE = 1 << 16  # title-index keys, facts and ids kept in memory during one pass
CHUNK = 32  # judgments per task handed to a worker
WORKERS_ENV = "AQGR_CITATION_WORKERS"  # worker processes for a large pass; 0 or 1: none

Row = tuple  # (cited id, paragraph, seq, evidence, treatment index, sentence, t_start, t_end, cue, dissent)


@dataclass
class Findings:
    """What one judgment's pass found: its links (`Row`s, the first mention of each cited
    judgment with the most severe treatment of its mentions), for the title pass the citations
    printed after each title match (`seen`: (citation key, cited id)), and the hashes of the keys
    a later change can concern it by (its markers' title-index keys; its body's citation keys)."""

    links: list[Row]
    hashes: set[int]
    seen: list[tuple[str, str]] = field(default_factory=list)


def key_hash(key: str) -> int:
    """A stable 64-bit number for a marker key or a citation key (a collision only relinks more)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big", signed=True)


# -- what a pass reads ---------------------------------------------------------------


class StoredTitles(TitleForms):
    """The title index and the judgments' dates as the linker reads them, from the store
    (cached for one pass: nothing they read changes while it runs)."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db
        self.judgments = StoredFacts(db)
        self._forms = lru_cache(maxsize=CACHE)(lambda key: Forms.of(self._read_entries(key)))
        self.id_of = lru_cache(maxsize=CACHE)(self._id_of)

    def entries(self, key: tuple[str, str]) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
        return self._read_entries(key)

    def forms(self, key: tuple[str, str]) -> Forms:
        return self._forms(key)

    def _read_entries(self, key: tuple[str, str]) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
        rows = self._db.execute(
            "SELECT j.name, t.a, t.r FROM titles t JOIN judgments j ON j.id = t.doc "
            "WHERE t.a_last = ? AND t.r_first = ?",
            key,
        )
        return tuple((name, tuple(a.split()), tuple(r.split())) for name, a, r in rows)

    def _id_of(self, name: str) -> int:
        return self._db.execute("SELECT id FROM judgments WHERE name = ?", (name,)).fetchone()[0]


class StoredFacts(Mapping[str, Judgment]):
    """id -> the judgment as a cited one (its date; no text), read from the store."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db
        self._get = lru_cache(maxsize=CACHE)(self._read)

    def _read(self, name: str) -> Judgment | None:
        row = self._db.execute("SELECT date FROM judgments WHERE name = ?", (name,)).fetchone()
        if row is None:
            return None
        return Judgment(name, "", "", "", dt.date.fromisoformat(row[0]) if row[0] else None, (), ())

    def __getitem__(self, name: str) -> Judgment:
        found = self._get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for (name,) in self._db.execute("SELECT name FROM judgments"))

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]


def reporter_table(db: sqlite3.Connection, keys: Sequence[str]) -> dict[str, str]:
    """citation key -> the judgment id the reporter table files it under, for these keys."""
    if not keys:
        return {}
    return dict(
        db.execute(
            f"SELECT r.key, j.name FROM reporter r JOIN judgments j ON j.id = r.doc "
            f"WHERE r.key IN ({','.join('?' * len(keys))})",
            list(keys),
        )
    )


# -- one judgment's pass -------------------------------------------------------------


def title_findings(name: str, text: str, titles: TitleForms, engine: TreatmentEngine) -> Findings:
    judgment = parse_judgment(name, text)
    found = title_links(judgment, titles)
    return Findings(
        link_rows(found.links, judgment, text, engine),
        {key_hash(key) for key in found.keys},
        [(key, cited) for key, docs in found.seen.items() for cited in docs],
    )


def citation_findings(
    name: str,
    text: str,
    titles: TitleForms,
    table: Callable[[Sequence[str]], Mapping[str, str]],
    engine: TreatmentEngine,
) -> Findings:
    judgment = parse_judgment(name, text)
    found = reporter_citations(judgment)
    keys = sorted({c.key for _, c in found})
    links = citation_links(judgment, table(keys) if keys else {}, titles.judgments, found)
    return Findings(link_rows(links, judgment, text, engine), {key_hash(key) for key in keys})


def link_rows(links: Sequence[Link], judgment: Judgment, text: str, engine: TreatmentEngine) -> list[Row]:
    """The first mention of each cited judgment, with the most severe treatment of its mentions
    (offsets in `text`, the judgment's source), read as one model task (a model-backed engine's
    calls end within a judgment's time)."""
    first: dict[str, tuple[int, int, str]] = {}
    treated: dict[str, Treatment] = {}
    starts = paragraph_starts(text, judgment) if links else []
    with model_task("judgment"):
        for seq, link in enumerate(links):
            first.setdefault(link.cited, (link.paragraph, seq, link.evidence))
            treated[link.cited] = more_severe(treated.get(link.cited), treat(engine, link, judgment, starts))
    return [
        (cited, *mention, LABELS.index(t.label), t.sentence, t.start, t.end, t.cue, t.dissent)
        for cited, mention in first.items()
        for t in (treated[cited],)
    ]


def treat(engine: TreatmentEngine, link: Link, judgment: Judgment, starts: Sequence[int]) -> Treatment:
    """The engine's treatment at the link's mention (of the case named as `link.evidence`), its
    offsets in the citing judgment's source text (`starts`: its paragraphs' offsets there, `paragraph_starts`)."""
    found = engine.classify(judgment.paragraphs[link.paragraph], link.start, link.end, link.evidence)
    at = starts[link.paragraph]
    return replace(found, start=found.start + at, end=found.end + at)


def paragraph_starts(text: str, judgment: Judgment) -> list[int]:
    """The offset in `text` of each of the judgment's paragraphs (parse_judgment: the
    stripped non-empty lines after the header)."""
    starts, at = [], 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            starts.append(at + len(line) - len(line.lstrip()))
        at += len(line)
    return starts[len(judgment.header) :]


# -- a whole pass ----------------------------------------------------------------------


def workers() -> int:
    """Worker processes for a large pass: AQGR_CITATION_WORKERS, else the cores this process
    may use (at most 4); 0 when that is one (the pass then runs in this process)."""
    wanted = os.environ.get(WORKERS_ENV, "").strip()
    if wanted:
        try:
            n = int(wanted)
        except ValueError:
            raise ValueError(f"{WORKERS_ENV}={wanted!r}: expected a whole number of worker processes") from None
    else:
        try:
            n = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # not Linux
            n = os.cpu_count() or 1
        n = min(n, 4)
    return n if n > 1 else 0


def findings(
    how: int,
    items: Iterable[tuple[int, str, str]],
    *,
    db: sqlite3.Connection,
    titles: StoredTitles,
    engine: TreatmentEngine,
    path: Path | None = None,
    processes: int = 0,
) -> Iterator[tuple[int, Findings]]:
    """(row id, Findings) of each (row id, judgment id, text) of `items`, in their order: in this
    process through `db` and `titles`, or with `processes` > 0 (and `path`, the store's file,
    committed as the pass reads it) on that many worker processes."""
    if processes <= 0 or path is None:
        for doc, name, text in items:
            yield doc, _one(how, name, text, db, titles, engine)
        return
    pool = _Workers(processes, path, engine.name)
    pending: deque[tuple[int, list[int]]] = deque()  # (worker, row ids) of each task handed out, in order
    try:
        turn = 0
        for chunk in _chunks(items):
            pool.send(turn, (how, [(name, text) for _, name, text in chunk]))
            pending.append((turn, [doc for doc, _, _ in chunk]))
            turn = (turn + 1) % processes
            while len(pending) > 2 * processes:  # a bounded number of texts in flight
                yield from _ready(pool, *pending.popleft())
        while pending:
            yield from _ready(pool, *pending.popleft())
    finally:
        pool.close(abandon=bool(pending))


def _chunks(items: Iterable[tuple[int, str, str]]) -> Iterator[list[tuple[int, str, str]]]:
    chunk: list[tuple[int, str, str]] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _ready(pool: "_Workers", worker: int, docs: list[int]) -> Iterator[tuple[int, Findings]]:
    yield from zip(docs, pool.receive(worker))


def _one(
    how: int, name: str, text: str, db: sqlite3.Connection, titles: StoredTitles, engine: TreatmentEngine
) -> Findings:
    if how == TITLE:
        return title_findings(name, text, titles, engine)
    return citation_findings(name, text, titles, lambda keys: reporter_table(db, keys), engine)


class _Workers:
    """Worker processes (`_serve(store path, engine name)` in a new interpreter), each answering
    the tasks written to its stdin, one pickle each, in order, with one pickle each on its stdout.
    Started afresh rather than forked (no copy of a process that holds connections and threads)
    and not through multiprocessing (which would run the caller's main script again in each)."""

    def __init__(self, n: int, path: Path, engine: str):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # find aqgr as this process does
        command = [
            sys.executable,
            "-c",
            f"import sys; from {__name__} import _serve; _serve(*sys.argv[1:])",
            str(path),
            engine,
        ]
        self._procs = [
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env) for _ in range(n)
        ]

    def send(self, worker: int, task: tuple) -> None:
        proc = self._procs[worker]
        try:
            pickle.dump(task, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.flush()
        except BrokenPipeError:
            raise self._died(proc) from None

    def receive(self, worker: int) -> list[Findings]:
        proc = self._procs[worker]
        try:
            ok, answer = pickle.load(proc.stdout)
        except EOFError:
            raise self._died(proc) from None
        if not ok:
            raise answer
        return answer

    @staticmethod
    def _died(proc: subprocess.Popen) -> RuntimeError:
        return RuntimeError(f"a citation worker process ended (exit code {proc.wait()}); its error is above")

    def close(self, *, abandon: bool = False) -> None:
        for proc in self._procs:
            if abandon:
                proc.kill()
            try:
                proc.stdin.close()
            except OSError:
                pass
        for proc in self._procs:
            proc.wait()
            proc.stdout.close()


def _serve(path: str, engine: str) -> None:
    """A worker's loop (see _Workers): tasks are read on a thread of their own, so that the parent,
    writing the next task, and this process, writing an answer, never wait on each other."""
    out = os.fdopen(os.dup(1), "wb")  # the answers' channel; anything else printed goes to stderr
    os.dup2(2, 1)
    db = sqlite3.connect(path, timeout=60)
    db.execute("PRAGMA query_only = 1")
    titles, treatments = StoredTitles(db), create(engine)
    tasks: queue.Queue = queue.Queue()  # unbounded: the parent keeps at most a few tasks in flight

    def read() -> None:
        try:
            while True:
                tasks.put(pickle.load(sys.stdin.buffer))
        except Exception:  # EOF: the parent is done (or gone)
            tasks.put(None)

    threading.Thread(target=read, daemon=True).start()
    while (task := tasks.get()) is not None:
        how, items = task
        try:
            answer = (True, [_one(how, name, text, db, titles, treatments) for name, text in items])
        except Exception as exc:  # handed to the parent, which raises it
            answer = (False, exc)
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an exception that does not pickle
            data = pickle.dumps((False, RuntimeError(f"in a citation worker: {exc!r}: {answer[1]!r}")))
        try:
            out.write(data)
            out.flush()
        except BrokenPipeError:  # the parent is gone (killed, or it stopped the pass): nothing to answer,
            os._exit(0)  # nor to flush on the way out (a read-only connection holds nothing)
